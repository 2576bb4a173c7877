"""Scale series helpers: clusters of N nodes x 4 GPUs with J jobs (varied speedups)."""

from __future__ import annotations

import numpy as np

from fastsched.goodput import GoodputFunction, GradParams, PerfParams, SpeedupFunction
from fastsched.policy import JobInfo, NodeInfo

BASE_PERF = (0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
BASE_GRAD = (0.00136, 0.000502)
GPU = "nvidia.com/gpu"


def scale_instance(num_jobs, num_nodes, gpus=4, seed=0, num_models=32):
    """Draw jobs around the seed's test values.

    ``num_models`` distinct speedup functions (a real cluster runs a handful of model types;
    tables are shared per function).
    """
    rng = np.random.RandomState(seed)
    fns = []
    for _ in range(num_models):
        f = np.exp(rng.normal(0.0, 0.3, size=7))
        perf = [p * x for p, x in zip(BASE_PERF[:6], f[:6], strict=False)]
        perf.append(1.0 + (BASE_PERF[6] - 1.0) * f[6])
        grad = [g * x for g, x in zip(BASE_GRAD, np.exp(rng.normal(0.0, 0.5, size=2)), strict=False)]
        init = int(rng.choice([32, 64, 128, 256]))
        fns.append(
            SpeedupFunction(
                GoodputFunction(PerfParams(*perf), GradParams(*grad), init),
                max_batch_size=10 * init,
                atomic_bsz_range=(32, 256),
                accumulation=bool(rng.randint(2)),
            )
        )
    jobs = {
        i: JobInfo({GPU: 1, "pods": 1}, fns[rng.randint(num_models)], i, 0, int(rng.choice([4, 8, 16])))
        for i in range(num_jobs)
    }
    res = {GPU: gpus, "pods": 32}
    nodes = {i: NodeInfo(dict(res), False) for i in range(num_nodes)}
    return jobs, nodes, NodeInfo(dict(res), True)
