r"""The throughput oracle against Sia's measured traces.

Usage::

    python benchmarks/oracle.py [--traces ../shared/sia-traces/traces] [--markdown out.md] [--json out.json]
    python benchmarks/oracle.py --e2e all --policies sia,pollux,gavel --e2e-log runs.jsonl  # resumable

1. **Calibrated prediction**: one number per GPU type fitted on cifar10's measured rows
   (``placements-<type>.csv``): its efficiency (``--fit efficiency``), or its per-step floor at
   one efficiency shared by the five types (``--fit floor``; ``--fit both`` reports the two side
   by side); then every measured row (``placements-<type>.csv`` and
   ``scalability-<type>.csv``; a scalability row's replicas spread evenly over its nodes) of the
   other five applications on aws, azure, rtx, dgx-ext and quad is predicted; the relative
   step-time error ``|predicted - measured| / measured`` per (application, type): median, p90,
   worst row. Floors: median <= 20 %, p90 <= 40 % over all rows.
2. **Uncalibrated ordering**: from the datasheets alone (default efficiency), the five types
   ordered by one-GPU throughput at each type's largest measured per-GPU batch, against the
   measured order; the share of agreeing (type, type) pairs per application (floor: >= 90 %).
3. **End to end** (``--e2e``): Sia's philly workloads on the measured traces and on oracle
   profiles calibrated on cifar10 only (``--measured-stats``: the oracle's throughput with the
   measured validation files, to separate the step times' share of a gap from the noise model's).
4. **Bootstrap profiles** (``--bootstrap``, issue 37): every application on each type
   calibrated on its own one-GPU rows and one full-node row (the median batch's), every other
   multi-GPU row predicted; ends with one JSON line ``{"median", "p90", "rows", "unanswered"}``.
   Also the datasheet-only floors (GPU-bound applications' median, the one-GPU ordering, the
   host-bound cells flagged).
5. **End to end with bootstrap step times** (``--e2e all --noise prior``): the philly study on
   bootstrap profiles with the noise prior's central statistics, against the trace-driven run;
   ends with one JSON line of per-policy ratios. ``--draws N`` adds the uncertainty bands
   (:func:`fastsched.sweep.uncertainty_bands`) and their coverage of the trace-driven JCT.
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


def _line(b, t):
    """Least-squares ``(intercept, slope)`` of ``t`` against ``b``."""
    a = np.vstack([np.ones_like(b), b]).T
    c = np.linalg.lstsq(a, t, rcond=None)[0]
    return float(c[0]), float(c[1])


def _split(app, g, eff, rows, floor=0.0) -> dict:
    """Where a cell's error comes from: one-GPU compute against multi-GPU sync.

    ``compute``: median log(predicted / measured) of the one-GPU step (no sync);
    ``sync``: the same of the sync time over the rows with several GPUs and a measured sync
    above 1 ms; ``fixed_ms``/``per_sample_ms``: intercept and slope of the one-GPU compute
    (step - sync) against the batch, measured and predicted.
    """
    from fastsched.catalog import step_time

    one = [(b, st - sy) for p, b, st, sy in rows if p == (1,)]
    b = np.array([x[0] for x in one])
    meas = np.array([x[1] for x in one])
    pred = np.array([step_time(app, g, (1,), x, efficiency=eff, floor_s=floor).step for x in b])
    syn = [
        np.log(step_time(app, g, p, bb, efficiency=eff).sync / sy) for p, bb, st, sy in rows if sum(p) > 1 and sy > 1e-3
    ]
    (fm, sm), (fp, sp) = _line(b, meas), _line(b, pred)
    return {
        "compute": float(np.median(np.log(pred / meas))),
        "sync": float(np.median(syn)) if syn else float("nan"),
        "fixed_ms": (fm * 1e3, fp * 1e3),
        "per_sample_ms": (sm * 1e3, sp * 1e3),
    }


def calibration(traces: Path, fit: str) -> tuple:
    """``(efficiencies, floors)`` per type from cifar10's measured rows (see the module docstring)."""
    from fastsched.sim.truth.oracle import calibrate_floors_from_traces, calibrate_from_traces

    if fit == "efficiency":
        return calibrate_from_traces(traces / "cifar10", TYPES), dict.fromkeys(TYPES, 0.0)
    c = calibrate_floors_from_traces(traces / "cifar10", TYPES)
    return c.efficiencies, c.floors


