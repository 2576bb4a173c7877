"""OracleApplication, the profile writer and ``fastsched profile``."""

import csv

import numpy as np
import pytest

from fastsched.catalog import model_spec, step_time
from fastsched.cli import main
from fastsched.sim.engine.hetero_job import HeteroApplication, load_hetero_applications
from fastsched.sim.truth.oracle import (
    OracleApplication,
    calibrate_floors_from_traces,
    calibrate_from_traces,
    oracle_applications,
    write_profile,
)
from fastsched.sim.truth.per_type import fixed_batch_throughput
from fastsched.sim.truth.traces import Application, TraceApplication


def test_oracle_application_answers_the_interface():
    app = OracleApplication("imagenet", "v100", efficiency=0.5)
    assert isinstance(app, Application)
    assert app.throughput([0, 4, 0], 64) == tuple(step_time("imagenet", "v100", (4,), 64, efficiency=0.5))
    assert app.progress(0) == 0 and app.progress(2) == pytest.approx(2 * 1_281_167 / 200)
    # Statistical efficiency: no gain at the initial batch, more gain at larger batches, bounded
    # by 1 + noise scale / initial batch (the gradient-noise model).
    sqr, var = app.grad_stats(200, 10)
    gains = [(var + sqr) / (var / (b / 200) + sqr) for b in (200, 800, 12800)]
    assert gains[0] == 1.0 and gains[0] < gains[1] < gains[2] < 1 + app.noise_scale(10) / 200
    assert app.iteration(400, 0) == np.ceil(1_281_167 / 400)
    with pytest.raises(ValueError, match="noise_scale"):
        OracleApplication("yolov3", "t4", noise_scale=(1, -2))
    huge = model_spec("yolov3")._replace(memory_bytes=64e9)
    with pytest.raises(ValueError, match="does not fit one t4"):
        OracleApplication(huge, "t4")


def test_llm_jobs_are_fixed_batch():
    app = OracleApplication("gpt-1.3b", "h100")
    assert app.fixed_batch_size == app.init_batch_size == 512
    assert OracleApplication("gpt-1.3b", "h100", fixed_batch=False).fixed_batch_size is None


