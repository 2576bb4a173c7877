"""Each metric against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fastsched.sim.results.metrics import (
    METRIC_KEYS,
    compute_metrics,
    contention_stats,
    finish_time_fairness,
    jct_stats,
    job_contention,
)
from fastsched.sim.results.result import JobRecord, SimulationResult


def _result():
    # Three jobs on 4 GPUs over 4 rounds of 60 s. c never finishes.
    jobs = [
        JobRecord("a", "x", 0, 100, 2, 400.0, 1, {"fast": 300.0, "slow": 100.0}),
        JobRecord("b", "x", 60, 240, 0, 360.0, 1, {"slow": 360.0}),
        JobRecord("c", "x", 120, None, 1, 0.0, 0, None),
    ]
    return SimulationResult(
        jobs=jobs,
        policy="t",
        config={"interval": 60},
        times=np.array([60, 120, 180, 240]),
        used_gpus=np.array([4, 2, 2, 2]),
        total_gpus=np.array([4, 4, 4, 4]),
        active_jobs=np.array([2, 3, 2, 1]),
        allocations=np.array([[4, 0, 0], [0, 2, 0], [0, 2, 0], [0, 2, 0]], dtype=np.int16),
    )


def test_jct_and_makespan():
    m = compute_metrics(_result())
    assert m["avg_jct"] == 140.0  # (100 + 180) / 2
    assert m["p50_jct"] == 140.0
    assert m["p99_jct"] == pytest.approx(100 + 0.99 * 80)
    assert m["makespan"] == 240.0  # last completion 240 - first submission 0


def test_gpu_hours_and_restarts():
    m = compute_metrics(_result())
    assert m["gpu_hours_per_job"] == pytest.approx(760 / 3600 / 3)
    assert m["gpu_hours_by_type"] == pytest.approx({"fast": 300 / 3600 / 3, "slow": 460 / 3600 / 3})
    assert m["restarts_per_job"] == 1.0


def test_contention():
    m = compute_metrics(_result())
    assert (m["contention_mean"], m["contention_max"]) == (2.0, 3.0)
    assert all(math.isnan(x) for x in contention_stats([]))


def test_finish_time_fairness_by_hand():
    # a: rounds 60 (N=2) -> N = 2, share min(4/2, held 4) = 2: 100 * 2 / 400 = 0.5.
    # b: rounds 60..240 -> N = (2+3+2+1)/4 = 2, share min(2, held 2) = 2: 180 * 2 / 360 = 1.0.
    n = job_contention([60, 120, 180, 240], [2, 3, 2, 1], [0, 60], [100, 240])
    assert n.tolist() == [2.0, 2.0]
    ftf = finish_time_fairness([100, 180], [400, 360], n, 4, held_gpus=[4, 2])
    assert ftf.tolist() == [0.5, 1.0]
    m = compute_metrics(_result())
    assert m["ftf_worst"] == 1.0 and m["ftf_unfair_fraction"] == 0.0
    assert np.isinf(finish_time_fairness([10], [0], [1], 4)[0])
    # held below the share: a job that held 1 GPU for half its 200 s JCT (100 GPU-s) waited half: 2.
    assert finish_time_fairness([200], [100], [1], 4, held_gpus=[1]).tolist() == [2.0]


def test_keys_and_empty():
    assert set(METRIC_KEYS) <= set(compute_metrics(_result()))
    assert math.isnan(jct_stats([])["avg_jct"])
