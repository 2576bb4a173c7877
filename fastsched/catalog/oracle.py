"""Throughput oracle: (model, GPU type, placement, local batch) -> (step time, sync time).

The step of a data-parallel job on ``n`` GPUs over ``k`` nodes, at ``b`` samples per GPU:

* **host**: ``kernels x HOST_S_PER_KERNEL``: eager frameworks launch each kernel from Python;
* **GPU**: ``3 F b / (peak x e) + (k A b + 2 S P) / (HBM x e)``: forward and backward FLOPs
  at the model's precision peak (the share ``fp32_share`` of them, in operators the framework
  runs on the CUDA cores whatever the model's precision, at the FP32 peak), plus the memory traffic of the activations and of the
  optimizer's pass over its state, both at a per-type efficiency ``e``
  (:data:`DEFAULT_EFFICIENCY`, or fitted by :func:`calibrate`). Each activation byte moves
  ``k`` = :data:`ACTIVATION_PASSES` = 6 times: written, and read by the next layer, in the
  forward pass; read again, its gradient written and read by the layer below, in the backward
  pass; and one more read by the normalisation layers' two-pass statistics. A recurrent
  network adds ``serial_kernels x`` :data:`GPU_KERNEL_S` (4 µs): its time steps' kernels wait
  for each other whatever the batch. A model of variable-length samples padded to the batch's
  longest (``length_spread`` > 0) pays all of this at the expected longest of the ``n b``
  samples of the step's ``n`` GPUs over the mean length (:mod:`fastsched.catalog._padding`):
  the replicas wait for the slowest;
* host and GPU overlap partly (the host queues kernels ahead of the GPU): compute takes
  ``sqrt(host^2 + GPU^2)``, between the serial sum and the fully hidden maximum;
* **floor**: a machine's fixed time per step whatever the model (the data loader's hand-off,
  the framework's per-step bookkeeping), ``floor_s`` (default 0), as the per-type number
  :func:`calibrate_floors` fits. It **gates** the step, ``max(floor, compute + sync)``: work
  shorter than the floor, the all-reduce included, waits for it (azure's cifar10 rows hold
  92-109 ms at batch 32 on 1 to 15 GPUs while their sync grows from 1 to 77 ms);
* **all-reduce**: a ring over the ``n`` GPUs of the gradient bytes ``G``:
  ``fixed + 2 (n-1)/n x G / B + 2 (n-1) x latency``, ``B`` the intra-node link within one
  node, else the slower of the link and the node's network, both at :data:`LINK_EFFICIENCY`;
* **sync time**: the all-reduce less the window that hides it, never less than the last
  gradient bucket: the share ``overlap`` (:data:`OVERLAP`) of the GPU's backward pass, at most
  the time the GPU adds to the host's (``compute - sqrt(host^2 + floor^2)``: while the host
  sets the pace the GPU's work adds little wall time to hide in); the step is compute plus
  sync (the optimizer waits for the reduced gradients, and the host for the optimizer), at
  least the floor.

A :class:`StepAdjust` (what a bootstrap profile measures, :mod:`fastsched.catalog.bootstrap`)
scales the host and GPU parts, multiplies the compute by ``1 + contention x (g - 1) / (G - 1)``
on a placement whose fullest node uses ``g`` of its ``G`` GPUs (the GPUs of one node contend
for its CPUs, memory and PCIe; spread placements pay their fullest node's), and prices a
one-node all-reduce at least ``node_sync_s x (g - 1) / (G - 1)`` (the node's GPUs sharing one
path, as the full-node row measured it), and adds to the ring of ``n > 1`` GPUs, one node or
several, a measured latency per ring step: ``2 (n - 1) x hop_latency_s x (g - 1) / (G - 1)``,
the latency term of the alpha-beta model of a ring all-reduce (Thakur, Rabenseifner and Gropp
2005; Patarasuk and Yuan 2009), growing with the GPUs that share the fullest node's host (0 for
one GPU per node). The defaults change nothing.

PyTorch's DistributedDataParallel all-reduces the gradients in buckets while the backward
pass still runs, so :data:`OVERLAP` is 1. The stack of the Sia traces (2021 PyTorch with
AdaptDL, whose trainer is a DistributedDataParallel) does so too: their measured sync, timed
from the last local gradient to the reduced gradients, is that exposed tail, and it shrinks as
the batch (and the backward pass) grows at the same bytes. ``overlap=0`` prices a stack that
reduces only after the backward pass.

The two global constants, :data:`HOST_S_PER_KERNEL` (100 µs) and :data:`LINK_EFFICIENCY`
(0.1), were chosen on the Sia traces' cifar10 rows (the calibration application; 2021-era
PyTorch with AdaptDL's per-step statistics): they describe that software, not the hardware,
and are arguments to override for other stacks (``benchmarks/results/oracle.md``).

Models too large for data parallelism (a decoder whose state does not fit one GPU) are priced
by the cost model's strategy search instead: the best (tensor, pipeline, data, schedule, ZeRO)
plan on the placement's GPUs, with the data-parallel communication as the sync time. Without an
efficiency (the default) the search prices each matrix multiply by its shape with the GPU type's
constants (:meth:`fastsched.costmodel.Cluster.from_gpu` without an efficiency, the model held
against published training runs in ``benchmarks/results/costmodel.md``); an efficiency given
(or calibrated) prices every FLOP at that share of the datasheet peak instead.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from fastsched.catalog._padding import padded_ratio
from fastsched.catalog._step_adjust import MAX_FLOOR_S, StepAdjust, _check_adjust, _node_factor
from fastsched.catalog.gpus import GpuType, gpu_type
from fastsched.catalog.models import ModelSpec, model_spec

__all__ = [
    "DEFAULT_EFFICIENCY",
    "LINK_EFFICIENCY",
    "HOST_S_PER_KERNEL",
    "StepTime",
    "step_time",
    "max_local_bsz",
    "calibrate",
    "calibrate_floors",
    "Calibration",
    "fits_data_parallel",
    "StepAdjust",
    "host_share",
    "HOST_BOUND_RATIO",
    "flat_efficiency",
]

#: Fraction of the datasheet compute and memory peaks reached without calibration.
DEFAULT_EFFICIENCY = 0.4
#: Fraction of a link's datasheet bandwidth a ring all-reduce reaches (NCCL's bus bandwidth).
LINK_EFFICIENCY = 0.1
#: Host seconds per launched kernel (eager PyTorch dispatch and bookkeeping).
HOST_S_PER_KERNEL = 100e-6
#: Per-message latency of a ring step inside a node and across nodes, seconds.
LATENCY_S = (10e-6, 30e-6)
#: Gradient bucket bytes (PyTorch DDP's default 25 MB): the last one is never overlapped.
BUCKET_BYTES = 25e6
#: Fixed seconds of one step's gradient synchronisation on several GPUs, whatever its size.
ALLREDUCE_FIXED_S = 0.0
#: Share of the backward pass that hides the all-reduce (0: none; 1: all, DDP's bucketed overlap).
OVERLAP = 1.0
#: Seconds a dependent kernel takes on the GPU at least (launch and completion of a tiny kernel).
GPU_KERNEL_S = 4e-6
#: Fewer multiplies of Winograd F(2x2, 3x3) than a direct 3x3 convolution (Lavin & Gray 2016).
WINOGRAD_GAIN = 2.25
#: Times a step moves each activation byte through memory (see the module docstring).
ACTIVATION_PASSES = 6.0
#: Memory a framework keeps for itself (CUDA context, allocator slack), GiB.
RESERVED_GIB = 1.5
#: Host time at least this share of the GPU time: the step is host-bound, its price low-confidence.
HOST_BOUND_RATIO = 0.5


class StepTime(NamedTuple):
    """Seconds of one optimizer step and its exposed gradient synchronisation.

    Examples
    --------
    >>> StepTime(0.2, 0.05).step
    0.2
    """

    step: float
    sync: float


def _resolve(model, gpu, catalog=None):
    m = model if isinstance(model, ModelSpec) else model_spec(model)
    g = gpu if isinstance(gpu, GpuType) else gpu_type(gpu, catalog)
    return m, g


def _placement(placement):
    p = tuple(int(x) for x in np.atleast_1d(placement) if int(x) != 0)
    if not p or min(p) < 0:
        raise ValueError(f"placement must hold GPU counts >= 0 with at least one > 0, got {placement!r}")
    return p


def _check_eff(name, e, high=1.0):
    if isinstance(e, bool) or not isinstance(e, (int, float)) or not (0.0 < e <= high):
        raise ValueError(f"{name} must be in (0, {high:g}], got {e!r}")
    return float(e)


def _check_floor(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= v <= MAX_FLOOR_S):
        raise ValueError(f"floor_s must be in [0, {MAX_FLOOR_S:g}] seconds, got {v!r}")
    return float(v)


def _check_overlap(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= v <= 1.0):
        raise ValueError(f"overlap must be in [0, 1], got {v!r}")
    return float(v)


def allreduce_seconds(grad_bytes, gpu: GpuType, placement, link_efficiency=None, fixed_s=None) -> float:
    """Seconds of a ring all-reduce of ``grad_bytes`` over ``placement`` (GPUs per node).

    Examples
    --------
    >>> g = gpu_type("h100")
    >>> allreduce_seconds(1e9, g, (1,)), allreduce_seconds(1e9, g, (8,)) < allreduce_seconds(1e9, g, (4, 4))
    (0.0, True)
    """
    p = _placement(placement)
    n, k = sum(p), len(p)
    if n == 1:
        return 0.0
    bw = gpu.intra_gbps if k == 1 else min(gpu.intra_gbps, gpu.network_gbps)
    lat = LATENCY_S[0] if k == 1 else LATENCY_S[1]
    fixed = ALLREDUCE_FIXED_S if fixed_s is None else fixed_s
    link_efficiency = LINK_EFFICIENCY if link_efficiency is None else link_efficiency
    return fixed + 2.0 * (n - 1) / n * grad_bytes / (bw * 1e9 * link_efficiency) + 2.0 * (n - 1) * lat


def _dp_parts(m: ModelSpec, g: GpuType, b, eff, host_s, n=1):
    """``(host, gpu, backward)`` seconds of one step at per-GPU batches ``b`` on ``n`` GPUs (arrays)."""
    b = np.asarray(b, dtype=np.float64)
    peak = g.peak_tflops(m.precision) * 1e12 * eff
    mem = g.memory_gbps * 1e9 * eff
    flops = m.flops_per_sample * (1.0 - m.winograd_share + m.winograd_share / WINOGRAD_GAIN)
    # Operators the framework runs on the CUDA cores (cuDNN's recurrent kernels) at the FP32 peak.
    per_flop = (1.0 - m.fp32_share) / peak + m.fp32_share / (g.fp32_tflops * 1e12 * eff)
    chain = m.serial_kernels * GPU_KERNEL_S / 3.0  # forward's third of the dependent kernels
    per_sample = flops * b * per_flop + ACTIVATION_PASSES / 3.0 * m.activation_bytes * b / mem
    if m.length_spread:
        # Samples are padded to their batch's longest, and the replicas wait for the slowest GPU:
        # the padded layers and the chain of time steps run at the longest of the step's n b
        # samples (at most the data set's longest); packed layers pay the mean length.
        r = padded_ratio(np.minimum(n * b, m.samples_per_epoch), m.length_spread)
        per_sample = per_sample * (1.0 - m.padded_share + m.padded_share * r)
        chain = chain * r
    fwd = per_sample + chain
    opt = 2.0 * m.state_bytes_per_param * m.parameters / mem
    return m.kernels * host_s, 3.0 * fwd + opt, 2.0 * fwd


def _combine(host, gpu, bwd, ar, last_frac, overlap=None, floor=0.0, contention=1.0):
    """Step and exposed sync from the parts (see the module docstring); ``contention`` multiplies the compute."""
    ov = OVERLAP if overlap is None else overlap
    # The host queues kernels ahead of the GPU: neither fully serial (sum) nor fully hidden
    # (max); the 2-norm sits between the two.
    compute = np.hypot(host, gpu) * contention
    # The backward pass hides the all-reduce for as long as the GPU runs it, but no longer than
    # the GPU adds to the host's own time: while the host sets the pace, more GPU work adds
    # little wall time and so little room to hide in (and the step never shrinks as it grows).
    window = np.minimum(ov * bwd * contention, compute - host * contention)
    sync = np.maximum(ar * last_frac, ar - window)
    # The exposed sync adds to the compute: the optimizer step waits for the reduced
    # gradients, and the next step's kernels for the optimizer. A per-step floor gates the
    # whole: shorter work waits for it.
    return np.maximum(floor, compute + sync), sync


def _adjusted_allreduce(grad, g: GpuType, p, link_eff, adjust):
    """Return the datasheet ring, corrected by a bootstrap's node terms (see :class:`StepAdjust`).

    A one-node placement's ring takes at least the node's shared path, ``node_sync_s (g - 1)
    / (G - 1)``; every placement of ``n > 1`` GPUs adds the measured latency of its ``2 (n -
    1)`` ring steps, ``hop_latency_s (g - 1) / (G - 1)`` each, ``g`` the fullest node's GPUs.
    """
    ar = allreduce_seconds(grad, g, p, link_eff)
    n = sum(p)
    if adjust is None or n == 1:
        return ar
    share = _node_factor(g.gpus_per_node, max(p))
    if adjust.node_sync_s and len(p) == 1:
        ar = max(ar, adjust.node_sync_s * share)
    return ar + 2.0 * (n - 1) * adjust.hop_latency_s * share


def _dp_times(m: ModelSpec, g: GpuType, p, b, eff, link_eff, host_s=None, overlap=None, floor=0.0, adjust=None):
    host, gpu, bwd = _dp_parts(m, g, b, eff, HOST_S_PER_KERNEL if host_s is None else host_s, sum(p))
    k = 1.0
    if adjust is not None:
        host, gpu, bwd = host * adjust.host_scale, gpu * adjust.gpu_scale, bwd * adjust.gpu_scale
        k = 1.0 + adjust.contention * _node_factor(g.gpus_per_node, max(p))
    grad = m.grad_bytes_per_param * m.parameters
    ar = _adjusted_allreduce(grad, g, p, link_eff, adjust)
    return _combine(host, gpu, bwd, ar, min(1.0, BUCKET_BYTES / grad), overlap, floor, k)


def fits_data_parallel(model, gpu, catalog=None) -> bool:
    """Whether one sample per GPU fits with a full replica of the model's state.

    Examples
    --------
    >>> fits_data_parallel("bert", "t4"), fits_data_parallel("gpt-13b", "h100")
    (True, False)
    """
    m, g = _resolve(model, gpu, catalog)
    return _max_dp_batch(m, g) >= 1


def _max_dp_batch(m: ModelSpec, g: GpuType) -> int:
    free = (g.memory_gib - RESERVED_GIB) * 2.0**30 - m.state_bytes_per_param * m.parameters
    return int(max(free, 0.0) // m.held_bytes)


def max_local_bsz(model, gpu, catalog=None) -> int:
    """Largest per-GPU batch that fits the GPU's memory with data parallelism (0: none fits).

    Examples
    --------
    >>> max_local_bsz("imagenet", "a100-80gb") > max_local_bsz("imagenet", "t4") > 0
    True
    """
    m, g = _resolve(model, gpu, catalog)
    return _max_dp_batch(m, g)


def _searched(m: ModelSpec, g: GpuType) -> bool:
    """Whether the strategy search prices ``m`` on ``g`` (a decoder whose state does not fit one GPU)."""
    return m.transformer is not None and _max_dp_batch(m, g) < 1


def flat_efficiency(model, gpu, efficiency=None, catalog=None):
    """Return the share of the peaks every FLOP of ``model`` on ``gpu`` is priced at (``None``: the GEMM model).

    ``efficiency=None`` (the default of :func:`step_time`) is :data:`DEFAULT_EFFICIENCY` for a
    data-parallel model and, for a decoder the strategy search prices, the GEMM model (each
    matrix multiply by its shape, :meth:`fastsched.costmodel.Cluster.from_gpu` without an
    efficiency), which has no one share; an efficiency given is used as given.

    Examples
    --------
    >>> flat_efficiency("cifar10", "h100"), flat_efficiency("gpt-6.7b", "h100")
    (0.4, None)
    >>> flat_efficiency("gpt-6.7b", "h100", 0.4)  # given: a flat share of the peak, every FLOP
    0.4
    """
    if efficiency is not None:
        return _check_eff("efficiency", efficiency, 4.0)
    return None if _searched(*_resolve(model, gpu, catalog)) else DEFAULT_EFFICIENCY


def step_time(model, gpu, placement, local_bsz, *, efficiency=None, link_efficiency=None,
              host_s_per_kernel=None, overlap=None, floor_s=None, adjust=None, catalog=None) -> StepTime:  # fmt: skip
    """Predicted ``(step, sync)`` seconds of ``model`` on ``placement`` GPUs of type ``gpu``.

    Parameters
    ----------
    model : str or ModelSpec
    gpu : str or GpuType
    placement : sequence of int
        GPUs used on each node (zeros allowed).
    local_bsz : int or array of int
        Samples per GPU (an array gives arrays), at least 1. A model priced by the strategy
        search places the placement's total batch ``sum(placement) x local_bsz`` (rounded; at
        least one sample) over its (tensor, pipeline, data) plan, so there a fraction below 1
        is allowed: two GPUs sharing one sequence are ``local_bsz=0.5``.
    efficiency : float, optional
        Fraction of the compute and memory peaks reached (default :data:`DEFAULT_EFFICIENCY`;
        a model priced by the strategy search: the GEMM model, see :func:`flat_efficiency`).
    link_efficiency : float
        Fraction of the link bandwidths an all-reduce reaches (default :data:`LINK_EFFICIENCY`).
    host_s_per_kernel : float, optional
        Host seconds per kernel (default :data:`HOST_S_PER_KERNEL`).
    overlap : float, optional
        Share of the backward pass that hides the all-reduce, in [0, 1] (default
        :data:`OVERLAP`).
    floor_s : float, optional
        The machine's fixed seconds per step, which gates it: ``max(floor, work)`` (default 0;
        see :func:`calibrate_floors`).
    adjust : StepAdjust, optional
        A bootstrap profile's corrections (see :class:`StepAdjust`); a model priced by the
        strategy search takes its ``gpu_scale`` only.
    catalog : dict, optional
        GPU catalogue (see :func:`fastsched.catalog.with_types`).

    Raises
    ------
    ValueError
        A batch below 1 (a total batch below 1 for the strategy search), an empty placement,
        or a model that fits no plan on these GPUs.

    Examples
    --------
    >>> one = step_time("cifar10", "v100", (1,), 128)
    >>> eight = step_time("cifar10", "v100", (8,), 128)
    >>> one.sync, eight.step > one.step, eight.sync > 0
    (0.0, True, True)
    >>> step_time("ncf", "v100", (1,), 32, floor_s=0.09).step  # a slow machine's floor gates the step
    0.09
    >>> tight = step_time("yolov3", "a100-40gb", (8,), 8, adjust=StepAdjust(contention=1.5))
    >>> tight.step > step_time("yolov3", "a100-40gb", (8,), 8).step  # eight GPUs of a node contend
    True
    """
    m, g = _resolve(model, gpu, catalog)
    adjust = _check_adjust(adjust)
    p = _placement(placement)
    eff = DEFAULT_EFFICIENCY if efficiency is None else _check_eff("efficiency", efficiency, 4.0)
    link_eff = _check_eff("link_efficiency", LINK_EFFICIENCY if link_efficiency is None else link_efficiency)
    b = np.asarray(local_bsz, dtype=np.float64)
    hybrid = _searched(m, g)
    if b.size == 0 or not np.all(np.isfinite(b)) or np.any(b <= 0):
        rule = "> 0 (with local_bsz x GPUs >= 1)" if hybrid else ">= 1"
        raise ValueError(f"local_bsz must be {rule}, got {local_bsz!r}")
    if hybrid and np.any(np.round(sum(p) * b) < 1):
        raise ValueError(f"local_bsz x GPUs must be >= 1 (the strategy search's total batch), got {local_bsz!r}")
    if not hybrid and np.any(b < 1):
        raise ValueError(f"local_bsz must be >= 1, got {local_bsz!r}")
    if hybrid:
        search_eff = None if efficiency is None else eff  # None: the GEMM model
        out = np.array([_hybrid_time(m, g, p, float(x), search_eff) for x in b.ravel()]).reshape(b.shape + (2,))
        step, sync = out[..., 0], out[..., 1]
        if adjust is not None:
            step = (step - sync) * adjust.gpu_scale + sync
        if floor_s:
            step = np.maximum(step, _check_floor(floor_s))
    else:
        ov = None if overlap is None else _check_overlap(overlap)
        floor = 0.0 if floor_s is None else _check_floor(floor_s)
        step, sync = _dp_times(m, g, p, b, eff, link_eff, host_s_per_kernel, ov, floor, adjust)
    if b.ndim == 0:
        return StepTime(float(step), float(sync))
    return StepTime(np.asarray(step, dtype=np.float64), np.asarray(sync, dtype=np.float64))


def host_share(model, gpu, local_bsz=None, *, efficiency=None, floor_s=None, adjust=None, catalog=None) -> float:
    """Host time (or the floor, the larger) over GPU time of one GPU's step at ``local_bsz``.

    At :data:`HOST_BOUND_RATIO` or more the host rivals the GPU: the step's price rests on
    the host's speed and the machine's per-step costs, which no GPU datasheet states, so a
    profile flags it as low-confidence. ``local_bsz`` defaults to the largest per-GPU batch
    (what one GPU holds, at most the model's largest batch): a job flagged there is host-bound
    at every batch it can run. A model priced by the strategy search: 0.

    Examples
    --------
    >>> host_share("ncf", "v100") > HOST_BOUND_RATIO > host_share("bert", "t4")
    True
    """
    m, g = _resolve(model, gpu, catalog)
    if _searched(m, g):
        return 0.0
    eff = DEFAULT_EFFICIENCY if efficiency is None else _check_eff("efficiency", efficiency, 4.0)
    adjust = _check_adjust(adjust)
    b = local_bsz if local_bsz is not None else max(1, min(m.max_batch_size, _max_dp_batch(m, g)))
    host, gpu_s, _ = _dp_parts(m, g, b, eff, HOST_S_PER_KERNEL)
    if adjust is not None:
        host, gpu_s = host * adjust.host_scale, gpu_s * adjust.gpu_scale
    floor = 0.0 if floor_s is None else _check_floor(floor_s)
    return float(max(host, floor) / gpu_s)


_HYBRID_MEMO: dict = {}


def _hybrid_time(m: ModelSpec, g: GpuType, p, b, eff):
    """Best strategy-search plan for ``sum(p) x b`` sequences: ``(step, dp comm)`` seconds (``eff`` None: the GEMM model)."""
    n = sum(p)
    batch = int(round(n * b))
    key = (m.transformer, g, max(p), n, batch, eff)
    out = _HYBRID_MEMO.get(key)
    if out is None:
        # deferred: the cost model (below this package) loads numba, needed for decoders only
        from fastsched.costmodel.cluster import Cluster
        from fastsched.costmodel.search import Transformer, search

        layers, hidden, heads, seq, vocab, dtype_bytes = m.transformer
        t = Transformer(layers=layers, hidden=hidden, heads=heads, seq=seq, vocab=vocab, global_batch=batch,
                        dtype_bytes=dtype_bytes)  # fmt: skip
        # No efficiency: the GEMMs priced by their shapes with the type's constants (the model
        # held against published runs); an efficiency given: a flat share of the peak.
        c = Cluster.from_gpu(g, gpus=n, gpus_per_node=max(p), efficiency=eff)
        try:
            best = search(t, c).best
        except ValueError as exc:
            raise ValueError(f"{m.name} on {n} x {g.name}: {exc}") from None
        host = m.kernels * HOST_S_PER_KERNEL
        out = _HYBRID_MEMO[key] = (best["time_ms"] * 1e-3 + host, best["dp_comm_ms"] * 1e-3)
    return out


def _fit_rows(m: ModelSpec, g: GpuType, rows, link_efficiency):
    """``(b, allreduce, log step, GPUs)`` arrays of measured ``rows`` (validated)."""
    rows = list(rows)
    if not rows:
        raise ValueError("calibrate: no measured rows")
    grad = m.grad_bytes_per_param * m.parameters
    ar_memo: dict = {}
    b = np.empty(len(rows))
    ar = np.empty(len(rows))
    t = np.empty(len(rows))
    n = np.empty(len(rows))
    for i, (placement, bsz, st) in enumerate(rows):
        if not (st > 0 and math.isfinite(st)):
            raise ValueError(f"calibrate: step times must be positive, got {st!r}")
        p = _placement(placement)
        if p not in ar_memo:
            ar_memo[p] = allreduce_seconds(grad, g, p, link_efficiency)
        b[i], ar[i], t[i], n[i] = bsz, ar_memo[p], st, sum(p)
    return b, ar, np.log(t), n


def _losses(m: ModelSpec, g: GpuType, data, effs, floors, host_s):
    """Squared log errors of the step over ``data``, for each (efficiency, floor) pair of the grids."""
    b, ar, log_t, n = data
    grad = m.grad_bytes_per_param * m.parameters
    e = np.atleast_1d(np.asarray(effs, dtype=np.float64))[:, None]
    host, gpu, bwd = _dp_parts(m, g, b[None, :], e, host_s, n[None, :])
    f = np.atleast_1d(np.asarray(floors, dtype=np.float64))[:, None]
    step, _ = _combine(host, gpu, bwd, ar[None, :], min(1.0, BUCKET_BYTES / grad), None, f)
    return np.sum((np.log(step) - log_t) ** 2, axis=1)


def _argmin_geom(loss, lo, hi, zero=False):
    """Minimiser of ``loss(grid)`` over ``[lo, hi]`` (geometric grid, refined twice; ``zero``: 0 too)."""
    grid = np.geomspace(lo, hi, 121)
    if zero:
        grid = np.concatenate([[0.0], grid])
    best = grid[int(np.argmin(loss(grid)))]
    if best == 0.0:
        return 0.0
    for width in (1.06, 1.003):  # two refinements: 0.01 % resolution
        fine = np.geomspace(best / width, best * width, 41)
        best = fine[int(np.argmin(loss(fine)))]
    return float(best)


def calibrate(model, gpu, rows, *, link_efficiency=None, host_s_per_kernel=None, catalog=None) -> float:
    """Fit the one efficiency of ``gpu`` that best predicts measured ``rows`` of ``model``.

    Minimises the squared log error of the step time over ``rows`` (a grid over
    ``[0.01, 4]``, refined twice), so no row dominates by its size. An efficiency above 1 means
    the measured network does fewer FLOPs than its nominal count (cuDNN's Winograd
    convolutions do).

    Parameters
    ----------
    rows : sequence of (placement, local_bsz, step_time)
        Measurements (placement as GPUs per node).

    Examples
    --------
    >>> true = [((1,), b, step_time("cifar10", "t4", (1,), b, efficiency=0.3).step) for b in (32, 128, 512)]
    >>> round(calibrate("cifar10", "t4", true), 3)
    0.3
    """
    m, g = _resolve(model, gpu, catalog)
    host_s = HOST_S_PER_KERNEL if host_s_per_kernel is None else host_s_per_kernel
    data = _fit_rows(m, g, rows, link_efficiency)
    return _argmin_geom(lambda effs: _losses(m, g, data, effs, 0.0, host_s), 1e-2, 4.0)


class Calibration(NamedTuple):
    """What :func:`calibrate_floors` fits: one efficiency shared by the types, one floor per type.

    Both fields are dicts keyed like the input (``efficiencies`` holds the shared value for
    every type), so ``**calibration._asdict()`` passes them to
    :func:`fastsched.sim.oracle.write_profile` or :func:`~fastsched.sim.oracle.oracle_applications`.

    Examples
    --------
    >>> Calibration({"aws": 0.6}, {"aws": 0.0}).floors
    {'aws': 0.0}
    """

    efficiencies: dict
    floors: dict


def calibrate_floors(model, rows_by_type, *, efficiency=None, link_efficiency=None, host_s_per_kernel=None,
                     catalog=None) -> Calibration:  # fmt: skip
    """Fit one per-step floor per GPU type, at one efficiency shared by all of them.

    The per-type number is the machine's fixed host seconds per step (``floor_s`` of
    :func:`step_time`), what a small model's step shows on a machine whatever its GPU; the
    efficiency is one number for all the types (``efficiency``, or fitted jointly with the
    floors when ``None``). Same loss and grids as :func:`calibrate`; floors over ``{0} u [1e-4,
    10]`` s.

    Parameters
    ----------
    rows_by_type : dict
        ``{gpu type: rows}``, each as :func:`calibrate`'s ``rows``.

    Examples
    --------
    >>> def rows(gpu, floor):
    ...     return [((1,), b, step_time("cifar10", gpu, (1,), b, efficiency=0.5, floor_s=floor).step)
    ...             for b in (32, 128, 512, 2048)]
    >>> c = calibrate_floors("cifar10", {"t4": rows("t4", 0.0), "v100": rows("v100", 0.09)})
    >>> round(c.efficiencies["v100"], 3), round(c.floors["t4"], 3), round(c.floors["v100"], 3)
    (0.5, 0.0, 0.09)
    """
    if not isinstance(rows_by_type, dict) or not rows_by_type:
        raise ValueError("calibrate_floors: rows_by_type must map GPU types to measured rows")
    host_s = HOST_S_PER_KERNEL if host_s_per_kernel is None else host_s_per_kernel
    fits = []
    for t, rows in rows_by_type.items():
        m, g = _resolve(model, t, catalog)
        fits.append((t, m, g, _fit_rows(m, g, rows, link_efficiency)))

    def floors_at(e):
        return {t: _argmin_geom(lambda f, m=m, g=g, d=d: _losses(m, g, d, e, f, host_s), 1e-4, 10.0, zero=True)
                for t, m, g, d in fits}  # fmt: skip

    def total(effs):
        out = []
        for e in effs:
            fl = floors_at(e)
            out.append(sum(float(_losses(m, g, d, e, fl[t], host_s)[0]) for t, m, g, d in fits))
        return np.array(out)

    if efficiency is None:
        grid = np.geomspace(1e-2, 4.0, 25)  # coarse, then narrowed: each point fits every floor
        for _ in range(3):
            i = int(np.argmin(total(grid)))
            grid = np.geomspace(grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)], 17)
        e = float(grid[int(np.argmin(total(grid)))])
    else:
        e = _check_eff("efficiency", efficiency, 4.0)
    return Calibration(dict.fromkeys(rows_by_type, e), floors_at(e))
