"""Measure the compile rate behind the first-run notices (issue 26, item 5), side by side.

In a fresh process with an empty ``NUMBA_CACHE_DIR``: time the probe of
:func:`fastsched._firstrun.probe_rate` (median of 3 fresh compiles), then ``warmup()`` (every
policy and the cost model), which records seconds per kernel compiled. Prints both and their
ratio (``PROBE_RATIO`` of ``fastsched/_warmup.py``), and what the notice estimated before
the warm-up against what it took. Usage::

    .venv/bin/python benchmarks/compile_rate.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, statistics, time
from fastsched import _firstrun, _warmup, _warmup_run
probes = []
for _ in range(3):
    probes.append(_firstrun.probe_rate() / _firstrun.PROBE_RATIO)
n_before, est_before, _ = _firstrun.compile_estimate("warmup")
t0 = time.perf_counter()
_warmup_run.warmup()
took = time.perf_counter() - t0
rec = _warmup.load_record()
print(json.dumps({"probe_s": statistics.median(probes), "probes": probes, "rate_s": rec["rate_s"],
                  "compiled": rec["compiled"], "warmup_s": took, "notice_kernels": n_before,
                  "notice_estimate_s": est_before}))
"""


def main() -> int:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env)
    if proc.returncode:
        print(proc.stderr[-2000:])
        return 1
    d = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"probe compile (median of 3): {d['probe_s']:.3f} s  (all: {', '.join(f'{p:.3f}' for p in d['probes'])})")
    print(f"warm-up: {d['compiled']} kernels compiled in {d['warmup_s']:.1f} s -> {d['rate_s']:.2f} s per kernel")
    print(f"ratio kernel / probe: {d['rate_s'] / d['probe_s']:.1f}")
    print(
        f"notice before the warm-up: {d['notice_kernels']} kernels, about {d['notice_estimate_s']:.0f} s; took "
        f"{d['warmup_s']:.0f} s; PROBE_RATIO that would have been exact: "
        f"{d['warmup_s'] / (d['notice_kernels'] * d['probe_s']):.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
