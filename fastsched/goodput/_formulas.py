"""Scalar formulas of the Pollux goodput model, written once for both targets.

Every function here is a plain ``@jit(inline="always")`` (or ``@jit``) function of scalars
and of the parameter vector ``perf = (alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r,
gamma)``. The CPU kernels in :mod:`fastsched.goodput._kernels` and
:mod:`fastsched.goodput._batch_kernels` call them directly; the CUDA kernels in
:mod:`fastsched.cuda._goodput_kernels` compile the very same Python source as device functions
(:func:`fastsched.cuda._device.device`), so the two targets cannot drift.

Rules that keep a formula compilable for CUDA: scalars and 1-D array indexing only, the
``math`` module for transcendental functions, no allocation, no exceptions, no numpy array
functions.
"""

from __future__ import annotations

import math

from fastsched._jit import jit

GRID_POINTS = 50  # numpy.geomspace's default, as used by AdaptDL
EPS = 1e-8  # tolerance of the floor/ceil operations in the grid search
TINY = 1e-8  # the model's stand-in for "no communication"
MIN_NORMAL = 2.2250738585072014e-308  # smallest normal float64
# Largest batch size (total or atomic) the faces accept: batch sizes are sample counts, every
# count up to 2**53 is exact in float64, and the grid search's int64 atomic batch sizes and
# accumulation steps then cannot overflow.
MAX_BATCH = 2.0**53


@jit(inline="always")
def network_time(perf, multi_node, num_replicas):
    """Modelled all-reduce time: bottleneck link latency plus ring retrogression."""
    if multi_node:
        alpha = perf[2]
        beta = perf[3]
    elif num_replicas > 1.0:
        alpha = perf[4]
        beta = perf[5]
    else:
        alpha = TINY
        beta = TINY
    return alpha + beta * max(num_replicas - 2.0, TINY)


@jit(inline="always")
def accum_time(perf, atomic_bsz):
    """Time of one micro-step (forward and backward pass of ``atomic_bsz`` samples)."""
    return perf[0] + perf[1] * atomic_bsz


@jit(inline="always")
def optim_time(accum_pow, net_pow, inv_gamma):
    """p-norm overlap of compute and communication: ``(accum**g + net**g) ** (1/g)``."""
    return (accum_pow + net_pow) ** inv_gamma


@jit(inline="always")
def samples_per_second(num_replicas, atomic_bsz, accum_steps, accum_t, optim_t):
    """Throughput given the micro-step time and the optimizer-step time."""
    return num_replicas * atomic_bsz * (accum_steps + 1.0) / (accum_steps * accum_t + optim_t)


@jit(inline="always")
def step_throughput(perf, accum_t, net_pow, num_replicas, atomic_bsz, accum_steps):
    """Return samples per second given the micro-step time and ``network_time ** gamma``."""
    gamma = perf[6]
    return samples_per_second(
        num_replicas, atomic_bsz, accum_steps, accum_t, optim_time(accum_t**gamma, net_pow, 1.0 / gamma)
    )


@jit(inline="always")
def efficiency(grad_sqr, grad_var, init_bsz, batch_size):
    """Statistical efficiency of ``batch_size`` relative to ``init_bsz``."""
    scale = batch_size / init_bsz
    # gain / scale with gain = (var + sqr) / (var / scale + sqr), rearranged so that no
    # intermediate under- or overflows for extreme batch sizes (equal up to rounding).
    num = grad_var + grad_sqr
    denom = grad_var + grad_sqr * scale
    if MIN_NORMAL <= num < math.inf and MIN_NORMAL <= denom < math.inf:
        return num / denom
    # Gradient statistics near the ends of float64 (found by the CUDA-vs-reference tests) make
    # a sum overflow or go subnormal: divide both by the larger statistic first.
    big = max(grad_var, grad_sqr)
    if big > 0.0:
        v = grad_var / big
        q = grad_sqr / big
        return (v + q) / (v + q * scale)
    return 1.0 / scale


@jit(inline="always")
def point_value(perf, grad_sqr, grad_var, init_bsz, multi_node, num_replicas, atomic_bsz, accum_steps, with_eff):
    """Throughput (or goodput when ``with_eff``) of one configuration, all floats."""
    gamma = perf[6]
    at = accum_time(perf, atomic_bsz)
    ot = optim_time(at**gamma, network_time(perf, multi_node, num_replicas) ** gamma, 1.0 / gamma)
    v = samples_per_second(num_replicas, atomic_bsz, accum_steps, at, ot)
    if with_eff:
        v *= efficiency(grad_sqr, grad_var, init_bsz, num_replicas * atomic_bsz * (accum_steps + 1.0))
    return v


@jit(inline="always")
def grid_batch_size(i, start, log_start, step, max_bsz):
    """Total batch size of grid point ``i`` (numpy.geomspace's spacing, exact end points)."""
    if i == 0:
        return start
    if i == GRID_POINTS - 1:
        return max_bsz
    return 10.0 ** (i * step + log_start)


