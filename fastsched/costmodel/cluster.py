"""A cluster description with units: GPUs, memory, FLOP/s, links (GB/s, µs).

The seed's cost model has one constant, 32.768, by which it divides a tensor's *bytes*
to get milliseconds: it meant 32.768 MB/ms (a V100 PCIe link) but applied it to bytes,
so its communication costs are 10**6 times too large (an 8 KiB send costs 250 ms). That
constant stays the default of :func:`fastsched.costmodel.estimate` (it reproduces the
reference's numbers); pass a :class:`Cluster` for real units.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from fastsched._gpus import ATTENTION_FRACTION, GpuType, gpu_type
from fastsched._validate import check_finite_scalar, check_int_scalar
from fastsched.costmodel._bounds import MAX_GPUS

__all__ = ["Cluster", "CommParams", "comm_params", "load_cluster"]

#: A node count that no program reaches: "everything on one node" for the seed's constant.
_ONE_NODE = 1 << 62


@dataclass(frozen=True)
class Cluster:
    """GPUs and their links.

    Parameters
    ----------
    gpus : int
        Number of GPUs.
    gpus_per_node : int
        GPUs sharing the intra-node links (NVLink); ranks ``r`` and ``q`` share a node when
        ``r // gpus_per_node == q // gpus_per_node``.
    memory_gib : float
        Memory per GPU (GiB).
    flops : float
        Achievable FLOP/s per GPU on the model's matrix multiplies (not the peak): the flat
        model, every FLOP at this rate, used when ``matmul_flops`` is None.
    intra_bandwidth, inter_bandwidth : float
        Per-GPU bandwidth of one direction, GB/s (10**9 bytes/s), inside a node and between
        nodes.
    intra_latency_us, inter_latency_us : float
        Per-message latency, µs.
    matmul_flops : float or None
        The GPU's measured matrix-multiply ceiling, FLOP/s. Given, the strategy search prices
        each GEMM by its shape (:mod:`fastsched.costmodel.roofline`: tile and wave quantisation
        over ``sms``, a memory roof at ``hbm_gbps``), memory-bound work at ``hbm_gbps``, and the
        links at the software stack's share of their bandwidth; :meth:`from_gpu` sets it.
    sms : int
        Streaming multiprocessors (0: no wave quantisation); read with ``matmul_flops``.
    hbm_gbps : float or None
        Memory bandwidth, GB/s; needed with ``matmul_flops``.
    attention_flops : float or None
        The fused attention kernel's ceiling, FLOP/s (forward + backward of FlashAttention-2 on
        the type, :meth:`GpuType.attention_ceiling_tflops
        <fastsched.catalog.gpus.GpuType.attention_ceiling_tflops>`); read with ``matmul_flops``.
        None: :data:`~fastsched.catalog.gpus.ATTENTION_FRACTION` of ``matmul_flops``
        (:attr:`attention_ceiling`).

    Examples
    --------
    >>> c = Cluster(gpus=16, inter_bandwidth=25.0)
    >>> c.link(inter=True)  # bytes per ms, ms per message
    (25000000.0, 0.01)
    >>> c.roofline, Cluster.from_gpu("a100-80gb").roofline
    (False, True)
    """

    gpus: int = 8
    gpus_per_node: int = 8
    memory_gib: float = 80.0
    flops: float = 150e12
    intra_bandwidth: float = 300.0
    inter_bandwidth: float = 25.0
    intra_latency_us: float = 5.0
    inter_latency_us: float = 10.0
    matmul_flops: float | None = None
    sms: int = 0
    hbm_gbps: float | None = None
    attention_flops: float | None = None

    def __post_init__(self):
        for name in ("gpus", "gpus_per_node"):
            v = check_int_scalar(f"cluster.{name}", getattr(self, name), low=1, high=MAX_GPUS)
            object.__setattr__(self, name, v)
        for name in ("memory_gib", "flops", "intra_bandwidth", "inter_bandwidth"):
            v = check_finite_scalar(f"cluster.{name}", getattr(self, name), low=0.0, low_open=True)
            object.__setattr__(self, name, v)
        for name in ("intra_latency_us", "inter_latency_us"):
            object.__setattr__(self, name, check_finite_scalar(f"cluster.{name}", getattr(self, name), low=0.0))
        object.__setattr__(self, "sms", check_int_scalar("cluster.sms", self.sms, low=0, high=1 << 20))
        for name in ("matmul_flops", "hbm_gbps", "attention_flops"):
            if getattr(self, name) is not None:
                v = check_finite_scalar(f"cluster.{name}", getattr(self, name), low=0.0, low_open=True)
                object.__setattr__(self, name, v)
        if self.matmul_flops is not None and self.hbm_gbps is None:
            raise ValueError("cluster.hbm_gbps: the GEMM model (cluster.matmul_flops) needs the memory bandwidth")

    @property
    def roofline(self) -> bool:
        """Whether the strategy search prices GEMMs by their shapes (``matmul_flops`` given)."""
        return self.matmul_flops is not None

    @property
    def attention_ceiling(self) -> float | None:
        """Fused attention's ceiling, FLOP/s: ``attention_flops``, else ATTENTION_FRACTION of ``matmul_flops``.

        Examples
        --------
        >>> Cluster.from_gpu("h100").attention_ceiling / 1e12, Cluster(gpus=8).attention_ceiling
        (335.0, None)
        >>> round(Cluster(matmul_flops=100e12, hbm_gbps=1000.0).attention_ceiling / 1e12, 2)  # A100's ratio
        75.44
        """
        if self.matmul_flops is None:
            return None
        if self.attention_flops is not None:
            return self.attention_flops
        return self.matmul_flops * ATTENTION_FRACTION

    @property
    def nodes(self) -> int:
        """Number of nodes (rounded up)."""
        return -(-self.gpus // self.gpus_per_node)

    @property
    def memory_bytes(self) -> float:
        """Memory per GPU in bytes."""
        return self.memory_gib * 2.0**30

    def link(self, inter: bool) -> tuple:
        """``(bytes per ms, latency ms)`` of the intra- or inter-node link.

        Examples
        --------
        >>> c = Cluster(intra_bandwidth=300.0, intra_latency_us=5.0)
        >>> c.link(inter=False)  # bytes per ms, ms per message
        (300000000.0, 0.005)
        """
        if inter:
            return self.inter_bandwidth * 1e6, self.inter_latency_us * 1e-3
        return self.intra_bandwidth * 1e6, self.intra_latency_us * 1e-3

    @classmethod
    def from_gpu(cls, gpu, gpus=8, *, gpus_per_node=None, efficiency=None, precision="bf16", catalog=None) -> Cluster:
        """Build a cluster of one catalogued GPU type (:mod:`fastsched.catalog.gpus`).

        Without ``efficiency`` the cluster carries the type's constants for the GEMM model
        (``matmul_flops``: its measured matrix-multiply ceiling at ``precision``, ``sms``,
        ``hbm_gbps``, ``attention_flops``: its fused-attention ceiling), the model held against published training runs
        (``benchmarks/costmodel/published.py``); ``flops`` is then that ceiling. With
        ``efficiency``, the flat model: ``flops`` is the dense ``precision`` peak times
        ``efficiency``. The inter-node bandwidth is the node's network shared by its GPUs.

        Examples
        --------
        >>> c = Cluster.from_gpu("h100", gpus=16)
        >>> c.gpus_per_node, c.memory_gib, c.matmul_flops / 1e12, c.sms, c.inter_bandwidth
        (8, 80.0, 794.5, 132, 50.0)
        >>> round(Cluster.from_gpu("h100", efficiency=0.4).flops / 1e12, 1), Cluster.from_gpu("h100", efficiency=0.4).roofline
        (395.6, False)
        """
        g = gpu if isinstance(gpu, GpuType) else gpu_type(gpu, catalog)
        gpn = g.gpus_per_node if gpus_per_node is None else gpus_per_node
        common = {
            "gpus": gpus,
            "gpus_per_node": gpn,
            "memory_gib": g.memory_gib,
            "intra_bandwidth": g.intra_gbps,
            "inter_bandwidth": g.network_gbps / g.gpus_per_node,
        }
        if efficiency is None:
            ceiling = g.matmul_ceiling_tflops(precision) * 1e12
            att = g.attention_ceiling_tflops(precision) * 1e12
            return cls(flops=ceiling, matmul_flops=ceiling, sms=g.sms, hbm_gbps=g.memory_gbps, attention_flops=att,
                       **common)  # fmt: skip
        eff = check_finite_scalar("efficiency", efficiency, low=0.0, low_open=True, high=1.0)
        return cls(flops=g.peak_tflops(precision) * 1e12 * eff, **common)

    @classmethod
    def from_dict(cls, d) -> Cluster:
        """Build from a mapping (unknown keys are an error naming them).

        A ``"gpu"`` key names a catalogued type (:meth:`from_gpu`) whose numbers the other keys
        override.

        Examples
        --------
        >>> Cluster.from_dict({"gpus": 64, "memory_gib": 40}).nodes
        8
        >>> Cluster.from_dict({"gpu": "a100-80gb", "gpus": 16, "gpus_per_node": 4}).memory_gib
        80.0
        """
        if isinstance(d, Cluster):
            return d
        if not isinstance(d, Mapping):
            raise TypeError(f"cluster must be a mapping, got {type(d).__name__}")
        if "gpu" in d:
            d = dict(d)
            base = cls.from_gpu(d.pop("gpu"), d.get("gpus", 8)).to_dict()
            if "flops" in d and "matmul_flops" not in d:
                base["matmul_flops"] = None  # an achievable FLOP/s given: the flat model
                base["attention_flops"] = None
            base.update(d)
            d = base
        known = {f.name for f in fields(cls)}
        extra = set(d) - known
        if extra:
            raise ValueError(f"cluster: unknown field(s) {sorted(extra)}; known: {sorted(known)}")
        return cls(**d)

    def to_dict(self) -> dict:
        """Plain-JSON form.

        Examples
        --------
        >>> d = Cluster(gpus=16).to_dict()
        >>> d["gpus"], d["gpus_per_node"], Cluster.from_dict(d) == Cluster(gpus=16)
        (16, 8, True)
        """
        return asdict(self)


def load_cluster(path) -> Cluster:
    """Read a cluster description from JSON (the :class:`Cluster` fields).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "c.json")
    ...     _ = open(p, "w").write('{"gpus": 16}')
    ...     load_cluster(p).nodes
    2
    """
    with open(Path(path), encoding="utf-8") as fh:
        return Cluster.from_dict(json.load(fh))


@dataclass(frozen=True)
class CommParams:
    """Link parameters of the estimate kernel: bytes/ms and ms per step, intra and inter node.

    Examples
    --------
    >>> CommParams(1e6, 0.0, 1e5, 0.01, 8, False).bw_inter
    100000.0
    """

    bw_intra: float
    lat_intra: float
    bw_inter: float
    lat_inter: float
    gpus_per_node: int
    seed_units: bool


def comm_params(cluster, bandwidth_of) -> CommParams:
    """Kernel link parameters from ``cluster`` (a :class:`Cluster`, or the seed's bandwidth).

    Examples
    --------
    >>> comm_params(Cluster(), None).bw_inter
    25000000.0
    """
    if isinstance(cluster, Mapping) and "bandwidth" not in cluster:
        cluster = Cluster.from_dict(cluster)
    if isinstance(cluster, Cluster):
        bi, li = cluster.link(False)
        be, le = cluster.link(True)
        return CommParams(bi, li, be, le, cluster.gpus_per_node, False)
    bw = bandwidth_of(cluster)
    return CommParams(bw, 0.0, bw, 0.0, _ONE_NODE, True)
