"""Issue 39, points 4, 5, 7 and 9: per-job results, provenance, catalogue jobs in one step, --config,
progress lines."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys

import pytest

from fastsched import __version__
from fastsched.cli import main
from fastsched.sim import simulate
from fastsched.sim.results.jobs import job_columns, job_rows

from ._helpers import TINY, tiny_args, write

# Catalogue models (fastsched/catalog/models.py) on catalogue GPU types: no traces needed.
CATALOGUE = "name,time,application,num_replicas,batch_size\nc-0,0,cifar10,2,256\nn-1,60,ncf,1,32768\n" \
            "c-2,120,cifar10,1,128\ng-3,0,gpt-125m,2,256\n"  # fmt: skip
CLUSTER = "4xh100,4xa100-80gb"


def _read_jobs_csv(path):
    lines = open(path).read().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    rows = list(csv.DictReader([line for line in lines if not line.startswith("#")]))
    return comments, rows


# -- catalogue jobs in one step (point 4) -----------------------------------------------------
def test_catalogue_jobs_run_on_the_oracle_with_no_other_flag(tmp_path, capsys):
    w = write(tmp_path, "w.csv", CATALOGUE)
    assert main(["simulate", w, "--cluster", CLUSTER, "--policy", "sia,pollux,gavel", "--workers", "1"]) == 0
    out, err = capsys.readouterr()
    assert sorted(line.split()[0] for line in out.splitlines()[1:]) == ["gavel", "pollux", "sia"]
    assert "run on the cost model's oracle" in err and err.count("oracle") == 1  # one line says so
    r = simulate(w, cluster="1xh100", policy="sia")
    assert r.config["profiles"] == "oracle" and r.completed == 4


def test_a_job_outside_the_catalogue_still_needs_traces(tmp_path, capsys):
    w = write(tmp_path, "w.csv", CATALOGUE + "t-4,0,toy,1,8\n")
    assert main(["simulate", w, "--cluster", CLUSTER, "--policy", "sia", "-q"]) == 2
    assert "--traces DIR" in capsys.readouterr().err


# -- per-job results (point 5) ----------------------------------------------------------------
def test_job_rows_hold_together():
    w = list(csv.DictReader(io.StringIO(CATALOGUE)))
    r = simulate(io_workload(CATALOGUE), cluster="1xh100,1xa100-80gb", policy="sia")
    rows = job_rows(r)
    assert [x["name"] for x in rows] == [x["name"] for x in w]
    types = {"h100", "a100-80gb"}
    assert {c for c in job_columns(r) if c.startswith("gpu_s_")} == {f"gpu_s_{t}" for t in types}
    for x, record in zip(rows, r.jobs, strict=True):
        assert x["submit_s"] <= x["first_start_s"] <= x["finish_s"]
        assert x["jct_s"] == x["finish_s"] - x["submit_s"] == record.jct
        assert x["wait_s"] == x["first_start_s"] - x["submit_s"]
        assert sum(x[f"gpu_s_{t}"] for t in types) == pytest.approx(x["gpu_s"]) and x["gpu_s"] > 0
        assert x["final_gpus"] >= 1 and x["final_gpu_type"] in types and x["final_batch_size"] >= 1
        assert x["restarts"] == record.num_restarts and x["epochs"] == record.epochs


def io_workload(text):
    from fastsched.sim.inputs.workload import WorkloadJob

    return [
        WorkloadJob(r["name"], int(r["time"]), r["application"], int(r["num_replicas"]), int(r["batch_size"]))
        for r in csv.DictReader(io.StringIO(text))
    ]


def test_final_gpus_and_first_start_match_the_allocation_timeline():
    r = simulate(io_workload(TINY), policy="tiresias", nodes=2, gpus=4)
    for j, x in enumerate(job_rows(r)):
        held = r.allocations[:, j] > 0
        assert x["first_start_s"] == int(r.times[held.argmax()])
        assert x["final_gpus"] == int(r.allocations[held.nonzero()[0][-1], j])


def test_jobs_file_csv_with_provenance(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY)
    jobs = tmp_path / "jobs.csv"
    assert main([*tiny_args(w), "--jobs", str(jobs)]) == 0
    comments, rows = _read_jobs_csv(jobs)
    assert [r["name"] for r in rows] == ["ncf-2", "yolov3-8"]
    assert {"submit_s", "first_start_s", "finish_s", "jct_s", "gpu_s", "restarts", "final_gpus"} <= set(rows[0])
    prov = json.loads(comments[-1].split("provenance: ", 1)[1])
    assert prov["versions"]["fastsched"] == __version__ and prov["command"].startswith("fastsched simulate ")
    assert prov["inputs"]["workload"]["sha256"] == hashlib.sha256(open(w, "rb").read()).hexdigest()
    assert main([*tiny_args(w), "--jobs", str(jobs)]) == 2  # an existing file needs --force
    assert "--force" in capsys.readouterr().err


def test_jobs_file_per_policy_in_a_comparison(tmp_path):
    w = write(tmp_path, "w.csv", TINY)
    args = ["simulate", w, "--policy", "fifo,srtf", "--nodes", "2", "--gpus", "4", "--workers", "1", "-q"]
    assert main([*args, "--jobs", str(tmp_path / "jobs.csv")]) == 0
    for p in ("fifo", "srtf"):
        comments, rows = _read_jobs_csv(tmp_path / f"jobs-{p}.csv")
        assert len(rows) == 2 and "fastsched simulate" in comments[-1]


def test_jobs_file_bad_suffix_is_refused_before_the_run(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY)
    assert main([*tiny_args(w), "--jobs", str(tmp_path / "jobs.txt")]) == 2
    assert "--jobs" in capsys.readouterr().err


def test_jobs_parquet_and_frames(tmp_path):
    pd = pytest.importorskip("pandas", reason="DataFrames need the frames extra")
    pq = pytest.importorskip("pyarrow.parquet", reason="Parquet needs the frames extra")
    w = write(tmp_path, "w.csv", TINY)
    assert main([*tiny_args(w), "--jobs", str(tmp_path / "jobs.parquet")]) == 0
    assert main([*tiny_args(w), "--jobs", str(tmp_path / "jobs.csv")]) == 0
    table = pq.read_table(tmp_path / "jobs.parquet")
    prov = json.loads(table.schema.metadata[b"fastsched.provenance"])
    assert prov["versions"]["fastsched"] == __version__
    from_csv = pd.read_csv(tmp_path / "jobs.csv", comment="#")
    assert table.to_pandas()["jct_s"].tolist() == from_csv["jct_s"].tolist()
    r = simulate(w, policy="tiresias", nodes=2, gpus=4)
    frame = r.jobs_frame()
    assert list(frame.columns) == job_columns(r) and frame["jct_s"].tolist() == [j.jct for j in r.jobs]
    assert frame.attrs["provenance"]["inputs"]["workload"]["path"] == w
    summary = r.summary_frame()
    assert summary.loc[0, "avg_jct"] == r.avg_jct and "provenance" not in summary.columns


def test_frames_without_pandas_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed
    r = simulate(io_workload(TINY), policy="tiresias", nodes=2, gpus=4)
    with pytest.raises(ImportError, match=r"fastsched\[frames\]"):
        r.jobs_frame()
    with pytest.raises(ImportError, match=r"fastsched\[frames\]"):
        r.summary_frame()


# -- provenance (point 7) ---------------------------------------------------------------------
def test_summary_and_log_carry_provenance_under_one_key(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY)
    log = tmp_path / "r.jsonl"
    assert main([*tiny_args(w), "--json", "--seed", "3", "--output", str(log)]) == 0
    summary = json.loads(capsys.readouterr().out)
    prov = summary["provenance"]
    assert prov["versions"]["fastsched"] == __version__ and prov["seeds"] == {"seed": 3}
    assert prov["command"] == "fastsched simulate " + " ".join([*tiny_args(w)[1:], "--json", "--seed", "3",
                                                                 "--output", str(log)])  # fmt: skip
    assert json.loads(log.read_text().splitlines()[-1])["summary"]["provenance"]["command"] == prov["command"]
    # the same run from Python: the same summary but for the provenance (and the timings)
    py = simulate(w, policy="tiresias", nodes=2, gpus=4, seed=3).summary()
    assert py["provenance"]["command"] is None and py["provenance"]["call"].startswith("simulate(workload=")
    timing = ("wall_s", "policy_s", "provenance")
    assert {k: v for k, v in py.items() if not k.startswith(timing)} == {
        k: v for k, v in summary.items() if not k.startswith(timing)
    }


def test_the_hash_scripts_drop_the_provenance():
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    try:
        from benchmarks.sim import command_floors
    finally:
        sys.path.pop(0)
    assert "provenance" in command_floors._DROPPED


# -- simulate --config (point 9) --------------------------------------------------------------
def test_config_file_gives_the_flags_and_the_command_line_wins(tmp_path, capsys, monkeypatch):
    write(tmp_path, "w.csv", TINY)
    cfg = tmp_path / "study.toml"
    cfg.write_text('workload = "w.csv"\npolicy = ["fifo", "srtf"]\nnodes = 2\ngpus = 4\nmax-time = "12h"\njson = true\n'
                   "quiet = true\nworkers = 1\n")  # fmt: skip
    monkeypatch.chdir("/")  # paths in the file are relative to the file
    assert main(["simulate", "--config", str(cfg)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [s["policy"] for s in lines] == ["fifo", "srtf"] and {s["max_time"] for s in lines} == {43200}
    assert lines[0]["provenance"]["inputs"]["config"]["sha256"] == hashlib.sha256(cfg.read_bytes()).hexdigest()
    assert main(["simulate", "--config", str(cfg), "--policy", "las", "--max-time", "1d"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["policy"] == "las" and json.loads(line)["max_time"] == 86400
    js = tmp_path / "study.json"
    js.write_text(json.dumps({"workload": "w.csv", "policy": "srtf", "nodes": 2, "json": True, "quiet": True}))
    assert main(["simulate", "--config", str(js)]) == 0
    assert json.loads(capsys.readouterr().out)["policy"] == "srtf"


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("node = 2\n", "unknown key 'node' (did you mean 'nodes'?)"),
        ('nodes = "two"\n', "nodes: --nodes takes an integer"),
        ("json = 1\n", "json: --json is a switch"),
        ('preset = "siaa"\n', "invalid choice 'siaa' (did you mean 'sia'?)"),
        ('max-time = "soon"\n', "max-time: expected a duration"),
    ],
)
def test_config_file_refusals_name_the_file_and_the_key(tmp_path, capsys, text, what):
    cfg = tmp_path / "c.toml"
    cfg.write_text(text)
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--config", str(cfg)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and str(cfg) in err and what in err, err


# -- progress off a terminal (point 9) --------------------------------------------------------
def test_progress_lines_when_stderr_is_not_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FASTSCHED_PROGRESS_SECONDS", "0")  # a line per round, for the test
    w = write(tmp_path, "w.csv", TINY)
    assert main(["simulate", w, "--policy", "tiresias", "--nodes", "2", "--gpus", "4"]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "jobs done" in x]
    assert lines and all(x.startswith("fastsched simulate: ") and "\r" not in x for x in lines)
    assert lines[-1].startswith("fastsched simulate: 2/2 jobs done")
    assert main(["simulate", w, "--policy", "fifo,srtf", "--nodes", "2", "--gpus", "4", "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "fastsched simulate: fifo: " in err and "fastsched simulate: srtf: " in err  # per run
    assert main([*tiny_args(w)]) == 0 and "jobs done" not in capsys.readouterr().err  # -q: none


# -- point 8: profiles as applications; profile's training length -----------------------------
def test_load_applications_reads_the_folder_profile_wrote(tmp_path):
    from fastsched.sim import HeteroApplication, load_applications

    profiles = tmp_path / "profiles"
    assert main(["profile", "cifar10", "--gpu", "t4,h100", "--output", str(profiles), "-q"]) == 0
    apps = load_applications(profiles)
    assert list(apps) == ["cifar10"] and isinstance(apps["cifar10"], HeteroApplication)
    jobs = io_workload("name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\nb,60,cifar10,2,256\n")
    by_apps = simulate(jobs, applications=apps, cluster="1xt4,1xh100", policy="sia")
    by_traces = simulate(jobs, traces=profiles, cluster="1xt4,1xh100", policy="sia")
    assert by_apps.completed == 2 and by_apps.avg_jct == by_traces.avg_jct


def test_profile_says_how_long_a_job_trains(tmp_path, capsys):
    assert main(["profile", "cifar10", "--gpu", "t4", "--output", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "a job trains 5,000,000 samples (100 epochs of 50,000)" in out and "warning" not in err
    row = out.splitlines()[-1].split()
    rate, gpu_hours = float(row[-2]), float(row[-1].replace(",", ""))
    assert gpu_hours == pytest.approx(5_000_000 / rate / 3600, abs=0.05)  # printed to 0.1 h
    assert main(["profile", "gpt-2.7b", "--gpu", "h100", "--output", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "warning: a gpt-2.7b job trains for about" in err and "GPU-hours" in err


# -- point 3: comparison plots with many policies ----------------------------------------------
def test_fourteen_policies_look_different():
    from fastsched.sim.policies import POLICY_NAMES
    from fastsched.sim.results.compare import series_styles

    styles = series_styles(len(POLICY_NAMES))
    assert len(POLICY_NAMES) == 14 and len(set(styles)) == 14
    assert len({c for c, _ in styles}) == 14 and len({m for _, m in styles}) >= 10


def test_comparison_figure_legend_outside_and_a_panel_per_type():
    pytest.importorskip("matplotlib", reason="plots need the plot extra")
    from fastsched.sim.results.compare import comparison_figure

    jobs = io_workload(CATALOGUE)
    results = [simulate(jobs, cluster="1xh100,1xa100-80gb", policy=p) for p in ("fifo", "srtf", "las")]
    fig = comparison_figure(results)
    titles = [ax.get_title() for ax in fig.axes]
    assert any(t.startswith("h100:") for t in titles) and any(t.startswith("a100-80gb:") for t in titles)
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1  # one legend, beside
    drawn = {
        (line.get_color(), line.get_marker()) for line in fig.axes[0].get_lines() if line.get_label() != "cluster GPUs"
    }
    assert len(drawn) == 3
