"""One round of the genetic search planned once: the seed rows, the initial pool, the search settings.

:func:`make_plan` returns the :class:`~fastsched.policy._ga.search.Plan` that both ways of
running a round read: the serial kernel (:func:`~fastsched.policy._ga.search.search_serial`)
and the threaded driver in :mod:`fastsched.policy.pollux`, which runs the same steps as
separate (parallel) kernels. Nothing about a round is decided twice.
"""

from __future__ import annotations

import contextlib
import threading

import numba
import numpy as np

from fastsched.policy._ga.local import ALL_TRANSFERS, LOCAL_TRANSFERS, NO_TRANSFERS, polish_row
from fastsched.policy._ga.population import concat
from fastsched.policy._ga.rng import POLISH
from fastsched.policy._ga.rng import stream_key as _stream_key
from fastsched.policy._ga.search import Plan
from fastsched.policy._ga.types import new_pop

__all__ = [
    "beside",
    "POLISH_PASSES",
    "SMALL",
    "KICKS",
    "make_plan",
    "polish_best",
    "relaxed",
    "seed_buffer_rows",
    "seed_plan",
    "stream_key",
    "transfers",
]

#: Local-search passes over the jobs per polished row (a pass that changes nothing ends it
#: earlier; one or two usually suffice).
POLISH_PASSES = 20
#: Replica transfers between jobs and ruin-and-recreate kicks (the heavier local-search moves)
#: run on problems of at most this many jobs x problem nodes; larger clusters are near-full in
#: practice and single-job moves already cost milliseconds there.
SMALL = 4096
#: Ruin-and-recreate steps of the final polish (it stops after a quarter of them in a row found
#: nothing better).
KICKS = 64


def transfers(prob) -> bool:
    """Whether the local search of ``prob`` moves replicas between jobs (small problems only).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> transfers(SimpleNamespace(num_jobs=64, num_nodes=64)), transfers(SimpleNamespace(num_jobs=65, num_nodes=64))
    (True, False)
    """
    return prob.num_jobs * prob.num_nodes <= SMALL


def relaxed(prob) -> bool:
    """Whether a round of ``prob`` seeds its search from the separable relaxation (large problems).

    Small problems (see :func:`transfers`) polish every seed with replica transfers and
    ruin-and-recreate kicks and reach the MILP optimum without it; on large ones the best
    allocation moves many jobs at once, which the relaxation's seed (:mod:`fastsched.policy._ga.relax`)
    starts from.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> relaxed(SimpleNamespace(num_jobs=64, num_nodes=64)), relaxed(SimpleNamespace(num_jobs=65, num_nodes=64))
    (False, True)
    """
    return not transfers(prob)


def seed_plan(prob, warm: bool, polish: bool, relax: bool | None = None):
    """Plan the seed rows: ``(limits, first-fit rows, greedy fills, polishes, relax, rows, seeds)``.

    Base allocation (row 0), first fit and greedy fills at several cluster sizes, and the
    local-search polish of each; on large problems (:func:`relaxed`) the relaxation's seed
    (polished as it is built). ``fills`` lists ``(source row, node limit, row)`` and
    ``polishes`` ``(source row, row)`` in the order they run; ``relax`` is the row of the
    relaxation's seed (-1 where there is none); ``rows`` is the size of the seed buffer and
    ``seeds`` the number of rows the plan writes. ``relax`` forces the relaxation's seed on
    (``True``) or off (``False``); ``None``: by :func:`relaxed`.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> prob = SimpleNamespace(num_jobs=3, num_real=4, num_nodes=8, base_width=0)
    >>> limits, ff_rows, fills, polishes, relax, rows, seeds = seed_plan(prob, warm=False, polish=True)
    >>> limits, ff_rows
    ([8, 4, 2, 1], [1, 3, 5, 7])
    >>> fills[:2], polishes, relax, seeds
    ([(1, 8, 2), (3, 4, 4)], [(3, 11), (4, 12)], -1, 13)
    >>> big = SimpleNamespace(num_jobs=300, num_real=40, num_nodes=40, base_width=0)
    >>> seed_plan(big, warm=True, polish=True)[4:]
    (4, 9, 5)
    """
    J, N, N2 = prob.num_jobs, prob.num_real, prob.num_nodes
    # A ladder of cluster sizes (N2, N, N/2, ..., 1): well-packed small clusters give the
    # Pareto front (and so the desired-size decision) realistic utilities. A warm round
    # inherits those sizes from the previous population: first fit at N is enough.
    limits = {N2, N}
    L = N
    while L > 1 and not warm:
        L = (L + 1) // 2
        limits.add(L)
    if warm:
        limits = {N}
    limits = sorted(limits, reverse=True)
    small = J * N2 <= SMALL
    has_base = prob.base_width > 0
    rows = _seed_buffer_rows(len(limits))
    # Row layout: each size's first fit, followed by its greedy fill where there is one. Large
    # problems: greedy fills of the smaller sizes cost more than the generations that find
    # them; first fit marks those sizes.
    ff_rows = []
    r = 1
    for L in limits:
        ff_rows.append(r)
        r += 2 if (L == N or small) else 1
    fills = []
    r = 1
    at_n = []  # seeds within the real nodes, to polish
    for L in limits:
        r += 1
        if L == N or small:
            fills.append((r - 1, L, r))
            r += 1
        if L == N:
            at_n += [r - 1] if not small else [r - 2, r - 1]
    for L in (N, N2) if (small or has_base) else ():
        fills.append((0, L, r))
        r += 1
    polishes = []
    if polish:
        # The allocation optimize returns lies within the real nodes: polish there.
        for src in at_n + ([0] if has_base else []):
            polishes.append((src, r))
            r += 1
    at = -1
    if relaxed(prob) if relax is None else relax:
        at = r
        r += 1
    return limits, ff_rows, fills, polishes, at, rows, r


