"""Sia's scaling study (its Fig. 9): the heterogeneous cluster and the rate_50 workload k-fold.

Usage::

    python benchmarks/sim/scale_study.py run --sizes 1 4 --policies tiresias sia --out scale.jsonl
    python benchmarks/sim/scale_study.py report scale.jsonl --plot benchmarks/results/scale.svg

``run`` simulates each (k, policy) in its own process (so its peak memory is its own, and a
run past ``--timeout`` is stopped and recorded as not finished) on ``6xaws,3xrtx,2xdgx-ext``
times k under ``--preset sia``, with ``workloads/scale/rate_50``'s files merged k times
(:func:`fastsched.sim.inputs.scale.scale_workload`; the same as ``fastsched simulate
../shared/sia-traces/workloads/scale/rate_50 --preset sia --scale K``: k = 1 is ``workload-1``
alone, k = 4 files 1-4, as in the issue). One JSON line per run:
wall and CPU seconds, the policy's seconds per call (median, p95), average JCT, the
modelled-throughput share of GPU-time and the peak resident memory. ``report`` prints the
markdown table and draws wall time against cluster size. Needs ../shared/sia-traces.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SIA = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "sia-traces"
BASE = "6xaws,3xrtx,2xdgx-ext"


def _commit() -> str:
    """Return the checked-out commit's short hash, so each row names the code it ran."""
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent
    )
    return out.stdout.strip() or "unknown"


_CHILD = r"""
import json, sys, time
from pathlib import Path
from fastsched.sim import simulate
from fastsched.sim.inputs.scale import scale_cluster, scale_workload, workload_files
sia, k, policy = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
options = json.loads(sys.argv[5]).get(policy)
files = workload_files(sia / "workloads" / "scale" / "rate_50")
wl = scale_workload(files[:k] if k < len(files) else files, k)
c0 = time.process_time()
r = simulate(wl, traces=sia / "traces", preset="sia", policy=policy, cluster=str(scale_cluster(sys.argv[4], k)),
             cap_replicas=True, max_time=10**9, policy_options=options)
s = r.summary()
keys = ("jobs", "completed", "avg_jct", "wall_s", "policy_s", "policy_calls", "policy_s_median", "policy_s_p95",
        "modelled_share", "rounds")
out = {key: s[key] for key in keys}
out["cpu_s"] = time.process_time() - c0
import resource
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def run(args):
    with open(args.out, "a") as f:
        for k in args.sizes:
            for policy in args.policies:
                t0 = time.perf_counter()
                row = {"k": k, "gpus": 64 * k, "policy": policy, "branch": args.label or _commit()}
                if policy in json.loads(args.policy_options):
                    row["policy_options"] = json.loads(args.policy_options)[policy]
                try:
                    p = subprocess.run(
                        [sys.executable, "-c", _CHILD, str(SIA), str(k), policy, BASE, args.policy_options],
                        capture_output=True,
                        text=True,
                        timeout=args.timeout,
                    )
                    if p.returncode == 0:
                        row.update(json.loads(p.stdout.strip().splitlines()[-1]))
                    else:
                        row["error"] = p.stderr.strip().splitlines()[-1][:300] if p.stderr.strip() else "failed"
                except subprocess.TimeoutExpired:
                    row["error"] = f"not finished within {args.timeout} s"
                row["process_s"] = time.perf_counter() - t0
                print(json.dumps(row), flush=True)
                f.write(json.dumps(row) + "\n")
                f.flush()


def report(args):
    rows = [json.loads(line) for line in open(args.results) if line.strip()]
    print(
        "| k | GPUs | jobs | policy | code | wall s | CPU s | policy s/call median | p95 | avg JCT h | modelled % "
        "| peak MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        code = r.get("branch", "")
        if "error" in r:
            print(f"| {r['k']} | {r['gpus']} | | {r['policy']} | {code} | {r['error']} | | | | | | |")
            continue
        print(
            f"| {r['k']} | {r['gpus']} | {r['completed']}/{r['jobs']} | {r['policy']} | {code} | {r['wall_s']:.1f} | "
            f"{r['cpu_s']:.1f} | {r['policy_s_median']:.4f} | {r['policy_s_p95']:.4f} | {r['avg_jct'] / 3600:.2f} | "
            f"{100 * r['modelled_share']:.1f} | {r['peak_rss_mb']:.0f} |"
        )
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
        for policy in dict.fromkeys(r["policy"] for r in rows):
            ok = [r for r in rows if r["policy"] == policy and "error" not in r]
            if not ok:
                continue
            a.plot([r["gpus"] for r in ok], [r["cpu_s"] for r in ok], "o-", label=policy)
            b.plot([r["gpus"] for r in ok], [r["policy_s_median"] for r in ok], "o-", label=policy)
        for ax, what in ((a, "CPU seconds per run"), (b, "policy seconds per call (median)")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("GPUs (rate_50 workload merged k times)")
            ax.set_ylabel(what)
            ax.grid(alpha=0.3)
        a.legend()
        fig.tight_layout()
        fig.savefig(args.plot)


def _options_json(text) -> str:
    """``--policy-options``: a JSON object of options per policy, passed on as text."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise argparse.ArgumentTypeError('must be a JSON object of {"policy": {option: value}}')
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 32])
    r.add_argument("--policies", nargs="+", default=["tiresias", "sia", "pollux", "gavel"])
    r.add_argument("--timeout", type=float, default=1800)
    r.add_argument(
        "--policy-options",
        type=_options_json,
        default="{}",
        help='JSON of options per policy over the preset\'s, e.g. \'{"sia": {"time_limit": 1.5}}\'',
    )
    r.add_argument("--label", default=None, help="the code's name in each row (default: git's short commit)")
    r.add_argument("--out", default="scale.jsonl")
    r.set_defaults(func=run)
    p = sub.add_parser("report")
    p.add_argument("results")
    p.add_argument("--plot")
    p.set_defaults(func=report)
    args = ap.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
