"""Shockwave (Zheng et al., NSDI'23): a dynamic market over a planning window, solved with HiGHS.

Shockwave plans ``window`` rounds ahead (§4): which rigid jobs run in which round, maximising
the Nash social welfare of the jobs' progress at the window's end (efficiency) minus ``k``
times the longest remaining time after it (makespan), subject to finish-time fairness: no
job's projected finish time may exceed ``rhomax`` times its fair-share finish time (§4.3). When
those bounds cannot all be met, they are dropped and each job whose projected ratio ``rho``
exceeds ``rhomax`` has its utility weighted by ``rho ** lam`` instead (``rho ** 100`` if it could
finish within a round), the paper's priority boost for jobs falling behind. The program is
:mod:`fastsched.sim.policies._market`.

Here, as in the Sia study's port (which runs it heterogeneity-unaware):

* jobs keep the GPU count and batch size of their workload row (Gavel's job model,
  :class:`~fastsched.sim.policies.gavel.GavelPolicy`); a job's speed is its true steps per
  second averaged over the cluster's GPUs (each type weighted by its GPU count), its remaining
  work the simulator's true remaining steps (the oracle, :mod:`fastsched.sim.policies._oracle`,
  times the job's slowdown);
* fair share: with ``N`` active jobs, a time fraction ``f_j = min(1, G / (N n_j))`` of the
  job's GPUs; each round's fair-share finish-time estimate (elapsed time plus remaining time
  over ``f_j``) enters the job's baseline, the time-weighted mean of its past estimates blended
  with the latest by ``momentum``;
* the plan is re-solved when a job arrives or finishes and when its window is used up; within
  a window, jobs of higher priority (weight, then shorter remaining time) take the earliest of
  the rounds the market gives them (:func:`~fastsched.sim.policies._market.rank_rounds`);
* free GPUs left in a round go to the unscheduled jobs, longest remaining time first (work
  conservation); placement keeps a running job on its GPU type if there is room, else takes
  the type with the most free GPUs, and Gavel's sequential worker assignment within a type.

The solver change. The paper (and the study) solve the program with Gurobi to a relative gap of
1e-3 within 15 s per solve; here HiGHS (:func:`scipy.optimize.milp`) solves it to the same gap
or until ``node_limit`` branch-and-bound nodes (50 by default; the best solution found by then
is used: a limit in work, so results do not depend on the machine's speed, unlike a time
limit; ``time_limit``, 30 s, is only a safety net). The log
approximation needs no binary variables here (its hypograph is exact for a concave
maximisation), so the only integers are the ``J x W`` round choices. Where HiGHS returns no
solution at all within the limit (it then has not found even a feasible point), the round
falls back to the priority order (weight, then shorter remaining time) filled greedily.
Results can differ from Gurobi's where the program has several optima or HiGHS stops at the
gap with another solution; ``benchmarks/results/hetero.md`` reports what this does on the
study's workloads.
"""

from __future__ import annotations

import numpy as np

from fastsched.sim.policies._market import MarketJobs, rank_rounds, solve_market
from fastsched.sim.policies._oracle import remaining_steps, total_steps
from fastsched.sim.policies._placement import place_sequential, place_type
from fastsched.sim.policies.gavel import GavelPolicy

__all__ = ["ShockwavePolicy"]

#: Largest priority weight: ``rho ** 100`` overflows, and HiGHS's tolerances need bounded costs.
MAX_WEIGHT = 1e6


def _check(name, value, low, high, kind=(int, float)):
    if isinstance(value, bool) or not isinstance(value, kind) or not low <= value <= high:
        raise ValueError(f"{name} must be a number in [{low}, {high}], got {value!r}")
    return value


