"""Compile (or load from numba's cache) every kernel a Pollux round can use, before the first round.

A round runs in one of two shapes (:meth:`PolluxPolicy._search`): small problems in one serial
kernel, large ones (population x jobs >= 50,000 with several numba threads: about 500 jobs at the
default population) as separate kernels, some parallel, with the relaxation's seed. A run whose
first rounds are small therefore compiled the large shape's kernels in the middle of the run, at
the first round with enough jobs (tens of seconds on a cold cache, unannounced).
:func:`compile_round_kernels` runs two tiny rounds of each shape, the second warm-started as later
rounds are, so both shapes' kernels are compiled (or loaded) at once: by ``fastsched warmup``, and by
a caller about to run large rounds, behind its first-run notice.
"""

from __future__ import annotations

import time

__all__ = ["LARGE_JOBS", "compile_round_kernels"]

#: Jobs of the round that takes a large round's path (population 100 x 500 jobs reaches the
#: threaded driver's threshold, ``PolluxPolicy._use_parallel``).
LARGE_JOBS = 500


def _two_rounds(policy, num_jobs):
    """Run a first round and a warm one of ``num_jobs`` jobs on two 4-GPU nodes."""
    from fastsched.policy.types import JobInfo, NodeInfo

    def speedup(nodes, replicas):
        return replicas**0.8

    gpu = "nvidia.com/gpu"
    nodes = {f"n{i}": NodeInfo({gpu: 4}, False) for i in range(2)}
    jobs = {f"j{i}": JobInfo({gpu: 1}, speedup, i, 0, 4) for i in range(num_jobs)}
    first, _ = policy.optimize(jobs, nodes, {}, NodeInfo({gpu: 4}, True))
    policy.optimize(jobs, nodes, first, NodeInfo({gpu: 4}, True))


def _table_rounds():
    """Build the speedup tables of two rounds of SpeedupFunctions: few cells, then many.

    A round's tables are filled in one launch (:meth:`~fastsched.goodput.SpeedupFunction.fill_ranges`),
    by a serial kernel up to ``SERIAL_MAX_KEYS`` cells and a parallel one beyond, then written by
    one kernel: a large round's first tables would otherwise compile the parallel fill.
    """
    import numpy as np

    from fastsched.goodput import GoodputFunction, SpeedupFunction
    from fastsched.goodput._kernels import SERIAL_MAX_KEYS
    from fastsched.policy._tables import speedup_tables

    model = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4.0), 32)
    for count in (1, SERIAL_MAX_KEYS // 8 + 1):  # 8 cells a function to fill: below, then above the limit
        fns = [SpeedupFunction(model, 512) for _ in range(count)]
        speedup_tables(fns, list(range(count)), np.full(count, 4), 2)


def compile_round_kernels(policy_class, large=True) -> float:
    """Compile (or load) the kernels of Pollux rounds; return the seconds it took.

    Parameters
    ----------
    policy_class : type
        :class:`~fastsched.policy.PolluxPolicy` or a subclass (passed in, so this module below
        the policy imports nothing above it).
    large : bool
        Also the large rounds' kernels: the threaded driver with its parallel kernels (a tiny
        round forced parallel, for processes with more threads than this one) and, where numba
        has several threads, a round of :data:`LARGE_JOBS` jobs at the default population, which
        takes the path a large round takes (its serial and parallel steps); each with the
        relaxation's seed; and the kernels that fill and write many speedup tables at once.
        ``False``: the serial round's kernel only.

    Examples
    --------
    >>> from fastsched.policy import PolluxPolicy
    >>> compile_round_kernels(PolluxPolicy, large=False) >= 0.0
    True
    """
    import numba

    t0 = time.perf_counter()
    _two_rounds(policy_class(seed=0, pop_size=8, generations=2, parallel=False), 3)
    if large:
        _table_rounds()
        forced = policy_class(seed=0, pop_size=8, generations=2, parallel=True)
        forced._relax = True
        _two_rounds(forced, 3)
        if numba.get_num_threads() > 1:
            # With one thread the default policy's large round is the serial kernel, compiled above.
            default = policy_class(seed=0, generations=2)
            default._relax = True
            _two_rounds(default, LARGE_JOBS)
    return time.perf_counter() - t0
