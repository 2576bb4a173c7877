"""The Pollux policy in the simulator: JobInfo construction and the OSDI'21 research variant.

:class:`PolluxSimPolicy` turns simulator jobs into :class:`fastsched.policy.JobInfo` and calls
:class:`fastsched.policy.PolluxPolicy` once per round. Two variants:

``default``
    The policy as shipped (AdaptDL's production objective: plain sum of speedups over one
    replica, constant restart penalty), jobs in FIFO order.
``osdi21``
    The research configuration of the Pollux paper's simulator (SIMULATOR.md §6.5):
    power mean ``p = -1`` of scaled speedups, each job's speedup re-based on its goodput at
    the fair share (``ceil(GPUs / J)`` replicas on one node; ``r / fair_R`` for a job with
    no model yet), jobs ordered by attained service, and the multiplicative restart factor
    ``max(age - 30 * restarts, 0) / (age + 30)``. By default the factor is applied as one
    penalty for all jobs, the round's GPU-weighted mean over allocated jobs
    (``restart_penalty="osdi21-global"``, see :meth:`PolluxSimPolicy.restart_penalty_for`).
    ``restart_penalty="osdi21"`` applies each job's own factor to it when its allocation
    changes (``JobInfo.restart_penalty = 1 - factor``), as the paper's simulator does; with
    ``power_shift=True`` (mean of ``value + 1e-3``) and ``placeholders=False`` (fixed
    cluster) that is the paper's objective exactly, the one the ``osdi21`` preset
    (:mod:`fastsched.sim.presets`) uses. How close it comes to the paper's JCTs is measured
    in ``benchmarks/results/sim.md``.

In both, ``max_replicas = min(max(2 * largest profiled replicas, 1), 64, max_batch //
min_local_bsz)`` (a job at most doubles its largest observed scale per round), or the
application's own cap.
"""

from __future__ import annotations

import math

import numpy as np

from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy
from fastsched.policy.problem import InvalidJobError, RoundRecords, problem_from_records
from fastsched.sim.policies._placement import keep_majority_type
from fastsched.sim.policies.base import SimPolicy

__all__ = ["PolluxSimPolicy", "RebasedSpeedup", "LinearSpeedup"]

VARIANTS = ("default", "osdi21")
GPU = "nvidia.com/gpu"


class RebasedSpeedup:
    """A SpeedupFunction divided by the job's goodput at the fair share instead of 1 replica.

    Exposes the table interface the policy reads (``is_tabulated``, ``table``).

    Examples
    --------
    At the fair share (here 2 replicas on 1 node) the re-based speedup is 1:

    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
    >>> job = Job("a", builtin_applications()["cifar10"], 0)
    >>> job.reallocate([1]); job.step(300)
    >>> fn = RebasedSpeedup(job.speedup_fn(), 1, 2)
    >>> round(float(fn(1, 2)), 6), round(float(fn.table(4)[0, 2]), 6)
    (1.0, 1.0)
    """

    is_tabulated = True

    def __init__(self, speedup_fn, fair_nodes, fair_replicas):
        self._fn = speedup_fn
        fair, _, _ = speedup_fn.goodput_fn.optimize(
            fair_nodes,
            fair_replicas,
            max_batch_size=speedup_fn._max_batch_size,
            atomic_bsz_range=speedup_fn._atomic_bsz_range,
            accumulation=speedup_fn._accumulation,
        )
        self.factor = speedup_fn.base_goodput / fair if fair > 0 else 0.0
        self._last = None  # (max_replicas, table): the policy asks every round

    @property
    def table_source(self):
        """The SpeedupFunction whose table :meth:`table` reads (the round fills those in one launch).

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> from fastsched.sim.engine.job import Job
        >>> job = Job("a", builtin_applications()["cifar10"], 0)
        >>> job.reallocate([1]); job.step(300)
        >>> RebasedSpeedup(job.speedup_fn(), 1, 2).table_source is job.speedup_fn()
        True
        """
        return self._fn

    def table(self, max_replicas):
        """Speedup table ``[2, max_replicas + 1]`` (single node, multi node) re-based."""
        if self._last is None or self._last[0] != max_replicas:
            t = np.asarray(self._fn.table(max_replicas)) * self.factor
            t.flags.writeable = False
            self._last = (max_replicas, t)
        return self._last[1]

    def __call__(self, num_nodes, num_replicas):
        """Re-based speedup of ``num_replicas`` replicas on ``num_nodes`` nodes."""
        return self._fn(num_nodes, num_replicas) * self.factor


