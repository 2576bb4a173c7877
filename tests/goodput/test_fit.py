"""fit_perf_params: recovery of known parameters, special cases, and the analytic gradient."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from fastsched import PerfParams, fit_perf_params
from fastsched.goodput import _compat
from fastsched.goodput._fit_kernels import objective_and_grad
from fastsched.goodput.fit import fit_objective

TRUE = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)


def observe(params, nodes, replicas, atomic):
    """Noise-free step times predicted by the model itself."""
    accum = _compat._predict_accum_time(params, atomic)
    net = _compat._predict_network_time(params, nodes, replicas)
    optim = np.exp(_compat._predict_log_optim_time(params, accum, net))
    return accum, optim


def naive_objective(p, nodes, replicas, atomic, t_accum, t_optim):
    p = PerfParams(*p)
    accum = _compat._predict_accum_time(p, atomic)
    log_optim = _compat._predict_log_optim_time(p, accum, _compat._predict_network_time(p, nodes, replicas))
    err1 = _compat._rmse(np.log(accum), np.log(t_accum))
    err2 = _compat._rmse(log_optim, np.log(t_optim))
    return err1 + err2 + 1e-3 * (p.gamma - 1) ** 2 + 1e-2 * ((p.beta_n / p.alpha_n) ** 2 + (p.beta_r / p.alpha_r) ** 2)


def test_recovers_known_parameters_from_noise_free_data():
    rng = np.random.default_rng(0)
    nodes = rng.integers(1, 5, 40)
    replicas = nodes * rng.integers(1, 5, 40)
    atomic = rng.integers(32, 512, 40)
    t_accum, t_optim = observe(TRUE, nodes, replicas, atomic)
    fit = fit_perf_params(nodes, replicas, atomic, t_accum, t_optim)
    # The objective at the fit is at most the objective at the truth (which is only the
    # regularisers, since the data is noise-free).
    assert (
        fit_objective(fit, nodes, replicas, atomic, t_accum, t_optim)
        <= fit_objective(TRUE, nodes, replicas, atomic, t_accum, t_optim) + 1e-9
    )
    pred_accum, pred_optim = observe(fit, nodes, replicas, atomic)
    assert np.allclose(pred_accum, t_accum, rtol=2e-2)
    assert np.allclose(pred_optim, t_optim, rtol=5e-2)


def test_objective_matches_numpy_and_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    nodes = rng.integers(1, 4, 25).astype(float)
    replicas = nodes * rng.integers(1, 4, 25)
    atomic = rng.integers(16, 256, 25).astype(float)
    t_accum, t_optim = observe(TRUE, nodes, replicas, atomic)
    t_accum = t_accum * rng.uniform(0.9, 1.1, 25)
    t_optim = t_optim * rng.uniform(0.9, 1.1, 25)
    la, lo = np.log(t_accum), np.log(t_optim)
    for _ in range(20):
        p = np.concatenate([rng.uniform(1e-3, 0.5, 6), rng.uniform(1.0, 6.0, 1)])
        grad = np.empty(7)
        f = objective_and_grad(p, nodes, replicas, atomic, la, lo, grad)
        assert f == pytest.approx(naive_objective(p, nodes, replicas, atomic, t_accum, t_optim), rel=1e-10)
        numeric = approx_fprime(p, lambda x: naive_objective(x, nodes, replicas, atomic, t_accum, t_optim), 1e-7)
        assert np.allclose(grad, numeric, rtol=1e-4, atol=1e-5)


def test_single_batch_size_pins_alpha_c():
    nodes = np.array([1, 1, 2])
    replicas = np.array([1, 2, 4])
    atomic = np.array([64, 64, 64])
    t_accum, t_optim = observe(TRUE, nodes, replicas, atomic)
    fit = fit_perf_params(nodes, replicas, atomic, t_accum, t_optim)
    assert fit.alpha_c == pytest.approx(np.mean(t_accum) / 2)


def test_single_node_applies_prior_and_pins_inter_node_terms():
    nodes = np.array([1, 1, 1, 1])
    replicas = np.array([1, 2, 3, 4])
    atomic = np.array([32, 64, 128, 256])
    t_accum, t_optim = observe(TRUE, nodes, replicas, atomic)
    fit = fit_perf_params(nodes, replicas, atomic, t_accum, t_optim)
    assert fit.alpha_n >= 1.1 * fit.alpha_r - 1e-15
    assert fit.beta_n >= 1.1 * fit.beta_r - 1e-15


def test_at_most_two_replicas_pins_retrogression():
    nodes = np.array([1, 1, 2, 2])
    replicas = np.array([1, 2, 2, 2])
    atomic = np.array([32, 64, 128, 256])
    t_accum, t_optim = observe(TRUE, nodes, replicas, atomic)
    fit = fit_perf_params(nodes, replicas, atomic, t_accum, t_optim)
    assert fit.beta_n == pytest.approx(1e-8)
    assert fit.beta_r == pytest.approx(1e-8)
    assert 1.0 <= fit.gamma <= 10.0


def test_single_observation():
    fit = fit_perf_params([1], [1], [128], [0.5], [0.55])
    assert all(np.isfinite(fit)) and fit.alpha_c == pytest.approx(0.25)


@pytest.mark.parametrize(
    "args, match",
    [
        (([], [], [], [], []), "empty"),
        (([1, 1], [1], [8, 8], [0.1, 0.1], [0.2, 0.2]), "equal lengths"),
        (([1], [1], [8], [0.0], [0.2]), "accum_step_time"),
        (([1], [1], [8], [0.1], [np.nan]), "optim_step_time"),
        (([0], [1], [8], [0.1], [0.2]), "num_nodes"),
        (([1], [1], [-8], [0.1], [0.2]), "atomic_bsz"),
    ],
)
def test_bad_observations_raise(args, match):
    with pytest.raises(ValueError, match=match):
        fit_perf_params(*args)


@pytest.mark.parametrize("noise", [0.001, 0.01])
def test_seed_fit_on_noisy_model_data(noise):
    """AdaptDL's fit_test, ported: 1000 noisy observations of a known model (seeded here).

    As upstream, nodes may exceed replicas in these synthetic observations.
    """
    import fastsched.goodput as goodput

    rng = np.random.RandomState(7)
    size = (1000,)
    nodes = rng.randint(low=1, high=11, size=size)
    replicas = rng.randint(low=1, high=nodes + 1, size=size)
    local_bsz = rng.randint(32, 1024, size=size)
    params = goodput.PerfParams(0.1, 0.01, 0.5, 1.0, 1e-6, 1e-6, 1.2)
    accum_step_time = goodput._predict_accum_time(params, local_bsz) + np.maximum(rng.normal(0, noise, size), 0.0)
    network_time = goodput._predict_network_time(params, nodes, replicas) + np.maximum(rng.normal(0, noise, size), 0.0)
    optim_step_time = (accum_step_time**params.gamma + network_time**params.gamma) ** (1 / params.gamma)
    result = goodput.fit_perf_params(nodes, replicas, local_bsz, accum_step_time, optim_step_time)
    loss_result = goodput._obj_fn(result, nodes, replicas, local_bsz, accum_step_time, optim_step_time)
    loss_true = goodput._obj_fn(params, nodes, replicas, local_bsz, accum_step_time, optim_step_time)
    assert abs(loss_result - loss_true) < 0.1 * loss_true or loss_result < loss_true
