"""One scheduling round as arrays: dicts of JobInfo/NodeInfo → contiguous typed arrays.

Everything the genetic kernels read is built here, once per round: job and node orders,
resource matrices, template placeholder nodes, replica bounds, the base allocation as CSR
entries, the pinned mask, the objective scale and the speedup tables. Two steps:
:func:`build_problem` validates the dicts (numba does not bounds-check) and turns them into
:class:`RoundRecords`; :func:`problem_from_records` converts records to the arrays. A caller
that holds valid records already (the simulator) calls the second step alone.
"""

from __future__ import annotations

import logging
import numbers
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from fastsched.policy._checks import InvalidJobError, reserve
from fastsched.policy._checks import check_base as _check_base
from fastsched.policy._checks import check_count as _check_count
from fastsched.policy._checks import check_info as _check_info
from fastsched.policy._checks import check_job as _check_job
from fastsched.policy._ga.fitness import penalty_array
from fastsched.policy._objective import allocation_objective
from fastsched.policy._tables import MAX_TABLE_BYTES, speedup_tables

LOG = logging.getLogger(__name__)

__all__ = [
    "MAX_NODE_REPLICAS",
    "allocation_objective",
    "MAX_TABLE_BYTES",
    "InvalidJobError",
    "Problem",
    "RoundRecords",
    "build_problem",
    "problem_from_records",
    "sort_nodes",
    "speedup_tables",
]

# Most replicas of one job that a single node (or the template) may hold. The speedup tables,
# the genome's int32 replica counts and the search's scratch rows are sized by what the nodes
# can hold, so one node advertising 2**40 GPUs would size them by 2**40. Real nodes hold 8 to
# 16 GPUs and ~110 pods; 65,536 leaves room for CPU-only jobs counted in millicores.
MAX_NODE_REPLICAS = 2**16


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
    meta : dict
        The caller's job keys in its order (``"keys"``, skipped jobs included) and base
        allocations (``"base_allocations"``); from :func:`build_problem` also ``"skipped"``
        and ``"kept"``.

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
    keys = list(nodes)
    return [keys[i] for i in _node_order(keys, [node.preemptible for node in nodes.values()])]


def _node_order(keys: list, preemptible: list) -> list:
    """Return the indices of the nodes in problem order (see :func:`sort_nodes`)."""
    try:
        return sorted(range(len(keys)), key=lambda i: (bool(preemptible[i]), _key_order(keys[i])))
    except TypeError as exc:
        raise ValueError(f"node keys must be mutually comparable to order the nodes: {exc}") from exc


_PLAIN_INTS = frozenset({int, np.int64, np.int32})
_PLAIN_NUMBERS = _PLAIN_INTS | {float, np.float64}


def _job_order(pinned: list, min_rep: list, creation: list) -> list:
    """Return the indices of the jobs in problem order.

    Pinned jobs first (their allocation is fixed and takes resources first), then fewer
    min_replicas (so guarantees do not starve the cluster), then FIFO by creation time; ties
    keep the caller's order.
    """
    fast = _numeric_job_order(pinned, min_rep, creation)
    if fast is not None:
        return fast
    return sorted(range(len(pinned)), key=lambda j: (not pinned[j], min_rep[j], creation[j]))


def _numeric_job_order(pinned: list, min_rep: list, creation: list):
    """:func:`_job_order` by a stable ``np.lexsort`` where that gives the same order, else ``None``.

    Where the creation times are plain numbers, or equal-length tuples of them, that float64
    holds exactly (no NaN, magnitudes below 2**53, so every int converts exactly and compares
    as Python compares it), and the min_replicas are ints. A simulator's round of 10,000 jobs
    sorts in half the time.
    """
    if len(creation) < 2:
        return None
    outer = {type(c) for c in creation}
    if outer == {tuple}:
        inner = {type(x) for c in creation for x in c}
    elif outer <= _PLAIN_NUMBERS:
        inner = outer
    else:
        return None
    if not inner <= _PLAIN_NUMBERS or not {type(r) for r in min_rep} <= _PLAIN_INTS:
        return None
    try:
        times = np.array(creation, dtype=np.float64)  # ragged tuples raise
    except (TypeError, ValueError, OverflowError):
        return None
    reps = np.array(min_rep, dtype=np.float64)
    if times.shape[0] != len(creation) or times.size == 0:
        return None
    if not ((np.abs(times) < 2.0**53).all() and (np.abs(reps) < 2.0**53).all()):  # also False for NaN
        return None
    keys = [times] if times.ndim == 1 else [times[:, i] for i in range(times.shape[1] - 1, -1, -1)]
    unpinned = np.array([not p for p in pinned], dtype=np.bool_)
    return np.lexsort((*keys, reps, unpinned)).tolist()


