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
  submission order), then starvation promotions (in submission order), then arrivals (in
  submission order) -- and then the policy decides once.
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
  one (by the time the job entered it). No starvation promotion unless ``starve_limit`` (K) is
  given: Tiresias promotes a job back to the highest-priority queue when it has waited longer
  than STARVELIMIT, K times its execution time (Gu et al., NSDI'19; the rule as the authors'
  simulator applies it, ``SymbioticLab/Tiresias`` ``simulator/run_sim.py``, ``solve_starvation``).
  Since the job arrived or was last promoted, let E be the seconds it has held GPUs (restart
  pauses included, as in its attained service) and W the seconds it has waited in a queue below
  the first. A job waiting there is promoted when W reaches K E: at ``p + (K E - W)`` for a wait
  that began (with its preemption) at ``p``, E and W as of ``p``, unless it restarts first
  (W < K E holds at ``p``, so the promotion is always ahead). It goes to the tail of queue 0,
  and E, W and its attained service for the queues start again from 0 (the GPU-seconds reported
  keep counting). Promotions at one time are applied after the demotions, in submission order.
  The authors' simulator also counts in W the waits in queue 0 after a job has run; checking
  only at its events, it then promotes such a job at the first event after its demotion and
  preemption. Counting the waits below the first queue only keeps every promotion a point in
  time ahead of the decision that preempted the job. A promoted job that restarts is demoted
  again after ``thresholds[0] / gpus`` seconds held; if its restart pause lasted that long, two
  such jobs could swap the GPUs forever without progress, so ``starve_limit`` requires
  ``restart_s < thresholds[0] / gpus`` for every job: a promoted job that keeps its GPUs from
  its restart to its demotion then advances at least ``thresholds[0] / gpus - restart_s``
  seconds. This rules out the swap; it is not a proof that every replay ends. The head of the
  first queue is never preempted, but a job behind it can be: when a job ahead of it leaves the
  queue, jobs between them that admission skipped (they did not fit) may fit now and take its
  GPUs, and it pays the pause again within one promotion. Random searches built to provoke a
  replay that never ends (pauses up to 0.999 of the bound, K down to 0.001) found none.
* ``gandiva``: Gandiva's time slicing (Xiao et al., OSDI'18, §3.1), as the round-based
  :class:`~fastsched.sim.policies.gandiva.GandivaPolicy` ranks jobs: a job keeps its GPUs for
  ``quantum`` seconds of progress after it (re)starts (after its restart pause, so that a slice
  always advances it); then it competes with the waiting jobs by time share
  (seconds held over seconds since submission, at least 1; the lowest first, ties: submission
  order). Decisions come at arrivals, completions and slice ends. No GPU sharing or migration.
