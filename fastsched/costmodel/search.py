"""Parallel-strategy search: rank data/tensor/pipeline configurations by predicted step time.

:func:`search` enumerates, for a :class:`Transformer` on a
:class:`~fastsched.costmodel.cluster.Cluster`: tensor degree ``t`` (a power of two that
divides the heads and fits a node), pipeline degree ``p`` (divides the layers), data
degree ``d = gpus / (t p)``, microbatch size ``b`` (a power of two dividing the batch of a
replica), sequence parallelism (with ``t > 1``), the schedule (GPipe, 1F1B, interleaved with every ``v`` that divides the layers
of a stage, ZB-H1), activation recomputation (none, selective, full) and the ZeRO stage
(0-3, with data parallelism). Every configuration is priced by one numba kernel
(:mod:`._search`); those that do not fit the GPU's memory are dropped and the rest are
returned fastest first, with their time and memory breakdown.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastsched._validate import check_int_scalar
from fastsched.costmodel._bounds import MODEL_BOUNDS
from fastsched.costmodel._enumerate import enumerate_kernel
from fastsched.costmodel._program_search import program_search_kernel
from fastsched.costmodel._search import INTERLEAVED, N_OUT, search_kernel
from fastsched.costmodel.cluster import Cluster
from fastsched.costmodel.program_search import PROGRAM_RECOMPUTE, PROGRAM_SCHEDULES, ProgramModel
from fastsched.costmodel.roofline import DEFAULT_STACK

__all__ = [
    "Transformer",
    "SearchResult",
    "search",
    "enumerate_configs",
    "enumerate_program_configs",
    "load_model",
    "SCHEDULE_NAMES",
    "RECOMPUTE",
    "ATTENTION",
]

#: schedule codes of the configuration table
SCHEDULE_NAMES = ("gpipe", "1f1b", "interleaved", "zb-h1")
#: recomputation codes
RECOMPUTE = ("none", "selective", "full")
#: attention kernels of a :class:`Transformer`
ATTENTION = ("fused", "unfused")
_COLS = (
    "tp",
    "pp",
    "dp",
    "micro_batch",
    "microbatches",
    "schedule",
    "virtual_stages",
    "recompute",
    "zero",
    "sequence_parallel",
)
_OUT = (
    "time_ms",
    "compute_ms",
    "bubble_ms",
    "tp_comm_ms",
    "pp_comm_ms",
    "dp_comm_ms",
    "state_bytes",
    "activation_bytes",
    "memory_bytes",
)


@dataclass(frozen=True)
class Transformer:
    """A GPT-style decoder stack.

    Parameters
    ----------
    layers, hidden, heads, seq, vocab : int
    global_batch : int
        Sequences per optimizer step.
    dtype_bytes : int
        Bytes per activation/parameter in the forward pass (2: fp16/bf16).
    attention : {"fused", "unfused"}
        "fused" (default): a FlashAttention-style kernel, which never stores the ``s x s``
        scores and skips the causal mask's upper half; "unfused": scores stored for the
        backward pass (Korthikanti et al.'s ``5 a s^2 b`` bytes per layer), softmax and
        dropout as separate memory-bound passes (Megatron-LM 2021).

    Examples
    --------
    >>> m = Transformer(layers=96, hidden=12288, heads=96, seq=2048, vocab=51200, global_batch=1536)
    >>> round(m.parameters / 1e9, 1)
    174.6
    """

    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    global_batch: int
    dtype_bytes: int = 2
    attention: str = "fused"

    def __post_init__(self):
        for f in fields(self):
            if f.name in MODEL_BOUNDS:
                v = check_int_scalar(f"model.{f.name}", getattr(self, f.name), low=1, high=MODEL_BOUNDS[f.name])
                object.__setattr__(self, f.name, v)
        if self.attention not in ATTENTION:
            raise ValueError(f"model.attention must be one of {', '.join(ATTENTION)}, got {self.attention!r}")
        if self.hidden % self.heads:
            raise ValueError(f"model.hidden={self.hidden} must be a multiple of model.heads={self.heads}")

    @property
    def parameters(self) -> float:
        """Parameter count: ``L (12 h^2 + 13 h) + V h + s h``."""
        L, h = self.layers, self.hidden
        return L * (12.0 * h * h + 13.0 * h) + self.vocab * h + self.seq * h

    def flops_per_step(self, recompute: bool = True) -> float:
        """Model FLOPs of one step.

        Narayanan et al.: ``96 B s L h^2 (1 + s/6h + V/16Lh)`` with recomputation, ``72 ...``
        without.

        Examples
        --------
        >>> Transformer(1, 64, 4, 16, 100, 2).flops_per_step(False) > 0
        True
        """
        B, s, L, h, V = self.global_batch, self.seq, self.layers, self.hidden, self.vocab
        k = 96.0 if recompute else 72.0
        return k * B * s * L * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * L * h))

    def tuple(self) -> tuple:
        """Kernel form ``(layers, hidden, heads, seq, vocab, dtype_bytes, fused)`` as floats.

        Examples
        --------
        >>> Transformer(layers=2, hidden=64, heads=4, seq=16, vocab=100, global_batch=8).tuple()
        (2.0, 64.0, 4.0, 16.0, 100.0, 2.0, 1.0)
        """
        fused = self.attention == "fused"
        return tuple(
            float(x) for x in (self.layers, self.hidden, self.heads, self.seq, self.vocab, self.dtype_bytes, fused)
        )

    @classmethod
    def from_dict(cls, d) -> Transformer:
        """Build from a mapping (unknown keys are an error naming them)."""
        known = {f.name for f in fields(cls)}
        extra = set(d) - known
        if extra:
            raise ValueError(f"model: unknown field(s) {sorted(extra)}; known: {sorted(known)}")
        missing = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING} - set(d)
        if missing:
            raise ValueError(f"model: missing field(s) {sorted(missing)}")
        return cls(**d)

    def to_dict(self) -> dict:
        """Plain-JSON form.

        Examples
        --------
        >>> d = Transformer(layers=2, hidden=64, heads=4, seq=16, vocab=100, global_batch=8).to_dict()
        >>> d["layers"], d["dtype_bytes"], Transformer.from_dict(d).hidden
        (2, 2, 64)
        """
        return asdict(self)


def load_model(path) -> Transformer:
    """Read a :class:`Transformer` from JSON.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "m.json")
    ...     _ = open(p, "w").write('{"layers": 2, "hidden": 64, "heads": 4, "seq": 16, "vocab": 100, "global_batch": 8}')
    ...     load_model(p).layers
    2
    """
    with open(Path(path), encoding="utf-8") as fh:
        return Transformer.from_dict(json.load(fh))


def _divisors(n, upto=None):
    """Divisors of ``n`` in increasing order (those ``<= upto`` only, when given).

    Trial division up to ``min(upto, sqrt(n))``, pairing each small divisor with ``n // k``: a
    model of 10**15 sequences costs microseconds, not the hours a walk to ``n`` took.

    Examples
    --------
    >>> _divisors(12), _divisors(10**15, upto=16), len(_divisors(2**40))
    ([1, 2, 3, 4, 6, 12], [1, 2, 4, 5, 8, 10, 16], 41)
    """
    upto = n if upto is None else min(n, upto)
    small, large = [], []
    k = 1
    while k * k <= n and k <= upto:
        if n % k == 0:
            small.append(k)
            if k * k != n and n // k <= upto:
                large.append(n // k)
        k += 1
    return small + large[::-1]


def enumerate_configs(
    model: Transformer,
    cluster: Cluster,
    *,
    schedules=SCHEDULE_NAMES,
    virtual_stages=None,
    recompute=RECOMPUTE,
    zero=(0, 1, 2, 3),
    max_micro_batch=16,
) -> np.ndarray:
    """Build the configuration table: int64[n, 10] rows ``(t, p, d, b, m, schedule, v, recompute, zero, sp)``.

    Parameters
    ----------
    model : Transformer
    cluster : Cluster
    schedules : sequence of str
        Subset of :data:`SCHEDULE_NAMES`.
    virtual_stages : sequence of int, optional
        Chunks per stage tried by "interleaved" (default: every ``v >= 2`` dividing the
        layers of a stage). Each must divide ``model.layers``.
    recompute : sequence of str
        Subset of :data:`RECOMPUTE`.
    zero : sequence of int
        ZeRO stages (only 0 without data parallelism).
    max_micro_batch : int

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> m = Transformer(layers=4, hidden=256, heads=4, seq=128, vocab=1000, global_batch=8)
    >>> enumerate_configs(m, Cluster(gpus=4, gpus_per_node=4)).shape[1]
    10
    """
    _check_space(schedules, recompute, zero, SCHEDULE_NAMES, RECOMPUTE, "a Transformer model")
    if virtual_stages is not None:
        for v in virtual_stages:
            v = check_int_scalar("virtual_stages", v, low=2)
            if model.layers % v:
                raise ValueError(f"virtual_stages={v} does not divide model.layers={model.layers}")
    max_micro_batch = check_int_scalar("max_micro_batch", max_micro_batch, low=1)
    codes = [SCHEDULE_NAMES.index(x) for x in schedules]
    if virtual_stages is not None and not len(virtual_stages):
        codes = [c for c in codes if c != INTERLEAVED]  # no chunk count allowed: no interleaved rows
    return enumerate_kernel(
        model.layers,
        model.heads,
        cluster.gpus,
        cluster.gpus_per_node,
        model.global_batch,
        max_micro_batch,
        np.array(codes, np.int64),
        INTERLEAVED,
        np.array(sorted(set(virtual_stages or ())), np.int64),
        np.array([RECOMPUTE.index(x) for x in recompute], np.int64),
        np.array(list(zero), np.int64),
    )


def _check_space(schedules, recompute, zero, allowed_s, allowed_r, what):
    # the search space's names, for either kind of model (one definition of the checks)
    for sname in schedules:
        if sname not in allowed_s:
            raise ValueError(f"schedules: {sname!r} is not available for {what}; known: {', '.join(allowed_s)}")
    for r in recompute:
        if r not in allowed_r:
            raise ValueError(f"recompute: {r!r} is not available for {what}; known: {', '.join(allowed_r)}")
    for z in zero:
        if z not in (0, 1, 2, 3):
            raise ValueError(f"zero: ZeRO stages are 0-3, got {z!r}")


def enumerate_program_configs(
    model: ProgramModel,
    cluster: Cluster,
    *,
    schedules=PROGRAM_SCHEDULES,
    recompute=PROGRAM_RECOMPUTE,
    zero=(0, 1, 2, 3),
    max_micro_batch=16,
) -> np.ndarray:
    """Build the configuration table of a :class:`ProgramModel` (columns of :func:`enumerate_configs`).

    Rows are grouped by pipeline degree ``p`` (a divisor of the GPUs, at most the forward
    ops); ``tp = 1``, ``virtual_stages = 1`` and ``sequence_parallel = 0`` throughout.

    Examples
    --------
    >>> from fastsched.costmodel.synthetic import transformer_stack
    >>> pm = ProgramModel(transformer_stack(2), global_batch=8)
    >>> cfg = enumerate_program_configs(pm, Cluster(gpus=4, gpus_per_node=4))
    >>> sorted(set(cfg[:, 1].tolist())), set(cfg[:, 0].tolist())
    ([1, 2, 4], {1})
    """
    _check_space(schedules, recompute, zero, PROGRAM_SCHEDULES, PROGRAM_RECOMPUTE, "a Program model")
    max_micro_batch = check_int_scalar("max_micro_batch", max_micro_batch, low=1)
    N = cluster.gpus
    sc = [SCHEDULE_NAMES.index(x) for x in schedules]
    rc = [RECOMPUTE.index(x) for x in recompute]
    rows = []
    for p in _divisors(N, upto=model.n_forward):
        d = N // p
        if model.global_batch % d:
            continue
        per = model.global_batch // d
        zs = [z for z in zero if z == 0 or d > 1]
        for b in _divisors(per, upto=max_micro_batch):
            for s_ in sc:
                for r in rc:
                    for z in zs:
                        rows.append((1, p, d, b, per // b, s_, 1, r, z, 0))
    return np.array(rows, np.int64).reshape(-1, 10)


class SearchResult(NamedTuple):
    """Configurations that fit, fastest first (arrays of equal length).

    Attributes
    ----------
    configs : int64[k, 10]
        ``(tp, pp, dp, micro_batch, microbatches, schedule, virtual_stages, recompute, zero,
        sequence_parallel)``.
    costs : float64[k, 9]
        ``(time_ms, compute_ms, bubble_ms, tp_comm_ms, pp_comm_ms, dp_comm_ms, state_bytes,
        activation_bytes, memory_bytes)``.
    n_evaluated : int
        Size of the whole space (before the memory filter).

    Examples
    --------
    >>> m = Transformer(layers=4, hidden=256, heads=4, seq=128, vocab=1000, global_batch=8)
    >>> r = search(m, Cluster(gpus=4, gpus_per_node=4))
    >>> len(r) <= r.n_evaluated, sorted(r.best)[:3]
    (True, ['activation_bytes', 'bubble_ms', 'compute_ms'])
    """

    configs: np.ndarray
    costs: np.ndarray
    n_evaluated: int

    def __len__(self) -> int:
        return self.configs.shape[0]

    def row(self, i: int) -> dict:
        """Return configuration ``i`` as a plain dict (names instead of codes).

        Examples
        --------
        >>> m = Transformer(layers=4, hidden=256, heads=4, seq=128, vocab=1000, global_batch=8)
        >>> r = search(m, Cluster(gpus=4, gpus_per_node=4))
        >>> row = r.row(0)
        >>> row["tp"] * row["pp"] * row["dp"] <= 4, row["time_ms"] == float(r.costs[0, 0]), row == r.best
        (True, True, True)
        """
        c = self.configs[i].tolist()
        d = dict(zip(_COLS, c, strict=True))
        d["schedule"] = SCHEDULE_NAMES[c[5]]
        d["recompute"] = RECOMPUTE[c[7]]
        d["sequence_parallel"] = bool(c[9])
        d.update(zip(_OUT, self.costs[i].tolist(), strict=True))
        return d

    def rows(self, k=None) -> list:
        """Return the first ``k`` configurations (all by default) as dicts.

        Examples
        --------
        >>> m = Transformer(layers=4, hidden=256, heads=4, seq=128, vocab=1000, global_batch=8)
        >>> r = search(m, Cluster(gpus=4, gpus_per_node=4))
        >>> times = [row["time_ms"] for row in r.rows(3)]
        >>> len(times) == min(3, len(r)), times == sorted(times), len(r.rows()) == len(r)
        (True, True, True)
        """
        n = len(self) if k is None else min(k, len(self))
        return [self.row(i) for i in range(n)]

    @property
    def best(self) -> dict:
        """The fastest configuration that fits."""
        return self.row(0)


def search(
    model,
    cluster,
    *,
    schedules=None,
    virtual_stages=None,
    recompute=None,
    zero=(0, 1, 2, 3),
    max_micro_batch=16,
    stack=None,
) -> SearchResult:
    """Rank every parallel configuration of ``model`` on ``cluster`` that fits memory.

    Parameters
    ----------
    model : Transformer, dict or ProgramModel
        An analytic transformer, or a program with per-op costs
        (:class:`~fastsched.costmodel.program_search.ProgramModel`: pipeline and data
        parallelism only, see its module for the model).
    cluster : Cluster or dict
    schedules, virtual_stages, recompute, zero, max_micro_batch
        Restrict the space (see :func:`enumerate_configs` and
        :func:`enumerate_program_configs`); ``None``: every schedule / recomputation
        mode the model offers.
    stack : Stack, optional
        The software's share of the GPU's ceilings (:mod:`fastsched.costmodel.roofline`;
        default :data:`~fastsched.costmodel.roofline.DEFAULT_STACK`), read when the cluster
        carries the GEMM model's constants (:meth:`Cluster.from_gpu`).

    Returns
    -------
    SearchResult

    Raises
    ------
    ValueError
        No configuration exists (degrees cannot divide the GPUs, batch and layers) or none
        fits: the message gives the smallest candidate's memory and the GPU's.

    Examples
    --------
    >>> m = Transformer(layers=24, hidden=2304, heads=24, seq=2048, vocab=51200, global_batch=512)
    >>> r = search(m, Cluster(gpus=32, memory_gib=80, flops=200e12))
    >>> r.n_evaluated > 100, r.best["tp"] * r.best["pp"] * r.best["dp"]
    (True, 32)
    """
    cluster = cluster if isinstance(cluster, Cluster) else Cluster.from_dict(cluster)
    if isinstance(model, ProgramModel):
        if virtual_stages is not None:
            raise ValueError("virtual_stages: the interleaved schedule is not available for a Program model")
        cfg = enumerate_program_configs(
            model,
            cluster,
            schedules=PROGRAM_SCHEDULES if schedules is None else schedules,
            recompute=PROGRAM_RECOMPUTE if recompute is None else recompute,
            zero=zero,
            max_micro_batch=max_micro_batch,
        )
        if cfg.shape[0] == 0:
            raise ValueError(
                f"no pipeline x data configuration of {cluster.gpus} GPUs divides "
                f"model.global_batch={model.global_batch}"
            )
        out = program_search_kernel(
            model.fwd_cost, model.act_bytes, model.param_elems, model.scalars(), cluster_tuple(cluster)[:6], cfg
        )
        return _ranked(cfg, out, cluster)
    model = model if isinstance(model, Transformer) else Transformer.from_dict(model)
    cfg = enumerate_configs(
        model,
        cluster,
        schedules=SCHEDULE_NAMES if schedules is None else schedules,
        virtual_stages=virtual_stages,
        recompute=RECOMPUTE if recompute is None else recompute,
        zero=zero,
        max_micro_batch=max_micro_batch,
    )
    if cfg.shape[0] == 0:
        raise ValueError(
            f"no parallel configuration of {cluster.gpus} GPUs divides model.layers={model.layers}, "
            f"model.heads={model.heads} and model.global_batch={model.global_batch}"
        )
    out = search_kernel(model.tuple(), cluster_tuple(cluster, stack), cfg)
    return _ranked(cfg, out, cluster)


def _ranked(cfg, out, cluster) -> SearchResult:
    fits = out[:, N_OUT - 1] <= cluster.memory_bytes
    if not fits.any():
        i = int(np.argmin(out[:, N_OUT - 1]))
        smallest = SearchResult(cfg[i : i + 1], out[i : i + 1], cfg.shape[0]).row(0)
        raise ValueError(
            f"the model fits no configuration: the smallest candidate needs "
            f"{out[i, N_OUT - 1] / 2**30:.1f} GiB per GPU (tp={smallest['tp']}, pp={smallest['pp']}, "
            f"dp={smallest['dp']}, micro_batch={smallest['micro_batch']}, recompute={smallest['recompute']}, "
            f"zero={smallest['zero']}) but a GPU has {cluster.memory_gib:g} GiB (cluster.memory_gib)"
        )
    idx = np.flatnonzero(fits)
    order = idx[np.argsort(out[idx, 0], kind="stable")]
    return SearchResult(cfg[order], out[order], int(cfg.shape[0]))


def cluster_tuple(cluster: Cluster, stack=None) -> tuple:
    """Kernel form of a cluster and a software stack (15 floats).

    ``(flops, gpus_per_node, bw_intra, lat_intra, bw_inter, lat_inter, matmul_flops, sms, hbm,
    gemm, attention_fwd, attention_bwd, memory, link, comm_overlap)``; ``matmul_flops = 0`` is
    the flat model. The kernel reads every rate as a share of ``matmul_flops``: the attention
    shares are the stack's shares of the cluster's attention ceiling, times that ceiling over
    ``matmul_flops``.

    Examples
    --------
    >>> cluster_tuple(Cluster())[:2], cluster_tuple(Cluster())[6]
    ((150000000000000.0, 8.0), 0.0)
    """
    bi, li = cluster.link(False)
    be, le = cluster.link(True)
    st = (DEFAULT_STACK if stack is None else stack).checked()
    if cluster.roofline:
        hw = (cluster.matmul_flops, float(cluster.sms), cluster.hbm_gbps * 1e9)
        att = st.attention * (cluster.attention_ceiling / cluster.matmul_flops)
    else:
        hw = (0.0, 0.0, 1.0)
        att = st.attention  # unread: the flat model prices attention at ``flops``
    soft = (st.gemm, att, att * st.attention_bwd, st.memory, st.link, st.comm_overlap)
    return (float(cluster.flops), float(cluster.gpus_per_node), bi, li, be, le, *hw, *soft)
