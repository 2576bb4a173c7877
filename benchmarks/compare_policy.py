r"""PolluxPolicy side by side: fastsched against AdaptDL 0.2.11 + pymoo 0.5.0.

Usage::

    python benchmarks/compare_policy.py --ref-python ../refenv/adaptdl/bin/python \
        [--problems test16_4x4 varied64_16x4] [--seeds 0 1 2] [--calls 3] [--json out.json]

Problems come from ``../shared/ref/adaptdl/problems.py`` (``test16_*``, ``varied64_16x4``,
``varied256_64x4``; the last takes the reference ~200 s per call, so it only runs when named).
For each problem and seed, the reference (a subprocess of ``--ref-python`` running this file
with ``--worker``) and fastsched run ``problems.run_policy`` alternately: ``--calls`` rounds on
one policy object, cold first call then warm calls, base allocations = previous result. Times
are measured inside each process (wall and CPU per call). All allocations are scored in this
process with the same speedup table (fastsched's; the reference objective's formula), next to
the trivial first-fit and (with ``--milp``) the exact optimum on the real nodes.

Without a reference interpreter the fastsched side still runs and the script says why the
reference columns are missing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("FASTSCHED_SHARED", HERE.parent.parent / "shared"))
PROBLEMS_DIR = SHARED / "ref" / "adaptdl"
DEFAULT_REF = HERE.parent.parent / "refenv" / "adaptdl" / "bin" / "python"
DEFAULT_PROBLEMS = [
    "test16_1x16",
    "test16_2x8",
    "test16_4x4",
    "test16_8x2",
    "test16_16x1",
    "varied64_16x4",
]


def _problems():
    sys.path.insert(0, str(PROBLEMS_DIR))
    import problems

    return problems


def _worker(name: str, seed: int, calls: int) -> None:
    """Run the reference side: run problems.run_policy with the reference API, print JSON."""
    import logging

    logging.disable(logging.INFO)  # the reference logs every Pareto solution at INFO
    problems = _problems()
    api = problems.reference_api()
    spec = problems.spec(name)
    table = problems.speedup_table(spec, api)
    out = problems.run_policy(spec, api, table, seed, calls=calls)
    print(json.dumps(out))


def fastsched_api():
    sys.path.insert(0, str(HERE.parent))
    import fastsched.goodput as g
    import fastsched.policy as p

    return types.SimpleNamespace(
        GoodputFunction=g.GoodputFunction,
        PerfParams=g.PerfParams,
        GradParams=g.GradParams,
        PolluxPolicy=p.PolluxPolicy,
        SpeedupFunction=g.SpeedupFunction,
        JobInfo=p.JobInfo,
        NodeInfo=p.NodeInfo,
    )


def run_reference(python: str, name: str, seed: int, calls: int, timeout: float) -> list | None:
    cmd = [python, str(Path(__file__).resolve()), "--worker", name, str(seed), str(calls)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        print(f"  reference {name} seed {seed}: timed out after {timeout:.0f} s")
        return None
    if res.returncode != 0:
        print(f"  reference {name} seed {seed} failed:\n{res.stderr[-2000:]}")
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def rescore(problems, spec, table, calls: list) -> list:
    """Score each call's allocation with ``table`` (keys come back as strings from JSON)."""
    keyed = {str(j["key"]): j["key"] for j in spec["jobs"]}
    nodes = {str(n["key"]): n["key"] for n in spec["nodes"]}
    base: dict = {}
    out = []
    for c in calls:
        allocs = {keyed[k]: [nodes[str(n)] for n in v] for k, v in c["allocations"].items()}
        out.append(problems.score(spec, allocs, table, base)["objective"])
        base = allocs
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", nargs=3, metavar=("PROBLEM", "SEED", "CALLS"), help=argparse.SUPPRESS)
    ap.add_argument("--ref-python", default=str(DEFAULT_REF) if DEFAULT_REF.exists() else None)
    ap.add_argument("--problems", nargs="+", default=DEFAULT_PROBLEMS)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--milp", action="store_true", help="also solve the MILP on the real nodes")
    ap.add_argument("--ref-timeout", type=float, default=1800.0)
    ap.add_argument("--json", help="write all results to this file")
    args = ap.parse_args(argv)
    if args.worker:
        _worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))
        return 0
    if not PROBLEMS_DIR.exists():
        print(f"no shared problems at {PROBLEMS_DIR}: nothing to compare")
        return 0
    ref_python = args.ref_python
    if not ref_python or not Path(ref_python).exists():
        print(
            "no reference interpreter (--ref-python ../refenv/adaptdl/bin/python, built by "
            "../shared/ref/adaptdl/setup_ref.sh): running fastsched only"
        )
        ref_python = None
    problems = _problems()
    api = fastsched_api()
    from fastsched.policy import exact_optimize

    results = {}
    print(f"{'problem':>15} {'side':>9} {'cold s':>8} {'warm s':>8} {'objective':>10} {'ratio':>8}")
    for name in args.problems:
        spec = problems.spec(name)
        table = problems.speedup_table(spec, api)
        # Warm the JIT cache and speedup tables so the first timed call is a real cold round.
        problems.run_policy(spec, api, table, 12345, calls=1)
        fast, ref = [], []
        for i, seed in enumerate(args.seeds):
            order = ("ref", "fast") if i % 2 else ("fast", "ref")
            for side in order:
                if side == "fast":
                    fast.append(problems.run_policy(spec, api, table, seed, calls=args.calls))
                elif ref_python:
                    r = run_reference(ref_python, name, seed, args.calls, args.ref_timeout)
                    if r is not None:
                        ref.append(r)
        ff = problems.score(spec, problems.first_fit(spec), table)["objective"]
        row = {"first_fit": ff}
        milp = None
        if args.milp:
            jobs, nodes, template = problems.build(spec, api)
            t = time.perf_counter()
            _, milp, status = exact_optimize(jobs, nodes, {}, template, time_limit=120)
            row["milp"] = {"objective": milp, "status": status, "seconds": time.perf_counter() - t}
        for side, runs in (("fastsched", fast), ("reference", ref)):
            if not runs:
                continue
            cold = [r[0]["wall_s"] for r in runs]
            warm = [c["wall_s"] for r in runs for c in r[1:]]
            objs = [rescore(problems, spec, table, r) for r in runs]
            row[side] = {
                "cold_wall_s": cold,
                "warm_wall_s": warm,
                "cold_cpu_s": [r[0]["cpu_s"] for r in runs],
                "objective_first_call": [o[0] for o in objs],
                "objective_all_calls": objs,
                "violations": sum(len(c["violations"]) for r in runs for c in r),
                "desired_nodes": [c["desired_nodes"] for r in runs for c in r],
            }
        for side in ("fastsched", "reference"):
            if side not in row:
                continue
            d = row[side]
            cold = statistics.median(d["cold_wall_s"])
            warm = statistics.median(d["warm_wall_s"]) if d["warm_wall_s"] else float("nan")
            obj = statistics.mean(d["objective_first_call"])
            ratio = ""
            if side == "reference" and "fastsched" in row:
                f = row["fastsched"]
                allf = f["cold_wall_s"] + f["warm_wall_s"]
                allr = d["cold_wall_s"] + d["warm_wall_s"]
                ratio = f"{statistics.median(allr) / statistics.median(allf):7.0f}x"
            print(f"{name:>15} {side:>9} {cold:8.3f} {warm:8.3f} {obj:10.4f} {ratio:>8}")
        extra = f"first fit {ff:.4f}"
        if milp is not None:
            extra += f", MILP {milp:.4f}"
        print(f"{'':>15} {'':>9} {extra}")
        results[name] = row
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
