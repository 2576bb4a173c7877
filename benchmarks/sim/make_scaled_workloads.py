"""Load-scaled Pollux workloads (0.5x, 1.5x, 2x) drawn like the shared 160-job ones.

The Pollux artifact evaluates its simulator on workloads of 80, 240 and 320 jobs submitted
over the same 8-hour window as the 160-job ones; those files are not in ../shared. This
script draws stand-ins with the procedure the artifact describes for its workloads
(``workload.py`` of the osdi21 branch, summarised here in our own words):

1. a Philly job is sampled (jobs of at least 60 s and under 1000 GPU-hours, submitted in
   an 8-hour window of the day): it gives the submission time (its time of day, seconds
   from the window start) and a size category from its GPU time: S (< 1 GPU-h), M (1-10),
   L (10-100), XL (>= 100);
2. the category fixes the application: S -> cifar10 or ncf (a fair coin), M -> deepspeech2
   or bert (a fair coin), L -> yolov3, XL -> imagenet;
3. the (GPUs, batch) request is drawn uniformly from the application's tuned
   configurations (those within 50-80 % of ideal scaling efficiency).

Every row of a workload is one independent draw (the Philly trace has ~100k candidate jobs,
so sampling 80-320 without replacement is sampling with replacement for all purposes
here). The Philly trace is not in ../shared, so step 1 is estimated from the 1280 shared
rows: each shared row is one draw of (time of day, category) from the trace, and the
generator resamples those pairs jointly (time and size together, so busy hours and any
time/size correlation are kept). Steps 2 and 3 are the artifact's own rules, with the
configuration sets read off the shared rows (every tuned configuration of every
application occurs there). Workload-level randomness is thus the artifact's: how many XL
(imagenet) and L (yolov3) jobs a workload holds is binomial, and that count dominates the
average JCT, so one workload (or a mean of 8) is a noisy sample: draw many.

Modes:

- default: ``--draws D`` independent sets of 8 workloads per load (``OUT/workloads-<s>/``
  for the first set, ``OUT/workloads-<s>-d<i>/`` for set i >= 1), each row a fresh draw;
- ``--nested``: the load-``s`` workload ``k`` extends (s > 1) or halves (s < 1) the shared
  workload ``k``, the rest fresh draws: what the artifact's files are if it reused each
  workload's seed at every load (pandas' sample without replacement takes a prefix of one
  seeded permutation, so same seed = nested files); which seeds it used is not published;
- ``--subset``: rows of the shared files only (workload k, k+1, ... in a seeded order);
- ``--uniform``: pooled (application, GPUs, batch), times uniform over the window.

Seeded: the same files every run. The files are derived data, keep them out of the
repository.

Usage::

    python benchmarks/sim/make_scaled_workloads.py ../shared/pollux-traces/workloads OUT [--draws 4]
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

LOADS = (0.5, 1.5, 2.0)
FIELDS = ["name", "time", "application", "num_replicas", "batch_size"]

#: Size category of each application in the artifact's generator (GPU time in Philly).
CATEGORY = {"cifar10": "S", "ncf": "S", "deepspeech2": "M", "bert": "M", "yolov3": "L", "imagenet": "XL"}
#: Applications of each category, chosen between with equal probability.
APPS = {"S": ("cifar10", "ncf"), "M": ("deepspeech2", "bert"), "L": ("yolov3",), "XL": ("imagenet",)}


def read_files(workloads: Path) -> list[list[dict]]:
    """Read the shared workload-1.csv ... workload-8.csv, one list of rows per file."""
    files = []
    for k in range(1, 9):
        with open(workloads / f"workload-{k}.csv", newline="") as f:
            files.append(list(csv.DictReader(f)))
    return files


def tuned_configs(rows: list[dict]) -> dict[str, list[tuple[int, int]]]:
    """Each application's tuned (GPUs, batch) configurations, as seen in the shared rows."""
    out: dict[str, set] = {}
    for r in rows:
        out.setdefault(r["application"], set()).add((int(r["num_replicas"]), int(r["batch_size"])))
    return {app: sorted(c) for app, c in out.items()}