@jit(inline="always")
def grid_candidate(local_bsz, num_replicas, init_bsz, max_atomic, accumulation):
    """AdaptDL's (atomic_bsz, accum_steps) rule for a per-replica batch, both as floats."""
    if accumulation:
        # Saturated to [0, MAX_BATCH]: a batch below EPS x max_atomic gave accum = -1 (an infinite
        # atomic batch), a max_atomic below 1 an int64 overflow; neither bound alters a valid point.
        accum = min(max(math.ceil(local_bsz / max_atomic - EPS) - 1.0, 0.0), MAX_BATCH)
        if num_replicas == 1 and local_bsz > init_bsz + EPS:
            accum = max(accum, 1.0)
        atomic = math.ceil(local_bsz / (accum + 1.0) - EPS) * 1.0
    else:
        accum = 0.0
        atomic = init_bsz if num_replicas == 1 else math.ceil(local_bsz - EPS) * 1.0
    return atomic, accum


@jit
def best_config(
    perf,
    grad_sqr,
    grad_var,
    init_bsz,
    multi_node,
    num_replicas,
    max_bsz,
    min_atomic,
    max_atomic,
    accumulation,
):
    """Batch-size grid search for one configuration.

    Walks the 50 geometrically spaced total batch sizes between
    ``max(init_bsz, min_atomic * num_replicas)`` and ``max_bsz`` exactly as
    ``numpy.geomspace`` spaces them, derives (atomic_bsz, accum_steps) per point with
    AdaptDL's rules, zeroes the goodput of points whose atomic batch size falls outside
    ``[min_atomic, max_atomic]`` and keeps a running argmax (first maximum wins, as
    ``numpy.argmax``). Returns ``(goodput, atomic_bsz, accum_steps)``.
    """
    r = float(num_replicas)
    gamma = perf[6]
    net_pow = network_time(perf, multi_node, r) ** gamma
    start = max(init_bsz, min_atomic * r)
    log_start = math.log10(start)
    step = (math.log10(max_bsz) - log_start) / (GRID_POINTS - 1)
    best_goodput = -1.0
    best_atomic = 0
    best_accum = 0
    for i in range(GRID_POINTS):
        bsz = grid_batch_size(i, start, log_start, step, max_bsz)
        atomic, accum = grid_candidate(bsz / r, num_replicas, init_bsz, max_atomic, accumulation)
        if min_atomic <= atomic <= max_atomic:
            tput = step_throughput(perf, accum_time(perf, atomic), net_pow, r, atomic, accum)
            goodput = tput * efficiency(grad_sqr, grad_var, init_bsz, r * atomic * (accum + 1.0))
        else:
            goodput = 0.0
        if goodput > best_goodput:
            best_goodput = goodput
            best_atomic = int(atomic)
            best_accum = int(accum)
    # Every point NaN (a model at the ends of float64): no valid batch size, goodput 0.
    return max(best_goodput, 0.0), best_atomic, best_accum


# --------------------------------------------------------------------------------------
# Status codes and the configuration checks, one table for both targets
# --------------------------------------------------------------------------------------
# The CPU kernels return these codes; the CUDA kernels record them (packed with the index of
# the first failing element, ``index * 8 + code``: every error code is below 8) and the CUDA
# faces read them back unchanged.
OK = 0
BAD_NODES = 1  # num_nodes < 1, > num_replicas, or not finite
BAD_REPLICAS = 2  # num_replicas < 1 or not finite
BAD_ATOMIC = 3  # atomic_bsz <= 0 or not finite
BAD_ACCUM = 4  # accum_steps < 0 or not finite
BAD_BATCH = 5  # total batch below init_batch_size
MISSING = 6  # a table entry is not filled yet
ZERO_MISMATCH = 7  # num_nodes == 0 but num_replicas > 0, or vice versa
OVERFLOW = 8  # inputs so large that the model overflows float64


@jit(inline="always")
def config_status(num_nodes, num_replicas, atomic_bsz, accum_steps, check_batch, init_bsz):
    """Status of one configuration (floats): ``OK`` or the first failing field's code.

    Fields are checked in the order replicas, nodes, atomic batch size, accumulation steps,
    total batch (the last only with ``check_batch``); NaN fails every check.
    """
    if not (num_replicas >= 1.0 and num_replicas < math.inf):
        return BAD_REPLICAS
    if not (num_nodes >= 1.0 and num_nodes <= num_replicas):
        return BAD_NODES
    if not (atomic_bsz > 0.0 and atomic_bsz < math.inf):
        return BAD_ATOMIC
    if not (accum_steps >= 0.0 and accum_steps < math.inf):
        return BAD_ACCUM
    if check_batch and num_replicas * atomic_bsz * (accum_steps + 1.0) < init_bsz:
        return BAD_BATCH
    return OK


@jit(inline="always")
def pair_status(num_nodes, num_replicas):
    """Status of one speedup query ``(nodes, replicas)``: ``OK`` or the first failing rule's code.

    Replicas must be >= 0, nodes in ``0..replicas``, and nodes 0 exactly when replicas are 0.
    """
    if num_replicas < 0:
        return BAD_REPLICAS
    if num_nodes < 0 or num_nodes > num_replicas:
        return BAD_NODES
    if (num_nodes == 0) != (num_replicas == 0):
        return ZERO_MISMATCH
    return OK
