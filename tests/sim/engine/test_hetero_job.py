"""Per-GPU-type goodput: per-type fits, one gradient estimate, Sia's bootstrap, trace loading."""

from __future__ import annotations

import numpy as np
import pytest

from fastsched.goodput import fit_perf_params
from fastsched.sim.engine.hetero_job import HeteroJob, load_hetero_applications
from tests.sim.policies.belief_reference import estimate_goodput

GPN = {"slow": 2, "fast": 2}


@pytest.fixture
def app(two_type_traces):
    return load_hetero_applications(two_type_traces, ["slow", "fast"])["toy"]


def _run(job, gpu_type, placement, seconds):
    job.set_gpu_type(gpu_type)
    job.reallocate(placement)
    job.step(seconds)


def test_one_gpu_throughput_ratio_by_hand(app):
    # slow: 8 samples per 2.0 s = 4/s; fast: 16 samples per 2.0 s = 8/s.
    assert app.one_gpu_throughput("slow") == pytest.approx(4.0)
    assert app.one_gpu_throughput("fast") == pytest.approx(8.0)
    assert app.throughput_ratio("fast", "slow") == pytest.approx(2.0)
    assert app.apps["fast"].max_local_bsz == 16 and app.apps["slow"].max_local_bsz == 8


def test_per_type_profiles_and_fits(app):
    job = HeteroJob("j", app, 0)
    _run(job, "slow", [2], 400)
    _run(job, "fast", [1], 400)
    profiles = job.profiles_by_type()
    assert set(profiles) == {"slow", "fast"}
    assert all(k[1] == 2 for k in profiles["slow"]) and all(k[1] == 1 for k in profiles["fast"])
    for t in ("slow", "fast"):
        prof = profiles[t]
        keys, vals = list(prof), list(prof.values())
        step = np.array([v[0] for v in vals])
        sync = np.array([v[1] for v in vals])
        want = fit_perf_params(
            np.array([k[0] for k in keys]),
            np.array([k[1] for k in keys]),
            np.array([k[2] for k in keys]),
            step - sync,
            step,
        )
        assert job.perf_params_on(t) == want  # fitted from that type's observations only
    assert job.perf_params_on("slow") != job.perf_params_on("fast")
    assert job.num_migrations == 1 and job.num_restarts == 1
    assert job.max_profiled_replicas_on("slow") == 2 and job.max_profiled_replicas_on("fast") == 1
    assert sum(job.gpu_seconds_by_type.values()) == job.attained_service


def test_bootstrap_uses_the_throughput_ratio(app):
    job = HeteroJob("j", app, 0)
    assert estimate_goodput(job, "fast", np.array([1]), np.array([1]), GPN) is None  # never ran
    _run(job, "slow", [1], 400)
    nodes, reps = np.array([1, 1, 2]), np.array([1, 2, 4])
    slow = estimate_goodput(job, "slow", nodes, reps, GPN)
    fast = estimate_goodput(job, "fast", nodes, reps, GPN)
    np.testing.assert_allclose(fast, 2.0 * slow)  # ratio of one-GPU throughputs, same layout (2 GPUs per node)
    _run(job, "fast", [1], 400)  # once observed, the type's own fit replaces the estimate
    own = estimate_goodput(job, "fast", nodes, reps, GPN)
    fn = job.speedup_fn_on("fast")
    np.testing.assert_allclose(own, fn(nodes, reps) * fn.base_goodput)


def test_unaware_job_merges_profiles(app):
    job = HeteroJob("j", app, 0, unaware=True)
    _run(job, "slow", [1], 400)
    _run(job, "fast", [2], 400)
    merged = job.profiles_by_type()
    assert list(merged) == ["merged"] and {k[1] for k in merged["merged"]} == {1, 2}


def test_memory_cap_per_type(app):
    job = HeteroJob("j", app, 0, target_batch_size=32)
    job.set_gpu_type("slow")
    job.reallocate([1])
    assert job.atomic_bsz <= 8  # slow measured up to 8 per GPU
    job.set_gpu_type("fast")
    job.reallocate([1])
    assert job.atomic_bsz <= 16 and job.atomic_bsz > 8


def test_missing_type_profile_names_the_file(two_type_traces):
    with pytest.raises(FileNotFoundError, match=r"placements-azure\.csv"):
        load_hetero_applications(two_type_traces, ["slow", "azure"])
    with pytest.raises(ValueError, match="no profile of GPU type 'azure'"):
        HeteroJob("j", load_hetero_applications(two_type_traces, ["slow"])["toy"], 0).set_gpu_type("azure")
    with pytest.raises(ValueError, match="category must be one of"):
        HeteroJob("j", load_hetero_applications(two_type_traces, ["slow"])["toy"], 0, category="elastic")


