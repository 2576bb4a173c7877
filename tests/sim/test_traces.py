"""Trace reading and interpolation on a tiny hand-made application."""

from __future__ import annotations

import pytest

from fastsched.sim.traces import TraceApplication, load_applications, normalize_placement


def test_normalize_placement():
    assert normalize_placement((4, 0, 2)) == (2, 4)
    assert normalize_placement((2, 1, 3)) == (1, 3, 2)
    assert normalize_placement((0, 0)) == ()


def test_limits(tiny_traces):
    app = load_applications(tiny_traces)["toy"]
    assert (app.init_batch_size, app.max_batch_size) == (4, 8)
    assert (app.min_local_bsz, app.max_local_bsz) == (4, 8)
    assert app.max_epochs == 3
    assert app.completion_epoch(6) == 2


def test_measured_placement_interpolates_in_batch(tiny_traces):
    app = TraceApplication(tiny_traces / "toy")
    assert app.throughput((1,), 4) == (1.0, 0.0)
    assert app.throughput((1,), 6) == pytest.approx((1.5, 0.0))
    assert app.throughput((1,), 8) == pytest.approx((2.0, 0.0))
    # (2, 1) normalises to the measured layout 12; zeros are dropped.
    assert app.throughput((2, 0, 1), 6) == pytest.approx((3.0, 1.5))
    # Beyond the measured batch range the fitted model answers, and says so.
    assert not app.is_modelled((2, 0, 1), 6)
    step, sync = app.throughput((1,), 9)
    assert app.is_modelled((1,), 9) and step > app.throughput((1,), 8)[0] and sync >= 0


def test_unmeasured_placement_uses_3d_interpolation(tiny_traces):
    app = TraceApplication(tiny_traces / "toy")
    # (2, 2) is not measured: interpolate over (nodes, replicas, bsz) points. At bsz=4 the
    # point (2, 4, 4) lies between (2, 3, 4) [mean of 12 -> 2.5/1.5] and (4, 8, 4) / (4, 4, 4).
    step, sync = app.throughput((2, 2), 4)
    assert 2.0 < step < 4.0 and 1.0 < sync < 3.0
    assert not app.is_modelled((2, 2), 4)
    step, sync = app.throughput((1, 1, 1, 1, 1), 4)  # 5 nodes: outside the hull, modelled
    assert app.is_modelled((1, 1, 1, 1, 1), 4) and 0 <= sync <= step


def test_grad_stats_progress_iteration(tiny_traces):
    app = TraceApplication(tiny_traces / "toy")
    assert app.grad_stats(4, 1) == (1.0, 2.0)
    assert app.grad_stats(6, 1) == pytest.approx((2.0, 4.0))  # halfway between B=4 and B=8
    assert app.progress(0) == 0.0
    assert app.progress(1) == 10.0  # min over batch sizes of row 0
    assert app.progress(2) == 18.0
    assert app.iteration(6, 2) == pytest.approx(24.0)
    assert app.best_metric(4, 2) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="outside the validated range"):
        app.grad_stats(16, 0)


def test_bad_traces(tmp_path, tiny_traces):
    with pytest.raises(FileNotFoundError):
        load_applications(tmp_path / "missing")
    bad = tiny_traces / "toy" / "placements.csv"
    bad.write_text("placement,local_bsz,step\n1,4,1.0\n")
    with pytest.raises(ValueError, match="missing column"):
        TraceApplication(tiny_traces / "toy")
