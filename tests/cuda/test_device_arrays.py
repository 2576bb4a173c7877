"""Device arrays in, device arrays out, validated on the device (GPU or NUMBA_ENABLE_CUDASIM=1).

Every bad input must raise exactly what the CPU path raises for the host copy of the same
input, before any result is returned.
"""

from __future__ import annotations

import sys
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import fastsched.cuda as fc
from fastsched.cuda import _arrays, _memory
from fastsched.goodput import GoodputFunction, SpeedupFunction
from fastsched.goodput import _kernels as gk
from tests.cuda._support import random_perf, requires_cuda

pytestmark = [requires_cuda, pytest.mark.cudasim]


@pytest.fixture(scope="module")
def fn():
    return GoodputFunction(random_perf(np.random.default_rng(1)), (0.3, 5.0), 16)


def _cols(rng, n, dtype=np.int64):
    replicas = rng.integers(1, 40, n)
    nodes = np.minimum(rng.integers(1, 6, n), replicas)
    atomic = rng.integers(16, 300, n)
    accum = rng.integers(0, 4, n)
    return [c.astype(dtype) for c in (nodes, replicas, atomic, accum)]


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64, np.float32])
def test_evaluate_throughput_device_equal_cpu(fn, dtype):
    cols = _cols(np.random.default_rng(2), 37, dtype)
    d_cols = [fc.to_device(c) for c in cols]
    for method in (fn.evaluate, fn.throughput):
        fc.reset_transfer_stats()
        got = method(*d_cols)
        assert fc.transfer_stats()["h2d_count"] <= 2  # perf and the status slots, not the data
        assert hasattr(got, "copy_to_host")  # a device array, not a host round trip
        np.testing.assert_allclose(got.copy_to_host(), method(*cols, backend="cpu"), rtol=1e-12, atol=0)


def test_two_dimensional_device_input_keeps_its_shape(fn):
    cols = [c.reshape(4, 6) for c in _cols(np.random.default_rng(3), 24)]
    got = fn.evaluate(*[fc.to_device(c) for c in cols])
    assert got.shape == (4, 6)
    np.testing.assert_allclose(got.copy_to_host(), fn.evaluate(*cols, backend="cpu"), rtol=1e-12, atol=0)


@pytest.mark.parametrize("accumulation", [False, True])
def test_optimize_device_equals_cpu(fn, accumulation):
    rng = np.random.default_rng(4)
    reps = rng.integers(1, 50, 29).astype(np.int32)
    nodes = np.minimum(rng.integers(1, 5, 29), reps).astype(np.int32)
    got = fn.optimize(fc.to_device(nodes), fc.to_device(reps), 512, (None, 64), accumulation)
    want = fn.optimize(nodes, reps, 512, (None, 64), accumulation, backend="cpu")
    np.testing.assert_allclose(got[0].copy_to_host(), want[0], rtol=1e-12, atol=0)
    np.testing.assert_array_equal(got[1].copy_to_host(), want[1])
    np.testing.assert_array_equal(got[2].copy_to_host(), want[2])


def test_speedup_device_equals_cpu(fn):
    sp = SpeedupFunction(fn, max_batch_size=512, accumulation=True)
    rng = np.random.default_rng(5)
    reps = rng.integers(0, 70, 31)
    nodes = np.where(reps == 0, 0, np.minimum(rng.integers(1, 4, 31), np.maximum(reps, 1)))
    got = sp(fc.to_device(nodes), fc.to_device(reps.astype(np.float64)))
    np.testing.assert_allclose(got.copy_to_host(), sp(nodes, reps), rtol=1e-12, atol=0)


def _same_error(call_cpu, call_dev):
    with pytest.raises((ValueError, TypeError)) as cpu:
        call_cpu()
    with pytest.raises((ValueError, TypeError)) as dev:
        call_dev()
    assert type(dev.value) is type(cpu.value)
    assert str(dev.value) == str(cpu.value)


