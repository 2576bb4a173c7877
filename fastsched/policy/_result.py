"""The round's answer from its final population, with AdaptDL's rules.

The Pareto front's best row within a node limit (:func:`select_result`), the desired cluster
size for the autoscaler (:func:`desired_nodes`) and a population row as an allocation dict
(:func:`row_to_allocations`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["desired_nodes", "row_to_allocations", "select_result"]


def select_result(values, max_nodes):
    """Index of the front's best first objective within ``max_nodes`` nodes, or ``None``.

    ``values`` is float64[front, 2]: the negated first objective and the cluster size.

    Examples
    --------
    >>> import numpy as np
    >>> values = np.array([[-3.0, 4.0], [-2.0, 2.0], [-1.0, 1.0]])
    >>> select_result(values, 2), select_result(values, 0)
    (1, None)
    """
    if np.amin(values[:, 1]) > max_nodes:
        return None
    return int(np.argmin(np.where(values[:, 1] <= max_nodes, values[:, 0], 0)))


def desired_nodes(utilities, values, num_nodes, min_util, max_util):
    """Cluster size whose utility falls in ``[min_util, max_util]`` (AdaptDL's rule).

    ``num_nodes`` when the best row within the real nodes already has such a utility; else
    the size of the front row whose utility is nearest the band's middle (the larger size
    among near-equal utilities), ignoring rows below ``min_util``.

    Examples
    --------
    >>> import numpy as np
    >>> values = np.array([[-3.0, 4.0], [-2.0, 2.0], [-1.0, 1.0]])
    >>> desired_nodes(np.array([0.2, 0.5, 0.9]), values, 4, 0.35, 0.65)
    2
    """
    idx = select_result(values, num_nodes)
    if idx is not None and min_util <= utilities[idx] <= max_util:
        return num_nodes
    target = (min_util + max_util) / 2
    best_util = np.inf
    best_nodes = num_nodes
    # Plain floats: numpy scalars and np.isclose per element cost ~1 us each, which was 10% of
    # a 16-job round.
    for util, size in zip(np.asarray(utilities).tolist(), np.asarray(values)[:, 1].tolist(), strict=True):
        if util < min_util:
            continue
        # np.isclose's rule (rtol 1e-5, atol 1e-8; infinity is close only to itself).
        close = best_util != np.inf and abs(util - best_util) <= 1e-8 + 1e-5 * abs(best_util)
        if close and size > best_nodes:
            best_nodes = size
        if abs(util - target) < abs(best_util - target):
            best_util = util
            best_nodes = size
    return int(best_nodes)


def row_to_allocations(pop, row, prob) -> dict:
    """Row ``row`` of population ``pop`` as ``{job key: [node key per replica]}`` (real nodes only).

    Examples
    --------
    >>> from fastsched.policy import JobInfo, NodeInfo, build_problem
    >>> from fastsched.policy._ga.types import new_pop
    >>> nodes = {"n0": NodeInfo({"gpu": 4}, False)}
    >>> prob = build_problem({"a": JobInfo({"gpu": 1}, lambda n, r: r, 0, 0, 4)}, nodes, {}, NodeInfo({"gpu": 4}, True))
    >>> pop = new_pop(1, 1, 2)
    >>> pop.off[0], pop.node[0], pop.cnt[0] = [0, 2], [0, 1], [2, 3]  # node 1 is a placeholder
    >>> row_to_allocations(pop, 0, prob)
    {'a': ['n0', 'n0']}
    """
    # One node key per replica, in entry order, for the whole row at once; each job's list is
    # then a slice (a round of 10,000 jobs looped over every entry in Python).
    off = pop.off[row]
    end = int(off[-1]) if off.shape[0] else 0
    nodes = pop.node[row, :end]
    counts = np.where(nodes < prob.num_real, pop.cnt[row, :end], 0).astype(np.int64)  # placeholders: not real
    node_keys = prob.node_keys
    flat = [node_keys[n] for n in np.repeat(nodes, counts).tolist()]
    at = np.concatenate((np.zeros(1, dtype=np.int64), np.cumsum(counts)))[off].tolist()
    return {key: flat[at[j] : at[j + 1]] for j, key in enumerate(prob.job_keys)}
