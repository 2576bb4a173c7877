"""A simulation in which no job completes reports its JCT figures as ``None``, not NaN."""

from __future__ import annotations

import json

from fastsched.sim import WorkloadJob, simulate


def test_no_completed_job_gives_none_and_says_so():
    r = simulate([WorkloadJob("a", 0, "cifar10", 1, 128)], policy="fifo", nodes=1, gpus=1, max_time=120)
    assert r.completed == 0
    assert r.avg_jct is None and r.p99_jct is None and r.makespan is None
    s = r.summary()
    jct = {k: s[k] for k in ("avg_jct", "p50_jct", "p99_jct", "makespan")}
    assert jct == dict.fromkeys(jct)
    json.dumps(jct, allow_nan=False)  # valid JSON: null, never NaN
    assert "average JCT           - (no job completed)" in r.table()
    assert "avg_jct=None" in repr(r)


def test_completed_jobs_keep_their_figures():
    r = simulate([WorkloadJob("a", 0, "cifar10", 1, 128)], policy="fifo", nodes=1, gpus=1)
    assert r.completed == 1 and r.avg_jct == r.summary()["avg_jct"] > 0
