"""One scheduling round as arrays: dicts of JobInfo/NodeInfo → contiguous typed arrays.

Everything the genetic kernels read is built here, once per round, after validating the
inputs (numba does not bounds-check): job and node orders, resource matrices, template
placeholder nodes, replica bounds, the base allocation as CSR entries, the pinned mask, the
objective scale and the speedup tables.
"""

from __future__ import annotations

import logging
import numbers
from dataclasses import dataclass, field

import numpy as np

from fastsched.goodput.speedup import SpeedupFunction
from fastsched.policy._checks import InvalidJobError
from fastsched.policy._checks import check_base as _check_base
from fastsched.policy._checks import check_count as _check_count
from fastsched.policy._checks import check_info as _check_info
from fastsched.policy._checks import check_job as _check_job
from fastsched.policy._ga.fitness import penalty_array

LOG = logging.getLogger(__name__)

__all__ = [
    "MAX_NODE_REPLICAS",
    "MAX_TABLE_BYTES",
    "InvalidJobError",
    "Problem",
    "build_problem",
    "sort_nodes",
    "speedup_tables",
]

# Most replicas of one job that a single node (or the template) may hold. The speedup tables,
# the genome's int32 replica counts and the search's scratch rows are sized by what the nodes
# can hold, so one node advertising 2**40 GPUs would size them by 2**40. Real nodes hold 8 to
# 16 GPUs and ~110 pods; 65,536 leaves room for CPU-only jobs counted in millicores.
MAX_NODE_REPLICAS = 2**16
# Largest speedup table of one round (float64[J, K + 1, Rmax + 1]): past it the round is refused
# with an error naming the job with the most replicas instead of dying in a huge allocation.
MAX_TABLE_BYTES = 2**30


def _key_order(key):
    """Return a sort key for job/node keys of possibly mixed types.

    Numbers (by value) come before everything else (grouped by type name, then by value),
    so ``1`` and ``"1"`` both sort.
    """
    if isinstance(key, numbers.Real) and not isinstance(key, bool):
        return (0, "", key)
    return (1, type(key).__name__, key)


