"""A new study of 2026: a model of one's own through plan, profile and simulate; oracle jobs on
clusters named by catalogue aliases; scaled studies whose records say what was scaled.

Found by using the command line and the library from the documentation alone (sixth round).
"""

from __future__ import annotations

import json

import pytest

from fastsched.cli import main
from fastsched.sim import WorkloadJob, simulate

MODEL = {"layers": 2, "hidden": 64, "heads": 4, "seq": 16, "vocab": 100, "global_batch": 8}


# -- one model file for plan and profile --------------------------------------------------------
@pytest.mark.parametrize("extra", [{"name": "mine"}, {"tokens": 1e6}, {"fixed_batch": False}])
def test_plan_reads_the_model_file_profile_reads(tmp_path, capsys, extra):
    # profile's model file (plan's format plus a name, token budget or batch rule) plans too
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**MODEL, **extra}))
    assert main(["plan", str(path), "--gpus", "4", "--gpu", "h100", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows, "no configuration ranked"


def test_plan_still_refuses_a_field_neither_command_knows(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**MODEL, "bogus": 1}))
    assert main(["plan", str(path), "--gpus", "4"]) == 2
    assert "bogus" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["garbage{", "\udcff"])
def test_plan_names_the_model_file_it_cannot_read(tmp_path, capsys, text):
    path = tmp_path / "m.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert main(["plan", str(path), "--gpus", "4"]) == 2
    err = capsys.readouterr().err
    assert "m.json" in err and "Traceback" not in err


# -- oracle applications on a cluster named by catalogue aliases --------------------------------
def test_oracle_applications_by_catalogue_names_run_on_the_cluster_of_those_names():
    from fastsched.sim.inputs.cluster_spec import parse_cluster
    from fastsched.sim.truth.oracle import oracle_applications

    cluster = "1xt4,1xRTX2080Ti,1xa100-40gb"  # the Sia study's cluster by catalogue names
    apps = oracle_applications(["gpt-125m"], ["t4", "rtx2080ti", "a100-40gb"])
    assert parse_cluster(cluster).types == ("aws", "rtx", "dgx-ext")
    jobs = [WorkloadJob("g", 0, "gpt-125m", 1, 256)]
    result = simulate(jobs, applications=apps, cluster=cluster, policy="fifo", max_time=600)
    assert result.config["gpus_by_type"] == {"aws": 4, "rtx": 8, "dgx-ext": 8}
    assert sum(result.used_gpus) > 0
    assert apps["gpt-125m"].types == ("t4", "rtx2080ti", "a100-40gb")  # the caller's object is left as it was


def test_a_type_the_application_lacks_under_any_name_is_still_refused():
    from fastsched.sim.truth.oracle import oracle_applications

    apps = oracle_applications(["gpt-125m"], ["t4", "h100"])
    with pytest.raises(ValueError, match=r"no profile of GPU type\(s\) \['rtx'\]"):
        simulate([WorkloadJob("g", 0, "gpt-125m", 1, 256)], applications=apps, cluster="1xt4,1xrtx", policy="fifo")


def test_one_type_under_two_names_with_two_models_is_refused():
    # "t4" and "aws" are one type: two different models for it would leave one silently unused.
    from fastsched.sim.truth.oracle import oracle_applications
    from fastsched.sim.truth.per_type import HeteroApplication

    one = oracle_applications(["gpt-125m", "gpt-350m"], ["t4", "rtx2080ti"])
    twice = HeteroApplication(
        {
            "t4": one["gpt-125m"].apps["t4"],
            "aws": one["gpt-350m"].apps["t4"],
            "rtx2080ti": one["gpt-125m"].apps["rtx2080ti"],
        }
    )
    with pytest.raises(ValueError, match=r"'t4' and 'aws' are one type \('aws'\) with two different models"):
        simulate(
            [WorkloadJob("g", 0, "gpt-125m", 1, 256)],
            applications={"gpt-125m": twice},
            cluster="1xt4,1xrtx",
            policy="fifo",
        )
    same = HeteroApplication(
        {
            "t4": one["gpt-125m"].apps["t4"],
            "aws": one["gpt-125m"].apps["t4"],
            "rtx2080ti": one["gpt-125m"].apps["rtx2080ti"],
        }
    )
    result = simulate(
        [WorkloadJob("g", 0, "gpt-125m", 1, 256)],
        applications={"gpt-125m": same},
        cluster="1xt4,1xrtx",
        policy="fifo",
        max_time=600,
    )
    assert sum(result.used_gpus) > 0


