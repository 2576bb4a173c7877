r"""Coverage of the uncertainty bands: is the trace-driven average JCT inside the draws' 10-90 % band.

Usage::

    python benchmarks/uncertainty_coverage.py --step-error
    python benchmarks/uncertainty_coverage.py --variant after --workloads 1-8 --policies sia,gavel \
        --log cov-after.jsonl --work W-after
    python benchmarks/uncertainty_coverage.py --report cov-before.jsonl cov-after.jsonl   # the side-by-side table

Issue 37's coverage floor: philly workloads (``/work/shared/sia-traces/workloads/philly``), the
philly cluster (``--preset sia``: ``6xaws,3xrtx,2xdgx-ext``), bootstrap profiles of the six
applications (``benchmarks/oracle.py``'s :func:`bootstrap_profiles`, validation files from the
noise prior's central values), :func:`fastsched.sweep.uncertainty_bands` with ``N`` draws (seed 0)
per workload, against the trace-driven run (the measured traces, seed 0). A pair (workload,
policy) is covered when ``p10 <= truth <= p90``; the width of a band is ``(p90 - p10) / median``.

``--variant``: ``before`` is the draws of the sixth session (one noise ``z`` per application, a
normal step-time error of sigma 0.155, datasheet 0.294), ``after`` the library's defaults (one
noise ``z`` per prior group, a Laplace step-time error from the held-out median); the reasons and
sources are in ``benchmarks/results/uncertainty.md``, written before any coverage was scored.
Every finished (workload, policy) goes to ``--log`` (JSON lines) and is skipped on a rerun; the
draws' own runs resume from ``--work``.

``--step-error`` prints the held-out step-time error the draws are scaled by (median and p90 of
``|log(predicted / measured)|``): bootstrap profiles on the rows ``benchmarks/oracle.py
--bootstrap`` holds out, and uncalibrated datasheet profiles on every measured row.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import oracle  # noqa: E402  (benchmarks/oracle.py: the traces, the bootstrap profiles)

#: The draws' settings per variant (``before``: the sixth session's literal values).
VARIANTS = {
    "before": {"step_dist": "normal", "noise_by": "application",
               "step_sigma": {"bootstrap": 0.155, "calibrated": 0.294, "datasheet": 0.294}},
    "after": {},
}  # fmt: skip


def step_error() -> dict:
    """Median and p90 of the held-out ``|log(predicted / measured)|``: bootstrap and datasheet profiles."""
    from fastsched.catalog import gpu_type, step_time
    from fastsched.catalog.bootstrap import bootstrap_rows, fit_bootstrap

    boot, sheet = [], []
    for app in oracle.APPS:
        for t in oracle.TYPES:
            g = gpu_type(t)
            one, node = bootstrap_rows(oracle.TRACES / app / f"placements-{t}.csv", g.gpus_per_node)
            bs = fit_bootstrap(app, g, one, node)
            for p, b, st, sy in oracle.measured_rows(oracle.TRACES / app, t):
                sheet.append(np.log(step_time(app, g, p, b).step / st))
                if sum(p) == 1 or (node is not None and p == (g.gpus_per_node,) and (b, st, sy) == node):
                    continue  # the rows the profile was fitted on
                try:
                    boot.append(np.log(step_time(app, g, p, b, floor_s=bs.floor_s, adjust=bs.adjust).step / st))
                except ValueError:
                    continue

    def q(e):
        a = np.abs(np.asarray(e))
        return {"rows": int(a.size), "median": float(np.median(a)), "p90": float(np.percentile(a, 90)),
                "p90_over_median": float(np.percentile(a, 90) / np.median(a))}  # fmt: skip

    return {"bootstrap": q(boot), "datasheet": q(sheet), "normal_ratio": 1.2815515655446004 / 0.6744897501960817,
            "laplace_ratio": float(np.log(10.0) / np.log(2.0))}  # fmt: skip


def _done(log) -> dict:
    out = {}
    if log is not None and Path(log).is_file():
        for line in Path(log).read_text().splitlines():
            r = json.loads(line)
            out[(r["variant"], r["workload"], r["policy"])] = r
    return out


def _append(log, rec) -> None:
    if log is not None:
        with open(log, "a") as fh:
            fh.write(json.dumps(rec) + "\n")


def coverage(variant, workloads, policies, draws, log, work) -> list:
    """Run the truth and the bands of every (workload, policy) not in ``log``; return every record."""
    from fastsched.sim import simulate
    from fastsched.sweep.uncertainty import uncertainty_bands

    work = Path(work)
    prof = oracle.bootstrap_profiles(oracle.TRACES, work / "bootstrap-profiles")
    folder = oracle.SHARED / "sia-traces" / "workloads" / "philly"
    done = _done(log)
    for w in workloads:
        f = folder / f"workload-{w}.csv"
        for pol in policies:
            if ("traces", f.stem, pol) not in done:
                t0 = time.perf_counter()
                r = simulate(f, traces=oracle.TRACES, preset="sia", policy=pol, seed=0)
                rec = {"variant": "traces", "workload": f.stem, "policy": pol, "avg_jct": r.summary()["avg_jct"],
                       "wall_s": time.perf_counter() - t0}  # fmt: skip
                done[("traces", f.stem, pol)] = rec
                _append(log, rec)
        todo = [p for p in policies if (variant, f.stem, p) not in done]
        if not todo:
            continue
        t0 = time.perf_counter()
        res = uncertainty_bands(f, prof, policies=todo, draws=draws, seed=0, out_dir=work / f.stem, resume=True,
                                preset="sia", **VARIANTS[variant])  # fmt: skip
        wall = time.perf_counter() - t0
        for p, b in res.bands.items():
            rec = {"variant": variant, "workload": f.stem, "policy": p, **b._asdict(), "wall_s": wall,
                   "order_holds": res.order_holds}  # fmt: skip
            done[(variant, f.stem, p)] = rec
            _append(log, rec)
            truth = done[("traces", f.stem, p)]["avg_jct"]
            band = f"{b.p10 / 3600:.3f}-{b.median / 3600:.3f}-{b.p90 / 3600:.3f}"
            print(f"# {variant} {f.stem} {p}: truth {truth / 3600:.3f} h, band {band} h ({wall:.0f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
    return list(done.values())


def summarise(records) -> dict:
    """Per variant: pairs, covered pairs, share, median width; and the per-pair rows."""
    truth = {(r["workload"], r["policy"]): r["avg_jct"] for r in records if r["variant"] == "traces"}
    out: dict = {}
    for r in records:
        if r["variant"] == "traces" or (r["workload"], r["policy"]) not in truth:
            continue
        t = truth[r["workload"], r["policy"]]
        d = out.setdefault(r["variant"], {"pairs": []})
        d["pairs"].append({"workload": r["workload"], "policy": r["policy"], "truth_h": t / 3600,
                           "central_h": r["central"] / 3600, "p10_h": r["p10"] / 3600, "median_h": r["median"] / 3600,
                           "p90_h": r["p90"] / 3600, "inside": bool(r["p10"] <= t <= r["p90"]),
                           "width": (r["p90"] - r["p10"]) / r["median"]})  # fmt: skip
    for d in out.values():
        inside = [p["inside"] for p in d["pairs"]]
        d["covered"], d["n"] = int(sum(inside)), len(inside)
        d["share"] = float(np.mean(inside))
        d["median_width"] = float(np.median([p["width"] for p in d["pairs"]]))
    return out


def markdown(summary) -> str:
    """Return a side-by-side table of every pair scored by every variant, and the coverage per variant."""
    variants = sorted(summary)
    keys = sorted({(p["workload"], p["policy"]) for d in summary.values() for p in d["pairs"]},
                  key=lambda k: (k[1], int(k[0].split("-")[1])))  # fmt: skip
    rows = {v: {(p["workload"], p["policy"]): p for p in summary[v]["pairs"]} for v in variants}
    head = "| workload | policy | truth h | " + " | ".join(f"{v}: central / p10-p50-p90 h" for v in variants) + " |"
    out = [head, "|" + "---|" * (3 + len(variants))]
    for k in keys:
        cells = []
        for v in variants:
            p = rows[v].get(k)
            cells.append("-" if p is None else f"{p['central_h']:.3f} / {p['p10_h']:.3f}-{p['median_h']:.3f}-"
                         f"{p['p90_h']:.3f}{' **in**' if p['inside'] else ''}")  # fmt: skip
        truth = next(rows[v][k]["truth_h"] for v in variants if k in rows[v])
        out.append(f"| {k[0].split('-')[1]} | {k[1]} | {truth:.3f} | " + " | ".join(cells) + " |")
    out.append("")
    for v in variants:
        d = summary[v]
        out.append(f"* **{v}**: {d['covered']} of {d['n']} pairs inside ({d['share']:.0%}); median width "
                   f"(p90 - p10) / median {d['median_width']:.0%}")  # fmt: skip
    return "\n".join(out) + "\n"


def _workloads(text) -> list:
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    if not out or any(not 1 <= w <= 8 for w in out):
        raise SystemExit(f"--workloads: philly has workloads 1-8, got {text!r}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--step-error", action="store_true", help="print the held-out step-time error and stop")
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="after")
    ap.add_argument("--workloads", default="1-8", help="philly workloads, e.g. 1-8 or 1,3,5")
    ap.add_argument("--policies", default="sia,pollux,gavel")
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--log", type=Path, default=None, help="JSON lines of finished pairs (resumed)")
    ap.add_argument("--work", type=Path, default=None, help="folder of the profiles and the draws' runs (resumed)")
    ap.add_argument("--report", nargs="+", type=Path, metavar="LOG", help="print the table of these logs and stop")
    args = ap.parse_args(argv)
    if args.step_error:
        print(json.dumps(step_error()))
        return 0
    if args.report:
        records = [json.loads(line) for log in args.report for line in log.read_text().splitlines()]
        s = summarise(records)
        print(markdown(s))
        print(json.dumps({v: {k: d[k] for k in ("covered", "n", "share", "median_width")} for v, d in s.items()}))
        return 0
    import tempfile

    work = args.work or Path(tempfile.mkdtemp(prefix="coverage-"))
    records = coverage(args.variant, _workloads(args.workloads), args.policies.split(","), args.draws, args.log, work)
    s = summarise(records)
    print(markdown(s))
    print(json.dumps({v: {k: d[k] for k in ("covered", "n", "share", "median_width")} for v, d in s.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
