"""The speedup tables of one round: every job's speedups stacked as ``float64[J, K + 1, Rmax + 1]``.

A tabulated :class:`~fastsched.goodput.SpeedupFunction` is read from its own table; any other
callable is evaluated once per distinct function object. Values are checked (finite, not
negative) because the genetic kernels read them unchecked.
"""

from __future__ import annotations

import numpy as np

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
            # Each member's rows up to its own max_replicas (the rest stay 0), all members at once.
            rows = np.asarray(members)
            t = np.where(np.arange(m + 1) <= max_reps[rows][:, None], t[:, None, :], 0.0)
            table[rows, 1, : m + 1] = t[0]
            table[rows, 2:, : m + 1] = t[1][:, None, :]
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
            rows = np.asarray(members)
            table[rows, :, : m + 1] = np.where(np.arange(m + 1) <= max_reps[rows][:, None, None], sub, 0.0)
    return table
