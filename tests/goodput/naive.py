"""Plain numpy reference of the goodput model, written from the seed's semantics.

Deliberately simple and unoptimised: one configuration at a time, explicit loops, numpy's own
geomspace. The kernels are compared against these on random inputs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def network_time(perf, num_nodes, num_replicas):
    if num_nodes > 1:
        alpha, beta = perf[2], perf[3]
    elif num_replicas > 1:
        alpha, beta = perf[4], perf[5]
    else:
        alpha, beta = 1e-8, 1e-8
    return alpha + beta * max(num_replicas - 2, 1e-8)


def throughput(perf, num_nodes, num_replicas, atomic_bsz, accum_steps):
    accum_time = perf[0] + perf[1] * atomic_bsz
    net = network_time(perf, num_nodes, num_replicas)
    gamma = perf[6]
    optim_time = math.exp(math.log(accum_time**gamma + net**gamma) / gamma)
    total = accum_steps * accum_time + optim_time
    return num_replicas * atomic_bsz * (accum_steps + 1) / total


def efficiency(grad, init_bsz, batch_size):
    """``(var + sqr) / (var * B0/B + sqr) * B0/B`` in exact rational arithmetic, rounded once.

    Exact, so it is a reference for extreme gradients too (1e-320, 1e308), where any float
    arrangement of the formula may under- or overflow in an intermediate.
    """
    sqr, var = (Fraction(float(x)) for x in grad)
    scale = Fraction(float(batch_size)) / Fraction(float(init_bsz))
    denom = var / scale + sqr
    gain = (var + sqr) / denom if denom > 0 else Fraction(1)
    return float(gain / scale)


def goodput(perf, grad, init_bsz, num_nodes, num_replicas, atomic_bsz, accum_steps):
    bsz = num_replicas * atomic_bsz * (accum_steps + 1)
    return throughput(perf, num_nodes, num_replicas, atomic_bsz, accum_steps) * efficiency(grad, init_bsz, bsz)


def optimize_one(perf, grad, init_bsz, num_nodes, num_replicas, max_bsz=None, bsz_range=None, accumulation=False):
    """Grid search for one configuration: returns (goodput, atomic_bsz, accum_steps)."""
    if max_bsz is None:
        max_bsz = init_bsz
    lo, hi = bsz_range if bsz_range is not None else (None, None)
    min_atomic = lo or 1
    max_atomic = hi or max_bsz
    start = max(init_bsz, min_atomic * num_replicas)
    eps = 1e-8
    candidates = []
    for bsz in np.geomspace(start, max_bsz, 50):
        local = bsz / num_replicas
        if accumulation:
            steps = math.ceil(local / max_atomic - eps) - 1
            if num_replicas == 1 and local > init_bsz + eps:
                steps = max(steps, 1)
            atomic = math.ceil(local / (steps + 1) - eps)
        else:
            steps = 0
            atomic = init_bsz if num_replicas == 1 else math.ceil(local - eps)
        if min_atomic <= atomic <= max_atomic:
            g = goodput(perf, grad, init_bsz, num_nodes, num_replicas, atomic, steps)
        else:
            g = 0.0
        candidates.append((g, int(atomic), int(steps)))
    best = int(np.argmax([c[0] for c in candidates]))
    return candidates[best]