def test_slowdown_divides_true_goodput_only(app):
    a, b = HeteroJob("a", app, 0), HeteroJob("b", app, 0, slowdown=2.0)
    for job in (a, b):
        job.set_gpu_type("slow")
        job.reallocate([1])
        job.rescale_time = 0
        job.step(50)  # within the first epoch
    assert a.progress == pytest.approx(2 * b.progress)
    assert a.profile == b.profile  # observed step times are unchanged
    with pytest.raises(ValueError, match="slowdown must be a number >= 1"):
        HeteroJob("c", app, 0, slowdown=0.5)


def test_sia_preset_uses_the_study_job_model(two_type_traces):
    from fastsched.sim import PRESETS
    from fastsched.sim.engine.hetero_job import SIA_RESTART_DELAYS, SIA_SLOWDOWNS, make_hetero_jobs
    from fastsched.sim.inputs.cluster_spec import parse_cluster
    from fastsched.sim.inputs.workload import WorkloadJob
    from fastsched.sim.policies import make_policy

    assert PRESETS["sia"]["job_model"] == PRESETS["sia-homogeneous"]["job_model"] == "sia"
    apps = load_hetero_applications(two_type_traces, ["slow"])
    apps = {"cifar10": apps["toy"]}  # any model under a name the study calibrated
    spec = parse_cluster("1xslow:2")
    pol = make_policy("sia")
    pol.bind_cluster(spec, 60)
    wl = [WorkloadJob("c", 0, "cifar10", 1, 8)]
    job = make_hetero_jobs(wl, apps, pol, spec, restart_delays=SIA_RESTART_DELAYS, slowdowns=SIA_SLOWDOWNS)[0]
    assert (job.slowdown, job.rescale_delay, job.migrate_delay) == (1.8, 50, 50)
    plain = make_hetero_jobs(wl, apps, pol, spec)[0]
    assert (plain.slowdown, plain.rescale_delay) == (1.0, 30)


def test_restart_only_on_a_new_shape_type_or_resume(app):
    # The Sia study's simulator: same-shape moves within a type keep running.
    job = HeteroJob("j", app, 0, restart_on_move=False)
    job.set_gpu_type("slow")
    job.reallocate([1, 1])
    assert job.num_restarts == 0
    job.step(100)  # the start-up delay is over
    job.reallocate([1, 1])  # other nodes, same GPUs per node
    assert (job.num_restarts, job.rescale_time) == (0, 0)
    job.reallocate([2])  # a new shape
    assert job.num_restarts == 1
    job.reallocate([])  # suspended ...
    job.reallocate([2])  # ... and resumed
    assert job.num_restarts == 2
    job.set_gpu_type("fast")  # same shape, other type
    job.reallocate([2])
    assert job.num_restarts == 3
    # Default: every reallocation restarts, as the homogeneous Job does.
    plain = HeteroJob("p", app, 0)
    plain.set_gpu_type("slow")
    plain.reallocate([1, 1])
    plain.reallocate([1, 1])
    assert plain.num_restarts == 1


def test_unaware_job_chooses_its_batch_within_the_type_it_moves_to():
    # One merged model serves both types, but the batch choice also depends on the type's
    # limits (here 32 samples per GPU on "small", 128 on "big"; a noisy gradient favours large
    # batches): the choice made on one type must not be reused on the other when the job
    # moves there with the same model.
    from fastsched.sim.engine.hetero_job import HeteroApplication
    from fastsched.sim.truth.builtin import ModelApplication

    def model_app(max_local_bsz):
        perf = [0.1, 0.01, 0.02, 0.005, 0.01, 0.003, 1.1]
        return ModelApplication("toy", perf, [3.0, 3.0], 1e6, 64, 4096, 16, max_local_bsz, 10)

    app = HeteroApplication({"small": model_app(32), "big": model_app(128)})
    job = HeteroJob("j", app, 0, unaware=True)
    _run(job, "big", [1], 600)
    job.reallocate([1])
    model = job._current_model()
    on_big = (job.atomic_bsz, job.accum_steps)
    assert on_big == model.best_config(app.apps["big"], 1, 1)
    job.set_gpu_type("small")
    job.reallocate([1])
    assert job._current_model() is model  # no new observation: the same model
    assert (job.atomic_bsz, job.accum_steps) == model.best_config(app.apps["small"], 1, 1) != on_big
    assert job.atomic_bsz <= 32
    job.set_gpu_type("big")
    job.reallocate([1])
    assert (job.atomic_bsz, job.accum_steps) == on_big
