"""Placement helpers shared by the heterogeneity-aware policies: GPU counts to node lists on one type."""

from __future__ import annotations

from fastsched.sim.truth._rules import packed_placement

__all__ = ["packed_placement", "place_type", "place_sequential", "keep_majority_type"]


def _try_place(want, node_ids, gpn, keep, strict):
    free = dict.fromkeys(node_ids, gpn)
    for alloc in keep.values():
        for n in alloc:
            free[n] -= 1
    out = {k: list(v) for k, v in keep.items()}
    rest = sorted((k for k in want if k not in keep), key=lambda k: -want[k])
    for k in rest:
        g = want[k]
        whole, rem = divmod(g, gpn)
        alloc: list = []
        full = [n for n in node_ids if free[n] == gpn][:whole] if whole else []
        ok = len(full) == whole
        fit = None
        if ok and rem:
            cands = [n for n in node_ids if free[n] >= rem and n not in full]
            fit = min(cands, key=lambda n: (free[n], n)) if cands else None
            ok = fit is not None
        if not ok:
            if strict:
                return None
            continue  # cannot be placed even from scratch: left without GPUs this round
        for n in full:
            alloc += [n] * gpn
            free[n] = 0
        if rem:
            alloc += [fit] * rem
            free[fit] -= rem
        out[k] = sorted(alloc)
    return out


def place_type(want, node_ids, gpus_per_node, current=None) -> dict:
    """Node lists for jobs on the nodes of one GPU type.

    Jobs whose GPU count is unchanged keep their nodes while the rest still fit; the others
    take whole free nodes for their whole-node part and the fullest node that fits for the
    remainder (largest jobs first). If kept jobs fragment the nodes too much, the kept jobs of
    the emptiest node are moved, one node at a time.

    Parameters
    ----------
    want : dict of str -> int
        GPUs per job (their sum must not exceed the type's GPUs).
    node_ids : list of int
        The type's nodes.
    gpus_per_node : int
    current : dict of str -> list of int, optional
        Present allocations (on this type).

    Returns
    -------
    dict of str -> list of int
        Sorted node ids per job (a job that cannot be placed at all is absent).

    Examples
    --------
    >>> place_type({"a": 4, "b": 2, "c": 2}, [0, 1], 4)
    {'a': [0, 0, 0, 0], 'b': [1, 1], 'c': [1, 1]}
    >>> place_type({"a": 4, "b": 2}, [0, 1], 4, current={"b": [0, 0]})
    {'b': [0, 0], 'a': [1, 1, 1, 1]}
    """
    keep = {k: v for k, v in (current or {}).items() if k in want and len(v) == want[k]}
    while True:
        res = _try_place(want, node_ids, gpus_per_node, keep, strict=bool(keep))
        if res is not None:
            return res
        # Free the node with the most free GPUs among those holding kept jobs.
        used: dict = {}
        for v in keep.values():
            for n in v:
                used[n] = used.get(n, 0) + 1
        node = min(used, key=lambda n: (used[n], n))
        keep = {k: v for k, v in keep.items() if node not in v}


def keep_majority_type(allocations, node_types) -> dict:
    """Trim every allocation to the GPUs of its most represented type (ties: its first node's).

    Examples
    --------
    >>> keep_majority_type({"a": [0, 0, 1, 1, 1]}, ("aws", "rtx"))
    {'a': [1, 1, 1]}
    """
    out = {}
    for key, alloc in allocations.items():
        if not alloc or (type(alloc) in (list, tuple) and alloc.count(alloc[0]) == len(alloc)):  # one node: one type
            out[key] = list(alloc)
            continue
        counts: dict = {}
        for n in alloc:
            counts[node_types[n]] = counts.get(node_types[n], 0) + 1
        if len(counts) <= 1:
            out[key] = list(alloc)
            continue
        first = node_types[alloc[0]]
        best = max(counts, key=lambda t: (counts[t], t == first))
        out[key] = [n for n in alloc if node_types[n] == best]
    return out


def place_sequential(want, node_ids, gpus_per_node, current=None) -> dict:
    """Gavel's worker assignment on one GPU type: keep what still fits, fill the rest in node order.

    Jobs are taken by decreasing GPU count; within a count, jobs whose count is unchanged keep
    their nodes if those nodes still have the room, then the others take free GPUs walking the
    nodes in order from where the previous one stopped, so a job may straddle nodes (as the
    study's implementation does with its worker ids).

    Examples
    --------
    >>> place_sequential({"a": 3, "b": 3}, [0, 1], 4)
    {'a': [0, 0, 0], 'b': [0, 1, 1]}
    >>> place_sequential({"a": 2, "b": 4}, [0, 1], 4, current={"a": [1, 1]})
    {'b': [0, 0, 0, 0], 'a': [1, 1]}
    """
    free = dict.fromkeys(node_ids, gpus_per_node)
    current = current or {}
    out: dict = {}
    order = list(node_ids)
    ptr = 0
    for size in sorted(set(want.values()), reverse=True):
        group = [k for k in want if want[k] == size]
        for k in group:
            alloc = current.get(k)
            if alloc and len(alloc) == size:
                need: dict = {}
                for n in alloc:
                    need[n] = need.get(n, 0) + 1
                if all(free.get(n, 0) >= c for n, c in need.items()):
                    for n, c in need.items():
                        free[n] -= c
                    out[k] = sorted(alloc)
        for k in group:
            if k in out:
                continue
            alloc = []
            left = size
            while left > 0 and ptr < len(order):
                n = order[ptr]
                take = min(free[n], left)
                alloc += [n] * take
                free[n] -= take
                left -= take
                if free[n] == 0:
                    ptr += 1
            if left > 0:  # the walk reached the end: free GPUs behind the pointer, from the start
                for n in order:
                    take = min(free[n], left)
                    alloc += [n] * take
                    free[n] -= take
                    left -= take
            if left == 0:
                out[k] = sorted(alloc)
    return out
