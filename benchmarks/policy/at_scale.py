"""Pollux's captured rounds at scale against an independent upper bound (:mod:`benchmarks.policy.bound`).

Usage::

    python -m benchmarks.policy.at_scale /tmp/rounds-k8 [/tmp/rounds-k32 ...] [--select 8] [--above 2]
        [--modes osdi21 sum] [--fresh] [--repeat 3] [--tree DIR] [--out rows.jsonl]

For each folder written by :mod:`benchmarks.policy.capture`, ``--select`` captured rounds with
fewer jobs than GPUs (but at least a quarter as many; spread over that range, see :func:`select`)
and the ``--above`` busiest with more jobs than GPUs. Each round is replayed with this
checkout's policy from the captured state (its warm start as in the run; ``--fresh``: a new
policy with the same settings and no warm start; ``--tree``: another checkout's policy, in a
subprocess), under the objective of the run (``osdi21``: the power mean p = -1 with the round's
restart penalty) and AdaptDL's sum with the same penalty (``sum``). Every allocation is checked
feasible and scored by the plain formula of :mod:`benchmarks.policy.bound`, then divided by the
relaxation's bound; the relaxation packed on the nodes gives a feasible lower bound on the
optimum. CPU seconds: the median of ``--repeat`` replays.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import pickle
import statistics
import time
from pathlib import Path

import numpy as np

from benchmarks.policy import bound as B


def load(path: Path) -> dict:
    with gzip.open(path, "rb") as f:
        return pickle.load(f)


def load_k(path: Path):
    """Return the scale ``k`` of a captured round."""
    return load(path).get("k")


def select(folder: Path, n_below: int, n_above: int) -> list[Path]:
    """Pick captured rounds: ``n_below`` with fewer jobs than GPUs, and the ``n_above`` busiest with more.

    The rounds below the GPU count are spread evenly over their range of job counts (from a
    quarter of the GPU count up), so both the moderately and the nearly full cluster are there.
    """
    rows = [json.loads(x) for x in open(folder / "rounds.jsonl")]
    cap = [r for r in rows if r["captured"]]
    below = sorted((r for r in cap if 4 * r["jobs"] >= r["gpus"] > r["jobs"]), key=lambda r: (r["jobs"], r["round"]))
    if len(below) > n_below:
        at = np.linspace(0, len(below) - 1, n_below).round().astype(int)
        below = [below[i] for i in np.unique(at)]
    above = sorted((r for r in cap if r["jobs"] >= r["gpus"]), key=lambda r: -r["jobs"])[:n_above]
    return [folder / f"round-{r['round']:05d}.pkl.gz" for r in sorted(below + above, key=lambda r: r["round"])]


def policy_for(rec: dict, mode_name: str, fresh: bool):
    """Return the captured policy (or a fresh one with its settings) under the objective ``mode_name``."""
    from fastsched.policy import PolluxPolicy

    pol = pickle.loads(rec["policy"])
    if fresh:
        new = PolluxPolicy(seed=pol.seed, restart_penalty=pol.restart_penalty, p=pol.p, power_shift=pol.power_shift)
        new._round = pol._round
        pol = new
    if mode_name == "sum":
        pol.p = None
        pol._prev = None  # the captured population was scored under the run's objective
    return pol


def mode_of(pol):
    if pol.p is None:
        return B.SUM, 1.0
    if pol.p == 0.0:
        return B.GEOMETRIC, 0.0
    return (B.POWER_SHIFTED if pol.power_shift else B.POWER), float(pol.p)


_REPLAY = r"""
import copy, gzip, json, pickle, sys, time
rec = pickle.load(gzip.open(sys.argv[1]))
prob = rec["problem"]
pol = pickle.loads(rec["policy"])
if sys.argv[2] == "sum":
    pol.p = None
    pol._prev = None
if sys.argv[3] == "1":
    from fastsched.policy import PolluxPolicy
    new = PolluxPolicy(seed=pol.seed, restart_penalty=pol.restart_penalty, p=pol.p, power_shift=pol.power_shift)
    new._round = pol._round
    pol = new
times = []
for _ in range(int(sys.argv[4])):
    one = copy.deepcopy(pol)
    c0 = time.process_time()
    allocs, _ = one.optimize_problem(prob)
    times.append(time.process_time() - c0)
print(json.dumps({"allocs": [[k, v] for k, v in allocs.items()], "times": times,
                  "generations": one.last_stats.get("generations")}))