* ``themis``: finish-time fairness of Themis (Mahajan et al., NSDI'20, §3): a job's ratio rho is
  its finish time when sharing the cluster over its finish time alone. For a rigid job at its
  recorded GPU count, T_ideal is its run time alone, ``max(work, 1)`` seconds (``work`` the
  recorded duration over ``speed``; at least a second, so that a job of no work has a finite
  ratio), and at a decision at time t, T_shared is estimated as ``(t - submit) + left + pause``:
  ``left`` its work still to do (as SRTF counts it) and ``pause`` the restart pause
  ``restart_s`` if it is waiting and has run before (it would restart), else 0 -- the finish it
  would reach if it ran from now on. ``rho = ((t - submit) + left + pause) / max(work, 1)``.
  *Leases* (Themis' arbiter hands GPUs out for a lease, after which they are offered again): a
  job keeps its GPUs for ``lease`` seconds of progress after it (re)starts, after its restart
  pause, as Gandiva's slice; then it competes with the waiting jobs, the largest rho first
  (ties: submission order). Decisions come at arrivals, completions and lease ends. The default
  lease, :data:`THEMIS_LEASE`, is Gandiva's 600 s slice, so that the two lease-based baselines
  preempt at the same pace (the length Themis' own evaluation used was not checked here).
  *Why an order, not an auction*: at a lease end Themis offers the GPUs to the fraction
  ``1 - f`` of jobs with the largest rho (``f`` the fairness knob), the offered jobs bid, a
  partial-allocation auction picks winners, and GPUs no winner takes go to the other jobs
  (work-conserving leftover allocation). A rigid job's bid has a single point, its recorded GPU
  count (fewer GPUs cannot run it, more do not speed it up), so there is no size or placement
  to trade and the offer's order is what decides: here the bids are granted in rho order
  (largest first; one that does not fit is skipped, as the leftover allocation would), over the
  offered jobs and then, in the same order (a choice), the rest. The auction's own choice among
  the offered jobs (maximising a product of gains, a knapsack when each bid is one point) and
  its hidden payments are not modelled. ``f`` only splits the rho order into the offered prefix
  and the rest; with the leftovers allocated in the same order the outcome does not depend on
  it, so it is not a parameter. On a production log, ``themis`` is this rigid policy; the
  round-based ``ThemisPolicy`` (:mod:`fastsched.sim.policies.themis`, Gavel's formulation,
  with a preset's ``themis`` options) runs on workloads of applications.
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

from typing import NamedTuple

import numpy as np

__all__ = [
    "RIGID_POLICIES",
    "TIRESIAS_THRESHOLDS",
    "BACKFILL_DEPTH",
    "MAX_RIGID_GPUS",
    "GANDIVA_QUANTUM",
    "THEMIS_LEASE",
    "RigidRun",
    "run_rigid",
    "speed_ratio",
]

#: Policies of :func:`run_rigid` (``las`` is another name for ``tiresias``).
RIGID_POLICIES = ("fifo", "sjf", "backfill", "srtf", "tiresias", "las", "gandiva", "themis")
#: Tiresias' queue thresholds in GPU-seconds: two queues, split at 16 GPU-hours, as the
#: simulator's round-based :class:`~fastsched.sim.policies.baselines.TiresiasPolicy` does.
TIRESIAS_THRESHOLDS = (3600.0 * 16,)
#: Gandiva's time slice in seconds: the round-based :class:`~fastsched.sim.policies.gandiva.GandivaPolicy`'s.
GANDIVA_QUANTUM = 600
#: Themis' lease in seconds of progress: Gandiva's slice, so both lease-based baselines preempt at one pace.
THEMIS_LEASE = GANDIVA_QUANTUM
#: Waiting jobs backfilling tries per decision: Slurm's ``bf_max_job_test`` default (slurm.conf).
BACKFILL_DEPTH = 500
#: Most GPUs a replayed cluster may have: the event loop keeps a few int64 arrays per node and
#: per GPU of a node, so a mistyped size fails here, named, not as a MemoryError in the kernel.
MAX_RIGID_GPUS = 10**8


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
    lease=None,
    starve_limit=None,
    names=None,
    notice=None,
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
    lease : float, optional
        Themis: seconds of progress a job keeps its GPUs for (> 0; default :data:`THEMIS_LEASE`).
    starve_limit : float, optional
        Tiresias: promote a waiting job to the first queue once it has waited ``starve_limit``
        times its execution time (> 0; see the module). Default ``None``: no promotion.
    names : sequence of str, optional
        The jobs' names, for error messages (default: their positions).
    notice : callable, optional
        Called with no arguments once every input is checked, just before the event loop runs
        (the command line passes the first-run compile notice, :mod:`fastsched._firstrun`).

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

    Themis: at the lease end (t = 50) the waiting job's ratio, (50 + 50) / 50 = 2, beats the
    running one's, (50 + 50) / 100 = 1; it runs to its end (100), then the first resumes:

    >>> run_rigid([0, 0], [100, 50], [4, 4], nodes=1, gpus_per_node=4, policy="themis", lease=50,
    ...           restart_s=0).finish.tolist()
    [150.0, 100.0]
    """
    from fastsched._validate import check_finite_scalar, check_int_scalar
    from fastsched.sim.engine._rigid_kernels import BACKFILL, FIFO, GANDIVA, LAS, SJF, SRTF, THEMIS, run_rigid_kernel

    if policy not in RIGID_POLICIES:
        raise ValueError(f"policy must be one of {list(RIGID_POLICIES)} for rigid jobs, got {policy!r}")
    nodes = check_int_scalar("nodes", nodes, low=1)
    gpus_per_node = check_int_scalar("gpus_per_node", gpus_per_node, low=1)
    if nodes * gpus_per_node > MAX_RIGID_GPUS:
        raise ValueError(
            f"nodes x gpus_per_node must be at most {MAX_RIGID_GPUS:,} GPUs, got {nodes} x {gpus_per_node}"
        )
    depth = check_int_scalar("depth", depth, low=0)
    submit = _column(submit, "submit", np.float64)
    duration = _column(duration, "duration", np.float64)
    g = _column(gpus, "gpus", np.float64)
    n = submit.size
    if duration.size != n or g.size != n:
        raise ValueError(f"submit, duration and gpus must have one value per job: {n}, {duration.size}, {g.size}")
    if names is not None and len(names) != n:
        raise ValueError(f"names must have one name per job: {n} jobs, {len(names)} names")
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
    sp = _column(np.atleast_1d(speed), "speed", np.float64)
    if sp.size not in (1, n):
        raise ValueError(f"speed must be one ratio or one per job ({n}), got {sp.size}")
    sp = np.broadcast_to(sp, (n,))
    if not np.all(np.isfinite(sp) & (sp > 0)):
        raise ValueError("speed must be finite and > 0")
    if restart_s is None:
        from fastsched.sim.engine.job import RESCALE_DELAY

        restart_s = float(RESCALE_DELAY)
    restart_s = check_finite_scalar("restart_s", restart_s, low=0.0)
    quantum = check_finite_scalar("quantum", quantum, low=0.0, low_open=True)
    if lease is not None and policy != "themis":
        raise ValueError(f"lease is Themis' (policy='themis'), not for policy {policy!r}")
    lease = check_finite_scalar("lease", THEMIS_LEASE if lease is None else lease, low=0.0, low_open=True)
    if starve_limit is not None:
        if policy not in ("tiresias", "las"):
            raise ValueError(f"starve_limit is Tiresias' starvation promotion, not for policy {policy!r}")
        starve_limit = check_finite_scalar("starve_limit", starve_limit, low=0.0, low_open=True)
    try:
        thr = _column(list(thresholds), "thresholds", np.float64)
    except TypeError:
        raise TypeError(f"thresholds must be a sequence of numbers, got {thresholds!r}") from None
    if not (np.all(np.isfinite(thr)) and np.all(thr > 0) and np.all(np.diff(thr) > 0)):
        raise ValueError("thresholds must be positive, finite and increasing")
    if starve_limit is not None and n:
        slack = thr[0] / need - float(restart_s) if thr.size else np.full(n, np.inf)
        if not np.all(slack > 0):
            j = int(np.argmin(slack))
            raise ValueError(
                f"starve_limit: job {j if names is None else names[j]} ({int(need[j])} GPUs) would be demoted from the "
                f"first queue ({thr[0]:g} GPU-s) within its {restart_s:g} s restart pause, and promoted jobs could "
                "swap the GPUs forever: needs restart_s < thresholds[0] / gpus for every job"
            )
    codes = {"fifo": FIFO, "sjf": SJF, "backfill": BACKFILL, "srtf": SRTF, "tiresias": LAS, "las": LAS}
    code = {**codes, "gandiva": GANDIVA, "themis": THEMIS}[policy]
    order = np.argsort(submit, kind="stable")
    with np.errstate(over="ignore"):
        work = duration / sp
    if not np.all(np.isfinite(work)):  # the loop would stop at an infinite completion, others never run
        j = int(np.argmin(np.isfinite(work)))
        raise ValueError(
            f"speed: job {j if names is None else names[j]}'s duration over its speed ratio overflows "
            f"({duration[j]:g} / {sp[j]:g})"
        )
    if notice is not None:
        notice()
    first, finish, restarts, att, t, q, u, running = run_rigid_kernel(
        submit[order], work[order], need[order], int(nodes), int(gpus_per_node), code, float(restart_s), thr, int(depth),
        lease if policy == "themis" else quantum, float(starve_limit or 0.0),
    )  # fmt: skip
    back = np.empty_like(order)
    back[order] = np.arange(n)
    return RigidRun(first[back], finish[back], restarts[back], att[back], t, q, u, running)