@pytest.mark.parametrize(
    "field, value",
    [
        (0, 0),  # num_nodes < 1
        (0, 99),  # num_nodes > num_replicas
        (1, np.nan),
        (2, np.inf),
        (2, -1.0),
        (3, -2.0),
        (3, np.nan),
        (2, 0.001),  # total batch below init_batch_size
    ],
)
def test_evaluate_bad_values_same_error(fn, field, value):
    cols = [c.astype(np.float64) for c in _cols(np.random.default_rng(6), 20)]
    cols[field][7] = value
    cols[field][13] = value
    for method in ("evaluate", "throughput"):
        if field == 2 and value == 0.001 and method == "throughput":
            continue  # no batch floor for throughput
        _same_error(
            lambda m=method: getattr(fn, m)(*cols, backend="cpu"),
            lambda m=method: getattr(fn, m)(*[fc.to_device(c) for c in cols]),
        )


@pytest.mark.parametrize(
    "field, value",
    [(0, 0.0), (1, -3.0), (0, 2.5), (1, np.nan), (0, 1e300), (0, 50.0)],
)
def test_optimize_bad_values_same_error(fn, field, value):
    rng = np.random.default_rng(7)
    reps = rng.integers(1, 30, 15).astype(np.float64)
    nodes = np.minimum(rng.integers(1, 4, 15), reps).astype(np.float64)
    cols = [nodes, reps]
    cols[field][5] = value
    _same_error(
        lambda: fn.optimize(*cols, 256, backend="cpu"),
        lambda: fn.optimize(*[fc.to_device(c) for c in cols], 256),
    )


@pytest.mark.parametrize("case", ["negative", "nodes_over", "zero_mismatch", "fraction"])
def test_speedup_bad_values_same_error(fn, case):
    sp = SpeedupFunction(fn, max_batch_size=256)
    nodes = np.array([1.0, 2.0, 1.0, 3.0])
    reps = np.array([1.0, 4.0, 2.0, 5.0])
    if case == "negative":
        reps[2] = -1.0
    elif case == "nodes_over":
        nodes[1] = 9.0
    elif case == "zero_mismatch":
        nodes[3] = 0.0
    else:
        reps[0] = 1.5
    _same_error(lambda: sp(nodes, reps), lambda: sp(fc.to_device(nodes), fc.to_device(reps)))


def test_bad_layouts_and_dtypes(fn):
    cols = _cols(np.random.default_rng(8), 12)
    d = [fc.to_device(c) for c in cols]
    with pytest.raises(ValueError, match="do not broadcast"):
        fn.evaluate(d[0], d[1], d[2], fc.to_device(cols[3][:5]))
    with pytest.raises(ValueError, match="equal shapes"):
        fn.optimize(fc.to_device(cols[0][:1]), d[1])
    for bad in (cols[0] > 0, cols[0].astype(np.complex128)):
        _same_error(
            lambda b=bad: fn.evaluate(b, *cols[1:], backend="cpu"),
            lambda b=bad: fn.evaluate(fc.to_device(b), *d[1:]),
        )
    # A non-contiguous 2-D device view cannot be flattened without a copy.
    wide = fc.to_device(np.ones((4, 6), dtype=np.int64))
    with pytest.raises(ValueError, match="C-contiguous"):
        fn.evaluate(*(wide[:, ::2] for _ in range(4)))
    # A 1-D strided view is read in place.
    strided = [fc.to_device(np.repeat(c, 2))[::2] for c in cols]
    np.testing.assert_allclose(fn.evaluate(*strided).copy_to_host(), fn.evaluate(*cols, backend="cpu"), rtol=1e-12)
    with pytest.raises(TypeError, match="backend='cpu'"):
        fn.evaluate(*d, backend="cpu")


def test_array_on_another_device_is_refused(fn, monkeypatch):
    class OnDevice1:
        """A CUDA-array-interface object whose memory sits on device 1."""

        def __init__(self, host):
            self._d = fc.to_device(host)
            self.shape, self.dtype, self.size, self.ndim = host.shape, host.dtype, host.size, host.ndim
            self.__cuda_array_interface__ = {"data": (1234, False), "shape": host.shape, "typestr": host.dtype.str}

        def copy_to_host(self):
            return self._d.copy_to_host()

        def __getitem__(self, i):
            return self._d[i]

    monkeypatch.setattr(_arrays, "_device_ordinal", lambda ptr: 1)
    monkeypatch.setattr(_arrays, "_current_ordinal", lambda: 0)
    cols = _cols(np.random.default_rng(9), 6)
    with pytest.raises(ValueError, match="num_nodes lives on CUDA device 1"):
        fn.evaluate(OnDevice1(cols[0]), *[fc.to_device(c) for c in cols[1:]])


