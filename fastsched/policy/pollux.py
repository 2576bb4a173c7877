"""``PolluxPolicy``: AdaptDL's scheduling policy on a numba NSGA-II (drop-in).

One round (:meth:`PolluxPolicy.optimize`):

1. :func:`~fastsched.policy.problem.build_problem` validates the dicts and builds arrays.
2. An initial population of sparse allocations: the previous round's final population
   adapted to the new jobs/nodes (warm start), the base allocation, first-fit and greedy
   marginal-gain fills at several cluster sizes, on large problems the packed optimum of the
   round's separable relaxation (:mod:`fastsched.policy._ga.relax`: the many-job rebalancing
   that single-job moves do not reach), and mutated copies of these.
3. ``generations`` rounds of NSGA-II (tournament, crossover + mutation + repair + fitness in
   one parallel kernel, non-dominated sort + crowding survival).
4. Pareto front → cluster utilities → desired node count (utilisation between
   ``min_util`` and ``max_util``) → the best allocation within ``min(nodes, desired)``.
"""

from __future__ import annotations

import logging
import threading
import time

import numba
import numpy as np

from fastsched import _validate as V
from fastsched._jit import parallel_region
from fastsched.policy import _ga as G
from fastsched.policy._ga.population import adapt_previous, base_row, nbytes, rows, take
from fastsched.policy._ga.rng import REPAIR
from fastsched.policy._result import desired_nodes, row_to_allocations, select_result
from fastsched.policy._round import beside, make_plan, polish_best, seed_buffer_rows, stream_key
from fastsched.policy.problem import Problem, build_problem, sort_nodes

LOG = logging.getLogger(__name__)

__all__ = ["PolluxPolicy"]


