"""A job's goodput model as its batch-size search takes it, and the fits it comes from.

:class:`~fastsched.sim.engine.job.Job` keeps one :class:`_Model` per ``(perf_params,
grad_params)``, in a dict shared by the jobs of a study: jobs with the same observations reach
the same fit (:func:`_fitted`, itself kept by its observations) and the same model, which keeps
its batch choices (:func:`_choice_key`) and its speedup functions.
"""

from __future__ import annotations

import numpy as np

from fastsched._memo import remember
from fastsched._validate import check_finite_scalar
from fastsched.goodput import GoodputFunction, fit_perf_params
from fastsched.goodput._formulas import MAX_BATCH
from fastsched.goodput._kernels import best_config
from fastsched.goodput.model import _check_grad_params, _check_perf_params, _search_bounds

#: Entries a shared fit memo and a shared model memo hold before they are emptied (see
#: fastsched._memo; a few hundred MB at most at the largest scales).
_FITS_KEPT = 65536
_MODELS_KEPT = 16384
#: Batch choices one model keeps (its job's few placements; more when several jobs share it),
#: and search bounds the models descended from one keep (one per set of application limits).
_CHOICES_KEPT = 64
_BOUNDS_KEPT = 64


def _fitted(observations, previous):
    """:func:`fit_perf_params` of ``((nodes, replicas, atomic_bsz), (step, sync))`` observations, warm-started.

    A pure function of its arguments, so jobs that made the same observations from the same
    previous fit may share its answer (see ``fits`` in :class:`Job`). The measured times are
    part of the observations: one ``(nodes, replicas, atomic_bsz)`` covers placements (2+2 vs
    3+1 GPUs) with different step times. So is the previous fit, the refit's extra start
    (never a worse fit).
    """
    keys = [k for k, _ in observations]
    step = np.array([v[0] for _, v in observations])
    sync = np.array([v[1] for _, v in observations])
    return fit_perf_params(
        np.array([k[0] for k in keys]),
        np.array([k[1] for k in keys]),
        np.array([k[2] for k in keys]),
        step - sync,
        step,
        initial=previous,
    )


class _Model:
    """The job's current goodput model as the batch-size search takes it.

    One per ``(perf_params, grad_params)`` key, like the :class:`GoodputFunction` it stands
    for: an adaptive job's gradient statistics change at every epoch crossing, and
    building (and validating) a whole ``GoodputFunction`` each time cost more than the
    search. The function itself is built only when asked for (:meth:`Job.goodput_fn`), from
    the same inputs, so both give the same bits.
    """

    __slots__ = ("key", "perf", "sqr", "var", "init_batch_size", "init", "fn", "bounds", "choices", "speedups")

    def __init__(self, key, init_batch_size, previous):
        self.key, self.init_batch_size, self.fn = key, init_batch_size, None
        perf_params, grad_params = key
        # GoodputFunction's own checks, in its order (so the same error is raised first).
        if previous is not None and previous.key[0] == perf_params:
            perf = previous.perf
        else:
            perf = _check_perf_params(perf_params)
            perf.flags.writeable = False
        sqr, var = _check_grad_params(grad_params)
        if (
            previous is not None
            and previous.init_batch_size == init_batch_size
            and type(init_batch_size) is type(previous.init_batch_size)
        ):
            init = previous.init
        else:
            init = check_finite_scalar("init_batch_size", init_batch_size, low=0.0, low_open=True, high=MAX_BATCH)
        self.perf, self.sqr, self.var, self.init = perf, sqr, var, init
        # The search bounds by the application's limits (a typed application's change with the
        # GPU type): they depend on the initial batch size and those limits only, so one memo
        # serves all the models descended from one (a job's, or several jobs' sharing models).
        self.bounds = {} if previous is None else previous.bounds
        # Batch choices by the limits and placement asked: the model may serve several jobs.
        self.choices: dict = {}
        # Speedup functions by the application's limits: jobs sharing the model share one and
        # the table it fills (the policy asks for every job's table every round).
        self.speedups: dict = {}

    def goodput_fn(self) -> GoodputFunction:
        if self.fn is None:
            # The constructor's checks ran in __init__, on the same arguments.
            self.fn = GoodputFunction._from_checked(self.perf, self.sqr, self.var, self.init, self.init_batch_size)
        return self.fn

    def best_config(self, app, num_nodes, num_replicas, key=None) -> tuple:
        """``goodput_fn().optimize(...)`` as :meth:`Job.update_local_bsz` asks it: ``(atomic, accum)``.

        ``key`` is :func:`_choice_key` of the arguments where the caller has it already (the
        crossings of one step ask the same question of one model after another).
        """
        limits = (app.max_batch_size, (app.min_local_bsz, app.max_local_bsz))
        if not (type(num_nodes) is int and type(num_replicas) is int and 1 <= num_nodes <= num_replicas):
            _, atomic, accum = self.goodput_fn().optimize(num_nodes, num_replicas, *limits, accumulation=True)
            return int(atomic), int(accum)
        if key is None:
            key = _choice_key(app, num_nodes, num_replicas)

        def search():
            # The bounds depend on the initial batch size too: the models sharing the memo may differ in it.
            init = self.init_batch_size
            bounds = remember(
                self.bounds,
                (init, type(init), key[0]),
                lambda: _search_bounds(self.init, init, *limits),
                _BOUNDS_KEPT,
            )
            # GoodputFunction.optimize's scalar path on the same validated inputs.
            _, atomic, accum = best_config(
                self.perf, self.sqr, self.var, self.init, num_nodes > 1, num_replicas, *bounds, True
            )
            return int(atomic), int(accum)

        return remember(self.choices, key, search, _CHOICES_KEPT)


def _choice_key(app, num_nodes, num_replicas) -> tuple:
    """Key of a batch choice in a model's memo: the application's limits, multi-node or not, and the replicas.

    For the plain ints ``1 <= num_nodes <= num_replicas`` that :meth:`_Model.best_config`
    searches (the choice depends on the node count only through ``num_nodes > 1``). The
    limits' types are part of the key: ``1 == True``, but only one of them is a valid limit.
    """
    limits = (app.max_batch_size, app.min_local_bsz, app.max_local_bsz)
    return (limits, tuple(map(type, limits))), num_nodes > 1, num_replicas