def test_streamed_host_paths_equal_cpu(fn):
    """Chunked pinned streaming (forced with a tiny chunk) gives the CPU's values and errors."""
    cols = _cols(np.random.default_rng(10), 45)
    p = fn.kernel_params
    want = np.empty(45)
    assert gk.elementwise(p, *cols, True, want) == gk.OK
    got = np.empty(45)
    assert fc.checked_elementwise(p, *cols, True, got, chunk=8) == gk.OK
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    bad = [c.copy() for c in cols]
    bad[0][37] = bad[1][37] + 1  # an error in a late chunk
    bad[3][40] = -1
    assert fc.checked_elementwise(p, *bad, True, got, chunk=8) == gk.elementwise(p, *bad, True, want)
    multi, reps = cols[0] > 1, cols[1]
    cg, ca, cs = np.empty(45), np.empty(45, np.int64), np.empty(45, np.int64)
    p = fn.kernel_params_for(600.0, (1.0, 64.0), accumulation=True)
    gk.optimize_keys_kernel(p, multi, reps, cg, ca, cs)
    gg, ga, gs = fc.optimize_keys(p, multi, reps, chunk=8)
    np.testing.assert_allclose(gg, cg, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(ga, ca)
    np.testing.assert_array_equal(gs, cs)


def test_scalars_mix_with_device_arrays(fn):
    cols = _cols(np.random.default_rng(11), 17)
    d = [fc.to_device(c) for c in cols]
    fc.reset_transfer_stats()
    got = fn.evaluate(d[0], d[1], 256, 0)  # scalars are filled on the device, not copied
    assert fc.transfer_stats()["h2d_bytes"] < 17 * 8
    np.testing.assert_allclose(got.copy_to_host(), fn.evaluate(cols[0], cols[1], 256, 0, backend="cpu"), rtol=1e-12)
    g = fn.optimize(1, d[1], 512)
    np.testing.assert_allclose(g[0].copy_to_host(), fn.optimize(1, cols[1], 512, backend="cpu")[0], rtol=1e-12)
    _same_error(lambda: fn.evaluate(cols[0], cols[1], True, 0, backend="cpu"), lambda: fn.evaluate(d[0], d[1], True, 0))


def test_streamed_face_calls_from_two_threads(fn, monkeypatch):
    """Large host inputs stream through shared pinned buffers; concurrent calls stay correct."""
    monkeypatch.setattr(_memory, "STREAM_MIN", 16)
    monkeypatch.setattr(_memory, "staging", _memory.StagingBuffers(chunk=16))
    inputs = [_cols(np.random.default_rng(20 + k), 50) for k in range(4)]
    wants = [fn.evaluate(*c, backend="cpu") for c in inputs]
    with ThreadPoolExecutor(2) as pool:
        gots = list(pool.map(lambda c: fn.evaluate(*c, backend="cuda"), inputs))
    for got, want in zip(gots, wants, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_results_take_the_callers_array_type(fn, monkeypatch):
    """A CuPy (or PyTorch) argument gets a CuPy (PyTorch) result, converted without a copy."""
    fake = types.ModuleType("cupy")
    fake.asarray = lambda d: ("cupy array", d)
    monkeypatch.setitem(sys.modules, "cupy", fake)

    class FromCupy:
        def __init__(self, host):
            self._d = fc.to_device(host)
            self.shape, self.dtype, self.size, self.ndim = host.shape, host.dtype, host.size, host.ndim

        def copy_to_host(self):
            return self._d.copy_to_host()

        def __getitem__(self, i):
            return self._d[i]

    FromCupy.__module__ = "cupy._core.core"  # what the results' type is chosen by
    cols = _cols(np.random.default_rng(30), 9)
    monkeypatch.setattr(_arrays, "as_device", lambda name, x: x._d if isinstance(x, FromCupy) else x)
    kind, d = fn.evaluate(FromCupy(cols[0]), *[fc.to_device(c) for c in cols[1:]])
    assert kind == "cupy array"
    np.testing.assert_allclose(d.copy_to_host(), fn.evaluate(*cols, backend="cpu"), rtol=1e-12, atol=0)
