"""Embedding in a live scheduler: concurrent calls from threads, and use after ``fork``."""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction

PERF = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GRAD = GradParams(0.00136, 0.000502)


def _goodput_workload(seed: int):
    """One call's worth of mixed goodput work; deterministic in ``seed``."""
    rng = np.random.RandomState(seed)
    fn = GoodputFunction(PERF, GRAD, 128)
    replicas = rng.randint(1, 65, 5000)
    nodes = np.minimum(rng.randint(1, 9, 5000), replicas)
    g, a, s = fn.optimize(nodes, replicas, 1280, (64, 256), True)
    ev = fn.evaluate(nodes, replicas, np.maximum(a, 1), s)
    sp = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    return g.sum(), int(a.sum()), float(ev.sum()), float(sp(nodes, replicas).sum()), fn.optimize(1, seed % 8 + 1)


def test_threads_get_serial_results():
    seeds = list(range(8)) * 50  # 8 threads x 50 calls
    serial = {s: _goodput_workload(s) for s in range(8)}
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(_goodput_workload, seeds))
    for seed, result in zip(seeds, results, strict=True):
        assert result == serial[seed]


def test_shared_speedup_function_across_threads():
    # One SpeedupFunction shared by all threads: its lazily grown table must stay consistent.
    fn = GoodputFunction(PERF, GRAD, 128)
    shared = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
    fresh = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))

    def call(k):
        r = np.arange(1, 40 * (k % 7 + 1))
        return shared(np.minimum(r, 2), r)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(call, range(400)))
    for k, got in enumerate(results):
        r = np.arange(1, 40 * (k % 7 + 1))
        assert np.array_equal(got, fresh(np.minimum(r, 2), r))


def _child(queue):
    queue.put(_goodput_workload(3))


@pytest.mark.skipif(sys.platform == "win32" or not hasattr(os, "fork"), reason="needs fork")
def test_usable_after_fork_while_threads_run():
    expected = _goodput_workload(3)
    ctx = multiprocessing.get_context("fork")
    with ThreadPoolExecutor(max_workers=2) as pool:
        busy = [pool.submit(_goodput_workload, s) for s in range(4)]  # parallel regions in flight
        queue = ctx.Queue()
        proc = ctx.Process(target=_child, args=(queue,))
        proc.start()
        got = queue.get(timeout=120)
        proc.join(timeout=60)
        for f in busy:
            f.result()
    assert proc.exitcode == 0
    assert got == expected