class RoundRecords(NamedTuple):
    """One round's jobs and nodes as plain records: the trusted entry's input.

    What a caller that already holds its jobs and nodes as lists or arrays (a simulator) hands
    to :func:`problem_from_records`, in its own order (the problem's order is derived from
    these fields exactly as :func:`build_problem` derives it from dicts). ``J`` jobs, ``N``
    nodes, ``R`` resource types. Nothing is validated: every field must already be what
    :class:`JobInfo`/:class:`NodeInfo` and :func:`build_problem` accept.

    Attributes
    ----------
    job_keys : list
        Job keys, ``J`` distinct.
    speedup_fns : list
        Each job's ``speedup_fn``.
    creation : list
        Each job's ``creation_timestamp``.
    min_rep, max_rep : list of int
        Replica bounds, ``0 <= min_rep <= max_rep``, ``max_rep >= 1``.
    preemptible : list of bool
    penalty : float64[J] or None
        Per-job restart penalties (NaN: the policy's), or ``None`` when no job has one.
    rtypes : list of str
        Resource types (the columns of ``job_res``/``node_res``/``template_res``), sorted.
    job_res : int64[J, R]
        Resources per replica.
    node_keys : list
        Node keys, ``N`` distinct.
    node_preemptible : list of bool
    node_res : int64[N, R]
    template_res : int64[R] or None
        Resources of the node template (``None``: no placeholders).
    base_allocations : dict
        Job key → list of node keys (one per replica), within each job's ``max_rep`` and
        each node's resources.

    Examples
    --------
    >>> import numpy as np
    >>> rec = RoundRecords(["a"], [lambda n, r: r], [0], [0], [4], [True], None, ["gpu"],
    ...                    np.ones((1, 1), np.int64), ["n0"], [False], np.array([[4]]), None, {})
    >>> problem_from_records(rec).max_rep.tolist()
    [4]
    """

    job_keys: list
    speedup_fns: list
    creation: list
    min_rep: list
    max_rep: list
    preemptible: list
    penalty: np.ndarray | None
    rtypes: list
    job_res: np.ndarray
    node_keys: list
    node_preemptible: list
    node_res: np.ndarray
    template_res: np.ndarray | None
    base_allocations: dict


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
    given = {"keys": list(jobs) if isinstance(jobs, dict) else [], "base_allocations": base_allocations}
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
                nodes = reserve(nodes, exc, job, list(base_allocations[exc.key]))
                kept[exc.key] = list(base_allocations[exc.key])
                base_allocations = {k: v for k, v in base_allocations.items() if k != exc.key}
                LOG.warning("non-preemptible job %r kept as it is, out of this round's search: %s", exc.key, exc)
            else:
                LOG.warning("job %r skipped this round: %s", exc.key, exc)
            skipped[exc.key] = str(exc)
            jobs = {k: v for k, v in jobs.items() if k != exc.key}
            continue
        prob.meta.update(given, skipped=skipped, kept=kept)
        return prob


def _is_pinned(job, alloc) -> bool:
    """Whether ``job`` is non-preemptible and already has an allocation (kept as it is)."""
    return (not getattr(job, "preemptible", True)) and _has_allocation(alloc)


def _has_allocation(alloc) -> bool:
    return bool(alloc) and not isinstance(alloc, (str, bytes))


def _validate(jobs: dict, nodes: dict, base_allocations: dict, node_template) -> None:
    """Check one round's dicts field by field (the caller's boundary; see :func:`build_problem`)."""
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


def _records(jobs: dict, nodes: dict, base_allocations: dict, node_template) -> RoundRecords:
    """Turn validated dicts into :class:`RoundRecords` (resource types: those some job lists)."""
    infos = list(jobs.values())
    rtypes = sorted(set().union(*(set(j.resources) for j in infos))) if infos else []

    def res(objs) -> np.ndarray:
        out = np.zeros((len(objs), len(rtypes)), dtype=np.int64)
        for i, obj in enumerate(objs):
            for r, rt in enumerate(rtypes):
                out[i, r] = int(obj.resources.get(rt, 0))
        return out

    # AdaptDL's JobInfo has no restart_penalty: getattr keeps duck-typed inputs working.
    pens = [getattr(j, "restart_penalty", None) for j in infos]
    penalty = None
    if any(x is not None for x in pens):
        penalty = np.array([np.nan if x is None else float(x) for x in pens], dtype=np.float64)
    return RoundRecords(
        job_keys=list(jobs),
        speedup_fns=[j.speedup_fn for j in infos],
        creation=[j.creation_timestamp for j in infos],
        min_rep=[j.min_replicas for j in infos],
        max_rep=[j.max_replicas for j in infos],
        preemptible=[getattr(j, "preemptible", True) for j in infos],
        penalty=penalty,
        rtypes=rtypes,
        job_res=res(infos),
        node_keys=list(nodes),
        node_preemptible=[n.preemptible for n in nodes.values()],
        node_res=res(list(nodes.values())),
        template_res=None if node_template is None else res([node_template])[0],
        base_allocations=base_allocations,
    )


