"""The Paddle adapter on real paddle.static programs vs Paddle's own cost model (skips without paddle)."""

import os

import pytest

os.environ.setdefault("FLAGS_enable_pir_api", "0")
paddle = pytest.importorskip("paddle")

from fastsched.costmodel import deviations, encode, estimate  # noqa: E402
from fastsched.costmodel.paddle import example_programs, from_paddle  # noqa: E402


def _data(programs, pp):
    stages = len(pp) if pp else 1
    rank2st = {r: s for s, rs in enumerate(pp or []) for r in rs}
    data = [{} for _ in range(stages)]
    for i, prog in enumerate(programs):
        for j, op in enumerate(prog.global_block().ops):
            data[rank2st.get(i, 0)][op.desc.id()] = ((j * 7) % 13 + 1) / 1024
    return data


def _paddle(programs, data, pp):
    import queue
    import types

    import paddle.distributed.auto_parallel.static.cost_model as cm

    class Unbounded(queue.Queue):
        def __init__(self, maxsize=0):
            super().__init__(0)

    cm.queue = types.SimpleNamespace(Queue=Unbounded)
    m = cm.CostModel(batch_size=4, microbatch_num=4, standalone_cost_data=data, pipeline_config=pp)
    m.init(programs)
    c = m.get_cost()
    return c, m


@pytest.mark.parametrize("kind", ["mlp", "transformer", "mlp-dp", "mlp-pp"])
def test_against_paddle(kind):
    progs, pp = example_programs(kind)
    data = _data(progs, pp)
    n_vars = [len(p.global_block().vars) for p in progs]
    enc = encode(from_paddle(progs, data, pp))
    assert [len(p.global_block().vars) for p in progs] == n_vars  # read only (B13)
    ours = estimate(enc, pipeline_config=pp, microbatch_num=4, batch_size=4, mem_unit="elements")
    assert list(enc.ops_per_rank()) == [len(p.global_block().ops) for p in progs]
    fresh, _ = example_programs(kind)
    ref, m = _paddle(fresh, _data(fresh, pp), pp)
    # every persistable variable is a source: static memory agrees exactly
    assert list(ours.static_mem) == list(ref.static_mem)
    codes = {c for c, _ in deviations(enc, pipeline_config=pp, microbatch_num=4)}
    if kind in ("mlp", "transformer"):
        # no communication: every listed deviation leaves the runtime alone
        assert ours.runtime == ref.runtime
        assert (list(ours.fwd_time), list(ours.bwd_time), list(ours.optim_time)) == (
            m.fwd_time,
            m.bwd_time,
            m.optim_time,
        )
    else:
        assert "B11" in codes  # all_reduce / recv are communication here, not in Paddle
        assert ours.runtime != ref.runtime
