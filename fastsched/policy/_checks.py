"""Boundary checks of the policy's inputs (JobInfo / NodeInfo-like objects and base allocations).

Each check names the offending field; a job's own problems raise :class:`InvalidJobError`
(which ``on_invalid_job="skip"`` turns into a skipped job).
"""

from __future__ import annotations

import numbers

from fastsched import _validate as V

__all__ = ["InvalidJobError", "check_base", "check_count", "check_info", "check_job", "reserve"]


class InvalidJobError(ValueError):
    """A job that can never be placed or whose description is invalid.

    ``key`` names the job. A ``ValueError``, so ``on_invalid_job="raise"`` callers see the
    same exception type as for any other bad input.

    Examples
    --------
    >>> err = InvalidJobError("j1", "job 'j1' requests resource 'tpu' that no node has")
    >>> err.key, isinstance(err, ValueError)
    ('j1', True)
    """

    def __init__(self, key, message: str):
        super().__init__(message)
        self.key = key


def check_info(kind: str, key, info, attrs) -> None:
    for a in attrs:
        if not hasattr(info, a):
            raise TypeError(f"{kind}[{key!r}] must be a {kind[:-1].capitalize()}Info-like object (no {a!r})")


def check_count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    if value > V.MAX_INT:  # int64 arrays below; JobInfo/NodeInfo bound theirs the same way
        raise ValueError(f"{name} is too large ({value}); the limit is 2**53")
    return int(value)


def check_job(k, job) -> None:
    """Per-job checks; raise :class:`InvalidJobError` (or ``TypeError`` for non-JobInfo)."""
    check_info(
        "jobs",
        k,
        job,
        ("resources", "speedup_fn", "creation_timestamp", "min_replicas", "max_replicas", "preemptible"),
    )
    try:
        mn = check_count(f"jobs[{k!r}].min_replicas", job.min_replicas)
        mx = check_count(f"jobs[{k!r}].max_replicas", job.max_replicas)
        for rk, rv in job.resources.items():
            check_count(f"jobs[{k!r}].resources[{rk!r}]", rv)
    except (TypeError, ValueError) as exc:
        raise InvalidJobError(k, str(exc)) from exc
    if mx < 1:
        raise InvalidJobError(k, f"jobs[{k!r}].max_replicas must be >= 1, got {mx}")
    if mn > mx:
        raise InvalidJobError(k, f"jobs[{k!r}]: min_replicas ({mn}) > max_replicas ({mx})")
    pen = getattr(job, "restart_penalty", None)
    if pen is not None:
        if isinstance(pen, bool) or not isinstance(pen, numbers.Real) or not 0.0 <= float(pen) <= 1.0:
            raise InvalidJobError(k, f"jobs[{k!r}].restart_penalty must be a number in [0, 1], got {pen!r}")


def check_base(jobs: dict, nodes: dict, base_allocations: dict) -> None:
    """Check the base allocations.

    They must name known nodes, stay within each job's ``max_replicas`` and, summed over the
    jobs, within each node's resources.
    """
    used: dict = {}
    for k, alloc in base_allocations.items():
        if alloc is None:
            continue
        if isinstance(alloc, (str, bytes)) or not hasattr(alloc, "__iter__"):
            raise TypeError(f"base_allocations[{k!r}] must be a list of node keys, got {type(alloc).__name__}")
        if k not in jobs:
            continue
        alloc = list(alloc)
        for nk in alloc:
            if nk not in nodes:
                raise ValueError(f"base_allocations[{k!r}] names unknown node {nk!r}")
        job = jobs[k]
        if len(alloc) > int(job.max_replicas):
            raise ValueError(
                f"base_allocations[{k!r}] has {len(alloc)} replicas, more than jobs[{k!r}].max_replicas = "
                f"{job.max_replicas}"
            )
        for nk in alloc:
            for rt, amount in job.resources.items():
                used[nk, rt] = used.get((nk, rt), 0) + int(amount)
    for (nk, rt), amount in used.items():
        have = int(nodes[nk].resources.get(rt, 0))
        if amount > have:
            raise ValueError(f"base_allocations use {amount} of resource {rt!r} on node {nk!r}, which has {have}")


class _ReducedNode:
    """A node less the resources of a kept job's replicas (what the search may still use)."""

    __slots__ = ("resources", "preemptible")

    def __init__(self, resources: dict, preemptible):
        self.resources = resources
        self.preemptible = preemptible


def reserve(nodes: dict, exc: InvalidJobError, job, alloc: list) -> dict:
    """``nodes`` less what ``job``'s replicas in ``alloc`` use.

    Raises ``exc`` (the job's own error) when its request cannot be read, and a ``ValueError``
    when the allocation does not fit (as for any base allocation).
    """
    try:
        res = job.resources
        need = {rt: check_count(f"jobs[{exc.key!r}].resources[{rt!r}]", v) for rt, v in res.items()}
    except (AttributeError, TypeError, ValueError):
        raise exc from None
    out = dict(nodes)
    for nk in alloc:
        if nk not in nodes:
            raise ValueError(f"base_allocations[{exc.key!r}] names unknown node {nk!r}")
        node = out[nk]
        check_info("nodes", nk, node, ("resources", "preemptible"))
        have = dict(node.resources)
        for rt, amount in need.items():
            left = check_count(f"nodes[{nk!r}].resources[{rt!r}]", have.get(rt, 0)) - amount
            if left < 0:
                raise ValueError(
                    f"base_allocations[{exc.key!r}] use more of resource {rt!r} on node {nk!r} than it has"
                )
            have[rt] = left
        out[nk] = _ReducedNode(have, node.preemptible)
    return out
