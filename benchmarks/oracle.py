r"""The throughput oracle against Sia's measured traces.

Usage::

    python benchmarks/oracle.py [--traces ../shared/sia-traces/traces] [--markdown out.md] [--json out.json]

1. **Calibrated prediction**: one efficiency per GPU type fitted on cifar10's measured rows
   (``placements-<type>.csv``), then every measured row (``placements-<type>.csv`` and
   ``scalability-<type>.csv``; a scalability row's replicas spread evenly over its nodes) of the
   other five applications on aws, azure, rtx, dgx-ext and quad is predicted; the relative
   step-time error ``|predicted - measured| / measured`` per (application, type): median, p90,
   worst row. Floors: median <= 20 %, p90 <= 40 % over all rows.
2. **Uncalibrated ordering**: from the datasheets alone (default efficiency), the five types
   ordered by one-GPU throughput at each type's largest measured per-GPU batch, against the
   measured order; the share of agreeing (type, type) pairs per application (floor: >= 90 %).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED = Path(os.environ.get("FASTSCHED_SHARED", HERE.parent.parent / "shared"))
TRACES = SHARED / "sia-traces" / "traces"
APPS = ("cifar10", "imagenet", "bert", "deepspeech2", "yolov3", "ncf")
TYPES = ("aws", "azure", "rtx", "dgx-ext", "quad")


def measured_rows(app_dir: Path, t: str) -> list:
    """``(placement, local_bsz, step, sync)`` of every measured row of ``t``."""
    rows = []
    with open(app_dir / f"placements-{t}.csv", newline="") as f:
        for r in csv.DictReader(f):
            p = tuple(int(c) for c in r["placement"].strip())
            rows.append((p, float(r["local_bsz"]), float(r["step_time"]), float(r["sync_time"])))
    path = app_dir / f"scalability-{t}.csv"
    if path.is_file():
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                nodes, reps = int(float(r["num_nodes"])), int(float(r["num_replicas"]))
                if reps < nodes:
                    continue
                base, extra = divmod(reps, nodes)
                p = tuple(base + (i < extra) for i in range(nodes))
                rows.append((p, float(r["local_bsz"]), float(r["step_time"]), float(r["sync_time"])))
    return rows


def run(traces: Path) -> dict:
    from fastsched.catalog import gpu_type, step_time
    from fastsched.sim.oracle import calibrate_from_traces

    effs = calibrate_from_traces(traces / "cifar10", TYPES)
    cells, all_err, worst = [], [], []
    for app in APPS:
        for t in TYPES:
            rows = measured_rows(traces / app, t)
            g = gpu_type(t)
            errs = []
            for p, b, st, _ in rows:
                pred = step_time(app, g, p, b, efficiency=effs[t]).step
                e = abs(pred - st) / st
                errs.append(e)
                if app != "cifar10":
                    worst.append((e, app, t, "".join(map(str, p)), b, st, pred))
            errs = np.array(errs)
            cells.append(
                {
                    "app": app,
                    "type": t,
                    "rows": len(rows),
                    "median": float(np.median(errs)),
                    "p90": float(np.percentile(errs, 90)),
                    "max": float(errs.max()),
                    "bias": float(
                        np.median(
                            [np.log(step_time(app, g, p, b, efficiency=effs[t]).step / st) for p, b, st, _ in rows]
                        )
                    ),
                }
            )
            if app != "cifar10":
                all_err.append(errs)
    flat = np.concatenate(all_err)
    worst.sort(reverse=True)
    # Uncalibrated ordering by one-GPU throughput at each type's largest measured batch.
    ordering = {}
    for app in APPS:
        meas, pred = {}, {}
        for t in TYPES:
            one = [(b, st) for p, b, st, _ in measured_rows(traces / app, t) if p == (1,)]
            b, st = max(one)
            meas[t] = b / st
            pred[t] = b / step_time(app, gpu_type(t), (1,), b).step
        pairs = list(itertools.combinations(TYPES, 2))
        agree = sum((meas[a] > meas[b]) == (pred[a] > pred[b]) for a, b in pairs)
        ordering[app] = {
            "agree": agree,
            "pairs": len(pairs),
            "measured": sorted(TYPES, key=lambda t: -meas[t]),
            "predicted": sorted(TYPES, key=lambda t: -pred[t]),
            "disagree": [f"{a}/{b}" for a, b in pairs if (meas[a] > meas[b]) != (pred[a] > pred[b])],
        }
    return {
        "efficiency": effs,
        "cells": cells,
        "overall": {
            "rows": int(flat.size),
            "median": float(np.median(flat)),
            "p90": float(np.percentile(flat, 90)),
        },
        "worst": [
            {"err": e, "app": a, "type": t, "placement": p, "local_bsz": b, "measured": st, "predicted": pr}
            for e, a, t, p, b, st, pr in worst[:8]
        ],
        "ordering": ordering,
    }


def markdown(res: dict) -> str:
    out = [
        "| application | type | rows | median error | p90 error | worst row | median log(pred/meas) |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in res["cells"]:
        tag = " (calibration)" if c["app"] == "cifar10" else ""
        out.append(
            f"| {c['app']}{tag} | {c['type']} | {c['rows']} | {c['median']:.0%} | {c['p90']:.0%} | {c['max']:.0%} | "
            f"{c['bias']:+.2f} |"
        )
    o = res["overall"]
    out += ["", f"Five applications x five types, {o['rows']} rows: median {o['median']:.1%}, p90 {o['p90']:.1%}.", ""]
    out += [
        "Worst rows:",
        "",
        "| application | type | placement | local bsz | measured s | predicted s | error |",
        "|---|---|---|---|---|---|---|",
    ]
    for w in res["worst"]:
        out.append(
            f"| {w['app']} | {w['type']} | {w['placement']} | {w['local_bsz']:g} | {w['measured']:.3f} | "
            f"{w['predicted']:.3f} | {w['err']:.0%} |"
        )
    out += [
        "",
        "| application | pairs agreeing | measured order | predicted order (uncalibrated) | disagreeing |",
        "|---|---|---|---|---|",
    ]
    for app, r in res["ordering"].items():
        out.append(
            f"| {app} | {r['agree']}/{r['pairs']} | {' > '.join(r['measured'])} | {' > '.join(r['predicted'])} | "
            f"{', '.join(r['disagree']) or '-'} |"
        )
    effs = ", ".join(f"{t} {e:.3f}" for t, e in res["efficiency"].items())
    out += ["", f"Efficiencies fitted on cifar10: {effs}."]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", type=Path, default=TRACES)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if not args.traces.is_dir():
        print(f"traces not found: {args.traces}", file=sys.stderr)
        return 2
    res = run(args.traces)
    text = markdown(res)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
