"""One Sia policy round on the heterogeneous 64-GPU cluster with 160 active jobs (needs ../shared/sia-traces).

Every job has run on one GPU type (1, 2 or 4 GPUs, 10 minutes), so its goodput matrix mixes
own fits and bootstrap estimates. Each timed round first perturbs every job's gradient
statistics, so the speedup tables are refilled as in a simulation. Prints the median and
p95 of the rounds and of the integer program alone (DP vs HiGHS on the same problem).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from fastsched.sim.engine.hetero_job import HeteroJob, load_hetero_applications
from fastsched.sim.inputs.cluster_spec import parse_cluster
from fastsched.sim.policies import SiaPolicy, _assign

SIA = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "sia-traces"


def main(rounds=15, num_jobs=160):
    spec = parse_cluster("6xaws,3xrtx,2xdgx-ext")
    apps = load_hetero_applications(
        SIA / "traces", spec.types, ["bert", "cifar10", "deepspeech2", "imagenet", "yolov3"]
    )
    names = list(apps)
    rng = np.random.default_rng(0)
    pol = SiaPolicy()
    pol.bind_cluster(spec, 60)
    jobs = []
    for i in range(num_jobs):
        app = apps[names[i % len(names)]]
        job = HeteroJob(f"{app.name}-{i}", app, 0)
        job.set_gpu_type(spec.types[i % 3])
        job.reallocate([int(rng.choice([1, 2, 4]))])
        job.step(600)
        jobs.append(job)
    pol.optimize(3600, jobs, spec.nodes(), {})  # warm-up (compilation, first fits)
    times, solve = [], []
    orig = _assign.solve_assignment
    captured = []

    def timed_solve(problem, method="auto"):
        t0 = time.perf_counter()
        out = orig(problem, method)
        solve.append(time.perf_counter() - t0)
        captured.append(problem)
        return out

    _assign.solve_assignment = timed_solve
    import fastsched.sim.policies.sia as sia_mod

    sia_mod.solve_assignment = timed_solve
    for r in range(rounds):
        for job in jobs:  # new gradient statistics: speedup tables are rebuilt, as every round in a simulation
            sqr, var = job.grad_params
            job.grad_params = (sqr, var * (1 + 1e-6 * (r + 1)))
        t0 = time.perf_counter()
        pol.optimize(3600 + 60 * r, jobs, spec.nodes(), {})
        times.append(time.perf_counter() - t0)
    sia_mod.solve_assignment = orig
    milp = []
    for p in captured[:5]:
        t0 = time.perf_counter()
        orig(p, "milp")
        milp.append(time.perf_counter() - t0)
    ms = 1000
    print(
        f"sia round, {num_jobs} jobs, 64 GPUs: median {np.median(times) * ms:.1f} ms, p95 {np.percentile(times, 95) * ms:.1f} ms"
    )
    print(
        f"  integer program (DP): median {np.median(solve) * ms:.1f} ms; HiGHS on the same problems: median {np.median(milp) * ms:.1f} ms"
    )
    print(f"  candidates per round: {captured[0].cost.size}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
