"""``fastsched cost`` and ``fastsched plan`` for a new user (issue 26, items 1 and 8)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from fastsched.cli import EXIT_BROKEN_PIPE, main
from fastsched.costmodel._cli import runnable_microbatches
from fastsched.costmodel._plan_cli import collapse_ties
from fastsched.costmodel.cluster import Cluster
from fastsched.costmodel.search import Transformer, search

MODEL = {"layers": 2, "hidden": 64, "heads": 4, "seq": 16, "vocab": 100, "global_batch": 8}


@pytest.fixture
def pp_case(shared_dir):
    return str(shared_dir / "paddle-cases" / "pp_tfm_L16_S2.json")


@pytest.fixture
def model_file(tmp_path):
    p = tmp_path / "model.json"
    p.write_text(json.dumps(MODEL))
    return str(p)


# -- item 1: interleaved schedules from the command line --------------------------------------
def test_interleaved_with_microbatches_costs_that_count_only(pp_case, capsys):
    argv = ["cost", pp_case, "--schedule", "interleaved", "--virtual-stages", "2", "--microbatches", "8", "--json"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["microbatch_num"] == 8 and list(d["pipeline_time_by_microbatch"]) == ["8"]
    assert d["pipeline"]["schedule"] == "interleaved" and d["skipped_microbatches"] == []


def test_interleaved_skips_the_case_counts_it_cannot_run_with_a_note(pp_case, capsys):
    # the case's list is [1, 4, 16] and its microbatch_num 4: 1 is not a multiple of 2 stages
    assert main(["cost", pp_case, "--schedule", "interleaved", "--virtual-stages", "2", "--json"]) == 0
    cap = capsys.readouterr()
    d = json.loads(cap.out)
    assert sorted(map(int, d["pipeline_time_by_microbatch"])) == [4, 16]
    assert d["skipped_microbatches"] == [1]
    assert "note: skipped" in cap.err and "multiple of the 2 stages" in cap.err


def test_interleaved_with_an_explicit_count_it_cannot_run_is_refused(pp_case, capsys):
    assert main(["cost", pp_case, "--schedule", "interleaved", "--microbatches", "3"]) == 2
    assert "microbatch_num=3 must be a multiple of the 2 stages" in capsys.readouterr().err


def test_runnable_microbatches_splits_by_the_stage_count():
    assert runnable_microbatches([6, 1, 4, 16, 3], "interleaved", 3) == ([3, 6], [1, 4, 16])
    assert runnable_microbatches([2, 1], "zb-h1", 4) == ([1, 2], [])
    assert runnable_microbatches([5], "interleaved", 1) == ([5], [])


# -- item 8: cost readability --------------------------------------------------------------------
def test_timeline_has_a_legend_of_event_kinds(pp_case, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "t.svg"  # matplotlib writes each text of an SVG as a comment too
    assert main(["cost", pp_case, "--schedule", "zb-h1", "--timeline", str(out)]) == 0
    svg = out.read_text()
    for label in ("forward", "backward", "weight gradient", "optimizer"):
        assert f"<!-- {label} -->" in svg, label


def test_timeline_without_a_pipeline_is_refused_and_draws_nothing(shared_dir, tmp_path, capsys):
    out = tmp_path / "t.png"
    assert main(["cost", str(shared_dir / "paddle-cases" / "mlp_L4.json"), "--timeline", str(out)]) == 2
    assert "no pipeline_config" in capsys.readouterr().err
    assert not out.exists()


def test_seed_schedule_is_explained(pp_case, capsys):
    assert main(["cost", pp_case]) == 0
    assert "schedule=seed (the reference's FIFO queue, as Paddle)" in capsys.readouterr().out


def test_cost_options_have_help(capsys):
    with pytest.raises(SystemExit):
        main(["cost", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert re.search(r"--mem-unit \{bytes,elements\}\s+unit of the memory columns", text)


# -- item 8: plan readability ---------------------------------------------------------------------
def test_plan_collapses_configurations_that_tie():
    res = search(Transformer(**MODEL), Cluster(gpus=2, gpus_per_node=2))
    rows = collapse_ties(res, 5)
    assert len(rows) == 5
    keys = [
        tuple(sorted((k, v) for k, v in r.items() if k not in ("ties", "schedule", "zero") and "bytes" not in k))
        for r in rows
    ]
    assert len(set(keys)) == len(keys)  # no configuration printed twice
    assert any(len(r["ties"]) > 1 for r in rows)
    for r in rows:  # the row shown needs the least memory of its group
        assert r["memory_bytes"] == min(t["memory_bytes"] for t in r["ties"])
    # every configuration of the first rows' step times is in exactly one group
    cut = rows[-1]["time_ms"]
    n_faster = sum(1 for i in range(len(res)) if res.row(i)["time_ms"] < cut)
    assert sum(len(r["ties"]) for r in rows if r["time_ms"] < cut) == n_faster


def test_plan_table_explains_columns_and_never_prints_minus_zero(model_file, capsys):
    # on 2 GPUs some bubbles are -1e-17 ms of round-off
    assert main(["plan", model_file, "--gpus", "2", "--top", "1000"]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"(?<![\d.])-0\.0(?!\d)", out)
    for col in ("mb:", "m:", "v:", "sp:"):
        assert f"\n  {col}" in out
    assert any("/" in line for line in out.splitlines()[2:])  # rows standing for tied choices


def test_plan_model_missing_fields_are_named(tmp_path, capsys):
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"layers": 2, "hidden": 64, "heads": 4}))
    assert main(["plan", str(p), "--gpus", "2"]) == 2
    err = capsys.readouterr().err
    assert "missing: seq, vocab, global_batch" in err and "__init__" not in err


def test_plan_json_into_a_closed_pipe_exits_quietly(model_file):
    code = f"from fastsched.cli import main; raise SystemExit(main(['plan', {model_file!r}, '--gpus', '2', '--json']))"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head` that has read enough
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == EXIT_BROKEN_PIPE
    assert err == ""


def test_sweep_without_dask_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"workloads": "builtin", "policy": "tiresias"}))
    assert main(["sweep", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'fastsched[dask]'" in err and "--serial" in err
