"""numba kernels: the time of a transformer's matrix multiplies and memory-bound work on one GPU.

One definition of the GEMM model (:func:`gemm_seconds`) and of a decoder layer's work
(:func:`layer_seconds`, :func:`logits_seconds`, :func:`adam_seconds`), inlined into the strategy
search's cost function (:mod:`._search`) and wrapped by :mod:`.roofline`.

GEMM: a roofline with tile and wave quantisation. The output ``m x n`` is cut into tiles of
``TILE_M x TILE_N`` (either orientation, the better one), the tiles of all ``batch`` products are
spread over the GPU's ``sms`` streaming multiprocessors in waves, and each wave takes one tile's
time on one SM: ``waves x sms x TILE_M x TILE_N x 2k / flops``. A partial last wave costs a full
one, and a dimension that does not fill its last tile pays the whole tile (NVIDIA, *Matrix
Multiplication Background User's Guide*, "Dimension Quantization Effects", which uses a 256 x 128
tile on A100's 108 SMs). The memory roof: the operands and the result cross HBM once,
``dt (mk + kn + mn)`` bytes per product. The GEMM takes the larger of the two.

Decoder layer (per microbatch and tensor-parallel rank, Megatron-LM's layout, Narayanan et al.
2021; Korthikanti et al. 2022): four weight GEMMs (QKV ``h -> 3h/t``, projection ``h/t -> h``,
``h -> 4h/t``, ``4h/t -> h``) over ``b s`` tokens; backward, for each, the input gradient (same
shape transposed) and the weight gradient (``k x n`` over the tokens). Attention:

* fused (FlashAttention, Dao et al. 2022): the causal kernel skips the masked half of the
  ``s x s`` blocks: ``2 b s^2 h / t`` FLOPs forward, 2.5 times that backward (five products
  against two), at the stack's share of the GPU type's fused-attention ceiling (handed to the
  kernel as a share of the matmul ceiling, :func:`fastsched.costmodel.search.cluster_tuple`);
  no score is stored;
* unfused: two batched GEMMs per head forward (``s x s x d`` and ``s x d x s``), four backward,
  and the scores' softmax and dropout as memory-bound passes (``SCORE_FWD_BYTES`` /
  ``SCORE_BWD_BYTES`` per score at 2 bytes).

Memory-bound elementwise work per token forward: two layer norms (read and write ``h``), two
dropout-residual adds (read two ``h``, write one, a 1-byte mask), the GELU (read and write
``4h/t``); backward twice the forward's bytes. Sequence parallelism splits the norms and
dropouts over ``t``. Logits: one GEMM ``h -> V/t`` and its two gradients, and a fused
cross-entropy reading the FP32 logits ``CE_FWD_PASSES`` times forward and ``CE_BWD_PASSES``
backward. Adam: ``ADAM_BYTES`` per parameter held, per step.
"""

from __future__ import annotations

import math

from fastsched._jit import jit

__all__ = [
    "TILE_M",
    "TILE_N",
    "gemm_seconds",
    "layer_seconds",
    "logits_seconds",
    "adam_seconds",
    "SCORE_FWD_BYTES",
    "SCORE_BWD_BYTES",
    "ADAM_BYTES",
]

#: Output tile of a large GEMM (CUTLASS/cuBLAS BF16 tiles on A100 and H100; NVIDIA's GEMM guide).
TILE_M = 256
TILE_N = 128
#: Bytes per attention score of the unfused softmax + dropout, forward (read and write the
#: scores twice, one 1-byte mask) and backward (dropout: gradient and mask in, gradient out;
#: softmax: output and gradient in, gradient out), at 2 bytes per element.
SCORE_FWD_BYTES = 9.0
SCORE_BWD_BYTES = 11.0
#: FP32 passes over the logits of a fused cross-entropy: max, exponent sum, loss (forward),
#: softmax and its gradient (backward).
CE_FWD_PASSES = 3.0
CE_BWD_PASSES = 2.0
#: Bytes per parameter of one mixed-precision Adam step: FP32 master weight, two moments (read
#: and written: 24), the FP32 gradient read (4), the 16-bit weight written (2).
ADAM_BYTES = 30.0