def _seed_buffer_rows(nlimits: int) -> int:
    # The base, a first fit and a greedy fill per size, two base fills, three polishes, the
    # relaxation's seed.
    return 1 + 2 * nlimits + 2 + 3 + 1


def seed_buffer_rows(plan: Plan) -> int:
    """Rows of the buffer the seed rows of ``plan`` are built in (at least ``plan.seeds``).

    Examples
    --------
    >>> from fastsched.policy import JobInfo, NodeInfo, build_problem
    >>> prob = build_problem({"a": JobInfo({"gpu": 1}, lambda n, r: r, 0, 0, 4)}, {"n0": NodeInfo({"gpu": 4}, False)}, {}, None)
    >>> plan = make_plan(prob, seed=0, round_=1, pop_size=8, generations=5, patience=None, mutation_rate=2.0,
    ...                  polish=True, scratch=4, warm_rows=None, extra=8)
    >>> seed_buffer_rows(plan) >= int(plan.seeds)
    True
    """
    return _seed_buffer_rows(plan.limits.shape[0])


def pool_rows(seed: int, round_: int, src_rows: int, extra: int) -> np.ndarray:
    """Rows of the initial pool's sources that its ``extra`` mutated rows start from.

    Examples
    --------
    >>> rows = pool_rows(7, 1, 5, 4)
    >>> rows.dtype.name, rows.shape, bool(((rows >= 0) & (rows < 5)).all())
    ('int64', (4,), True)
    """
    rng = np.random.default_rng([seed % (2**32), round_])
    return rng.integers(0, src_rows, size=extra).astype(np.int64)


