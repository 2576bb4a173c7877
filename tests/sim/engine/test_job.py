"""Job mechanics: re-scale delay, epoch accounting, completion, batch configuration."""

from __future__ import annotations

import pytest

from fastsched.sim.engine.job import RESCALE_DELAY, Job
from fastsched.sim.truth.traces import Application


class ConstApp(Application):
    """Step time 2 s (0.5 s of it sync), no gradient noise (gain 1), 10 progress per epoch."""

    name = "const"
    init_batch_size = 4
    max_batch_size = 64
    min_local_bsz = 4
    max_local_bsz = 8
    max_epochs = 3

    def throughput(self, placement, local_bsz):
        return 2.0, 0.5

    def grad_stats(self, batch_size, epoch):
        return 1.0, 0.0

    def progress(self, epoch):
        return 10.0 * epoch

    def iteration(self, batch_size, epoch):
        return 10.0 * epoch


def test_rescale_delay_epochs_and_completion():
    job = Job("j", ConstApp(), 0, target_batch_size=4)
    job.reallocate([1])
    assert job.num_restarts == 0 and job.rescale_time == RESCALE_DELAY
    assert (job.atomic_bsz, job.accum_steps) == (4, 0)
    job.step(20)  # inside the re-scale delay: no progress, but service counts
    assert job.progress == 0.0 and job.attained_service == 20 and job.current_time == 20
    job.step(40)  # 10 s of delay left, then 30 s at 0.5 progress/s: epoch 1 at t=50
    assert job.epoch == 1 and job.progress == pytest.approx(15.0) and job.current_time == 60
    job.step(60)  # epoch 2 at t=70, epoch 3 (> completion epoch 2) at t=90
    assert job.completion_time == 90 and job.epoch == 3
    assert job.current_time == 120  # leftover time only advances the clock
    assert job.attained_service == 90


def test_no_placement_only_advances_clock():
    job = Job("j", ConstApp(), 0, target_batch_size=4)
    job.step(60)
    assert job.current_time == 60 and job.progress == 0.0 and job.attained_service == 0
    job.reallocate([])
    assert job.num_restarts is None and job.placement == ()


def test_restart_counting_and_deallocation():
    job = Job("j", ConstApp(), 0, target_batch_size=8)
    job.reallocate([1])
    job.reallocate([2])
    job.reallocate([])
    assert job.num_restarts == 1 and job.atomic_bsz == 0
    job.reallocate([1, 1])
    assert job.num_restarts == 2 and job.rescale_time == RESCALE_DELAY


def test_fixed_batch_configuration():
    job = Job("j", ConstApp(), 0, target_batch_size=24)
    job.reallocate([1])  # one replica above the initial batch: accumulate
    assert (job.atomic_bsz, job.accum_steps) == (8, 2)
    job.reallocate([2, 1])  # 3 replicas: local 8, no accumulation
    assert (job.atomic_bsz, job.accum_steps) == (8, 0)
    job = Job("k", ConstApp(), 0, target_batch_size=8)
    job.reallocate([1])  # R = 1 and B > init forces one accumulation step
    assert (job.atomic_bsz, job.accum_steps) == (4, 1)


def test_adaptive_batch_uses_fitted_model_after_first_step():
    job = Job("j", ConstApp(), 0)  # no target: Pollux-style
    job.reallocate([2])
    assert job.atomic_bsz * 2 * (job.accum_steps + 1) == 8  # max(init, min_local * R)
    job.step(60)
    assert job.profile and job.perf_params is not None
    assert job.speedup_fn() is job.speedup_fn()  # cached while the model is unchanged
    assert 4 <= job.atomic_bsz <= 8


def test_interference_slows_progress():
    a = Job("a", ConstApp(), 0, target_batch_size=4)
    b = Job("b", ConstApp(), 0, target_batch_size=4)
    for j in (a, b):
        j.reallocate([1])
        j.rescale_time = 0
    a.step(10)
    b.step(10, interference=0.5)
    assert b.progress == pytest.approx(a.progress / 2)
