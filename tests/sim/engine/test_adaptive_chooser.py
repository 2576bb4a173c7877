"""The reference loop's batch choice: found once per step (``_adaptive_chooser``), the same as chosen anew.

An adaptive job re-chooses its batch after every iteration of :meth:`Job._loop`; what the step
does not change (placement, limits, a :class:`HeteroJob`'s memory cap) is found once per step.
The reference here is the same job class choosing through its own ``update_local_bsz`` (which
takes the loop off the round kernel's path: every choice made from scratch).
"""

from __future__ import annotations

from fastsched.sim.engine.hetero_job import HeteroApplication, HeteroJob
from fastsched.sim.engine.job import Job
from fastsched.sim.truth.builtin import ModelApplication, builtin_applications


def _model_app(max_local_bsz):
    perf = [0.1, 0.01, 0.02, 0.005, 0.01, 0.003, 1.1]
    return ModelApplication("toy", perf, [3.0, 3.0], 1e6, 64, 4096, 16, max_local_bsz, 10)


class _ChosenAnew(Job):
    def update_local_bsz(self, placement):
        self._choose_local_bsz(placement)


class _HeteroChosenAnew(HeteroJob):
    def update_local_bsz(self, placement):
        self._choose_local_bsz(placement)


def _state(job):
    return (
        job.atomic_bsz,
        job.accum_steps,
        job.progress,
        job.epoch,
        job.current_time,
        job.completion_time,
        job.attained_service,
        dict(job.profile),
        job.perf_params,
        job.grad_params,
    )


def test_the_reference_classes_leave_the_round_kernel():
    assert Job._round_kernel and HeteroJob._round_kernel
    assert not _ChosenAnew._round_kernel and not _HeteroChosenAnew._round_kernel


def test_a_job_chooses_as_anew_at_every_crossing():
    app = builtin_applications()["cifar10"]
    jobs = [cls("j", app, 0, models={}, fits={}) for cls in (Job, _ChosenAnew)]
    for placement in ([2], [4, 4], [1], [3, 2, 2]):
        for job in jobs:
            job.reallocate(placement)
            job.step(900)  # several epochs: new gradient statistics, new fits
        assert _state(jobs[0]) == _state(jobs[1])
    assert jobs[0].epoch > 4


def test_a_hetero_job_moving_between_types_chooses_as_anew():
    # Heterogeneity-unaware: one model across types whose memory caps differ (32 and 128).
    app = HeteroApplication({"small": _model_app(32), "big": _model_app(128)})
    jobs = [cls("j", app, 0, unaware=True, models={}, fits={}) for cls in (HeteroJob, _HeteroChosenAnew)]
    for gpu_type, placement in (("big", [1]), ("small", [2]), ("small", [2, 2]), ("big", [1, 1]), ("small", [1])):
        for job in jobs:
            job.set_gpu_type(gpu_type)
            job.reallocate(placement)
            job.step(600)
        assert _state(jobs[0]) == _state(jobs[1])
        if gpu_type == "small":
            assert jobs[0].atomic_bsz <= 32


def test_a_subclass_overriding_the_choice_keeps_it_in_the_loop():
    class Halved(Job):
        calls = 0

        def _choose_local_bsz(self, placement):
            self.calls += 1
            atomic, accum = super()._choose_local_bsz(placement)
            atomic = max(1, atomic // 2)
            self._set_batch_config(atomic, accum)
            return atomic, accum

    assert not Halved._round_kernel  # the loop asks its update_local_bsz, hence this override
    job = Halved("b", builtin_applications()["cifar10"], 0)
    job.reallocate([2])
    job.step(900)
    assert job.epoch > 4 and job.calls > job.epoch  # at every crossing, not only at the reallocation
    assert min(key[2] for key in job.profile) == 32  # cifar10's 128 on 2 GPUs, halved
