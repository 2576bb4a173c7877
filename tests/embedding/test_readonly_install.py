"""An install whose package folders cannot hold numba's cache still works.

As root, file permissions cannot make a folder read-only, so the test makes every
``__pycache__`` of a copied package a plain *file*: neither Python nor numba can create
the cache folder there, exactly as on a read-only site-packages. numba must then fall back to
its user-wide cache directory (``$XDG_CACHE_HOME/numba`` here), and a second process must
load from that cache.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import fastsched

SNIPPET = """
import fastsched
print(fastsched.__file__)
f = fastsched.GoodputFunction(fastsched.PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14),
                              fastsched.GradParams(0.00136, 0.000502), 128)
print(f.optimize(1, 4, max_batch_size=1280, atomic_bsz_range=(64, 256), accumulation=True))
"""


def test_unwritable_package_folder_falls_back_to_user_cache(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(Path(fastsched.__file__).parent, site / "fastsched", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [p for p in (site / "fastsched").rglob("*") if p.is_dir()] + [site / "fastsched"]:
        (folder / "__pycache__").write_text("not a folder")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env.update(PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path / "home"))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    first = subprocess.run([sys.executable, "-c", SNIPPET], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(str(site)), first.stdout  # the copy was imported
    cached = list((tmp_path / "xdg").rglob("*.nbi"))
    assert cached, "numba did not fall back to the user-wide cache directory"
    second = subprocess.run([sys.executable, "-c", SNIPPET], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
