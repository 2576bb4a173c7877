"""Issue 39, point 6: the round log (``output=``) shows every job's completion, on every preset.

The log's last record of a job must carry its completion time (``None`` only for a job that did
not finish), so JCTs computed from the log equal the summary's. Under ``--preset sia`` on the
Sia study's philly workload 1, a job that ended exactly at a round's end was found complete only
in the next round, and the log dropped it there (159 completions of 160). The test checks its
case still holds such a completion.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from fastsched.sim import simulate
from fastsched.sim.inputs.workload import read_workload
from fastsched.sim.presets import PRESETS
from fastsched.sim.truth.builtin import builtin_workload


def _last_records(text: str):
    last, summary = {}, None
    for line in text.splitlines():
        record = json.loads(line)
        if "summary" in record:
            summary = record["summary"]
            continue
        for job in record["jobs"]:
            last[job["name"]] = job
    return last, summary


def _case(preset, shared):
    if preset == "default":
        return {"workload": builtin_workload()[:8]}
    if preset.startswith("osdi21"):
        p = shared / "pollux-traces"
        return {"workload": read_workload(p / "workloads" / "workload-6.csv")[:16], "traces": p / "traces"}
    s = shared / "sia-traces"
    if preset == "sia":  # the reproducer of the issue: the whole workload
        return {"workload": s / "workloads" / "philly" / "workload-1.csv", "traces": s / "traces"}
    return {"workload": read_workload(s / "workloads" / "philly" / "workload-1.csv")[:40], "traces": s / "traces"}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_round_log_holds_every_completion(preset, request):
    shared = None if preset == "default" else request.getfixturevalue("shared_dir")
    log = io.StringIO()
    result = simulate(preset=preset, output=log, **_case(preset, shared))
    last, summary = _last_records(log.getvalue())
    assert summary["completed"] == result.completed and summary["jobs"] == len(result.jobs)
    assert set(last) == {j.name for j in result.jobs if j.submission_time <= int(result.times[-1])}
    for job in result.jobs:
        if job.name in last:
            assert last[job.name]["completion_time"] == job.completion_time, job.name
    if preset == "sia":  # the case still holds a completion at a round's end, before the last round
        ends = [j.completion_time for j in result.jobs if j.completion_time is not None]
        assert np.isin(ends, result.times[:-1]).any(), "no job ends exactly at a round's end: pick another case"
    assert sum(j["completion_time"] is not None for j in last.values()) == summary["completed"]
    jcts = sorted(
        j["completion_time"] - j["submission_time"] for j in last.values() if j["completion_time"] is not None
    )
    assert jcts == sorted(result.jcts.tolist())


def test_a_completion_is_shown_once():
    # one record with the completion, none after it (the log does not grow a line per job per round)
    log = io.StringIO()
    result = simulate(builtin_workload()[:6], policy="tiresias", nodes=4, gpus=4, output=log)
    shown = {}
    for line in log.getvalue().splitlines()[:-1]:
        for job in json.loads(line)["jobs"]:
            if job["completion_time"] is not None:
                shown[job["name"]] = shown.get(job["name"], 0) + 1
    assert shown == {j.name: 1 for j in result.jobs}