@pytest.mark.parametrize(
    ("models", "types", "error", "field"),
    [
        ("gpt-125m", ["h100"], TypeError, "models"),
        (["gpt-125m"], "h100", TypeError, "gpu_types"),
        (["gpt-125m"], [], ValueError, "gpu_types"),
    ],
)
def test_oracle_applications_name_a_bad_argument(models, types, error, field):
    from fastsched.sim.truth.oracle import oracle_applications

    with pytest.raises(error, match=field):
        oracle_applications(models, types)


# -- a scaled study says what was scaled ---------------------------------------------------------
@pytest.fixture
def two_jobs(tmp_path):
    from fastsched.sim import write_workload

    path = tmp_path / "two.csv"
    write_workload([WorkloadJob("a", 0, "ncf", 1, 32768), WorkloadJob("b", 20, "cifar10", 2, 1024)], path)
    return path


def test_a_scaled_run_records_its_workload_and_scale(two_jobs, tmp_path, capsys):
    log = tmp_path / "rounds.jsonl"
    argv = ["simulate", str(two_jobs), "--nodes", "1", "--gpus", "4", "--policy", "fifo", "--scale", "3"]
    assert main([*argv, "--json", "-q", "--output", str(log)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["workload"], summary["scale"], summary["jobs"], summary["nodes"]) == (str(two_jobs), 3, 6, 3)
    logged = json.loads(log.read_text().splitlines()[-1])["summary"]
    assert (logged["workload"], logged["scale"]) == (str(two_jobs), 3)
    assert main([*argv, "-q"]) == 0
    rows = [line.split(None, 1) for line in capsys.readouterr().out.splitlines()]
    assert dict(r for r in rows if len(r) == 2)["scale"].startswith("x3 ")


def test_simulate_scales_a_study_from_python(two_jobs):
    from fastsched.sim.inputs.scale import scale_workload

    scaled = simulate(two_jobs, scale=2, nodes=1, gpus=4, policy="fifo")
    by_hand = simulate(scale_workload(two_jobs, 2), nodes=2, gpus=4, policy="fifo")
    assert [j.jct for j in scaled.jobs] == [j.jct for j in by_hand.jobs]
    assert (scaled.config["scale"], scaled.config["workload"], scaled.config["nodes"]) == (2, str(two_jobs), 2)
    assert "scale" not in simulate(two_jobs, nodes=1, gpus=4, policy="fifo").summary()  # unscaled runs as before
    with pytest.raises(ValueError, match="scale"):
        simulate(two_jobs, scale=0, nodes=1, gpus=4, policy="fifo")


# -- a GPU type of one's own added to a measured application -------------------------------------
TYPES = '[gpu_types.my-gpu]\nbase = "a100-80gb"\nbf16_tflops = 400.0\ngpus_per_node = 4\n'


@pytest.fixture
def measured(tmp_path, shared_dir):
    """A copy of the measured cifar10 traces (T4 and 2080 Ti only) and a GPU-types file."""
    import shutil

    src = shared_dir / "sia-traces" / "traces" / "cifar10"
    app = tmp_path / "traces" / "cifar10"
    app.mkdir(parents=True)
    for f in src.iterdir():
        if f.name.startswith("validation-") or f.name.endswith(("-aws.csv", "-rtx.csv")):
            shutil.copyfile(f, app / f.name)
    (tmp_path / "types.toml").write_text(TYPES)
    return tmp_path


def test_profile_adds_a_gpu_type_to_measured_traces_and_keeps_their_statistics(measured, capsys):
    traces, app = measured / "traces", measured / "traces" / "cifar10"
    stats = {f.name: f.read_bytes() for f in app.glob("validation-*.csv")}
    argv = [
        "profile",
        "cifar10",
        "--gpu",
        "my-gpu",
        "--gpu-types",
        str(measured / "types.toml"),
        "--output",
        str(traces),
    ]
    assert main(argv) == 2  # as before: the measured statistics are not replaced unasked
    err = capsys.readouterr().err
    assert "--types-only" in err and "Traceback" not in err
    assert main([*argv, "--types-only", "-q"]) == 0
    assert {f.name: f.read_bytes() for f in app.glob("validation-*.csv")} == stats
    assert (app / "placements-my-gpu.csv").is_file() and (app / "scalability-my-gpu.csv").is_file()
    cluster = measured / "cluster.toml"
    cluster.write_text(TYPES + '\n[[group]]\ntype = "aws"\ncount = 1\n\n[[group]]\ntype = "my-gpu"\ncount = 1\n')
    workload = measured / "w.csv"
    workload.write_text("name,time,application,num_replicas,batch_size\nc,0,cifar10,1,128\n")
    run = ["simulate", str(workload), "--traces", str(traces), "--cluster", str(cluster), "--policy", "gavel"]
    assert main([*run, "--json", "-q"]) == 0
    assert json.loads(capsys.readouterr().out)["completed"] == 1


def test_types_only_needs_statistics_to_keep(tmp_path, capsys):
    assert main(["profile", "cifar10", "--gpu", "h100", "--output", str(tmp_path), "--types-only", "-q"]) == 2
    err = capsys.readouterr().err
    assert "validation" in err and not (tmp_path / "cifar10" / "placements-h100.csv").exists()


# -- comparing runs ------------------------------------------------------------------------------
def test_the_comparison_plot_draws_the_cluster_for_the_longest_run(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from fastsched.sim._compare import plot_comparison, run_policies

    jobs = [
        WorkloadJob("a", 0, "cifar10", 4, 512),
        WorkloadJob("b", 0, "ncf", 1, 32768),
        WorkloadJob("c", 0, "cifar10", 2, 256),
    ]
    results = run_policies(["pollux", "fifo"], workers=1, workload=jobs, nodes=1, gpus=4)
    ends = [float(r.times[-1]) / 3600 for r in results]
    assert ends[0] < ends[1], "the first run must end first for this test to mean anything"
    saved = []
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: saved.append(self))
    plot_comparison(results, tmp_path / "c.png")
    (cluster,) = [line for line in saved[0].axes[0].get_lines() if line.get_label() == "cluster GPUs"]
    assert max(cluster.get_xdata()) == pytest.approx(max(ends))


# -- an application measured on some of the cluster's types only ---------------------------------
def test_an_application_without_one_types_traces_is_refused_naming_the_types_it_has(shared_dir, tmp_path, capsys):
    # gpt_pmp was measured on the 2080 Ti and A100 only, not the T4 of the Sia cluster
    workload = tmp_path / "w.csv"
    workload.write_text("name,time,application,num_replicas,batch_size\ng,0,gpt_pmp,4,96\n")
    traces = shared_dir / "sia-traces" / "traces"
    assert main(["simulate", str(workload), "--traces", str(traces), "--preset", "sia", "-q"]) == 2
    err = capsys.readouterr().err
    assert "'aws'" in err and "['dgx-ext', 'rtx']" in err and "Traceback" not in err


# -- a generated workload saved for the record ---------------------------------------------------
def test_a_written_workload_reads_back_with_its_job_categories(tmp_path):
    from fastsched.sim import read_workload, write_workload
    from fastsched.sim.inputs.llm_workload import llm_workload

    jobs = llm_workload(12, seed=2)
    assert {j.category for j in jobs} == {"adaptive", "scale-gpus"}
    write_workload(jobs, tmp_path / "llm.csv")
    assert read_workload(tmp_path / "llm.csv") == jobs
    mixed = [jobs[0], WorkloadJob("plain", 5, "gpt-125m", 1, 256)]  # no category: the simulator's default
    write_workload(mixed, tmp_path / "mixed.csv")
    assert read_workload(tmp_path / "mixed.csv") == mixed
    write_workload([mixed[1]], tmp_path / "plain.csv")  # no categories at all: the five columns, as before
    assert (tmp_path / "plain.csv").read_text().splitlines()[0] == "name,time,application,num_replicas,batch_size"


# -- an oracle application's own settings --------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"efficiency": 0}, "efficiency"), ({"overlap": -1}, "overlap"), ({"overlap": 2}, "overlap"),
     ({"floor": -0.1}, "floor")],
)  # fmt: skip
@pytest.mark.parametrize("model", ["gpt-125m", "cifar10"])
def test_an_oracle_application_names_a_bad_setting_when_made(model, kwargs, field):
    from fastsched.sim.truth.oracle import OracleApplication

    with pytest.raises(ValueError, match=field):
        OracleApplication(model, "h100", **kwargs)


@pytest.mark.parametrize("what", ["efficiencies", "floors"])
def test_oracle_applications_refuse_per_type_settings_that_are_not_a_mapping(what):
    from fastsched.sim.truth.oracle import oracle_applications

    with pytest.raises(TypeError, match=what):
        oracle_applications(["gpt-125m"], ["h100"], **{what: [0.5]})