class PolluxPolicy:
    """Pollux's goodput-driven scheduling policy (AdaptDL ``PolluxPolicy``), numba-compiled.

    Parameters
    ----------
    seed : int, optional
        Seed of the counter-based random streams. The same seed gives the same allocations
        with any number of numba threads. ``None`` draws one from ``numpy.random`` (so
        ``np.random.seed`` makes runs repeatable, as with AdaptDL).
    pop_size : int
        NSGA-II population size (AdaptDL: 100).
    generations : int
        Generations per round (AdaptDL: 100).
    restart_penalty : float
        Fraction of a job's value lost when its placement changes (AdaptDL: 0.1).
    min_util, max_util : float
        Target band of cluster utility for the desired node count (AdaptDL: 0.35, 0.65).
    p : float, optional
        Fairness: ``None`` (default) maximises the plain sum of scaled speedups as AdaptDL
        does; otherwise ``J x`` the power mean with exponent ``p`` of the jobs' scaled
        speedups (``p = -1`` as in the Pollux paper's simulator, ``p = 0`` geometric mean).
        For ``p <= 0`` a job's value is floored at ``1e-3`` (``0 ** p`` is infinite).
    power_shift : bool
        With ``p``: take the power mean of ``value + 1e-3`` (the Pollux paper's simulator)
        instead of ``max(value, 1e-3)`` (default ``False``).
    mutation_rate : float
        Expected number of mutated jobs per child (default 2).
    shrink_to_desired : bool
        AdaptDL restricts the returned allocation to ``min(len(nodes), desired_nodes)`` nodes
        (``True``). By default (``False``) the best Pareto solution within the real nodes is
        returned and ``desired_nodes`` is advice for the autoscaler: with a Pareto front that
        covers small cluster sizes, AdaptDL's rule can pick a tiny, restart-penalty-favoured
        cluster (seen: 4 of 512 nodes with 1000 jobs queued).
    init : {"seeded", "front"}
        Initial population of a round. ``"seeded"`` (default): the previous round's final
        population (adapted), the base allocation, first-fit and greedy fills, on large
        problems (jobs x problem nodes > 4096) the packed optimum of the round's separable
        relaxation, and mutated copies of these. ``"front"``: only the previous round's rank-0 set (adapted; the base
        allocation in the first round), growing to ``pop_size`` through offspring, as the
        Pollux paper's simulator (pymoo) does.
    parallel : bool, optional
        Build children in parallel (numba threads). ``None``: when numba has more than one
        thread and population x jobs >= 50 000. Results are identical either way.
    patience : int or None
        Early stop: the search ends once the hypervolume of the first front (reference point:
        objective 0, cluster size = problem nodes + 1) grew by less than 1% over the last
        ``patience`` generations (default 5); ``generations`` stays the cap. ``None`` or 0
        runs all ``generations`` (AdaptDL's fixed-length search).
    polish : bool
        Local search (default ``True``): the first-fit and greedy seeds within the real
        nodes, the base allocation and the final best allocation are improved by steepest
        single-job moves (drop, revert to base, relocate to one node with the best replica
        count, one replica more or less, spread to a new node) and replica transfers between
        jobs sharing a node, until no move helps. ``False`` gives the plain genetic search.
    on_invalid_job : {"raise", "skip"}
        A job that is invalid or can never be placed (requests a resource that no node nor
        the template has, requests nothing, ``min_replicas > max_replicas``, a speedup
        function that fails or returns NaN/negative values): raise a ``ValueError`` naming
        it (default), or leave it unallocated for this round, log a warning with the reason
        and go on (``last_stats["skipped"]`` maps its key to the reason). A non-preemptible
        job with a base allocation is never dropped: skipped, it keeps that allocation (and
        its resources) as it is; a job requesting nothing is valid when so pinned.

    Attributes
    ----------
    last_stats : dict
        Figures of the last round: ``round``, ``jobs``, ``nodes``, ``skipped``; after a round
        with jobs and nodes also ``objective``, ``objective_real`` (best within the real
        nodes), ``desired_nodes``, ``front_size``, ``generations`` (run), ``population_bytes``
        and wall seconds ``build_s``, ``search_s``, ``total_s``. A round whose steps run as
        separate (threaded) kernels adds the split of ``search_s``: ``seed_s``, ``pool_s``,
        ``evolve_s``, ``polish_s``; a serial round runs as one kernel and has no such split.

    Notes
    -----
    A job whose :class:`JobInfo` sets ``restart_penalty`` uses its own penalty instead of
    ``restart_penalty`` (e.g. the paper's age- and restart-dependent factor).
    Interference avoidance (at most one distributed job per node) is always a constraint, as
    in AdaptDL. The final population is kept and adapted to the next round's jobs and nodes.
    Base allocations must be consistent: a job's list longer than its ``max_replicas``, or
    jobs together over a node's resources, raise a ``ValueError``. Node keys of mixed types
    (``1`` and ``"1"``) are ordered numbers first, then by type name and value.

    Examples
    --------
    >>> from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy
    >>> speedup = lambda nodes, replicas: replicas ** 0.8
    >>> nodes = {f"n{i}": NodeInfo({"gpu": 4}, False) for i in range(2)}
    >>> jobs = {"a": JobInfo({"gpu": 1}, speedup, 0, 0, 4),
    ...         "b": JobInfo({"gpu": 1}, speedup, 1, 0, 4),
    ...         "bad": JobInfo({"tpu": 1}, speedup, 2, 0, 4)}
    >>> policy = PolluxPolicy(seed=0, on_invalid_job="skip")
    >>> allocations, desired = policy.optimize(jobs, nodes, {}, NodeInfo({"gpu": 4}, True))
    >>> sorted(len(allocations[k]) for k in jobs)
    [0, 4, 4]
    >>> list(policy.last_stats["skipped"])
    ['bad']
    """

    def __init__(
        self,
        seed=None,
        pop_size=100,
        generations=100,
        restart_penalty=0.1,
        min_util=0.35,
        max_util=0.65,
        p=None,
        mutation_rate=2.0,
        parallel=None,
        shrink_to_desired=False,
        power_shift=False,
        init="seeded",
        patience=5,
        polish=True,
        on_invalid_job="raise",
    ):
        # seed None: drawn from numpy's global generator at the first round (as AdaptDL draws
        # its randomness during optimize), so np.random.seed(...) before it repeats a run.
        self.seed = None if seed is None else V.check_int_scalar("seed", seed, low=0)
        self.pop_size = V.check_int_scalar("pop_size", pop_size, low=4)
        self.generations = V.check_int_scalar("generations", generations, low=0)
        self.restart_penalty = V.check_finite_scalar("restart_penalty", restart_penalty, low=0.0, high=1.0)
        self._min_util = V.check_finite_scalar("min_util", min_util, low=0.0)
        self._max_util = V.check_finite_scalar("max_util", max_util, low=self._min_util)
        self.p = None if p is None else V.check_finite_scalar("p", p)
        self.mutation_rate = V.check_finite_scalar("mutation_rate", mutation_rate, low=0.0)
        self.parallel = None if parallel is None else bool(parallel)
        self.shrink_to_desired = bool(shrink_to_desired)
        self.power_shift = bool(power_shift)
        self.init = V.check_choice("init", init, ("seeded", "front"))
        self.patience = None if patience is None else V.check_int_scalar("patience", patience, low=0)
        self.polish = bool(polish)
        self.on_invalid_job = V.check_choice("on_invalid_job", on_invalid_job, ("raise", "skip"))
        self._round = 0
        self._generations_run = 0
        self._times: dict = {}
        # One round at a time per policy: rounds read and replace the warm-start state.
        self._lock = threading.Lock()
        self._prev = None  # (population arrays, job keys, node keys) of the last round
        # Seed from the round's relaxation: None on large problems (_round.relaxed); True/False
        # forces it (kernel warm-up, tests).
        self._relax = None
        self.last_stats: dict = {}

    # -- AdaptDL API ----------------------------------------------------------------------
    def allocate_job(self, job_info, nodes):
        """First-fit placement of one arriving job.

        Returns ``[node] * max(min_replicas, 1)`` for the first node (non-preemptible first,
        then by key) that fits that many replicas on every resource type the job requests,
        else ``[]``. ``nodes`` should account for resources already in use.

        Examples
        --------
        >>> from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy
        >>> nodes = {"n0": NodeInfo({"gpu": 1}, False), "n1": NodeInfo({"gpu": 4}, False)}
        >>> job = JobInfo({"gpu": 1}, lambda n, r: r, 0, 2, 4)
        >>> PolluxPolicy(seed=0).allocate_job(job, nodes)
        ['n1', 'n1']
        >>> PolluxPolicy(seed=0).allocate_job(JobInfo({"gpu": 8}, lambda n, r: r, 0, 1, 1), nodes)
        []
        """
        want = max(int(job_info.min_replicas), 1)
        for key in sort_nodes(nodes):
            res = nodes[key].resources
            fit = min(
                (res.get(rt, 0) // amount if amount > 0 else want for rt, amount in job_info.resources.items()),
                default=want,
            )
            if fit >= want:
                return [key] * want
        return []

    def optimize(self, jobs, nodes, base_allocations, node_template):
        """Run one scheduling round.

        Parameters
        ----------
        jobs : dict
            Job key → :class:`JobInfo` of the unfinished jobs.
        nodes : dict
            Node key → :class:`NodeInfo` of the existing nodes (resources not used by
            other pods).
        base_allocations : dict
            Job key → current allocation (list with one node key per replica).
        node_template : NodeInfo
            A node the autoscaler could add (``None``: no placeholders).

        Returns
        -------
        allocations : dict
            Job key → list of node keys (one per replica), every job listed.
        desired_nodes : int
            Cluster size whose utilisation falls in ``[min_util, max_util]``.

        Examples
        --------
        >>> from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy
        >>> speedup = lambda nodes, replicas: replicas ** 0.5
        >>> nodes = {"n0": NodeInfo({"gpu": 4}, False), "n1": NodeInfo({"gpu": 4}, False)}
        >>> jobs = {"a": JobInfo({"gpu": 1}, speedup, 0, 1, 4), "b": JobInfo({"gpu": 2}, speedup, 1, 1, 2)}
        >>> policy = PolluxPolicy(seed=0, pop_size=8, generations=5)
        >>> allocations, desired = policy.optimize(jobs, nodes, {"a": ["n0"]}, NodeInfo({"gpu": 4}, True))
        >>> sorted(allocations), all(len(allocations[k]) >= 1 for k in jobs)
        (['a', 'b'], True)
        >>> isinstance(desired, int) and desired >= 1
        True
        """
        with self._lock:
            return self._optimize(jobs, nodes, base_allocations, node_template)

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def prepare(self, max_jobs: int) -> float:
        """Compile (or load from numba's cache) the kernels of rounds of up to ``max_jobs`` jobs, now.

        A round of many jobs runs as separate, parallel kernels that small rounds never use: a
        caller about to run such rounds calls this first, so no round compiles in the middle of
        a run. Returns the seconds it took.

        Examples
        --------
        >>> PolluxPolicy(seed=0, parallel=False).prepare(10) >= 0.0
        True
        """
        from fastsched.policy._precompile import compile_round_kernels

        max_jobs = V.check_int_scalar("max_jobs", max_jobs, low=0)
        return compile_round_kernels(type(self), large=self._use_parallel(self.pop_size, max(max_jobs, 1)))

    def optimize_problem(self, prob: Problem):
        """Run one scheduling round on an already built :class:`~fastsched.policy.Problem` (trusted).

        The array-level entry for callers that hold the round's arrays already (a simulator):
        nothing is validated and no dict is read, so ``prob`` must be what
        :func:`~fastsched.policy.build_problem` would return for the same jobs and nodes (the
        allocations are then identical to :meth:`optimize`'s).

        Parameters
        ----------
        prob : Problem
            From :func:`~fastsched.policy.build_problem` or :func:`~fastsched.policy.problem.problem_from_records`
            (``prob.meta``, optional: ``"skipped"`` jobs, the caller's ``"keys"`` and ``"base_allocations"``).

        Returns
        -------
        allocations : dict
            Job key → list of node keys (one per replica), every job of ``prob`` listed.
        desired_nodes : int
            Cluster size whose utilisation falls in ``[min_util, max_util]``.

        Examples
        --------
        >>> from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy, build_problem
        >>> speedup = lambda nodes, replicas: replicas ** 0.5
        >>> nodes = {"n0": NodeInfo({"gpu": 4}, False), "n1": NodeInfo({"gpu": 4}, False)}
        >>> jobs = {"a": JobInfo({"gpu": 1}, speedup, 0, 1, 4), "b": JobInfo({"gpu": 2}, speedup, 1, 1, 2)}
        >>> prob = build_problem(jobs, nodes, {"a": ["n0"]}, NodeInfo({"gpu": 4}, True))
        >>> one = PolluxPolicy(seed=0, pop_size=8, generations=5).optimize_problem(prob)
        >>> two = PolluxPolicy(seed=0, pop_size=8, generations=5).optimize(jobs, nodes, {"a": ["n0"]},
        ...                                                                NodeInfo({"gpu": 4}, True))
        >>> one == two
        True
        """
        with self._lock:
            return self._run(prob, time.perf_counter(), 0.0)

    def _optimize(self, jobs, nodes, base_allocations, node_template):
        t0 = time.perf_counter()
        self._draw_seed()
        base_allocations = {} if base_allocations is None else base_allocations
        prob = build_problem(jobs, nodes, base_allocations, node_template, on_invalid_job=self.on_invalid_job)
        return self._run(prob, t0, time.perf_counter() - t0)

    def _draw_seed(self):
        if self.seed is None:
            # Global legacy state on purpose: np.random.seed(...) must repeat runs.
            self.seed = int(np.random.randint(0, 2**62, dtype=np.int64))  # noqa: NPY002

    def _run(self, prob: Problem, t0: float, t_build: float):
        """Run a round on ``prob`` (the caller's keys and base allocations from ``prob.meta`` if there)."""
        self._draw_seed()
        skipped = prob.meta.get("skipped", {})
        kept = prob.meta.get("kept", {})  # skipped non-preemptible jobs keep their allocation
        keys = prob.meta.get("keys")
        base_allocations = prob.meta.get("base_allocations")
        self._round += 1
        if prob.num_jobs == 0 or prob.num_real == 0:
            self._prev = None
            desired = prob.num_real if prob.num_jobs == 0 else 1
            LOG.info(
                "pollux round %d: %d jobs, %d nodes: nothing to optimise", self._round, prob.num_jobs, prob.num_real
            )
            self.last_stats = {"round": self._round, "jobs": prob.num_jobs, "nodes": prob.num_real, "skipped": skipped}
            if keys is None:
                keys = [*prob.job_keys, *skipped]
            return {k: list(kept.get(k, [])) for k in keys}, desired
        self._times = {}
        pop, rank, util = self._search(prob)
        t_search = time.perf_counter() - t0 - t_build
        # Pareto front of the final population (the serial round computes it in its kernel).
        if rank is None:
            rank = G.nondominated_rank(-pop.obj, pop.size.astype(np.float64))
        front = np.flatnonzero(rank == 0)
        values = np.column_stack([-pop.obj[front], pop.size[front].astype(np.float64)])
        if util is None:
            util = G.cluster_utilities(pop.off, pop.node, pop.cnt, front, prob.table, prob.job_res, prob.node_res)
        desired = desired_nodes(util, values, prob.num_real, self._min_util, self._max_util)
        limit = min(prob.num_real, desired) if self.shrink_to_desired else prob.num_real
        idx = select_result(values, limit)
        self._prev = (pop, list(prob.job_keys), list(prob.node_keys))
        if idx is None:  # no row within the real nodes: only the pinned jobs keep theirs
            if base_allocations is None:  # not in prob.meta: the base allocation as prob holds it
                base_allocations = row_to_allocations(base_row(prob, max(prob.base_width, 1)), 0, prob)
            allocations = {k: list(base_allocations[k]) if prob.pinned[j] else [] for j, k in enumerate(prob.job_keys)}
        else:
            allocations = row_to_allocations(pop, int(front[idx]), prob)
        for key in skipped:  # every job is listed; skipped ones get nothing unless kept
            allocations[key] = list(kept.get(key, []))
        elapsed = time.perf_counter() - t0
        best = float(-values[idx, 0]) if idx is not None else 0.0
        idx_real = select_result(values, prob.num_real)
        self.last_stats = {
            "round": self._round,
            "jobs": prob.num_jobs,
            "nodes": prob.num_real,
            "objective": best,
            # Best first objective within the real nodes (what the MILP oracle optimises).
            "objective_real": float(-values[idx_real, 0]) if idx_real is not None else 0.0,
            "desired_nodes": int(desired),
            "front_size": int(front.size),
            "build_s": t_build,
            "search_s": t_search,
            "total_s": elapsed,
            "population_bytes": nbytes(pop),
            "skipped": skipped,
            "generations": self._generations_run,
            **self._times,
        }
        LOG.info(
            "pollux round %d: %d jobs on %d nodes, objective %.4f, desired %d nodes, front %d, %.1f ms",
            self._round,
            prob.num_jobs,
            prob.num_real,
            best,
            desired,
            front.size,
            1e3 * elapsed,
        )
        if LOG.isEnabledFor(logging.DEBUG):
            for t, _i in enumerate(front):
                LOG.debug("solution %d: value %s utility %.4f", t, values[t].tolist(), util[t])
        return allocations, int(desired)

    # -- the genetic search ---------------------------------------------------------------
    def _arrays(self, prob: Problem) -> G.Arrays:
        if self.p is None:
            mode, p = G.SUM, 1.0
        elif self.p == 0.0:
            mode, p = G.GEOMETRIC, 0.0
        else:
            mode, p = (G.POWER_SHIFTED if self.power_shift else G.POWER), float(self.p)
        return G.Arrays(
            prob.job_res,
            prob.node_res,
            prob.max_rep,
            prob.min_rep,
            prob.pinned,
            prob.base_off,
            prob.base_node,
            prob.base_cnt,
            prob.table,
            prob.scale,
            prob.penalties(self.restart_penalty),
            int(mode),
            float(p),
        )

    def _scratch(self, prob: Problem) -> int:
        per_job_base = int(np.diff(prob.base_off).max()) if prob.num_jobs else 0
        return int(min(int(prob.max_rep.max()), prob.num_nodes)) + per_job_base + 2

    def _search(self, prob: Problem):
        """Return the final population and, when the search computed them, its ranks and front utilities."""
        P = self.pop_size
        J = prob.num_jobs
        width = J + prob.num_nodes + prob.base_width + 1
        A = self._arrays(prob)
        warm = adapt_previous(self._prev, prob)
        nwarm = None if warm is None else rows(warm)
        # Extra rows of the initial pool: a warm round has a whole population already.
        extra = P if warm is None else max(P // 4, 1)
        plan = make_plan(
            prob,
            seed=self.seed,
            round_=self._round,
            pop_size=P,
            generations=self.generations,
            patience=self.patience,
            mutation_rate=self.mutation_rate,
            polish=self.polish,
            scratch=self._scratch(prob),
            warm_rows=nwarm,
            extra=0 if self.init == "front" else extra,
            relax=getattr(self, "_relax", None),  # (policies pickled before it existed)
        )
        if self.init == "front":
            return self._search_front(prob, plan, width, A, warm), None, None
        if not self._use_parallel(max(P, extra, nwarm or 1), J):
            return self._search_serial(prob, plan, width, A, warm)
        return self._search_threaded(prob, plan, width, A, warm), None, None

    def _search_serial(self, prob: Problem, plan: G.Plan, width: int, A: G.Arrays, warm):
        """Run ``plan`` in one kernel (every step serial; see ``_ga/search.py``).

        Returns the final population, its ranks and the cluster utilities of its rank-0 rows.
        """
        P, J = self.pop_size, prob.num_jobs
        if warm is None:
            warm = G.new_pop(0, J, 1)
        src_rows = int(plan.seeds) + rows(warm)
        extra = plan.rand_rows.shape[0]
        fixed = G.new_pop(seed_buffer_rows(plan), J, width)
        pool = G.new_pop(src_rows + extra, J, width)
        cur = G.new_pop(2 * P, J, width)
        nxt = G.new_pop(2 * P, J, width)
        work = G.new_work(1, int(plan.scratch), prob.num_nodes, prob.job_res.shape[1])
        # The survivors of the initial pool (at most P), then the polished row.
        final = G.new_pop(min(P, src_rows + extra) + 1, J, width)
        base = base_row(prob, width)
        ran, n, rank, util = G.search_serial(plan, A, base, fixed, warm, pool, cur, nxt, work, final)
        self._generations_run = int(ran)
        return G.Pop(*(a[:n] for a in final)), rank, util

    def _search_threaded(self, prob: Problem, plan: G.Plan, width: int, A: G.Arrays, warm) -> G.Pop:
        """Run ``plan`` as the serial kernel does, step by step, each step a (parallel) kernel.

        Returns the final population (the polished row last when it is better).
        """
        P, J = self.pop_size, prob.num_jobs
        t0 = time.perf_counter()
        seeds = self._seed_rows(prob, plan, width, A)
        self._times["seed_s"] = time.perf_counter() - t0
        # Initial pool: seeds, warm rows, then heavily mutated copies of those.
        r = int(plan.seeds)
        src_rows = r + (rows(warm) if warm is not None else 0)
        pool = G.new_pop(src_rows + plan.rand_rows.shape[0], J, width)
        with parallel_region():
            self._repair_into(plan, seeds, np.arange(r, dtype=np.int64), 0.0, pool, 0, A)
            if warm is not None:
                self._repair_into(plan, warm, np.arange(rows(warm), dtype=np.int64), 0.0, pool, r, A)
            # Random feasible individuals around the seeds and warm rows: heavy mutation.
            self._repair_into(plan, pool, plan.rand_rows, float(plan.pm_init), pool, src_rows, A)
        keep = G.survive(-pool.obj, pool.size.astype(np.float64), pool.hash, P, float(plan.protect))
        cur = G.new_pop(2 * P, J, width)
        nxt = G.new_pop(2 * P, J, width)
        G.gather(pool, keep, cur)
        t1 = time.perf_counter()
        out = self._evolve(prob, plan, A, cur, nxt, keep.shape[0], keep.shape[0])
        t2 = time.perf_counter()
        final = polish_best(prob, plan, A, take(out, np.arange(keep.shape[0], dtype=np.int64)))
        self._times.update(pool_s=t1 - t0 - self._times["seed_s"], evolve_s=t2 - t1, polish_s=time.perf_counter() - t2)
        return final

    def _seed_rows(self, prob: Problem, plan: G.Plan, width: int, A: G.Arrays) -> G.Pop:
        """Build the seed rows of ``plan`` (see :func:`fastsched.policy._round.seed_plan`)."""
        scratch = int(plan.scratch)
        seeds = base_row(prob, width)
        # Repair the base first: greedy fills and the polish start from feasible rows.
        fixed = G.new_pop(seed_buffer_rows(plan), prob.num_jobs, width)
        relax = None  # the relaxation's seed reads the problem only and writes its own row: built beside
        if plan.relax >= 0:
            kind, reps = np.empty(prob.num_jobs, dtype=np.int64), np.empty(prob.num_jobs, dtype=np.int64)
            passes = plan.passes if plan.polish else np.int64(0)
            relax = (A, plan.num_real, plan.scratch, passes, plan.relax_transfers, kind, reps, fixed, plan.relax)
        with beside(G.relax_row if relax else None, relax):
            with parallel_region():
                self._repair_into(plan, seeds, np.zeros(1, np.int64), 0.0, fixed, 0, A)
            G.first_fit_rows(A, plan.limits, fixed, plan.ff_rows)
            for src, limit, dst in plan.fills.tolist():
                G.greedy_fill(fixed, src, limit, A, scratch, fixed, dst)
            real, npass = int(plan.num_real), int(plan.passes)
            for src, dst in zip(plan.polish_src.tolist(), plan.polish_dst.tolist(), strict=True):
                G.polish_row(fixed, src, A, real, scratch, npass, plan.transfers, 0, np.uint64(0), fixed, dst)
        return take(fixed, np.arange(int(plan.seeds), dtype=np.int64))

    def _evolve(self, prob: Problem, plan: G.Plan, A: G.Arrays, cur: G.Pop, nxt: G.Pop, count: int, start: int):
        J = prob.num_jobs
        parallel = self._use_parallel(count, J)
        work = G.new_work(G.CHUNKS if parallel else 1, int(plan.scratch), prob.num_nodes, prob.job_res.shape[1])
        kernel = G.evolve_parallel if parallel else G.evolve_serial
        with parallel_region():
            where, ran = kernel(
                plan.seed,
                int(plan.round_),
                int(plan.generations),
                int(plan.patience),
                count,
                start,
                float(plan.pm),
                float(plan.protect),
                cur,
                nxt,
                A,
                work,
            )
        self._generations_run = int(ran)
        return cur if where == 0 else nxt

    def _search_front(self, prob: Problem, plan: G.Plan, width: int, A: G.Arrays, warm) -> G.Pop:
        """Search from the previous rank-0 set only (``init="front"``)."""
        P = self.pop_size
        J = prob.num_jobs
        if warm is None:  # first round (or after an empty one): the base allocation alone
            warm = base_row(prob, max(prob.base_width, 1))
        # The adapted rows may repeat (jobs that left made them equal): keep distinct ones.
        pool = G.new_pop(rows(warm), J, width)
        with parallel_region():
            self._repair_into(plan, warm, np.arange(rows(warm), dtype=np.int64), 0.0, pool, 0, A)
        _, first = np.unique(pool.hash, return_index=True)
        first = np.sort(first)[:P].astype(np.int64)
        cur = G.new_pop(2 * P, J, width)
        nxt = G.new_pop(2 * P, J, width)
        G.gather(pool, first, cur)
        out = self._evolve(prob, plan, A, cur, nxt, P, first.shape[0])
        # pymoo hands the next round only the final rank-0 set.
        n = P if self._generations_run > 0 else first.shape[0]
        rank = G.nondominated_rank(-out.obj[:n], out.size[:n].astype(np.float64))
        if self._generations_run > 0:
            keep = np.flatnonzero(rank == 0).astype(np.int64)
        else:
            keep = np.arange(n, dtype=np.int64)
        return take(out, keep)

    def _use_parallel(self, P, J) -> bool:
        if self.parallel is not None:
            return bool(self.parallel)
        # A parallel launch per generation only pays off for large populations x jobs.
        return numba.get_num_threads() > 1 and P * J >= 50_000

    def _repair_into(self, plan: G.Plan, src, which, pm, dst, start, A):
        kernel = G.repair_parallel if self._use_parallel(which.shape[0], src.off.shape[1] - 1) else G.repair_serial
        kernel(stream_key(plan, start, REPAIR), src, which, float(pm), A, int(plan.scratch), dst, int(start))
