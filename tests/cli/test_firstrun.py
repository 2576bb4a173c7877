"""The first run says it compiles; ``info``, ``warmup`` and ``--version``."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fastsched._version import __version__
from fastsched.cli import main

ROOT = Path(__file__).resolve().parents[2]

# In a fresh process with an empty NUMBA_CACHE_DIR (no warm-up record): the notice is shown; once one kernel is
# compiled (and so cached) it is not. Compiling that one small kernel takes about a second.
_SCRIPT = """
import io, numpy as np
from fastsched import _firstrun
first = io.StringIO()
print(_firstrun.compile_notice("simulate", stream=first))
print(first.getvalue().strip())
from fastsched.goodput import _kernels
_kernels.check_pairs(np.zeros(2, np.int64), np.zeros(2, np.int64))
second = io.StringIO()
print(_firstrun.compile_notice("simulate", stream=second), repr(second.getvalue()))
# another area's kernels do not make this one warm
print(_firstrun.cache_state(("fastsched.policy",)).cold, _firstrun.cache_state(("fastsched.goodput",)).cold)
"""


def _run(code, cache_dir, *args):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *args, "-c", code] if code else [sys.executable, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


def test_notice_with_an_empty_cache(tmp_path):
    proc = _run(_SCRIPT, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "True"
    assert re.match(r"fastsched: compiling \d+ kernels, once per machine: about \d+ s ", lines[1]), lines[1]
    assert str(tmp_path / "cache") in lines[1]
    assert lines[2] == "False ''"
    assert lines[3] == "True False"


def test_notice_goes_to_stderr_before_the_run(tmp_path):
    # The real command on a workload whose only job arrives after a one-round cap: it passes
    # every check, prints the notice, and ends without compiling much.
    w = tmp_path / "w.csv"
    w.write_text("name,time,application,num_replicas,batch_size\nlate,999999,ncf,1,32768\n")
    proc = _run(
        None,
        tmp_path / "cache",
        "-m",
        "fastsched",
        "simulate",
        str(w),
        "--policy",
        "tiresias",
        "--max-time",
        "60",
        "--allow-incomplete",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("fastsched: compiling ")
    assert "average JCT" in proc.stdout
    quiet = _run(
        None,
        tmp_path / "cache2",
        "-m",
        "fastsched",
        "simulate",
        str(w),
        "--max-time",
        "60",
        "-q",
        "--allow-incomplete",
        "--policy",
        "tiresias",
    )
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"fastsched {__version__}"


def test_info(capsys):
    assert main(["info", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["fastsched"] == __version__ and d["packages"]["numba"]
    assert isinstance(d["cuda"], bool) and d["threading_layer"] and 0 <= d["kernels_cached"] <= d["kernels"]
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "threading layer" in out and "kernel cache" in out and "CUDA" in out


def test_python_m_fastsched(tmp_path):
    proc = _run(None, tmp_path / "cache", "-m", "fastsched", "--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"fastsched {__version__}"


def test_warmup_compiles_every_policy(capsys):
    assert main(["warmup"]) == 0
    err = capsys.readouterr().err
    for policy in ("pollux", "sia", "gavel", "tiresias", "optimus"):
        assert f"simulate ({policy})" in err
    assert "cost model" in err and "warm:" in err


# With a warm-up record (kernels per command, seconds per kernel measured here), the estimate is
# the record's kernels still missing times its rate, and a run that would compile any of them is
# announced even when other kernels are cached (Sia's after a warm-up that did not run it).
_RECORD_SCRIPT = """
import json, numba, numpy as np
from fastsched import _firstrun, _warmup, _info_cli
from fastsched._cache import cache_state
print(_info_cli.info()["cache_complete"])
from fastsched.goodput import _kernels
_kernels.check_pairs(np.zeros(2, np.int64), np.zeros(2, np.int64))  # one kernel cached: not cold any more
print(_firstrun.compile_estimate("simulate")[0])  # no record: unknown needs, not cold -> 0
missing = sorted(cache_state(("fastsched.sim",)).missing)[:3]
rec = {"numba": numba.__version__, "rate_s": 2.5, "kernels": {"simulate": missing + ["fastsched.goodput._kernels.check_pairs"], "warmup": missing}}
_warmup.record_path().write_text(json.dumps(rec))
n, seconds, _ = _firstrun.compile_estimate("simulate")
print(n, seconds)
d = _info_cli.info()
print(d["cache_complete"], d["kernels_missing"] == missing)
rec["kernels"]["warmup"] = []
_warmup.record_path().write_text(json.dumps(rec))
print(_info_cli.info()["cache_complete"])
"""


def test_estimate_is_missing_kernels_times_the_recorded_rate(tmp_path):
    proc = _run(_RECORD_SCRIPT, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["None", "0", "3 7.5", "False True", "True"]


def test_simulation_kernels_include_every_policy(tmp_path):
    # The simulator imports only the policy a run asks for; the simulation's kernel count (what
    # info and the first-run notice report) still covers every built-in policy's kernels.
    code = (
        "from fastsched._cache import cache_state\n"
        "s = cache_state()\n"
        "print(sorted({k.rsplit('.', 1)[0] for k in s.missing + s.present}))"
    )
    proc = _run(code, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    modules = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    for kernels in ("fastsched.sim.policies._assign_kernels", "fastsched.sim.policies._sia_kernels"):
        assert kernels in modules


def test_info_says_whether_the_cache_is_complete(capsys):
    assert main(["info"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("kernels cached"))
    assert re.search(r"\d+ of \d+ cached; (complete|incomplete|every kernel the commands use|which the commands)", line)


def test_probe_rate_is_measured():
    from fastsched import _firstrun

    assert _firstrun.probe_rate() > 0


def test_progress_is_a_base_module():
    # fastsched/_progress.py imports no fastsched module above it (the notice is passed in); the
    # only fastsched import is the other base module _interrupt
    tree = ast.parse((ROOT / "fastsched" / "_progress.py").read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            names += [f"{n.module}.{a.name}" if n.module == "fastsched" else (n.module or "") for a in n.names]
    assert [n for n in names if n.startswith("fastsched")] == ["fastsched._interrupt"], names


def test_the_estimate_names_every_command_it_knows():
    from fastsched._firstrun import compile_estimate
    from fastsched._warmup import COMMAND_PACKAGES

    doc = compile_estimate.__doc__
    assert [c for c in COMMAND_PACKAGES if f'``"{c}"``' not in doc] == []
