"""simulate() on a production log: rigid jobs replayed event by event, as the simulator's result types."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from fastsched.sim import simulate
from fastsched.sim.engine.rigid import run_rigid, speed_ratio
from fastsched.sim.inputs.logs import LogJob, LogJobs, read_log, synthetic_log
from fastsched.sim.log_api import simulate_log
from fastsched.sim.results.result import JobRecord, SimulationResult


def _jobs(types=("", "", "")):
    return LogJobs.from_rows(
        [
            LogJob("a", 0.0, 600.0, 4, 1, types[0], "completed", "", "u", 0.0),
            LogJob("b", 30.0, 60.0, 2, 1, types[1], "failed", "", "u", 0.0),
            LogJob("c", 40.0, 300.0, 8, 2, types[2], "completed", "", "u", 0.0),
        ]
    )


def test_simulate_takes_a_log_file_and_returns_job_records(tmp_path):
    log = synthetic_log(tmp_path / "cluster_log.csv", num_jobs=300, seed=4).path
    result = simulate(str(log), policy="backfill", nodes=8, gpus=8)
    assert isinstance(result, SimulationResult) and all(isinstance(j, JobRecord) for j in result.jobs)
    jobs = read_log(log).jobs
    assert [j.name for j in result.jobs] == jobs.name.tolist()
    ref = run_rigid(jobs.submit, jobs.duration, jobs.gpus, nodes=8, gpus_per_node=8, policy="backfill")
    assert [j.completion_time for j in result.jobs] == ref.finish.tolist()
    s = result.summary()
    assert s["completed"] == len(jobs) and 0 < s["gpu_utilization"] <= 1
    # GPU-seconds held: recorded GPUs x recorded durations, nothing preempted under backfilling
    assert sum(j.attained_service for j in result.jobs) == pytest.approx(float((jobs.gpus * jobs.duration).sum()))


def test_a_workload_csv_is_not_taken_for_a_log(tmp_path):
    from fastsched.sim.log_api import is_log

    p = tmp_path / "w.csv"
    p.write_text("name,time,application,num_replicas,batch_size\nj,0,cifar10,1,128\n")
    assert not is_log(str(p)) and not is_log(str(tmp_path / "missing.csv"))


def test_options_a_log_cannot_use_are_refused():
    with pytest.raises(ValueError, match="gpus: job c needs 8 GPUs"):
        simulate(_jobs(), nodes=1, gpus=4)
    with pytest.raises(ValueError, match="interval: not for a production log"):
        simulate(_jobs(), policy="fifo", nodes=2, gpus=8, interval=30)
    with pytest.raises(ValueError, match="policy: a log replays rigid jobs"):
        simulate(_jobs(), policy="pollux", nodes=2, gpus=8)


def test_the_catalogue_speed_ratio_scales_each_recorded_type():
    jobs = _jobs(("v100", "", "t4"))
    r = simulate_log(jobs, nodes=2, gpus=8, gpu_type="a100-40gb", recorded_type="v100")
    want = [0.0 + 600.0 / speed_ratio("v100", "a100-40gb"), None, None]
    assert r.jobs[0].completion_time == pytest.approx(want[0])
    assert r.run_s[2] == pytest.approx(300.0 / speed_ratio("t4", "a100-40gb"))
    with pytest.raises(ValueError, match="recorded_type"):
        simulate_log(jobs, nodes=2, gpus=8, gpu_type="a100-40gb")


def test_the_summary_counts_waits_and_exact_fairness():
    r = simulate_log(_jobs(), policy="fifo", nodes=1, gpus=8)
    s = r.summary()
    # a (4 GPUs) and b (2) start at once; c (8) waits for both: a ends at 600
    assert r.first_start.tolist() == [0.0, 30.0, 600.0]
    assert s["avg_wait"] == pytest.approx((0 + 0 + 560) / 3)
    assert s["ftf_worst"] == pytest.approx((900 - 40) / 300)
    assert np.isclose(r.gpu_utilization, (4 * 600 + 2 * 60 + 8 * 300) / (900 * 8))


def test_the_per_job_table_of_a_replay_takes_its_starts_and_gpus_and_keeps_fractional_times(tmp_path):
    from fastsched.sim.results.jobs import job_rows, write_jobs

    r = simulate_log(_jobs(), policy="fifo", nodes=2, gpus=4, speed=7.0)  # durations / 7: not whole seconds
    rows = job_rows(r)
    assert r.allocations.size == 0  # no rounds: the table cannot come from allocations
    assert [row["first_start_s"] for row in rows] == r.first_start.tolist()
    assert r.first_start[2] != int(r.first_start[2])  # c waits for a's 600/7 s, a fraction kept
    assert [row["wait_s"] for row in rows] == (r.first_start - np.array([0.0, 30.0, 40.0])).tolist()
    assert [row["final_gpus"] for row in rows] == [4, 2, 8]
    assert {row["category"] for row in rows} == {"rigid"}
    path = tmp_path / "jobs.csv"
    write_jobs(r, path)
    with open(path, newline="") as f:
        back = list(csv.DictReader(f))
    assert [float(b["finish_s"]) for b in back] == [j.completion_time for j in r.jobs]
    pq = pytest.importorskip("pyarrow.parquet", reason="the Parquet table needs pyarrow")
    write_jobs(r, tmp_path / "jobs.parquet")
    table = pq.read_table(tmp_path / "jobs.parquet")
    assert table.column("first_start_s").to_pylist() == r.first_start.tolist()