"""


def replay_in(tree: Path, path: Path, mode_name: str, fresh: bool, repeat: int):
    """Replay a captured round with another checkout's policy (a subprocess): allocations, CPU s, generations."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(tree))
    args = [sys.executable, "-c", _REPLAY, str(path), mode_name, "1" if fresh else "0", str(repeat)]
    res = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tree, check=True)
    out = json.loads(res.stdout.strip().splitlines()[-1])
    return {k: v for k, v in out["allocs"]}, out["times"], out["generations"]


def evaluate(path: Path, mode_name: str, fresh: bool, repeat: int, tree: Path | None = None) -> dict:
    rec = load(path)
    prob = rec["problem"]
    pol0 = policy_for(rec, mode_name, fresh)
    penalty = prob.penalties(pol0.restart_penalty)
    mode, p = mode_of(pol0)
    times, allocs = [], None
    if tree is not None:
        allocs, times, generations = replay_in(tree, path, mode_name, fresh, repeat)
    for _ in range(repeat if tree is None else 0):
        pol = copy.deepcopy(pol0)
        c0 = time.process_time()
        allocs, _ = pol.optimize_problem(prob)
        times.append(time.process_time() - c0)
        generations = pol.last_stats.get("generations")
    state = B.dense_allocation(prob, allocs)
    errors = B.check_feasible(prob, state)
    got = B.score(prob, state, penalty, mode, p)
    rel = B.relax(prob, penalty, mode, p)
    packed = B.pack(prob, rel)
    perrors = B.check_feasible(prob, packed)
    low = B.score(prob, packed, penalty, mode, p)
    reps = state.sum(axis=1)
    base = B.base_dense(prob)
    moved = int(np.sum(np.any(state != base, axis=1) & ((reps > 0) | (base.sum(axis=1) > 0))))
    return {
        "k": rec.get("k"),
        "round": rec["stats"]["round"],
        "mode": mode_name,
        "fresh": fresh,
        "jobs": prob.num_jobs,
        "gpus": int(prob.node_res[: prob.num_real, 0].sum()),
        "pollux": got,
        "bound": rel.bound,
        "packed": low,
        "pct_bound": 100 * got / rel.bound,
        "packed_pct": 100 * low / rel.bound,
        "relax_status": rel.status,
        "relax_s": rel.seconds,
        "cpu_s": statistics.median(times),
        "generations": generations,
        "tree": str(tree) if tree is not None else "here",
        "moved": moved,
        "idle_jobs": int(np.sum(reps == 0)),
        "relax_idle": int(np.sum(packed.sum(axis=1) == 0)),
        "errors": errors[:3] + perrors[:3],
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--select", type=int, default=8, help="captured rounds with fewer jobs than GPUs")
    ap.add_argument("--above", type=int, default=2, help="busiest captured rounds at or above the GPU count")
    ap.add_argument("--modes", nargs="+", default=["osdi21", "sum"], choices=["osdi21", "sum"])
    ap.add_argument("--fresh", action="store_true", help="a fresh policy (no warm start) instead of the captured one")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--tree", type=Path, help="replay with this checkout's policy (default: this one, in process)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    done = set()
    if args.out and args.out.exists():  # rows already there (an interrupted run) are not redone
        tree = str(args.tree) if args.tree is not None else "here"
        for r in map(json.loads, open(args.out)):
            if r.get("tree", "here") == tree and r.get("fresh") == args.fresh:
                done.add((r["k"], r["round"], r["mode"]))
    out = open(args.out, "a") if args.out else None
    print("| K | round | jobs | GPUs | objective | Pollux % of bound | packed % | moved | idle | CPU s | relax s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for folder in args.folders:
        for path in select(folder, args.select, args.above):
            for mode in args.modes:
                if (load_k(path), int(path.name[6:11]), mode) in done:
                    continue
                r = evaluate(path, mode, args.fresh, args.repeat, args.tree)
                if out:
                    out.write(json.dumps(r) + "\n")
                    out.flush()
                print(
                    f"| {r['k']} | {r['round']} | {r['jobs']} | {r['gpus']} | {mode} | {r['pct_bound']:.2f} | "
                    f"{r['packed_pct']:.2f} | {r['moved']} | {r['idle_jobs']} | {r['cpu_s']:.3f} | "
                    f"{r['relax_s']:.2f} ({r['relax_status']}) |{' ' + str(r['errors']) if r['errors'] else ''}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
