"""A policy's belief about a job's goodput on each GPU type: its own fits, or Sia's bootstrap.

A job's observed profile per GPU type (:class:`~fastsched.sim.engine.hetero_job.HeteroJob`) gives one
fitted model per type it has run on. On a type it has not run on, a policy estimates its
goodput from a type it has run on (the first in the application's type order): the same GPU
count laid out on that type's nodes (:func:`bootstrap_nodes`), times the ratio of the two
types' one-GPU throughputs at their largest per-GPU batch size (Sia's bootstrap). This is
what the policies believe, never what the simulator runs (:mod:`fastsched.sim.truth.per_type`).
"""

from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np

from fastsched.goodput._types import GoodputParams

__all__ = ["GoodputSource", "bootstrap_nodes", "goodput_source", "requested_batch"]


def bootstrap_nodes(num_replicas, gpus_per_node):
    """Nodes that ``num_replicas`` GPUs take when packed on nodes of ``gpus_per_node`` (Sia's bootstrap layout).

    Examples
    --------
    >>> import numpy as np
    >>> bootstrap_nodes(np.array([1, 4, 5, 9]), 4).tolist()
    [1, 1, 2, 3]
    """
    reps = np.asarray(num_replicas, dtype=np.int64)
    return np.minimum(np.maximum(-(-reps // int(gpus_per_node)), 1), reps)


class GoodputSource(NamedTuple):
    """The fitted model behind a job's goodput on a GPU type (see :func:`goodput_source`).

    Attributes
    ----------
    params : GoodputParams
        The model as the kernels take it: ``perf`` fitted on ``gpu_type``'s observations, the
        job's gradient statistics (hardware-independent) and initial batch size, and the grid
        search on ``gpu_type`` (max batch size, min and max per-GPU batch; with accumulation).
    gpu_type : str or None
        The type whose fit is used (``None``: the merged fit of an unaware job).
    ratio : float
        Bootstrap factor (1 for the job's own fit on the asked type).

    Examples
    --------
    A job that has only run on type ``a`` draws on its ``a`` fit for type ``b``:

    >>> from fastsched.sim.engine import hetero_job as hetero
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> job = hetero.HeteroJob("j", hetero.HeteroApplication({"a": app, "b": app}), 0)
    >>> job.set_gpu_type("a"); job.reallocate([1]); job.step(300)
    >>> src = goodput_source(job, "b")
    >>> src.gpu_type, src.ratio
    ('a', 1.0)
    """

    params: GoodputParams
    gpu_type: str | None
    ratio: float


def goodput_source(job, gpu_type, fits=None, *, max_batch_size=None, rate_rule="largest-batch"):
    """Where ``job``'s goodput on ``gpu_type`` comes from, as a :class:`GoodputSource`.

    The job's own fit on ``gpu_type`` if it has run there, else its fit on the first other
    type (in the application's order) it has run on with the bootstrap ratio of one-GPU
    throughputs (by ``rate_rule``, see
    :func:`~fastsched.sim.truth.per_type.one_gpu_throughput`); an unaware job's merged fit.
    ``None`` if the job has never run. ``fits`` (a dict) memoises the per-type models across
    calls for the same job within one round.

    The grid search's largest total batch is the job's fixed batch size if it has one, else
    ``max_batch_size`` if given (clipped to the application's initial and largest batch sizes:
    the estimate never looks beyond what the job can train), else the application's largest.

    Examples
    --------
    >>> from fastsched.sim.engine import hetero_job as hetero
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> job = hetero.HeteroJob("j", hetero.HeteroApplication({"a": builtin_applications()["cifar10"]}), 0)
    >>> goodput_source(job, "a") is None
    True
    >>> job.set_gpu_type("a"); job.reallocate([1]); job.step(300)
    >>> src = goodput_source(job, "a")
    >>> src.gpu_type, src.ratio
    ('a', 1.0)
    """
    if job.unaware:
        order = [None]
    else:
        order = [gpu_type] + [t for t in job.hetero_application.types if t != gpu_type]
    fits = {} if fits is None else fits
    for src in order:
        hit = fits.get((src, max_batch_size))
        if hit is None:
            ctx = job._on(src) if src is not None else contextlib.nullcontext()
            with ctx:
                if not job.profile:
                    fits[(src, max_batch_size)] = False
                    continue
                app = job.application
                max_bsz = job.target_batch_size
                if max_bsz is None:
                    max_bsz = app.max_batch_size
                    if max_batch_size is not None:
                        max_bsz = min(max(max_batch_size, app.init_batch_size), app.max_batch_size)
                sqr, var = job.grad_params
                perf = np.array(job.perf_params, dtype=np.float64)
                perf.flags.writeable = False
                hit = fits[(src, max_batch_size)] = GoodputParams(
                    perf,
                    float(sqr),
                    float(var),
                    float(app.init_batch_size),
                    float(max_bsz),
                    float(app.min_local_bsz),
                    float(app.max_local_bsz),
                    True,
                )
        if hit is False:
            continue
        ratio = 1.0 if src in (None, gpu_type) else job.hetero_application.throughput_ratio(gpu_type, src, rate_rule)
        return GoodputSource(hit, src, ratio)
    return None


def requested_batch(policy, job) -> int:
    """Return the total batch size ``job``'s workload row requests, as ``policy`` recorded it.

    :meth:`~fastsched.sim.policies.base.SimPolicy.job_kwargs` records every row (as
    :func:`~fastsched.sim.simulate` calls it); a job built another way has no request, and a
    policy whose estimate depends on it must not fall back silently.

    Raises
    ------
    ValueError
        If the job's row was not recorded.

    Examples
    --------
    >>> from fastsched.sim.policies import SiaPolicy
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
    >>> pol, app = SiaPolicy(), builtin_applications()["cifar10"]
    >>> job = Job("a", app, 0, **pol.job_kwargs(WorkloadJob("a", 0, "cifar10", 2, 512), app))
    >>> requested_batch(pol, job)
    512
    """
    row = policy.__dict__.get("_requests", {}).get(job.name)
    if row is None:
        raise ValueError(
            f"job {job.name!r}: its workload row's batch size is unknown (estimate_batch='requested' needs it); "
            "build the jobs through the policy's job_kwargs, as simulate() does"
        )
    return int(row[1])