@dataclass
class Problem:
    """Arrays of one round.

    ``J`` jobs, ``N`` real nodes, ``N2 = N + placeholders``, ``R`` resource types.

    Attributes
    ----------
    job_keys, node_keys : list
        Job order (pinned first, then min_replicas, then creation time) and real-node order
        (non-preemptible first, then by key). Placeholder ``k`` is problem node ``N + k``.
    rtypes : list of str
        Resource types requested by at least one job (sorted).
    job_res : int64[J, R], node_res : int64[N2, R]
    max_rep, min_rep : int64[J]
        Replica bounds; ``max_rep`` is clipped to what the whole problem can hold.
    pinned : bool[J]
        Non-preemptible jobs that already have an allocation: kept as they are.
    base_off : int64[J + 1], base_node : int32[B], base_cnt : int32[B]
        Base allocation as sorted ``(node, count)`` entries per job.
    scale : float64[J]
        Dominant resource share x ``N2``: a job's speedup is multiplied by this.
    table : float64[J, K + 1, Rmax + 1]
        ``table[j, k, r]`` = speedup of ``r`` replicas on ``k`` nodes (``k`` clipped at ``K``).
    penalty : float64[J] or None
        Per-job restart penalties (``JobInfo.restart_penalty``), NaN where a job has none;
        ``None`` when no job has one (the policy's constant applies to all).

    Examples
    --------
    >>> from fastsched.policy import JobInfo, NodeInfo
    >>> nodes = {"n0": NodeInfo({"gpu": 4}, False), "n1": NodeInfo({"gpu": 4}, False)}
    >>> jobs = {"a": JobInfo({"gpu": 1}, lambda n, r: r, 0, 0, 4),
    ...         "b": JobInfo({"gpu": 2}, lambda n, r: r, 1, 1, 2)}
    >>> prob = build_problem(jobs, nodes, {"a": ["n0", "n0"]}, None)
    >>> prob.job_keys, prob.node_keys, prob.num_jobs, prob.num_nodes
    (['a', 'b'], ['n0', 'n1'], 2, 2)
    >>> prob.max_rep.tolist(), prob.base_node.tolist(), prob.base_cnt.tolist()
    ([4, 2], [0], [2])
    """

    job_keys: list
    node_keys: list
    num_real: int
    rtypes: list
    job_res: np.ndarray
    node_res: np.ndarray
    max_rep: np.ndarray
    min_rep: np.ndarray
    pinned: np.ndarray
    base_off: np.ndarray
    base_node: np.ndarray
    base_cnt: np.ndarray
    scale: np.ndarray
    table: np.ndarray
    penalty: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def penalties(self, default: float) -> np.ndarray:
        """Restart penalty of every job as the kernels take it (a fresh float64[J] array).

        A job's own penalty where it has one, else ``default``.

        Examples
        --------
        >>> from fastsched.policy import JobInfo, NodeInfo
        >>> nodes = {"n0": NodeInfo({"gpu": 4}, False)}
        >>> jobs = {"a": JobInfo({"gpu": 1}, lambda n, r: r, 0, 0, 4),
        ...         "b": JobInfo({"gpu": 1}, lambda n, r: r, 1, 0, 4, restart_penalty=0.5)}
        >>> build_problem(jobs, nodes, {}, None).penalties(0.1).tolist()
        [0.1, 0.5]
        >>> build_problem({"a": jobs["a"]}, nodes, {}, None).penalties(0.1).tolist()
        [0.1]
        """
        if self.penalty is None:
            return penalty_array(float(default), self.num_jobs)
        return penalty_array(np.where(np.isnan(self.penalty), float(default), self.penalty), self.num_jobs)

    @property
    def num_jobs(self) -> int:
        """Number of jobs ``J``."""
        return len(self.job_keys)

    @property
    def num_nodes(self) -> int:
        """Problem nodes: real nodes plus template placeholders."""
        return int(self.node_res.shape[0])

    @property
    def base_width(self) -> int:
        """Number of entries of the base allocation (``len(base_node)``)."""
        return int(self.base_node.shape[0])


def sort_nodes(nodes: dict) -> list:
    """Node keys, non-preemptible nodes first, then by key (AdaptDL's order).

    Keys of mixed types (``1`` and ``"1"``) are ordered deterministically: numbers by value
    first, then other keys grouped by type name. Keys of one type that do not compare raise a
    ``ValueError``.

    Examples
    --------
    >>> from fastsched.policy import NodeInfo
    >>> nodes = {"b": NodeInfo({"gpu": 1}, False), 2: NodeInfo({"gpu": 1}, False),
    ...          "a": NodeInfo({"gpu": 1}, True), 1: NodeInfo({"gpu": 1}, False)}
    >>> sort_nodes(nodes)
    [1, 2, 'b', 'a']
    """
    try:
        return [k for k, _ in sorted(nodes.items(), key=lambda kv: (bool(kv[1].preemptible), _key_order(kv[0])))]
    except TypeError as exc:
        raise ValueError(f"node keys must be mutually comparable to order the nodes: {exc}") from exc


def _job_order(jobs: dict, base_allocations: dict) -> tuple[list, dict]:
    pinned = {k: _is_pinned(job, base_allocations.get(k)) for k, job in jobs.items()}
    # Pinned jobs first (their allocation is fixed and takes resources first), then fewer
    # min_replicas (so guarantees do not starve the cluster), then FIFO by creation time.
    keys = sorted(jobs, key=lambda k: (not pinned[k], jobs[k].min_replicas, jobs[k].creation_timestamp))
    return keys, pinned


