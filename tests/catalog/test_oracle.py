"""The throughput oracle against its plain reference, and its properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.catalog import GPUS, calibrate, calibrate_floors, gpu_type, max_local_bsz, model_spec, step_time
from fastsched.catalog import oracle as O
from fastsched.catalog._padding import padded_ratio
from fastsched.catalog.models import STUDY_MODELS, check_model, load_model_spec
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
    st.one_of(st.just(0.0), st.floats(1e-4, 0.5)),
    st.one_of(
        st.none(),
        st.tuples(
            st.floats(0.1, 10.0),
            st.floats(0.1, 10.0),
            st.floats(0.0, 3.0),
            st.floats(0.0, 2.0),
            st.one_of(st.just(0.0), st.floats(0.0, 0.05)),
        ),
    ),  # fmt: skip
)
def test_step_time_matches_the_reference(model, gpu, placement, b, eff, link, floor, adj):
    adjust = None if adj is None else O.StepAdjust(*adj)
    got = step_time(model, gpu, placement, b, efficiency=eff, link_efficiency=link, floor_s=floor, adjust=adjust)
    want = naive.dp_step(model_spec(model), gpu_type(gpu), placement, b, eff, link, O.HOST_S_PER_KERNEL,
                         overlap=O.OVERLAP, fixed=O.ALLREDUCE_FIXED_S, passes=O.ACTIVATION_PASSES,
                         floor=floor, **({} if adj is None else dict(zip(
                             ("gpu_scale", "host_scale", "contention", "node_sync", "hop_latency"), adj, strict=True))))  # fmt: skip
    assert got.step == pytest.approx(want[0], rel=1e-12) and got.sync == pytest.approx(want[1], rel=1e-12, abs=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(STUDY), st.sampled_from(TYPES), placements)
def test_properties(model, gpu, placement):
    bs = np.array([1, 2, 8, 64, 512])
    step, sync = step_time(model, gpu, placement, bs)
    # More samples per GPU never take less time (a host-paced step may stay flat while the
    # GPU's longer backward pass hides more of the all-reduce).
    assert np.all(np.diff(step) >= -1e-12 * step[1:])
    assert np.all(np.diff(step_time(model, gpu, placement, bs, overlap=0.0).step) > 0)
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


def test_calibrate_floors_recovers_each_floor_and_the_shared_efficiency():
    truth = {"t4": 0.0, "v100": 0.09, "a100-40gb": 0.06}  # each binds on the short steps (it gates)
    rows = {
        t: [((c,) * k, b, step_time("cifar10", t, (c,) * k, b, efficiency=0.55, floor_s=f).step)
            for k in (1, 2) for c in (1, 4) for b in (32, 128, 1024)]
        for t, f in truth.items()
    }  # fmt: skip
    c = calibrate_floors("cifar10", rows)
    assert set(c.efficiencies) == set(c.floors) == set(truth)
    assert all(e == pytest.approx(0.55, rel=2e-3) for e in c.efficiencies.values())
    for t, f in truth.items():
        assert c.floors[t] == pytest.approx(f, rel=1e-2, abs=2e-3)
    # Given the efficiency, only the floors are fitted.
    fixed = calibrate_floors("cifar10", rows, efficiency=0.55)
    assert fixed.efficiencies["t4"] == 0.55 and fixed.floors["v100"] == pytest.approx(0.09, rel=1e-3)
    with pytest.raises(ValueError, match="rows_by_type"):
        calibrate_floors("cifar10", {})


def test_a_floor_gates_the_step_and_hides_shorter_work():
    short0, short1 = (step_time("ncf", "v100", (1,), 32, floor_s=f).step for f in (0.0, 0.09))
    long0, long1 = (step_time("bert", "v100", (1,), 32, floor_s=f).step for f in (0.0, 0.09))
    assert short0 < 0.09 == short1 and long1 == long0 > 0.09  # max(floor, work), not work plus floor
    # The all-reduce of a step shorter than the floor hides under it (azure's cifar10 rows).
    eight = step_time("ncf", "v100", (8,), 32, floor_s=0.09)
    assert eight.sync == step_time("ncf", "v100", (8,), 32).sync > 0 and eight.step == 0.09
    with pytest.raises(ValueError, match="floor_s"):
        step_time("ncf", "v100", (1,), 32, floor_s=-1.0)


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


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(STUDY), st.sampled_from(TYPES), st.integers(1, 8), st.integers(1, 4), st.integers(1, 512))
def test_sync_grows_with_the_gpus_and_adds_to_the_compute(model, gpu, per_node, nodes, b):
    one = step_time(model, gpu, (1,), b)
    many = step_time(model, gpu, (per_node,) * nodes, b)
    assert one.sync == 0.0 and many.sync >= one.sync  # more GPUs never synchronise in less than none
    # The step is the one-GPU compute plus the exposed sync: the placement changes only the sync,
    # and, for padded samples, the longest sample the replicas wait for.
    if model_spec(model).length_spread == 0.0:
        assert many.step - many.sync == pytest.approx(one.step, rel=1e-12)
    else:
        assert many.step - many.sync >= one.step * (1.0 - 1e-12)
    if per_node > 1:  # one more GPU on the same node never synchronises faster (ring: 2 (n-1)/n)
        assert step_time(model, gpu, (per_node,), b).sync >= step_time(model, gpu, (per_node - 1,), b).sync
    after_backward = step_time(model, gpu, (per_node,) * nodes, b, overlap=0.0)
    assert many.sync <= after_backward.sync and many.step <= after_backward.step  # overlap only hides sync


def test_the_backward_pass_hides_the_all_reduce_only_where_the_gpu_sets_the_pace():
    # The Sia traces' stack is PyTorch DDP: at the same gradient bytes a longer backward pass
    # hides more of the all-reduce (cifar10 on 8 x 2080 Ti: 48 ms measured at 32 per GPU,
    # 10 ms at 1024), so the default prices the overlap.
    small, large = step_time("cifar10", "rtx2080ti", (8,), 32), step_time("cifar10", "rtx2080ti", (8,), 1024)
    assert large.sync < 0.7 * small.sync
    # YOLOv3's 2,150 kernel launches pace its step on T4s: its GPU work adds little wall time,
    # so it cannot hide the all-reduce behind it, and a larger batch never takes less time.
    bs = np.arange(1, 65)
    for overlap in (0.0, 0.5, 1.0):
        step, _ = step_time("yolov3", "t4", (4, 4), bs, overlap=overlap)
        assert np.all(np.diff(step) >= -1e-12 * step[1:])
    host_paced = step_time("yolov3", "t4", (4, 4), 1)
    assert host_paced.sync == pytest.approx(step_time("yolov3", "t4", (4, 4), 1, overlap=0.0).sync, rel=0.05)


def test_units_of_a_known_step():
    # ResNet-18 at 128 on one V100: 128 x 3.3 GFLOP at the FP32 peak is 27 ms; the oracle adds
    # memory traffic and host time, so tens of milliseconds, not microseconds or seconds.
    s = step_time("cifar10", "v100", (1,), 128).step
    assert 0.027 < s < 0.5
    with pytest.raises(ValueError, match="overlap"):
        step_time("cifar10", "v100", (1,), 128, overlap=1.5)


def test_study_networks_match_their_published_shapes():
    # NeuMF as the Pollux benchmark trains it: 32 GMF and 128 MLP factors per user and item of
    # MovieLens-1M, MLP 256-128-64-32, a 64-wide output layer; Adam; 4 negatives per rating.
    users, items = 6040, 3706
    mlp = (256 * 128 + 128) + (128 * 64 + 64) + (64 * 32 + 32)
    ncf = model_spec("ncf")
    assert ncf.parameters == pytest.approx((users + items) * (32 + 128) + mlp + 65, rel=0.01)
    assert ncf.samples_per_epoch == 994_169 * 5 and ncf.state_bytes_per_param == 16.0
    # DeepSpeech2's default network: 5 bidirectional GRU layers of 800 on 32 x 41 conv features.
    gru = lambda n_in: 2 * 3 * (n_in * 800 + 800 * 800 + 2 * 800)  # noqa: E731
    convs = 32 * 41 * 11 + 32 + 32 * 32 * 21 * 11 + 32
    assert model_spec("deepspeech2").parameters == pytest.approx(gru(32 * 41) + 4 * gru(800) + convs, rel=0.01)


@pytest.mark.parametrize("app", STUDY)
def test_the_study_initial_batch_fits_one_gpu_of_every_measured_type(app):
    # The study trained every application from its initial batch on one GPU of each type; a
    # memory rule that says otherwise cannot be realistic (Pollux would be handed less than it).
    m = model_spec(app)
    for t in ("aws", "azure", "rtx", "dgx-ext", "quad"):
        assert max_local_bsz(m, t) >= min(m.init_batch_size, 200), (app, t)


def test_winograd_and_mixed_precision_only_shorten_compute():
    m = model_spec("cifar10")
    direct = m._replace(winograd_share=0.0)
    assert step_time(m, "v100", (1,), 256).step < step_time(direct, "v100", (1,), 256).step
    with pytest.raises(ValueError, match="winograd_share"):
        from fastsched.catalog.models import check_model

        check_model(m._replace(winograd_share=1.5))
    amp = model_spec("imagenet")
    assert amp.precision == "fp16" and amp.held_bytes < amp.activation_bytes
    assert step_time(amp, "v100", (1,), 64).step < step_time(amp._replace(precision="tf32"), "v100", (1,), 64).step


def test_a_chain_of_dependent_kernels_costs_the_same_at_every_batch():
    m = model_spec("deepspeech2")._replace(length_spread=0.0)
    free = m._replace(serial_kernels=0)
    for b in (1, 16, 256):
        with_chain = step_time(m, "a100-40gb", (1,), b, host_s_per_kernel=1e-12).step
        without = step_time(free, "a100-40gb", (1,), b, host_s_per_kernel=1e-12).step
        assert with_chain - without == pytest.approx(m.serial_kernels * O.GPU_KERNEL_S, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 50_000), st.floats(0.0, 1.2))
def test_padded_ratio_is_the_expected_longest_over_the_mean(m, spread):
    assert padded_ratio(m, spread) == pytest.approx(naive.padded_ratio(m, spread), rel=1e-6)


def test_padding_makes_the_slowest_replica_set_the_step():
    padded = model_spec("deepspeech2")
    assert padded.length_spread > 0
    fixed = padded._replace(length_spread=0.0)
    for b in (1, 20, 160):
        one = step_time(padded, "v100", (1,), b)
        eight = step_time(padded, "v100", (8,), b)
        # Without padding the compute is the same on one GPU and on eight; with it, eight GPUs
        # wait for the longest of 8 b samples, one GPU for the longest of b.
        flat = [step_time(fixed, "v100", p, b) for p in ((1,), (8,))]
        assert flat[0].step == pytest.approx(flat[1].step - flat[1].sync, rel=1e-12)
        assert eight.step - eight.sync > one.step
        assert one.step >= step_time(fixed, "v100", (1,), b).step * (1.0 - 1e-12)
    # one sample: nothing to pad
    assert step_time(padded, "v100", (1,), 1).step == pytest.approx(step_time(fixed, "v100", (1,), 1).step, rel=1e-9)
    # the time per sample grows with the batch (the longest of more clips is longer)
    t = [step_time(padded, "v100", (1,), b).step for b in (20, 40, 160, 320)]
    assert (t[1] - t[0]) / 20 < (t[3] - t[2]) / 160


@pytest.mark.parametrize("field, value", [("length_spread", -0.1), ("length_spread", 2.0), ("padded_share", 1.5),
                                          ("padded_share", True)])  # fmt: skip
def test_bad_padding_fields_name_the_field(field, value):
    with pytest.raises(ValueError, match=f"model.{field}"):
        check_model(model_spec("deepspeech2")._replace(**{field: value}))
