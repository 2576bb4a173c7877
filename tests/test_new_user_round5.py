"""A new user's own policy, odd inputs and bad arguments: what went wrong is named, nothing hangs.

Found by using the command line and the library from the documentation alone (fifth round).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from fastsched.cli import main
from fastsched.sim import WorkloadJob, simulate, write_workload
from fastsched.sim._compare import run_policies
from fastsched.sim.policies import SimPolicy, make_policy

ROWS = [WorkloadJob("a", 0, "ncf", 1, 32768), WorkloadJob("b", 20, "cifar10", 2, 1024)]

POLICIES = textwrap.dedent(
    """
    import time
    from pathlib import Path

    import numpy as np

    from fastsched.sim.policies import SimPolicy, free_gpus, pack


    class Fifo(SimPolicy):
        name = "r5-fifo"

        def optimize(self, now, jobs, nodes, allocations):
            free, out = free_gpus(nodes, allocations), dict(allocations)
            for v in self.views(jobs):
                if not v.running:
                    alloc = pack(v.requested_gpus, free)
                    if alloc is not None:
                        out[v.name] = alloc
            return out


    class Answers(SimPolicy):
        # answers every round with ANSWER(jobs)
        def optimize(self, now, jobs, nodes, allocations):
            return type(self).ANSWER(jobs)


    def bad(name, answer):
        return type(name, (Answers,), {"name": name.lower(), "ANSWER": staticmethod(answer)})


    Negative = bad("Negative", lambda jobs: {j.name: [-1] for j in jobs})
    TooMany = bad("TooMany", lambda jobs: {j.name: [0] * 9 for j in jobs})
    Stranger = bad("Stranger", lambda jobs: {"stranger": [0]})
    FloatNode = bad("FloatNode", lambda jobs: {j.name: [0.5] for j in jobs})
    Count = bad("Count", lambda jobs: {j.name: 2 for j in jobs})
    NotDict = bad("NotDict", lambda jobs: [0])
    Nothing = bad("Nothing", lambda jobs: None)
    NumpyIds = bad("NumpyIds", lambda jobs: {jobs[0].name: np.array([0, 0])})


    class Raises(SimPolicy):
        name = "raises"

        def optimize(self, now, jobs, nodes, allocations):
            raise RuntimeError("boom in my code")


    class Blocks(Fifo):
        # marks that it runs, then never answers
        name = "blocks"

        def optimize(self, now, jobs, nodes, allocations):
            Path(f"started-{self.name}").touch()
            time.sleep(3600)


    class RaisesLater(SimPolicy):
        # fails once Blocks runs in another process
        name = "raises-later"

        def optimize(self, now, jobs, nodes, allocations):
            for _ in range(1200):
                if Path("started-blocks").exists():
                    raise RuntimeError("boom in my code")
                time.sleep(0.1)


    class Quick(Fifo):
        name = "quick"

        def optimize(self, now, jobs, nodes, allocations):
            Path("started-quick").touch()
            return super().optimize(now, jobs, nodes, allocations)


    class Unnamed(Fifo):
        name = SimPolicy.name


    class NoName(SimPolicy):
        optimize = Fifo.optimize


    class NoNameEither(NoName):
        pass


    class NamedChild(Fifo):
        pass


    class NoOptimize(SimPolicy):
        name = "no-optimize"


    class WantsText(Fifo):
        name = "wantstext"

        def desired_nodes(self):
            return "two"


    class WantsRaise(Fifo):
        name = "wantsraise"

        def desired_nodes(self):
            raise KeyError("no size")


    class BindRaises(Fifo):
        name = "bindraises"
        needs_gpu_types = True

        def bind_cluster(self, spec, interval):
            raise RuntimeError("bind boom")


    def kwargs_policy(cname, answer):
        return type(cname, (Fifo,), {"name": cname.lower(), "job_kwargs": lambda self, wjob, app: answer})


    ZeroGpus = kwargs_policy("ZeroGpus", {"target_num_replicas": 0, "target_batch_size": 1024})
    HalfBatch = kwargs_policy("HalfBatch", {"target_num_replicas": 1, "target_batch_size": 1024.5})
    Unknown = kwargs_policy("Unknown", {"gpus": 1})
    NoKwargs = kwargs_policy("NoKwargs", None)
    """
)


@pytest.fixture
def mine(tmp_path, monkeypatch):
    """The module ``r5_policies`` in the current folder, as a user saves it."""
    (tmp_path / "r5_policies.py").write_text(POLICIES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("r5_policies", None)


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        ("Negative", r"at t=\d+ s: over-allocated node -1: no such node \(job\(s\) \['a'"),
        ("TooMany", r"over-allocated node 0: \d+ GPUs of its 4"),
        ("Stranger", "allocated an unknown job 'stranger'"),
        ("FloatNode", r"job 'a' holds 0.5 \(float\); node ids are ints"),
        ("Count", "job 'a' must be a list of node ids.*got int 2"),
        ("NotDict", "optimize must return a dict.*got list"),
        ("Nothing", "optimize must return a dict.*got NoneType"),
        ("Raises", "optimize raised RuntimeError: boom in my code"),
        ("ZeroGpus", "job_kwargs for job 'a': target_num_replicas must be >= 1, got 0"),
        ("HalfBatch", "job_kwargs for job 'a': target_batch_size must be an int or None, got 1024.5"),
        ("Unknown", r"job_kwargs for job 'a': unknown argument\(s\) \['gpus'\]"),
        ("NoKwargs", "job_kwargs for job 'a': must return a dict"),
    ],
)
def test_a_bad_policy_is_named_with_the_field(mine, cls, message):
    # Each once ended as an internal error not naming the policy, or (a float node id) ran on.
    with pytest.raises(ValueError, match=rf"policy '{cls.lower()}' \(r5_policies\.{cls}\).*{message}"):
        simulate(ROWS, policy=f"r5_policies:{cls}", nodes=1, gpus=4, max_time=7200)


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        ("WantsText", "desired_nodes must return None or a node count, got 'two'"),  # a bare TypeError
        ("WantsRaise", "desired_nodes raised KeyError: 'no size'"),  # an internal error
        ("BindRaises", "bind_cluster raised RuntimeError: bind boom"),
    ],
)
def test_the_other_methods_of_a_policy_name_it(mine, cls, message):
    with pytest.raises(ValueError, match=rf"policy '{cls.lower()}' \(r5_policies\.{cls}\) {message}"):
        simulate(ROWS, policy=f"r5_policies:{cls}", nodes=1, gpus=4, max_nodes=2, max_time=7200)


def test_numpy_node_ids_are_taken_as_ints(mine):
    result = simulate(ROWS[:1], policy="r5_policies:NumpyIds", nodes=1, gpus=4, max_time=7200)
    assert result.completed == 1 and int(result.allocations.max()) == 2


def test_the_command_line_says_which_policy_failed(mine, capsys):
    csv = mine / "w.csv"
    write_workload(ROWS, csv)
    assert main(["simulate", str(csv), "--policy", "r5_policies:Raises,fifo", "--workers", "1", "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "internal error" not in err[0]
    assert "policy 'raises' (r5_policies.Raises)" in err[0] and "boom in my code" in err[0]


def test_a_policy_without_a_name_is_known_by_its_class(mine):
    # The default name "policy" is also a preset's key: the run failed on a dict() of a string.
    result = simulate(ROWS, policy="r5_policies:NoName", nodes=1, gpus=4)
    assert result.policy == "NoName" and result.completed == 2
    # A subclass of an unnamed policy is known by its own class; one of a named policy keeps the name.
    assert make_policy("r5_policies:NoNameEither").name == "NoNameEither"
    assert make_policy("r5_policies:NamedChild").name == "r5-fifo"


@pytest.mark.parametrize("name", ["interval", "cluster", "policy", "pollux"])
def test_a_policy_named_like_a_preset_key_runs(mine, name):
    # A preset holds options under built-in policy names next to keys such as "interval"; a
    # policy object of any name must not be handed them ("'int' object is not iterable").
    policy = make_policy("r5_policies:Fifo")
    policy.name = name
    result = simulate(ROWS, policy=policy, nodes=1, gpus=4)
    assert result.completed == 2


def test_policy_options_are_refused_for_a_policy_object(mine):
    with pytest.raises(ValueError, match="given by name only"):
        simulate(ROWS, policy=make_policy("pollux"), nodes=1, gpus=4, policy_options={"seed": 1})


def test_workers_are_checked_for_one_policy_too(tmp_path, capsys):
    csv = tmp_path / "w.csv"
    write_workload(ROWS, csv)
    assert main(["simulate", str(csv), "--policy", "fifo", "--workers", "0", "-q"]) == 2
    assert "--workers must be >= 1" in capsys.readouterr().err


def test_a_policy_without_optimize_is_refused_when_built(mine):
    with pytest.raises(ValueError, match="'r5_policies:NoOptimize': class NoOptimize does not define optimize"):
        make_policy("r5_policies:NoOptimize")


def test_built_in_policies_are_not_wrapped():
    from fastsched.sim.policies.queue import FifoPolicy

    assert not getattr(FifoPolicy.optimize, "_checked", False)
    assert FifoPolicy.name == "fifo" and SimPolicy.name == "policy"


class _Alarm(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Alarm


def test_a_failed_run_stops_the_others_at_once(mine):
    # The pool waited for every other run to end: here, never.
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(300)  # a guard against hanging, not a timing
    try:
        with pytest.raises(ValueError, match="raises-later.*boom in my code"):
            policies = ["r5_policies:Blocks", "r5_policies:RaisesLater"]
            run_policies(policies, workers=2, workload=ROWS, nodes=1, gpus=4)
    except _Alarm:
        pytest.fail("run_policies waited for a run that never ends")
    else:
        import multiprocessing
        import time

        # The blocking run's worker is gone too. It was killed, but the kill reaches it
        # asynchronously: on a loaded machine it may still be alive for a moment. A run that
        # never ends on its own is still alive after 30 s only if it was not stopped.
        deadline = time.monotonic() + 30
        while multiprocessing.active_children() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not multiprocessing.active_children()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX process groups")
def test_ctrl_c_ends_several_runs_at_once_without_tracebacks(mine):
    # The terminal sends Ctrl-C to the whole group: an idle worker printed a traceback.
    csv = mine / "w.csv"
    write_workload(ROWS, csv)
    cmd = [sys.executable, "-m", "fastsched", "simulate", str(csv), "-q", "--workers", "2", "--nodes", "1"]
    cmd += ["--policy", "r5_policies:Blocks,r5_policies:Quick"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=mine)
    try:
        while not ((mine / "started-blocks").exists() and (mine / "started-quick").exists()):
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.2)
        time.sleep(2)  # the quick run ends: its worker waits idle for work
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=120)[1]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert "Traceback" not in err and "interrupted" in err


# --- cost-model case files and `fastsched plan` -------------------------------------------------

ONE_OP = {"vars": [{"name": "x", "shape": [4]}], "ops": [{"id": "a", "type": "relu", "outputs": [["Out", ["x"]]]}]}


def _case_file(tmp_path, **changes):
    import json

    data = {"name": "t", "ranks": [json.loads(json.dumps(ONE_OP))], "microbatch_list": [1, 4]}
    for key, value in changes.items():
        if key.startswith("var_"):
            data["ranks"][0]["vars"][0][key[4:]] = value
        elif key.startswith("op_"):
            data["ranks"][0]["ops"][0][key[3:]] = value
        elif key.startswith("rank_"):
            data["ranks"][0][key[5:]] = value
        else:
            data[key] = value
    path = tmp_path / "case.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        # a string was split into characters, then failed on int('x'); a number was "not iterable"
        ({"microbatch_list": "x"}, "microbatch_list must be a list of microbatch counts, got str"),
        ({"microbatch_list": 4}, "microbatch_list must be a list of microbatch counts, got int"),
        ({"microbatch_list": [1, 0]}, r"microbatch_list\[1\] must be >= 1, got 0"),
        ({"results": "x"}, "results must be a JSON object"),  # "dictionary update sequence element"
        ({"ranks": 3}, "ranks must be a list of rank programs, got int"),
        ({"rank_rank": "x"}, r"ranks\[0\]: rank must be an int, got 'x'"),  # int("x") unnamed
        ({"rank_rank": 1.5}, r"ranks\[0\]: rank must be an int, got 1.5"),  # silently truncated to 1
        ({"op_inputs": 3}, "Op 'a' inputs must be \\[slot, \\[var names\\]\\] pairs, got 3"),
        ({"var_persistable": "false"}, "Var 'x': persistable must be a bool, got 'false'"),  # read as true
        ({"var_persistable": -1}, "Var 'x': persistable must be a bool, got -1"),
    ],
)
def test_bad_case_fields_are_named(tmp_path, capsys, changes, message):
    import re

    from fastsched.costmodel.case import load_case

    path = _case_file(tmp_path, **changes)
    with pytest.raises((TypeError, ValueError), match=message):
        load_case(path).estimate()
    assert main(["cost", str(path)]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_case_flags_and_lists_that_were_valid_still_are(tmp_path):
    from fastsched.costmodel.case import load_case
    from fastsched.costmodel.program import Var

    for flag in (True, False, 0, 1, None):
        assert load_case(_case_file(tmp_path, var_persistable=flag, results=None)).estimate().runtime == 0.0
    assert load_case(_case_file(tmp_path, microbatch_list=None)).microbatch_list == []
    assert Var("w", (2,), persistable=1).persistable is True
    with pytest.raises(TypeError, match="persistable must be a bool"):
        Var("w", (2,), persistable="no")


def test_plan_takes_global_batch_for_a_transformer_and_refuses_rank(tmp_path, capsys):
    import json

    model = tmp_path / "m.json"
    model.write_text(json.dumps(dict(layers=4, hidden=256, heads=4, seq=128, vocab=1000, global_batch=64)))
    # --global-batch was ignored for a transformer, and --rank too
    assert main(["plan", str(model), "--gpus", "4", "--global-batch", "8", "--json", "--top", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["global_batch"] == 8
    assert main(["plan", str(model), "--gpus", "4", "--rank", "1"]) == 2
    assert "--rank reads one rank of a case or program file" in capsys.readouterr().err


def test_profile_writes_one_type_named_twice_once(tmp_path, capsys):
    # h100-sxm is another name of h100: its files were priced and written twice, two table rows.
    out = tmp_path / "profiles"
    assert main(["profile", "cifar10", "--gpu", "h100,h100-sxm", "--output", str(out)]) == 0
    captured = capsys.readouterr()
    rows = [line.split() for line in captured.out.splitlines()[2:]]
    assert [r[:2] for r in rows] == [["h100", "h100"]]
    assert "'h100-sxm' is 'h100' (h100)" in captured.err and "profiled once" in captured.err
    assert sorted(p.name for p in (out / "cifar10").glob("*-h100.csv")) == [
        "placements-h100.csv",
        "scalability-h100.csv",
    ]


# --- sweeps ---------------------------------------------------------------------------------------


def test_a_sweep_runs_a_policy_of_ones_own(mine, capsys):
    import json

    from fastsched.sweep.spec import load_spec

    write_workload(ROWS, mine / "w.csv")
    spec = {"workloads": "w.csv", "policy": ["r5_policies:Fifo", "fifo"], "nodes": 1, "gpus": 4}
    (mine / "s.json").write_text(json.dumps(spec))
    # was refused: "'policy' must be one of ['pollux', ...]", though simulate --policy takes it
    assert main(["sweep", str(mine / "s.json"), "--serial", "-q", "--output", str(mine / "out")]) == 0
    assert "r5_policies:Fifo" in (mine / "out" / "summary.csv").read_text()
    before = [r.run_id for r in load_spec(mine / "s.json").runs()]
    with open(mine / "r5_policies.py", "a") as fh:
        fh.write("# edited\n")
    after = [r.run_id for r in load_spec(mine / "s.json").runs()]
    assert before[0] != after[0] and before[1] == after[1]  # the edited policy runs again, fifo does not
    spec["policy"] = "r5_policies:Nowhere"
    with pytest.raises(ValueError, match="'policy' policy 'r5_policies:Nowhere': module 'r5_policies' has no"):
        load_spec(spec, base_dir=mine)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"cluster": "1xaws", "nodes": 2}, "'cluster' and 'nodes' are exclusive"),  # every run failed
        ({"cluster": "1xaws", "max_nodes": 4}, "'max_nodes' .autoscaling. needs a cluster of one unnamed GPU type"),
        ({"preset": "sia", "max_nodes": 4}, "'max_nodes' .autoscaling. needs"),
    ],
)
def test_sweep_combinations_every_run_would_fail_on_are_refused(extra, message):
    from fastsched.sweep.spec import load_spec

    with pytest.raises(ValueError, match=message):
        load_spec({"workloads": "builtin", **extra})


@pytest.mark.parametrize(
    "extra",
    [
        {"preset": ["sia", "osdi21"], "max_nodes": 4},  # the osdi21 runs autoscale on nodes x gpus
        {"preset": "sia", "max_nodes": [None, 4]},  # the runs without max_nodes are fine
    ],
)
def test_sweep_grids_where_some_runs_work_are_taken(extra):
    from fastsched.sweep.spec import load_spec

    assert len(load_spec({"workloads": "builtin", "policy": "pollux", **extra}).runs()) == 2


def test_sweep_serial_refuses_workers(tmp_path, capsys):
    import json

    (tmp_path / "s.json").write_text(json.dumps({"workloads": "builtin"}))
    out = str(tmp_path / "out")
    assert main(["sweep", str(tmp_path / "s.json"), "--serial", "--workers", "2", "--output", out]) == 2
    assert "--serial runs in this process" in capsys.readouterr().err


def test_cost_timeline_of_an_unknown_format_names_the_option(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="the format check is matplotlib's (the plot extra)")
    from tests.conftest import SHARED

    case = SHARED / "paddle-cases" / "pp_tfm_S2_dp2.json"
    if not case.is_file():
        pytest.skip(f"shared case not found: {case}")
    path = tmp_path / "t.txt"
    assert main(["cost", str(case), "--timeline", str(path)]) == 2
    assert f"--timeline {path}: Format 'txt' is not supported" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# --- CUDA launch settings (pure Python: no GPU needed) ---------------------------------------------


@pytest.mark.parametrize(("value", "error"), [(0, ValueError), (-32, ValueError), (2048, ValueError), ("x", TypeError)])
def test_threads_per_block_is_checked_where_it_is_set(value, error):
    from fastsched.cuda import set_threads_per_block
    from fastsched.cuda._memory import launch_shape

    # 0 was kept (a division by zero at the next launch); 2048 failed in the driver
    with pytest.raises(error, match="threads_per_block"):
        set_threads_per_block(value)
    with pytest.raises(error, match="threads_per_block"):
        launch_shape(100, value)
    assert set_threads_per_block(set_threads_per_block(64)) == 64  # unchanged by the refusals


# --- the builtin profiles' generator ------------------------------------------------------------


def test_derive_names_bad_arguments_and_writes_nothing(tmp_path, capsys):
    from fastsched.sim.truth.builtin import builtin_applications
    from fastsched.sim.truth.derive import main as derive_main
    from fastsched.sim.truth.derive import synthetic_workload

    apps = builtin_applications()
    requests = {name: (1, app.init_batch_size) for name, app in apps.items()}
    # numpy's "negative dimensions are not allowed", and a KeyError naming only the application
    with pytest.raises(ValueError, match="num_jobs must be >= 1, got -1"):
        synthetic_workload(apps, requests, num_jobs=-1)
    with pytest.raises(
        ValueError, match=r"requests has no \(num_replicas, batch_size\) for application\(s\) \['cifar10'"
    ):
        synthetic_workload(apps, {})
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_:  # was a traceback, after creating --out
        derive_main([str(tmp_path / "nowhere"), "--out", str(out)])
    assert exit_.value.code == 2 and "traces folder not found" in capsys.readouterr().err
    assert not out.exists()


def test_comparing_runs_where_no_job_completed_draws_without_warnings(tmp_path):
    import warnings

    pytest.importorskip("matplotlib")
    from fastsched.sim._compare import plot_comparison

    results = run_policies(["fifo", "srtf"], workers=1, workload=ROWS, nodes=1, gpus=4, max_time=60)
    assert [r.completed for r in results] == [0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "No artists with labels found to put in legend" reached stderr
        plot_comparison(results, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 0


def test_policy_checks_on_an_empty_cluster_and_numpy_delays():
    from types import SimpleNamespace

    import numpy as np

    from fastsched.sim.policies._user_checks import PolicyError, check_allocations, check_job_kwargs

    pol, jobs = SimpleNamespace(name="p", cluster=None), [SimpleNamespace(name="a")]
    with pytest.raises(PolicyError, match="no such node .*the cluster's nodes are none"):
        check_allocations(pol, 60, {"a": [0]}, jobs, {})
    for delay in (np.int64(10), np.float32(2.5), 0):
        assert check_job_kwargs(pol, {"rescale_delay": delay}, ROWS[0])["rescale_delay"] == delay
    for delay in (np.True_, True, -1, float("nan"), "10"):
        with pytest.raises(PolicyError, match="rescale_delay must be"):
            check_job_kwargs(pol, {"rescale_delay": delay}, ROWS[0])