def _call_generic(fn, key, n, r):
    """Evaluate an arbitrary speedup callable on arrays, falling back to scalars."""
    try:
        out = np.asarray(fn(n, r), dtype=np.float64)
        if out.shape != n.shape:
            out = np.broadcast_to(out, n.shape).astype(np.float64)
    except Exception:  # callables that only take scalars
        try:
            out = np.array([float(fn(int(a), int(b))) for a, b in zip(n, r, strict=False)], dtype=np.float64)
        except Exception as exc:
            raise InvalidJobError(key, f"speedup_fn of job {key!r} failed: {exc}") from exc
    return out


def _check_values(key, values) -> None:
    if not np.all(np.isfinite(values)):
        raise InvalidJobError(key, f"speedup_fn of job {key!r} returned NaN or inf")
    if np.any(values < 0):
        raise InvalidJobError(key, f"speedup_fn of job {key!r} returned a negative speedup")


def speedup_tables(fns: list, keys: list, max_reps: np.ndarray, num_nodes: int) -> np.ndarray:
    """Stack per-job speedup tables into ``float64[J, K + 1, Rmax + 1]``.

    A fastsched SpeedupFunction (``is_tabulated``) is read from its ``[2, R]`` table (single
    vs multi node); ``K = 2`` unless some job has another callable, which is evaluated once per
    distinct function object over every ``(nodes, replicas)`` pair it can meet.

    Examples
    --------
    >>> import numpy as np
    >>> t = speedup_tables([lambda n, r: r / n], ["job"], np.array([3]), num_nodes=2)
    >>> t.shape
    (1, 3, 4)
    >>> t[0, 1].tolist(), t[0, 2].tolist()
    ([0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 1.0, 1.5])
    """
    njobs = len(fns)
    rmax = int(max_reps.max()) if njobs else 0
    kmax = 2
    generic = [getattr(fn, "is_tabulated", False) is not True for fn in fns]
    for j in range(njobs):
        if generic[j]:
            kmax = max(kmax, min(int(max_reps[j]), num_nodes))
    nbytes = 8 * njobs * (kmax + 1) * (rmax + 1)
    if nbytes > MAX_TABLE_BYTES:
        # Blame the job that makes the tables largest: a callable's node-count axis, if any.
        span = [min(int(max_reps[j]), num_nodes) if generic[j] else 0 for j in range(njobs)]
        j = int(np.argmax(span)) if kmax > 2 else int(np.argmax(max_reps))
        raise InvalidJobError(
            keys[j],
            f"the speedup tables of this round would take {nbytes / 2**30:.3g} GiB (more than MAX_TABLE_BYTES = "
            f"{MAX_TABLE_BYTES / 2**30:g} GiB): job {keys[j]!r} can take up to {int(max_reps[j])} replicas; "
            "lower its max_replicas (or give it a SpeedupFunction, tabulated by replicas only)",
        )
    table = np.zeros((njobs, kmax + 1, rmax + 1), dtype=np.float64)
    # Every job's missing table range in one launch when that runs on the GPU (a no-op on the
    # CPU, where each table fills lazily below).
    SpeedupFunction.fill_tables([fn for fn, g in zip(fns, generic, strict=True) if not g], rmax)
    # Deduplicate by function object: jobs often share one (same model, same hints).
    groups: dict = {}
    for j, fn in enumerate(fns):
        groups.setdefault(id(fn), []).append(j)
    for members in groups.values():
        fn = fns[members[0]]
        m = int(max(max_reps[j] for j in members))
        if m == 0:
            continue
        key = keys[members[0]]
        if not generic[members[0]]:
            t = np.asarray(fn.table(m))[:, : m + 1]
            _check_values(key, t)
            for j in members:
                mj = int(max_reps[j]) + 1
                table[j, 1, :mj] = t[0, :mj]
                table[j, 2:, :mj] = t[1, :mj]
        else:
            kk = min(m, num_nodes)
            r_idx, n_idx = np.meshgrid(np.arange(1, m + 1), np.arange(1, kk + 1), indexing="ij")
            ok = n_idx <= r_idx
            n_arr = n_idx[ok].astype(np.int64)
            r_arr = r_idx[ok].astype(np.int64)
            vals = _call_generic(fn, key, n_arr, r_arr)
            _check_values(key, vals)
            sub = np.zeros((kmax + 1, m + 1), dtype=np.float64)
            sub[n_arr, r_arr] = vals
            if kk < kmax:  # Node counts beyond what this job can meet: copy the last one.
                sub[kk + 1 :, :] = sub[kk, :]
            for j in members:
                mj = int(max_reps[j]) + 1
                table[j, :, :mj] = sub[:, :mj]
    return table


