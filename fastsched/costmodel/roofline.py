"""The GEMM model and the training software's share of the hardware, with their sources.

Two kinds of constants price a transformer's step on a GPU (:mod:`._roofline` has the formulas):

* per GPU type, facts of the hardware (:mod:`fastsched.catalog.gpus`): dense peaks, the measured
  matrix-multiply ceiling, the published fused-attention ceiling (FlashAttention-2's forward +
  backward rate: a portable kernel gains 1.64x from A100 to H100 where cuBLAS gains 2.93x), SMs,
  HBM and link bandwidths. :meth:`Cluster.from_gpu <fastsched.costmodel.cluster.Cluster.from_gpu>`
  carries them;
* per software stack, one :class:`Stack` for every GPU type: what share of those ceilings the
  framework's kernels reach.

:data:`DEFAULT_STACK` is the one the strategy search, ``fastsched plan`` and ``fastsched profile``
use. Its two fitted numbers (``gemm``, ``attention``) were calibrated on one published table
(MosaicML LLM Foundry's A100-80GB table) and are scored on the others
(``benchmarks/costmodel/published.py``, ``benchmarks/results/costmodel.md``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fastsched._validate import check_finite_scalar
from fastsched.costmodel._roofline import gemm_seconds

__all__ = ["Stack", "DEFAULT_STACK", "gemm_time", "gemm_efficiency"]


class Stack(NamedTuple):
    """Shares of a GPU's ceilings that a training stack's kernels reach (one set for every GPU type).

    Attributes
    ----------
    gemm : float
        Share of the measured matrix-multiply ceiling reached by the weight GEMMs in training
        (fitted on one table; see the module docstring).
    attention : float
        Share of the GPU type's fused-attention ceiling (``Cluster.attention_flops``: the
        published FlashAttention-2 forward + backward rate, 204.6 TFLOP/s on A100, 335 on H100)
        reached by the stack's fused attention kernel, forward (fitted with ``gemm``: 0.40 of
        A100's matmul ceiling in the first round's units, 0.40 x 271.2 / 204.6 = 0.53 here; about
        half of FlashAttention-2's rate, as the Triton kernel of the calibration table is).
    attention_bwd : float
        The backward kernel's share relative to the forward's (FlashAttention-2: 63 / 73).
    memory : float
        Share of the HBM bandwidth that elementwise kernels reach (STREAM-like copy kernels reach
        about 85-90 % of the datasheet bandwidth on A100 and H100).
    link : float
        Share of a link's bandwidth that NCCL's ring collectives reach (nccl-tests bus bandwidth
        on NVLink and InfiniBand, about 80 %).
    comm_overlap : float
        Share of the compute that hides data- and pipeline-parallel communication: 1 for stacks
        that overlap it (PyTorch DDP's and FSDP's bucketed, prefetched collectives; Megatron-LM's
        ``--overlap-grad-reduce`` and ``--overlap-p2p-communication``), 0 for one that reduces
        the gradients after the backward pass and waits for each pipeline send (Megatron-LM 2021).

    Examples
    --------
    >>> DEFAULT_STACK.comm_overlap, DEFAULT_STACK._replace(comm_overlap=0.0).comm_overlap
    (1.0, 0.0)
    """

    gemm: float = 0.83
    attention: float = 0.53
    attention_bwd: float = 63.0 / 73.0
    memory: float = 0.85
    link: float = 0.8
    comm_overlap: float = 1.0

    def checked(self) -> Stack:
        """Return the stack with every share validated as a float in (0, 1] (``comm_overlap``: [0, 1]).

        Examples
        --------
        >>> Stack(gemm=1.5).checked()
        Traceback (most recent call last):
        ...
        ValueError: stack.gemm must be <= 1.0, got 1.5
        """
        vals = {}
        for name in self._fields:
            low_open = name != "comm_overlap"
            vals[name] = check_finite_scalar(f"stack.{name}", getattr(self, name), low=0.0, low_open=low_open, high=1.0)
        return Stack(**vals)


#: The stack of the defaults (``plan``, ``profile``, :func:`~fastsched.costmodel.search.search`).
DEFAULT_STACK = Stack()


def _hw(cluster):
    if not cluster.roofline:
        raise ValueError("cluster.matmul_flops: the GEMM model needs a cluster from Cluster.from_gpu (or matmul_flops)")
    return cluster.matmul_flops, float(cluster.sms), cluster.hbm_gbps * 1e9


def gemm_time(m, n, k, cluster, *, batch=1, dtype_bytes=2, stack=None):
    """Seconds of ``batch`` matrix products ``(m x k) @ (k x n)`` on one GPU of ``cluster``.

    The GEMM model of :mod:`._roofline`: tile and wave quantisation over the GPU's SMs at
    ``stack.gemm`` of its matrix-multiply ceiling, or its memory roof (operands and result
    through HBM once at ``stack.memory`` of the bandwidth), whichever is slower.

    Parameters
    ----------
    m, n, k : int or array of int
        Dimensions (>= 1); arrays broadcast.
    cluster : Cluster
        With the GEMM model's constants (:meth:`Cluster.from_gpu`).
    batch : int
        Independent products (a batched GEMM).
    dtype_bytes : int
    stack : Stack, optional
        Default :data:`DEFAULT_STACK`.

    Examples
    --------
    >>> from fastsched.costmodel.cluster import Cluster
    >>> c = Cluster.from_gpu("a100-80gb")
    >>> t = gemm_time(8192, 8192, 8192, c)  # 2048 tiles in 19 waves of 108: 99.8 % of a full last wave
    >>> round(2 * 8192**3 / t / 1e12 / DEFAULT_STACK.gemm, 1)  # TFLOP/s over the stack's share: of 271.2 measured
    270.7
    """
    st = (DEFAULT_STACK if stack is None else stack).checked()
    flops, sms, bw = _hw(cluster)
    dims = np.broadcast_arrays(*(np.asarray(x) for x in (m, n, k, batch)))
    for name, x in zip(("m", "n", "k", "batch"), dims, strict=True):
        if x.size and (not np.issubdtype(x.dtype, np.number) or not np.all(np.isfinite(x)) or x.min() < 1):
            raise ValueError(f"{name} must be >= 1, got {x!r}")
    f = np.vectorize(
        lambda a, b, c, d: gemm_seconds(
            float(a), float(b), float(c), float(d), float(dtype_bytes), flops * st.gemm, sms, bw * st.memory
        ),
        otypes=[np.float64],
    )
    out = f(*dims)
    return float(out) if out.ndim == 0 else out


def gemm_efficiency(m, n, k, cluster, *, batch=1, dtype_bytes=2, stack=None):
    """Achieved share of the GPU's matrix-multiply ceiling: ``2 m n k batch / (ceiling x time)``, in (0, 1].

    Examples
    --------
    >>> from fastsched.costmodel.cluster import Cluster
    >>> c = Cluster.from_gpu("h100")
    >>> big, small = gemm_efficiency(16384, 16384, 16384, c), gemm_efficiency(64, 64, 64, c)
    >>> 0 < small < big <= 0.9
    True
    """
    t = gemm_time(m, n, k, cluster, batch=batch, dtype_bytes=dtype_bytes, stack=stack)
    work = 2.0 * np.asarray(m, np.float64) * np.asarray(n, np.float64) * np.asarray(k, np.float64) * batch
    out = work / (cluster.matmul_flops * np.asarray(t))
    return float(out) if np.ndim(out) == 0 else out
