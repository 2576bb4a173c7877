"""The GEMM model against a plain tile-dealing reference, its properties, and fused attention's memory."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel import Cluster, Transformer, search
from fastsched.costmodel._roofline import gemm_seconds, layer_seconds
from fastsched.costmodel.price import price
from fastsched.costmodel.roofline import DEFAULT_STACK, Stack, gemm_efficiency, gemm_time

from . import naive

dims = st.integers(1, 3000)


@settings(max_examples=200, deadline=None)
@given(dims, dims, st.integers(1, 20000), st.integers(1, 4), st.sampled_from([0, 1, 7, 108, 132]),
       st.sampled_from([1, 2, 4]), st.floats(1e12, 1e15), st.floats(1e11, 1e13))  # fmt: skip
def test_gemm_kernel_equals_the_tile_dealing_reference(m, n, k, batch, sms, dt, flops, bw):
    got = gemm_seconds(float(m), float(n), float(k), float(batch), float(dt), flops, float(sms), bw)
    assert got == pytest.approx(naive.gemm_seconds_reference(m, n, k, batch, dt, flops, sms, bw), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.sampled_from([128, 512, 2048]), st.sampled_from([256, 1024, 2048]),
       st.sampled_from([4, 8, 16]), st.sampled_from([1, 2, 4]), st.booleans(), st.booleans())  # fmt: skip
def test_layer_kernel_equals_its_list_of_operations(b, s, h, a, t, sp, fused):
    args = (float(b), float(s), float(h), float(a), float(t), float(sp), float(fused), 2.0, 2e14, 1e14, 8e13, 108.0,
            1.7e12)  # fmt: skip
    got = layer_seconds(*args)
    want = naive.layer_seconds_reference(b, s, h, a, t, sp, fused, 2, 2e14, 1e14, 8e13, 108, 1.7e12)
    assert got == pytest.approx(want, rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(dims, dims, dims, st.integers(1, 8), st.sampled_from(["a100-80gb", "h100", "t4", "mi300x"]))
def test_efficiency_is_a_share_and_doubling_every_dimension_never_lowers_it(m, n, k, batch, gpu):
    c = Cluster.from_gpu(gpu)
    e = gemm_efficiency(m, n, k, c, batch=batch)
    assert 0.0 < e <= DEFAULT_STACK.gemm * (1 + 1e-12)
    # twice the rows, columns and depth: at most 4x the tiles (so at most 4x the waves) for 8x
    # the work, and twice the arithmetic intensity against the memory roof
    assert gemm_efficiency(2 * m, 2 * n, 2 * k, c, batch=batch) >= e * (1 - 1e-12)


def test_aligned_large_gemms_reach_the_stack_share_of_the_measured_ceiling():
    c = Cluster.from_gpu("a100-80gb")  # 108 SMs: 108 tiles of 256 x 128 fill one wave
    e = gemm_efficiency(256 * 108, 128 * 4, 8192, c)
    assert e == pytest.approx(DEFAULT_STACK.gemm, rel=1e-12)
    assert gemm_efficiency(8192, 8192, 8192, c) > gemm_efficiency(1024, 1024, 1024, c) > gemm_efficiency(64, 64, 64, c)


def test_wave_quantisation_steps():
    # 27 x 4 tiles of 256 x 128 fill A100's 108 SMs once; one more row of tiles costs a second
    # wave (k deep enough that the product is compute-bound)
    c = Cluster.from_gpu("a100-80gb")
    one = gemm_time(256 * 27, 512, 8192, c)
    two = gemm_time(256 * 27 + 1, 512, 8192, c)
    assert two == pytest.approx(2 * one, rel=1e-12)
    # ... and filling that second wave is free
    assert gemm_time(256 * 54, 512, 8192, c) == pytest.approx(two, rel=1e-12)
    # H100's 132 SMs take 33 x 4 such tiles in one wave: 100 tiles cost as much
    h = Cluster.from_gpu("h100")
    assert gemm_time(256 * 33, 512, 8192, h) == pytest.approx(gemm_time(256 * 25, 512, 8192, h), rel=1e-12)


def test_small_and_skinny_gemms_are_memory_bound():
    c = Cluster.from_gpu("h100")
    m = n = 8192
    k = 16  # 16 FLOPs per byte moved: far below H100's ~240 FLOP/byte ridge
    t = gemm_time(m, n, k, c)
    assert t == pytest.approx(2 * (m * k + k * n + m * n) / (c.hbm_gbps * 1e9 * DEFAULT_STACK.memory), rel=1e-12)


def test_gemm_faces_check_their_input():
    with pytest.raises(ValueError, match="matmul_flops"):
        gemm_time(64, 64, 64, Cluster())
    with pytest.raises(ValueError, match="m must be >= 1"):
        gemm_time(0, 64, 64, Cluster.from_gpu("h100"))
    with pytest.raises(ValueError, match="stack.gemm"):
        gemm_time(64, 64, 64, Cluster.from_gpu("h100"), stack=Stack(gemm=0.0))
    with pytest.raises(ValueError, match="model.attention"):
        Transformer(layers=2, hidden=64, heads=4, seq=16, vocab=100, global_batch=8, attention="flash")
    with pytest.raises(ValueError, match="hbm_gbps"):
        Cluster(matmul_flops=1e14)


def _act(model, cluster, **kw):
    return price(model, cluster, **kw)["activation_bytes"]


@pytest.mark.parametrize("t, sp", [(1, False), (2, False), (4, True)])
def test_fused_attention_drops_exactly_the_score_storage(t, sp):
    L, h, a, s, b = 4, 1024, 16, 4096, 2
    kw = dict(layers=L, hidden=h, heads=a, seq=s, vocab=1000, global_batch=8)
    c = Cluster.from_gpu("a100-80gb", gpus=4)
    fused = _act(Transformer(**kw), c, tp=t, micro_batch=b, sequence_parallel=sp)
    unfused = _act(Transformer(**kw, attention="unfused"), c, tp=t, micro_batch=b, sequence_parallel=sp)
    # Korthikanti et al.: the scores, their softmax and the dropout mask are 5 a s^2 b bytes per
    # layer (over t); a fused kernel keeps one FP32 log-sum-exp per row and head instead. One
    # stage, no recomputation: every layer of the microbatch in flight.
    per_layer = 5.0 * a * s * s * b / t - 4.0 * b * a * s / t
    assert unfused - fused == pytest.approx(L * per_layer, rel=1e-12)


def test_a_1b_decoder_at_32k_tokens_fits_8_a100_80gb():
    m = Transformer(layers=24, hidden=2048, heads=16, seq=32768, vocab=50368, global_batch=32)
    c = Cluster.from_gpu("a100-80gb", gpus=8)
    # LLM Foundry's published run: FSDP, one sequence per microbatch, no recomputation
    row = price(m, c, micro_batch=1, zero=3)
    assert row["fits"] and row["memory_bytes"] < 60 * 2**30
    assert search(m, c).best["memory_bytes"] <= c.memory_bytes
    # the same run storing its scores needs terabytes
    unfused = price(Transformer(**{**m.to_dict(), "attention": "unfused"}), c, micro_batch=1, zero=3)
    assert not unfused["fits"] and unfused["memory_bytes"] > 1000 * 2**30


def test_from_gpu_defaults_to_the_gemm_model_and_an_efficiency_keeps_the_flat_one():
    g = Cluster.from_gpu("a100-80gb", gpus=16)
    assert g.roofline and g.matmul_flops == 271.2e12 and g.sms == 108 and g.hbm_gbps == 2039.0
    flat = Cluster.from_gpu("a100-80gb", gpus=16, efficiency=0.5)
    assert not flat.roofline and flat.flops == 156e12
    # a flat rate given with a catalogued type is the flat model
    assert not Cluster.from_dict({"gpu": "h100", "flops": 300e12}).roofline
    assert Cluster.from_dict(g.to_dict()) == g
    m = Transformer(layers=24, hidden=2048, heads=16, seq=2048, vocab=50368, global_batch=64)
    t_roof = search(m, g).best["time_ms"]
    t_flat = search(m, flat).best["time_ms"]
    assert math.isfinite(t_roof) and t_roof != t_flat


def test_flat_clusters_price_as_before_fused_or_not():
    # the flat model's times do not depend on the attention kernel (only its memory does)
    m = dict(layers=8, hidden=1024, heads=8, seq=1024, vocab=1000, global_batch=16)
    c = Cluster(gpus=8, memory_gib=1000)
    a = search(Transformer(**m), c)
    b = search(Transformer(**m, attention="unfused"), c)
    key = np.lexsort(a.configs.T[::-1])
    key_b = np.lexsort(b.configs.T[::-1])
    np.testing.assert_array_equal(a.configs[key], b.configs[key_b])
    np.testing.assert_array_equal(a.costs[key, :6], b.costs[key_b, :6])


def test_overlap_hides_fsdp_communication_and_blocking_pipeline_sends_cost():
    m = Transformer(layers=32, hidden=4096, heads=32, seq=2048, vocab=50368, global_batch=64)
    c = Cluster.from_gpu("a100-80gb", gpus=16)
    over = price(m, c, micro_batch=2, zero=3)
    none = price(m, c, micro_batch=2, zero=3, stack=DEFAULT_STACK._replace(comm_overlap=0.0))
    assert none["dp_comm_ms"] > over["dp_comm_ms"] >= 0 and none["time_ms"] > over["time_ms"]
    pp = dict(tp=2, pp=4, micro_batch=1, schedule="interleaved", virtual_stages=2)
    blocking = price(m, c, **pp, stack=DEFAULT_STACK._replace(comm_overlap=0.0))
    hidden = price(m, c, **pp)
    assert blocking["pp_comm_ms"] > hidden["pp_comm_ms"]
    for row in (over, none, blocking, hidden):
        parts = row["compute_ms"] + row["bubble_ms"] + row["tp_comm_ms"] + row["pp_comm_ms"] + row["dp_comm_ms"]
        assert row["time_ms"] == pytest.approx(parts, rel=1e-12)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([4, 8, 12]), st.sampled_from([512, 1024]), st.sampled_from([8, 16]), st.sampled_from([8, 16, 32]),
       st.sampled_from(["a100-80gb", "h100"]), st.sampled_from(["fused", "unfused"]))  # fmt: skip
def test_the_search_kernel_prices_every_row_as_the_plain_cost_function(layers, hidden, heads, gpus, gpu, attention):
    # the kernel reuses a block's GEMM terms along its rows: every row must equal a fresh call
    from fastsched.costmodel._search import config_cost
    from fastsched.costmodel.search import cluster_tuple, enumerate_configs

    m = Transformer(layers=layers, hidden=hidden, heads=heads, seq=1024, vocab=32000, global_batch=64,
                    attention=attention)  # fmt: skip
    c = Cluster.from_gpu(gpu, gpus=gpus, gpus_per_node=8)
    cfg = enumerate_configs(m, c)
    assert cluster_tuple(c) == naive._cluster_values(c)
    from fastsched.costmodel._search import search_kernel

    got = search_kernel(m.tuple(), cluster_tuple(c), cfg)
    rows = np.random.default_rng(layers * gpus).choice(cfg.shape[0], size=min(40, cfg.shape[0]), replace=False)
    for i in rows:
        want = config_cost.py_func(m.tuple(), naive._cluster_values(c), *cfg[i].tolist())
        np.testing.assert_allclose(got[i], want, rtol=1e-12)