class LinearSpeedup:
    """Placeholder speedup ``r / divisor`` of a job that has not run yet (tabulated).

    Examples
    --------
    >>> fn = LinearSpeedup(2.0)
    >>> float(fn(1, 3)), fn.table(3)[0].tolist()
    (1.5, [0.0, 0.5, 1.0, 1.5])
    """

    is_tabulated = True

    def __init__(self, divisor=1.0):
        self.divisor = float(divisor)

    def table(self, max_replicas):
        """``[2, max_replicas + 1]`` table of ``r / divisor``."""
        row = np.arange(max_replicas + 1, dtype=np.float64) / self.divisor
        return np.stack([row, row])

    def __call__(self, num_nodes, num_replicas):
        """Speedup ``num_replicas / divisor`` (``num_nodes`` is unused)."""
        return np.asarray(num_replicas, dtype=np.float64) / self.divisor


class PolluxSimPolicy(SimPolicy):
    """Adapter from the simulator to :class:`fastsched.policy.PolluxPolicy`.

    Pollux resizes every job, a workload's ``rigid`` category included: a job it cannot resize
    is not modelled (replay such jobs with :mod:`fastsched.sim.engine.rigid`).

    Parameters
    ----------
    variant : {"default", "osdi21"}
        See the module docstring.
    seed : int, optional
        Seed of the genetic search.
    p : float, optional
        Fairness exponent of the power mean (``osdi21``: -1; default: plain sum).
    restart_penalty : float, "osdi21" or "osdi21-global", optional
        Constant penalty; ``"osdi21"``: each job's own research factor; ``"osdi21-global"``
        (default of the ``osdi21`` variant): one penalty per round, 1 - the GPU-weighted
        mean factor of the allocated jobs.
    restart_delay : int
        Seconds lost per restart in the research factor (30).
    max_replicas_cap : int
        Upper bound of any job's replicas (64 in the published simulator).
    placeholders : bool
        Pass a node template so the policy can propose extra (autoscaled) nodes (default).
        The paper's simulator has none (its cluster is fixed). The share scale is the same
        either way (problem nodes / their GPUs: ``32 / 128 = 16 / 64``); only the search
        space and the second objective change.
    **policy_options
        Passed to :class:`fastsched.policy.PolluxPolicy` (e.g. ``pop_size``, ``generations``).

    Examples
    --------
    >>> from fastsched.sim.policies import make_policy
    >>> pol = make_policy("pollux", seed=0)
    >>> pol.name, pol.variant, pol.heterogeneity_unaware, pol.desired_nodes()
    ('pollux', 'default', True, None)
    """

    name = "pollux"
    # On several GPU types: one merged profile per job, mixed allocations trimmed to their
    # majority type (Pollux in Sia's comparison).
    heterogeneity_unaware = True

    def __init__(
        self,
        variant="default",
        seed=None,
        p=None,
        restart_penalty=None,
        restart_delay=30,
        max_replicas_cap=64,
        placeholders=True,
        **policy_options,
    ):
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {list(VARIANTS)}, got {variant!r}")
        self.variant = variant
        research = variant == "osdi21"
        if p is None and research:
            p = -1.0
        if restart_penalty is None and research:
            restart_penalty = "osdi21-global"
        if isinstance(restart_penalty, str) and restart_penalty not in ("osdi21", "osdi21-global"):
            raise ValueError(f"restart_penalty must be a number, 'osdi21' or 'osdi21-global', got {restart_penalty!r}")
        self.per_job_penalty = restart_penalty == "osdi21"
        self.dynamic_penalty = restart_penalty == "osdi21-global"
        kwargs = dict(policy_options)
        if p is not None:
            kwargs["p"] = p
        if restart_penalty is not None and not isinstance(restart_penalty, str):
            kwargs["restart_penalty"] = restart_penalty
        self.placeholders = bool(placeholders)
        self._JobInfo, self._NodeInfo = JobInfo, NodeInfo
        self.policy = PolluxPolicy(seed=seed, **kwargs)
        self.restart_delay = restart_delay
        self.max_replicas_cap = max_replicas_cap
        self._desired = None
        # Rounds go through the policy's trusted array entry (False: through JobInfo/NodeInfo
        # dicts and their checks; the allocations are the same).
        self._trusted = True
        # job name -> (speedup function, fair replicas, re-based wrapper): a job's fitted
        # model changes only when it sees a new configuration, and the fair share only when
        # the number of active jobs does, so most rounds reuse the wrapper (and its table).
        self._rebased: dict = {}
        # Workload jobs seen (names: the simulator may ask twice per row), and whether the
        # kernels of rounds that large are compiled.
        self._rows: set = set()
        self._prepared = False

    def job_kwargs(self, wjob, app):
        """Extra :class:`~fastsched.sim.engine.job.Job` arguments for a workload row and its app (see :class:`SimPolicy`)."""
        self.__dict__.setdefault("_rows", set()).add(getattr(wjob, "name", id(wjob)))
        return {"target_batch_size": app.fixed_batch_size}

    def desired_nodes(self):
        """Cluster size the policy asks for (autoscaling), or ``None`` (see :class:`SimPolicy`)."""
        return self._desired

    def _max_replicas(self, job, need=None) -> int:
        """Return the replica bound the round offers ``job`` (``need``: its :func:`_min_replicas`, if known)."""
        app = job.application
        if need is None:
            need = _min_replicas(job)
        if app.max_replicas is not None:
            return max(int(app.max_replicas), need)
        return max(
            int(
                min(
                    max(2 * job.max_profiled_replicas, 1),
                    self.max_replicas_cap,
                    app.max_batch_size // app.min_local_bsz,
                )
            ),
            need,
        )

    def restart_factor(self, now, job) -> float:
        """Research restart factor ``max(age - d * restarts, 0) / (age + d)`` of one job.

        The fraction of its value a job keeps if this round changes its allocation: the
        share of its life not spent in rescale delays, counting the one this change costs.
        """
        age = now - job.submission_time
        restarts = job.num_restarts or 0
        return max(age - self.restart_delay * restarts, 0.0) / (age + self.restart_delay)

    def restart_penalty_for(self, now, jobs, allocations) -> float:
        """Research restart factor as one penalty: 1 - GPU-weighted mean factor of allocated jobs."""
        num = den = 0.0
        for job in jobs:
            gpus = len(allocations.get(job.name, ()))
            if gpus == 0:
                continue
            num += gpus * self.restart_factor(now, job)
            den += gpus
        return 1.0 - num / den if den else 0.0

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        if not getattr(self, "_prepared", True):
            # Before the first round (after the first-run notice): a workload that can reach
            # rounds of many jobs compiles their kernels now, not in the middle of the run.
            self._prepared = True
            prepare = getattr(self.policy, "prepare", None)  # a substituted search may have none
            if prepare is not None:
                prepare(len(self._rows))
        research = self.variant == "osdi21"
        total_gpus = sum(nodes.values())
        fair_r = math.ceil(total_gpus / len(jobs)) if research else 1
        fns, order, min_reps, max_reps, preemptible = [], [], [], [], []
        rebased = {}
        linear = LinearSpeedup(fair_r)  # one for every job that has not run: one table to fill
        for job in jobs:
            fn = job.speedup_fn()
            if fn is None:
                fn = linear
            elif research:
                # Kept by the function, not the job: jobs with the same model share one
                # function (Job.speedup_fn), so they share its re-based table too.
                hit = rebased.get(id(fn)) or self._rebased.get(id(fn))
                if hit is None or hit[0] is not fn or hit[1] != fair_r:
                    hit = (fn, fair_r, RebasedSpeedup(fn, 1, fair_r))
                rebased[id(fn)] = hit
                fn = hit[2]
            fns.append(fn)
            order.append((job.attained_service, job.submission_time) if research else job.submission_time)
            # 0, not 1, for a job that runs on one GPU: the policy orders jobs by min_replicas.
            need = _min_replicas(job)
            min_reps.append(need if need > 1 else 0)
            max_reps.append(self._max_replicas(job, need))
            # On a typed cluster (the Sia study) a job in the middle of a restart keeps its
            # allocation: with restarts longer than a round (imagenet: 250 s) a job moved
            # every round would never train.
            preemptible.append(
                not (self.cluster is not None and job.rescale_time > 0 and bool(allocations.get(job.name)))
            )
        self._rebased = rebased
        penalty = None
        if self.per_job_penalty:
            penalty = np.array([1.0 - self.restart_factor(now, job) for job in jobs], dtype=np.float64)
        if self.dynamic_penalty:
            self.policy.restart_penalty = self.restart_penalty_for(now, jobs, allocations)
        keys = [job.name for job in jobs]
        if self._trusted and _consistent(keys, max_reps, nodes, allocations):
            new, desired = self._optimize_records(
                keys, fns, order, min_reps, max_reps, preemptible, penalty, nodes, allocations
            )
        else:
            new, desired = self._optimize_dicts(
                keys, fns, order, min_reps, max_reps, preemptible, penalty, nodes, allocations
            )
        self._desired = desired
        if self.cluster is not None and not self.cluster.is_homogeneous:
            return keep_majority_type(new, self.cluster.node_types)
        return {k: list(v) for k, v in new.items()}

    def _optimize_records(self, keys, fns, order, min_reps, max_reps, preemptible, penalty, nodes, allocations):
        """Run the round through the policy's trusted entry: records straight to its arrays."""
        rtypes = [GPU] if keys else []
        node_res = np.fromiter(nodes.values(), dtype=np.int64, count=len(nodes)).reshape(-1, 1)[:, : len(rtypes)]
        records = RoundRecords(
            job_keys=keys,
            speedup_fns=fns,
            creation=order,
            min_rep=min_reps,
            max_rep=max_reps,
            preemptible=preemptible,
            penalty=penalty,
            rtypes=rtypes,
            job_res=np.ones((len(keys), len(rtypes)), dtype=np.int64),
            node_keys=list(nodes),
            node_preemptible=[False] * len(nodes),
            node_res=node_res,
            # The template is the first node (its preemptible flag does not enter the problem).
            template_res=node_res[0] if self.placeholders and len(nodes) else None,
            base_allocations=allocations,
        )
        try:
            prob = problem_from_records(records)
        except InvalidJobError:  # the validated round raises or skips it, as configured
            return self._optimize_dicts(keys, fns, order, min_reps, max_reps, preemptible, penalty, nodes, allocations)
        return self.policy.optimize_problem(prob)

    def _optimize_dicts(self, keys, fns, order, min_reps, max_reps, preemptible, penalty, nodes, allocations):
        """Run the round through the policy's validated entry (``JobInfo``/``NodeInfo`` dicts)."""
        infos = {
            key: self._JobInfo(
                resources={GPU: 1},
                speedup_fn=fns[j],
                creation_timestamp=order[j],
                min_replicas=min_reps[j],
                max_replicas=max_reps[j],
                preemptible=preemptible[j],
                restart_penalty=None if penalty is None else float(penalty[j]),
            )
            for j, key in enumerate(keys)
        }
        node_infos = {k: self._NodeInfo({GPU: g}, preemptible=False) for k, g in nodes.items()}
        template = next(iter(node_infos.values())) if self.placeholders else None
        return self.policy.optimize(infos, node_infos, allocations, template)


def _min_replicas(job) -> int:
    """Fewest GPUs ``job``'s application runs on (its memory may need several)."""
    return max(int(getattr(job.application, "min_replicas", 1)), 1)


def _consistent(keys, max_reps, nodes, allocations) -> bool:
    """Whether the trusted entry may take this round: what the validated one would refuse is absent.

    Every job may take a replica, and every current allocation names known nodes within its
    job's bound; otherwise the validated round raises its usual error.
    """
    if min(max_reps, default=1) < 1:
        return False
    known = nodes.__contains__
    for key, bound in zip(keys, max_reps, strict=True):
        alloc = allocations.get(key)
        if alloc and (len(alloc) > bound or not all(map(known, alloc))):
            return False
    return True
