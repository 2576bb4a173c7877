"""A job's completion time alone on a share of the cluster (the denominator of finish-time fairness).

The isolated run of a job is computed from the simulator's true model of it, not by simulating
it again: the job starts at the first scheduling round at or after its submission (rounds fall
on multiples of the interval, as in :class:`~fastsched.sim.engine.cluster.Cluster`), pauses its start
delay once (``rescale_delay``; no restart afterwards), then trains every epoch ``e`` at the best
true goodput it could reach on at most ``k`` GPUs of one type:

* configurations: ``r <= k`` GPUs packed on as few nodes as possible (full nodes, then the
  remainder), ``r`` within the application's limits (``max_replicas``, ``max_batch_size //
  min_local_bsz``); a fixed GPU count (rigid jobs, Gavel) allows that count only;
* batch: a fixed total batch size if the job has one (``target_batch_size``), else the best of
  the candidates of :func:`batch_candidates` (a geometric grid between ``init_batch_size`` and
  ``max_batch_size``, and the batches filling every GPU's memory); a total batch is split into
  per-GPU batches and accumulation steps by the simulator's own rule
  (:func:`~fastsched.sim.truth._rules.fixed_batch_config`) against the placement's memory limit on
  the type;
* goodput: optimizer steps per second of that configuration (the true traces,
  :func:`~fastsched.sim.truth.per_type.fixed_batch_throughput`) times the statistical gain of its batch in
  epoch ``e`` (``efficiency * B / init_batch_size``, :func:`fastsched.goodput._formulas.efficiency`
  on the application's gradient statistics), divided by the job's ``slowdown``;
* epoch ``e`` takes ``(progress(e + 1) - progress(e)) / goodput``; the run ends after the
  application's last epoch.

This is the oracle of what the job could do alone: it knows its true throughput from the first
second (the simulated job first runs on one GPU and learns its scaling) and never restarts
after its first start; epoch crossings are not rounded to whole seconds. :func:`isolated_jcts`
turns these times into the Sia study's isolated JCT on a fractional share (see its docstring).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from fastsched import _validate as V
from fastsched.sim.results.metrics import job_contention
from fastsched.sim.truth._rules import epoch_work, gain_row, packed_placement
from fastsched.sim.truth.per_type import HeteroApplication, fixed_batch_throughput

__all__ = ["packed_placement", "batch_candidates", "training_seconds", "isolated_jcts", "result_isolated_jcts"]

#: Geometric grid points of total batch sizes tried for a job free to choose its batch size.
BATCH_GRID_POINTS = 33


@functools.lru_cache(maxsize=256)
def _geometric_grid(lo, hi, points) -> tuple:
    return tuple(np.unique(np.round(np.geomspace(lo, hi, points)).astype(np.int64)).tolist())


def batch_candidates(app, num_replicas, max_local_bsz) -> list:
    """Total batch sizes tried for a job free to choose its batch size on ``num_replicas`` GPUs.

    The points of a geometric grid of :data:`BATCH_GRID_POINTS` between ``init_batch_size`` and
    ``max_batch_size`` from ``lo = max(init_batch_size, num_replicas * min_local_bsz)`` up, ``lo``
    itself, and the batches that fill every GPU
    to ``max_local_bsz`` with ``0, 1, 2, ...`` accumulation steps (where step time per sample
    is usually lowest; a grid alone misses them).

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> c = batch_candidates(app, 4, 256)
    >>> c[0] == max(app.init_batch_size, 4 * app.min_local_bsz), c[-1] == app.max_batch_size, 1024 in c
    (True, True, True)
    """
    lo, hi = max(int(app.init_batch_size), num_replicas * int(app.min_local_bsz)), int(app.max_batch_size)
    if lo > hi:
        return []
    grid = set(
        _geometric_grid(int(app.init_batch_size), hi, BATCH_GRID_POINTS)
    )  # one grid for every GPU count: fewer gains
    grid.add(lo)
    full = num_replicas * int(max_local_bsz)
    grid.update(range(full, hi + 1, full))
    return sorted(b for b in grid if lo <= b <= hi)


def training_seconds(
    happ, gpu_type, gpus_per_node, max_gpus, *, batch_size=None, num_replicas=None, gains=None
) -> np.ndarray:
    """Seconds of training alone on at most ``k`` GPUs of one type, for ``k = 1 .. max_gpus``.

    Parameters
    ----------
    happ : Application or HeteroApplication
        The job's true model (a plain application: one unnamed type, ``gpu_type`` ignored).
    gpu_type : str or None
    gpus_per_node : int
        GPUs per node of the type.
    max_gpus : int
        Largest share asked for (at most the type's GPUs).
    batch_size : int, optional
        Fixed total batch size (``None``: the best of :func:`batch_candidates`, per epoch).
    num_replicas : int, optional
        Fixed GPU count: entries below it are infinite, entries at or above it equal.
    gains : dict, optional
        Cache of statistical gain per epoch by total batch size, shared by calls for the same
        application (the gradient statistics do not depend on the GPU type).

    Returns
    -------
    numpy.ndarray
        ``(max_gpus,)`` float64, entry ``k - 1`` for a share of ``k`` GPUs; ``inf`` where no
        configuration fits. Without the job's slowdown and start delay.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> t = training_seconds(builtin_applications()["cifar10"], None, 4, 8)
    >>> bool(np.all(np.diff(t) <= 0)), bool(t[3] < t[0] / 2)  # more GPUs never slower; cifar10 scales
    (True, True)
    """
    gpus_per_node = V.check_int_scalar("gpus_per_node", gpus_per_node, low=1)
    max_gpus = V.check_int_scalar("max_gpus", max_gpus, low=1)
    hetero = isinstance(happ, HeteroApplication)
    app = happ.apps[gpu_type] if hetero else happ
    limit = max_gpus
    if app.max_replicas is not None:
        limit = min(limit, int(app.max_replicas))
    if batch_size is None:
        limit = min(limit, int(app.max_batch_size) // int(app.min_local_bsz))
    candidates = (
        range(1, limit + 1) if num_replicas is None else [int(num_replicas)] if num_replicas <= max_gpus else []
    )
    last = int(happ.completion_epoch(happ.init_batch_size if batch_size is None else batch_size))
    work = epoch_work(happ, last)
    gains = {} if gains is None else gains  # batch size -> gain per epoch
    best = np.zeros((int(max_gpus), work.shape[0]), dtype=np.float64)  # best goodput on exactly r GPUs
    for r in candidates:
        placement = packed_placement(r, gpus_per_node)
        cap = happ.max_local_bsz_at(gpu_type, placement) if hetero else None
        if batch_size is not None:
            batches = [int(batch_size)]
        else:
            batches = batch_candidates(app, r, app.max_local_bsz if cap is None else min(cap, app.max_local_bsz))
        for b in batches:
            steps = fixed_batch_throughput(app, placement, b, cap)
            if steps > 0.0:
                gain = gains.get(b)
                if gain is None:
                    gain = gains[b] = gain_row(happ, b, work.shape[0])
                np.maximum(best[r - 1], gain * steps, out=best[r - 1])
    best = np.maximum.accumulate(best, axis=0)  # a share of k GPUs allows any r <= k
    with np.errstate(divide="ignore"):
        return (work / best).sum(axis=1)


def _share_jct(curve, share, fixed_replicas, delay, slowdown) -> float:
    """Start delay plus training on a fractional ``share`` of GPUs, from the training times per integer share."""

    def run(k):
        return delay + slowdown * curve[min(max(k, 1), curve.shape[0]) - 1]

    if fixed_replicas is not None:  # rigid: on its own count, time-shared when above the share
        return run(fixed_replicas) * max(fixed_replicas / share, 1.0)
    if share < 1.0:
        return run(1) / share
    lo, hi = math.floor(share), math.ceil(share)
    return run(lo) + (run(hi) - run(lo)) * (share - lo) if hi > lo else run(lo)


def _first_round(submission, interval) -> int:
    return max(int(math.ceil(submission / interval)), 1) * int(interval)


def isolated_jcts(jobs, shares, gpus_by_type, gpus_per_node, interval) -> np.ndarray:
    """JCT of each job alone on a share of ``shares[i]`` GPUs (the Sia study's isolated run).

    Per GPU type with ``G_t`` GPUs, the isolated JCT at an integer share ``k`` (capped at
    ``G_t``) is the wait for the first round, the start delay and :func:`training_seconds` times
    the job's slowdown. A fractional share ``v >= 1`` interpolates linearly between
    ``floor(v)`` and ``ceil(v)``; below one GPU the one-GPU run stretches by ``1 / v``; a job
    with a fixed GPU count ``n`` runs on ``n`` GPUs, stretched by ``n / v`` when ``n > v`` (time
    sharing). The types are averaged weighted by their GPUs, over the types the job fits on.

    Parameters
    ----------
    jobs : list of Job or HeteroJob
        The simulator's jobs (their applications, fixed batch size / GPU count, delays).
    shares : array_like
        GPUs of each job's share (``G / N``).
    gpus_by_type, gpus_per_node : dict
        Per GPU type (``None`` for a plain cluster): GPUs, GPUs per node.
    interval : int
        Scheduling interval (rounds at its multiples).

    Returns
    -------
    numpy.ndarray
        Seconds; ``inf`` for a job that fits on no type.

    Examples
    --------
    A cifar10 job alone on 4 GPUs of a 4-GPU node, submitted at 30 s: it waits 30 s for the
    round at 60 s, pauses 30 s, then trains.

    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
    >>> app = builtin_applications()["cifar10"]
    >>> job = Job("a", app, 30)
    >>> jct = isolated_jcts([job], [4.0], {None: 4}, {None: 4}, 60)
    >>> bool(jct[0] == 60 + training_seconds(app, None, 4, 4)[3])
    True
    """
    shares = np.asarray(shares, dtype=np.float64)
    if shares.shape != (len(jobs),):
        raise ValueError(f"shares must have one entry per job ({len(jobs)}), got shape {shares.shape}")
    if np.any(~(shares > 0)) or np.any(~np.isfinite(shares)):
        raise ValueError("shares must be positive and finite")
    interval = V.check_int_scalar("interval", interval, low=1)
    apps = [getattr(job, "hetero_application", None) or job.application for job in jobs]
    need: dict = {}  # per curve, the largest share asked of it (no more GPUs are evaluated)
    for i, job in enumerate(jobs):
        k = job.target_num_replicas or max(math.ceil(shares[i]), 1)
        for t, g in gpus_by_type.items():
            key = (id(apps[i]), t, job.target_batch_size, job.target_num_replicas)
            need[key] = max(need.get(key, 0), min(int(k), int(g)))
    curves: dict = {}
    gains: dict = {}
    out = np.empty(len(jobs), dtype=np.float64)
    for i, job in enumerate(jobs):
        happ = apps[i]
        v = float(shares[i])
        fixed_r = job.target_num_replicas
        wait = _first_round(job.submission_time, interval) - job.submission_time
        slow = float(getattr(job, "slowdown", 1.0))
        num = den = 0.0
        for t, g in gpus_by_type.items():
            key = (id(happ), t, job.target_batch_size, fixed_r)
            curve = curves.get(key)
            if curve is None:
                curve = curves[key] = training_seconds(
                    happ,
                    t,
                    gpus_per_node[t],
                    need[key],
                    batch_size=job.target_batch_size,
                    num_replicas=fixed_r,
                    gains=gains.setdefault(id(happ), {}),
                )

            jct = _share_jct(curve, v, fixed_r, job.rescale_delay, slow)
            if math.isfinite(jct):
                num += g * (wait + jct)
                den += g
        out[i] = num / den if den else math.inf
    return out


def result_isolated_jcts(jobs, result, spec=None) -> np.ndarray:
    """:func:`isolated_jcts` of a finished simulation, per job in workload order (NaN if not completed).

    Each completed job's share is ``G / N``: ``G`` the cluster's mean GPUs over the rounds, ``N``
    its mean contention (:func:`~fastsched.sim.results.metrics.job_contention`).

    Parameters
    ----------
    jobs : list of Job
        The simulation's jobs, in the order of ``result.jobs``.
    result : SimulationResult
    spec : ClusterSpec, optional
        The typed cluster (``None``: ``result.config``'s ``nodes x gpus`` of one type).

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
    >>> r = simulate([WorkloadJob("a", 0, "cifar10", 2, 256)], policy="tiresias", nodes=1, gpus=4)
    >>> jobs = [Job("a", builtin_applications()["cifar10"], 0, target_num_replicas=2, target_batch_size=256)]
    >>> iso = result_isolated_jcts(jobs, r)
    >>> bool(np.array_equal(iso, r.isolated_jct))  # what simulate() stores
    True
    >>> bool(abs(iso[0] - r.jobs[0].jct) < 5)  # alone on the cluster: the run itself, up to rounding
    True
    """
    out = np.full(len(jobs), np.nan)
    done = [i for i, j in enumerate(result.jobs) if j.completion_time is not None]
    if not done or not result.times.size:
        return out
    recs = [result.jobs[i] for i in done]
    n = job_contention(
        result.times, result.active_jobs, [j.submission_time for j in recs], [j.completion_time for j in recs]
    )
    gpus = float(np.mean(result.total_gpus))
    if spec is not None:
        by_type, gpn = dict(spec.gpus_by_type), dict(spec.gpus_per_node_by_type)
    else:
        per_node = int(result.config["gpus"])
        by_type, gpn = {None: int(np.max(result.total_gpus))}, {None: per_node}
    interval = int(result.config.get("interval", 60))
    out[done] = isolated_jcts([jobs[i] for i in done], gpus / n, by_type, gpn, interval)
    return out
