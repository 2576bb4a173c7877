"""Hold-out check of the throughput model: fit on the small placements, predict the large ones.

Usage::

    python benchmarks/holdout.py                      # table on stdout
    python benchmarks/holdout.py --markdown benchmarks/results/holdout.md

From a temporary copy of the Sia traces (``../shared/sia-traces/traces``), every measured
row (``placements-<type>.csv`` and ``scalability-<type>.csv``) above a GPU count is dropped,
per GPU type (:data:`CUTS`). :class:`~fastsched.sim.truth.traces.TraceApplication` loads the copy
as the simulator would, and each dropped row's step time is asked of it: all of them lie
beyond the kept rows, so the fitted model answers (counted as "modelled"). The error of a
row is ``|predicted - measured| / measured``. The same rows are also predicted by a plain
Pollux-model fit (compute ``alpha + beta * b``; network ``alpha + beta * (r - 2)`` per one
node / several nodes; gamma overlap; no per-node terms) on the same kept rows, side by side.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastsched.sim.truth.traces import TraceApplication  # noqa: E402

TRACES = (
    Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
    / "sia-traces"
    / "traces"
)
APPS = ("bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3")
#: Rows kept: at most this many GPUs. aws (4-GPU nodes, 16 profiled): 8, i.e. two full nodes;
#: azure (8-GPU nodes, 5 profiled) and rtx (8-GPU nodes, 3 profiled): 16, two full nodes;
#: dgx-ext (8-GPU nodes, 2 profiled): 8, one full node and the two-node rows up to 8 GPUs;
#: quad (one 4-GPU node profiled): 2, half the node (no two-node rows exist to keep).
CUTS = {"aws": 8, "azure": 16, "rtx": 16, "dgx-ext": 8, "quad": 2}
FLOORS = {"median": 0.10, "p90": 0.25}


def _read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows


def _write(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def _balanced(nodes, gpus):
    return tuple(gpus // nodes + (1 if i < gpus % nodes else 0) for i in range(nodes))


def split(app, gpu_type, cut, out_dir):
    """Write the kept rows of one (application, type) to ``out_dir/app``; return the dropped rows.

    Dropped rows are ``(label, placement, local_bsz, step_time)``.
    """
    src = TRACES / app
    dst = out_dir / app
    dst.mkdir(parents=True, exist_ok=True)
    for v in src.glob("validation-*.csv"):
        shutil.copyfile(v, dst / v.name)
    dropped = []
    prow = _read(src / f"placements-{gpu_type}.csv")
    keep = []
    for r in prow:
        p = tuple(int(c) for c in r["placement"])
        if sum(p) > cut:
            dropped.append((r["placement"], p, float(r["local_bsz"]), float(r["step_time"])))
        else:
            keep.append(r)
    _write(dst / f"placements-{gpu_type}.csv", keep, list(prow[0]))
    srow = _read(src / f"scalability-{gpu_type}.csv")
    keep = []
    for r in srow:
        n, g = int(r["num_nodes"]), int(r["num_replicas"])
        if g > cut:
            label = f"{n} nodes/{g} GPUs"
            dropped.append((label, _balanced(n, g), float(r["local_bsz"]), float(r["step_time"])))
        else:
            keep.append(r)
    _write(dst / f"scalability-{gpu_type}.csv", keep, list(srow[0]))
    return dropped


def pollux_fit(rows):
    """Fit the plain Pollux model on ``(n, r, b, step, sync)`` rows; return a predictor."""
    from scipy.optimize import least_squares

    n, r, b, st, sy = rows.T
    comp = st - sy
    x = np.linalg.lstsq(np.stack([np.ones_like(b), b], 1) / comp[:, None], np.ones_like(b), rcond=None)[0]
    ac, bc = max(x[0], 1e-9), max(x[1], 0.0)

    def net(q, n, r):
        return np.where(r > 1, np.where(n > 1, q[2] + q[3] * (r - 2), q[0] + q[1] * (r - 2)), 0.0)

    def step(q, n, r, b):
        c = ac + bc * b
        return (c ** q[4] + net(q, n, r) ** q[4]) ** (1 / q[4])

    med = float(np.median(st))
    out = least_squares(
        lambda q: np.log(step(q, n, r, b) / st),
        [0.1 * med, 0.01 * med, 0.1 * med, 0.01 * med, 1.5],
        bounds=([0, 0, 0, 0, 1], [np.inf] * 4 + [10]),
    )
    return lambda n, r, b: step(out.x, np.asarray(n, float), np.asarray(r, float), np.asarray(b, float))


def run():
    """Return one record per (type, application) with the errors of its dropped rows."""
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for gpu_type, cut in CUTS.items():
            for app in APPS:
                root = Path(tmp) / gpu_type
                dropped = split(app, gpu_type, cut, root)
                model = TraceApplication(root / app, app, gpu_type=gpu_type)
                plain = pollux_fit(model._rows[:, :5])
                errs, perrs, unanswered, modelled, worst = [], [], 0, 0, None
                for label, placement, bsz, measured in dropped:
                    try:
                        step, _ = model.throughput(placement, bsz)
                    except ValueError:
                        unanswered += 1
                        continue
                    modelled += model.is_modelled(placement, bsz)
                    e = abs(step - measured) / measured
                    errs.append(e)
                    perrs.append(abs(float(plain(len(placement), sum(placement), bsz)) - measured) / measured)
                    if worst is None or e > worst[0]:
                        worst = (e, label, bsz, measured, step)
                records.append(
                    {
                        "type": gpu_type,
                        "app": app,
                        "kept": len(model._rows),
                        "errors": np.array(errs),
                        "pollux": np.array(perrs),
                        "unanswered": unanswered,
                        "modelled": modelled,
                        "worst": worst,
                    }
                )
    return records


def _stats(e):
    return (float(np.median(e)), float(np.percentile(e, 90))) if len(e) else (float("nan"), float("nan"))


def table(records):
    """Markdown tables of :func:`run`'s records (per application, per type, overall)."""
    lines = [
        "| type | application | kept rows | dropped rows | median | p90 | worst row (measured -> predicted s) "
        "| plain Pollux median | p90 |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for rec in records:
        m, p = _stats(rec["errors"])
        pm, pp = _stats(rec["pollux"])
        w = rec["worst"]
        worst = f"{w[1]} @ {w[2]:g}: {w[3]:.3f} -> {w[4]:.3f} ({100 * w[0]:.0f} %)" if w else "-"
        lines.append(
            f"| {rec['type']} | {rec['app']} | {rec['kept']} | {len(rec['errors']) + rec['unanswered']} "
            f"| {100 * m:.1f} % | {100 * p:.1f} % | {worst} | {100 * pm:.1f} % | {100 * pp:.1f} % |"
        )
    lines += ["", "| type | cut (GPUs kept) | dropped rows | median | p90 | plain Pollux median | p90 |"]
    lines.append("|---|---:|---:|---:|---:|---:|---:|")
    for t, cut in [*CUTS.items(), ("all", "")]:
        sel = [r for r in records if t in ("all", r["type"])]
        e = np.concatenate([r["errors"] for r in sel])
        pe = np.concatenate([r["pollux"] for r in sel])
        m, p = _stats(e)
        pm, pp = _stats(pe)
        label = "**all**" if t == "all" else t
        lines.append(
            f"| {label} | {cut} | {len(e)} | {100 * m:.1f} % | {100 * p:.1f} % | {100 * pm:.1f} % | {100 * pp:.1f} % |"
        )
    total = sum(len(r["errors"]) + r["unanswered"] for r in records)
    unanswered = sum(r["unanswered"] for r in records)
    modelled = sum(r["modelled"] for r in records)
    lines += ["", f"Dropped rows: {total}; unanswered: {unanswered}; answered by the model: {modelled}."]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", type=Path, help="write the tables into this results file (between markers)")
    args = ap.parse_args(argv)
    if not TRACES.is_dir():
        print(f"needs the Sia traces at {TRACES}; skipped")
        return 0
    records = run()
    text = table(records)
    print(text)
    if args.markdown:
        begin, end = "<!-- holdout:begin -->", "<!-- holdout:end -->"
        old = args.markdown.read_text() if args.markdown.exists() else f"{begin}\n{end}\n"
        head, _, rest = old.partition(begin)
        _, _, tail = rest.partition(end)
        args.markdown.write_text(f"{head}{begin}\n{text}\n{end}{tail}")
    e = np.concatenate([r["errors"] for r in records])
    m, p = _stats(e)
    ok = m <= FLOORS["median"] and p <= FLOORS["p90"] and not any(r["unanswered"] for r in records)
    print(f"\nfloors (median <= 10 %, p90 <= 25 %, none unanswered): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
