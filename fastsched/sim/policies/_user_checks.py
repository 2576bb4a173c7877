"""Checks on a policy written outside this package: what it returns and what it raises.

The built-in policies are held to their interface by the test suite. A researcher's policy is
new code, so :class:`~fastsched.sim.policies.base.SimPolicy` wraps its ``optimize``,
``job_kwargs``, ``desired_nodes`` and ``bind_cluster`` with these checks: a wrong answer is reported in the round it is given, naming
the policy, the job and the node or field, instead of surfacing later as an internal error
of the simulator, or not at all (a float node id once ran to the end).
"""

from __future__ import annotations

import functools
import math
import numbers
import operator

import numpy as np

from fastsched._interrupt import is_interrupt

__all__ = [
    "PolicyError",
    "CHECKED_METHODS",
    "describe",
    "check_allocations",
    "check_job_kwargs",
    "checked_optimize",
    "checked_job_kwargs",
    "checked_desired_nodes",
    "checked_bind_cluster",
]

#: The :class:`~fastsched.sim.engine.job.Job` arguments a policy's ``job_kwargs`` may set.
JOB_KWARGS = ("target_num_replicas", "target_batch_size", "rescale_delay")


class PolicyError(ValueError, RuntimeError):
    """A policy broke its interface, or its own code raised.

    A ``ValueError``, because the policy is the user's input (the command line exits with
    status 2), and a ``RuntimeError``, what the simulator's own allocation checks raise.

    Examples
    --------
    >>> isinstance(PolicyError("x"), ValueError), isinstance(PolicyError("x"), RuntimeError)
    (True, True)
    """


def describe(policy) -> str:
    """Name a policy in a message: its ``name`` and where its class is defined.

    Examples
    --------
    >>> class Mine:
    ...     name = "mine"
    >>> describe(Mine())
    "policy 'mine' (fastsched.sim.policies._user_checks.Mine)"
    """
    cls = type(policy)
    return f"policy {policy.name!r} ({cls.__module__}.{cls.__qualname__})"


def _node_ids(key, alloc, where):
    if isinstance(alloc, (str, bytes)) or not hasattr(alloc, "__len__"):
        raise PolicyError(
            f"{where}: the allocation of job {key!r} must be a list of node ids (one per GPU), "
            f"got {type(alloc).__name__} {alloc!r}"
        )
    if getattr(alloc, "ndim", 1) != 1:
        raise PolicyError(f"{where}: the allocation of job {key!r} must be a flat list of node ids, got {alloc!r}")
    out = []
    for n in alloc:
        try:
            if type(n) is bool:
                raise TypeError
            out.append(operator.index(n))
        except TypeError:
            raise PolicyError(
                f"{where}: the allocation of job {key!r} holds {n!r} ({type(n).__name__}); node ids are ints"
            ) from None
    return out


def check_allocations(policy, now, result, jobs, nodes) -> dict:
    """Check a policy's answer to one round; return it with node ids as plain ``int`` lists.

    Parameters
    ----------
    policy : SimPolicy
        The policy that answered (named in messages; its ``cluster``, when bound, gives the
        GPU type of each node).
    now : int
        The round's simulated time, seconds.
    result : object
        What ``optimize`` returned: ``{job name: [node id per GPU]}`` is expected.
    jobs : list
        The round's active jobs (the only ones that may be allocated).
    nodes : dict of int -> int
        GPUs per node id.

    Raises
    ------
    PolicyError
        Naming the policy and the round, and the job, node or type at fault: not a dict, an
        unknown or inactive job, a node id that is not an int or not a node, a node given more
        GPUs than it has, or a job on two GPU types.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> pol, jobs = SimpleNamespace(name="p", cluster=None), [SimpleNamespace(name="a")]
    >>> check_allocations(pol, 60, {"a": (0, 1)}, jobs, {0: 4, 1: 4})
    {'a': [0, 1]}
    >>> check_allocations(pol, 60, {"a": [0] * 5}, jobs, {0: 4, 1: 4})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fastsched.sim.policies._user_checks.PolicyError: policy 'p' (...) at t=60 s: over-allocated node 0: 5 GPUs of its 4 (jobs ['a'])
    """
    where = f"{describe(policy)} at t={now} s"
    if not isinstance(result, dict):
        raise PolicyError(
            f"{where}: optimize must return a dict {{job name: [node id per GPU]}}, got {type(result).__name__}"
        )
    active = {job.name for job in jobs}
    out, used, holders = {}, {}, {}
    for key, alloc in result.items():
        if key not in active:
            raise PolicyError(
                f"{where}: allocated an unknown job {key!r} (not among the round's {len(active)} active jobs: "
                "arrived and unfinished)"
            )
        ids = alloc if type(alloc) is list and all(type(n) is int for n in alloc) else _node_ids(key, alloc, where)
        out[key] = ids
        for n in ids:
            used[n] = used.get(n, 0) + 1
            holders.setdefault(n, []).append(key)
    for n, count in used.items():
        if n not in nodes:
            raise PolicyError(
                f"{where}: over-allocated node {n!r}: no such node (job(s) {sorted(set(holders[n]))}; "
                f"the cluster's nodes are {f'{min(nodes)}..{max(nodes)}' if nodes else 'none'})"
            )
        if count > nodes[n]:
            raise PolicyError(
                f"{where}: over-allocated node {n!r}: {count} GPUs of its {nodes[n]} (jobs {sorted(set(holders[n]))})"
            )
    spec = getattr(policy, "cluster", None)
    types = getattr(spec, "node_types", None)
    if types is not None:
        for key, ids in out.items():
            kinds = {types[n] for n in ids if 0 <= n < len(types)}
            if len(kinds) > 1:
                raise PolicyError(
                    f"{where}: placed job {key!r} on two GPU types {sorted(kinds)}: nodes {sorted(set(ids))}"
                )
    return out


