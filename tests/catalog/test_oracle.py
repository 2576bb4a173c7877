"""The throughput oracle against its plain reference, and its properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.catalog import GPUS, calibrate, gpu_type, max_local_bsz, model_spec, step_time
from fastsched.catalog import oracle as O
from fastsched.catalog.models import STUDY_MODELS, load_model_spec
from tests.catalog import naive

STUDY = sorted(STUDY_MODELS)
TYPES = sorted(GPUS)
placements = st.lists(st.integers(0, 8), min_size=1, max_size=5).filter(lambda p: sum(p) > 0)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(STUDY),
    st.sampled_from(TYPES),
    placements,
    st.integers(1, 4096),
    st.floats(0.05, 2.0),
    st.floats(0.02, 1.0),
)
def test_step_time_matches_the_reference(model, gpu, placement, b, eff, link):
    got = step_time(model, gpu, placement, b, efficiency=eff, link_efficiency=link)
    want = naive.dp_step(model_spec(model), gpu_type(gpu), placement, b, eff, link, O.HOST_S_PER_KERNEL,
                         overlap=O.OVERLAP, fixed=O.ALLREDUCE_FIXED_S)  # fmt: skip
    assert got.step == pytest.approx(want[0], rel=1e-12) and got.sync == pytest.approx(want[1], rel=1e-12, abs=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(STUDY), st.sampled_from(TYPES), placements)
def test_properties(model, gpu, placement):
    bs = np.array([1, 2, 8, 64, 512])
    step, sync = step_time(model, gpu, placement, bs)
    assert np.all(np.diff(step) > 0)  # more samples per GPU never take less time
    assert np.all(sync >= 0) and np.all(sync <= step)
    assert np.all(np.diff(sync) <= 0)  # a longer backward pass hides more of the all-reduce
    if sum(placement) == 1:
        assert np.all(sync == 0)
    # The same GPUs spread over more nodes never synchronise faster.
    n = sum(placement)
    if n > 1:
        one_node = step_time(model, gpu, (n,), 64).sync
        assert step_time(model, gpu, (1,) * n, 64).sync >= one_node


def test_faster_gpus_are_faster_and_efficiency_scales():
    times = [step_time("imagenet", t, (1,), 128).step for t in ("t4", "v100", "a100-40gb", "h100", "b200")]
    assert times == sorted(times, reverse=True)
    assert step_time("imagenet", "v100", (1,), 128, efficiency=0.8).step < step_time("imagenet", "v100", (1,), 128).step


def test_calibrate_recovers_the_efficiency():
    rows = [((c,) * k, b, step_time("bert", "a100-40gb", (c,) * k, b, efficiency=0.37).step)
            for k in (1, 2) for c in (1, 4) for b in (4, 16, 32)]  # fmt: skip
    assert calibrate("bert", "a100-40gb", rows) == pytest.approx(0.37, rel=1e-3)
    with pytest.raises(ValueError, match="no measured rows"):
        calibrate("bert", "t4", [])
    with pytest.raises(ValueError, match="positive"):
        calibrate("bert", "t4", [((1,), 4, -1.0)])


def test_max_local_bsz_is_the_memory_limit():
    m, g = model_spec("yolov3"), gpu_type("t4")
    cap = max_local_bsz(m, g)
    budget = (g.memory_gib - O.RESERVED_GIB) * 2**30 - m.state_bytes_per_param * m.parameters
    assert cap * m.held_bytes <= budget < (cap + 1) * m.held_bytes
    assert max_local_bsz("yolov3", "h200") > cap


def test_models_too_large_for_data_parallelism_use_the_strategy_search():
    assert not O.fits_data_parallel("gpt-13b", "a100-40gb") and O.fits_data_parallel("gpt-125m", "a100-40gb")
    r16 = step_time("gpt-13b", "a100-80gb", (8, 8), 8)  # 128 sequences on 16 GPUs
    r32 = step_time("gpt-13b", "a100-80gb", (8, 8, 8, 8), 4)  # the same batch on 32
    assert 0 <= r16.sync < r16.step and r32.step < r16.step


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"placement": (0, 0)}, "placement"),
        ({"local_bsz": 0}, "local_bsz"),
        ({"efficiency": 0.0}, "efficiency"),
        ({"link_efficiency": 1.5}, "link_efficiency"),
        ({"gpu": "h800"}, "unknown GPU type"),
        ({"model": "resnet-1000"}, "unknown model"),
    ],
)
def test_bad_input_names_the_field(kwargs, match):
    args = {"model": "cifar10", "gpu": "t4", "placement": (1,), "local_bsz": 32, **kwargs}
    with pytest.raises(ValueError, match=match):
        step_time(args.pop("model"), args.pop("gpu"), args.pop("placement"), args.pop("local_bsz"), **args)


def test_user_model_file(tmp_path):
    p = tmp_path / "mine.json"
    p.write_text('{"layers": 4, "hidden": 256, "heads": 4, "seq": 512, "vocab": 32000, "global_batch": 64}')
    m = load_model_spec(p)
    assert m.name == "mine" and m.init_batch_size == 64 and m.fixed_batch
    assert math.isfinite(step_time(m, "l4", (2,), 8).step)
    spec = tmp_path / "spec.json"
    spec.write_text('{"parameters": 1e6, "flops_per_sample": 1e9}')
    with pytest.raises(ValueError, match="missing field"):
        load_model_spec(spec)
    bad = tmp_path / "bad.json"
    bad.write_text('{"layers": 4, "hidden": 256, "heads": 4, "seq": 512, "vocab": 32000, "global_batch": 64, "x": 1}')
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['x'\]"):
        load_model_spec(bad)
