"""The first objective of an allocation dict, in plain Python (for tests and reports)."""

from __future__ import annotations

__all__ = ["allocation_objective"]


def allocation_objective(prob, allocations: dict, restart_penalty: float = 0.1) -> float:
    """First objective (sum of scaled speedups, higher is better) of an allocation dict.

    Uses the same table, scale and restart penalty as the genetic search (per-job penalties
    of ``prob.penalty`` where set); ``allocations`` maps job keys to lists of real node keys.
    Plain Python: for tests and reports.

    Examples
    --------
    Job ``b`` starts on ``n1`` (it has no base allocation), so its term pays the restart penalty:

    >>> from fastsched.policy import JobInfo, NodeInfo, build_problem
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