def build_problem(jobs: dict, nodes: dict, base_allocations: dict, node_template, on_invalid_job="raise") -> Problem:
    """Validate one round's inputs and convert them to a :class:`Problem`.

    Parameters
    ----------
    jobs, nodes, base_allocations, node_template
        As for :meth:`fastsched.policy.PolluxPolicy.optimize`.
    on_invalid_job : {"raise", "skip"}
        A job that is invalid or can never be placed (a resource no node nor the template
        has, no request at all unless pinned, ``min_replicas > max_replicas``, a failing
        speedup function, speedup tables over ``MAX_TABLE_BYTES`` with its replicas):
        raise :class:`InvalidJobError` (default), or leave it out of the problem, log a
        warning with the reason and record it in ``meta["skipped"]`` (job key → reason).
        A skipped job that is non-preemptible and has a base allocation keeps it: it is left
        out of the problem with its resources taken from its nodes, and listed in
        ``meta["kept"]`` (job key → its allocation).

    Raises
    ------
    TypeError
        Non-dict inputs or objects without the JobInfo/NodeInfo attributes.
    ValueError
        Unknown node keys in ``base_allocations``; base allocations beyond a job's
        ``max_replicas`` or (summed) a node's resources; node keys that cannot be ordered; a
        node (or the template) that would hold more than ``MAX_NODE_REPLICAS`` replicas
        of one job; counts above 2**53;
        and, with ``on_invalid_job="raise"``, :class:`InvalidJobError` for the cases above.

    Notes
    -----
    Base allocations of job keys not in ``jobs`` are ignored (finished jobs).

    Examples
    --------
    >>> from fastsched.policy import JobInfo, NodeInfo
    >>> nodes = {"n0": NodeInfo({"gpu": 4}, False)}
    >>> jobs = {"a": JobInfo({"gpu": 1}, lambda n, r: r, 0, 0, 4),
    ...         "b": JobInfo({"tpu": 1}, lambda n, r: r, 1, 0, 4)}
    >>> prob = build_problem(jobs, nodes, {}, None, on_invalid_job="skip")
    >>> prob.job_keys, list(prob.meta["skipped"])
    (['a'], ['b'])
    """
    if on_invalid_job not in ("raise", "skip"):
        raise ValueError(f"on_invalid_job must be 'raise' or 'skip', got {on_invalid_job!r}")
    skipped: dict = {}
    kept: dict = {}
    while True:
        try:
            prob = _build(jobs, nodes, base_allocations, node_template)
        except InvalidJobError as exc:
            if on_invalid_job == "raise" or exc.key not in jobs:
                raise
            job = jobs[exc.key]
            if _is_pinned(job, base_allocations.get(exc.key)):
                # Non-preemptible jobs keep their allocation (AdaptDL's contract): left out of
                # the search, their replicas stay where they are and keep their resources.
                nodes = _reserve(nodes, exc, job, list(base_allocations[exc.key]))
                kept[exc.key] = list(base_allocations[exc.key])
                base_allocations = {k: v for k, v in base_allocations.items() if k != exc.key}
                LOG.warning("non-preemptible job %r kept as it is, out of this round's search: %s", exc.key, exc)
            else:
                LOG.warning("job %r skipped this round: %s", exc.key, exc)
            skipped[exc.key] = str(exc)
            jobs = {k: v for k, v in jobs.items() if k != exc.key}
            continue
        prob.meta["skipped"] = skipped
        prob.meta["kept"] = kept
        return prob