def make_plan(
    prob,
    *,
    seed: int,
    round_: int,
    pop_size: int,
    generations: int,
    patience: int | None,
    mutation_rate: float,
    polish: bool,
    scratch: int,
    warm_rows: int | None,
    extra: int,
    relax: bool | None = None,
) -> Plan:
    """Return the plan of one round (see :class:`~fastsched.policy._ga.search.Plan`).

    Parameters
    ----------
    prob : Problem
        This round's problem (at least one job and one real node).
    seed, round_ : int
        The policy's seed and this round's number (keys of the random streams).
    pop_size, generations, patience, mutation_rate, polish
        The policy's settings (see :class:`~fastsched.policy.PolluxPolicy`).
    scratch : int
        Entry scratch per row (see ``PolluxPolicy._scratch``).
    warm_rows : int or None
        Rows of the previous population adapted to this round; ``None`` in a first round.
    extra : int
        Mutated rows of the initial pool.
    relax : bool, optional
        Seed from the relaxation (``None``: on large problems, see :func:`relaxed`).

    Examples
    --------
    >>> from fastsched.policy import JobInfo, NodeInfo, build_problem
    >>> nodes = {"n0": NodeInfo({"gpu": 4}, False)}
    >>> prob = build_problem({"a": JobInfo({"gpu": 1}, lambda n, r: r, 0, 0, 4)}, nodes, {}, None)
    >>> plan = make_plan(prob, seed=0, round_=1, pop_size=8, generations=5, patience=None, mutation_rate=2.0,
    ...                  polish=True, scratch=4, warm_rows=None, extra=8)
    >>> int(plan.count), float(plan.pm), int(plan.patience), plan.rand_rows.shape
    (8, 1.0, 0, (8,))
    """
    J = prob.num_jobs
    limits, ff_rows, fills, polishes, relax, _, r = seed_plan(prob, warm_rows is not None, polish, relax)
    moves = transfers(prob)
    i64 = np.int64
    return Plan(
        seed=np.uint64(seed),
        round_=i64(round_),
        generations=i64(generations),
        patience=i64(0 if patience is None else patience),
        pm=np.float64(min(1.0, mutation_rate / J)),
        protect=np.float64(prob.num_real),
        scratch=i64(scratch),
        num_real=i64(prob.num_real),
        passes=i64(POLISH_PASSES),
        transfers=i64(ALL_TRANSFERS if moves else NO_TRANSFERS),
        kicks=i64(KICKS if moves else 0),  # ruin-and-recreate is a small-problem tool
        polish=np.bool_(polish),
        limits=np.array(limits, dtype=np.int64),
        ff_rows=np.array(ff_rows, dtype=np.int64),
        fills=np.array(fills, dtype=np.int64).reshape(-1, 3),
        polish_src=np.array([s for s, _ in polishes], dtype=np.int64),
        polish_dst=np.array([d for _, d in polishes], dtype=np.int64),
        relax=i64(relax),
        # The relaxation's seed is polished with transfers on the nodes a job already holds (and
        # from anywhere to the jobs left below their share, see relax._polish_to_target): on a
        # large problem they fix the packing's leftovers at a fraction of all transfers' cost.
        relax_transfers=i64(ALL_TRANSFERS if moves else LOCAL_TRANSFERS),
        seeds=i64(r),
        rand_rows=pool_rows(seed, round_, r + (warm_rows or 0), extra),
        pm_init=np.float64(min(1.0, max(0.1, 8.0 / J))),
        count=i64(pop_size),
    )


def stream_key(plan: Plan, start: int, stream: int) -> np.uint64:
    """Key of the round's random stream ``(start, stream)``, as the serial kernel derives it.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> plan = SimpleNamespace(seed=np.uint64(1), round_=np.int64(2))
    >>> type(stream_key(plan, 0, 9)).__name__
    'uint64'
    """
    # numba returns the uint64 as a Python int; keep it uint64 so kernels type it so.
    return np.uint64(_stream_key(plan.seed, int(plan.round_), int(start), int(stream)))


def polish_best(prob, plan: Plan, A, pop):
    """Return ``pop`` with the local-search polish of its best row within the real nodes appended.

    As the serial kernel's last step (``plan.polish``; ``A`` the round's problem arrays; nothing
    is appended when the polish does not raise the first objective).
    """
    if not plan.polish:
        return pop
    ok = np.flatnonzero(pop.size <= prob.num_real)
    if ok.size == 0:
        return pop
    best = int(ok[np.argmax(pop.obj[ok])])
    out = new_pop(1, prob.num_jobs, pop.node.shape[1])
    polish_row(
        pop,
        best,
        A,
        int(plan.num_real),
        int(plan.scratch),
        int(plan.passes),
        plan.transfers,
        int(plan.kicks),
        stream_key(plan, 0, POLISH),
        out,
        0,
    )
    if out.obj[0] <= pop.obj[best]:
        return pop
    return concat(pop, out)


@contextlib.contextmanager
def beside(kernel, args):
    """Run ``kernel(*args)`` in a thread of its own while the block runs; joined when it ends.

    For a serial kernel that releases the GIL and writes only what the block neither reads nor
    writes (the relaxation's seed row beside the other seeds): the results are those of running
    it after the block. With one numba thread (one core to use) it runs after the block, in the
    caller's thread; ``kernel=None`` runs nothing. An exception of the kernel is raised at the end.

    Examples
    --------
    >>> out = []
    >>> with beside(out.append, (1,)):
    ...     out.append(0)
    >>> sorted(out)
    [0, 1]
    """
    if kernel is None:
        yield
        return
    if numba.get_num_threads() < 2:
        yield
        kernel(*args)
        return
    failed = []

    def run():
        try:
            kernel(*args)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread below
            failed.append(exc)

    thread = threading.Thread(target=run, name="fastsched-seed", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()
    if failed:
        raise failed[0]
