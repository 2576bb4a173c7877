"""The one-call estimate kernel against a plain composition of its parts.

``estimate`` packs the encoded program and the settings into a few arrays and runs ranks,
stage maxima and the pipeline schedule in one kernel. The reference here is written from
the semantics: each rank's merged phase times and memory from the oracle merge
(``naive.merge``) and ``naive.memory``, a stage as slow as its slowest rank (B7), the
schedule from ``naive.pipeline`` (seed) or ``naive.run_orders`` (fixed orders).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel import encode, estimate

from . import naive


def _rank(r, n_ops, costs, roles):
    # a chain with a side branch per op: x_i -> op_i -> x_{i+1}, op_i also writes y_i
    vs = [{"name": f"x{i}", "shape": [-1, 4 + i]} for i in range(n_ops + 1)]
    vs += [{"name": f"y{i}", "shape": [3]} for i in range(n_ops)]
    vs.append({"name": "w", "shape": [8], "persistable": True})
    ops = []
    for i in range(n_ops):
        ins = [["X", [f"x{i}"]]] + ([["W", ["w"]]] if i % 2 else [])
        ops.append(
            {
                "id": f"r{r}op{i}",
                "type": "relu",
                "inputs": ins,
                "outputs": [["Out", [f"x{i + 1}", f"y{i}"]]],
                "cost": costs[i],
                "op_role": roles[i],
            }
        )
    return {"vars": vs, "ops": ops}


@st.composite
def programs(draw):
    R = draw(st.integers(1, 4))
    ranks = []
    for r in range(R):
        n = draw(st.integers(0, 6))
        costs = draw(st.lists(st.integers(0, 32).map(lambda k: k / 8), min_size=n, max_size=n))
        roles = sorted(draw(st.lists(st.sampled_from([0, 1, 2]), min_size=n, max_size=n)))
        ranks.append(_rank(r, n, costs, roles))
    S = draw(st.integers(1, R))
    cuts = sorted(draw(st.lists(st.integers(1, R - 1), min_size=S - 1, max_size=S - 1, unique=True))) if S > 1 else []
    bounds = [0, *cuts, R]
    pp = [list(range(bounds[i], bounds[i + 1])) for i in range(len(bounds) - 1)]
    return ranks, pp


def _reference(ranks, enc, pp, schedule, m, v, batch, overhead):
    times, static, peak = [], [], []
    for r in range(enc.n_ranks):
        o0, o1 = enc.op_ptr[r], enc.op_ptr[r + 1]
        e0, e1 = enc.edge_ptr[r], enc.edge_ptr[r + 1]
        v0, v1 = enc.var_ptr[r], enc.var_ptr[r + 1]
        n = int(o1 - o0)
        cost = [c + overhead for c in enc.base_cost[o0:o1].tolist()]
        phase = enc.phase[o0:o1].tolist()
        edges = list(zip(enc.edge_src[e0:e1].tolist(), enc.edge_dst[e0:e1].tolist(), strict=True))
        t = [0.0, 0.0, 0.0]
        for c, ph in naive.merge(n, cost, phase, edges, True).values():
            t[ph] += c
        times.append(t)
        size = (enc.var_fixed[v0:v1] * batch ** enc.var_ndyn[v0:v1] * enc.var_dsize[v0:v1]).tolist()
        st_, pk = naive.memory(
            enc.first_use[v0:v1].tolist(), enc.last_use[v0:v1].tolist(), size, enc.persistable[v0:v1].tolist(), n
        )
        static.append(st_)
        peak.append(pk)
    f = [max(times[r][0] for r in ranks_) for ranks_ in pp]
    b = [max(times[r][1] for r in ranks_) for ranks_ in pp]
    o = [max(times[r][2] for r in ranks_) for ranks_ in pp]
    if schedule == "seed":
        total = naive.pipeline(f, b, o, m)
    else:
        total = naive.run_orders(naive.schedule_orders(schedule, len(pp), m, v), f, b, [0.0] * len(pp), o, v)[0]
    act = [max(max(peak[r] for r in s) - max(static[r] for r in s), 0.0) for s in pp]
    return times, static, peak, total, act


@settings(max_examples=60, deadline=None)
@given(
    programs(),
    st.sampled_from(["seed", "gpipe", "1f1b", "interleaved"]),
    st.integers(1, 3),
    st.integers(1, 3),
    st.sampled_from([0.0, 0.25]),
)
def test_one_call_estimate_matches_composition(prog, schedule, mk, batch, overhead):
    ranks, pp = prog
    S = len(pp)
    m = mk * S if schedule == "interleaved" else mk
    v = 2 if schedule == "interleaved" else 1
    enc = encode(ranks)
    c = estimate(
        enc,
        pipeline_config=pp,
        schedule=schedule,
        virtual_stages=v,
        microbatch_num=m,
        batch_size=batch,
        opcall_overhead=overhead,
    )
    times, static, peak, total, act = _reference(ranks, enc, pp, schedule, m, v, batch, overhead)
    np.testing.assert_allclose(c.fwd_time, [t[0] for t in times], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.bwd_time, [t[1] for t in times], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.optim_time, [t[2] for t in times], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c.static_mem, static, rtol=1e-12)
    np.testing.assert_allclose(c.peak_mem, peak, rtol=1e-12)
    assert c.runtime == pytest.approx(total, rel=1e-12, abs=1e-12)
    assert c.pipeline.total == c.runtime and c.pipeline.stages == S
    np.testing.assert_allclose(
        c.pipeline.peak_activation_bytes, np.array(c.pipeline.peak_inflight) * np.array(act) / v, rtol=1e-12
    )
    # no pipeline: the slowest rank's fwd + bwd + optim
    flat = estimate(enc, batch_size=batch, opcall_overhead=overhead)
    assert flat.runtime == pytest.approx(max([sum(t) for t in times], default=0.0), rel=1e-12, abs=1e-12)
    assert flat.pipeline is None


def test_each_call_runs_and_mutating_the_config_is_seen():
    ranks = [_rank(r, 3, [1.0, 2.0, 3.0], [0, 1, 1]) for r in range(2)]
    enc = encode(ranks)
    pp = [[0], [1]]
    a = estimate(enc, pipeline_config=pp, microbatch_num=2)
    pp[:] = [[0, 1]]  # the caller changes its list: the cached constants must not be reused
    b = estimate(enc, pipeline_config=pp, microbatch_num=2)
    assert a.pipeline.stages == 2 and b.pipeline.stages == 1
    assert estimate(enc, pipeline_config=pp) is not estimate(enc, pipeline_config=pp)
    with pytest.raises(ValueError, match="pipeline_config"):
        pp[:] = [[0, 5]]
        estimate(enc, pipeline_config=pp)


def test_case_fast_path_follows_changed_settings():
    from fastsched.costmodel import Case

    ranks = [_rank(r, 3, [1.0, 2.0, 3.0], [0, 1, 1]) for r in range(2)]
    case = Case("c", ranks, pipeline_config=[[0], [1]], microbatch_num=2)
    a = case.estimate()
    case.microbatch_num = 8
    b = case.estimate()
    assert b.runtime > a.runtime and b == estimate(case.encoded, pipeline_config=[[0], [1]], microbatch_num=8)
    case.pipeline_config[:] = [[0, 1]]
    assert case.estimate().pipeline.stages == 1
    case.encoded = encode(ranks[:1])
    case.pipeline_config = None
    assert case.estimate().n_ops == (3,)
    case.microbatch_num = 2.5
    with pytest.raises(ValueError, match="microbatch_num"):
        case.estimate()


def test_case_fast_path_is_thread_safe_and_unaliased():
    # the fast path runs the compiled kernel without the GIL, allocating its scratch and
    # output per call: concurrent calls on one Case agree with a serial one, and no two
    # results share an output array
    from concurrent.futures import ThreadPoolExecutor

    from fastsched.costmodel import Case

    ranks = [_rank(r, 5, [1.0, 2.0, 3.0, 0.5, 0.25], [0, 0, 1, 1, 2]) for r in range(3)]
    for pp in (None, [[0], [1, 2]]):
        case = Case("c", ranks, pipeline_config=pp, microbatch_num=3)
        want = estimate(case.encoded, pipeline_config=pp, microbatch_num=3)
        case.estimate()  # prepares the fast path
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda _, c=case: c.estimate(), range(400)))
        assert all(g == want and g.pipeline == want.pipeline for g in got)
        assert len({id(g._out) for g in got}) == len(got)


def test_case_pickles_after_estimate():
    import pickle

    from fastsched.costmodel import Case

    case = Case("c", [_rank(0, 3, [1.0, 2.0, 3.0], [0, 1, 1])], microbatch_num=2)
    first = case.estimate()
    back = pickle.loads(pickle.dumps(case))
    assert back.estimate() == first and back.estimate() == first