def _check_count(where, field, value, low):
    if value is None:
        return
    if type(value) is bool or not isinstance(value, int):
        try:
            value = operator.index(value)
        except TypeError:
            raise PolicyError(f"{where}: {field} must be an int or None, got {value!r}") from None
    if value < low:
        raise PolicyError(f"{where}: {field} must be >= {low}, got {value!r}")


def check_job_kwargs(policy, result, wjob) -> dict:
    """Check what a policy's ``job_kwargs`` returned for one workload row; return it.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> pol, row = SimpleNamespace(name="p"), SimpleNamespace(name="a")
    >>> check_job_kwargs(pol, {"target_batch_size": 128}, row)
    {'target_batch_size': 128}
    >>> check_job_kwargs(pol, {"target_num_replicas": 0}, row)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fastsched.sim.policies._user_checks.PolicyError: policy 'p' (...) job_kwargs for job 'a': target_num_replicas must be >= 1, got 0
    """
    where = f"{describe(policy)} job_kwargs for job {getattr(wjob, 'name', '?')!r}"
    if not isinstance(result, dict):
        raise PolicyError(f"{where}: must return a dict of Job arguments, got {type(result).__name__}")
    unknown = sorted(map(str, set(result) - set(JOB_KWARGS)))
    if unknown:
        raise PolicyError(f"{where}: unknown argument(s) {unknown}; a policy may set {list(JOB_KWARGS)}")
    _check_count(where, "target_num_replicas", result.get("target_num_replicas"), 1)
    _check_count(where, "target_batch_size", result.get("target_batch_size"), 1)
    delay = result.get("rescale_delay", 0)
    # numbers.Real: numpy's integers and floats too, as everywhere else a policy returns numbers.
    if (
        isinstance(delay, (bool, np.bool_))
        or not isinstance(delay, numbers.Real)
        or not (math.isfinite(delay) and delay >= 0)
    ):
        raise PolicyError(f"{where}: rescale_delay must be a finite number of seconds >= 0, got {delay!r}")
    return result


def _reraise(policy, what, exc):
    if isinstance(exc, PolicyError) or is_interrupt(exc):
        raise exc
    raise PolicyError(f"{describe(policy)} {what} raised {type(exc).__name__}: {exc}") from exc


def checked_optimize(optimize):
    """Wrap a policy class's ``optimize``: its errors name the policy, its answer is checked."""

    @functools.wraps(optimize)
    def wrapper(self, now, jobs, nodes, allocations):
        try:
            result = optimize(self, now, jobs, nodes, allocations)
        except Exception as exc:  # noqa: BLE001 - the user's code may fail in any way
            _reraise(self, f"at t={now} s: optimize", exc)
        return check_allocations(self, now, result, jobs, nodes)

    wrapper._checked = True
    return wrapper


def checked_desired_nodes(desired_nodes):
    """Wrap a policy class's ``desired_nodes``: ``None`` or an int (clamped by the cluster), errors naming the policy."""

    @functools.wraps(desired_nodes)
    def wrapper(self):
        try:
            want = desired_nodes(self)
        except Exception as exc:  # noqa: BLE001
            _reraise(self, "desired_nodes", exc)
        if want is None:
            return None
        try:
            if type(want) is bool:
                raise TypeError
            return operator.index(want)
        except TypeError:
            raise PolicyError(
                f"{describe(self)} desired_nodes must return None or a node count, got {want!r}"
            ) from None

    wrapper._checked = True
    return wrapper


def checked_bind_cluster(bind_cluster):
    """Wrap a policy class's ``bind_cluster``: its errors name the policy."""

    @functools.wraps(bind_cluster)
    def wrapper(self, spec, interval):
        try:
            return bind_cluster(self, spec, interval)
        except Exception as exc:  # noqa: BLE001
            _reraise(self, "bind_cluster", exc)

    wrapper._checked = True
    return wrapper


#: The methods of a user's policy class that are wrapped, and their wrappers.
CHECKED_METHODS = {
    "optimize": checked_optimize,
    "desired_nodes": checked_desired_nodes,
    "bind_cluster": checked_bind_cluster,
}


def checked_job_kwargs(job_kwargs):
    """Wrap a policy class's ``job_kwargs``: its errors name the policy and the row, its answer is checked."""

    @functools.wraps(job_kwargs)
    def wrapper(self, wjob, app):
        try:
            result = job_kwargs(self, wjob, app)
        except Exception as exc:  # noqa: BLE001
            _reraise(self, f"job_kwargs for job {getattr(wjob, 'name', '?')!r}", exc)
        return check_job_kwargs(self, result, wjob)

    wrapper._checked = True
    return wrapper