@jit(inline="always")
def _waves(m, n, batch, sms, tm, tn):
    return math.ceil(math.ceil(m / tm) * math.ceil(n / tn) * batch / sms)


@jit(inline="always")
def gemm_seconds(m, n, k, batch, dt, flops, sms, bw):
    """Seconds of ``batch`` products ``(m x k) @ (k x n)`` at ``dt`` bytes per element.

    ``flops``: the GPU's matrix-multiply rate (FLOP/s); ``sms``: its multiprocessors (0: no
    quantisation, the plain roofline); ``bw``: memory bandwidth (bytes/s).
    """
    if sms > 0:
        waves = min(_waves(m, n, batch, sms, TILE_M, TILE_N), _waves(m, n, batch, sms, TILE_N, TILE_M))
        compute = waves * sms * (TILE_M * TILE_N * 2.0) * k / flops
    else:
        compute = 2.0 * m * n * k * batch / flops
    memory = dt * batch * (m * k + k * n + m * n) / bw
    return max(compute, memory)


@jit(inline="always")
def _dense(tok, kin, nout, dt, F, sms, W):
    # forward, and backward (input gradient + weight gradient) of one weight GEMM over tok tokens
    fwd = gemm_seconds(tok, nout, kin, 1.0, dt, F, sms, W)
    bwd = gemm_seconds(tok, kin, nout, 1.0, dt, F, sms, W) + gemm_seconds(kin, nout, tok, 1.0, dt, F, sms, W)
    return fwd, bwd


@jit(inline="always")
def layer_seconds(b, s, h, a, t, sp, fused, dt, F, Fa_f, Fa_b, sms, W):
    """``(dense_f, dense_b, attn_f, attn_b, elem_f, elem_b)`` seconds of one layer's microbatch.

    ``F``: GEMM rate, ``Fa_f``/``Fa_b``: fused attention's forward/backward rates (FLOP/s);
    ``W``: achieved memory bandwidth (bytes/s); ``t``: tensor degree; ``sp``/``fused``: 0 or 1.
    """
    tok = b * s
    q_f, q_b = _dense(tok, h, 3.0 * h / t, dt, F, sms, W)
    o_f, o_b = _dense(tok, h / t, h, dt, F, sms, W)
    u_f, u_b = _dense(tok, h, 4.0 * h / t, dt, F, sms, W)
    d_f, d_b = _dense(tok, 4.0 * h / t, h, dt, F, sms, W)
    dense_f = q_f + o_f + u_f + d_f
    dense_b = q_b + o_b + u_b + d_b
    heads = b * a / t
    d = h / a
    io = tok * h / t * dt  # one of Q, K, V, O on this rank
    if fused:
        work = 2.0 * b * s * s * h / t
        attn_f = max(work / Fa_f, 4.0 * io / W)
        attn_b = max(2.5 * work / Fa_b, 8.0 * io / W)
    else:
        scores = heads * s * s
        attn_f = gemm_seconds(s, s, d, heads, dt, F, sms, W) + gemm_seconds(s, d, s, heads, dt, F, sms, W)
        attn_f += scores * SCORE_FWD_BYTES * dt / 2.0 / W
        attn_b = gemm_seconds(s, s, d, heads, dt, F, sms, W) + 3.0 * gemm_seconds(s, d, s, heads, dt, F, sms, W)
        attn_b += scores * SCORE_BWD_BYTES * dt / 2.0 / W
    tsp = t if sp else 1.0
    elem = tok * (dt * (10.0 * h / tsp + 8.0 * h / t) + 2.0 * h / tsp)
    return dense_f, dense_b, attn_f, attn_b, elem / W, 2.0 * elem / W


@jit(inline="always")
def logits_seconds(b, s, h, V, t, dt, F, sms, W):
    """``(forward, backward)`` seconds of the logits GEMM and the cross-entropy on one rank."""
    tok = b * s
    f, bw = _dense(tok, h, V / t, dt, F, sms, W)
    ce = tok * V / t * 4.0 / W
    return f + CE_FWD_PASSES * ce, bw + CE_BWD_PASSES * ce


@jit(inline="always")
def adam_seconds(params, W):
    """Seconds of one Adam step over ``params`` parameters held by this GPU."""
    return ADAM_BYTES * params / W