def _is_pinned(job, alloc) -> bool:
    """Whether ``job`` is non-preemptible and already has an allocation (kept as it is)."""
    return (not getattr(job, "preemptible", True)) and bool(alloc) and not isinstance(alloc, (str, bytes))


class _ReducedNode:
    """A node less the resources of a kept job's replicas (what the search may still use)."""

    __slots__ = ("resources", "preemptible")

    def __init__(self, resources: dict, preemptible):
        self.resources = resources
        self.preemptible = preemptible


def _reserve(nodes: dict, exc: InvalidJobError, job, alloc: list) -> dict:
    """``nodes`` less what ``job``'s replicas in ``alloc`` use.

    Raises ``exc`` (the job's own error) when its request cannot be read, and a ``ValueError``
    when the allocation does not fit (as for any base allocation).
    """
    try:
        res = job.resources
        need = {rt: _check_count(f"jobs[{exc.key!r}].resources[{rt!r}]", v) for rt, v in res.items()}
    except (AttributeError, TypeError, ValueError):
        raise exc from None
    out = dict(nodes)
    for nk in alloc:
        if nk not in nodes:
            raise ValueError(f"base_allocations[{exc.key!r}] names unknown node {nk!r}")
        node = out[nk]
        _check_info("nodes", nk, node, ("resources", "preemptible"))
        have = dict(node.resources)
        for rt, amount in need.items():
            left = _check_count(f"nodes[{nk!r}].resources[{rt!r}]", have.get(rt, 0)) - amount
            if left < 0:
                raise ValueError(
                    f"base_allocations[{exc.key!r}] use more of resource {rt!r} on node {nk!r} than it has"
                )
            have[rt] = left
        out[nk] = _ReducedNode(have, node.preemptible)
    return out


