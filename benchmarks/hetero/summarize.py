"""Aggregate fidelity.py JSON lines into a markdown table: mean per (trace, preset, policy).

Usage: python benchmarks/hetero/summarize.py FILE.jsonl[:POLICY] [...]
(``:POLICY`` keeps only that policy's lines of the file.)
"""

from __future__ import annotations

import json
import sys

import numpy as np


def main(paths):
    rows = {}
    for arg in paths:
        path, _, only = arg.partition(":")
        for line in open(path):
            if line.startswith("{"):
                d = json.loads(line)
                if only and d["policy"] != only:
                    continue
                rows.setdefault((d["trace"], d["preset"], d["policy"]), []).append(d)
    print(
        "| trace | cluster | policy | runs | avg JCT (h) | p50 (h) | p99 (h) | makespan (h) | GPU-h/job | restarts/job "
        "| contention mean/max | FTF worst | FTF>1.05 | wall (s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (trace, preset, pol), ds in sorted(rows.items()):

        def m(k, ds=ds):
            return float(np.mean([d[k] for d in ds]))

        print(
            f"| {trace} | {preset} | {pol} | {len(ds)} | {m('avg_jct') / 3600:.3f} | {m('p50_jct') / 3600:.3f} "
            f"| {m('p99_jct') / 3600:.2f} | {m('makespan') / 3600:.2f} | {m('gpu_hours_per_job'):.2f} "
            f"| {m('restarts_per_job'):.2f} | {m('contention_mean'):.1f}/{m('contention_max'):.0f} "
            f"| {m('ftf_worst'):.2f} | {m('ftf_unfair_fraction'):.2f} | {np.median([d['wall_s'] for d in ds]):.1f} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
