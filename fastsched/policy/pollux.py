"""``PolluxPolicy``: AdaptDL's scheduling policy on a numba NSGA-II (drop-in).

One round (:meth:`PolluxPolicy.optimize`):

1. :func:`~fastsched.policy.problem.build_problem` validates the dicts and builds arrays.
2. An initial population of sparse allocations: the previous round's final population
   adapted to the new jobs/nodes (warm start), the base allocation, first-fit and greedy
   marginal-gain fills at several cluster sizes, and mutated copies of these.
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
from fastsched.policy.problem import Problem, build_problem, sort_nodes

LOG = logging.getLogger(__name__)


def _key(seed, a, b, c):
    # numba returns the uint64 as a Python int; keep it uint64 so kernels type it so.
    return np.uint64(G.stream_key(np.uint64(seed), a, b, c))


__all__ = ["PolluxPolicy"]

# Local-search passes over the jobs per polished row (a pass that changes nothing ends it
# earlier; one or two usually suffice).
_POLISH_PASSES = 20
# Replica transfers between jobs and ruin-and-recreate kicks (the heavier local-search moves)
# run on problems of at most this many jobs x problem nodes; larger clusters are near-full
# in practice and single-job moves already cost milliseconds there.
_SMALL = 4096
# Ruin-and-recreate steps of the final polish (it stops after a quarter of them in a row
# found nothing better).
_KICKS = 64


def _rows(pop: G.Pop) -> int:
    return pop.off.shape[0]


def _nbytes(pop: G.Pop) -> int:
    return sum(a.nbytes for a in pop)


def _take(pop: G.Pop, rows: np.ndarray, width: int | None = None) -> G.Pop:
    """Rows ``rows`` of ``pop`` as a new population (``width``: entry columns, default same)."""
    out = G.new_pop(rows.shape[0], pop.off.shape[1] - 1, pop.node.shape[1] if width is None else width)
    G.gather(pop, np.ascontiguousarray(rows, dtype=np.int64), out)
    return out


def _concat(a: G.Pop, b: G.Pop) -> G.Pop:
    w = max(a.node.shape[1], b.node.shape[1])
    out = G.new_pop(_rows(a) + _rows(b), a.off.shape[1] - 1, w)
    for src, start in ((a, 0), (b, _rows(a))):
        k = _rows(src)
        out.off[start : start + k] = src.off
        out.node[start : start + k, : src.node.shape[1]] = src.node
        out.cnt[start : start + k, : src.cnt.shape[1]] = src.cnt
        for name in ("acc", "obj", "size", "hash"):
            getattr(out, name)[start : start + k] = getattr(src, name)
    return out


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
        population (adapted), the base allocation, first-fit and greedy fills and mutated
        copies of these. ``"front"``: only the previous round's rank-0 set (adapted; the base
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

    def _optimize(self, jobs, nodes, base_allocations, node_template):
        t0 = time.perf_counter()
        if self.seed is None:
            # Global legacy state on purpose: np.random.seed(...) must repeat runs.
            self.seed = int(np.random.randint(0, 2**62, dtype=np.int64))  # noqa: NPY002
        base_allocations = {} if base_allocations is None else base_allocations
        prob = build_problem(jobs, nodes, base_allocations, node_template, on_invalid_job=self.on_invalid_job)
        skipped = prob.meta.get("skipped", {})
        kept = prob.meta.get("kept", {})  # skipped non-preemptible jobs keep their allocation
        t_build = time.perf_counter() - t0
        self._round += 1
        if prob.num_jobs == 0 or prob.num_real == 0:
            self._prev = None
            desired = len(nodes) if prob.num_jobs == 0 else 1
            LOG.info(
                "pollux round %d: %d jobs, %d nodes: nothing to optimise", self._round, prob.num_jobs, prob.num_real
            )
            self.last_stats = {"round": self._round, "jobs": prob.num_jobs, "nodes": prob.num_real, "skipped": skipped}
            return {k: list(kept.get(k, [])) for k in jobs}, desired
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
        desired = self._desired_nodes(util, values, prob.num_real)
        limit = min(prob.num_real, desired) if self.shrink_to_desired else prob.num_real
        idx = self._select_result(values, limit)
        self._prev = (pop, list(prob.job_keys), list(prob.node_keys))
        if idx is None:  # no row within the real nodes: only the pinned jobs keep theirs
            allocations = {k: list(base_allocations[k]) if prob.pinned[j] else [] for j, k in enumerate(prob.job_keys)}
        else:
            allocations = self._row_to_allocations(pop, int(front[idx]), prob)
        for key in skipped:  # every job is listed; skipped ones get nothing unless kept
            allocations[key] = list(kept.get(key, []))
        elapsed = time.perf_counter() - t0
        best = float(-values[idx, 0]) if idx is not None else 0.0
        idx_real = self._select_result(values, prob.num_real)
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
            "population_bytes": _nbytes(pop),
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

    # -- result selection (AdaptDL semantics) ---------------------------------------------
    @staticmethod
    def _select_result(values, max_nodes):
        if np.amin(values[:, 1]) > max_nodes:
            return None
        return int(np.argmin(np.where(values[:, 1] <= max_nodes, values[:, 0], 0)))

    def _desired_nodes(self, utilities, values, num_nodes):
        idx = self._select_result(values, num_nodes)
        if idx is not None and self._min_util <= utilities[idx] <= self._max_util:
            return num_nodes
        target = (self._min_util + self._max_util) / 2
        best_util = np.inf
        best_nodes = num_nodes
        # Plain floats: numpy scalars and np.isclose per element cost ~1 us each, which was
        # 10% of a 16-job round.
        for util, size in zip(np.asarray(utilities).tolist(), np.asarray(values)[:, 1].tolist(), strict=True):
            if util < self._min_util:
                continue
            # np.isclose's rule (rtol 1e-5, atol 1e-8; infinity is close only to itself).
            close = best_util != np.inf and abs(util - best_util) <= 1e-8 + 1e-5 * abs(best_util)
            if close and size > best_nodes:
                best_nodes = size
            if abs(util - target) < abs(best_util - target):
                best_util = util
                best_nodes = size
        return int(best_nodes)

    @staticmethod
    def _row_to_allocations(pop, row, prob: Problem) -> dict:
        off = pop.off[row]
        out = {}
        for j, key in enumerate(prob.job_keys):
            alloc = []
            for q in range(off[j], off[j + 1]):
                n = int(pop.node[row, q])
                if n < prob.num_real:  # placeholders are not real nodes
                    alloc.extend([prob.node_keys[n]] * int(pop.cnt[row, q]))
            out[key] = alloc
        return out

    # -- the genetic search ---------------------------------------------------------------
    def _arrays(self, prob: Problem) -> G.Arrays:
        if self.p is None:
            mode, p = G.SUM, 1.0
        elif self.p == 0.0:
            mode, p = G.GEOMETRIC, 0.0
        else:
            mode, p = (G.POWER_SHIFTED if self.power_shift else G.POWER), float(self.p)
        penalty = prob.penalties(self.restart_penalty)
        # Always a fresh, writable float64[J] array: one specialisation of every kernel (a
        # broadcast view is read-only, and numba types read-only arrays apart).
        penalty = np.broadcast_to(np.asarray(penalty, dtype=np.float64), (prob.num_jobs,)).copy()
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
            penalty,
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
        scratch = self._scratch(prob)
        warm = self._adapt_previous(prob)
        if self.init == "front":
            return self._search_front(prob, width, A, scratch, warm), None, None
        # Extra rows of the initial pool: a warm round has a whole population already.
        extra = P if warm is None else max(P // 4, 1)
        if not self._use_parallel(max(P, extra, _rows(warm) if warm is not None else 1), J):
            return self._search_serial(prob, width, A, scratch, warm, extra)
        t0 = time.perf_counter()
        seeds = self._seed_rows(prob, width, A, scratch, warm is not None)
        self._times["seed_s"] = time.perf_counter() - t0
        # Initial pool: seeds, warm rows, then heavily mutated copies of those.
        src_rows = _rows(seeds) + (_rows(warm) if warm is not None else 0)
        pool = G.new_pop(src_rows + extra, J, width)
        with parallel_region():
            self._repair_into(seeds, np.arange(_rows(seeds), dtype=np.int64), 0.0, pool, 0, A, scratch)
            if warm is not None:
                self._repair_into(warm, np.arange(_rows(warm), dtype=np.int64), 0.0, pool, _rows(seeds), A, scratch)
            # Random feasible individuals around the seeds and warm rows: heavy mutation.
            rows = self._pool_rows(src_rows, extra)
            self._repair_into(pool, rows, self._pm_init(J), pool, src_rows, A, scratch)
        protect = float(prob.num_real)
        keep = G.survive(-pool.obj, pool.size.astype(np.float64), pool.hash, P, protect)
        cur = G.new_pop(2 * P, J, width)
        nxt = G.new_pop(2 * P, J, width)
        G.gather(pool, keep, cur)
        t1 = time.perf_counter()
        out = self._evolve(prob, A, scratch, cur, nxt, keep.shape[0], keep.shape[0])
        t2 = time.perf_counter()
        final = self._polish_best(prob, A, scratch, _take(out, np.arange(keep.shape[0], dtype=np.int64)))
        self._times.update(pool_s=t1 - t0 - self._times["seed_s"], evolve_s=t2 - t1, polish_s=time.perf_counter() - t2)
        return final, None, None

    def _pool_rows(self, src_rows: int, extra: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed % (2**32), self._round])
        return rng.integers(0, src_rows, size=extra).astype(np.int64)

    @staticmethod
    def _pm_init(J: int) -> float:
        return min(1.0, max(0.1, 8.0 / J))

    def _search_serial(self, prob: Problem, width: int, A: G.Arrays, scratch: int, warm, extra: int):
        """Run the steps of :meth:`_search` in one kernel (every step serial; see ``_ga/search.py``).

        Returns the final population, its ranks and the cluster utilities of its rank-0 rows.
        """
        P, J = self.pop_size, prob.num_jobs
        limits, ff_rows, fills, polishes, rows, r = self._seed_plan(prob, warm is not None)
        nwarm = _rows(warm) if warm is not None else 0
        if warm is None:
            warm = G.new_pop(0, J, 1)
        src_rows = r + nwarm
        transfers = self._transfers(prob)
        i64 = np.int64
        plan = G.Plan(
            seed=np.uint64(self.seed),
            round_=i64(self._round),
            generations=i64(self.generations),
            patience=i64(0 if self.patience is None else self.patience),
            pm=np.float64(min(1.0, self.mutation_rate / J)),
            protect=np.float64(prob.num_real),
            scratch=i64(scratch),
            num_real=i64(prob.num_real),
            passes=i64(_POLISH_PASSES),
            transfers=np.bool_(transfers),
            kicks=i64(_KICKS if transfers else 0),
            polish=np.bool_(self.polish),
            limits=np.array(limits, dtype=np.int64),
            ff_rows=np.array(ff_rows, dtype=np.int64),
            fills=np.array(fills, dtype=np.int64).reshape(-1, 3),
            polish_src=np.array([s for s, _ in polishes], dtype=np.int64),
            polish_dst=np.array([d for _, d in polishes], dtype=np.int64),
            seeds=i64(r),
            rand_rows=self._pool_rows(src_rows, extra),
            pm_init=np.float64(self._pm_init(J)),
            count=i64(P),
        )
        fixed = G.new_pop(rows, J, width)
        pool = G.new_pop(src_rows + extra, J, width)
        cur = G.new_pop(2 * P, J, width)
        nxt = G.new_pop(2 * P, J, width)
        work = G.new_work(1, scratch, prob.num_nodes, prob.job_res.shape[1])
        # The survivors of the initial pool (at most P), then the polished row.
        final = G.new_pop(min(P, src_rows + extra) + 1, J, width)
        base = self._base_row(prob, width)
        ran, n, rank, util = G.search_serial(plan, A, base, fixed, warm, pool, cur, nxt, work, final)
        self._generations_run = int(ran)
        return G.Pop(*(a[:n] for a in final)), rank, util

    def _evolve(self, prob: Problem, A: G.Arrays, scratch: int, cur: G.Pop, nxt: G.Pop, count: int, start: int):
        J = prob.num_jobs
        pm = min(1.0, self.mutation_rate / J)
        parallel = self._use_parallel(count, J)
        work = G.new_work(G.CHUNKS if parallel else 1, scratch, prob.num_nodes, prob.job_res.shape[1])
        kernel = G.evolve_parallel if parallel else G.evolve_serial
        with parallel_region():
            where, ran = kernel(
                np.uint64(self.seed),
                self._round,
                self.generations,
                0 if self.patience is None else self.patience,
                count,
                start,
                pm,
                float(prob.num_real),
                cur,
                nxt,
                A,
                work,
            )
        self._generations_run = int(ran)
        return cur if where == 0 else nxt

    def _polish_best(self, prob: Problem, A: G.Arrays, scratch: int, pop: G.Pop) -> G.Pop:
        """Append the local-search polish of the best row within the real nodes."""
        if not self.polish:
            return pop
        ok = np.flatnonzero(pop.size <= prob.num_real)
        if ok.size == 0:
            return pop
        best = int(ok[np.argmax(pop.obj[ok])])
        out = G.new_pop(1, prob.num_jobs, pop.node.shape[1])
        key = _key(self.seed, self._round, 0, 11)
        transfers = self._transfers(prob)
        kicks = _KICKS if transfers else 0  # ruin-and-recreate is a small-problem tool
        G.polish_row(pop, best, A, prob.num_real, scratch, _POLISH_PASSES, transfers, kicks, key, out, 0)
        if out.obj[0] <= pop.obj[best]:
            return pop
        return _concat(pop, out)

    def _search_front(self, prob: Problem, width: int, A: G.Arrays, scratch: int, warm) -> G.Pop:
        """Search from the previous rank-0 set only (``init="front"``)."""
        P = self.pop_size
        J = prob.num_jobs
        if warm is None:  # first round (or after an empty one): the base allocation alone
            warm = G.new_pop(1, J, max(prob.base_width, 1))
            warm.off[0] = prob.base_off
            warm.node[0, : prob.base_width] = prob.base_node
            warm.cnt[0, : prob.base_width] = prob.base_cnt
        # The adapted rows may repeat (jobs that left made them equal): keep distinct ones.
        pool = G.new_pop(_rows(warm), J, width)
        with parallel_region():
            self._repair_into(warm, np.arange(_rows(warm), dtype=np.int64), 0.0, pool, 0, A, scratch)
        _, first = np.unique(pool.hash, return_index=True)
        first = np.sort(first)[:P].astype(np.int64)
        cur = G.new_pop(2 * P, J, width)
        nxt = G.new_pop(2 * P, J, width)
        G.gather(pool, first, cur)
        out = self._evolve(prob, A, scratch, cur, nxt, P, first.shape[0])
        # pymoo hands the next round only the final rank-0 set.
        n = P if self._generations_run > 0 else first.shape[0]
        rank = G.nondominated_rank(-out.obj[:n], out.size[:n].astype(np.float64))
        if self._generations_run > 0:
            keep = np.flatnonzero(rank == 0).astype(np.int64)
        else:
            keep = np.arange(n, dtype=np.int64)
        return _take(out, keep)

    @staticmethod
    def _transfers(prob: Problem) -> bool:
        return prob.num_jobs * prob.num_nodes <= _SMALL

    def _use_parallel(self, P, J) -> bool:
        if self.parallel is not None:
            return bool(self.parallel)
        # A parallel launch per generation only pays off for large populations x jobs.
        return numba.get_num_threads() > 1 and P * J >= 50_000

    def _repair_into(self, src, rows, pm, dst, start, A, scratch):
        kernel = G.repair_parallel if self._use_parallel(rows.shape[0], src.off.shape[1] - 1) else G.repair_serial
        kernel(_key(self.seed, self._round, int(start), 9), src, rows, float(pm), A, scratch, dst, int(start))

    def _seed_plan(self, prob: Problem, warm: bool):
        """Plan the seed rows: ``(limits, first-fit rows, greedy fills, polishes, rows, seeds)``.

        Base allocation (row 0), first fit and greedy fills at several cluster sizes, and the
        local-search polish of each. ``fills`` lists ``(source row, node limit, row)`` and
        ``polishes`` ``(source row, row)`` in the order they run.
        """
        J, N, N2 = prob.num_jobs, prob.num_real, prob.num_nodes
        # A ladder of cluster sizes (N2, N, N/2, ..., 1): well-packed small clusters give
        # the Pareto front (and so the desired-size decision) realistic utilities. A warm
        # round inherits those sizes from the previous population: first fit at N is enough.
        limits = {N2, N}
        L = N
        while L > 1 and not warm:
            L = (L + 1) // 2
            limits.add(L)
        if warm:
            limits = {N}
        limits = sorted(limits, reverse=True)
        small = J * N2 <= _SMALL
        has_base = prob.base_width > 0
        rows = 1 + 2 * len(limits) + 2 + 3
        # Row layout: each size's first fit, followed by its greedy fill where there is one.
        # Large problems: greedy fills of the smaller sizes cost more than the generations
        # that find them; first fit marks those sizes.
        ff_rows = []
        r = 1
        for L in limits:
            ff_rows.append(r)
            r += 2 if (L == N or small) else 1
        fills = []
        r = 1
        at_n = []  # seeds within the real nodes, to polish
        for L in limits:
            r += 1
            if L == N or small:
                fills.append((r - 1, L, r))
                r += 1
            if L == N:
                at_n += [r - 1] if not small else [r - 2, r - 1]
        for L in (N, N2) if (small or has_base) else ():
            fills.append((0, L, r))
            r += 1
        polishes = []
        if self.polish:
            # The allocation optimize returns lies within the real nodes: polish there.
            for src in at_n + ([0] if has_base else []):
                polishes.append((src, r))
                r += 1
        return limits, ff_rows, fills, polishes, rows, r

    def _seed_rows(self, prob: Problem, width: int, A: G.Arrays, scratch: int, warm: bool) -> G.Pop:
        """Build the seed rows (see :meth:`_seed_plan`)."""
        J, N = prob.num_jobs, prob.num_real
        limits, ff_rows, fills, polishes, rows, r = self._seed_plan(prob, warm)
        seeds = self._base_row(prob, width)
        # Repair the base first: greedy fills and the polish start from feasible rows.
        fixed = G.new_pop(rows, J, width)
        with parallel_region():
            self._repair_into(seeds, np.zeros(1, np.int64), 0.0, fixed, 0, A, scratch)
        G.first_fit_rows(A, np.array(limits, dtype=np.int64), fixed, np.array(ff_rows, dtype=np.int64))
        for src, L, dst in fills:
            G.greedy_fill(fixed, src, L, A, scratch, fixed, dst)
        transfers = self._transfers(prob)
        for src, dst in polishes:
            G.polish_row(fixed, src, A, N, scratch, _POLISH_PASSES, transfers, 0, np.uint64(0), fixed, dst)
        return _take(fixed, np.arange(r, dtype=np.int64))

    @staticmethod
    def _base_row(prob: Problem, width: int) -> G.Pop:
        seeds = G.new_pop(1, prob.num_jobs, width)
        b = prob.base_width
        seeds.off[0] = prob.base_off
        seeds.node[0, :b] = prob.base_node
        seeds.cnt[0, :b] = prob.base_cnt
        return seeds

    def _adapt_previous(self, prob: Problem):
        """Previous final population re-indexed to this round's jobs and nodes (unrepaired).

        Real nodes map by key; a new node takes over an old placeholder (the autoscaler's
        new node is what the placeholder stood for); remaining old placeholders map to the
        new placeholders in order. Jobs map by key; new jobs start empty.
        """
        if self._prev is None:
            return None
        pop, old_jobs, old_nodes = self._prev
        J, N, N2 = prob.num_jobs, prob.num_real, prob.num_nodes
        Jp, Np = len(old_jobs), len(old_nodes)
        n2p = int(pop.node.max()) + 1 if pop.off[:, -1].any() else 0
        n2p = max(n2p, 2 * Np)
        jmap = np.full(max(Jp, 1), -1, dtype=np.int64)
        new_j = {k: i for i, k in enumerate(prob.job_keys)}
        for i, k in enumerate(old_jobs):
            jmap[i] = new_j.get(k, -1)
        nmap = np.full(max(n2p, 1), -1, dtype=np.int64)
        new_n = {k: i for i, k in enumerate(prob.node_keys)}
        old_set = set(old_nodes)
        for i, k in enumerate(old_nodes):
            nmap[i] = new_n.get(k, -1)
        ph = Np
        for i, k in enumerate(prob.node_keys):
            if k not in old_set and ph < n2p:
                nmap[ph] = i
                ph += 1
        t = N
        while ph < n2p and t < N2:
            nmap[ph] = t
            ph += 1
            t += 1
        rows = _rows(pop)
        per = np.diff(pop.off, axis=1)  # [rows, Jp]
        lens = pop.off[:, -1]
        mask = np.arange(pop.node.shape[1])[None, :] < lens[:, None]
        e_node = pop.node[mask].astype(np.int64)
        e_cnt = pop.cnt[mask]
        e_row = np.repeat(np.arange(rows), lens)
        e_job = np.repeat(np.tile(np.arange(Jp), rows), per.ravel())
        nj = jmap[e_job]
        nn = nmap[e_node]
        ok = (nj >= 0) & (nn >= 0)
        e_row, nj, nn, e_cnt = e_row[ok], nj[ok], nn[ok], e_cnt[ok]
        order = np.lexsort((nn, nj, e_row))
        e_row, nj, nn, e_cnt = e_row[order], nj[order], nn[order], e_cnt[order]
        counts = np.bincount(e_row * J + nj, minlength=rows * J).reshape(rows, J)
        width = int(counts.sum(axis=1).max()) if rows else 0
        out = G.new_pop(rows, J, width)
        out.off[:, 1:] = np.cumsum(counts, axis=1)
        pos = np.arange(e_row.shape[0]) - np.concatenate([[0], np.cumsum(counts.sum(axis=1))])[e_row]
        out.node[e_row, pos] = nn
        out.cnt[e_row, pos] = e_cnt
        return out