def _build(jobs: dict, nodes: dict, base_allocations: dict, node_template) -> Problem:
    for name, d in (("jobs", jobs), ("nodes", nodes), ("base_allocations", base_allocations)):
        if not isinstance(d, dict):
            raise TypeError(f"{name} must be a dict, got {type(d).__name__}")
    for k, job in jobs.items():
        _check_job(k, job)
    for k, node in nodes.items():
        _check_info("nodes", k, node, ("resources", "preemptible"))
        for rk, rv in node.resources.items():
            _check_count(f"nodes[{k!r}].resources[{rk!r}]", rv)
    if node_template is not None:
        _check_info("node_template", "template", node_template, ("resources", "preemptible"))
        for rk, rv in node_template.resources.items():
            _check_count(f"node_template.resources[{rk!r}]", rv)
    _check_base(jobs, nodes, base_allocations)

    job_keys, pinned_of = _job_order(jobs, base_allocations)
    node_keys = sort_nodes(nodes)
    num_real = len(node_keys)
    num_ph = num_real if node_template is not None else 0
    node_infos = [nodes[k] for k in node_keys] + [node_template] * num_ph
    job_infos = [jobs[k] for k in job_keys]
    rtypes = sorted(set().union(*(set(j.resources) for j in job_infos))) if job_infos else []
    njobs, nres, n2 = len(job_infos), len(rtypes), len(node_infos)

    job_res = np.zeros((njobs, nres), dtype=np.int64)
    for j, job in enumerate(job_infos):
        for r, rt in enumerate(rtypes):
            job_res[j, r] = int(job.resources.get(rt, 0))
    node_res = np.zeros((n2, nres), dtype=np.int64)
    for n, node in enumerate(node_infos):
        for r, rt in enumerate(rtypes):
            node_res[n, r] = int(node.resources.get(rt, 0))

    total = node_res.sum(axis=0).astype(np.float64)
    for r, rt in enumerate(rtypes):
        if total[r] <= 0:
            asking = [job_keys[j] for j in range(njobs) if job_res[j, r] > 0]
            if asking and n2 > 0:  # with no nodes at all nothing is placed anyway
                raise InvalidJobError(
                    asking[0], f"job {asking[0]!r} requests resource {rt!r} that no node (nor the template) has"
                )
    # A job that requests nothing could take unboundedly many replicas (and sizes the speedup
    # table by its max_replicas, up to 2**53): reject it rather than allocate without bound.
    # A pinned job keeps its allocation whatever it requests, so only a free job is refused.
    for j in range(njobs):
        if not np.any(job_res[j] > 0) and not pinned_of[job_keys[j]]:
            raise InvalidJobError(
                job_keys[j],
                f"job {job_keys[j]!r} requests no resources: give it at least one positive request, e.g. {{'pods': 1}}",
            )
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(job_res > 0, job_res / np.where(total > 0, total, 1.0), 0.0)
    dominant = shares.max(axis=1) if nres else np.zeros(njobs)
    scale = np.ascontiguousarray(dominant * n2, dtype=np.float64)

    # Largest replica count each job could ever get: sum over distinct node shapes of the
    # per-node fit (0 on a node lacking a resource it requests). Bounds the speedup tables and
    # the genome, so a node's fit is checked against MAX_NODE_REPLICAS first.
    requesting = job_res.any(axis=1) if nres else np.zeros(njobs, dtype=np.bool_)
    capacity = _capacity(job_res, node_res, requesting, job_keys, node_keys, rtypes)
    max_rep = np.array([j.max_replicas for j in job_infos], dtype=np.int64)
    min_rep = np.array([j.min_replicas for j in job_infos], dtype=np.int64)
    max_rep = np.minimum(max_rep, capacity)

    # Base allocation entries (sorted by node index) and pinned mask.
    node_index = {k: i for i, k in enumerate(node_keys)}
    base_off = np.zeros(njobs + 1, dtype=np.int64)
    bnodes: list = []
    bcnts: list = []
    pinned = np.zeros(njobs, dtype=np.bool_)
    base_reps = np.zeros(njobs, dtype=np.int64)
    for j, k in enumerate(job_keys):
        alloc = base_allocations.get(k) or []
        cnt: dict = {}
        for nk in alloc:
            i = node_index[nk]
            cnt[i] = cnt.get(i, 0) + 1
        for i in sorted(cnt):
            bnodes.append(i)
            bcnts.append(cnt[i])
        base_reps[j] = len(alloc)
        base_off[j + 1] = len(bnodes)
        pinned[j] = pinned_of[k]
    base_node = np.array(bnodes, dtype=np.int32)
    base_cnt = np.array(bcnts, dtype=np.int32)
    # A job that requests nothing is pinned (checked above): its replica count is its base's.
    max_rep[~requesting] = base_reps[~requesting]
    # A pinned job keeps its allocation even beyond its bounds: size the table for it.
    table_rep = max_rep.copy()
    table_rep[pinned] = np.maximum(table_rep[pinned], base_reps[pinned])

    table = speedup_tables([j.speedup_fn for j in job_infos], job_keys, table_rep, n2)
    # AdaptDL's JobInfo has no restart_penalty: getattr keeps duck-typed inputs working.
    pens = [getattr(j, "restart_penalty", None) for j in job_infos]
    penalty = None
    if any(x is not None for x in pens):
        penalty = np.array([np.nan if x is None else float(x) for x in pens], dtype=np.float64)
    return Problem(
        job_keys=job_keys,
        node_keys=node_keys,
        num_real=num_real,
        rtypes=rtypes,
        job_res=np.ascontiguousarray(job_res),
        node_res=np.ascontiguousarray(node_res),
        max_rep=np.ascontiguousarray(max_rep),
        min_rep=np.ascontiguousarray(min_rep),
        pinned=pinned,
        base_off=base_off,
        base_node=base_node,
        base_cnt=base_cnt,
        scale=scale,
        table=np.ascontiguousarray(table),
        penalty=penalty,
    )