def test_profile_round_trips_through_the_trace_reader(tmp_path):
    write_profile("cifar10", ["t4", "h100"], tmp_path, efficiencies={"aws": 0.6})
    apps = load_hetero_applications(tmp_path, ["aws", "h100"])
    h = apps["cifar10"]
    assert isinstance(h, HeteroApplication) and h.types == ("aws", "h100")
    oracle_t4 = OracleApplication("cifar10", "t4", efficiency=0.6)
    trace = TraceApplication(tmp_path / "cifar10", gpu_type="aws")
    with open(tmp_path / "cifar10" / "placements-aws.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["placement"] for r in rows} >= {"1", "4", "44", "4444"}
    for r in rows[::7]:
        p = tuple(int(c) for c in r["placement"])
        b = int(r["local_bsz"])
        assert trace.throughput(p, b) == pytest.approx(oracle_t4.throughput(p, b), rel=1e-12)
    assert trace.init_batch_size == 128 and trace.max_batch_size == 4096
    assert trace.grad_stats(128, 5) == pytest.approx(oracle_t4.grad_stats(128, 5))
    assert calibrate_from_traces(tmp_path / "cifar10", ["t4"])["aws"] == pytest.approx(0.6, rel=1e-3)


def test_oracle_applications_for_a_typed_cluster():
    apps = oracle_applications(["bert"], ["aws", "h100"], efficiencies={"aws": 0.7})
    assert apps["bert"].apps["aws"].efficiency == 0.7
    assert apps["bert"].throughput_ratio("h100", "aws") > 5


def test_profile_command(tmp_path, capsys):
    assert main(["profile", "ncf", "--gpu", "t4,b200", "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "b200" in out and (tmp_path / "ncf" / "placements-b200.csv").is_file()
    assert main(["profile", "ncf", "--gpu", "h800", "--output", str(tmp_path)]) == 2
    assert "unknown GPU type 'h800'" in capsys.readouterr().err
    assert main(["profile", "ncf", "--gpu", "t4", "--output", str(tmp_path), "--efficiency", "2"]) == 2
    assert "--efficiency" in capsys.readouterr().err
    assert main(["profile", "ncf", "--gpu", "t4", "--output", str(tmp_path), "--noise-scale", "5,-1"]) == 2
    assert "noise_scale" in capsys.readouterr().err
    argv = ["profile", "bert", "--gpu", "t4", "--output", str(tmp_path), "--noise-scale", "100,400", "--batch", "fixed"]
    assert main(argv + ["-q"]) == 0
    with open(tmp_path / "bert" / "validation-12.csv") as f:
        rows = list(csv.DictReader(f))
    assert float(rows[0]["grad_var"]) == pytest.approx(100 / 12)
    assert sorted(p.name for p in (tmp_path / "bert").glob("validation-*.csv")) == ["validation-12.csv"]


def test_calibrate_option_fits_measured_rows(tmp_path, capsys):
    measured = tmp_path / "measured"
    write_profile("cifar10", ["rtx2080ti"], measured, efficiencies={"rtx": 0.45})
    out = tmp_path / "out"
    argv = ["profile", "imagenet", "--gpu", "rtx", "--output", str(out), "--calibrate", str(measured / "cifar10")]
    assert main(argv) == 0
    assert "0.450 (fit)" in capsys.readouterr().out
    assert TraceApplication(out / "imagenet", gpu_type="rtx").throughput((2,), 20) == pytest.approx(
        OracleApplication("imagenet", "rtx", efficiency=0.45).throughput((2,), 20), rel=1e-3
    )


def test_profile_of_a_model_too_large_for_one_gpu(tmp_path):
    from fastsched.catalog import with_types

    catalog = with_types({"small": {"base": "l4", "memory_gib": 4.0, "gpus_per_node": 4}})
    files = write_profile("gpt-350m", ["small"], tmp_path, catalog=catalog)
    with open(tmp_path / "gpt-350m" / "placements-small.csv") as f:
        placements = {r["placement"] for r in csv.DictReader(f)}
    assert "1" not in placements and placements  # one GPU holds no plan; larger placements do
    assert len([f for f in files if f.name.startswith("validation-")]) == 1  # fixed batch: one validation file
    trace = TraceApplication(tmp_path / "gpt-350m", gpu_type="small")
    assert trace.fixed_batch_size is None and trace.init_batch_size == 256
    assert trace.min_replicas == OracleApplication("gpt-350m", "small", catalog=catalog).min_replicas > 1


def test_llm_workload_distributions():
    from fastsched.catalog.models import DECODER_BATCH
    from fastsched.sim.inputs.llm_workload import llm_workload

    jobs = llm_workload(400, jobs_per_hour=30, seed=7)
    assert jobs == llm_workload(400, jobs_per_hour=30, seed=7) and jobs != llm_workload(400, jobs_per_hour=30, seed=8)
    gaps = np.diff([0] + [j.time for j in jobs])
    assert abs(gaps.mean() / 120.0 - 1) < 0.15  # Poisson arrivals at 30 per hour
    for j in jobs:
        m = model_spec(j.application)
        assert j.num_replicas & (j.num_replicas - 1) == 0 and j.num_replicas <= 64
        assert j.num_replicas * 80 * 2**30 >= 16 * m.parameters * 1.25 or j.num_replicas == 64
        assert j.batch_size == DECODER_BATCH[j.application]
    small = sum(j.application == "gpt-125m" for j in jobs) / len(jobs)
    assert 0.2 < small < 0.4  # default weight 0.3
    assert all(j.time <= 3600 for j in llm_workload(hours=1.0, seed=2))
    with pytest.raises(ValueError, match="not a catalogued decoder"):
        llm_workload(3, mix={"bert": 1.0})
    with pytest.raises(ValueError, match="jobs_per_hour"):
        llm_workload(3, jobs_per_hour=0)


def test_llm_jobs_run_end_to_end_on_oracle_applications():
    from fastsched.sim import simulate
    from fastsched.sim.inputs.llm_workload import llm_workload

    mix = {"gpt-125m": 0.6, "gpt-350m": 0.4}
    jobs = llm_workload(4, mix=mix, jobs_per_hour=30, max_gpus=8, seed=3)
    # Short runs: a budget of 2e8 tokens (100 "epochs" of 1e3 sequences of 2048 tokens).
    models = [model_spec(n)._replace(samples_per_epoch=1000) for n in mix]
    apps = oracle_applications(models, ["h100", "a100-80gb"])
    result = simulate(jobs, applications=apps, cluster="1xh100,1xa100-80gb", policy="sia")
    assert result.summary()["completed"] == 4


def test_placements_too_small_for_the_model_are_priced_time_sliced():
    app = OracleApplication("gpt-6.7b", "h100")
    with pytest.raises(ValueError, match="fits no configuration"):
        step_time("gpt-6.7b", "h100", (1,), 4)
    one, _ = app.throughput((1,), 4)
    fits = next(k for k in (2, 4, 8) if _fits(k))
    real, _ = app.throughput((fits,), 4 / fits)
    assert one == pytest.approx(real * fits)  # no better per GPU than the smallest placement that fits


def test_a_placement_too_small_for_the_model_is_priced_at_every_per_gpu_batch():
    # At one sequence per GPU the smallest plan that holds the model shares that sequence over
    # its GPUs (tensor/pipeline parallel), so the time-sliced price exists there too.
    app = OracleApplication("gpt-6.7b", "h100")
    assert app.min_local_bsz == 1 and app.min_replicas == 2
    one, sync = app.throughput((1,), 1)
    two, _ = app.throughput((2,), 0.5)
    assert np.isfinite(one) and sync == 0.0 and one == pytest.approx(2 * two)
    assert one / 1 >= app.throughput((2,), 1)[0] / 2  # no faster per sample and GPU than a real plan
    assert fixed_batch_throughput(app, (1,), 1) == pytest.approx(1 / one)
    with pytest.raises(ValueError, match="total batch"):
        step_time("gpt-6.7b", "h100", (2,), 0.2)  # less than one sequence on the placement
    with pytest.raises(ValueError, match="local_bsz"):
        step_time("cifar10", "h100", (2,), 0.5)  # data parallel: each GPU needs a sample


def _fits(k):
    try:
        step_time("gpt-6.7b", "h100", (k,), 4 / k)
    except ValueError:
        return False
    return True


def test_calibration_reads_only_the_calibration_application(tmp_path, monkeypatch):
    import builtins

    write_profile("cifar10", ["t4", "v100"], tmp_path, efficiencies={"aws": 0.3, "azure": 0.8})
    write_profile("bert", ["t4"], tmp_path, efficiencies={"aws": 3.0})  # a held-out app beside it
    opened = []
    real_open = builtins.open

    def spy(path, *a, **k):
        opened.append(str(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", spy)
    effs = calibrate_from_traces(tmp_path / "cifar10", ["aws", "azure", "rtx"])
    monkeypatch.undo()
    assert effs == pytest.approx({"aws": 0.3, "azure": 0.8}, rel=1e-3)  # rtx: no file, not calibrated
    assert opened and all(str(tmp_path / "cifar10") in p for p in opened)


def test_overlap_reaches_the_applications_and_the_profiles(tmp_path):
    after_backward = oracle_applications(["bert"], ["v100"], overlap=0.0)["bert"]
    ddp = oracle_applications(["bert"], ["v100"])["bert"]  # the default: DDP's bucketed overlap
    (s0, y0), (s1, y1) = after_backward.apps["v100"].throughput((8,), 8), ddp.apps["v100"].throughput((8,), 8)
    assert y1 < y0 and s1 < s0
    write_profile("bert", ["v100"], tmp_path, overlap=0.0)
    trace = TraceApplication(tmp_path / "bert", gpu_type="azure")
    b = trace.min_local_bsz
    assert trace.throughput((8,), b) == pytest.approx(
        OracleApplication("bert", "v100", overlap=0.0).throughput((8,), b)
    )


def test_floors_reach_the_applications_and_the_profiles_and_are_fitted_back(tmp_path):
    plain = oracle_applications(["ncf"], ["v100"])["ncf"].apps["v100"]
    slow = oracle_applications(["ncf"], ["v100"], floors={"azure": 0.09})["ncf"].apps["v100"]  # by trace name
    assert slow.throughput((1,), 64)[0] > 0.09 > plain.throughput((1,), 64)[0]
    write_profile("cifar10", ["t4", "v100"], tmp_path, efficiencies={"aws": 0.5, "azure": 0.5}, floors={"v100": 0.07})
    trace = TraceApplication(tmp_path / "cifar10", gpu_type="azure")
    b = trace.min_local_bsz
    assert trace.throughput((1,), b) == pytest.approx(
        OracleApplication("cifar10", "v100", efficiency=0.5, floor=0.07).throughput((1,), b)
    )
    c = calibrate_floors_from_traces(tmp_path / "cifar10", ["t4", "v100", "rtx2080ti"])  # rtx: no file
    assert set(c.floors) == {"aws", "azure"}
    assert c.efficiencies["aws"] == c.efficiencies["azure"] == pytest.approx(0.5, rel=2e-3)
    assert c.floors["azure"] == pytest.approx(0.07, rel=1e-2) and c.floors["aws"] < 2e-3


def test_profile_follows_the_output_policy(tmp_path):
    # A second profile into the same folder refuses without --force and leaves the first whole;
    # the calibration traces are an input and are never written over, even with --force.
    from fastsched.cli import main

    argv = ["profile", "ncf", "--gpu", "t4", "--output", str(tmp_path), "-q"]
    assert main(argv) == 0
    first = (tmp_path / "ncf" / "placements-aws.csv").read_bytes()
    with pytest.raises(ValueError, match="already exists; use --force"):
        write_profile("ncf", ["t4"], tmp_path)
    assert main(argv) == 2
    assert (tmp_path / "ncf" / "placements-aws.csv").read_bytes() == first
    assert main([*argv, "--force", "--efficiency", "0.5"]) == 0
    assert (tmp_path / "ncf" / "placements-aws.csv").read_bytes() != first
    calib = tmp_path / "ncf"
    with pytest.raises(ValueError, match="input"):
        write_profile("ncf", ["t4"], tmp_path, force=True, inputs=[calib])
    assert main([*argv, "--force", "--calibrate", str(calib)]) == 2
    assert sorted(p.name for p in calib.iterdir() if not p.name.endswith(".csv")) == []


def test_the_profile_command_loads_neither_numba_nor_the_simulator(tmp_path):
    # Issue 23's speed floor (12 types <= 2 s): the command's work is numpy; a process that
    # imported numba and the simulator spent most of its time on that.
    import subprocess
    import sys

    code = (
        "import sys; from fastsched.cli import main; "
        "main(['profile', 'cifar10', '--gpu', 't4,h100', '--output', sys.argv[1], '-q']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'scipy') "
        "or m.startswith(('fastsched.sim.truth.oracle', 'fastsched.sim.engine.hetero_job', 'fastsched.goodput.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert (tmp_path / "cifar10" / "placements-h100.csv").is_file()