def draw_generator(rows: list[dict], n: int, rng: np.random.Generator) -> list[dict]:
    """``n`` fresh rows of the artifact's generator (unnamed, unsorted).

    (time, category) pairs are resampled jointly from ``rows``; the application and the
    configuration follow the generator's rules (fair coins, uniform configuration).
    """
    configs = tuned_configs(rows)
    picks = rng.integers(0, len(rows), n)
    out = []
    for p in picks.tolist():
        cat = CATEGORY[rows[p]["application"]]
        apps = APPS[cat]
        app = apps[int(rng.integers(0, len(apps)))]
        gpus, batch = configs[app][int(rng.integers(0, len(configs[app])))]
        out.append({"time": int(rows[p]["time"]), "application": app, "num_replicas": gpus, "batch_size": batch})
    return out


def finish(jobs: list[dict]) -> list[dict]:
    """Sorted by submission time (stable), named ``<app>-<index>`` like the artifact's files."""
    jobs = sorted(jobs, key=lambda r: int(r["time"]))
    return [{"name": f"{r['application']}-{i}", **{k: r[k] for k in FIELDS if k != "name"}} for i, r in enumerate(jobs)]


def draw_fresh(files: list[list[dict]], load: float, k: int, d: int) -> list[dict]:
    """Workload ``k`` of draw set ``d`` at ``load``: ``round(160 load)`` independent rows."""
    rows = [r for f in files for r in f]
    rng = np.random.default_rng([1, d, k, int(round(load * 10))])
    return finish(draw_generator(rows, int(round(160 * load)), rng))


def draw_nested(files: list[list[dict]], load: float, k: int, d: int) -> list[dict]:
    """Shared workload ``k`` halved (load < 1, a seeded random half) or extended by fresh rows."""
    rows = [r for f in files for r in f]
    own = files[k - 1]
    rng = np.random.default_rng([2, d, k, int(round(load * 10))])
    n = int(round(160 * load))
    if n <= len(own):
        keep = sorted(rng.permutation(len(own))[:n].tolist())
        return finish([own[i] for i in keep])
    return finish(list(own) + draw_generator(rows, n - len(own), rng))


def draw_subset(files: list[list[dict]], load: float, k: int, d: int = 0) -> list[dict]:
    """Rows of workload ``k``, ``k + 1``, ... (seeded random order within each file)."""
    rng = np.random.default_rng([k, int(round(load * 10))] + ([d] if d else []))
    n = int(round(160 * load))
    chosen: list[dict] = []
    j = k - 1
    while len(chosen) < n:
        rows = files[j % len(files)]
        order = rng.permutation(len(rows))[: n - len(chosen)]
        chosen.extend(rows[i] for i in sorted(order.tolist()))
        j += 1
    return finish(chosen)


def draw_uniform(files: list[list[dict]], load: float, k: int, d: int = 0) -> list[dict]:
    """Pooled (application, GPUs, batch) rows at times uniform over the shared window."""
    rows = [r for f in files for r in f]
    window = max(int(r["time"]) for r in rows)
    rng = np.random.default_rng([k, int(round(load * 10))] + ([d] if d else []))
    n = int(round(160 * load))
    times = np.sort(rng.integers(0, window + 1, n))
    picks = rng.integers(0, len(rows), n)
    return finish([dict(rows[p], time=t) for t, p in zip(times.tolist(), picks.tolist(), strict=True)])


MODES = {"fresh": draw_fresh, "nested": draw_nested, "subset": draw_subset, "uniform": draw_uniform}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", type=Path, help="folder with workload-1.csv ... workload-8.csv")
    ap.add_argument("out", type=Path)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--nested", action="store_true", help="halve / extend each shared workload")
    mode.add_argument("--subset", action="store_true", help="rows of the shared files only (earlier default)")
    mode.add_argument("--uniform", action="store_true", help="pooled jobs at uniform times (earliest stand-ins)")
    ap.add_argument("--draws", type=int, default=1, help="independent sets of 8 workloads per load")
    ap.add_argument("--loads", nargs="*", type=float, default=list(LOADS))
    args = ap.parse_args(argv)
    if args.draws < 1:
        ap.error("--draws must be >= 1")
    name = "nested" if args.nested else "subset" if args.subset else "uniform" if args.uniform else "fresh"
    files = read_files(args.workloads)
    for load in args.loads:
        for d in range(args.draws):
            folder = args.out / (f"workloads-{load:g}" + (f"-d{d}" if d else ""))
            folder.mkdir(parents=True, exist_ok=True)
            for k in range(1, 9):
                jobs = MODES[name](files, load, k, d)
                with open(folder / f"workload-{k}.csv", "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=FIELDS)
                    w.writeheader()
                    w.writerows(jobs)
            print(f"wrote {folder} (8 x {len(jobs)} jobs, {name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