def _capacity(job_res, node_res, requesting, job_keys, node_keys, rtypes) -> np.ndarray:
    """Replicas of each job that all problem nodes together hold (int64[J]).

    Raises a ``ValueError`` naming the node, the job and the resource where one node would
    hold more than ``MAX_NODE_REPLICAS`` replicas of a job.
    """
    njobs, n2 = job_res.shape[0], node_res.shape[0]
    capacity = np.zeros(njobs, dtype=np.int64)
    if n2 == 0 or job_res.shape[1] == 0:
        return capacity
    shapes, first, counts = np.unique(node_res, axis=0, return_index=True, return_counts=True)
    for s in range(shapes.shape[0]):
        # Jobs that request nothing fit without bound; they are pinned and take no capacity.
        per = np.where(job_res > 0, shapes[s][None, :] // np.maximum(job_res, 1), np.iinfo(np.int64).max)
        fit = np.where(requesting, per.min(axis=1), 0)
        over = np.flatnonzero(fit > MAX_NODE_REPLICAS)
        if over.size:
            j = int(over[0])
            r = int(np.argmin(per[j]))
            n = int(first[s])
            where = f"nodes[{node_keys[n]!r}]" if n < len(node_keys) else "node_template"
            raise ValueError(
                f"{where} would hold {int(fit[j])} replicas of job {job_keys[j]!r} ({where}.resources"
                f"[{rtypes[r]!r}] = {int(shapes[s][r])}, {int(job_res[j, r])} per replica), more than the "
                f"{MAX_NODE_REPLICAS} one node may hold (MAX_NODE_REPLICAS): check the node's advertised "
                "resources and the job's request"
            )
        capacity += fit * counts[s]
    return capacity


def allocation_objective(prob: Problem, allocations: dict, restart_penalty: float = 0.1) -> float:
    """First objective (sum of scaled speedups, higher is better) of an allocation dict.

    Uses the same table, scale and restart penalty as the genetic search (per-job penalties
    of ``prob.penalty`` where set); ``allocations`` maps job keys to lists of real node keys.
    Plain Python: for tests and reports.

    Examples
    --------
    Job ``b`` starts on ``n1`` (it has no base allocation), so its term pays the restart penalty:

    >>> from fastsched.policy import JobInfo, NodeInfo
    >>> nodes = {"n0": NodeInfo({"gpu": 4}, False), "n1": NodeInfo({"gpu": 4}, False)}
    >>> jobs = {"a": JobInfo({"gpu": 1}, lambda n, r: r, 0, 0, 4),
    ...         "b": JobInfo({"gpu": 2}, lambda n, r: r, 1, 1, 2)}
    >>> prob = build_problem(jobs, nodes, {"a": ["n0", "n0"]}, None)
    >>> prob.scale.tolist()
    [0.25, 0.5]
    >>> round(allocation_objective(prob, {"a": ["n0", "n0"], "b": ["n1"]}, restart_penalty=0.1), 6)
    0.95
    """
    pen = prob.penalties(restart_penalty)
    node_index = {k: i for i, k in enumerate(prob.node_keys)}
    kmax = prob.table.shape[1] - 1
    total = 0.0
    for j, key in enumerate(prob.job_keys):
        counts: dict = {}
        for nk in allocations.get(key, []) or []:
            counts[node_index[nk]] = counts.get(node_index[nk], 0) + 1
        reps = sum(counts.values())
        if reps == 0:
            continue
        base = {int(prob.base_node[q]): int(prob.base_cnt[q]) for q in range(prob.base_off[j], prob.base_off[j + 1])}
        v = prob.table[j, min(len(counts), kmax), reps] * prob.scale[j]
        if counts != base:
            v *= 1.0 - pen[j]
        total += v
    return float(total)
