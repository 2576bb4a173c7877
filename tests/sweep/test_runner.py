"""Sweep rows say what each run did; Ctrl-C keeps what was done and the next call resumes."""

from __future__ import annotations

import json

import pytest

from fastsched.cli import main
from fastsched.sweep import SweepInterrupted, load_spec, run_serial
from fastsched.sweep.store import LOG_NAME
from fastsched.sweep.task import METRICS, run_task
from tests.sweep._helpers import comparable, small_spec


def test_rows_carry_completion_profiles_and_workload(tmp_path):
    spec = small_spec(tmp_path, max_time=3000, seeds=1, interval=60)
    result = run_serial(spec, output_dir=tmp_path / "out")
    for row in result.rows:
        assert row["profiles"] == "builtin" and row["workload"].endswith(".csv")
        assert row["jobs"] == 3 and 0 <= row["completed"] < 3 and row["incomplete"]
        assert sum(row["incomplete"].values()) == row["jobs"] - row["completed"]
    assert len(result.incomplete) == len(result.rows)
    s = result.summary[0]
    assert s["incomplete_runs"] == 1 and s["jobs"] == 3 and s["completed"] < 3
    assert "!" in result.table()  # a short "done" column is flagged
    header = (tmp_path / "out" / "runs.csv").read_text().splitlines()[0].split(",")
    assert {"completed", "jobs", "incomplete", "profiles", "workload"} <= set(header)


def test_cli_incomplete_runs_exit_3(tmp_path, capsys):
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(small_spec(tmp_path, max_time=3000, seeds=1, interval=60)))
    assert main(["sweep", str(p), "--serial", "-q", "--output", str(tmp_path / "o")]) == 3
    assert "--allow-incomplete" in capsys.readouterr().err
    assert main(["sweep", str(p), "--serial", "-q", "--output", str(tmp_path / "o"), "--allow-incomplete"]) == 0


def test_summary_keys_are_required_not_guessed():
    class Partial:
        def summary(self):
            return {"avg_jct": 1.0}

    row = run_task({}, simulate_fn=lambda **kw: Partial())
    assert row["error"].startswith("KeyError") and all(row[k] is None for k in METRICS)


def _interrupt_at(n):
    from fastsched.sim import simulate

    calls = []

    def fn(**kwargs):
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt
        return simulate(**kwargs)

    return fn


def test_interrupt_keeps_finished_runs_and_resume_completes(tmp_path):
    spec = small_spec(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(SweepInterrupted) as exc:
        run_serial(spec, output_dir=out, simulate_fn=_interrupt_at(4))
    assert (exc.value.done, exc.value.total) == (3, 8)
    lines = (out / LOG_NAME).read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["error"] is None for line in lines)
    assert not (out / "runs.csv").exists()  # no partial tables
    resumed = run_serial(spec, output_dir=out)
    assert resumed.skipped == 3 and len(resumed.rows) == 8 and not resumed.errors
    assert comparable(resumed.rows) == comparable(run_serial(spec).rows)


def test_cli_interrupt_says_how_to_resume(tmp_path, capsys, monkeypatch):
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(small_spec(tmp_path)))
    stop_second = _interrupt_at(2)
    monkeypatch.setattr("fastsched.sweep.runner.run_task", lambda kwargs, fn=None: run_task(kwargs, stop_second))
    out = tmp_path / "o"
    assert main(["sweep", str(p), "--serial", "-q", "--output", str(out)]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and f"resume with: fastsched sweep {p} --output {out} --serial" in err
    assert "Traceback" not in err


def test_torn_last_line_is_skipped_and_not_extended(tmp_path):
    spec = small_spec(tmp_path, seeds=1)
    out = tmp_path / "out"
    first = run_serial(spec, output_dir=out)
    log = out / LOG_NAME
    rows = log.read_text().splitlines()
    log.write_text("\n".join(rows[:2]) + "\n" + rows[2][:15])  # a crash mid-line
    again = run_serial(spec, output_dir=out)
    assert again.skipped == 2 and comparable(again.rows) == comparable(first.rows)
    for line in log.read_text().splitlines()[3:]:
        json.loads(line)  # every row after the torn one is a line of its own


def test_policy_options_checked_for_every_policy(tmp_path):
    base = small_spec(tmp_path)
    load_spec({**base, "policy": "pollux", "policy_options": {"pop_size": 8}})
    for bad in (
        {"policy": "pollux", "policy_options": {"pop_size": -1}},
        {"policy": "pollux", "policy_options": [{}, {"nope": 1}]},
        {"policy": ["pollux", "optimus"], "policy_options": {"pop_size": 8}},
        {"policy": "tiresias", "policy_options": {"pop_size": 8}},
    ):
        with pytest.raises(ValueError, match="policy_options"):
            load_spec({**base, **bad})


def test_per_gpu_type_traces_refused_in_a_spec(tmp_path, shared_dir):
    with pytest.raises(ValueError, match="per-GPU-type"):
        load_spec({**small_spec(tmp_path), "traces": str(shared_dir / "sia-traces" / "traces")})


def test_example_study_spec_is_valid(shared_dir):
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "pollux_study.toml"
    if not (example.parent.parent.parent / "shared").is_dir():
        pytest.skip("the example's relative paths need ../shared beside the checkout")
    spec = load_spec(example)
    runs = spec.runs()
    assert len(runs) == 8 * 3
    assert {r.kwargs["policy"] for r in runs} == {"pollux", "tiresias", "optimus"}
    assert all(r.kwargs["preset"] == "osdi21" for r in runs)
