"""The simulator's two ways into the Pollux policy, timed on the same rounds (issue 25.1).

Usage::

    python -m benchmarks.policy.trusted_entry [--repeats 5] [--preset default|osdi21] [--workload CSV --traces DIR]

Runs one simulation on the trusted entry and, in every round, builds the round's problem both
ways from the same inputs, alternating which goes first: the validated way
(``JobInfo``/``NodeInfo`` dicts, then :func:`~fastsched.policy.build_problem`) and the trusted
way (:class:`~fastsched.policy.problem.RoundRecords`, then
:func:`~fastsched.policy.problem.problem_from_records`). The speedup tables are filled by the
simulation's own round beforehand, so both measure the conversion alone. Checks that the two
problems are equal array for array, and prints per way the CPU seconds summed over the rounds
(median of ``--repeats`` passes per round) and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from fastsched.policy import JobInfo, NodeInfo, build_problem
from fastsched.policy.problem import RoundRecords, problem_from_records
from fastsched.sim import simulate
from fastsched.sim.policies import pollux as sp

FIELDS = ("job_res", "node_res", "max_rep", "min_rep", "pinned", "base_off", "base_node", "base_cnt", "scale", "table")


def _same(a, b) -> bool:
    if a.job_keys != b.job_keys or a.node_keys != b.node_keys or a.rtypes != b.rtypes:
        return False
    if (a.penalty is None) != (b.penalty is None):
        return False
    pen = a.penalty is None or np.array_equal(a.penalty, b.penalty, equal_nan=True)
    return pen and all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--preset", default="default")
    ap.add_argument("--workload")
    ap.add_argument("--traces")
    args = ap.parse_args(argv)
    cpu = {"validated": 0.0, "trusted": 0.0}
    rounds = [0, 0]  # rounds, rounds with equal problems
    original = sp.PolluxSimPolicy._optimize_records

    def timed(self, keys, fns, order, max_reps, preemptible, penalty, nodes, allocations):
        result = original(self, keys, fns, order, max_reps, preemptible, penalty, nodes, allocations)

        def validated():
            infos = {
                k: JobInfo({sp.GPU: 1}, fns[j], order[j], 0, max_reps[j], preemptible[j],
                           None if penalty is None else float(penalty[j]))
                for j, k in enumerate(keys)
            }  # fmt: skip
            node_infos = {k: NodeInfo({sp.GPU: g}, preemptible=False) for k, g in nodes.items()}
            template = next(iter(node_infos.values())) if self.placeholders else None
            return build_problem(infos, node_infos, allocations, template)

        def trusted():
            node_res = np.fromiter(nodes.values(), dtype=np.int64, count=len(nodes)).reshape(-1, 1)
            rec = RoundRecords(keys, fns, order, [0] * len(keys), max_reps, preemptible, penalty, [sp.GPU],
                               np.ones((len(keys), 1), np.int64), list(nodes), [False] * len(nodes), node_res,
                               node_res[0] if self.placeholders else None, allocations)  # fmt: skip
            return problem_from_records(rec)

        ways = {"validated": validated, "trusted": trusted}
        got, runs = {}, {name: [] for name in ways}
        for rep in range(args.repeats):
            for name in list(ways) if rep % 2 == 0 else list(ways)[::-1]:
                c = time.process_time()
                got[name] = ways[name]()
                runs[name].append(time.process_time() - c)
        for name, values in runs.items():
            cpu[name] += statistics.median(values)
        rounds[0] += 1
        rounds[1] += _same(got["validated"], got["trusted"])
        return result

    sp.PolluxSimPolicy._optimize_records = timed
    kw = {"preset": args.preset}
    if args.workload:
        kw.update(workload=args.workload, traces=args.traces)
    simulate(**kw)
    print(
        json.dumps(
            {
                "rounds": rounds[0],
                "equal_problems": rounds[1],
                "cpu_s": cpu,
                "ratio": cpu["trusted"] / cpu["validated"] if cpu["validated"] else None,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
