"""The policies' goodput belief for arrays of configurations, as the tests compare against it.

Built from :func:`fastsched.sim.policies._belief.goodput_source` (which model, which bootstrap
ratio) and :class:`fastsched.goodput.GoodputFunction`, one configuration array at a time; the
Sia policy's goodput matrix and a heterogeneous job's bootstrap are checked against it.
"""

from __future__ import annotations

import numpy as np

from fastsched.goodput import GoodputFunction
from fastsched.sim.policies._belief import bootstrap_nodes, goodput_source


def estimate_goodput(job, gpu_type, num_nodes, num_replicas, gpus_per_node):
    """Return the goodput of ``job`` on ``gpu_type`` for arrays of configurations, bootstrapped if unseen.

    From the job's own fit on ``gpu_type`` when it has run there (the best goodput over batch
    sizes up to the application's maximum, or its fixed batch size); otherwise from its fit on
    another type it has run on (the first in the application's type order), at the same
    replica count laid out on that type's nodes, times the ratio of the two types' one-GPU
    throughputs. ``None`` if the job has never run.

    Parameters
    ----------
    job : HeteroJob
    gpu_type : str
    num_nodes, num_replicas : numpy.ndarray of int
        Configurations on ``gpu_type``.
    gpus_per_node : dict of str -> int
        GPUs per node of each type (to lay replicas out on the source type).

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched.sim.engine import hetero_job as hetero
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> job = hetero.HeteroJob("j", hetero.HeteroApplication({"a": app, "b": app}), 0)
    >>> estimate_goodput(job, "b", np.array([1]), np.array([1]), {"a": 4, "b": 4}) is None
    True
    >>> job.set_gpu_type("a"); job.reallocate([1]); job.step(300)
    >>> ga = estimate_goodput(job, "a", np.array([1]), np.array([1]), {"a": 4, "b": 4})
    >>> gb = estimate_goodput(job, "b", np.array([1]), np.array([1]), {"a": 4, "b": 4})
    >>> bool(np.allclose(ga, gb))  # same throughput on both types: ratio 1
    True
    """
    src = goodput_source(job, gpu_type)
    if src is None:
        return None
    nodes = np.asarray(num_nodes, dtype=np.int64)
    reps = np.asarray(num_replicas, dtype=np.int64)
    if src.gpu_type not in (None, gpu_type):
        nodes = bootstrap_nodes(reps, gpus_per_node[src.gpu_type])
    p = src.params
    fn = GoodputFunction(p.perf, (p.grad_sqr, p.grad_var), p.init_bsz)
    goodput, _, _ = fn.optimize(
        nodes,
        reps,
        max_batch_size=p.max_bsz,
        atomic_bsz_range=(p.min_atomic, p.max_atomic),
        accumulation=p.accumulation,
    )
    return np.asarray(goodput, dtype=np.float64) * src.ratio
