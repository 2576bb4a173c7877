"""Trace reading and interpolation on a tiny hand-made application."""

from __future__ import annotations

import pytest

from fastsched.sim.truth.traces import TraceApplication, load_applications, normalize_placement


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


# Issue 28, item 4: each bad trace row is rejected at load, naming the file, row and column.
# (file, line number, replacement line, column named in the error)
BAD_ROWS = [
    ("placements.csv", 2, "1,4,-1.0,0.0", "step_time"),  # negative: 0 jobs completed
    ("placements.csv", 2, "1,4,1e308,0.0", "step_time"),  # absurd: 0 jobs completed
    ("placements.csv", 2, "1,4,0.0,0.0", "step_time"),  # zero: ZeroDivisionError mid-run
    ("placements.csv", 2, "1,4,nan,0.0", "step_time"),  # NaN: failed mid-run naming no file
    ("placements.csv", 3, "1,nan,2.0,0.0", "local_bsz"),
    ("placements.csv", 4, "2,4,1.5,-0.5", "sync_time"),  # negative: changed results
    ("placements.csv", 4, "2,4,1.5,2.5", "sync_time"),  # longer than the step
    ("placements.csv", 6, "101,4,2.0,1.0", "placement"),  # an empty node in a layout
    ("scalability.csv", 3, "4,8,8,inf,3.0", "step_time"),
    ("scalability.csv", 2, "4,2,4,4.0,3.0", "num_replicas"),  # fewer GPUs than nodes
    ("validation-8.csv", 3, "11.0,12,0.65,3.0,6.0", "progress"),  # decreasing: changed results
    ("validation-8.csv", 2, "nan,6,0.4,3.0,5.0", "progress"),
    ("validation-4.csv", 3, "20.0,20,0.6,0.0,0.0", "grad_var"),  # zero statistics: ZeroDivisionError
    ("validation-4.csv", 3, "20.0,20,0.6,-1.0,2.0", "grad_sqr"),
    ("validation-4.csv", 4, "30.0,5,0.7,1.0,3.0", "iteration"),
]


@pytest.mark.parametrize(("name", "line", "text", "column"), BAD_ROWS)
def test_bad_trace_rows_are_rejected_at_load(tiny_traces, name, line, text, column):
    path = tiny_traces / "toy" / name
    lines = path.read_text().splitlines()
    lines[line - 1] = text
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as err:
        TraceApplication(tiny_traces / "toy")
    assert f"{path}:{line}: column {column!r}" in str(err.value)


@pytest.mark.parametrize("stray", ["validation--64.csv", "validation-0.csv", "validation-x.csv", "validation-4.0.csv"])
def test_malformed_validation_file_names_are_rejected(tiny_traces, stray):
    # validation--64.csv used to be read as batch size 64.
    src = tiny_traces / "toy" / "validation-8.csv"
    (tiny_traces / "toy" / stray).write_text(src.read_text())
    with pytest.raises(ValueError, match=rf"{stray}: expected a name validation-<batch size>\.csv"):
        TraceApplication(tiny_traces / "toy")


def test_published_traces_pass_validation():
    from tests.conftest import SHARED

    roots = [SHARED / "pollux-traces" / "traces", SHARED / "sia-traces" / "traces"]
    if not all(r.is_dir() for r in roots):
        pytest.skip("needs the shared traces")
    loaded = 0
    for root in roots:
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            for placements in sorted(folder.glob("placements*.csv")):
                gpu_type = placements.stem.partition("-")[2] or None
                if folder.name == "gpt_pmp":
                    # Its step times leave the sync out (sync > step): no workload uses it.
                    with pytest.raises(ValueError, match=f"{placements}:[0-9]+: column 'sync_time'"):
                        TraceApplication(folder, gpu_type=gpu_type)
                    continue
                TraceApplication(folder, gpu_type=gpu_type)
                loaded += 1
    assert loaded > 30
