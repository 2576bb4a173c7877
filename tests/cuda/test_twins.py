"""Every CUDA kernel equals its CPU twin on random inputs (GPU or NUMBA_ENABLE_CUDASIM=1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastsched.cuda as fc
from fastsched._jit import parallel_region
from fastsched.goodput import GoodputFunction, SpeedupFunction, speedup_tables
from fastsched.goodput import _kernels as gk
from fastsched.policy import _ga as G
from tests.cuda._support import TPB, model_params, random_perf, random_population, rel_close, requires_cuda

pytestmark = [requires_cuda, pytest.mark.cudasim]

# The simulator runs one Python thread per CUDA thread: few, small examples.
FEW = settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
seeds = st.integers(0, 2**32 - 1)


def _grad(rng):
    return float(rng.uniform(0.0, 2.0)), float(rng.uniform(0.0, 20.0)), float(rng.integers(1, 257))


@FEW
@given(seeds, st.booleans(), st.booleans())
def test_elementwise_equals_cpu(seed, integral, with_eff):
    rng = np.random.default_rng(seed)
    perf = random_perf(rng)
    sqr, var, init = _grad(rng)
    n = 47
    replicas = rng.integers(1, 64, n)
    nodes = np.minimum(rng.integers(1, 9, n), replicas)
    atomic = rng.integers(1, 512, n)
    accum = rng.integers(0, 6, n)
    # Keep the total batch above init_bsz (the CPU face checks it for goodput).
    atomic = np.maximum(atomic, np.ceil(init / (replicas * (accum + 1))).astype(np.int64))
    cols = [nodes, replicas, atomic, accum]
    if not integral:
        cols = [c.astype(np.float64) for c in cols]
        cols[2] = cols[2] + rng.uniform(0.0, 0.9, n)
    want = np.empty(n)
    params = model_params(perf, sqr, var, init)
    with parallel_region():
        status = gk.elementwise(params, *cols, with_eff, want)
    assert status == gk.OK
    got = fc.elementwise(params, *cols, with_eff, threads_per_block=TPB)
    rel_close(got, want)


@FEW
@given(seeds, st.booleans(), st.sampled_from(["wide", "narrow", "empty", "flat"]))
def test_optimize_keys_equals_cpu(seed, accumulation, bounds):
    rng = np.random.default_rng(seed)
    perf = random_perf(rng)
    sqr, var, init = _grad(rng)
    n = 53
    multi = rng.random(n) < 0.5
    reps = rng.integers(1, 80, n)
    reps[:4] = 1  # the single-replica rules
    max_bsz = init * float(rng.uniform(1.0, 64.0))
    lo, hi = 1.0, max_bsz
    if bounds == "narrow":
        lo, hi = float(rng.integers(1, 16)), float(rng.integers(16, 128))
    elif bounds == "empty":  # no valid batch size anywhere: every point ties at 0
        lo, hi = 4.0 * max_bsz, 5.0 * max_bsz
    elif bounds == "flat":  # a one-point grid repeated 50 times: exact ties everywhere
        max_bsz = init
    args = (model_params(perf, sqr, var, init, max_bsz, lo, hi, accumulation), multi, reps)
    cg, ca, cs = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    with parallel_region():
        gk.optimize_keys_kernel(*args, cg, ca, cs)
    gg, ga, gs = fc.optimize_keys(*args, threads_per_block=TPB)
    rel_close(gg, cg)
    np.testing.assert_array_equal(ga, ca)
    np.testing.assert_array_equal(gs, cs)
    # Host outputs passed in are filled in place, as with the CPU kernel.
    og, oa, os_ = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    fc.optimize_keys(*args, og, oa, os_, threads_per_block=TPB)
    np.testing.assert_array_equal(og, gg)
    np.testing.assert_array_equal(oa, ga)
    np.testing.assert_array_equal(os_, gs)


@FEW
@given(seeds, st.booleans())
def test_fill_table_equals_cpu(seed, accumulation):
    rng = np.random.default_rng(seed)
    perf = random_perf(rng)
    sqr, var, init = _grad(rng)
    width = 40
    want_rep = rng.integers(0, width, 30)
    want_multi = rng.random(30) < 0.5
    want_rep[:3] = want_rep[3]  # duplicated keys
    want_multi[:3] = want_multi[3]
    filled = rng.random((2, width)) < 0.3
    filled[:, 0] = True
    table = np.where(filled, rng.random((2, width)), 0.0)
    args = (model_params(perf, sqr, var, init, init * 8.0, 1.0, init * 8.0, accumulation), 123.0)
    t_cpu, f_cpu = table.copy(), filled.copy()
    with parallel_region():
        gk.fill_table_kernel(*args, t_cpu, f_cpu, want_multi, want_rep)
    t_gpu, f_gpu = table.copy(), filled.copy()
    fc.fill_table(*args, t_gpu, f_gpu, want_multi, want_rep, threads_per_block=TPB)
    np.testing.assert_array_equal(f_gpu, f_cpu)
    rel_close(t_gpu, t_cpu)


# Each example runs a whole grid search per table cell on the CUDA simulator (a Python thread per
# GPU thread), so this test keeps to a few examples and a table that still spans two blocks (one partly filled).
@settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seeds)
def test_speedup_tables_equal_speedup_function(seed):
    rng = np.random.default_rng(seed)
    fns = []
    for _ in range(3):
        sqr, var, init = _grad(rng)
        g = GoodputFunction(random_perf(rng), (sqr, var), init)
        acc = bool(rng.random() < 0.5)
        hi = float(rng.integers(int(init), int(init) * 4 + 1)) if rng.random() < 0.5 else None
        fns.append(
            SpeedupFunction(
                g, max_batch_size=init * float(rng.uniform(1, 40)), atomic_bsz_range=(None, hi), accumulation=acc
            )
        )
    rmax = TPB + 3
    got = speedup_tables(fns, rmax, threads_per_block=TPB)
    assert got.shape == (3, 2, rmax + 1)
    for j, fn in enumerate(fns):
        rel_close(got[j], np.asarray(fn.table(rmax))[:, : rmax + 1])


def _population_case(seed, mode_name):
    rng = np.random.default_rng(seed)
    njobs, nnodes = 5, 6
    off, node, cnt, b_off, b_node, b_cnt = random_population(rng, 37, njobs, nnodes)
    table = rng.uniform(0.0, 4.0, (njobs, 4, 13))
    table[:, 0, :] = 0.0
    table[:, :, 0] = 0.0
    if mode_name == "sum":
        mode, p = G.SUM, 1.0
    elif mode_name == "geometric":
        mode, p = G.GEOMETRIC, 0.0
    else:
        mode, p = G.POWER, float(rng.choice([-1.0, 0.5, 2.0]))
    scale = rng.uniform(0.1, 3.0, njobs)
    return (off, node, cnt, table, scale, b_off, b_node, b_cnt, float(rng.uniform(0, 0.5)), mode, p)


@FEW
@given(seeds, st.sampled_from(["sum", "geometric", "power"]))
def test_evaluate_population_equals_cpu(seed, mode_name):
    args = _population_case(seed, mode_name)
    rows = args[0].shape[0]
    obj, size = np.empty(rows), np.empty(rows, np.int64)
    with parallel_region():
        G.evaluate_population(*args, obj, size)
    g_obj, g_size = fc.evaluate_population(*args, threads_per_block=TPB)
    rel_close(g_obj, obj)
    np.testing.assert_array_equal(g_size, size)
    # The row-subset variant scores rows[t] into slot t.
    pick = np.random.default_rng(seed).integers(0, rows, 15)
    s_obj, s_size = fc.evaluate_population(*args, rows=pick, threads_per_block=TPB)
    rel_close(s_obj, obj[pick])
    np.testing.assert_array_equal(s_size, size[pick])


def test_round_constants_stay_resident():
    args = _population_case(7, "sum")
    fc.device_cache.clear()
    fc.reset_transfer_stats()
    first = fc.evaluate_population(*args, cache_key="round", version=1, threads_per_block=TPB)
    h2d_first = fc.transfer_stats()["h2d_count"]
    second = fc.evaluate_population(*args, cache_key="round", version=1, threads_per_block=TPB)
    h2d_second = fc.transfer_stats()["h2d_count"] - h2d_first
    # Second call: only the population (off, node, cnt) travels; the 6 constants (table,
    # scale, base_off/node/cnt, per-job penalty) are cached.
    assert h2d_second == 3
    assert h2d_first == h2d_second + 6
    np.testing.assert_array_equal(first[0], second[0])
    # A new version re-uploads the constants.
    fc.evaluate_population(*args, cache_key="round", version=2, threads_per_block=TPB)
    assert fc.transfer_stats()["h2d_count"] - h2d_first - h2d_second == 9


def test_device_table_feeds_fitness_without_round_trip():
    rng = np.random.default_rng(3)
    fns = [SpeedupFunction(GoodputFunction(random_perf(rng), (0.5, 4.0), 32), max_batch_size=512) for _ in range(5)]
    d_table2 = speedup_tables(fns, 12, keep_on_device=True, threads_per_block=TPB)
    host2 = fc.to_host(d_table2)
    # The GA's table is [J, K + 1, R + 1] with k = 0 unused, 1 single-node, 2 multi-node.
    table = np.zeros((5, 3, 13))
    table[:, 1:, :] = host2
    args = list(_population_case(11, "sum"))
    args[3] = table
    obj, size = np.empty(args[0].shape[0]), np.empty(args[0].shape[0], np.int64)
    with parallel_region():
        G.evaluate_population(*args, obj, size)
    fc.reset_transfer_stats()
    d_obj, d_size = fc.evaluate_population(*args, keep_on_device=True, threads_per_block=TPB)
    assert fc.transfer_stats()["d2h_count"] == 0
    rel_close(fc.to_host(d_obj), obj)
    np.testing.assert_array_equal(fc.to_host(d_size), size)


def test_resolve_backend_with_cuda(monkeypatch):
    assert fc.resolve_backend("cuda", 1) == "cuda"
    assert fc.resolve_backend("cpu", 10**9) == "cpu"
    monkeypatch.setitem(fc.AUTO_THRESHOLDS, "optimize", 1000)
    assert fc.resolve_backend("auto", 999) == "cpu"
    assert fc.resolve_backend("auto", 1000) == "cuda"
    with pytest.raises(ValueError, match="backend must be one of"):
        fc.resolve_backend("gpu", 10)


def test_checked_elementwise_is_a_drop_in():
    rng = np.random.default_rng(5)
    perf = random_perf(rng)
    n = 23
    reps = rng.integers(1, 9, n)
    cols = [np.ones(n, np.int64), reps, rng.integers(8, 64, n), rng.integers(0, 3, n)]
    want, got = np.empty(n), np.empty(n)
    with parallel_region():
        assert gk.elementwise(model_params(perf, 0.5, 3.0, 8.0), *cols, True, want) == gk.OK
    assert fc.checked_elementwise(model_params(perf, 0.5, 3.0, 8.0), *cols, True, got) == gk.OK
    rel_close(got, want)
    cols[0] = cols[0].copy()
    cols[0][4] = reps[4] + 1  # num_nodes > num_replicas: the CPU's error code, out untouched
    assert fc.checked_elementwise(model_params(perf, 0.5, 3.0, 8.0), *cols, True, got) == gk.BAD_NODES
