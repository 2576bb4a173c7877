"""Population buffers on the Python side.

Row counts, row selection, concatenation, the base row and the previous round's population
adapted to this round's jobs and nodes.

The problem argument ``prob`` is a :class:`fastsched.policy.problem.Problem` (read for its
sizes, keys and base allocation).
"""

from __future__ import annotations

import numpy as np

from fastsched.policy._ga.evolve import gather
from fastsched.policy._ga.remap import remap_rows
from fastsched.policy._ga.types import Pop, new_pop

__all__ = ["rows", "nbytes", "take", "concat", "base_row", "adapt_previous"]


def rows(pop: Pop) -> int:
    """Return the number of rows of ``pop``.

    Examples
    --------
    >>> rows(new_pop(3, 2, 4))
    3
    """
    return pop.off.shape[0]


def nbytes(pop: Pop) -> int:
    """Bytes held by ``pop``'s arrays.

    Examples
    --------
    >>> nbytes(new_pop(1, 1, 1))  # off 2 x 8, node and cnt 4 each, four 8-byte scores
    56
    """
    return sum(a.nbytes for a in pop)


def take(pop: Pop, which: np.ndarray, width: int | None = None) -> Pop:
    """Rows ``which`` of ``pop`` as a new population (``width``: entry columns, default same).

    Examples
    --------
    >>> pop = new_pop(3, 1, 2)
    >>> pop.obj[:] = [1.0, 2.0, 3.0]
    >>> take(pop, np.array([2, 0])).obj.tolist()
    [3.0, 1.0]
    """
    out = new_pop(which.shape[0], pop.off.shape[1] - 1, pop.node.shape[1] if width is None else width)
    gather(pop, np.ascontiguousarray(which, dtype=np.int64), out)
    return out


def concat(a: Pop, b: Pop) -> Pop:
    """Return the rows of ``a`` then those of ``b`` (entry columns: the wider of the two).

    Examples
    --------
    >>> a, b = new_pop(2, 1, 1), new_pop(1, 1, 3)
    >>> b.obj[0] = 5.0
    >>> out = concat(a, b)
    >>> rows(out), out.node.shape[1], out.obj.tolist()
    (3, 3, [0.0, 0.0, 5.0])
    """
    w = max(a.node.shape[1], b.node.shape[1])
    out = new_pop(rows(a) + rows(b), a.off.shape[1] - 1, w)
    for src, start in ((a, 0), (b, rows(a))):
        k = rows(src)
        out.off[start : start + k] = src.off
        out.node[start : start + k, : src.node.shape[1]] = src.node
        out.cnt[start : start + k, : src.cnt.shape[1]] = src.cnt
        for name in ("acc", "obj", "size", "hash"):
            getattr(out, name)[start : start + k] = getattr(src, name)
    return out


def base_row(prob, width: int) -> Pop:
    """Return the base allocation of ``prob`` as a one-row population (unrepaired, unscored).

    Examples
    --------
    >>> from fastsched.policy import JobInfo, NodeInfo, build_problem
    >>> nodes = {"n0": NodeInfo({"gpu": 4}, False)}
    >>> prob = build_problem({"a": JobInfo({"gpu": 1}, lambda n, r: r, 0, 0, 4)}, nodes, {"a": ["n0"] * 2}, None)
    >>> row = base_row(prob, 3)
    >>> row.off.tolist(), row.node[0, :1].tolist(), row.cnt[0, :1].tolist()
    ([[0, 1]], [0], [2])
    """
    out = new_pop(1, prob.num_jobs, width)
    b = prob.base_width
    out.off[0] = prob.base_off
    out.node[0, :b] = prob.base_node
    out.cnt[0, :b] = prob.base_cnt
    return out


def adapt_previous(prev, prob):
    """Return the previous round's final population re-indexed to this round's jobs and nodes (unrepaired).

    Real nodes map by key; a new node takes over an old placeholder (the autoscaler's new
    node is what the placeholder stood for); remaining old placeholders map to the new
    placeholders in order. Jobs map by key; new jobs start empty.

    Parameters
    ----------
    prev : tuple or None
        ``(population, job keys, node keys)`` of the previous round, or ``None``.
    prob : Problem
        This round's problem.

    Returns
    -------
    Pop or None
        ``None`` when there is no previous round.

    Examples
    --------
    >>> from fastsched.policy import JobInfo, NodeInfo, build_problem
    >>> nodes = {"n0": NodeInfo({"gpu": 4}, False), "n1": NodeInfo({"gpu": 4}, False)}
    >>> job = JobInfo({"gpu": 1}, lambda n, r: r, 0, 0, 4)
    >>> prob = build_problem({"a": job, "b": job}, nodes, {}, None)
    >>> old = new_pop(1, 1, 1)  # last round: job "b" alone, 3 replicas on node "n1"
    >>> old.off[0], old.node[0, 0], old.cnt[0, 0] = [0, 1], 0, 3
    >>> row = adapt_previous((old, ["b"], ["n1"]), prob)
    >>> row.off.tolist(), row.node[0].tolist(), row.cnt[0].tolist()
    ([[0, 0, 1]], [1], [3])
    """
    if prev is None:
        return None
    pop, old_jobs, old_nodes = prev
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
    new_off, new_node, new_cnt = remap_rows(pop.off, pop.node, pop.cnt, jmap, nmap, J)
    n = rows(pop)
    return Pop(
        new_off, new_node, new_cnt, np.zeros(n), np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.uint64)
    )
