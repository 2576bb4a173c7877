"""CPU seconds of captured Pollux rounds under two checkouts, alternating (side-by-side medians).

Usage::

    python -m benchmarks.policy.round_time /tmp/rounds-k32 --trees /work/wt/base . [--select 8] [--above 2]
        [--repeat 5] [--alternations 2] [--all]

Rounds as :func:`benchmarks.policy.at_scale.select` picks them (``--all``: every captured round).
Each (round, tree) is a fresh process (that tree's ``fastsched`` on ``PYTHONPATH``) that loads the
kernels with one untimed replay, then times ``--repeat`` replays of the captured round from its
captured state (CPU seconds, ``time.process_time``: all threads); the trees alternate within each
alternation so both see the same load. Prints per round each tree's median and the ratio, then
the median, p95 and maximum over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks.policy.at_scale import select

_CHILD = r"""
import copy, gzip, json, pickle, sys, time
rec = pickle.load(gzip.open(sys.argv[1]))
prob = rec["problem"]
pol = pickle.loads(rec["policy"])
copy.deepcopy(pol).optimize_problem(prob)  # kernels loaded, tables read
times = []
for _ in range(int(sys.argv[2])):
    one = copy.deepcopy(pol)
    c0 = time.process_time()
    one.optimize_problem(prob)
    times.append(time.process_time() - c0)
print(json.dumps(times))
"""


def time_round(tree: Path, path: Path, repeat: int) -> list:
    env = dict(os.environ, PYTHONPATH=str(tree))
    res = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(repeat)], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--trees", nargs=2, type=Path, required=True, help="OLD NEW")
    ap.add_argument("--select", type=int, default=8)
    ap.add_argument("--above", type=int, default=2)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--alternations", type=int, default=2)
    args = ap.parse_args(argv)
    if args.all:
        paths = sorted(args.folder.glob("round-*.pkl.gz"))
    else:
        paths = select(args.folder, args.select, args.above)
    trees = [t.resolve() for t in args.trees]
    print(f"| round | jobs | {trees[0].name} CPU s | {trees[1].name} CPU s | new / old |")
    print("|---|---|---|---|---|")
    med = {t: [] for t in trees}
    for path in paths:
        runs = {t: [] for t in trees}
        for _ in range(args.alternations):
            for t in trees:
                runs[t] += time_round(t, path, args.repeat)
        m = [statistics.median(runs[t]) for t in trees]
        for t, v in zip(trees, m, strict=True):
            med[t].append(v)
        row = json.loads(
            next(x for x in open(path.parent / "rounds.jsonl") if f'"round": {int(path.name[6:11])},' in x)
        )
        print(f"| {row['round']} | {row['jobs']} | {m[0]:.3f} | {m[1]:.3f} | {m[1] / m[0]:.2f} |", flush=True)
    for t in trees:
        v = np.array(med[t])
        print(f"{t.name}: median {np.median(v):.3f} s, p95 {np.percentile(v, 95):.3f} s, max {v.max():.3f} s")


if __name__ == "__main__":
    main()
