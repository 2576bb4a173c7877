"""The speedup tables of one round: every job's speedups stacked as ``float64[J, K + 1, Rmax + 1]``.

A tabulated :class:`~fastsched.goodput.SpeedupFunction` is read from its own table; any other
callable is evaluated once per distinct function object. Values are checked (finite, not
negative) because the genetic kernels read them unchecked.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched.goodput.speedup import SpeedupFunction
from fastsched.policy._checks import InvalidJobError

__all__ = ["MAX_TABLE_BYTES", "speedup_tables"]

# Largest speedup table of one round (float64[J, K + 1, Rmax + 1]): past it the round is refused
# with an error naming the job with the most replicas instead of dying in a huge allocation.
MAX_TABLE_BYTES = 2**30


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


_NOT_FINITE, _NEGATIVE = 1, 2


def _invalid(key, verdict: int) -> InvalidJobError:
    """Return the error naming job ``key`` whose speedups are not finite (``_NOT_FINITE``) or negative."""
    if verdict == _NOT_FINITE:
        return InvalidJobError(key, f"speedup_fn of job {key!r} returned NaN or inf")
    return InvalidJobError(key, f"speedup_fn of job {key!r} returned a negative speedup")


def _check_values(key, values) -> None:
    if not np.all(np.isfinite(values)):
        raise _invalid(key, _NOT_FINITE)
    if np.any(values < 0):
        raise _invalid(key, _NEGATIVE)


@jit
def _scatter_tables(values, at, reach, group_of, max_reps, table, verdict):
    """Write each job's rows from its group's slice; mark each group's invalid slice in ``verdict``.

    Group ``g``'s slice is ``values[:, at[g] : at[g] + reach[g] + 1]`` (``at[g] < 0``: not
    tabulated, left alone): row 0 single node, row 1 multi-node. Job ``j`` of group
    ``group_of[j]`` gets ``table[j, 1]`` and ``table[j, 2:]`` up to its own ``max_reps[j]`` (the
    rest stay 0). ``verdict[g]``: ``_NOT_FINITE`` if the slice holds NaN or inf, else
    ``_NEGATIVE`` if it holds a negative value (as :func:`_check_values` on the slice).
    """
    for g in range(at.shape[0]):
        if at[g] < 0:
            continue
        finite = True
        negative = False
        for m in range(2):
            for r in range(reach[g] + 1):
                v = values[m, at[g] + r]
                if not np.isfinite(v):
                    finite = False
                elif v < 0.0:
                    negative = True
        verdict[g] = 0 if finite and not negative else (_NOT_FINITE if not finite else _NEGATIVE)
    for j in range(group_of.shape[0]):
        g = group_of[j]
        if at[g] < 0 or verdict[g] != 0:
            continue
        for r in range(max_reps[j] + 1):
            table[j, 1, r] = values[0, at[g] + r]
            for k in range(2, table.shape[1]):
                table[j, k, r] = values[1, at[g] + r]


def _table_slice(fn, m, key) -> np.ndarray:
    """``fn.table(m)[:, : m + 1]`` as float64, refused (naming job ``key``) unless it has that shape."""
    t = np.asarray(fn.table(m), dtype=np.float64)
    if t.ndim != 2 or t.shape[0] != 2 or t.shape[1] < m + 1:
        raise InvalidJobError(
            key, f"speedup_fn of job {key!r}: table({m}) must have shape (2, >= {m + 1}), got {t.shape}"
        )
    return t[:, : m + 1]


def _fill_on_cpu(fns, ranges) -> None:
    """Fill the CPU-side tables of tabulated ``fns`` up to ``ranges``, in one launch (:meth:`SpeedupFunction.fill_ranges`).

    A tabulated callable that reads another's table (``table_source``, as a re-based speedup
    does) has its source filled. Filled one function at a time, as each ``table`` call would,
    a round of thousands of jobs paid a launch per function on one core.
    """
    if fns:
        SpeedupFunction.fill_ranges([getattr(fn, "table_source", fn) for fn in fns], ranges)


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
    # CPU, where they are filled in one launch below).
    SpeedupFunction.fill_tables([fn for fn, g in zip(fns, generic, strict=True) if not g], rmax)
    # Deduplicate by function object: jobs often share one (same model, same hints). Groups are
    # numbered in order of their first job.
    ids: dict = {}
    firsts: list = []
    group_list = []
    callers: dict = {}  # members of the groups of generic callables, evaluated below
    for j, fn in enumerate(fns):
        g = ids.get(id(fn))
        if g is None:
            g = ids[id(fn)] = len(firsts)
            firsts.append(j)
        group_list.append(g)
        if generic[j]:
            callers.setdefault(g, []).append(j)
    group_of = np.array(group_list, dtype=np.int64)
    reps = np.asarray(max_reps, dtype=np.int64)
    reach = np.zeros(len(firsts), dtype=np.int64)  # each group's largest max_replicas
    np.maximum.at(reach, group_of, reps)
    tabulated = [g for g, j in enumerate(firsts) if not generic[j] and reach[g] > 0]
    _fill_on_cpu([fns[firsts[g]] for g in tabulated], reach[tabulated].tolist())
    failures = []  # (group, error) of groups whose speedups are invalid
    # Tabulated groups: each table's [2, reach + 1] slice side by side, scattered and checked at once.
    slices = [_table_slice(fns[firsts[g]], int(reach[g]), keys[firsts[g]]) for g in tabulated]
    if tabulated:
        at = np.full(len(firsts), -1, dtype=np.int64)
        at[tabulated] = np.concatenate(([0], np.cumsum(reach[tabulated] + 1)[:-1]))
        values = np.ascontiguousarray(np.concatenate(slices, axis=1), dtype=np.float64)
        verdict = np.zeros(len(firsts), dtype=np.int64)
        _scatter_tables(values, at, reach, group_of, reps, table, verdict)
        for g in np.flatnonzero(verdict).tolist():
            failures.append((g, _invalid(keys[firsts[g]], int(verdict[g]))))
    for g, members in callers.items():
        m = int(reach[g])
        if m == 0:
            continue
        fn, key = fns[members[0]], keys[members[0]]
        kk = min(m, num_nodes)
        r_idx, n_idx = np.meshgrid(np.arange(1, m + 1), np.arange(1, kk + 1), indexing="ij")
        ok = n_idx <= r_idx
        n_arr = n_idx[ok].astype(np.int64)
        r_arr = r_idx[ok].astype(np.int64)
        try:
            vals = _call_generic(fn, key, n_arr, r_arr)
            _check_values(key, vals)
        except InvalidJobError as exc:
            failures.append((g, exc))
            continue
        sub = np.zeros((kmax + 1, m + 1), dtype=np.float64)
        sub[n_arr, r_arr] = vals
        if kk < kmax:  # Node counts beyond what this job can meet: copy the last one.
            sub[kk + 1 :, :] = sub[kk, :]
        rows = np.asarray(members)
        table[rows, :, : m + 1] = np.where(np.arange(m + 1) <= max_reps[rows][:, None, None], sub, 0.0)
    if failures:  # the first group (in job order) whose speedups are invalid is named
        raise min(failures, key=lambda f: f[0])[1]
    return table
