"""numba kernel: the analytic step time and memory of every parallel configuration.

One cost function, :func:`config_cost`, prices one configuration of a transformer on a
cluster; :func:`search_kernel` applies it to every row of the configuration table. The
brute-force check in the tests calls ``config_cost.py_func`` on the same rows.

Model (per GPU, one training step):

* compute: forward ``24 b s h^2 + 4 b s^2 h`` FLOPs per layer per microbatch, divided by
  the tensor degree ``t``; the logits ``2 b s h V / t`` on the last stage; backward twice
  the forward; recomputation adds the forward (full) or the attention scores (selective);
* tensor parallelism: 2 all-reduces of ``b s h`` activations per layer forward and 2
  backward (2 more with full recomputation), on the intra-node link while ``t`` fits a node;
* pipeline: the schedule's closed form over stage times ``x = f + b`` (last stage heavier):
  1F1B/GPipe ``sum(x) + (m-1) max(x)``; interleaved ``m max(x) + (sum(x) - max(x)) / v``;
  ZB-H1 1F1B minus ``(p-1) min(W, f)``; plus ``2(p-1)`` point-to-point transfers of
  ``b s h / t`` values;
* data parallelism: one ring all-reduce of the stage's gradients per step (ZeRO-3: 1.5x),
  on the inter-node link when a data-parallel group spans nodes; not overlapped;
* memory: mixed-precision Adam states ``16 phi`` per parameter (ZeRO-1 ``4 + 12/d``, ZeRO-2
  ``2 + 14/d``, ZeRO-3 ``16/d``) plus activations (Korthikanti et al. 2022:
  ``s b h (10 + 24/t + 5 a s / (h t))`` bytes per layer, ``s b h (10 + 24/t)`` with selective
  and ``2 s b h`` with full recomputation; sequence parallelism divides the ``10 s b h`` of
  norms and dropout by ``t`` too) times the microbatches in flight on stage 0. Sequence
  parallelism replaces each all-reduce by a reduce-scatter and an all-gather: same time.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit
from fastsched.costmodel._comm import allgather_ms, allreduce_ms, p2p_ms
from fastsched.costmodel._roofline import adam_seconds, layer_seconds, logits_seconds

__all__ = ["config_cost", "search_kernel", "zero_state_bytes", "N_OUT", "GPIPE", "ONE_F_ONE_B", "INTERLEAVED", "ZB_H1"]

GPIPE, ONE_F_ONE_B, INTERLEAVED, ZB_H1 = 0, 1, 2, 3
#: outputs of config_cost: time, compute, bubble, tp comm, pp comm, dp comm (ms);
#: states, activations, total memory (bytes)
N_OUT = 9


@jit(inline="always")
def zero_state_bytes(phi, d, zero):
    """Bytes per GPU of weights, gradients and Adam states for ``phi`` parameters (mixed precision).

    16 bytes per parameter (fp16 weight and gradient, fp32 master weight and two moments);
    ZeRO stage 1 shards the 12 optimizer bytes, stage 2 also the gradient's 2, stage 3 all 16,
    over the ``d`` data-parallel ranks.
    """
    if zero == 0:
        return 16.0 * phi
    if zero == 1:
        return 4.0 * phi + 12.0 * phi / d
    if zero == 2:
        return 2.0 * phi + 14.0 * phi / d
    return 16.0 * phi / d


@jit(inline="always")
def zb_h1_saving(p, m, w, f):
    """Time ZB-H1 saves over 1F1B's ``xsum + (m - 1) xmax``, for stages whose smallest weight gradient is ``w``.

    ``f`` is the smallest forward. The deferred weight gradients fill the cool-down bubble:
    ``(p - 1) w`` always, and ``min(w, f)`` more per slot for each microbatch after the first,
    up to ``p - 1`` slots. Exact on equal stages (``(S - 1)(f + B - min(W, f))`` is then the
    bubble, as :mod:`.schedules` simulates it); with unequal stages the smallest ones are the
    bound, so the time is never below the simulated schedule's. Using the heaviest stage's
    (as before) put the step below its own compute when the logits made the last stage heavy.
    """
    if p <= 1:
        return 0.0
    return (p - 1) * w + min(m - 1, p - 1) * min(w, f)


@jit(inline="always")
def _schedule_ms(sched, p, m, v, xmax, xsum, zb):
    # closed forms over stage times (max and sum): interleaved, else 1F1B/GPipe less ZB-H1's saving
    if sched == INTERLEAVED:
        return m * xmax + (xsum - xmax) / v
    return xsum + (m - 1) * xmax - zb


@jit(inline="always")
def roofline_terms(model, cl, t, b, sp):
    """Seconds of one microbatch on one tensor rank under the GEMM model (zeros for the flat one).

    ``(layer fwd, layer bwd, attention fwd, logits fwd, logits bwd)``: they depend on ``(t, b, sp)`` only.
    """
    L, h, a, s, V, dt, fused = model
    mm, sms, hbm, g_fr, af_fr, ab_fr, m_fr = cl[6], cl[7], cl[8], cl[9], cl[10], cl[11], cl[12]
    if mm <= 0.0:
        return 0.0, 0.0, 0.0, 0.0, 0.0
    W = hbm * m_fr
    df, db, af, ab, ef, eb = layer_seconds(b, s, h, a, t, sp, fused, dt, mm * g_fr, mm * af_fr, mm * ab_fr, sms, W)
    lf, lb = logits_seconds(b, s, h, V, t, dt, mm * g_fr, sms, W)
    return df + af + ef, db + ab + eb, af, lf, lb


@jit(inline="always")
def config_cost(model, cl, t, p, d, b, m, sched, v, rec, zero, sp):
    """Step time breakdown (ms) and memory (bytes) of one configuration.

    ``model = (layers, hidden, heads, seq, vocab, dtype_bytes, fused_attention)`` and ``cl =
    (flops, gpus_per_node, bw_intra, lat_intra, bw_inter, lat_inter, matmul_flops, sms, hbm,
    gemm, attention_fwd, attention_bwd, memory, link, comm_overlap)`` (bytes/ms, ms, FLOP/s,
    bytes/s, fractions) as float tuples. ``matmul_flops = 0`` is the flat model: every FLOP at
    ``flops``, nothing memory-bound, the links at their bandwidth, no overlap.
    """
    return config_cost_terms(model, cl, roofline_terms(model, cl, t, b, sp), t, p, d, b, m, sched, v, rec, zero, sp)


@jit(inline="always")
def config_cost_terms(model, cl, terms, t, p, d, b, m, sched, v, rec, zero, sp):
    """:func:`config_cost` given :func:`roofline_terms` of ``(t, b, sp)`` (the search reuses them along a block)."""
    L, h, a, s, V, dt, fused = model
    F, gpn, bwi, lati, bwe, late, mm, sms, hbm, g_fr, af_fr, ab_fr, m_fr, l_fr, ov = cl
    Ls = L / p
    roof = mm > 0.0
    W = hbm * m_fr
    if roof:
        bwi = bwi * l_fr
        bwe = bwe * l_fr
        lay_f, lay_b, af, lf, lb = terms
        fwd_c = Ls * lay_f * 1e3
        bwd_c = Ls * lay_b * 1e3
        logit_f = lf * 1e3
        logit_b = lb * 1e3
        attn_fwd = Ls * af * 1e3
    else:
        layer_f = 24.0 * b * s * h * h + 4.0 * b * s * s * h
        fwd_c = Ls * layer_f / t / F * 1e3
        logit_f = 2.0 * b * s * h * V / t / F * 1e3
        logit_b = 2.0 * logit_f
        bwd_c = 2.0 * fwd_c
        attn_fwd = Ls * 4.0 * b * s * s * h / t / F * 1e3
    n_ar = 4.0
    if rec == 2:
        bwd_c += fwd_c
        n_ar = 6.0
    elif rec == 1:
        bwd_c += attn_fwd
    if t > gpn:
        # a group spanning nodes rings through every GPU's network link at once (NCCL: one ring
        # per NIC): the roofline model's node crossing carries the node's GPUs' links together
        tp1 = allreduce_ms(b * s * h * dt, t, min(bwi, gpn * bwe) if roof else bwe, late)
    else:
        tp1 = allreduce_ms(b * s * h * dt, t, bwi, lati)
    tp_c = Ls * n_ar * tp1
    x_mid = fwd_c + bwd_c + tp_c
    x_last = x_mid + (logit_f + logit_b)  # (x + 2x) rounds as the flat model's 3x
    if t * d >= gpn:
        pp1 = p2p_ms(b * s * h * dt / t, bwe, late)
    else:
        pp1 = p2p_ms(b * s * h * dt / t, bwi, lati)
    pp_c = 2.0 * (p - 1) * pp1
    # the smallest stages' deferred weight gradients: the logits (the last stage's) are in no other stage
    zb = zb_h1_saving(p, m, 0.5 * bwd_c, fwd_c) if sched == ZB_H1 else 0.0
    T = _schedule_ms(sched, p, m, v, x_last, (p - 1) * x_mid + x_last, zb)
    pp_x = 0.0
    if roof and p > 1 and ov < 1.0:
        # a stack that does not overlap its sends: every chunk of every microbatch waits for its
        # activation forward and its gradient backward (2 v transfers per microbatch and stage)
        px = (1.0 - ov) * 2.0 * v * pp1
        pp_x = _schedule_ms(sched, p, m, v, x_last + px, (p - 1) * (x_mid + px) + x_last + px, zb) - T
        T += pp_x
    T += pp_c
    # parameters of the heaviest stage (first: layers + embeddings) per GPU
    phi = (Ls * (12.0 * h * h + 13.0 * h) + V * h + s * h) / t
    if t * d > gpn:
        dbw, dlat = bwe, late
        if roof:
            # the data-parallel group holds max(gpn / t, 1) GPUs of each node (tensor ranks
            # innermost, pipeline stages outermost), each ring crossing a node on its own link
            dbw = min(bwi, max(min(d, gpn / t), 1.0) * bwe)
    else:
        dbw, dlat = bwi, lati
    opt_c = 0.0
    if not roof:
        # once per step, after the pipeline, none of it hidden (ZeRO-3: gather and scatter, 1.5x)
        dp_c = (1.5 if zero == 3 else 1.0) * allreduce_ms(phi * dt, d, dbw, dlat)
    elif zero == 3:
        # every microbatch gathers the weights forward and backward and scatters the gradients,
        # prefetched under the stage's compute but for about two layers' worth
        per_mb = 3.0 * allgather_ms(phi * dt, d, dbw, dlat)
        dp_c = m * max(per_mb - ov * (fwd_c + bwd_c), per_mb * 2.0 / (3.0 * Ls))
    else:
        # one all-reduce (ZeRO-1/2: reduce-scatter + all-gather, the same volume) per step, the
        # share ``ov`` of it under the last microbatch's backward
        ar = allreduce_ms(phi * dt, d, dbw, dlat)
        dp_c = max(ar - ov * bwd_c, 0.0)
    if roof:
        opt_c = adam_seconds(phi / d if zero > 0 else phi, W) * 1e3
    states = zero_state_bytes(phi, d, zero)
    # sequence parallelism also splits the 10 s b h of layer norms and dropout by t
    ln = 10.0 / t if sp else 10.0
    if fused:
        # no s x s scores: the fused kernel keeps one FP32 log-sum-exp per row and head
        full_layer = s * b * h * (ln + 24.0 / t) + 4.0 * b * a * s / t
    else:
        full_layer = s * b * h * (ln + 24.0 / t + 5.0 * a * s / (h * t))
    if rec == 2:
        per_layer = 2.0 * s * b * h / (t if sp else 1)
    elif rec == 1:
        per_layer = s * b * h * (ln + 24.0 / t)
    else:
        per_layer = full_layer
    if sched == GPIPE:
        inflight = m * Ls
    elif sched == INTERLEAVED:
        chunks = min(2 * (p - 1) + (v - 1) * p + 1, m * v)
        inflight = chunks * Ls / v
    else:
        inflight = min(p, m) * Ls
    act = inflight * per_layer
    if rec == 2:
        act += full_layer  # the layer being recomputed
    total = T + dp_c + opt_c
    layers = m * (fwd_c + bwd_c + (logit_f + logit_b))
    tp_all = m * tp_c
    pp_all = pp_c + pp_x
    bubble = T - pp_all - layers - tp_all
    return total, layers + opt_c, bubble, tp_all, pp_all, dp_c, states, act, states + act


@jit
def search_kernel(model, cl, cfg):
    """Apply :func:`config_cost` to every row of ``cfg``; return float64[n, N_OUT].

    ``cfg`` is int64[n, 10]: t, p, d, b, m, schedule, v, recompute, zero, sequence parallel.
    """
    n = cfg.shape[0]
    out = np.empty((n, N_OUT), np.float64)
    terms = (0.0, 0.0, 0.0, 0.0, 0.0)
    key = (-1, -1, -1)
    for i in range(n):
        if (cfg[i, 0], cfg[i, 3], cfg[i, 9]) != key:  # rows come in blocks of one (t, b, sp)
            key = (cfg[i, 0], cfg[i, 3], cfg[i, 9])
            terms = roofline_terms(model, cl, cfg[i, 0], cfg[i, 3], cfg[i, 9])
        r = config_cost_terms(
            model,
            cl,
            terms,
            cfg[i, 0],
            cfg[i, 1],
            cfg[i, 2],
            cfg[i, 3],
            cfg[i, 4],
            cfg[i, 5],
            cfg[i, 6],
            cfg[i, 7],
            cfg[i, 8],
            cfg[i, 9],
        )
        for k in range(N_OUT):
            out[i, k] = r[k]
    return out
