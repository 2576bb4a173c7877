"""AdaptDL's goodput and speedup tests, ported to fastsched (same parametrisation)."""

from __future__ import annotations

import itertools
from unittest.mock import Mock

import numpy as np
import pytest

from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction

RNG = np.random.RandomState(0)
PERF_PARAMS = [PerfParams(*RNG.gamma(2.0, 2.0, [7])) for _ in range(10)]
GRAD_PARAMS = [GradParams(*RNG.gamma(2.0, 2.0, [2])) for _ in range(10)]
# (All ten gamma draws fall inside the model's [1, 10], so no draw is rejected.)

params = pytest.mark.parametrize("perf_params, grad_params", list(itertools.product(PERF_PARAMS, GRAD_PARAMS)))


def groupby_indices(*args):
    _, indices = np.unique(np.stack(args), axis=1, return_inverse=True)
    groups = {}
    for i, g in enumerate(np.asarray(indices).reshape(-1)):
        groups.setdefault(g, []).append(i)
    return list(groups.values())


@params
def test_evaluate(perf_params, grad_params):
    init_batch_size = 16
    goodput_fn = GoodputFunction(perf_params, grad_params, init_batch_size)
    grid = itertools.product([1, 2, 3, 4], [1, 2, 4, 8], [8, 12, 16, 20, 24], [0, 1, 2, 3, 4])
    num_nodes, num_replicas, atomic_bsz, accum_steps = map(np.array, zip(*grid, strict=True))
    valid = (num_nodes <= num_replicas) & (init_batch_size <= num_replicas * atomic_bsz * accum_steps)
    num_nodes, num_replicas = num_nodes[valid], num_replicas[valid]
    atomic_bsz, accum_steps = atomic_bsz[valid], accum_steps[valid]
    goodput = goodput_fn(num_nodes, num_replicas, atomic_bsz, accum_steps)
    throughput = goodput_fn.throughput(num_nodes, num_replicas, atomic_bsz, accum_steps)
    efficiency = goodput_fn.efficiency(num_replicas * atomic_bsz * (accum_steps + 1))
    assert np.all(throughput >= 0)
    assert np.all(efficiency >= 0) and np.all(efficiency <= 1)
    assert np.allclose(goodput, throughput * efficiency)
    # Larger batches are less efficient.
    batch_size = num_replicas * atomic_bsz * (accum_steps + 1)
    order = np.argsort(batch_size)
    assert np.all(np.diff(efficiency[order]) <= 0)
    # All else equal, a larger atomic batch gives more throughput, with diminishing returns.
    for idx in groupby_indices(num_nodes, num_replicas, accum_steps):
        order = np.argsort(atomic_bsz[idx])
        assert np.all(np.diff(throughput[idx][order]) >= 0)
        if len(idx) > 1:
            dx = np.diff(atomic_bsz[idx][order])
            dy = np.diff(throughput[idx][order])
            assert np.all(dx[:-1] * dy[1:] - dx[1:] * dy[:-1] <= 0)
    # All else equal, scalability is sublinear in the number of replicas.
    for idx in groupby_indices(num_nodes, atomic_bsz, accum_steps):
        scalability = throughput / num_replicas
        order = np.argsort(num_replicas[idx])
        assert np.all(np.diff(scalability[idx][order]) <= 0)


@params
def test_optimize_no_bounds(perf_params, grad_params):
    fn = GoodputFunction(perf_params, grad_params, 128)
    goodput, bsz, steps = fn.optimize(1, 3)
    assert bsz == 128 // 3 + 1
    assert isinstance(goodput, float)
    replicas = np.asarray([1, 2, 3, 4, 5])
    for nodes in (np.ones_like(replicas), replicas):
        goodput, bsz, steps = fn.optimize(nodes, replicas)
        assert bsz.shape == (5,) and goodput.shape == (5,)
        assert np.all(bsz == np.ceil(128 / replicas).astype(int))
        assert bsz[0] == 128
        assert np.all(steps == 0)


@params
def test_optimize_local_bounds(perf_params, grad_params):
    fn = GoodputFunction(perf_params, grad_params, 128)
    goodput, bsz, steps = fn.optimize(1, 1, atomic_bsz_range=(64, 256))
    assert bsz == 128
    assert isinstance(goodput, float)
    replicas = np.asarray(range(1, 100))
    for nodes in (np.ones_like(replicas), replicas):
        goodput, bsz, steps = fn.optimize(nodes, replicas, atomic_bsz_range=(64, 256))
        assert np.all(bsz >= np.ceil(128 / replicas).astype(int))
        assert np.all((bsz >= 64) | (goodput == 0.0))
        assert np.all(bsz <= 256)
        assert np.all(bsz * replicas <= 100 * 128)
        assert bsz[0] == 128
        assert np.all(steps == 0)


