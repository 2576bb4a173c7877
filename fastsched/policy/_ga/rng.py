"""Counter-based random streams of the genetic search.

Every child of every generation owns a stream keyed by ``(seed, round, generation, child)``
and draws ``splitmix64(key + k * golden)`` for ``k = 0, 1, ...``; a stream is a ``uint64[2]``
array ``[key, counter]``. No state is shared between threads, so 1 or many threads give the
same population bit for bit.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched._numba_private import copy_function
from fastsched.policy._ga.linkonly import leaf

GOLD = np.uint64(0x9E3779B97F4A7C15)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0
NEVER = np.int64(1) << 62

# Stream ids: the last part of a round's stream keys ``(seed, round, a, id)``. A generation
# ``a`` draws its tournament from TOURNAMENT and its children from CHILDREN; the repairs of
# the round's seed rows and initial pool draw from REPAIR (``a``: the first row repaired) and
# the final polish from POLISH (``a = 0``). The serial kernel and the threaded driver derive
# their keys from these alone.
TOURNAMENT = np.int64(0)
CHILDREN = np.int64(1)
REPAIR = np.int64(9)
POLISH = np.int64(11)


@leaf
def mix64(x):
    """splitmix64 finaliser: a bijective avalanche of a uint64."""
    x = x ^ (x >> _S30)
    x = x * M1
    x = x ^ (x >> _S27)
    x = x * M2
    return x ^ (x >> _S31)


@leaf
def _stream_key(seed, a, b, c):
    """Key of the stream ``(seed, a, b, c)`` (all non-negative ints), a ``uint64``."""
    k = mix64(np.uint64(seed) + GOLD)
    k = mix64(k ^ (np.uint64(a) * M1 + GOLD))
    k = mix64(k ^ (np.uint64(b) * M2 + GOLD))
    return mix64(k ^ (np.uint64(c) * GOLD + M1))


@leaf
def sub_key(key, i, salt):
    """Key of sub-stream ``i`` of ``key`` (children of a generation, rows of a repair)."""
    return mix64(key ^ (np.uint64(i) * GOLD + salt))


@leaf
def rand_u01(st):
    """Next uniform float in [0, 1) of stream ``st = [key, counter]`` (uint64[2])."""
    x = mix64(st[0] + st[1] * GOLD)
    st[1] += np.uint64(1)
    return float(x >> _S11) * _INV53


@leaf
def rand_int(st, n):
    """Next uniform int in ``[0, n)`` (``n >= 1``)."""
    k = np.int64(rand_u01(st) * n)
    return k if k < n else n - 1


@leaf
def next_event(st, j, pm):
    """Return the index of the next mutated job after ``j``.

    A geometric skip: one draw per mutation instead of one per job.
    """
    if pm <= 0.0:
        return NEVER
    if pm >= 1.0:
        return j + 1
    u = rand_u01(st)
    return j + 1 + np.int64(np.log(1.0 - u) / np.log(1.0 - pm))


# Kernels link ``_stream_key``; Python callers (and tests) get this compiled twin of the same source.
stream_key = jit(copy_function(_stream_key.py_func, "stream_key"))
