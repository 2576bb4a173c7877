"""GA fitness on the CUDA path against a plain reference, every fairness mode, per-job penalties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastsched.cuda as fc
from fastsched.policy._ga import fitness as G
from tests.cuda._support import TPB, naive_fitness, random_population, requires_cuda

pytestmark = [requires_cuda, pytest.mark.cudasim]

FEW = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
MODES = [(G.SUM, 1.0), (G.POWER, -1.0), (G.POWER, 0.5), (G.POWER, 2.0), (G.GEOMETRIC, 0.0)]
MODES += [(G.POWER_SHIFTED, -1.0), (G.POWER_SHIFTED, 0.5)]


@FEW
@given(st.integers(0, 2**32 - 1), st.sampled_from(MODES), st.booleans())
def test_fitness_matches_reference(seed, mode_p, per_job):
    rng = np.random.default_rng(seed)
    njobs, nnodes = 5, 6
    off, node, cnt, b_off, b_node, b_cnt = random_population(rng, 23, njobs, nnodes)
    table = rng.uniform(0.0, 4.0, (njobs, 4, 13))
    table[:, 0, :] = 0.0
    table[:, :, 0] = 0.0
    scale = rng.uniform(0.1, 3.0, njobs)
    penalty = rng.uniform(0.0, 0.9, njobs) if per_job else float(rng.uniform(0.0, 0.5))
    mode, p = mode_p
    args = (off, node, cnt, table, scale, b_off, b_node, b_cnt, penalty, mode, p)
    obj, size = fc.evaluate_population(*args, threads_per_block=TPB)
    for i in range(off.shape[0]):
        want_o, want_s = naive_fitness(off, node, cnt, i, table, scale, b_off, b_node, b_cnt, penalty, mode, p)
        assert size[i] == want_s
        np.testing.assert_allclose(obj[i], want_o, rtol=1e-12, atol=0)
    # And the CPU kernel agrees (same formulas, same source).
    c_obj, c_size = np.empty(off.shape[0]), np.empty(off.shape[0], np.int64)
    cpu_pen = np.asarray(penalty, dtype=np.float64) if per_job else penalty
    G.evaluate_population(off, node, cnt, table, scale, b_off, b_node, b_cnt, cpu_pen, mode, p, c_obj, c_size)
    np.testing.assert_allclose(obj, c_obj, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(size, c_size)
