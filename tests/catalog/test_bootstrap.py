"""Bootstrap profiles: what a short measurement fixes, and what the oracle then prices."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.catalog import gpu_type, step_time
from fastsched.catalog.bootstrap import bootstrap_from_traces, bootstrap_rows, fit_bootstrap
from fastsched.catalog.oracle import HOST_BOUND_RATIO, StepAdjust
from fastsched.catalog.profile import read_profile_info, write_profile


def _measure(model, gpu, truth, floor, batches, node_b):
    one = [(b, step_time(model, gpu, (1,), b, floor_s=floor, adjust=truth).step) for b in batches]
    G = gpu_type(gpu).gpus_per_node
    full = step_time(model, gpu, (G,), node_b, floor_s=floor, adjust=truth)
    return one, (node_b, full.step, full.sync)


@pytest.mark.parametrize(
    "model, gpu, truth, floor",
    [
        ("imagenet", "v100", StepAdjust(gpu_scale=0.8, host_scale=1.3, contention=0.5), 0.0),
        ("yolov3", "a100-40gb", StepAdjust(gpu_scale=1.2, contention=1.6), 0.0),
        ("cifar10", "v100", StepAdjust(gpu_scale=0.6, contention=0.3), 0.1),
        ("bert", "t4", StepAdjust(gpu_scale=0.9, node_sync_s=0.4), 0.0),
    ],
)
def test_a_fit_reproduces_its_rows_and_prices_the_other_placements(model, gpu, truth, floor):
    one, node = _measure(model, gpu, truth, floor, (4, 8, 16, 32, 64), 16)
    bs = fit_bootstrap(model, gpu, one, node)
    got = [step_time(model, gpu, (1,), b, floor_s=bs.floor_s, adjust=bs.adjust).step for b, _ in one]
    assert got == pytest.approx([s for _, s in one], rel=0.03)
    G = gpu_type(gpu).gpus_per_node
    again = step_time(model, gpu, (G,), node[0], floor_s=bs.floor_s, adjust=bs.adjust)
    assert again.step == pytest.approx(node[1], rel=1e-6)
    if truth.node_sync_s:  # the full-node row's measured sync sets the node's shared path
        assert again.sync == pytest.approx(node[2], rel=1e-3)
    # every other placement is priced, near the truth where the rows pin the parts down
    for p in ((2,), (G // 2,), (G // 2, G // 2), (1, 1, 1)):
        want = step_time(model, gpu, p, 16, floor_s=floor, adjust=truth).step
        assert step_time(model, gpu, p, 16, floor_s=bs.floor_s, adjust=bs.adjust).step == pytest.approx(want, rel=0.25)


def test_spread_placements_pay_their_fullest_node():
    a = StepAdjust(contention=1.6)
    one_node = step_time("yolov3", "a100-40gb", (4,), 8, adjust=a)
    spread = step_time("yolov3", "a100-40gb", (4, 4), 8, adjust=a)
    plain = step_time("yolov3", "a100-40gb", (4, 4), 8)
    assert spread.step - spread.sync == pytest.approx(one_node.step - one_node.sync, rel=0.05)
    assert spread.step > plain.step
    # one GPU of a node never contends
    assert step_time("yolov3", "a100-40gb", (1,), 8, adjust=a) == step_time("yolov3", "a100-40gb", (1,), 8)


def test_without_a_node_row_nothing_multi_gpu_is_fitted():
    one, _ = _measure("bert", "v100", StepAdjust(gpu_scale=1.5), 0.0, (4, 8, 16, 32), 8)
    bs = fit_bootstrap("bert", "v100", one)
    assert bs.adjust.contention == 0.0 and bs.adjust.node_sync_s == 0.0 and bs.node_row is None
    assert bs.fit_error < 0.02 and bs.rows == 4


def test_a_floor_is_kept_only_where_the_rows_show_one():
    plain, _ = _measure("imagenet", "t4", StepAdjust(gpu_scale=0.9), 0.0, (20, 40, 80, 160), 40)
    assert fit_bootstrap("imagenet", "t4", plain).floor_s == 0.0
    gated, _ = _measure("cifar10", "v100", StepAdjust(), 0.12, (32, 64, 128, 256, 1024, 2048), 64)
    assert fit_bootstrap("cifar10", "v100", gated).floor_s == pytest.approx(0.12, rel=0.02)


def test_host_bound_jobs_are_flagged():
    one, node = _measure("ncf", "v100", StepAdjust(), 0.0, (32, 1024, 32768), 1024)
    assert fit_bootstrap("ncf", "v100", one, node).low_confidence
    one, node = _measure("bert", "v100", StepAdjust(), 0.0, (4, 8, 16, 32), 8)
    bs = fit_bootstrap("bert", "v100", one, node)
    assert not bs.low_confidence and bs.host_share < HOST_BOUND_RATIO


@pytest.mark.parametrize(
    "one, node, match",
    [
        ([], None, "one_gpu"),
        ([(8, -1.0)], None, "one_gpu"),
        ([(0, 0.1)], None, "one_gpu"),
        ([(8, "x")], None, "one_gpu"),
        ([(8, 0.1)], (8, 0.2), "node_row"),
        ([(8, 0.1)], (8, 0.2, 0.3), "node_row"),  # sync longer than the step
    ],
)
def test_bad_rows_name_the_argument(one, node, match):
    with pytest.raises(ValueError, match=match):
        fit_bootstrap("bert", "v100", one, node)


def test_a_model_that_does_not_fit_one_gpu_is_refused():
    with pytest.raises(ValueError, match="does not fit one"):
        fit_bootstrap("gpt-13b", "a100-40gb", [(1, 1.0)])


def test_trace_rows_are_the_one_gpu_rows_and_the_median_full_node_row(tmp_path):
    p = tmp_path / "placements-azure.csv"
    lines = ["placement,local_bsz,step_time,sync_time", "1,8,0.1,0", "1,16,0.2,0"]
    lines += [f"8,{b},{0.1 + b / 100},0.01" for b in (8, 16, 32, 64)] + ["44,16,0.5,0.2", "2,16,0.25,0.02"]
    p.write_text("\n".join(lines) + "\n")
    one, node = bootstrap_rows(p, 8)
    assert one == [(8.0, 0.1), (16.0, 0.2)] and node == (16.0, 0.26, 0.01)
    # the other multi-GPU rows are not read: dropping them gives the same profile
    fits = bootstrap_from_traces(tmp_path, ["v100"], model="bert")
    p.write_text("\n".join(lines[:7]) + "\n")
    assert bootstrap_from_traces(tmp_path, ["v100"], model="bert") == fits
    q = tmp_path / "placements-aws.csv"
    q.write_text("placement,local_bsz,step_time,sync_time\n4,8,0.1,0.01\n")
    with pytest.raises(ValueError, match="no one-GPU rows"):
        bootstrap_rows(q, 4)


def test_bootstrap_profiles_reach_the_profile_files_and_record(tmp_path):
    truth, floor = StepAdjust(gpu_scale=0.7, contention=0.9), 0.0
    src = tmp_path / "measured"
    write_profile("yolov3", ["a100-40gb"], src, bootstraps={"a100-40gb": fit_bootstrap(
        "yolov3", "a100-40gb", *_measure("yolov3", "a100-40gb", truth, floor, (4, 8, 16, 32), 8))})  # fmt: skip
    info = read_profile_info(src / "yolov3")
    t = info["types"]["dgx-ext"]
    assert t["mode"] == "bootstrap" and t["adjust"]["contention"] > 0.5 and info["spec"]["name"] == "yolov3"
    # the profile's rows are the bootstrap's prices
    bs = bootstrap_from_traces(src / "yolov3", ["a100-40gb"])["dgx-ext"]
    want = step_time("yolov3", "a100-40gb", (8,), 8, floor_s=t["floor_s"], adjust=StepAdjust(**t["adjust"])).step
    assert step_time("yolov3", "a100-40gb", (8,), 8, floor_s=bs.floor_s, adjust=bs.adjust).step == pytest.approx(
        want, rel=0.05
    )
    # a datasheet type added later keeps the bootstrap type's record
    write_profile("yolov3", ["t4"], src, statistics=False)
    types = read_profile_info(src / "yolov3")["types"]
    assert types["dgx-ext"]["mode"] == "bootstrap" and types["aws"]["mode"] == "datasheet"
    assert np.isfinite(types["aws"]["host_share"])


# --- the ring's per-step latency (StepAdjust.hop_latency_s) ---------------------------------------

_LAT_CASES = [("ncf", "v100"), ("cifar10", "t4"), ("bert", "rtx2080ti"), ("imagenet", "a100-40gb")]
_spread = st.lists(st.integers(1, 8), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_LAT_CASES), st.floats(1e-4, 0.05), st.integers(1, 4096), _spread)
def test_the_latency_term_vanishes_at_one_gpu_and_one_gpu_per_node(case, alpha, b, nodes):
    model, gpu = case
    a = StepAdjust(hop_latency_s=alpha)
    assert step_time(model, gpu, (1,), b, adjust=a) == step_time(model, gpu, (1,), b)
    spread = (1,) * len(nodes)  # nothing shares a node's host
    assert step_time(model, gpu, spread, b, adjust=a) == step_time(model, gpu, spread, b)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_LAT_CASES), st.floats(1e-4, 0.05), st.integers(2, 8), st.integers(1, 4))
def test_the_latency_adds_two_steps_per_extra_gpu_at_its_node_share(case, alpha, g, k):
    """Without the backward window (overlap 0), the sync grows by exactly 2 (n - 1) alpha (g - 1)/(G - 1)."""
    model, gpu = case
    G = gpu_type(gpu).gpus_per_node
    g = min(g, G)
    if g * k == 1:
        return
    p = (g,) * k
    base = step_time(model, gpu, p, 32, overlap=0.0).sync
    with_lat = step_time(model, gpu, p, 32, overlap=0.0, adjust=StepAdjust(hop_latency_s=alpha)).sync
    assert with_lat - base == pytest.approx(2 * (g * k - 1) * alpha * (g - 1) / (G - 1), rel=1e-9, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([("ncf", "v100"), ("cifar10", "v100"), ("bert", "t4"), ("yolov3", "rtx2080ti")]),
       st.floats(2e-4, 0.02), st.floats(0.0, 1.0), st.floats(0.0, 0.5))  # fmt: skip
def test_a_two_node_row_recovers_a_planted_latency(case, alpha, contention, path_share):
    model, gpu = case
    G = gpu_type(gpu).gpus_per_node
    ring = step_time(model, gpu, (G,), 64, overlap=0.0).sync
    truth = StepAdjust(contention=contention, hop_latency_s=alpha, node_sync_s=ring * (1 + path_share))
    one, node = _measure(model, gpu, truth, 0.0, (8, 16, 32, 64, 128), 64)
    two = step_time(model, gpu, (G, G), 64, adjust=truth)
    bs = fit_bootstrap(model, gpu, one, node, two_node_row=(64, two.step, two.sync))
    assert bs.adjust.hop_latency_s == pytest.approx(alpha, rel=0.05)
    assert bs.two_node_row == (64.0, two.step, two.sync)
    for p in ((G, G, G), (G // 2 or 1, G // 2 or 1), (G,)):  # other placements priced by the planted term
        want = step_time(model, gpu, p, 64, adjust=truth).step
        assert step_time(model, gpu, p, 64, floor_s=bs.floor_s, adjust=bs.adjust).step == pytest.approx(want, rel=0.05)


def test_one_full_node_row_sets_no_latency_and_a_two_node_row_needs_it():
    truth = StepAdjust(hop_latency_s=0.01)
    one, node = _measure("ncf", "v100", truth, 0.0, (32, 1024, 32768), 1024)
    assert fit_bootstrap("ncf", "v100", one, node).adjust.hop_latency_s == 0.0  # one row cannot split it
    with pytest.raises(ValueError, match="two_node_row"):
        fit_bootstrap("ncf", "v100", one, two_node_row=(1024, 0.3, 0.2))
    with pytest.raises(ValueError, match="two_node_row"):
        fit_bootstrap("ncf", "v100", one, node, two_node_row=(1024, 0.3, 0.4))  # sync above the step


def test_hop_latency_is_range_checked():
    with pytest.raises(ValueError, match="hop_latency_s"):
        step_time("ncf", "v100", (8,), 32, adjust=StepAdjust(hop_latency_s=-1.0))
