"""Workloads from a log, the Pollux/Sia way: the rule's parts and the published configurations."""

from __future__ import annotations

import csv
from collections import defaultdict

import numpy as np
import pytest

from fastsched.sim.inputs.logs import LogJob, LogJobs, LogRead
from fastsched.sim.log_workload import (
    GPU_TIME_BINS,
    POLLUX_COUNTS,
    SIA_COUNTS,
    application_configurations,
    workload_from_log,
)

H = 3600.0


def _log(rows):
    """rows: (submit, duration, gpus)."""
    return LogJobs.from_rows(
        LogJob(f"j{k}", s, d, g, 1, "", "completed", "", "u", 0.0) for k, (s, d, g) in enumerate(rows)
    )


def _random_log(n=3000, days=3, seed=0):
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.uniform(0, days * 86400, n))
    dur = np.exp(rng.normal(7.5, 2.0, n))
    gpus = rng.choice([1, 2, 4, 8, 16], n)
    return _log(zip(submit.tolist(), dur.tolist(), gpus.tolist(), strict=True))


def test_each_job_gets_an_application_of_its_gpu_time_bin():
    log = _random_log()
    by_id = {j.name: j for j in log}
    for rule in ("pollux", "sia", "sia-philly"):
        w = workload_from_log(log, num_jobs=300, rule=rule, seed=3)
        bins = GPU_TIME_BINS["pollux" if rule == "pollux" else "sia"]
        for job, log_id in zip(w.jobs, w.log_ids, strict=True):
            src = by_id[log_id]
            gpu_time = src.gpus * src.duration
            bound, apps = next((b, a) for b, a in bins if gpu_time < b)
            assert job.application in apps
            assert src.duration >= 60 and gpu_time < 1000 * H


def test_names_times_and_seed():
    log = _random_log()
    a = workload_from_log(log, num_jobs=200, seed=1)
    assert a == workload_from_log(log, num_jobs=200, seed=1)
    assert a.jobs != workload_from_log(log, num_jobs=200, seed=2).jobs
    times = [j.time for j in a.jobs]
    assert times == sorted(times) and 0 <= times[0] and times[-1] < 8 * H
    assert [j.name for j in a.jobs] == [f"{j.application}-{k}" for k, j in enumerate(a.jobs)]
    assert len(set(a.log_ids)) == 200


def test_daily_window_pools_the_hours_of_every_day_absolute_does_not():
    # one job per hour for three days; each runs 10 minutes on one GPU
    log = _log([(h * H + 60, 600.0, 1) for h in range(72)])
    daily = workload_from_log(log, num_jobs=24, window=(2 * H, 10 * H), rule="pollux")
    assert daily.eligible == 24  # hours 2..9 of each of the 3 days
    assert sorted({j.time for j in daily.jobs}) == [h * 3600 + 60 for h in range(8)]
    absolute = workload_from_log(log, num_jobs=8, window=(2 * H, 10 * H), rule="sia")
    assert absolute.eligible == 8
    ids = sorted(int(i[1:]) for i in absolute.log_ids)
    assert ids == list(range(2, 10))
    # a LogRead's origin sets the clock: the same jobs, submitted from 05:00, shift by five hours
    r = LogRead(log, {}, "helios", 5 * H, len(log), ())
    shifted = workload_from_log(r, num_jobs=24, window=(2 * H, 10 * H))
    assert sorted({j.time for j in shifted.jobs}) == [h * 3600 + 60 for h in range(8)]
    assert {int(i[1:]) % 24 for i in shifted.log_ids} == set(range(21, 24)) | set(range(0, 5))


def test_rate_sizes_from_the_log_and_errors():
    log = _random_log()
    assert len(workload_from_log(log, rate=20, window=(0, 4 * H)).jobs) == 80
    w = workload_from_log(log, num_jobs=50, sizes="log")
    by_id = {j.name: j for j in log}
    assert [j.num_replicas for j in w.jobs] == [by_id[i].gpus for i in w.log_ids]
    with pytest.raises(ValueError, match="give one of num_jobs and rate"):
        workload_from_log(log, num_jobs=5, rate=2)
    with pytest.raises(ValueError, match="eligible jobs"):
        workload_from_log(log, num_jobs=10**6)
    with pytest.raises(ValueError, match="rule must be one of"):
        workload_from_log(log, num_jobs=5, rule="gavel")
    with pytest.raises(ValueError, match="within one day"):
        workload_from_log(log, num_jobs=5, window=(0, 2 * 86400))
    with pytest.raises(ValueError, match=r"applications: the pollux bins need \['bert', 'deepspeech2'"):
        from fastsched.sim.truth.builtin import builtin_applications

        apps = builtin_applications()
        workload_from_log(log, num_jobs=5, applications={k: apps[k] for k in ("cifar10", "ncf")})
    with pytest.raises(TypeError, match="log must be a LogRead, LogJobs or a log file path"):
        workload_from_log([1, 2], num_jobs=5)


def _observed(files):
    seen = defaultdict(set)
    for f in files:
        with open(f, newline="") as fh:
            for r in csv.DictReader(fh):
                seen[r["application"]].add((int(r["num_replicas"]), int(r["batch_size"])))
    return seen


@pytest.mark.shared
def test_pollux_configurations_are_those_of_the_published_workloads(shared_dir):
    """On the Pollux traces, the rule gives exactly the (GPUs, batch) pairs the 8 published
    workloads hold, for every application (1,280 jobs)."""
    from fastsched.sim.truth.traces import load_applications

    root = shared_dir / "pollux-traces"
    apps = load_applications(root / "traces")
    seen = _observed(sorted((root / "workloads").glob("workload-*.csv")))
    for name, app in apps.items():
        got = {(r, b) for r, b, _ in application_configurations(app, gpus_per_node=4, counts=POLLUX_COUNTS)}
        assert got == seen[name], name


@pytest.mark.shared
def test_sia_resampled_imagenet_jobs_are_the_8_gpu_node_configurations(shared_dir):
    """Sia's philly set redrew the requests above 16 GPUs (imagenet's) on 8-GPU nodes."""
    from fastsched.sim.truth.traces import PUBLISHED_OVERRIDES, TraceApplication

    app = TraceApplication(
        shared_dir / "sia-traces" / "traces" / "imagenet", "imagenet", gpu_type="rtx", **PUBLISHED_OVERRIDES["imagenet"]
    )
    got = {(r, b) for r, b, _ in application_configurations(app, gpus_per_node=8, counts=SIA_COUNTS, max_gpus=16)}
    seen = _observed(sorted((shared_dir / "sia-traces" / "workloads" / "philly").glob("workload-*.csv")))
    assert got == {c for c in seen["imagenet"] if c[0] <= 16}
