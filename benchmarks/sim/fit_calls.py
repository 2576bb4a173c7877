"""How a simulation's goodput fits are spread over its rounds, and what they cost.

Usage::

    python benchmarks/sim/fit_calls.py                       # fastsched simulate's default run
    python benchmarks/sim/fit_calls.py '{"workload": "...", "traces": "...", "preset": "osdi21"}'

Counts the ``fit_perf_params`` calls a job makes in each round (the fits of different jobs in
one round are independent, so a batched kernel could run them side by side), their
observations, and the CPU seconds spent in them against the whole ``simulate`` call.
"""

from __future__ import annotations

import collections
import json
import sys
import time

import fastsched.sim.engine.cluster as cluster_module
import fastsched.sim.engine.job as job_module
from fastsched.sim import simulate


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    kwargs = json.loads(argv[0]) if argv else {}
    state = {"round": 0, "fit_s": 0.0, "observations": 0}
    per_round = collections.Counter()
    step, fit = cluster_module.Cluster.step, job_module.fit_perf_params

    def counting_step(self, *a, **k):
        state["round"] += 1
        return step(self, *a, **k)

    def counting_fit(*a, **k):
        per_round[state["round"]] += 1
        state["observations"] += len(a[0])
        t = time.process_time()
        try:
            return fit(*a, **k)
        finally:
            state["fit_s"] += time.process_time() - t

    cluster_module.Cluster.step, job_module.fit_perf_params = counting_step, counting_fit
    try:
        t = time.process_time()
        simulate(**kwargs)
        total = time.process_time() - t
    finally:
        cluster_module.Cluster.step, job_module.fit_perf_params = step, fit
    fits = sum(per_round.values())
    spread = sorted(collections.Counter(per_round.values()).items())
    print(
        json.dumps(
            {
                "rounds": state["round"],
                "rounds_with_fits": len(per_round),
                "fits": fits,
                "mean_observations": state["observations"] / max(fits, 1),
                "fits_per_round_histogram": spread,
                "fit_cpu_s": round(state["fit_s"], 3),
                "simulate_cpu_s": round(total, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
