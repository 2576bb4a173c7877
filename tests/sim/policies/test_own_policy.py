"""Issue 24.2: a policy of one's own, from Python, from the command line and as a plugin."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.cli import main
from fastsched.sim import WorkloadJob, simulate, write_workload
from fastsched.sim.engine.job import Job
from fastsched.sim.policies import SimPolicy, load_policy, make_policy, pack, registry
from fastsched.sim.truth.builtin import builtin_applications

FIFO = textwrap.dedent(
    """
    from fastsched.sim.policies import SimPolicy, free_gpus, pack

    class Fifo(SimPolicy):
        name = "my-fifo"

        def optimize(self, now, jobs, nodes, allocations):
            free = free_gpus(nodes, allocations)
            out = dict(allocations)
            for job in sorted(self.views(jobs), key=lambda v: (v.submission_time, v.num_restarts)):
                if job.name not in out:
                    alloc = pack(job.requested_gpus, free)
                    if alloc is None:
                        break
                    out[job.name] = alloc
            return out
    """
)

ROWS = [  # short jobs (ncf, at most 1 GPU, trains in minutes) and one of several GPUs
    WorkloadJob("a", 0, "ncf", 1, 32768),
    WorkloadJob("b", 20, "cifar10", 6, 1024),
    WorkloadJob("c", 40, "ncf", 1, 32768),
    WorkloadJob("d", 60, "cifar10", 3, 512),
]


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """A module ``myfifo`` outside the package, importable from the current folder only."""
    (tmp_path / "myfifo.py").write_text(FIFO)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield tmp_path
    sys.modules.pop("myfifo", None)


def _figures(summary):
    return {k: summary[k] for k in ("policy", "completed", "avg_jct", "p99_jct", "makespan", "restarts")}


def test_plugin_on_the_command_line_matches_simulate(plugin_dir, capsys):
    write_workload(ROWS, plugin_dir / "w.csv")
    args = ["simulate", "w.csv", "--policy", "myfifo:Fifo", "--nodes", "2", "--gpus", "4", "--json", "-q"]
    assert main(args) == 0
    cli = json.loads(capsys.readouterr().out)
    import myfifo  # importable now: the command put the current folder on the path, as documented

    direct = simulate(ROWS, policy=myfifo.Fifo(), nodes=2, gpus=4).summary()
    assert _figures(cli) == _figures(direct)
    assert cli["completed"] == len(ROWS) and cli["policy"] == "my-fifo"


def test_fifo_on_adaptive_jobs_reads_the_requested_gpus(plugin_dir):
    # The two traps of the issue: the default job_kwargs passes no GPU count (target_num_replicas
    # stays None), and a job's num_restarts is None until it first runs.
    sys.path.insert(0, str(plugin_dir))
    import myfifo

    result = simulate(ROWS, policy=myfifo.Fifo(), nodes=2, gpus=4)
    held = result.allocations.max(axis=0).tolist()
    assert held == [r.num_replicas for r in ROWS]


def test_view_knows_the_request_when_job_kwargs_is_overridden_without_super():
    class Rigid(SimPolicy):
        def job_kwargs(self, wjob, app):
            return {"target_batch_size": wjob.batch_size}  # no target_num_replicas, no super()

    app = builtin_applications()["cifar10"]
    pol = Rigid()
    job = Job("a", app, 5, **pol.job_kwargs(WorkloadJob("a", 5, "cifar10", 3, 256), app))
    view = pol.view(job)
    assert job.target_num_replicas is None and job.num_restarts is None
    assert (view.requested_gpus, view.requested_batch_size, view.num_restarts, view.gpus) == (3, 256, 0, 0)
    assert view.gpu_type is None and view.application == "cifar10" and view.submission_time == 5
    with pytest.raises(AttributeError, match="read-only"):
        view.requested_gpus = 1


def test_view_of_an_unknown_job_names_it():
    job = Job("stranger", builtin_applications()["cifar10"], 0)
    with pytest.raises(ValueError, match="stranger"):
        SimPolicy().view(job)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("no_such_module_xyz:Fifo", "cannot import module 'no_such_module_xyz'"),
        ("fastsched.sim.policies:NoSuchClass", "has no attribute 'NoSuchClass'"),
        ("fastsched.sim.policies:make_policy", "is not a SimPolicy subclass"),
        ("fastsched.sim.policies:", "expected 'package.module:Class'"),
        ("nosuch", "must be one of"),
    ],
)
def test_bad_policy_names_are_value_errors_naming_the_policy(name, message, capsys):
    with pytest.raises(ValueError, match="policy") as err:
        load_policy(name)
    assert message in str(err.value)
    assert main(["simulate", "--policy", name, "-q"]) == 2
    err = capsys.readouterr().err
    assert "--policy" in err and message in err


def test_entry_point_names_a_policy(plugin_dir, monkeypatch):
    sys.path.insert(0, str(plugin_dir))
    ep = importlib.metadata.EntryPoint(name="plugged-fifo", value="myfifo:Fifo", group=registry.ENTRY_POINT_GROUP)
    real = importlib.metadata.entry_points

    def fake(**kw):
        return [ep] if kw.get("group") == registry.ENTRY_POINT_GROUP else real(**kw)

    monkeypatch.setattr(registry.importlib.metadata, "entry_points", fake)
    assert "plugged-fifo" in registry.plugin_names()
    assert type(make_policy("plugged-fifo")).__name__ == "Fifo"
    result = simulate(ROWS[:2], policy="plugged-fifo", nodes=2, gpus=4)
    assert result.policy == "my-fifo" and result.completed == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 8), min_size=1, max_size=6), st.integers(1, 20))
def test_pack_takes_exactly_what_fits_on_as_few_nodes_as_needed(free_list, need):
    free = dict(enumerate(free_list))
    before = dict(free)
    alloc = pack(need, free)
    if sum(before.values()) < need:
        assert alloc is None and free == before  # nothing taken when it does not fit
        return
    assert len(alloc) == need and alloc == sorted(alloc)
    for node in before:
        assert free[node] == before[node] - alloc.count(node) >= 0
    # As few nodes as possible: no fewer nodes' largest free counts could hold the job.
    largest = sorted(before.values(), reverse=True)
    fewest = next(k for k in range(1, len(largest) + 1) if sum(largest[:k]) >= need)
    assert len(set(alloc)) == fewest
