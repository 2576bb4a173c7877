"""Workload rows are checked against each application's measured range, per policy, before any round."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastsched.cli import main
from fastsched.sim import api, simulate
from fastsched.sim.inputs.preflight import check_jobs, check_traces_dir
from fastsched.sim.inputs.workload import WorkloadJob
from fastsched.sim.policies.names import POLICY_NAMES
from fastsched.sim.truth.builtin import builtin_applications

from ._helpers import HEADER, write
from ._helpers import record_and_stop as _record_and_stop


@pytest.fixture
def no_rounds(monkeypatch):
    ran = []
    monkeypatch.setattr(api.Cluster, "step", _record_and_stop(ran))
    return ran


# Every built-in policy that runs a job at its workload row's batch size (all but the two that
# choose batch sizes themselves).
FIXED_BATCH = [n for n in POLICY_NAMES if n not in ("pollux", "sia")]


@pytest.mark.parametrize("policy", FIXED_BATCH)
@pytest.mark.parametrize("batch", [1, 10**6])
def test_batch_outside_range_fails_naming_the_job(tmp_path, capsys, no_rounds, policy, batch):
    w = write(tmp_path, "w.csv", HEADER + f"ok,0,cifar10,2,256\nbad-job,60,cifar10,2,{batch}\n")
    assert main(["simulate", w, "--policy", policy, "-q"]) == 2
    err = capsys.readouterr().err
    assert "'bad-job'" in err and "[128, 4096]" in err and "w.csv" in err
    assert no_rounds == []


def test_pollux_ignores_the_row_sizes(no_rounds):
    jobs = [WorkloadJob("a", 0, "cifar10", 2, 1)]
    with pytest.raises(RuntimeError, match="first round"):  # got as far as the first round: accepted
        simulate(jobs, policy="pollux", max_time=60)


def test_tiresias_per_gpu_batch_and_replica_limits():
    apps = builtin_applications()
    with pytest.raises(ValueError, match="per GPU"):  # 128 over 8 GPUs = 16 < 32 per GPU
        check_jobs([WorkloadJob("a", 0, "cifar10", 8, 128)], apps, "tiresias", 64)
    with pytest.raises(ValueError, match="limit of 1"):
        check_jobs([WorkloadJob("a", 0, "ncf", 2, 32768)], apps, "tiresias", 64)
    with pytest.raises(ValueError, match="more GPUs than the cluster"):
        check_jobs([WorkloadJob("a", 0, "cifar10", 16, 4096)], apps, "tiresias", 8)
    with pytest.raises(ValueError, match=r"and 1 more"):
        check_jobs([WorkloadJob(n, 0, "cifar10", 1, 1) for n in "ab"], apps, "optimus", 8)
    with pytest.raises(ValueError, match="unknown application"):
        check_jobs([WorkloadJob("a", 0, "gpt", 1, 1)], apps, "pollux", 8)


@given(
    app=st.sampled_from(["cifar10", "bert", "yolov3", "imagenet", "deepspeech2"]),
    replicas=st.integers(1, 8),
    batch=st.integers(1, 20000),
)
def test_accepted_rows_run_under_tiresias_on_the_published_traces(shared_dir, app, replicas, batch):
    """Whatever the check accepts runs without a range error (the traces raise on unmeasured points)."""
    apps = _published(shared_dir)
    job = WorkloadJob("j", 0, app, replicas, batch)
    try:
        check_jobs([job], apps, "tiresias", 16)
    except ValueError:
        return
    simulate([job], applications=apps, policy="tiresias", nodes=4, gpus=4, max_time=1800)


_APPS = {}


def _published(shared_dir):
    if not _APPS:
        from fastsched.sim.truth.traces import load_applications

        _APPS.update(load_applications(shared_dir / "pollux-traces" / "traces"))
    return _APPS


def test_per_gpu_type_traces_are_refused(tmp_path, capsys, shared_dir):
    assert main(["simulate", "--traces", str(shared_dir / "sia-traces" / "traces"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "per-GPU-type" in err and "rtx" in err
    check_traces_dir(shared_dir / "pollux-traces" / "traces")  # the homogeneous layout is fine


def test_traces_file_is_refused(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("")
    with pytest.raises(ValueError, match="is a file"):
        check_traces_dir(f)


def test_per_gpu_type_traces_warn_in_the_api(shared_dir):
    from fastsched.sim.inputs.preflight import check_run

    with pytest.warns(UserWarning, match="per-GPU-type"):
        check_run(traces=shared_dir / "sia-traces" / "traces")


def _typed_traces(tmp_path):
    folder = tmp_path / "traces"
    (folder / "bert").mkdir(parents=True)
    for name in ("placements.csv", "placements-aws.csv", "placements-rtx.csv"):
        (folder / "bert" / name).write_text("")
    return folder


def test_typed_traces_accepted_with_a_preset_that_names_a_cluster(tmp_path):
    import argparse

    from fastsched.sim import _cli

    folder = _typed_traces(tmp_path)
    base = dict(workload=None, traces=str(folder), output=None, plot=None, force=False)
    # --preset sia brings its own typed cluster, so the per-type layout is what it needs
    _cli._check_paths(argparse.Namespace(cluster=None, preset="sia", **base))
    _cli._check_paths(argparse.Namespace(cluster="2xaws", preset=None, **base))
    # no cluster at all (a one-type preset or none): refused, naming the types found
    for preset in (None, "osdi21"):
        with pytest.raises(ValueError, match="aws, rtx"):
            _cli._check_paths(argparse.Namespace(cluster=None, preset=preset, **base))
