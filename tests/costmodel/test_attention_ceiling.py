"""The fused-attention ceiling per GPU type: its formula, what it changes, and what it leaves alone."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched._gpus import ATTENTION_FRACTION, GPUS
from fastsched.costmodel import Cluster, Transformer
from fastsched.costmodel.price import price
from fastsched.costmodel.roofline import DEFAULT_STACK, Stack
from fastsched.costmodel.search import cluster_tuple

shares = st.floats(0.05, 1.0)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e12, 2e15), st.floats(0.05, 3.0), shares, shares, st.booleans())
def test_the_kernel_gets_the_stack_share_of_the_attention_ceiling(matmul, ratio, att, bwd, given_ceiling):
    # the kernel multiplies its attention shares by matmul_flops: the rate it prices is the
    # stack's share of the cluster's attention ceiling (given, or A100's ratio of the matmul one)
    ceiling = matmul * ratio if given_ceiling else matmul * ATTENTION_FRACTION
    c = Cluster(matmul_flops=matmul, hbm_gbps=2000.0, sms=108, attention_flops=ceiling if given_ceiling else None)
    stack = Stack(attention=att, attention_bwd=bwd)
    tup = cluster_tuple(c, stack)
    assert tup[6] == matmul
    assert tup[10] * tup[6] == pytest.approx(att * ceiling, rel=1e-12)
    assert tup[11] * tup[6] == pytest.approx(att * bwd * ceiling, rel=1e-12)
    assert tup[9] == stack.gemm  # GEMMs keep the matmul ceiling


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([512, 2048, 8192]), st.sampled_from([1, 2]), st.floats(1.01, 4.0), st.sampled_from([1, 2, 4]))
def test_a_faster_attention_ceiling_speeds_fused_models_only(seq, micro, factor, t):
    m = dict(layers=4, hidden=2048, heads=16, seq=seq, vocab=50368, global_batch=16)
    base = Cluster.from_gpu("h100", gpus=8)
    fast = dataclasses.replace(base, attention_flops=base.attention_flops * factor)
    fused = Transformer(**m)
    unfused = Transformer(**m, attention="unfused")
    kw = dict(tp=t, micro_batch=micro, zero=3)
    assert price(fused, fast, **kw)["compute_ms"] < price(fused, base, **kw)["compute_ms"]
    assert price(unfused, fast, **kw)["time_ms"] == price(unfused, base, **kw)["time_ms"]


def test_types_without_a_published_figure_keep_the_first_rounds_attention_rate():
    # the first round priced attention at 0.40 of the matmul ceiling on every type; the default
    # stack's share of the attention ceiling is that number in the new units (rounded to 0.01)
    for name, g in GPUS.items():
        c = Cluster.from_gpu(name)
        rate = DEFAULT_STACK.attention * c.attention_ceiling
        if g.attention_tflops == 0 or name.startswith("a100"):
            assert rate == pytest.approx(0.40 * c.matmul_flops, rel=1e-3), name
        assert 0 < c.attention_ceiling < c.matmul_flops, name


def test_hopper_attention_gains_what_flashattention2_gains_not_what_cublas_gains():
    a, h = Cluster.from_gpu("a100-80gb"), Cluster.from_gpu("h100")
    assert h.attention_ceiling / a.attention_ceiling == pytest.approx(335.0 / 204.6)
    assert h.matmul_flops / a.matmul_flops > 2.9
    assert Cluster.from_gpu("h200").attention_ceiling == h.attention_ceiling  # the same GH100 SMs


def test_long_sequences_gain_less_from_h100_than_short_ones():
    # an attention-dominated step gains about FlashAttention-2's 1.64x (and HBM's 1.64x), a
    # GEMM-dominated one up to cuBLAS's 2.93x; with one share of the matmul ceiling for attention
    # (the first round) both approached 2.9x and the long run gained as much as the short one
    def speedup(seq):
        m = Transformer(layers=24, hidden=2048, heads=16, seq=seq, vocab=50368, global_batch=8)
        kw = dict(micro_batch=1, zero=3)
        a = price(m, Cluster.from_gpu("a100-80gb", gpus=8), **kw)["time_ms"]
        return a / price(m, Cluster.from_gpu("h100", gpus=8), **kw)["time_ms"]

    short, long = speedup(2048), speedup(65536)
    assert 1.6 < long < short < 794.5 / 271.2
    assert long < 1.9


def test_cluster_checks_and_round_trips_the_attention_ceiling():
    with pytest.raises(ValueError, match="cluster.attention_flops"):
        Cluster(matmul_flops=1e14, hbm_gbps=1000.0, attention_flops=-1.0)
    c = Cluster.from_gpu("h100", gpus=16)
    assert c.attention_flops == 335e12 and Cluster.from_dict(c.to_dict()) == c
    assert Cluster.from_dict({"gpu": "h100", "attention_flops": 300e12}).attention_ceiling == 300e12
    # a flat rate given with a catalogued type is the flat model: no ceilings kept
    flat = Cluster.from_dict({"gpu": "h100", "flops": 300e12})
    assert flat.attention_flops is None and flat.attention_ceiling is None
    assert Cluster.from_gpu("h100", efficiency=0.5).attention_ceiling is None
    # a TF32 cluster's attention ceiling scales with its matmul ceiling
    tf = Cluster.from_gpu("h100", precision="tf32")
    assert tf.attention_flops / tf.matmul_flops == pytest.approx(335.0 / 794.5)