def run(traces: Path, fit: str = "floor") -> dict:
    from fastsched.catalog import gpu_type, step_time

    effs, floors = calibration(traces, fit)
    cells, all_err, worst = [], [], []
    by_shape: dict = {"one GPU": [], "one node, several GPUs": [], "several nodes": []}
    for app in APPS:
        for t in TYPES:
            rows = measured_rows(traces / app, t)
            g = gpu_type(t)
            errs = []
            for p, b, st, _ in rows:
                pred = step_time(app, g, p, b, efficiency=effs[t], floor_s=floors[t]).step
                e = abs(pred - st) / st
                errs.append(e)
                if app != "cifar10":
                    worst.append((e, app, t, "".join(map(str, p)), b, st, pred))
                    shape = "one GPU" if sum(p) == 1 else ("one node, several GPUs" if len(p) == 1 else "several nodes")
                    by_shape[shape].append(e)
            errs = np.array(errs)
            split = _split(app, g, effs[t], rows, floors[t])
            cells.append(
                {
                    "app": app,
                    "type": t,
                    "rows": len(rows),
                    "median": float(np.median(errs)),
                    "p90": float(np.percentile(errs, 90)),
                    "max": float(errs.max()),
                    **split,
                    "bias": float(
                        np.median(
                            [
                                np.log(step_time(app, g, p, b, efficiency=effs[t], floor_s=floors[t]).step / st)
                                for p, b, st, _ in rows
                            ]
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
        "fit": fit,
        "efficiency": effs,
        "floors": floors,
        "cells": cells,
        "overall": {
            "rows": int(flat.size),
            "median": float(np.median(flat)),
            "p90": float(np.percentile(flat, 90)),
        },
        "by_shape": {
            k: {"rows": len(v), "median": float(np.median(v)), "p90": float(np.percentile(v, 90))}
            for k, v in by_shape.items()
        },
        "worst": [
            {"err": e, "app": a, "type": t, "placement": p, "local_bsz": b, "measured": st, "predicted": pr}
            for e, a, t, p, b, st, pr in worst[:8]
        ],
        "ordering": ordering,
    }


def markdown(res: dict) -> str:
    out = [
        "| application | type | rows | median error | p90 error | worst row | log(pred/meas): step | "
        "1-GPU compute | sync | 1-GPU fixed ms (meas/pred) | 1-GPU ms per sample (meas/pred) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in res["cells"]:
        tag = " (calibration)" if c["app"] == "cifar10" else ""
        (fm, fp), (sm, sp) = c["fixed_ms"], c["per_sample_ms"]
        out.append(
            f"| {c['app']}{tag} | {c['type']} | {c['rows']} | {c['median']:.0%} | {c['p90']:.0%} | {c['max']:.0%} | "
            f"{c['bias']:+.2f} | {c['compute']:+.2f} | {c['sync']:+.2f} | {fm:.0f} / {fp:.0f} | {sm:.3g} / {sp:.3g} |"
        )
    o = res["overall"]
    out += ["", f"Five applications x five types, {o['rows']} rows: median {o['median']:.1%}, p90 {o['p90']:.1%}.", ""]
    out += ["| placement shape | rows | median error | p90 error |", "|---|---|---|---|"]
    out += [f"| {k} | {v['rows']} | {v['median']:.0%} | {v['p90']:.0%} |" for k, v in res["by_shape"].items()]
    out += [
        "",
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
    floors = ", ".join(f"{t} {f * 1e3:.1f} ms" for t, f in res["floors"].items())
    out += ["", f"Fitted on cifar10 (`--fit {res['fit']}`): efficiencies {effs}; per-step floors {floors}."]
    return "\n".join(out) + "\n"


def compare(a: dict, b: dict) -> str:
    """Per-(application, type) median and p90 of two calibrations, side by side."""
    out = [
        f"| application | type | rows | median: {a['fit']} -> {b['fit']} | p90: {a['fit']} -> {b['fit']} |",
        "|---|---|---|---|---|",
    ]
    for ca, cb in zip(a["cells"], b["cells"], strict=True):
        tag = " (calibration)" if ca["app"] == "cifar10" else ""
        out.append(
            f"| {ca['app']}{tag} | {ca['type']} | {ca['rows']} | {ca['median']:.0%} -> {cb['median']:.0%} | "
            f"{ca['p90']:.0%} -> {cb['p90']:.0%} |"
        )
    oa, ob = a["overall"], b["overall"]
    out += ["", f"Held out, {oa['rows']} rows: median {oa['median']:.1%} -> {ob['median']:.1%}, "
            f"p90 {oa['p90']:.1%} -> {ob['p90']:.1%}."]  # fmt: skip
    return "\n".join(out) + "\n"


ALL_TYPES = ("t4", "v100", "a100-40gb", "a100-80gb", "rtx2080ti", "quadro-rtx6000", "l4", "l40s", "h100", "h200",
             "b200", "mi300x")  # fmt: skip


def speed(traces: Path, repeats: int = 5) -> dict:
    """``fastsched profile`` of one model on 12 types, beside reading one application's measured traces."""
    import statistics
    import subprocess
    import tempfile
    import time

    from fastsched.sim.engine.hetero_job import load_hetero_applications
    from fastsched.sim.truth.oracle import write_profile

    def median_time(fn):
        fn()  # warm
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    profile = median_time(lambda: write_profile("cifar10", ALL_TYPES, tempfile.mkdtemp()))
    read = median_time(lambda: load_hetero_applications(traces, TYPES, ["cifar10"]))
    exe = Path(sys.executable).with_name("fastsched")
    out = tempfile.mkdtemp()
    cli = median_time(
        lambda: subprocess.run(
            [exe, "profile", "cifar10", "--gpu", ",".join(ALL_TYPES), "--output", out, "-q", "--force"], check=True
        )
    )
    start = median_time(lambda: subprocess.run([exe, "--version"], check=True, capture_output=True))
    return {"write_profile_s": profile, "read_measured_s": read, "cli_s": cli, "cli_startup_s": start}


def end_to_end(traces: Path, workloads=None, policies=("sia", "pollux", "gavel"), measured_stats=False,
               sources=("traces", "oracle"), log=None, fit="efficiency") -> dict:  # fmt: skip
    """Sia's philly study on measured traces and on oracle profiles calibrated on cifar10 only.

    ``measured_stats``: the oracle's throughput with the measured validation files (separates
    the throughput's share of a JCT gap from the gradient-noise model's); ``fit``: the per-type
    number fitted on cifar10 (as :func:`calibration`, on the study's three types). ``log``: a JSON-lines
    file of finished runs; runs already in it are not repeated (a long study resumes), and the
    summary covers every run in it for the requested policies and workloads.
    """
    import shutil
    import tempfile
    import time

    from fastsched.sim import simulate
    from fastsched.sim.truth.oracle import calibrate_floors_from_traces, calibrate_from_traces, write_profile

    types = ("aws", "rtx", "dgx-ext")  # the study's cluster: 6xaws,3xrtx,2xdgx-ext
    oracle_dir = None
    if "oracle" in sources:
        if fit == "efficiency":
            effs, floors = calibrate_from_traces(traces / "cifar10", types), {}
        else:
            effs, floors = calibrate_floors_from_traces(traces / "cifar10", types)
        oracle_dir = Path(tempfile.mkdtemp())
        for app in APPS:
            write_profile(app, types, oracle_dir, efficiencies=effs, floors=floors)
            if measured_stats:
                for old in (oracle_dir / app).glob("validation-*.csv"):
                    old.unlink()
                for v in (traces / app).glob("validation-*.csv"):
                    shutil.copy(v, oracle_dir / app / v.name)
    folder = SHARED / "sia-traces" / "workloads" / "philly"
    files = sorted(folder.glob("workload-*.csv"), key=lambda p: int(p.stem.split("-")[1]))
    if workloads:
        files = [f for f in files if int(f.stem.split("-")[1]) in set(workloads)]
    tag = ("oracle" if fit == "efficiency" else f"oracle-{fit}") + ("-measured-stats" if measured_stats else "")
    done = {}
    if log is not None and Path(log).is_file():
        for line in Path(log).read_text().splitlines():
            r = json.loads(line)
            done[(r["policy"], r["workload"], r["source"])] = r
    for f in files:  # workload by workload: a partial study still compares every policy
        for pol in policies:
            for source in sources:
                key = (pol, f.stem, "traces" if source == "traces" else tag)
                if key in done:
                    continue
                tdir = traces if source == "traces" else oracle_dir
                t0, c0 = time.perf_counter(), time.process_time()
                r = simulate(f, traces=tdir, preset="sia", policy=pol, seed=0)
                rec = {"policy": pol, "workload": f.stem, "source": key[2], "avg_jct": r.summary()["avg_jct"],
                       "cpu_s": time.process_time() - c0}  # fmt: skip
                done[key] = rec
                if log is not None:
                    with open(log, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")
                print(f"# {pol} {f.stem} {key[2]}: avg JCT {rec['avg_jct'] / 3600:.3f} h "
                      f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)  # fmt: skip
    out: dict = {}
    for pol in policies:
        for f in files:
            t, o = done.get((pol, f.stem, "traces")), done.get((pol, f.stem, tag))
            if t is None or o is None:
                continue
            d = out.setdefault(pol, {"traces": [], "oracle": [], "workloads": []})
            d["traces"].append(t["avg_jct"])
            d["oracle"].append(o["avg_jct"])
            d["workloads"].append(f.stem)
    return {
        pol: {
            "traces": float(np.mean(d["traces"])),
            "oracle": float(np.mean(d["oracle"])),
            "runs": len(d["traces"]),
            "per_workload": [o / t for t, o in zip(d["traces"], d["oracle"], strict=True)],
        }  # fmt: skip
        for pol, d in out.items()
    }


GPU_BOUND = ("bert", "imagenet", "cifar10")
STUDY_TYPES = ("aws", "rtx", "dgx-ext")  # the philly study's cluster: 6xaws,3xrtx,2xdgx-ext


def bootstrap_profiles(traces: Path, out: Path, types=STUDY_TYPES) -> Path:
    """Bootstrap profiles of the six applications (one-GPU rows + the median full-node row), prior noise."""
    from fastsched.sim.oracle import write_profile

    from fastsched.catalog.bootstrap import bootstrap_from_traces

    for app in APPS:
        write_profile(app, types, out, bootstraps=bootstrap_from_traces(traces / app, types), force=True)
    return out


def e2e_bootstrap(traces: Path, workloads=None, policies=("sia", "pollux", "gavel"), draws=0, log=None,
                  work=None, measured_stats=False) -> dict:  # fmt: skip
    """Item 5's end-to-end floor and coverage: philly on bootstrap profiles with the prior's noise.

    The trace-driven run and the central profile run per (workload, policy) go to ``log``
    (JSON lines, resumed); with ``draws``, :func:`fastsched.sweep.uncertainty_bands` per
    workload, its tables in ``work/<workload>/runs`` (resumed too). ``measured_stats``: the
    bootstrap step times with the measured validation files instead of the prior (a diagnostic
    that separates the step times' share of a gap from the prior's; nothing is fitted on it).
    """
    import shutil
    import tempfile
    import time

    from fastsched.sim import simulate
    from fastsched.sweep.uncertainty import uncertainty_bands

    work = Path(work or tempfile.mkdtemp(prefix="oracle-e2e-"))
    prof = bootstrap_profiles(traces, work / "bootstrap-profiles")
    tag = "bootstrap-prior"
    if measured_stats:
        tag = "bootstrap-measured-stats"
        for app in APPS:
            for old in (prof / app).glob("validation-*.csv"):
                old.unlink()
            for v in (traces / app).glob("validation-*.csv"):
                shutil.copy(v, prof / app / v.name)
    folder = SHARED / "sia-traces" / "workloads" / "philly"
    files = sorted(folder.glob("workload-*.csv"), key=lambda p: int(p.stem.split("-")[1]))
    if workloads:
        files = [f for f in files if int(f.stem.split("-")[1]) in set(workloads)]
    done = {}
    if log is not None and Path(log).is_file():
        for line in Path(log).read_text().splitlines():
            r = json.loads(line)
            done[(r["policy"], r["workload"], r["source"])] = r
    bands = {}
    for f in files:
        for pol in policies:
            for source, tdir in (("traces", traces), (tag, prof)):
                key = (pol, f.stem, source)
                if key in done:
                    continue
                t0, c0 = time.perf_counter(), time.process_time()
                r = simulate(f, traces=tdir, preset="sia", policy=pol, seed=0)
                rec = {"policy": pol, "workload": f.stem, "source": source, "avg_jct": r.summary()["avg_jct"],
                       "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - t0}  # fmt: skip
                done[key] = rec
                if log is not None:
                    with open(log, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")
                print(f"# {pol} {f.stem} {source}: avg JCT {rec['avg_jct'] / 3600:.3f} h ({rec['wall_s']:.1f} s)",
                      file=sys.stderr, flush=True)  # fmt: skip
        if draws:
            t0 = time.perf_counter()
            res = uncertainty_bands(f, prof, policies=list(policies), draws=draws, seed=0, out_dir=work / f.stem,
                                    resume=True, preset="sia")  # fmt: skip
            bands[f.stem] = {p: b._asdict() for p, b in res.bands.items()}
            bands[f.stem]["_order_holds"] = res.order_holds
            bands[f.stem]["_wall_s"] = time.perf_counter() - t0
            print(f"# bands {f.stem}: {json.dumps(bands[f.stem])}", file=sys.stderr, flush=True)
    out: dict = {"policies": {}, "bands": bands}
    for pol in policies:
        t = [done[(pol, f.stem, "traces")]["avg_jct"] for f in files if (pol, f.stem, "traces") in done]
        o = [done[(pol, f.stem, tag)]["avg_jct"] for f in files if (pol, f.stem, tag) in done]
        if len(t) == len(o) == len(files):
            out["policies"][pol] = {"traces": float(np.mean(t)), "bootstrap": float(np.mean(o)),
                                    "ratio": float(np.mean(o) / np.mean(t)),
                                    "per_workload": [b / a for a, b in zip(t, o, strict=True)]}  # fmt: skip
    if bands:
        inside, widths = [], []
        for f in files:
            for pol in policies:
                b = bands.get(f.stem, {}).get(pol)
                if b is None or (pol, f.stem, "traces") not in done:
                    continue
                truth = done[(pol, f.stem, "traces")]["avg_jct"]
                inside.append(b["p10"] <= truth <= b["p90"])
                widths.append((b["p90"] - b["p10"]) / b["median"])
        out["coverage"] = {"pairs": len(inside), "inside": int(sum(inside)),
                           "share": float(np.mean(inside)) if inside else float("nan"),
                           "median_width": float(np.median(widths)) if widths else float("nan")}  # fmt: skip
    return out


def bootstrap_check(traces: Path, node_row=True, two_nodes=False) -> dict:
    """Item 1's floors: bootstrap profiles on held-out rows, and the datasheet-only mode.

    ``two_nodes``: also fit on the row of two full nodes (hypothesis L2, not the floor's protocol).
    """
    from fastsched.catalog import gpu_type, step_time
    from fastsched.catalog.bootstrap import bootstrap_rows, fit_bootstrap, two_node_row

    cells, flat, unanswered, by_shape = [], [], 0, []
    for app in APPS:
        for t in TYPES:
            g = gpu_type(t)
            one, node = bootstrap_rows(traces / app / f"placements-{t}.csv", g.gpus_per_node)
            G = g.gpus_per_node
            two = two_node_row(traces / app / f"placements-{t}.csv", G) if two_nodes and node_row else None
            bs = fit_bootstrap(app, g, one, node if node_row else None, two_node_row=two)
            errs, shapes = [], {}
            for p, b, st, sy in measured_rows(traces / app, t):
                if sum(p) == 1 or (node is not None and p == (G,) and (b, st, sy) == node):
                    continue  # the rows the profile was fitted on
                if two is not None and p == (G, G) and (b, st, sy) == two:
                    continue
                try:
                    pred = step_time(app, g, p, b, floor_s=bs.floor_s, adjust=bs.adjust).step
                except ValueError:
                    pred = float("nan")
                if not np.isfinite(pred):
                    unanswered += 1
                    continue
                errs.append(abs(pred - st) / st)
                shapes.setdefault(_shape(p), []).append((errs[-1], float(np.log(pred / st))))
            e = np.array(errs)
            for shape, v in shapes.items():
                se, sl = np.array(v).T
                by_shape.append({"app": app, "type": t, "shape": shape, "rows": int(se.size),
                                 "median": float(np.median(se)), "p90": float(np.percentile(se, 90)),
                                 "above_30": int((se > 0.3).sum()), "log_bias": float(np.median(sl))})  # fmt: skip
            flat.append(e)
            a = bs.adjust
            cells.append({"app": app, "type": t, "rows": int(e.size), "median": float(np.median(e)),
                          "p90": float(np.percentile(e, 90)), "above_30": int((e > 0.3).sum()),
                          "gpu_scale": a.gpu_scale, "host_scale": a.host_scale, "floor_ms": bs.floor_s * 1e3,
                          "contention": a.contention, "node_sync_ms": a.node_sync_s * 1e3,
                          "hop_latency_ms": a.hop_latency_s * 1e3,
                          "low_confidence": bs.low_confidence})  # fmt: skip
    e = np.concatenate(flat)
    summary = {"median": float(np.median(e)), "p90": float(np.percentile(e, 90)), "rows": int(e.size),
               "unanswered": unanswered, "above_30": int((e > 0.3).sum())}  # fmt: skip
    per_app = {app: float(np.median(np.concatenate([f for c, f in zip(cells, flat, strict=True) if c["app"] == app])))
               for app in APPS}  # fmt: skip
    return {"cells": cells, "summary": summary, "per_app": per_app, "by_shape": by_shape,
            "datasheet": datasheet_check(traces)}  # fmt: skip


def _shape(p) -> str:
    """Name the placement's shape: one node, one GPU on each of several nodes, or several nodes."""
    if len(p) == 1:
        return "one node"
    return "one GPU per node" if max(p) == 1 else "several nodes"


def datasheet_check(traces: Path) -> dict:
    """Datasheet-only profiles: per-application median over every row, the ordering, flagged cells."""
    from fastsched.catalog import gpu_type, step_time
    from fastsched.catalog.oracle import HOST_BOUND_RATIO, host_share

    out: dict = {"apps": {}, "flagged": []}
    for app in APPS:
        errs, meas, pred = [], {}, {}
        for t in TYPES:
            g = gpu_type(t)
            rows = measured_rows(traces / app, t)
            errs += [abs(step_time(app, g, p, b).step - st) / st for p, b, st, _ in rows]
            b, st = max((b, st) for p, b, st, _ in rows if p == (1,))
            meas[t], pred[t] = b / st, b / step_time(app, g, (1,), b).step
            if host_share(app, g) >= HOST_BOUND_RATIO:
                out["flagged"].append(f"{app}/{t}")
        pairs = list(itertools.combinations(TYPES, 2))
        bad = [f"{a}/{b}" for a, b in pairs if (meas[a] > meas[b]) != (pred[a] > pred[b])]
        flagged = [f"{a}/{b}" for a, b in pairs if f"{a}/{b}" in bad and ({f"{app}/{a}", f"{app}/{b}"} &
                                                                         set(out["flagged"]))]  # fmt: skip
        out["apps"][app] = {"median": float(np.median(errs)), "rows": len(errs), "agree": len(pairs) - len(bad),
                            "pairs": len(pairs), "disagree": bad, "disagree_flagged": flagged}  # fmt: skip
    return out


def bands_speed(traces: Path, workload=1, policy="sia", draws=20) -> dict:
    """Wall time of :func:`fastsched.sweep.uncertainty_bands` (``draws`` draws) over one run of the central profiles."""
    import tempfile
    import time

    from fastsched.sim import simulate
    from fastsched.sweep.uncertainty import uncertainty_bands

    work = Path(tempfile.mkdtemp(prefix="oracle-bands-"))
    prof = bootstrap_profiles(traces, work / "bootstrap-profiles")
    wl = SHARED / "sia-traces" / "workloads" / "philly" / f"workload-{workload}.csv"
    simulate(wl, traces=prof, preset="sia", policy=policy, seed=0)  # warm: kernels loaded, caches filled
    singles = []
    for _ in range(3):
        t0 = time.perf_counter()
        simulate(wl, traces=prof, preset="sia", policy=policy, seed=0)
        singles.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    uncertainty_bands(wl, prof, policies=[policy], draws=draws, seed=0, preset="sia")
    bands = time.perf_counter() - t0
    single = float(np.median(singles))
    return {"single_s": single, "bands_s": bands, "draws": draws, "runs_equivalent": bands / single}


def bootstrap_markdown(res: dict) -> str:
    out = [
        "| application | type | held-out rows | median | p90 | rows > 30 % | gpu x | host x | floor ms | "
        "contention | node sync ms | hop latency ms | low confidence |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in res["cells"]:
        out.append(f"| {c['app']} | {c['type']} | {c['rows']} | {c['median']:.1%} | {c['p90']:.1%} | {c['above_30']} | "
                   f"{c['gpu_scale']:.2f} | {c['host_scale']:.2f} | {c['floor_ms']:.0f} | {c['contention']:.2f} | "
                   f"{c['node_sync_ms']:.0f} | {c['hop_latency_ms']:.1f} | {'yes' if c['low_confidence'] else ''} |")  # fmt: skip
    s = res["summary"]
    out += [
        "",
        f"Held out: {s['rows']} rows, median {s['median']:.1%}, p90 {s['p90']:.1%}, "
        f"{s['above_30']} rows above 30 %, unanswered {s['unanswered']}.",
        "",
        "Median per application: " + ", ".join(f"{a} {v:.1%}" for a, v in res["per_app"].items()) + ".",
        "",
        "Rows above 30 % by (application, type, placement shape), the 12 largest (log bias: median "
        "log(predicted / measured)):",
        "",
        "| application | type | shape | rows | median | p90 | rows > 30 % | log bias |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in sorted(res["by_shape"], key=lambda c: -c["above_30"])[:12]:
        out.append(f"| {c['app']} | {c['type']} | {c['shape']} | {c['rows']} | {c['median']:.1%} | {c['p90']:.1%} | "
                   f"{c['above_30']} | {c['log_bias']:+.2f} |")  # fmt: skip
    tot: dict = {}
    for c in res["by_shape"]:
        tot.setdefault(c["shape"], [0, 0])
        tot[c["shape"]][0] += c["rows"]
        tot[c["shape"]][1] += c["above_30"]
    out += ["", "By shape: " + "; ".join(f"{k} {v[1]} of {v[0]} rows above 30 %" for k, v in tot.items()) + ".", "",
            "Datasheet only (default efficiency, no calibration):", "",
            "| application | rows | median | one-GPU order: pairs agreeing | disagreeing (of which a flagged cell) |",
            "|---|---|---|---|---|"]  # fmt: skip
    for app, d in res["datasheet"]["apps"].items():
        tag = " (GPU-bound)" if app in GPU_BOUND else ""
        out.append(f"| {app}{tag} | {d['rows']} | {d['median']:.1%} | {d['agree']}/{d['pairs']} | "
                   f"{', '.join(d['disagree']) or '-'} ({', '.join(d['disagree_flagged']) or '-'}) |")  # fmt: skip
    out += ["", f"Host-bound cells flagged low-confidence: {', '.join(res['datasheet']['flagged']) or 'none'}."]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", type=Path, default=TRACES)
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--fit",
        choices=("efficiency", "floor", "both"),
        default="both",
        help="the per-type number fitted on cifar10 (both: the floor's table, and the two compared)",
    )
    ap.add_argument("--speed", action="store_true", help="also time fastsched profile (12 types)")
    ap.add_argument(
        "--e2e", default=None, help="also run the philly study: comma-separated workload numbers, or all (philly)"
    )
    ap.add_argument("--policies", default="sia,pollux,gavel", help="policies of --e2e")
    ap.add_argument("--measured-stats", action="store_true", help="--e2e with the measured validation files")
    ap.add_argument("--sources", default="traces,oracle", help="--e2e: which runs to make (traces, oracle)")
    ap.add_argument("--e2e-log", type=Path, default=None, help="--e2e: JSON-lines file of finished runs (resumes)")
    ap.add_argument("--bootstrap", action="store_true", help="bootstrap profiles on held-out rows (issue 37)")
    ap.add_argument("--one-gpu-only", action="store_true", help="--bootstrap without the full-node row")
    ap.add_argument(
        "--two-node-row",
        action="store_true",
        help="--bootstrap also fitted on the row of two full nodes (sets the ring's step latency)",
    )
    ap.add_argument(
        "--noise",
        choices=("prior", "measured"),
        default=None,
        help="--e2e on bootstrap profiles with the noise prior's central statistics (issue 37)",
    )
    ap.add_argument("--draws", type=int, default=0, help="--e2e --noise prior: uncertainty draws per workload")
    ap.add_argument("--work", type=Path, default=None, help="--e2e --noise prior: folder of profiles and draws")
    ap.add_argument(
        "--bands-speed",
        action="store_true",
        help="time uncertainty_bands (--draws, default 20) against single runs (philly workload 1, sia)",
    )
    args = ap.parse_args(argv)
    if not args.traces.is_dir():
        print(f"traces not found: {args.traces}", file=sys.stderr)
        return 2
    if args.bands_speed:
        res = bands_speed(args.traces, draws=args.draws or 20, policy=args.policies.split(",")[0])
        print(json.dumps(res))
        return 0
    if args.bootstrap:
        res = bootstrap_check(args.traces, node_row=not args.one_gpu_only, two_nodes=args.two_node_row)
        text = bootstrap_markdown(res)
        print(text)
        if args.markdown:
            args.markdown.write_text(text)
        if args.json:
            args.json.write_text(json.dumps(res, indent=1))
        print(json.dumps(res["summary"]))
        return 0
    if args.e2e and args.noise:
        wl = None if args.e2e in ("all", "philly") else [int(x) for x in args.e2e.split(",")]
        res = e2e_bootstrap(args.traces, wl, tuple(args.policies.split(",")), args.draws, args.e2e_log, args.work,
                            measured_stats=args.noise == "measured")  # fmt: skip
        text = f"| policy | avg JCT, traces (h) | bootstrap, {args.noise} noise (h) | ratio | per workload |\n|---|---|---|---|---|\n"
        for pol, d in res["policies"].items():
            text += (f"| {pol} | {d['traces'] / 3600:.3f} | {d['bootstrap'] / 3600:.3f} | {d['ratio']:.2f} | "
                     f"{', '.join(f'{x:.2f}' for x in d['per_workload'])} |\n")  # fmt: skip
        if res["policies"]:
            order = [sorted(res["policies"], key=lambda p: res["policies"][p][k]) for k in ("traces", "bootstrap")]
            text += f"\nPolicy order: traces {' < '.join(order[0])}; bootstrap {' < '.join(order[1])}.\n"
        if "coverage" in res:
            c = res["coverage"]
            text += (f"\nCoverage ({args.draws} draws): the trace-driven avg JCT inside the 10-90 % band in "
                     f"{c['inside']}/{c['pairs']} pairs ({c['share']:.0%}); median band width "
                     f"{c['median_width']:.0%} of the median.\n")  # fmt: skip
        print(text)
        if args.markdown:
            args.markdown.write_text(text)
        if args.json:
            args.json.write_text(json.dumps(res, indent=1))
        print(json.dumps({p: round(d["ratio"], 4) for p, d in res["policies"].items()}))
        return 0
    res = run(args.traces, "floor" if args.fit == "both" else args.fit)
    text = markdown(res)
    if args.fit == "both":
        res["efficiency_fit"] = run(args.traces, "efficiency")
        text += "\n" + compare(res["efficiency_fit"], res)
    if args.speed:
        sp = res["speed"] = speed(args.traces)
        text += (
            f"\nSpeed (medians of 5 warm runs, one process): `write_profile` of cifar10 on 12 types "
            f"{sp['write_profile_s']:.3f} s = {sp['write_profile_s'] / sp['read_measured_s']:.2f} x reading cifar10's "
            f"measured traces on the 5 Sia types ({sp['read_measured_s']:.3f} s); the whole `fastsched profile` "
            f"command {sp['cli_s']:.2f} s = {sp['cli_s'] / sp['cli_startup_s']:.2f} x `fastsched --version` "
            f"({sp['cli_startup_s']:.2f} s, interpreter and import start-up).\n"
        )
    if args.e2e:
        wl = None if args.e2e in ("all", "philly") else [int(x) for x in args.e2e.split(",")]
        e2e = res["end_to_end"] = end_to_end(args.traces, wl, tuple(args.policies.split(",")), args.measured_stats,
                                             tuple(args.sources.split(",")), args.e2e_log,
                                             "floor" if args.fit == "both" else args.fit)  # fmt: skip
        text += "\n| policy | workloads | avg JCT, traces (h) | avg JCT, oracle (h) | oracle / traces |\n|---|---|---|---|---|\n"
        for pol, d in e2e.items():
            text += (
                f"| {pol} | {d['runs']} | {d['traces'] / 3600:.3f} | {d['oracle'] / 3600:.3f} | "
                f"{d['oracle'] / d['traces']:.2f} |\n"
            )
        order = [sorted(e2e, key=lambda p: e2e[p][k]) for k in ("traces", "oracle")]
        text += f"\nPolicy order by average JCT: traces {' < '.join(order[0])}; oracle {' < '.join(order[1])}.\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
