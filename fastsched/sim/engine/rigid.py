"""Rigid jobs replayed event by event: a recorded duration on a recorded GPU count, no elasticity.

A job of a production log ran ``duration`` seconds on ``gpus`` GPUs; replayed here it runs for
that duration once started, on that many GPUs, whatever the policy (a job it cannot resize).
Between two events nothing changes, so the loop (:mod:`._rigid_kernels`) jumps from an arrival
or a completion to the next, and under least-attained-service to the next time a running
job's attained GPU-seconds reach its queue's threshold; it never steps rounds.

Semantics (the reference ``tests/sim/engine/naive_rigid.py`` is written from this text):

* **Cluster**: ``nodes`` nodes of ``gpus_per_node`` (G) GPUs. **Placement**: a job of at most
  G GPUs goes on one node, the one with the fewest free GPUs that fit it (lowest index on
  ties: best fit); a bigger job takes ``ceil(gpus / G)`` whole free nodes (the lowest-indexed)
  and holds all their GPUs. A job needing more nodes than the cluster has raises.
* **Events**: all events at one time are applied -- completions, then queue demotions (in
  submission order), then arrivals (in submission order) -- and then the policy decides once.
* ``fifo``: the waiting jobs in submission order; start the first while it fits; the first
  that does not fit blocks the rest (strict FIFO, head-of-line blocking).
* ``sjf``: the same in order of recorded duration (ties: submission order); non-preemptive,
  strict.
* ``backfill``: EASY backfilling as Slurm does it. FIFO; when the head does not fit, it
  reserves the earliest time (the *shadow time*) at which, releasing the running jobs in order
  of their end times (recorded durations are the walltime estimates, and exact), it fits, and
  the nodes best fit picks for it then. The next ``depth`` waiting jobs (Slurm's
  ``bf_max_job_test``, 500 by default there and here), in submission order, are tried: one that
  fits now starts if it ends by the shadow time, or if the nodes it takes now still have room
  at the shadow time beside the reservation (whose room it then takes).
* ``srtf``: preemptive; by remaining recorded work now (ties: submission order).
* ``tiresias`` (``las``): 2D-LAS of Tiresias (Gu et al., NSDI'19): attained service is GPUs
  times seconds held; a job enters queue 0 and moves to the tail of queue ``q + 1`` when its
  attained service reaches ``thresholds[q]``; queues in order, first come first served within
  one (by the time the job entered it). No starvation promotion.
* ``gandiva``: Gandiva's time slicing (Xiao et al., OSDI'18, §3.1), as the round-based
  :class:`~fastsched.sim.policies.gandiva.GandivaPolicy` ranks jobs: a job keeps its GPUs for
  ``quantum`` seconds of progress after it (re)starts (after its restart pause, so that a slice
  always advances it); then it competes with the waiting jobs by time share
  (seconds held over seconds since submission, at least 1; the lowest first, ties: submission
  order). Decisions come at arrivals, completions and slice ends. No GPU sharing or migration.
* Preemptive policies each decision walk the jobs in priority order and admit one while the
  GPUs it would hold fit in what is left of the cluster's; running jobs not admitted are
  preempted (they keep their progress and attained service), then admitted waiting jobs are
  placed in priority order and start if best fit finds room (otherwise they wait).
* **Restart**: a preempted job that starts again holds its GPUs ``restart_s`` seconds before
  it progresses (the simulator's re-scale delay, ``fastsched.sim.engine.job.RESCALE_DELAY``,
  30 s); the first start pays nothing (the recorded duration includes it).
* **Another GPU type**: the duration is the recorded one divided by a speed ratio (``speed``;
  :func:`speed_ratio` gives the catalogue's ratio of peak throughput).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = [
    "RIGID_POLICIES",
    "TIRESIAS_THRESHOLDS",
    "BACKFILL_DEPTH",
    "GANDIVA_QUANTUM",
    "RigidRun",
    "run_rigid",
    "speed_ratio",
]

#: Policies of :func:`run_rigid` (``las`` is another name for ``tiresias``).
RIGID_POLICIES = ("fifo", "sjf", "backfill", "srtf", "tiresias", "las", "gandiva")
#: Tiresias' queue thresholds in GPU-seconds: two queues, split at 16 GPU-hours, as the
#: simulator's round-based :class:`~fastsched.sim.policies.baselines.TiresiasPolicy` does.
TIRESIAS_THRESHOLDS = (3600.0 * 16,)
#: Gandiva's time slice in seconds: the round-based :class:`~fastsched.sim.policies.gandiva.GandivaPolicy`'s.
GANDIVA_QUANTUM = 600
#: Waiting jobs backfilling tries per decision: Slurm's ``bf_max_job_test`` default (slurm.conf).
BACKFILL_DEPTH = 500


class RigidRun(NamedTuple):
    """What :func:`run_rigid` returns: per job (in the order given) and per decision.

    Attributes
    ----------
    first_start, finish : numpy.ndarray
        Seconds, float64.
    restarts : numpy.ndarray
        Starts after the first (int64).
    gpu_seconds : numpy.ndarray
        The job's GPUs times the seconds it held them (restart pauses included).
    times, queued, used_gpus, running : numpy.ndarray
        At each decision: its time, the jobs waiting, the GPUs held and the jobs running after it.
    """

    first_start: np.ndarray
    finish: np.ndarray
    restarts: np.ndarray
    gpu_seconds: np.ndarray
    times: np.ndarray
    queued: np.ndarray
    used_gpus: np.ndarray
    running: np.ndarray


def speed_ratio(recorded_type, cluster_type, precision="bf16", catalog=None) -> float:
    """How many times faster ``cluster_type`` runs a job than ``recorded_type``: the ratio of peaks.

    The stated model: a job's duration scales with the inverse of the GPU's dense peak at
    ``precision`` (the catalogue's datasheet numbers, :mod:`fastsched.catalog.gpus`). Peaks
    overstate real speed-ups of memory- or communication-bound jobs; pass a measured ratio as
    ``speed`` to :func:`run_rigid` where one is known.

    Examples
    --------
    >>> round(speed_ratio("v100", "a100-40gb"), 3)
    2.496
    >>> speed_ratio("t4", "t4")
    1.0
    """
    from fastsched.catalog.gpus import gpu_type

    a = gpu_type(recorded_type, catalog).peak_tflops(precision)
    b = gpu_type(cluster_type, catalog).peak_tflops(precision)
    return float(b / a)


def _column(values, name, dtype):
    try:
        a = np.asarray(values, dtype=dtype)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numbers") from None
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    return a


def run_rigid(
    submit,
    duration,
    gpus,
    *,
    nodes,
    gpus_per_node,
    policy="fifo",
    speed=1.0,
    restart_s=None,
    thresholds=TIRESIAS_THRESHOLDS,
    depth=BACKFILL_DEPTH,
    quantum=GANDIVA_QUANTUM,
    names=None,
) -> RigidRun:
    """Replay rigid jobs under ``policy`` on ``nodes`` x ``gpus_per_node`` GPUs (semantics: the module).

    Parameters
    ----------
    submit, duration : array_like of float
        Submission times and recorded durations (seconds; ``duration >= 0``). Any order.
    gpus : array_like of int
        Recorded GPU counts (>= 1).
    nodes, gpus_per_node : int
    policy : str
        One of :data:`RIGID_POLICIES`. SJF, SRTF and backfilling know the recorded durations
        (the estimator is the recorded duration, exact).
    speed : float or array_like
        Speed ratio of the cluster's GPUs to the recorded ones (per job or one); the duration
        run is ``duration / speed``.
    restart_s : float, optional
        Pause after a restart; default the simulator's re-scale delay (30 s).
    thresholds : sequence of float
        Tiresias' queue thresholds in GPU-seconds, increasing.
    depth : int
        Backfilling: waiting jobs tried per decision.
    quantum : float
        Gandiva: seconds of a time slice (> 0).
    names : sequence of str, optional
        The jobs' names, for error messages (default: their positions).

    Returns
    -------
    RigidRun

    Raises
    ------
    ValueError
        A bad value, naming the field (a job needing more nodes than the cluster has, etc.).

    Examples
    --------
    >>> r = run_rigid([0, 0, 10], [100, 50, 20], [2, 2, 4], nodes=1, gpus_per_node=4, policy="fifo")
    >>> r.first_start.tolist(), r.finish.tolist()
    ([0.0, 0.0, 100.0], [100.0, 50.0, 120.0])
    >>> run_rigid([0, 0, 10], [100, 50, 20], [2, 2, 4], nodes=1, gpus_per_node=4, policy="sjf").finish.tolist()
    [100.0, 50.0, 120.0]
    >>> run_rigid([0, 5], [100, 10], [4, 4], nodes=1, gpus_per_node=4, policy="srtf", restart_s=0).finish.tolist()
    [110.0, 15.0]
    """
    from fastsched._validate import check_int_scalar
    from fastsched.sim.engine._rigid_kernels import BACKFILL, FIFO, GANDIVA, LAS, SJF, SRTF, run_rigid_kernel

    if policy not in RIGID_POLICIES:
        raise ValueError(f"policy must be one of {list(RIGID_POLICIES)} for rigid jobs, got {policy!r}")
    nodes = check_int_scalar("nodes", nodes, low=1)
    gpus_per_node = check_int_scalar("gpus_per_node", gpus_per_node, low=1)
    depth = check_int_scalar("depth", depth, low=0)
    submit = _column(submit, "submit", np.float64)
    duration = _column(duration, "duration", np.float64)
    g = _column(gpus, "gpus", np.float64)
    n = submit.size
    if duration.size != n or g.size != n:
        raise ValueError(f"submit, duration and gpus must have one value per job: {n}, {duration.size}, {g.size}")
    if not np.all(np.isfinite(submit)):
        raise ValueError("submit must be finite")
    if not np.all(np.isfinite(duration) & (duration >= 0)):
        raise ValueError(f"duration must be finite and >= 0 (job {int(np.argmin(np.nan_to_num(duration, nan=-1)))})")
    bad = ~((g >= 1) & (g == np.floor(g)))
    if bad.any():
        j = int(np.argmax(bad))
        raise ValueError(f"gpus must be whole numbers >= 1: job {j if names is None else names[j]} has {g[j]:g}")
    need = g.astype(np.int64)
    k = np.where(need <= gpus_per_node, 1, -(-need // gpus_per_node))
    if n and int(k.max()) > nodes:
        j = int(np.argmax(k))
        raise ValueError(
            f"gpus: job {j if names is None else names[j]} needs {int(need[j])} GPUs, {int(k[j])} whole nodes of {gpus_per_node}; "
            f"the cluster has {nodes} nodes"
        )
    sp = np.broadcast_to(_column(np.atleast_1d(speed), "speed", np.float64), (n,)) if n else np.ones(0)
    if not np.all(np.isfinite(sp) & (sp > 0)):
        raise ValueError("speed must be finite and > 0")
    if restart_s is None:
        from fastsched.sim.engine.job import RESCALE_DELAY

        restart_s = float(RESCALE_DELAY)
    if not (isinstance(restart_s, (int, float)) and math.isfinite(restart_s) and restart_s >= 0):
        raise ValueError(f"restart_s must be a finite number >= 0, got {restart_s!r}")
    if not (isinstance(quantum, (int, float)) and math.isfinite(quantum) and quantum > 0):
        raise ValueError(f"quantum must be a finite number > 0, got {quantum!r}")
    thr = _column(list(thresholds), "thresholds", np.float64)
    if not (np.all(np.isfinite(thr)) and np.all(thr > 0) and np.all(np.diff(thr) > 0)):
        raise ValueError("thresholds must be positive, finite and increasing")
    codes = {"fifo": FIFO, "sjf": SJF, "backfill": BACKFILL, "srtf": SRTF, "tiresias": LAS, "las": LAS}
    code = {**codes, "gandiva": GANDIVA}[policy]
    order = np.argsort(submit, kind="stable")
    work = duration / sp
    first, finish, restarts, att, t, q, u, running = run_rigid_kernel(
        submit[order], work[order], need[order], int(nodes), int(gpus_per_node), code, float(restart_s), thr, int(depth),
        float(quantum),
    )  # fmt: skip
    back = np.empty_like(order)
    back[order] = np.arange(n)
    return RigidRun(first[back], finish[back], restarts[back], att[back], t, q, u, running)
