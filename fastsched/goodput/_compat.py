"""AdaptDL's private model helpers, for code and tests written against ``adaptdl.goodput``.

AdaptDL's own tests call ``_predict_accum_time``, ``_predict_network_time``,
``_predict_log_optim_time`` and ``_obj_fn`` directly; these are plain numpy versions with
the same signatures. fastsched itself uses the kernels instead.
"""

from __future__ import annotations

import numpy as np

from fastsched.goodput.model import PerfParams


def _predict_accum_time(params, atomic_bsz):
    params = PerfParams(*params)
    return params.alpha_c + params.beta_c * np.asarray(atomic_bsz, dtype=np.float64)


def _predict_network_time(params, num_nodes, num_replicas):
    params = PerfParams(*params)
    num_nodes = np.asarray(num_nodes)
    num_replicas = np.asarray(num_replicas)
    conds = [num_nodes > 1, num_replicas > 1]
    bottleneck = np.select(conds, [params.alpha_n, params.alpha_r], 1e-8)
    retrogress = np.select(conds, [params.beta_n, params.beta_r], 1e-8)
    return bottleneck + retrogress * np.maximum(num_replicas - 2, 1e-8)


def _predict_log_optim_time(params, accum_time, network_time):
    gamma = PerfParams(*params).gamma
    return np.log(accum_time**gamma + network_time**gamma) / gamma


def _rmse(pred, true):
    return np.sqrt(((pred - true) ** 2).mean())


def _obj_fn(params, num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time):
    from fastsched.goodput.fit import fit_objective

    return fit_objective(params, num_nodes, num_replicas, atomic_bsz, accum_step_time, optim_step_time)
