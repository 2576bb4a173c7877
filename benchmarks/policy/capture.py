"""Capture full Pollux rounds of Sia's scaling study, to score them offline against a bound.

Usage::

    python -m benchmarks.policy.capture --scale 8 --out /tmp/rounds-k8 [--every 10] [--min-share 0.2]

Runs ``fastsched simulate ../shared/sia-traces/workloads/scale/rate_50 --preset sia --scale K
--policy pollux --cap-replicas`` in this process (the study's setting, as
``benchmarks/sim/scale_study.py`` runs it) with :meth:`PolluxPolicy.optimize_problem` wrapped:
every round's job count, objective and times go to ``rounds.jsonl`` in ``--out``; every
``--every``-th round with at least ``--min-share`` x GPUs jobs is also pickled whole (the
policy's state before the round, so its warm start is replayed exactly, the round's
:class:`~fastsched.policy.Problem`, the allocation and stats it returned) as
``round-<n>.pkl.gz``. :mod:`benchmarks.policy.at_scale` replays and scores them.

The pickles hold arrays and plain data only (speedup tables are already tabulated in the
problem); they are large (a K=32 round: a few MB) and belong outside the repository.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("FASTSCHED_SHARED", ROOT.parent / "shared"))
SIA = SHARED / "sia-traces"
BASE_CLUSTER = "6xaws,3xrtx,2xdgx-ext"


def strip_meta(prob):
    """Return the problem without the caller's dicts that the search does not read (smaller pickles)."""
    import copy

    out = copy.copy(prob)
    out.meta = {"keys": prob.meta.get("keys"), "base_allocations": prob.meta.get("base_allocations")}
    return out


def capture(k: int, out: Path, every: int, min_share: float, max_time: float, quiet: bool = True):
    """Run the K-fold study under Pollux and write its rounds to ``out``; return the summary."""
    from fastsched.policy import PolluxPolicy
    from fastsched.sim import simulate
    from fastsched.sim.inputs.scale import scale_cluster, scale_workload, workload_files

    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "rounds.jsonl", "w")
    orig = PolluxPolicy.optimize_problem
    eligible = [0]

    def hooked(self, prob):
        gpus = int(prob.node_res[: prob.num_real, 0].sum()) if prob.node_res.shape[1] else 0
        keep = prob.num_jobs >= min_share * gpus and prob.num_jobs > 0
        if keep:
            eligible[0] += 1
            keep = eligible[0] % every == 0
        state = pickle.dumps(self) if keep else None
        c0 = time.process_time()
        allocations, desired = orig(self, prob)
        cpu = time.process_time() - c0
        st = self.last_stats
        row = {
            "round": st["round"],
            "jobs": prob.num_jobs,
            "nodes": prob.num_real,
            "gpus": gpus,
            "objective_real": st.get("objective_real"),
            "cpu_s": cpu,
            "total_s": st.get("total_s"),
            "search_s": st.get("search_s"),
            "generations": st.get("generations"),
            "captured": bool(keep),
        }
        log.write(json.dumps(row) + "\n")
        log.flush()
        if keep:
            with gzip.open(out / f"round-{st['round']:05d}.pkl.gz", "wb", compresslevel=3) as f:
                pickle.dump(
                    {"policy": state, "problem": strip_meta(prob), "allocations": allocations, "stats": row, "k": k},
                    f,
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
        return allocations, desired

    PolluxPolicy.optimize_problem = hooked
    try:
        files = workload_files(SIA / "workloads" / "scale" / "rate_50")
        wl = scale_workload(files[:k] if k < len(files) else files, k)
        res = simulate(
            wl,
            traces=SIA / "traces",
            preset="sia",
            policy="pollux",
            cluster=str(scale_cluster(BASE_CLUSTER, k)),
            cap_replicas=True,
            max_time=max_time,
            progress=not quiet,
        )
    finally:
        PolluxPolicy.optimize_problem = orig
        log.close()
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, required=True, help="K: rate_50 merged K times on the cluster x K")
    ap.add_argument("--out", type=Path, required=True, help="folder for rounds.jsonl and the round pickles")
    ap.add_argument("--every", type=int, default=10, help="pickle every n-th eligible round")
    ap.add_argument("--min-share", type=float, default=0.2, help="eligible: at least this many jobs per GPU")
    ap.add_argument("--max-time", type=float, default=10**9, help="stop at this simulated time (s)")
    args = ap.parse_args(argv)
    res = capture(args.scale, args.out, args.every, args.min_share, args.max_time)
    s = res.summary()
    (args.out / "summary.json").write_text(json.dumps(s, default=str) + "\n")
    print(json.dumps({key: s[key] for key in ("jobs", "completed", "avg_jct", "policy_s_p95")}), file=sys.stderr)


if __name__ == "__main__":
    main()
