"""Issue 39, point 9: ``fastsched workload`` writes seeded workloads (Poisson arrivals of a mix, LLM jobs)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from fastsched.cli import main
from fastsched.sim.inputs.generate import mix_rate, poisson_workload, read_mix
from fastsched.sim.inputs.workload import read_workload

SHARED = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared"))
SATURN = SHARED / "sia-traces" / "workloads" / "saturn"


def test_same_seed_same_workload_other_seed_other_arrivals(tmp_path, capsys):
    out = tmp_path / "w.csv"
    assert main(["workload", str(out), "--seeds", "3", "--seed", "5"]) == 0
    files = [tmp_path / f"w-s{s}.csv" for s in (5, 6, 7)]
    assert all(f.is_file() for f in files) and not out.exists()
    assert len(capsys.readouterr().out.splitlines()) == 3
    again = tmp_path / "again.csv"
    assert main(["workload", str(again), "--seed", "6"]) == 0
    assert again.read_bytes() == files[1].read_bytes()  # seed 6 alone == the second of the three
    times = [[j.time for j in read_workload(f)] for f in files]
    assert times[0] != times[1] != times[2]


def test_arrivals_are_poisson_at_the_rate_asked():
    # 20 seeds x 50 h at 12 jobs/hour: the count per hour has mean 12 and variance 12 (Poisson), and
    # the gaps are exponential (coefficient of variation 1); bounds at > 5 standard errors
    counts, gaps = [], []
    for seed in range(20):
        t = np.array([j.time for j in poisson_workload(jobs_per_hour=12.0, hours=50.0, seed=seed)])
        counts += list(np.bincount((t // 3600).astype(int), minlength=50)[:50])
        gaps += list(np.diff(t))
    counts, gaps = np.array(counts, float), np.array(gaps, float)
    assert abs(counts.mean() - 12.0) < 0.6
    assert 9.0 < counts.var() < 15.5
    assert abs(gaps.std() / gaps.mean() - 1.0) < 0.1


def test_the_mix_is_resampled_in_its_proportions():
    mix = [j for jobs in read_mix("builtin") for j in jobs]
    drawn = [j for s in range(10) for j in poisson_workload(num_jobs=400, seed=s)]
    want, got = Counter(j.application for j in mix), Counter(j.application for j in drawn)
    for app, n in want.items():
        assert abs(got[app] / len(drawn) - n / len(mix)) < 0.03, app
    kinds = {(j.application, j.num_replicas, j.batch_size) for j in mix}
    assert {(j.application, j.num_replicas, j.batch_size) for j in drawn} <= kinds


@pytest.mark.skipif(not SATURN.is_dir(), reason="needs ../shared/sia-traces")
def test_sias_job_mix_from_its_workloads(tmp_path):
    rate, hours = mix_rate(read_mix(SATURN))
    assert 15 < rate < 25 and 7 < hours <= 8  # 160 jobs over 8 h per file
    out = tmp_path / "sia.csv"
    assert main(["workload", str(out), "--mix", str(SATURN), "--seed", "1"]) == 0
    jobs = read_workload(out)
    source = {(j.application, j.num_replicas, j.batch_size) for f in SATURN.glob("*.csv") for j in read_workload(f)}
    assert {(j.application, j.num_replicas, j.batch_size) for j in jobs} <= source
    assert 100 < len(jobs) < 220


def test_llm_workloads(tmp_path):
    out = tmp_path / "llm.csv"
    assert main(["workload", str(out), "--llm", "--num-jobs", "12", "--seed", "2"]) == 0
    jobs = read_workload(out)
    assert len(jobs) == 12 and all(j.application.startswith("gpt-") for j in jobs)
    assert {j.category for j in jobs} <= {"adaptive", "scale-gpus"}


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--llm", "--mix", "builtin"], "--llm"),
        (["--hours", "2", "--num-jobs", "3"], "--hours"),
        (["--seeds", "0"], "--seeds"),
        (["--max-gpus", "4"], "--max-gpus"),
        (["--llm", "--max-gpus", "0"], "--max-gpus"),
        (["--mix", "nowhere"], "nowhere"),
        (["--jobs-per-hour", "-1"], "--jobs-per-hour must be"),
    ],
)
def test_bad_requests_are_one_line(tmp_path, capsys, argv, flag):
    assert main(["workload", str(tmp_path / "w.csv"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_needs_force(tmp_path, capsys):
    out = tmp_path / "w.csv"
    out.write_text("mine")
    assert main(["workload", str(out)]) == 2
    assert out.read_text() == "mine" and "--force" in capsys.readouterr().err
    assert main(["workload", str(out), "--force"]) == 0 and out.read_text() != "mine"
