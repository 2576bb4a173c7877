"""Sia's two estimate options of the ``sia-artifact`` preset, each against a plain reference.

``estimate_batch="requested"``: an adaptive job's goodput estimate searches batch sizes up to
its workload row's batch only (the job still trains up to the application's largest).
``bootstrap_rate="independent-maxima"``: a type's one-GPU rate is the largest measured one-GPU
batch over the largest measured one-GPU step time, read here straight from the trace files.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from fastsched.goodput import GoodputFunction
from fastsched.sim import PRESETS, simulate
from fastsched.sim.engine.hetero_job import HeteroJob, load_hetero_applications
from fastsched.sim.inputs.cluster_spec import parse_cluster
from fastsched.sim.inputs.workload import WorkloadJob
from fastsched.sim.policies import SiaPolicy
from fastsched.sim.policies._belief import goodput_source
from fastsched.sim.study import resolve_study
from fastsched.sim.truth.per_type import one_gpu_throughput
from tests.sim.two_types import toy_workload

from .test_policies_hetero import CLUSTER


def _one_gpu_rate_from_file(path):
    """Largest batch / largest step time over the file's one-GPU rows (placement "1")."""
    rows = [r for r in csv.DictReader(open(path)) if r["placement"].strip() == "1"]
    return max(float(r["local_bsz"]) for r in rows) / max(float(r["step_time"]) for r in rows)


def test_independent_maxima_rate_equals_the_trace_files(shared_dir):
    root = shared_dir / "sia-traces" / "traces"
    types = ["aws", "rtx", "dgx-ext"]
    apps = load_hetero_applications(root, types, ["yolov3", "cifar10", "bert"])
    differs = 0
    for name, happ in apps.items():
        for t in types:
            want = _one_gpu_rate_from_file(root / name / f"placements-{t}.csv")
            got = one_gpu_throughput(happ.apps[t], "independent-maxima")
            assert got == pytest.approx(want, rel=1e-12)
            differs += not np.isclose(got, one_gpu_throughput(happ.apps[t]))
        ratio = happ.throughput_ratio("dgx-ext", "aws", "independent-maxima")
        assert ratio == pytest.approx(
            _one_gpu_rate_from_file(root / name / "placements-dgx-ext.csv")
            / _one_gpu_rate_from_file(root / name / "placements-aws.csv"),
            rel=1e-12,
        )
    # yolov3's one-GPU step time is not monotone in the batch: the two rules part somewhere.
    assert differs > 0


def test_unknown_rules_are_refused(two_type_traces):
    app = load_hetero_applications(two_type_traces, ["slow", "fast"], ["toy"])["toy"]
    with pytest.raises(ValueError, match="rule"):
        one_gpu_throughput(app.apps["slow"], "median")
    with pytest.raises(ValueError, match="estimate_batch"):
        SiaPolicy(estimate_batch="workload")
    with pytest.raises(ValueError, match="bootstrap_rate"):
        SiaPolicy(bootstrap_rate="mean")


def _non_monotone_fast(root):
    """The toy traces with the fast type's one-GPU step at batch 8 slower than at 16 (2.5 s against 2.0 s).

    Then the two rules part: largest-batch gives 16 / 2.0 = 8 samples/s, independent maxima
    16 / 2.5 = 6.4.
    """
    path = root / "toy" / "placements-fast.csv"
    lines = path.read_text().splitlines()
    fixed = [",".join(["1", "8", "2.5", "0.0"]) if ln.split(",")[:2] == ["1", "8"] else ln for ln in lines]
    assert fixed != lines
    path.write_text("\n".join(fixed) + "\n")
    return root


def _ran_job(two_type_traces):
    """A toy job that ran on two slow GPUs of one node, then one (a fit on 'slow' only)."""
    app = load_hetero_applications(two_type_traces, ["slow", "fast"], ["toy"])["toy"]
    job = HeteroJob("toy-0", app, 0)
    job.set_gpu_type("slow")
    for alloc in ([2], [1]):  # GPUs per node
        job.reallocate(alloc)
        job.step(200)
    return job


