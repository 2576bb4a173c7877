"""Side-by-side timing of fastsched against the AdaptDL 0.2.11 reference.

Usage::

    python benchmarks/compare_adaptdl.py [--rounds 3] [--seconds 1] [--workloads fit_20 ...] [--json out.json]
    python benchmarks/compare_adaptdl.py --markdown benchmarks/results/adaptdl.md   # + adaptdl.svg (extra: plot)

The reference interpreter is ``../refenv/adaptdl/bin/python`` (built by
``../shared/ref/adaptdl/setup_ref.sh``; ``--ref-python`` or ``FASTSCHED_REF_ADAPTDL`` points at
another). Workloads and the timing protocol come from ``benchmarks/harness.py``: each workload
is timed on both implementations alternately (fastsched, reference, fastsched, ...), each run in
a fresh process; the table shows per-call medians over rounds and the median of the per-round
ratios (reference / fastsched), so machine drift cancels pairwise. Without a reference
interpreter it says so and exits 0. ``--markdown`` writes the table as a results file (the
documentation's results page renders every ``benchmarks/results/*.md``), with a bar chart of the
ratios beside it when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import harness  # noqa: E402  (after the path is set)

#: Floors of the issues (reference / fastsched), shown beside the measured ratio.
FLOORS = {
    "optimize_scalar": 50,
    "optimize_1e5": 30,
    "evaluate_1e6": 10,
    "fit_20": 200,
    "speedup_1000": 100,
}
DEFAULT_WORKLOADS = [
    "optimize_scalar",
    "optimize_scalar_new_model",
    "optimize_1e5",
    "evaluate_1e6",
    "fit_20",
    "speedup_1000",
]


def fmt(seconds: float) -> str:
    """Format seconds with a unit."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def write_markdown(rows, path: Path, args) -> None:
    """Write ``rows`` as a results file (and ``<stem>.svg``, a chart of the ratios, with matplotlib)."""
    import numpy

    import fastsched

    chart = path.with_suffix(".svg")
    lines = [
        "# Goodput core: fastsched vs AdaptDL 0.2.11, side by side",
        "",
        f"Measured {time.strftime('%Y-%m-%d', time.gmtime())} by `python benchmarks/compare_adaptdl.py "
        f"--rounds {args.rounds} --seconds {args.seconds} --markdown {path.name}` on {platform.machine()} "
        f"({os.cpu_count()} CPUs, shared), fastsched {fastsched.__version__}, numpy {numpy.__version__}, "
        f"Python {platform.python_version()}; AdaptDL in `../refenv/adaptdl` (numpy 1.23.5).",
        "Per-call medians over rounds; ratio = median over rounds of AdaptDL / fastsched (each round runs both, "
        "alternating, each in a fresh process). Workloads: `benchmarks/harness.py` (`GOODPUT_WORKLOADS`).",
        "",
        "| workload | AdaptDL | fastsched | ratio | (min-max) | floor | fastsched first call |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        floor = f"{FLOORS[r['workload']]}x" if r["workload"] in FLOORS else "-"
        lines.append(
            f"| {r['workload']} | {fmt(r['adaptdl'])} | {fmt(r['fastsched'])} | {r['ratio']:.1f}x | "
            f"{r['ratio_min']:.0f}-{r['ratio_max']:.0f} | {floor} | {fmt(r['first_call_s']['fastsched'])} |"
        )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
    if plt is not None:
        fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.2))
        names = [r["workload"] for r in rows]
        ax.barh(names, [r["ratio"] for r in rows], color="tab:blue")
        ax.set_xscale("log")
        ax.set_xlabel("AdaptDL time / fastsched time (median ratio, log scale)")
        ax.invert_yaxis()
        fig.tight_layout()
        fig.savefig(chart)
        plt.close(fig)
        lines += ["", f"![ratios]({chart.name})"]
    path.write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    """Run the comparison and print the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref-python", help="interpreter with adaptdl 0.2.11 (default: ../refenv/adaptdl)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.0, help="timing budget per worker run")
    ap.add_argument("--workloads", nargs="*", default=DEFAULT_WORKLOADS, choices=sorted(set(harness.GOODPUT_WORKLOADS) - harness.FASTSCHED_ONLY))
    ap.add_argument("--json", help="also write the rows as JSON")
    ap.add_argument("--markdown", help="also write the table as a results file (benchmarks/results/NAME.md)")
    args = ap.parse_args(argv)
    if args.ref_python:
        os.environ["FASTSCHED_REF_ADAPTDL"] = args.ref_python
    reason = harness.skip_reason("adaptdl")
    if reason:
        print(f"compare_adaptdl: skipping the side-by-side comparison: {reason}")
        return 0
    rows = harness.side_by_side(
        "goodput", args.workloads, ("fastsched", "adaptdl"), args.rounds, args.seconds, sys.stderr
    )
    print(
        f"{'workload':<26} {'adaptdl':>10} {'fastsched':>10} {'ratio':>8} {'(min-max)':>12} {'floor':>6} {'fs first call':>14}"
    )
    for r in rows:
        floor = f"{FLOORS[r['workload']]}x" if r["workload"] in FLOORS else "-"
        spread = f"{r['ratio_min']:.0f}-{r['ratio_max']:.0f}"
        print(
            f"{r['workload']:<26} {fmt(r['adaptdl']):>10} {fmt(r['fastsched']):>10} {r['ratio']:>7.1f}x "
            f"{spread:>12} {floor:>6} {fmt(r['first_call_s']['fastsched']):>14}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.markdown:
        write_markdown(rows, Path(args.markdown), args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
