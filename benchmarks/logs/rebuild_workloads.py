"""Rebuild the shared Pollux and Sia "philly" workloads from a log and compare their distributions.

Usage::

    python benchmarks/logs/rebuild_workloads.py [--shared ../shared] [--log-jobs 117325] [--seeds 8]

The real Philly log is not here, so the log is the synthetic ``philly`` profile
(:data:`fastsched.sim.inputs.logs.SYNTHETIC_PROFILES`: Philly's job count and span, Helios'
shapes, stated as an assumption). From it, ``--seeds`` workloads of 160 jobs each are drawn by
:func:`~fastsched.sim.inputs.logs.workload_from_log` with rule ``pollux`` (the OSDI'21
generator on the Pollux traces' profiles) and rule ``sia-philly`` (the same, ncf replaced by
cifar10 and requests above 16 GPUs drawn again on the Sia traces' 8-GPU ``rtx`` nodes), and
compared with the 8 shared files of each set, pooled: the GPU count per job, the job's
duration (its isolated run time at its configuration on the reference cluster, the ``jct`` the
rule computes), the submission time and the application mix. Two-sample Kolmogorov-Smirnov
statistics (scipy) and quantiles; printed as Markdown.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _load_shared(folder: Path):
    rows = []
    for f in sorted(folder.glob("workload-*.csv")):
        with open(f, newline="") as fh:
            rows += [
                (r["application"], int(r["num_replicas"]), int(r["batch_size"]), float(r["time"]))
                for r in csv.DictReader(fh)
            ]
    return rows


def _quantiles(x):
    q = np.quantile(x, [0.1, 0.25, 0.5, 0.75, 0.9])
    return " / ".join(f"{v:.4g}" for v in q) + f" (mean {np.mean(x):.4g})"


def _compare(title, ours, theirs, jct):
    from scipy.stats import ks_2samp

    print(f"\n### {title}\n")
    print(f"{len(ours)} rebuilt jobs vs {len(theirs)} published.\n")
    print("| quantity | rebuilt p10 / p25 / p50 / p75 / p90 | published p10 / p25 / p50 / p75 / p90 | KS D | KS p |")
    print("|---|---|---|---|---|")
    missing = Counter()
    for name, f in (
        ("GPUs per job", lambda r: r[1]),
        ("duration h (isolated, at its configuration)", lambda r: jct.get((r[0], r[1], r[2]), np.nan) / 3600),
        ("submission time h", lambda r: r[3] / 3600),
    ):
        a = np.array([f(r) for r in ours], dtype=float)
        b = np.array([f(r) for r in theirs], dtype=float)
        if np.isnan(b).any() or np.isnan(a).any():
            missing[name] += int(np.isnan(a).sum() + np.isnan(b).sum())
            a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        ks = ks_2samp(a, b)
        print(f"| {name} | {_quantiles(a)} | {_quantiles(b)} | {ks.statistic:.3f} | {ks.pvalue:.2g} |")
    apps = sorted({r[0] for r in ours} | {r[0] for r in theirs})
    ca, cb = Counter(r[0] for r in ours), Counter(r[0] for r in theirs)
    print("\n| application | rebuilt share | published share |\n|---|---|---|")
    for a in apps:
        print(f"| {a} | {ca[a] / len(ours):.3f} | {cb[a] / len(theirs):.3f} |")
    if missing:
        print(f"\n(configurations outside the rule's lists, left out of the duration row: {dict(missing)})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--log-jobs", type=int, default=117_325)
    ap.add_argument("--seeds", type=int, default=8)
    args = ap.parse_args(argv)
    from fastsched.sim.inputs.logs import read_log, synthetic_log
    from fastsched.sim.log_workload import RULES, application_configurations, workload_from_log
    from fastsched.sim.truth.traces import PUBLISHED_OVERRIDES, TraceApplication, load_applications

    pollux_apps = load_applications(args.shared / "pollux-traces" / "traces")
    rtx_apps = {
        n: TraceApplication(
            args.shared / "sia-traces" / "traces" / n, n, gpu_type="rtx", **PUBLISHED_OVERRIDES.get(n, {})
        )
        for n in pollux_apps
    }
    jct = {}
    for name, app in pollux_apps.items():
        jct.update(
            {
                (name, r, b): t
                for r, b, t in application_configurations(app, gpus_per_node=4, counts=RULES["pollux"]["reference"][1])
            }
        )
    for name, app in rtx_apps.items():
        gpn, counts = RULES["sia-philly"]["fallback"]
        for r, b, t in application_configurations(app, gpus_per_node=gpn, counts=counts, max_gpus=16):
            jct.setdefault((name, r, b), t)

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        log = read_log(synthetic_log(Path(tmp) / "philly.csv", profile="philly", num_jobs=args.log_jobs, seed=0).path)
        t_log = time.perf_counter() - t0
    print(f"Synthetic philly-profile log: {len(log.jobs):,} jobs (written and read in {t_log:.1f} s).")
    for rule, folder in (("pollux", "pollux-traces/workloads"), ("sia-philly", "sia-traces/workloads/philly")):
        t0 = time.perf_counter()
        ours = []
        for seed in range(args.seeds):
            w = workload_from_log(
                log, num_jobs=160, rule=rule, applications=pollux_apps, fallback_applications=rtx_apps, seed=seed
            )
            ours += [(j.application, j.num_replicas, j.batch_size, float(j.time)) for j in w.jobs]
        took = time.perf_counter() - t0
        print(
            f"\n{rule}: {args.seeds} workloads drawn in {took:.2f} s ({w.eligible:,} eligible log jobs in the window)."
        )
        _compare(f"rule `{rule}` vs `{folder}`", ours, _load_shared(args.shared / folder), jct)


if __name__ == "__main__":
    main()
