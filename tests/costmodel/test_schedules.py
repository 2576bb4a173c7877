"""Pipeline schedules: closed forms on equal stages, brute-force orders on uneven ones."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel import encode, estimate, pipeline_schedule, pipeline_time
from fastsched.costmodel._pipeline import simulate_seed

from . import naive

times = st.integers(0, 64).map(lambda k: k / 64)


@st.composite
def stages(draw, max_s=5):
    S = draw(st.integers(1, max_s))
    f = draw(st.lists(times, min_size=S, max_size=S))
    b = draw(st.lists(times, min_size=S, max_size=S))
    o = draw(st.lists(times, min_size=S, max_size=S))
    return f, b, o


@settings(max_examples=60, deadline=None)
@given(stages(), st.integers(1, 12))
def test_seed_events_match_fifo_oracle(fbo, m):
    f, b, o = fbo
    r = simulate_seed(np.array(f), np.array(b), np.array(o), m, True)
    got = list(zip(*(x.tolist() for x in r[4:]), strict=True))
    assert got == naive.pipeline_events(f, b, o, m)
    assert r[0] == naive.pipeline(f, b, o, m)


@settings(max_examples=60, deadline=None)
@given(stages(), st.integers(1, 10), st.sampled_from(["gpipe", "1f1b", "zb-h1", "interleaved"]), st.integers(1, 3))
def test_schedules_match_brute_force(fbo, m, name, v):
    f, b, o = fbo
    S = len(f)
    if name != "interleaved":
        v = 1
    else:
        m = S * ((m + S - 1) // S)
    p2p = 1 / 16
    wf = 0.25
    bb = [x * (1 - wf) for x in b] if name == "zb-h1" else b
    w = [x * wf for x in b] if name == "zb-h1" else [0.0] * S
    want, peak = naive.run_orders(naive.schedule_orders(name, S, m, v), f, bb, w, o, v, p2p)
    r = pipeline_time(f, b, o, m, schedule=name, virtual_stages=v, p2p_ms=p2p, wgrad_fraction=wf)
    assert r.total == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert list(r.peak_inflight) == peak
    assert sum(r.stage_busy) == pytest.approx(m * (sum(f) + sum(b)) + sum(o))


@pytest.mark.parametrize("S", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("m", [1, 2, 4, 8, 16, 64])
def test_equal_stage_closed_forms(S, m):
    f, b = 3 / 8, 5 / 8
    z = [0.0] * S
    for name in ("gpipe", "1f1b"):
        r = pipeline_time([f] * S, [b] * S, z, m, schedule=name)
        assert r.total == (m + S - 1) * (f + b)
        assert r.bubble_fraction == pytest.approx((S - 1) / (m + S - 1), abs=1e-12)
    assert pipeline_time([f] * S, [b] * S, z, m).total == (m + S - 1) * (f + b)  # seed
    if m % S == 0:
        for v in (2, 4):
            r = pipeline_time([f] * S, [b] * S, z, m, schedule="interleaved", virtual_stages=v)
            assert r.total == pytest.approx((m + (S - 1) / v) * (f + b))
            assert r.bubble_fraction == pytest.approx((S - 1) / v / (m + (S - 1) / v))
    if m >= S:
        for fbw in ((1.0, 1.0, 1.0), (1.0, 2.0, 1.0), (0.5, 1.5, 1.0), (1.0, 1.0, 2.0)):
            f2, bi, wg = fbw
            r = pipeline_time([f2] * S, [bi + wg] * S, z, m, schedule="zb-h1", wgrad_fraction=wg / (bi + wg))
            # Qi et al.: bubble (S-1)(F + B - W) for W <= F
            assert r.total == pytest.approx(m * (f2 + bi + wg) + (S - 1) * (f2 + bi - min(wg, f2)))
            assert max(r.peak_inflight) <= S


def test_memory_orders():
    S, m = 4, 16
    one = [1.0] * S
    assert pipeline_time(one, one, [0] * S, m, schedule="gpipe").peak_inflight == (m,) * S
    assert pipeline_time(one, one, [0] * S, m, schedule="1f1b").peak_inflight == (4, 3, 2, 1)
    r = pipeline_time(one, one, [0] * S, m, schedule="1f1b", activation_bytes=[10, 20, 30, 40])
    assert r.peak_activation_bytes == (40.0, 60.0, 60.0, 40.0)
    r = pipeline_time(one, one, [0] * S, m, schedule="1f1b", p2p_ms=0.5)
    assert r.p2p_time == (m * 0.5, 2 * m * 0.5, 2 * m * 0.5, m * 0.5)
    assert r.total > pipeline_time(one, one, [0] * S, m, schedule="1f1b").total


def test_large_microbatch_counts():
    one = np.ones(8)
    r = pipeline_time(one, one, np.zeros(8), 100_000, schedule="1f1b")
    assert r.total == (100_000 + 7) * 2.0
    assert pipeline_time(one, one, np.zeros(8), 100_000).total == (100_000 + 7) * 2.0  # seed, linear now
    with pytest.raises(ValueError, match="microbatch_num=1000000000 .*simulation limit"):
        pipeline_time(one, one, np.zeros(8), 10**9, schedule="1f1b")
    with pytest.raises(ValueError, match="too many events"):
        pipeline_schedule(one, one, np.zeros(8), 10**7)


def test_bad_input():
    one = [1.0, 1.0]
    with pytest.raises(ValueError, match="schedule"):
        pipeline_time(one, one, one, 4, schedule="2f2b")
    with pytest.raises(ValueError, match="virtual_stages"):
        pipeline_time(one, one, one, 4, schedule="1f1b", virtual_stages=2)
    with pytest.raises(ValueError, match="virtual_stages"):
        pipeline_time(one, one, one, 4, schedule="interleaved", virtual_stages=0)
    with pytest.raises(ValueError, match="multiple of the 2 stages"):
        pipeline_time(one, one, one, 3, schedule="interleaved", virtual_stages=2)
    with pytest.raises(ValueError, match="fwd"):
        pipeline_time([-1.0, 1.0], one, one, 4)
    with pytest.raises(ValueError, match="p2p_ms"):
        pipeline_time(one, one, one, 4, p2p_ms=-1)


def test_estimate_reports_schedule():
    ranks = [
        {
            "vars": [{"name": "x", "shape": [8]}],
            "ops": [{"id": "a", "type": "relu", "outputs": [["Out", ["x"]]], "cost": 1.0}],
        },
        {
            "vars": [{"name": "x", "shape": [8]}],
            "ops": [{"id": "b", "type": "relu", "outputs": [["Out", ["x"]]], "cost": 1.0, "op_role": 1}],
        },
    ]
    enc = encode(ranks)
    seed = estimate(enc, pipeline_config=[[0], [1]], microbatch_num=8)
    fb = estimate(enc, pipeline_config=[[0], [1]], microbatch_num=8, schedule="1f1b")
    assert seed.runtime == fb.runtime == 9.0  # stage times (1, 0) and (0, 1)
    assert fb.pipeline.schedule == "1f1b" and fb.pipeline.peak_activation_bytes[0] == 2 * 32.0
    with pytest.raises(ValueError, match="schedule"):
        estimate(enc, pipeline_config=[[0], [1]], schedule="nope")
