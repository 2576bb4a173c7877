"""Issue 39 on sweeps: the default output folder beside the spec, seconds named in the tables,
provenance in the folder, ``--plot``."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fastsched.cli import main
from fastsched.sweep.store import load_done
from tests.sweep._helpers import write_workloads

ROOT = Path(__file__).resolve().parents[2]


def _spec(folder: Path, **extra) -> Path:
    a, _ = write_workloads(folder)
    spec = {"workloads": [Path(a).name], "policy": ["tiresias", "fifo"], "seeds": 2, "nodes": 2, "gpus": 4}
    spec.update(extra)
    path = folder / "study.json"
    path.write_text(json.dumps(spec))
    return path


def test_default_output_is_beside_the_spec_not_the_current_folder(tmp_path, monkeypatch, capsys):
    specs = tmp_path / "specs"
    specs.mkdir()
    spec = _spec(specs)
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["sweep", str(spec), "--serial", "-q"]) == 0
    assert list(here.iterdir()) == []  # nothing written into the current folder
    assert (specs / "study-sweep" / "summary.csv").is_file()
    assert "tables in " + str(specs / "study-sweep") in capsys.readouterr().err


def test_the_readme_sweep_folder_is_ignored_by_git():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    proc = subprocess.run(
        ["git", "check-ignore", "-q", "examples/quick_sweep-sweep/runs.csv"], cwd=ROOT, capture_output=True
    )
    assert proc.returncode == 0, "examples/quick_sweep-sweep/ would show as untracked"


def test_tables_name_their_seconds(tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--serial", "-q", "--output", str(out)]) == 0
    with open(out / "runs.csv") as f:
        runs = list(csv.DictReader(f))
    with open(out / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    for header in (runs[0], summary[0], json.loads((out / "runs.json").read_text())[0]):
        # no duration without its unit: seconds say _s, hours say hours
        assert not {"avg_jct", "p50_jct", "p99_jct", "makespan", "avg_jct_mean"} & set(header)
    assert {"avg_jct_s", "p50_jct_s", "p99_jct_s", "makespan_s", "wall_s", "gpu_hours_per_job"} <= set(runs[0])
    assert {"avg_jct_s_mean", "avg_jct_s_std", "makespan_s_mean"} <= set(summary[0])
    assert all(float(r["avg_jct_s"]) > 0 for r in runs)


def test_rows_logged_under_the_old_names_resume_with_the_new(tmp_path):
    (tmp_path / "runs.jsonl").write_text(json.dumps({"run_id": "a", "avg_jct": 5.0, "error": None}) + "\n")
    assert load_done(tmp_path)["a"]["avg_jct_s"] == 5.0


def test_sweep_folder_carries_provenance(tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--serial", "-q", "--output", str(out)]) == 0
    rec = json.loads((out / "provenance.json").read_text())
    from fastsched import __version__

    assert rec["versions"]["fastsched"] == __version__
    assert rec["command"].startswith("fastsched sweep ") and str(spec) in rec["command"]
    with open(out / "runs.csv") as f:
        seeds = {r["run_id"]: int(r["seed"]) for r in csv.DictReader(f)}
    assert rec["seeds"]["runs"] == seeds and len(seeds) == 4
    assert rec["inputs"]["spec"]["sha256"] == hashlib.sha256(spec.read_bytes()).hexdigest()
    workload = tmp_path / json.loads(spec.read_text())["workloads"][0]
    assert rec["inputs"]["workloads"][0]["sha256"] == hashlib.sha256(workload.read_bytes()).hexdigest()


def test_sweep_plot(tmp_path):
    pytest.importorskip("matplotlib", reason="--plot needs the plot extra")
    spec = _spec(tmp_path)
    png = tmp_path / "sweep.png"
    assert main(["sweep", str(spec), "--serial", "-q", "--output", str(tmp_path / "out"), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_plot_path_is_checked_before_any_run(tmp_path, capsys):
    spec = _spec(tmp_path)
    assert main(["sweep", str(spec), "--serial", "-q", "--output", str(tmp_path / "out"), "--plot", "x.nope"]) == 2
    assert "--plot" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_plot_labels_name_what_differs():
    from fastsched.sweep.plot import config_labels
    from fastsched.sweep.table import SweepResult, summarize

    rows = [
        {"workload": f"/x/{w}.csv", "policy": p, "nodes": 2, "avg_jct_s": 1.0}
        for w in ("a", "b")
        for p in ("fifo", "sia")
    ]
    cols = ["workload", "policy", "nodes"]
    labels = config_labels(SweepResult(rows, summarize(rows, cols), columns=cols))
    assert labels == ["workload=a.csv, policy=fifo", "workload=a.csv, policy=sia", "workload=b.csv, policy=fifo",
                      "workload=b.csv, policy=sia"]  # fmt: skip
