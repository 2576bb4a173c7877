"""Sia's scaling study: k-fold workloads and clusters, modelled-throughput accounting."""

from __future__ import annotations

import pytest

from fastsched.sim import WorkloadJob, simulate
from fastsched.sim.engine.job import Job
from fastsched.sim.inputs.scale import scale_cluster, scale_workload
from fastsched.sim.inputs.workload import write_workload
from tests.sim.engine.test_job import ConstApp


def _rows(tag, times):
    return [WorkloadJob(f"{tag}{i}", t, "const", 1, 4) for i, t in enumerate(times)]


def test_scale_workload_merges_in_turn_with_unique_names(tmp_path):
    a, b = _rows("a", [0, 50, 100]), _rows("b", [10, 50])
    write_workload(b, tmp_path / "workload-2.csv")
    write_workload(a, tmp_path / "workload-1.csv")
    merged = scale_workload(tmp_path, 3)  # a folder: its CSVs in natural order, cycled
    assert len(merged) == 2 * len(a) + len(b)
    assert len({w.name for w in merged}) == len(merged)
    assert [w.time for w in merged] == sorted(w.time for w in merged)
    assert sorted(w.name for w in merged if w.name.endswith("-x1")) == ["b0-x1", "b1-x1"]
    # ties at t=50: copy order, then row order
    assert [w.name for w in merged if w.time == 50] == ["a1-x0", "b1-x1", "a1-x2"]
    assert scale_workload(a, 1) == a
    with pytest.raises(ValueError, match="k"):
        scale_workload(a, 0)
    with pytest.raises(TypeError, match="k"):
        scale_workload(a, 2.0)


def test_scale_cluster_multiplies_every_group():
    spec = scale_cluster("6xaws,3xrtx,2xdgx-ext", 16)
    assert spec.total_gpus == 16 * 64 and spec.gpus_by_type == {"aws": 384, "rtx": 384, "dgx-ext": 256}


def test_cli_scale_flag(tmp_path, capsys):
    from fastsched.cli import main

    path = tmp_path / "w.csv"
    write_workload([WorkloadJob("j", 0, "ncf", 1, 256)], path)
    assert main(["simulate", str(path), "--policy", "tiresias", "--nodes", "1", "--gpus", "1", "--scale", "3",
                 "--json", "-q"]) == 0  # fmt: skip
    import json

    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["jobs"] == 3 and s["completed"] == 3 and s["nodes"] == 3


class _HalfModelled(ConstApp):
    """ConstApp whose two-GPU placements are 'modelled'."""

    def is_modelled(self, placement, local_bsz):
        return sum(placement) == 2


def test_modelled_gpu_seconds_count_training_on_modelled_points():
    job = Job("j", _HalfModelled(), 0, target_batch_size=8)
    job.reallocate([1])
    job.step(60)
    assert job.modelled_service == 0 and job.attained_service == 60
    job.reallocate([2])
    job.step(60)  # 30 s restart delay (not training), then 30 s on 2 GPUs on modelled points
    assert job.modelled_service == 60 and job.attained_service == 180
    r = simulate([WorkloadJob("a", 0, "const", 2, 8)], applications={"const": _HalfModelled()},
                 policy="tiresias", nodes=1, gpus=2)  # fmt: skip
    rec = r.jobs[0]
    assert 0 < rec.modelled_gpu_seconds < rec.attained_service
    assert r.summary()["modelled_share"] == pytest.approx(rec.modelled_gpu_seconds / rec.attained_service)