def _build(jobs: dict, nodes: dict, base_allocations: dict, node_template) -> Problem:
    _validate(jobs, nodes, base_allocations, node_template)
    return problem_from_records(_records(jobs, nodes, base_allocations, node_template))


def problem_from_records(rec: RoundRecords) -> Problem:
    """Convert one round's records to a :class:`Problem` (trusted: nothing is validated).

    The array-level way into the policy for a caller that already holds its jobs and nodes as
    records: with :meth:`fastsched.policy.PolluxPolicy.optimize_problem` it skips the
    ``JobInfo``/``NodeInfo`` dicts and their checks. For records of valid inputs the problem
    is the one :func:`build_problem` returns for the same jobs and nodes, bit for bit.

    Raises
    ------
    InvalidJobError
        For a job that can never be placed, as :func:`build_problem` with
        ``on_invalid_job="raise"`` (a resource no node has, no request, a failing speedup
        function, oversized tables).
    ValueError
        A node that would hold more than ``MAX_NODE_REPLICAS`` replicas of one job, node keys
        that cannot be ordered.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched.policy import JobInfo, NodeInfo
    >>> speedup = lambda n, r: r
    >>> rec = RoundRecords(["b", "a"], [speedup, speedup], [1, 0], [0, 0], [4, 2], [True, True], None,
    ...                    ["gpu"], np.array([[2], [1]]), ["n0"], [False], np.array([[4]]), None, {"a": ["n0"]})
    >>> prob = problem_from_records(rec)
    >>> prob.job_keys, prob.max_rep.tolist()
    (['a', 'b'], [2, 2])
    >>> jobs = {"b": JobInfo({"gpu": 2}, speedup, 1, 0, 4), "a": JobInfo({"gpu": 1}, speedup, 0, 0, 2)}
    >>> same = build_problem(jobs, {"n0": NodeInfo({"gpu": 4}, False)}, {"a": ["n0"]}, None)
    >>> bool(np.array_equal(same.table, prob.table)) and same.job_keys == prob.job_keys
    True
    """
    base_allocations = rec.base_allocations
    pinned_in = [
        not rec.preemptible[j] and _has_allocation(base_allocations.get(k)) for j, k in enumerate(rec.job_keys)
    ]
    order = _job_order(pinned_in, rec.min_rep, rec.creation)
    job_keys = [rec.job_keys[j] for j in order]
    node_keys = [rec.node_keys[i] for i in _node_order(rec.node_keys, rec.node_preemptible)]
    num_real = len(node_keys)
    rtypes = list(rec.rtypes)
    njobs, nres = len(job_keys), len(rtypes)
    index = np.array(order, dtype=np.intp)
    job_res = np.asarray(rec.job_res, dtype=np.int64).reshape(len(rec.job_keys), nres)[index]
    node_pos = {k: i for i, k in enumerate(rec.node_keys)}
    node_res = np.asarray(rec.node_res, dtype=np.int64).reshape(num_real, nres)
    node_res = node_res[np.array([node_pos[k] for k in node_keys], dtype=np.intp)]
    if rec.template_res is not None:
        template = np.asarray(rec.template_res, dtype=np.int64).reshape(1, nres)
        node_res = np.concatenate([node_res, np.repeat(template, num_real, axis=0)])
    n2 = node_res.shape[0]
    pinned = np.array([pinned_in[j] for j in order], dtype=np.bool_)

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
    idle = ~(job_res > 0).any(axis=1) & ~pinned
    if idle.any():
        j = int(np.argmax(idle))
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
    max_rep = np.array([rec.max_rep[j] for j in order], dtype=np.int64)
    min_rep = np.array([rec.min_rep[j] for j in order], dtype=np.int64)
    max_rep = np.minimum(max_rep, capacity)

    # Base allocation entries (sorted by node index).
    node_index = {k: i for i, k in enumerate(node_keys)}
    base_off = np.zeros(njobs + 1, dtype=np.int64)
    bnodes: list = []
    bcnts: list = []
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
    base_node = np.array(bnodes, dtype=np.int32)
    base_cnt = np.array(bcnts, dtype=np.int32)
    # A job that requests nothing is pinned (checked above): its replica count is its base's.
    max_rep[~requesting] = base_reps[~requesting]
    # A pinned job keeps its allocation even beyond its bounds: size the table for it.
    table_rep = max_rep.copy()
    table_rep[pinned] = np.maximum(table_rep[pinned], base_reps[pinned])

    table = speedup_tables([rec.speedup_fns[j] for j in order], job_keys, table_rep, n2)
    penalty = None if rec.penalty is None else np.asarray(rec.penalty, dtype=np.float64)[index]
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
        meta={"keys": list(rec.job_keys), "base_allocations": base_allocations},
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
