"""Sweep grids over clusters and policies carry the field's metrics."""

from __future__ import annotations

import csv

import pytest

from fastsched.sim.inputs.workload import write_workload
from fastsched.sweep import run_serial
from fastsched.sweep.spec import load_spec
from tests.sim.two_types import toy_workload


def test_grid_over_cluster_and_policy(two_type_traces, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("sweep")  # outputs never inside the traces folder (an input)
    wl = tmp_path / "w.csv"
    write_workload(toy_workload(n=3), wl)
    spec = {
        "workloads": str(wl),
        "traces": str(two_type_traces),
        "cluster": ["1xslow:2,1xfast:2", "2xslow:2"],
        "policy": ["sia", "gavel"],
    }
    out = tmp_path / "out"
    res = run_serial(spec, output_dir=out)
    assert len(res.rows) == 4 and not any(r["error"] for r in res.rows)
    with open(out / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert {(s["cluster"], s["policy"]) for s in summary} == {(c, p) for c in spec["cluster"] for p in spec["policy"]}
    for key in ("ftf_worst_mean", "contention_max_mean", "gpu_hours_per_job_mean", "p50_jct_mean"):
        assert all(float(s[key]) >= 0 for s in summary)


def test_bad_cluster_in_spec(tmp_path):
    with pytest.raises(ValueError, match=r"cluster.*unknown GPU type 'zz100'"):
        load_spec({"workloads": "builtin", "cluster": ["2xzz100"]})
