"""The hints adapter (AdaptDL allocator's _get_job_info) on plain dicts."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fastsched.goodput import SpeedupFunction
from fastsched.policy import get_job_info
from fastsched.policy.hints import _get_job_info, get_pod_requests, linear_speedup

PERF = dict(
    alpha_c=0.121,
    beta_c=0.00568,
    alpha_n=0.0236,
    beta_n=0.00634,
    alpha_r=0.0118,
    beta_r=0.00317,
    gamma=1.14,
)


def job(spec=None, train=None, containers=None):
    containers = containers or [
        {"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": 1}}}
    ]
    return {
        "metadata": {"creationTimestamp": "2021-03-04T05:06:07Z"},
        "spec": {"template": {"spec": {"containers": containers}}, **(spec or {})},
        "status": {"train": train} if train is not None else {},
    }


def test_defaults_linear_speedup():
    info = get_job_info(job())
    assert info.resources == {"pods": 1, "cpu": 500, "memory": 1024**3, "nvidia.com/gpu": 1}
    assert info.max_replicas == 1 and info.min_replicas == 0 and info.preemptible
    assert info.speedup_fn is linear_speedup
    assert info.creation_timestamp == datetime(2021, 3, 4, 5, 6, 7, tzinfo=timezone.utc)
    assert _get_job_info is get_job_info


def test_max_replicas_rules():
    train = {"maxProfiledReplicas": 4, "perfParams": PERF, "initBatchSize": 128}
    assert get_job_info(job(train=train)).max_replicas == 8
    assert get_job_info(job({"maxReplicas": 3}, train)).max_replicas == 3
    assert get_job_info(job({"maxReplicas": 3, "minReplicas": 5}, train)).max_replicas == 5
    # max_batch_size / replicas must stay >= the smallest local batch size.
    t2 = dict(train, maxBatchSize=256, localBszBounds=[64, 256])
    info = get_job_info(job(train=t2))
    assert info.max_replicas == 4
    assert isinstance(info.speedup_fn, SpeedupFunction) and info.speedup_fn.is_tabulated


def test_hints_build_speedup_function():
    train = {
        "perfParams": PERF,
        "initBatchSize": 128,
        "maxBatchSize": 1280,
        "localBszBounds": [64, 256],
        "gradParams": {"norm": 0.00136, "var": 0.000502},
        "gradientAccumulation": True,
        "maxProfiledReplicas": 2,
    }
    info = get_job_info(job(train=train))
    assert info.speedup_fn(1, 1) == pytest.approx(1.0)
    assert info.speedup_fn(1, 2) > 1.0


def test_non_preemptible_gets_linear():
    train = {"perfParams": PERF, "initBatchSize": 128}
    info = get_job_info(job({"preemptible": False}, train))
    assert info.speedup_fn is linear_speedup and not info.preemptible


def test_pod_requests_units():
    c = [{"resources": {"requests": {"cpu": "2", "memory": "1.5G"}}}, {"resources": {"limits": {"x/y": "2k"}}}]
    assert get_pod_requests({"containers": c}) == {"pods": 1, "cpu": 2000, "memory": 1500000000, "x/y": 2000}


def test_bad_timestamp():
    j = job()
    j["metadata"]["creationTimestamp"] = "yesterday"
    with pytest.raises(ValueError, match="creationTimestamp"):
        get_job_info(j)