class ShockwavePolicy(GavelPolicy):
    """Shockwave's finish-time-fair market over a planning window (NSDI'23, §4; see the module docstring).

    Parameters
    ----------
    window : int
        Rounds planned ahead.
    k : float
        Weight of the makespan term, per second of the longest remaining time.
    lam : float
        Power of the priority boost of jobs behind their fair finish time.
    rhomax : float
        Bound on each job's projected finish-time ratio.
    momentum : float
        Weight of the time-weighted mean of past fair finish-time estimates in a job's baseline
        (the rest: the latest estimate).
    mip_rel_gap, node_limit, time_limit : float, int, float
        HiGHS's relative gap, branch-and-bound nodes and seconds (a safety net) per solve.
    placement : {"sequential", "packed"}
        Worker assignment within a GPU type (as :class:`~fastsched.sim.policies.gavel.GavelPolicy`).
    fair_share : {"gpus", "jobs"}
        A job's fair share with ``N`` active jobs: ``"gpus"``, ``1/N`` of the cluster's GPUs
        (time fraction ``min(1, G / (N n_j))``, the paper's definition); ``"jobs"``, a time
        fraction ``min(1, G / N)`` whatever the job's GPU count (the Sia study's port).

    Examples
    --------
    >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.hetero_job import HeteroApplication, make_hetero_jobs
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> apps = {"cifar10": HeteroApplication({"aws": builtin_applications()["cifar10"]})}
    >>> pol = ShockwavePolicy()
    >>> pol.bind_cluster(parse_cluster("1xaws"), 360)
    >>> rows = [WorkloadJob("a", 0, "cifar10", 2, 128), WorkloadJob("b", 0, "cifar10", 4, 128)]
    >>> jobs = make_hetero_jobs(rows, apps, pol, pol.cluster)
    >>> sorted(pol.optimize(0, jobs, pol.cluster.nodes(), {}))  # 4 GPUs: one job at a time
    ['b']
    """

    name = "shockwave"

    def __init__(
        self,
        window=5,
        k=1e-3,
        lam=12.0,
        rhomax=1.0,
        momentum=0.9,
        mip_rel_gap=1e-3,
        node_limit=50,
        time_limit=30.0,
        placement="sequential",
        fair_share="gpus",
    ):
        super().__init__(placement=placement)
        if fair_share not in ("gpus", "jobs"):
            raise ValueError(f"fair_share must be 'gpus' or 'jobs', got {fair_share!r}")
        self.fair_share = fair_share
        if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= 100:
            raise ValueError(f"window must be an int in [1, 100], got {window!r}")
        self.window = window
        self.k = _check("k", k, 0.0, 1e6)
        self.lam = _check("lam", lam, 0.0, 1e3)
        self.rhomax = _check("rhomax", rhomax, 1e-3, 1e6)
        self.momentum = _check("momentum", momentum, 0.0, 1.0)
        self.mip_rel_gap = _check("mip_rel_gap", mip_rel_gap, 0.0, 1.0)
        self.time_limit = _check("time_limit", time_limit, 1e-3, 3600.0)
        self.node_limit = int(_check("node_limit", node_limit, 1, 10**9, kind=int))
        self._history: dict = {}  # job name -> (time-weighted sum, total seconds, last time, last estimate)
        self._plan = None  # (job names, (J, W) bool, next round index)
        self.solves = 0  # market solves so far
        self.fallbacks = 0  # solves where HiGHS returned nothing and the greedy order was used
        self.highs: dict = {}  # HiGHS's counters (see solve_market): programs, time limits hit

    def _record(self, now, jobs, estimate):
        """Add this round's fair finish-time estimates; return each job's baseline."""
        alive = {j.name for j in jobs}
        self._history = {k: v for k, v in self._history.items() if k in alive}
        base = np.empty(len(jobs))
        for i, job in enumerate(jobs):
            wsum, total, last_t, last_e = self._history.get(job.name, (0.0, 0.0, now, estimate[i]))
            wsum += last_e * (now - last_t)
            total += now - last_t
            mean = wsum / total if total > 0 else estimate[i]
            self._history[job.name] = (wsum, total, now, estimate[i])
            base[i] = self.momentum * mean + (1.0 - self.momentum) * estimate[i]
        return base

    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        if self._type_time is None:
            raise RuntimeError("ShockwavePolicy needs bind_cluster(spec, interval) before the first round")
        if not jobs:
            self._plan = None
            return {}
        tput = np.array([self._tput(job) for job in jobs]).reshape(len(jobs), len(self.types))
        cap = self.capacity.astype(np.float64)
        total = cap.sum()
        speed = tput @ cap / total  # steps/s on the cluster's average GPU (heterogeneity-unaware)
        scale = np.array([job.target_num_replicas for job in jobs], dtype=np.int64)
        slow = np.array([getattr(j, "slowdown", 1.0) for j in jobs])
        left_steps = np.array([remaining_steps(j) for j in jobs]) * slow
        all_steps = np.array([total_steps(j) for j in jobs]) * slow
        live = (speed > 0) & (left_steps > 0)
        secs = np.divide(all_steps, speed, out=np.zeros(len(jobs)), where=live)
        remaining = np.divide(left_steps, speed, out=np.zeros(len(jobs)), where=live)
        per = len(jobs) * (scale if self.fair_share == "gpus" else np.ones_like(scale))
        share = np.minimum(1.0, total / per)
        elapsed = np.array([max(now - j.submission_time, 0) for j in jobs], dtype=np.float64)
        estimate = elapsed + remaining / share
        base = self._record(now, jobs, estimate)
        key = tuple(j.name for j in jobs)
        if self._plan is None or self._plan[0] != key or self._plan[2] >= self.window:
            self._plan = (
                key,
                self._solve(live, scale, secs, remaining, all_steps, left_steps, share, elapsed, estimate, base),
                0,
            )
        names, plan, r = self._plan
        self._plan = (names, plan, r + 1)
        chosen = [j for j in range(len(jobs)) if plan[j, r]]
        rest = sorted((j for j in range(len(jobs)) if live[j] and not plan[j, r]), key=lambda j: -remaining[j])
        return self._place(jobs, allocations, tput, scale, chosen, rest)

    def _solve(self, live, scale, secs, remaining, all_steps, left_steps, share, elapsed, estimate, base):
        """Solve the window's market: a ``(J, W)`` bool plan (rows of jobs that cannot run stay empty)."""
        num = live.shape[0]
        plan = np.zeros((num, self.window), dtype=bool)
        idx = np.flatnonzero(live & (scale <= self.capacity.sum()))
        if idx.size == 0:
            return plan
        self.solves += 1
        d = float(self.interval)
        done = 1.0 - left_steps[idx] / all_steps[idx]
        market = MarketJobs(scale[idx], secs[idx], done, np.ones(idx.size))
        opts = {"k": self.k, "mip_rel_gap": self.mip_rel_gap, "time_limit": self.time_limit}
        opts.update(node_limit=self.node_limit, stats=self.highs)
        # Finish after the window: elapsed + W D + (remaining - planned) / f <= rhomax * baseline.
        coef = secs[idx] / share[idx]
        slack = self.rhomax * base[idx] - elapsed[idx] - self.window * d
        x = solve_market(market, int(self.capacity.sum()), d, self.window, ftf=(coef, slack), **opts)
        weight = np.ones(idx.size)
        if x is None:
            rho = estimate[idx] / np.maximum(base[idx], 1e-9)
            power = np.where(remaining[idx] < d, 100.0, self.lam)
            with np.errstate(over="ignore"):
                boost = np.minimum(np.power(np.maximum(rho, 1.0), power), MAX_WEIGHT)
            weight = np.where(rho > self.rhomax, boost, 1.0)
            x = solve_market(market._replace(weight=weight), int(self.capacity.sum()), d, self.window, **opts)
        order = sorted(range(idx.size), key=lambda i: (-weight[i], remaining[idx[i]]))
        if x is None:  # HiGHS found no point within its time limit: the priority order, greedily
            self.fallbacks += 1
            x = np.ones((idx.size, self.window), dtype=bool)
        plan[idx] = rank_rounds(x, scale[idx], int(self.capacity.sum()), order)
        return plan

    def _place(self, jobs, allocations, tput, scale, chosen, rest):
        """Give the chosen jobs GPUs of one type each, then fill what is left with ``rest``."""
        left = self.capacity.copy()
        node_types = self.cluster.node_types
        index = {t: i for i, t in enumerate(self.types)}
        typed: dict = {}

        def take(j):
            alloc = allocations.get(jobs[j].name)
            here = index[node_types[alloc[0]]] if alloc else None
            fits = [t for t in range(len(self.types)) if tput[j, t] > 0 and left[t] >= scale[j]]
            if not fits:
                return
            t = here if here in fits else max(fits, key=lambda t: (left[t], -t))
            typed[j] = t
            left[t] -= scale[j]

        # Running jobs first (they keep their type where they can), then the largest.
        for j in sorted(chosen, key=lambda j: (not allocations.get(jobs[j].name), -scale[j])):
            take(j)
        for j in rest:
            take(j)
        out = {}
        place = place_sequential if self.placement == "sequential" else place_type
        for t, gtype in enumerate(self.types):
            want = {jobs[j].name: int(scale[j]) for j, tt in typed.items() if tt == t}
            if not want:
                continue
            current = {k: allocations[k] for k in want if allocations.get(k) and node_types[allocations[k][0]] == gtype}
            out.update(place(want, self.cluster.nodes_by_type[gtype], self.gpn[gtype], current))
        return out