@pytest.mark.parametrize("requested", [2, 4, 8, 16, 32, 64])
def test_requested_batch_caps_the_estimates_grid_search(two_type_traces, requested):
    job = _ran_job(two_type_traces)
    app = job.hetero_application
    assert (app.init_batch_size, app.max_batch_size) == (4, 32)  # so 2 and 64 fall outside
    for t in ("slow", "fast"):
        plain = goodput_source(job, t)
        capped = goodput_source(job, t, max_batch_size=requested)
        assert plain.params.max_bsz == app.max_batch_size
        # within what the job can train: never below its first batch, never above its largest
        assert capped.params.max_bsz == min(max(requested, 4), 32)
        assert capped._replace(params=plain.params) == plain  # nothing else moves


def test_requested_needs_the_recorded_row(two_type_traces):
    job = _ran_job(two_type_traces)
    pol = SiaPolicy(estimate_batch="requested")
    pol.bind_cluster(parse_cluster(CLUSTER), 60)
    with pytest.raises(ValueError, match="toy-0.*job_kwargs"):
        pol._adaptive_rows([job])  # built without job_kwargs: no silent fall back to the application's


@pytest.mark.parametrize("rule", ["largest-batch", "independent-maxima"])
def test_requested_rows_equal_goodput_functions_optimum(two_type_traces, rule):
    """Each configuration's value: the public goodput model's own search, capped at the row's batch."""
    job = _ran_job(_non_monotone_fast(two_type_traces))
    spec = parse_cluster(CLUSTER)
    pol = SiaPolicy(estimate_batch="requested", bootstrap_rate=rule)
    pol.bind_cluster(spec, 60)
    row = WorkloadJob("toy-0", 0, "toy", 2, 8)
    pol.job_kwargs(row, job.hetero_application)  # records the row's batch, as simulate() does
    (cols, vals) = pol._adaptive_rows([job])[0]
    app = job.hetero_application
    with job._on("slow"):  # the job's only fit: 'fast' is bootstrapped from it
        fn = GoodputFunction(job.perf_params, job.grad_params, app.init_batch_size)
    slow = app.apps["slow"]
    want = {}
    for c, (t, nodes, gpus) in enumerate(pol.configs):
        if gpus > pol._max_replicas(job):
            continue
        laid = nodes if t == "slow" else -(-gpus // spec.gpus_per_node_by_type["slow"])  # on the fit's nodes
        g, _, _ = fn.optimize(
            laid, gpus, max_batch_size=8, atomic_bsz_range=(slow.min_local_bsz, slow.max_local_bsz), accumulation=True
        )
        # one-GPU samples/s from the files: slow 8 / 2.0 = 4 either way; fast 8 or 6.4 (see above)
        ratio = 1.0 if t == "slow" else (8.0 if rule == "largest-batch" else 6.4) / 4.0
        if g * ratio > 1e-4:  # Sia's zero gain: such configurations are not offered
            want[c] = g * ratio
    low = min(want.values())
    assert cols == sorted(want)
    np.testing.assert_allclose(vals, [want[c] / low for c in cols], rtol=1e-9)


def test_estimate_cap_leaves_training_free_and_the_preset_differs_only_there(two_type_traces):
    base, art = PRESETS["sia"], PRESETS["sia-artifact"]
    assert {k: v for k, v in art.items() if k != "sia"} == {k: v for k, v in base.items() if k != "sia"}
    built = resolve_study(preset="sia-artifact").policy
    assert (built.name, built.estimate_batch, built.bootstrap_rate) == ("sia", "requested", "independent-maxima")
    plain = resolve_study(preset="sia").policy
    assert (plain.estimate_batch, plain.bootstrap_rate) == ("application", "largest-batch")
    assert (built.p, built.lambda_n) == (plain.p, plain.lambda_n)
    # Rows asking for the initial batch: the estimate never looks past it, yet jobs still grow
    # their batch in training (the goodput model of the job itself is not capped).
    work = toy_workload(n=4, spacing=60, replicas=2, batch=4)
    result = simulate(
        work, policy=SiaPolicy(estimate_batch="requested"), traces=two_type_traces, cluster=CLUSTER, interval=60
    )
    assert len(result.jobs) == len(work) and all(j.completion_time is not None for j in result.jobs)
    assert max(j.final_batch_size for j in result.jobs) > 4