@params
def test_optimize_max_bounds(perf_params, grad_params):
    fn = GoodputFunction(perf_params, grad_params, 128)
    goodput, bsz, steps = fn.optimize(1, 1, max_batch_size=1280)
    assert bsz == 128
    assert isinstance(goodput, float)
    replicas = np.asarray(range(1, 100))
    for nodes in (np.ones_like(replicas), replicas):
        goodput, bsz, steps = fn.optimize(nodes, replicas, max_batch_size=1280)
        assert np.all(bsz >= np.ceil(128 / replicas).astype(int))
        assert np.all(bsz * replicas <= 1280 + replicas)
        assert bsz[0] == 128
        assert np.all(steps == 0)


@params
def test_optimize_accumulation(perf_params, grad_params):
    fn = GoodputFunction(perf_params, grad_params, 128)
    goodput, bsz, steps = fn.optimize(1, 1, max_batch_size=1280, atomic_bsz_range=(64, 256), accumulation=True)
    assert isinstance(goodput, float)
    replicas = np.asarray(range(1, 20))
    for multi, nodes in ((False, np.ones_like(replicas)), (True, replicas)):
        goodput, bsz, steps = fn.optimize(
            nodes, replicas, max_batch_size=1280, atomic_bsz_range=(64, 256), accumulation=True
        )
        zero = goodput == 0.0
        assert np.all((bsz >= np.ceil(128 / replicas).astype(int)) | zero)
        assert np.all((bsz >= 64) | zero)
        assert np.all(bsz <= 256)
        assert np.all((bsz * replicas * (steps + 1) < 1280 + replicas * (steps + 1)) | zero)
        assert np.all(steps <= 15)
        assert np.all(steps >= 0)
        if multi:
            assert np.all((steps * bsz >= 256) | (steps == 0))
        else:
            assert np.all((replicas > 1) | (bsz == 128) | (steps > 0))


@params
def test_one_replica_accumulation(perf_params, grad_params):
    fn = GoodputFunction(perf_params, grad_params, 128)
    replicas = np.asarray([1])
    for max_batch_size in range(128, 128 * 20, 128):
        goodput, bsz, steps = fn.optimize(
            np.ones_like(replicas),
            replicas,
            max_batch_size=max_batch_size,
            atomic_bsz_range=(64, 256),
            accumulation=True,
        )
        zero = goodput == 0.0
        assert np.all((bsz >= 64) | zero)
        assert np.all(bsz <= 256)
        assert np.all((bsz * (steps + 1) <= max_batch_size) | zero)
        assert np.all((bsz >= np.ceil(128 / replicas).astype(int)) | zero)
        assert np.all((bsz * (steps + 1) != 128) | (steps == 0))


def _mock_optimize(num_nodes, num_replicas, *args, **kwargs):
    return 32 * np.sqrt(num_replicas), 32, 0


def test_speedup_with_mock_goodput():
    goodput_fn = Mock()
    goodput_fn.optimize = Mock(side_effect=_mock_optimize)
    speedup_fn = SpeedupFunction(goodput_fn)
    num_replicas = np.arange(1, 100)
    assert np.allclose(speedup_fn(1, num_replicas), np.sqrt(num_replicas))


def test_speedup_memoize_with_mock_goodput():
    goodput_fn = Mock()
    goodput_fn.optimize = Mock(side_effect=_mock_optimize)
    speedup_fn = SpeedupFunction(goodput_fn)
    goodput_fn.optimize.reset_mock()
    n = r = np.arange(1, 10)
    assert np.allclose(speedup_fn(n, r), np.sqrt(r))
    assert goodput_fn.optimize.call_count == 1
    assert np.all(goodput_fn.optimize.call_args[0][0] == n)
    assert np.all(goodput_fn.optimize.call_args[0][1] == r)
    n = r = np.arange(1, 20)
    assert np.allclose(speedup_fn(n, r), np.sqrt(r))
    assert goodput_fn.optimize.call_count == 2
    assert np.all(goodput_fn.optimize.call_args[0][0] == np.arange(10, 20))
    assert np.all(goodput_fn.optimize.call_args[0][1] == np.arange(10, 20))
    n = r = np.arange(5, 15)
    assert np.allclose(speedup_fn(n, r), np.sqrt(r))
    assert goodput_fn.optimize.call_count == 2
