"""A whole serial search round in one kernel: seeds, initial pool, generations, final polish.

numba optimises and emits every kernel that Python calls over its whole call tree, so the
helpers that several such kernels share (repair, row unpacking, sorting, selection) were
compiled once per kernel. :func:`search_serial` runs the same steps, in the same order and
with the same random streams, as the separate kernels the driver calls for large problems
(``repair_serial``, ``first_fit_rows``, ``greedy_fill``, ``polish_row``, ``survive``,
``gather``, ``evolve_serial``), through link-only copies of them: one module, one ``-O3``.
It also ranks the final population and scores its first front (``nondominated_rank``,
``cluster_utilities``) and derives the round's stream keys itself, so a serial round
compiles no other kernel of the package.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from fastsched._numba_private import copy_function
from fastsched.policy._ga.evolve import _evolve, _gather, offspring_search
from fastsched.policy._ga.linkonly import entry, inner
from fastsched.policy._ga.local import polish_row
from fastsched.policy._ga.relax import relax_row
from fastsched.policy._ga.repair import repair_population
from fastsched.policy._ga.rng import POLISH, REPAIR, _stream_key
from fastsched.policy._ga.seeding import first_fit_rows, greedy_fill
from fastsched.policy._ga.select import _first_front, _nondominated_rank, _survive_ranked
from fastsched.policy._ga.utility import _cluster_utilities

__all__ = ["Plan", "search_serial"]

Plan = namedtuple(
    "Plan",
    "seed round_ generations patience pm protect scratch num_real passes transfers kicks polish "
    "limits ff_rows fills polish_src polish_dst relax relax_transfers seeds rand_rows pm_init count",
)
Plan.__doc__ = """What the driver decided for one serial round (see ``PolluxPolicy._search``).

Scalars are typed (``np.int64``, ``np.float64``, ``np.uint64``, ``np.bool_``) so the kernel
compiles once. ``fills`` is int64[k, 3] of greedy fills ``(source row, node limit, row)``;
``polish_src`` / ``polish_dst`` the seed rows polished and where to; ``relax`` the row of the
relaxation's seed (-1: none), polished with transfers ``relax_transfers``; ``transfers`` the other polishes' (``local.NO_TRANSFERS`` ...); ``seeds``
the number of seed rows; ``rand_rows`` the rows
mutated into the initial pool; ``count`` the population size.
"""

_repair = inner(copy_function(repair_population, "repair_linked"))
_first_fit_rows = inner(copy_function(first_fit_rows.py_func, "first_fit_rows_linked"))
_greedy_fill = inner(copy_function(greedy_fill.py_func, "greedy_fill_linked"))
_polish_row = inner(copy_function(polish_row.py_func, "polish_row_linked"))
_relax_row = inner(copy_function(relax_row.py_func, "relax_row_linked"))
_evolve_linked = inner(copy_function(_evolve, "evolve_linked", {"offspring": offspring_search}))


@inner
def _iota(n):
    """``np.arange(n)`` (numba's compiles a kernel of its own)."""
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = i
    return out


@entry
def search_serial(plan, A, base, fixed, warm, pool, cur, nxt, work, final):
    """Run a serial round; return ``(generations run, rows, rank, utilities)``.

    ``base`` holds the base allocation (one row), ``fixed`` receives the seed rows, ``warm`` the
    previous population adapted to this round (zero rows in a first round), ``pool`` the
    initial pool and ``cur`` / ``nxt`` the generation buffers. ``final`` (``min(count, pool
    rows) + 1`` rows) receives the final population and, when it scores higher than the best
    final row within the real nodes, that row's polish as its last row; ``rows`` is the number
    of rows written. ``rank`` is the non-dominated rank of each of them and ``utilities`` the
    cluster utility of each rank-0 row (in row order), as the driver needs them.
    """
    key_seed = _stream_key(plan.seed, plan.round_, np.int64(0), REPAIR)
    zero = _iota(np.int64(1))  # row 0
    _repair(key_seed, base, zero, 0.0, A, plan.scratch, fixed, np.int64(0))
    _first_fit_rows(A, plan.limits, fixed, plan.ff_rows)
    for i in range(plan.fills.shape[0]):
        _greedy_fill(fixed, plan.fills[i, 0], plan.fills[i, 1], A, plan.scratch, fixed, plan.fills[i, 2])
    for i in range(plan.polish_src.shape[0]):
        _polish_row(
            fixed,
            plan.polish_src[i],
            A,
            plan.num_real,
            plan.scratch,
            plan.passes,
            plan.transfers,
            np.int64(0),
            np.uint64(0),
            fixed,
            plan.polish_dst[i],
        )
    if plan.relax >= 0:
        njobs = A.job_res.shape[0]
        kind = np.empty(njobs, dtype=np.int64)
        reps = np.empty(njobs, dtype=np.int64)
        passes = plan.passes if plan.polish else np.int64(0)
        _relax_row(A, plan.num_real, plan.scratch, passes, plan.relax_transfers, kind, reps, fixed, plan.relax)
    seeds = plan.seeds
    _repair(key_seed, fixed, _iota(seeds), 0.0, A, plan.scratch, pool, np.int64(0))
    nwarm = warm.obj.shape[0]
    if nwarm > 0:
        key_warm = _stream_key(plan.seed, plan.round_, seeds, REPAIR)
        _repair(key_warm, warm, _iota(nwarm), 0.0, A, plan.scratch, pool, seeds)
    key_pool = _stream_key(plan.seed, plan.round_, seeds + nwarm, REPAIR)
    _repair(key_pool, pool, plan.rand_rows, plan.pm_init, A, plan.scratch, pool, seeds + nwarm)
    keep, _, _ = _survive_ranked(-pool.obj, pool.size.astype(np.float64), pool.hash, plan.count, plan.protect)
    _gather(pool, keep, cur)
    n = np.int64(keep.shape[0])
    where, ran = _evolve_linked(
        plan.seed, plan.round_, plan.generations, plan.patience, n, n, plan.pm, plan.protect, cur, nxt, A, work
    )
    out = cur if where == 0 else nxt
    _gather(out, _iota(n), final)
    rows = n
    if plan.polish:
        best = np.int64(-1)  # not a literal: polish_row keeps one specialisation
        for i in range(n):
            if out.size[i] <= plan.num_real and (best < 0 or out.obj[i] > out.obj[best]):
                best = i
        if best >= 0:
            key_final = _stream_key(plan.seed, plan.round_, np.int64(0), POLISH)
            _polish_row(
                out,
                best,
                A,
                plan.num_real,
                plan.scratch,
                plan.passes,
                plan.transfers,
                plan.kicks,
                key_final,
                final,
                n,
            )
            if final.obj[n] > out.obj[best]:
                rows = n + 1
    rank = _nondominated_rank(-final.obj[:rows], final.size[:rows].astype(np.float64))
    util = _cluster_utilities(final.off, final.node, final.cnt, _first_front(rank), A.table, A.job_res, A.node_res)
    return ran, rows, rank, util
