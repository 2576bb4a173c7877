"""Issue 22's whole-command floors (``fastsched simulate ...`` as a user types it), two trees side by side.

Usage::

    python benchmarks/sim/command_floors.py --trees BEFORE AFTER [--repeats 5] [--cases tiresias_x1 default ...]

Each case is a fresh ``python -m fastsched simulate ... --json`` process run inside each tree
(``PYTHONPATH`` and the working folder: that tree's ``fastsched`` is imported, checked once per
tree), the trees alternating within each repeat so both see the same machine load, after one
warm-up run per tree (numba's cache filled). Per run: wall seconds, CPU seconds of the process
(user + system: the difference of ``RUSAGE_CHILDREN`` around the run) and a SHA-256 of the ``--json`` summary without its timing
fields. Per case: the medians of each tree, their ratio, and whether every run of both trees
gave the same hash. Start-up counts here (imports, numba's first dispatch, reading the
traces), unlike ``scale_floors.py``, which times the ``simulate()`` call. Needs ../shared.
Results: ``benchmarks/results/startup.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SHARED = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared"))
S, P = SHARED / "sia-traces", SHARED / "pollux-traces"
_R50 = [str(S / "workloads" / "scale" / "rate_50"), "--traces", str(S / "traces"), "--preset", "sia"]
_SATURN1 = [str(S / "workloads" / "saturn" / "workload-1.csv"), "--traces", str(S / "traces"), "--preset", "sia"]
_PHILLY1 = [str(S / "workloads" / "philly" / "workload-1.csv"), "--traces", str(S / "traces"), "--preset", "sia"]

CASES = {
    "tiresias_x1": [*_R50, "--scale", "1", "--policy", "tiresias"],
    "default": [],
    "sia_x1": [*_R50, "--scale", "1", "--policy", "sia"],
    "osdi21_w6": [str(P / "workloads" / "workload-6.csv"), "--traces", str(P / "traces"), "--preset", "osdi21"],
    "saturn1_pollux": [*_SATURN1, "--policy", "pollux"],
    "saturn1_sia": [*_SATURN1, "--policy", "sia"],
    "tiresias_x4": [*_R50, "--scale", "4", "--policy", "tiresias"],
    # The other baselines (issue 22 item 3: every policy keeps its results) and the baselines at scale.
    "gavel_x1": [*_R50, "--scale", "1", "--policy", "gavel"],
    "optimus_w6": [
        str(P / "workloads" / "workload-6.csv"),
        "--traces",
        str(P / "traces"),
        "--preset",
        "osdi21",
        "--policy",
        "optimus",
    ],
    "tiresias_x16": [*_R50, "--scale", "16", "--policy", "tiresias"],
    "gavel_x16": [*_R50, "--scale", "16", "--policy", "gavel"],
    # Start-up alone: the same commands stopped after their first round (one minute).
    "startup_osdi21": [
        str(P / "workloads" / "workload-6.csv"),
        "--traces",
        str(P / "traces"),
        "--preset",
        "osdi21",
        "--max-time",
        "60",
        "--allow-incomplete",
    ],
    "startup_sia_x1": [*_R50, "--scale", "1", "--policy", "sia", "--max-time", "60", "--allow-incomplete"],
    # Issue 36's floors (the layout moves every module; no result may change): the Sia study's
    # saturn-1 and philly-1 under sia/pollux/gavel, and every other built-in policy once.
    "saturn1_gavel": [*_SATURN1, "--policy", "gavel"],
    "philly1_sia": [*_PHILLY1, "--policy", "sia"],
    "philly1_pollux": [*_PHILLY1, "--policy", "pollux"],
    "philly1_gavel": [*_PHILLY1, "--policy", "gavel"],
    **{
        f"saturn1_{name}": [*_SATURN1, "--policy", name]
        for name in ("fifo", "las", "themis", "min-total-duration", "max-sum-throughput", "gandiva", "shockwave")
    },
    "default_srtf": ["--policy", "srtf"],
    "default_allox": ["--policy", "allox"],
    "default_fifo": ["--policy", "fifo"],
}
_TIMINGS = ("wall_s", "policy_s")


def run_command(tree, args) -> dict:
    """One ``fastsched simulate`` process in ``tree``: wall and CPU seconds, the summary's hash."""
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
    cmd = [sys.executable, "-m", "fastsched", "simulate", *args, "--json"]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    if p.returncode:
        return {"error": (err.strip().splitlines() or ["failed"])[-1][:200]}
    summary = json.loads(out.strip().splitlines()[-1])
    kept = {k: v for k, v in summary.items() if not k.startswith(_TIMINGS)}
    digest = hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]
    return {"wall_s": wall, "hash": digest, "avg_jct": summary.get("avg_jct")}


def timed(tree, args) -> dict:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = run_command(tree, args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out


def check_tree(tree) -> str:
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
    code = "import fastsched, os; print(os.path.dirname(os.path.dirname(fastsched.__file__)))"
    got = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    where = got.stdout.strip()
    if Path(where).resolve() != Path(tree).resolve():
        raise SystemExit(f"{tree}: imports fastsched from {where}")
    return where


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", nargs=2, required=True, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cases", nargs="+", default=list(CASES)[:5], choices=list(CASES))
    ap.add_argument("--no-warmup", action="store_true", help="skip the warm-up runs (caches already filled)")
    args = ap.parse_args(argv)
    for t in args.trees:
        check_tree(t)
    for case in args.cases:
        runs = {t: [] for t in args.trees}
        for t in [] if args.no_warmup else args.trees:
            timed(t, CASES[case])
        for rep in range(args.repeats):
            for t in args.trees if rep % 2 == 0 else args.trees[::-1]:
                out = timed(t, CASES[case])
                print(json.dumps({"case": case, "tree": t, **out}), flush=True)
                if "error" not in out:
                    runs[t].append(out)
        before, after = (runs[t] for t in args.trees)
        if before and after:
            med = {k: [statistics.median(r[k] for r in rs) for rs in (before, after)] for k in ("wall_s", "cpu_s")}
            figures = ", ".join(f"{k} {a:.2f} -> {b:.2f} (x{b / a:.2f})" for k, (a, b) in med.items())
            same = len({r["hash"] for r in before + after}) == 1
            print(f"{case}: {figures}; n={len(before)}/{len(after)}; same hash: {same}", flush=True)


if __name__ == "__main__":
    main()
