"""GPU datasheet table: named GPU types with their public datasheet numbers.

The one table of GPU constants, below both :mod:`fastsched.catalog` (which re-exports it as
:mod:`fastsched.catalog.gpus`) and :mod:`fastsched.costmodel` (whose clusters read it): the
catalogue's oracle calls the cost model, so the table both read lives under them, and imports
nothing of either. One catalogue serves the cost model's :class:`~fastsched.costmodel.Cluster`,
``fastsched plan`` and the simulator's cluster specs. Every type has a canonical name (``"t4"``, ``"h100"``) and
aliases, among them the file suffixes of the Sia traces (``aws`` = T4, ``azure`` = V100,
``dgx-ext`` = A100-40GB, ``rtx`` = RTX 2080 Ti, ``quad`` = Quadro RTX 6000). A type measured in
those traces keeps its suffix as its *trace name* (``placements-<trace name>.csv``); every other
type's trace name is its canonical name.

Numbers are per GPU from the vendors' datasheets: dense (no structured sparsity) tensor-core
BF16/FP16, TF32 and FP32 peaks in TFLOP/s; memory in GiB (the datasheet's GB, rounded as sold)
and its bandwidth in GB/s; the intra-node link as one direction of the GPU's NVLink/Infinity
Fabric/PCIe bandwidth in GB/s. ``gpus_per_node`` and ``network_gbps`` (GB/s per node) describe
the node the type is usually sold in (for the five Sia types: the study's nodes); they are a
deployment choice, not a property of the chip, so a cluster file may override them.

Two numbers feed the cost model's matrix-multiply model (:mod:`fastsched.costmodel.roofline`):
``sms``, the streaming multiprocessors (compute units on AMD) that a GEMM's output tiles are
spread over in waves, and ``matmul_tflops``, the largest BF16 matrix-multiply rate measured on
the type (the "maximum achievable matmul FLOPS" of Bekman's *Machine Learning Engineering*,
``compute/accelerator/README.md``, table of MAMF measurements, torch 2.6-2.7): the datasheet
peaks assume clocks that a busy GPU does not hold. Where no measurement is published it is 0,
read as :data:`MATMUL_FRACTION` of the BF16 peak. A third, ``attention_tflops``, is the fused
attention kernel's ceiling: the largest published forward + backward rate of FlashAttention-2,
which uses no architecture-specific instructions (Dao 2023, arXiv 2307.08691). A portable kernel
gains far less than cuBLAS from A100 to H100 (1.64x against 2.93x), so attention cannot be one
share of the matmul ceiling on every type. Unpublished: 0, read as :data:`ATTENTION_FRACTION` of
the matmul ceiling (A100's ratio).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from fastsched._datafile import read_data_file

__all__ = [
    "GpuType",
    "GPUS",
    "ALIASES",
    "MATMUL_FRACTION",
    "ATTENTION_FRACTION",
    "gpu_type",
    "canonical_name",
    "trace_name",
    "known_names",
    "with_types",
]

#: Measured matrix-multiply ceiling over the BF16 datasheet peak for a type without a published
#: measurement: about the NVIDIA types' measured ratios (A100 SXM 0.869, H100 SXM 0.803, GH200
#: 0.838, B200 0.776; Bekman's MAMF table).
MATMUL_FRACTION = 0.8

#: A100's published FlashAttention-2 forward + backward rate over its measured matmul ceiling,
#: 204.6 / 271.2: the fused-attention ceiling of a type without a published figure, as a share of
#: its matmul ceiling (such a type keeps the attention rate it had when attention was priced as a
#: share of the matmul ceiling on every type).
ATTENTION_FRACTION = 204.6 / 271.2


class GpuType(NamedTuple):
    """One GPU type's datasheet numbers.

    Attributes
    ----------
    name : str
        Canonical name (lower case).
    label : str
        Human-readable name.
    bf16_tflops, tf32_tflops, fp32_tflops : float
        Dense peaks, TFLOP/s (``tf32_tflops`` equals ``fp32_tflops`` on types without TF32).
    memory_gib : float
        Memory per GPU, GiB.
    memory_gbps : float
        Memory bandwidth, GB/s.
    intra_gbps : float
        Per-GPU intra-node link bandwidth, one direction, GB/s.
    gpus_per_node : int
        GPUs per node.
    network_gbps : float
        Network bandwidth per node, GB/s (10**9 bytes/s).
    trace_name : str
        File suffix of the type's traces (``placements-<trace_name>.csv``).
    sms : int
        Streaming multiprocessors (compute units): the GEMM model's wave width (0: unknown, no
        wave quantisation).
    matmul_tflops : float
        Measured BF16 matrix-multiply ceiling, TFLOP/s (0: unknown, :data:`MATMUL_FRACTION` of
        ``bf16_tflops``).
    attention_tflops : float
        Published forward + backward BF16 rate of a portable fused attention kernel
        (FlashAttention-2), TFLOP/s (0: unknown, :data:`ATTENTION_FRACTION` of the matmul ceiling).

    Examples
    --------
    >>> t = gpu_type("h100")
    >>> t.label, t.bf16_tflops, t.gpus_per_node
    ('H100 SXM', 989.0, 8)
    """

    name: str
    label: str
    bf16_tflops: float
    tf32_tflops: float
    fp32_tflops: float
    memory_gib: float
    memory_gbps: float
    intra_gbps: float
    gpus_per_node: int
    network_gbps: float
    trace_name: str
    sms: int = 0
    matmul_tflops: float = 0.0
    attention_tflops: float = 0.0

    def matmul_ceiling_tflops(self, precision: str) -> float:
        """Largest matrix-multiply rate at ``precision``: the measured BF16 ceiling's share of the peak, applied to it.

        Examples
        --------
        >>> gpu_type("h100").matmul_ceiling_tflops("bf16"), gpu_type("l4").matmul_ceiling_tflops("bf16")
        (794.5, 96.8)
        >>> round(gpu_type("a100-80gb").matmul_ceiling_tflops("tf32"), 1)
        135.6
        """
        share = self.matmul_tflops / self.bf16_tflops if self.matmul_tflops > 0 else MATMUL_FRACTION
        return self.peak_tflops(precision) * share

    def attention_ceiling_tflops(self, precision: str) -> float:
        """Fused attention's ceiling at ``precision``: the published rate's share of the matmul ceiling, applied to it.

        Without a published rate the share is :data:`ATTENTION_FRACTION` (A100's).

        Examples
        --------
        >>> gpu_type("a100-80gb").attention_ceiling_tflops("bf16"), gpu_type("h100").attention_ceiling_tflops("bf16")
        (204.6, 335.0)
        >>> round(gpu_type("l4").attention_ceiling_tflops("bf16") / gpu_type("l4").matmul_ceiling_tflops("bf16"), 3)
        0.754
        """
        ceiling = self.matmul_ceiling_tflops(precision)
        if self.attention_tflops > 0:
            return self.attention_tflops * (ceiling / self.matmul_ceiling_tflops("bf16"))
        return ceiling * ATTENTION_FRACTION

    def peak_tflops(self, precision: str) -> float:
        """Dense peak for ``precision`` (``"bf16"``/``"fp16"``, ``"tf32"`` or ``"fp32"``).

        ``"tf32"`` is what frameworks use for FP32 matrix multiplies and convolutions on GPUs
        that have it (cuDNN's default); on older GPUs it is their FP32 peak.

        Examples
        --------
        >>> gpu_type("a100-40gb").peak_tflops("tf32"), gpu_type("t4").peak_tflops("tf32")
        (156.0, 8.1)
        """
        if precision in ("bf16", "fp16"):
            return self.bf16_tflops
        if precision == "tf32":
            return self.tf32_tflops
        if precision == "fp32":
            return self.fp32_tflops
        raise ValueError(f"precision must be one of bf16, fp16, tf32, fp32, got {precision!r}")


def _t(name, label, bf16, tf32, fp32, mem, mem_bw, intra, gpn, net, trace=None, sms=0, mamf=0.0, att=0.0) -> GpuType:
    return GpuType(name, label, bf16, tf32, fp32, mem, mem_bw, intra, gpn, net, trace or name, sms, mamf, att)


# Intra-node one-direction bandwidths: PCIe 3.0 x16 = 16 GB/s, PCIe 4.0 x16 = 32 GB/s; NVLink 2 on
# V100 SXM2 = 150 GB/s (300 both ways), NVLink 3 = 300, NVLink 4 = 450, NVLink 5 = 900;
# MI300X's seven Infinity Fabric links = 448 GB/s.
# Networks per node: the Sia study's nodes for the five measured types (AWS g4dn.12xlarge 50 Gb/s,
# Azure ND40rs_v2 100 Gb/s InfiniBand, DGX A100 8 x 200 Gb/s; the two on-premise PCIe machines are
# taken as 100 Gb/s), 8 x 400 Gb/s for the HGX-class nodes of H100/H200/B200/MI300X, the AWS
# g6/g6e nodes (100/400 Gb/s) for L4/L40S.
# SMs (compute units), from the architecture whitepapers and datasheets: T4 (TU104) 40, V100 80,
# A100 108, RTX 2080 Ti (TU102) 68, Quadro RTX 6000 (TU102) 72, L4 (AD104) 58, L40S (AD102) 142,
# H100/H200 SXM 132, B200 148 (two dies), MI300X 304 CUs.
# Measured BF16 matmul ceilings (MAMF, TFLOP/s; Bekman, Machine Learning Engineering,
# github.com/stas00/ml-engineering, compute/accelerator/README.md): A100 SXM 271.2, H100 SXM
# 794.5, B200 1745.0, MI300X 781.9; the others are unmeasured there (0: MATMUL_FRACTION of the peak).
# Fused attention, FlashAttention-2 forward + backward, TFLOP/s (Dao 2023, arXiv 2307.08691): A100
# 204.6 = 312 x 3.5 / (1/0.73 + 2.5/0.63) from its "up to 73 % of the theoretical max forward and up
# to 63 % backward" (section 1) with the backward's 2.5x work; H100 335, "just running the same
# implementation on H100 GPUs (using no special instructions ... TMA and 4th-gen Tensor Cores)"
# (section 4.1, Fig. 7); FlashAttention-3 (Shah et al. 2024) gives FA2 "only 35% utilization on the
# H100". H200 takes H100's: the same GH100 SMs and clocks (its HBM3e does not speed a compute-bound
# kernel). The others are unpublished (0: ATTENTION_FRACTION of the matmul ceiling).
# fmt: off
#: Built-in GPU types by canonical name.
GPUS: dict[str, GpuType] = {
    t.name: t
    for t in (
        _t("t4", "T4", 65.0, 8.1, 8.1, 16.0, 320.0, 16.0, 4, 6.25, "aws", 40),
        _t("v100", "V100 SXM2", 125.0, 15.7, 15.7, 32.0, 900.0, 150.0, 8, 12.5, "azure", 80),
        _t("a100-40gb", "A100 SXM 40GB", 312.0, 156.0, 19.5, 40.0, 1555.0, 300.0, 8, 200.0, "dgx-ext",
           108, 271.2, 204.6),
        _t("a100-80gb", "A100 SXM 80GB", 312.0, 156.0, 19.5, 80.0, 2039.0, 300.0, 8, 200.0, None, 108, 271.2, 204.6),
        _t("rtx2080ti", "GeForce RTX 2080 Ti", 53.8, 13.45, 13.45, 11.0, 616.0, 16.0, 8, 12.5, "rtx", 68),
        _t("quadro-rtx6000", "Quadro RTX 6000", 130.5, 16.3, 16.3, 24.0, 672.0, 16.0, 4, 12.5, "quad", 72),
        _t("l4", "L4", 121.0, 60.0, 30.3, 24.0, 300.0, 32.0, 8, 12.5, None, 58),
        _t("l40s", "L40S", 362.0, 183.0, 91.6, 48.0, 864.0, 32.0, 8, 50.0, None, 142),
        _t("h100", "H100 SXM", 989.0, 494.5, 67.0, 80.0, 3350.0, 450.0, 8, 400.0, None, 132, 794.5, 335.0),
        _t("h200", "H200 SXM", 989.0, 494.5, 67.0, 141.0, 4800.0, 450.0, 8, 400.0, None, 132, 0.0, 335.0),
        _t("b200", "B200", 2250.0, 1100.0, 75.0, 180.0, 7700.0, 900.0, 8, 400.0, None, 148, 1745.0),
        _t("mi300x", "Instinct MI300X", 1307.4, 653.7, 163.4, 192.0, 5300.0, 448.0, 8, 400.0, None, 304, 781.9),
    )
}
# fmt: on

#: Other names of the built-in types (lower case): the Sia trace suffixes and common spellings.
ALIASES: dict[str, str] = {
    "aws": "t4",
    "azure": "v100",
    "dgx-ext": "a100-40gb",
    "dgx": "a100-40gb",  # the traces' A100 profile with the limited batch-size range
    "rtx": "rtx2080ti",
    "quad": "quadro-rtx6000",
    "a100": "a100-40gb",
    "a100-40g": "a100-40gb",
    "a100-80g": "a100-80gb",
    "v100-sxm2": "v100",
    "2080ti": "rtx2080ti",
    "rtx-2080ti": "rtx2080ti",
    "quadro": "quadro-rtx6000",
    "rtx6000": "quadro-rtx6000",
    "h100-sxm": "h100",
    "h200-sxm": "h200",
}

# Trace names that are not the type's own (the traces' "dgx" profile is an A100 too).
_TRACE_ALIASES = {"dgx": "dgx"}

_FIELDS = GpuType._fields
#: Fields a new user type may leave out, with the value they then take (unknown).
_OPTIONAL = {"sms": 0, "matmul_tflops": 0.0, "attention_tflops": 0.0}
#: Most SMs (compute units) of a user type.
MAX_SMS = 1 << 20
#: Largest datasheet number of a user type (TFLOP/s, GiB, GB/s): the oracle's products stay finite.
MAX_GPU_VALUE = 1e9
_TRACE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def known_names(catalog=None) -> list[str]:
    """Canonical names and aliases a catalogue accepts, sorted.

    Examples
    --------
    >>> {"h100", "aws", "t4"} <= set(known_names())
    True
    """
    cat = GPUS if catalog is None else catalog
    return sorted(set(cat) | {a for a, c in ALIASES.items() if c in cat})


def canonical_name(name, catalog=None) -> str:
    """Return the canonical name of ``name`` (case-insensitive; aliases resolved).

    Raises
    ------
    ValueError
        An unknown name (the message lists the known ones).

    Examples
    --------
    >>> canonical_name("AWS"), canonical_name("H100-SXM"), canonical_name("l4")
    ('t4', 'h100', 'l4')
    """
    cat = GPUS if catalog is None else catalog
    if not isinstance(name, str):
        raise TypeError(f"GPU type must be a string, got {type(name).__name__}")
    key = name.strip().lower()
    if key in cat:
        return key
    alias = ALIASES.get(key)
    if alias is not None and alias in cat:
        return alias
    raise ValueError(f"unknown GPU type {name!r}; known types: {known_names(cat)}")


def gpu_type(name, catalog=None) -> GpuType:
    """Look up a GPU type by canonical name or alias.

    Parameters
    ----------
    name : str
    catalog : dict, optional
        ``{name: GpuType}`` (default :data:`GPUS`; see :func:`with_types` for user types).

    Examples
    --------
    >>> gpu_type("dgx-ext").label, gpu_type("quad").memory_gib
    ('A100 SXM 40GB', 24.0)
    """
    cat = GPUS if catalog is None else catalog
    return cat[canonical_name(name, cat)]


def trace_name(name, catalog=None) -> str:
    """File suffix of ``name``'s traces: the Sia suffix of a measured type, else the canonical name.

    Examples
    --------
    >>> trace_name("t4"), trace_name("aws"), trace_name("dgx"), trace_name("H100")
    ('aws', 'aws', 'dgx', 'h100')
    """
    key = name.strip().lower() if isinstance(name, str) else name
    if key in _TRACE_ALIASES:
        return _TRACE_ALIASES[key]
    return gpu_type(name, catalog).trace_name


def with_types(types, catalog=None) -> dict:
    """Return a catalogue with user types added or built-in ones overridden.

    Parameters
    ----------
    types : mapping, path or None
        ``{name: {field: value, ...}}``: a known name (or alias) overrides the given fields of
        that type; a new name needs every datasheet field, or ``"base": KNOWN`` to start from a
        known type. A path reads a JSON or TOML file holding such a mapping (at top level or
        under ``gpu_types``).
    catalog : dict, optional
        Starting catalogue (default :data:`GPUS`).

    Returns
    -------
    dict
        ``{canonical name: GpuType}`` (the input is not changed).

    Raises
    ------
    ValueError
        Unknown fields, a missing field of a new type, non-positive numbers (naming the field).

    Examples
    --------
    >>> cat = with_types({"h100": {"gpus_per_node": 4}, "my-gpu": {"base": "a100-80gb", "fp32_tflops": 25}})
    >>> cat["h100"].gpus_per_node, cat["my-gpu"].fp32_tflops, cat["my-gpu"].memory_gib
    (4, 25.0, 80.0)
    """
    out = dict(GPUS if catalog is None else catalog)
    if types is None:
        return out
    if isinstance(types, (str, Path)):
        types = _read_types_file(Path(types))
    if not isinstance(types, Mapping):
        raise TypeError(f"gpu_types must be a mapping of name -> fields, got {type(types).__name__}")
    for raw, spec in types.items():
        where = f"gpu_types.{raw}"
        if not isinstance(spec, Mapping):
            raise TypeError(f"{where} must be a mapping of fields, got {type(spec).__name__}")
        spec = dict(spec)
        extra = sorted(set(spec) - set(_FIELDS) - {"base"})
        if extra:
            raise ValueError(f"{where}: unknown field(s) {extra}; known: {sorted(set(_FIELDS) - {'name'}) + ['base']}")
        base_name = spec.pop("base", None)
        key = str(raw).strip().lower()
        try:
            base = gpu_type(base_name if base_name is not None else key, out)
            if base_name is None:
                key = base.name  # an alias overrides the type it names
        except ValueError:
            if base_name is not None:
                raise ValueError(
                    f"{where}.base: unknown GPU type {base_name!r}; known types: {known_names(out)}"
                ) from None
            base = None
        if base is None:
            missing = [f for f in _FIELDS if f not in spec and f not in ("name", "label", "trace_name", *_OPTIONAL)]
            if missing:
                raise ValueError(f"{where}: a new GPU type needs {missing} (or 'base': a known type)")
            values = {"name": key, "label": str(raw), "trace_name": key, **_OPTIONAL}
        else:
            values = base._asdict()
            if base_name is not None:
                values.update(name=key, label=str(raw), trace_name=key)
            for f in ("matmul_tflops", "attention_tflops"):
                if "bf16_tflops" in spec and f not in spec:
                    values[f] = 0.0  # measured on the base's peak, not on the new one
        values.update(spec)
        values["name"] = key
        out[key] = _checked(where, values)
    return out


def _checked(where, values) -> GpuType:
    for f in ("bf16_tflops", "tf32_tflops", "fp32_tflops", "memory_gib", "memory_gbps", "intra_gbps", "network_gbps"):
        v = values[f]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v <= MAX_GPU_VALUE):
            raise ValueError(f"{where}.{f} must be a positive number <= {MAX_GPU_VALUE:g}, got {v!r}")
        values[f] = float(v)
    sms = values["sms"]
    if isinstance(sms, bool) or not isinstance(sms, int) or not 0 <= sms <= MAX_SMS:
        raise ValueError(f"{where}.sms must be an integer in [0, {MAX_SMS}] (0: unknown), got {sms!r}")
    for f in ("matmul_tflops", "attention_tflops"):  # measured ceilings: at most the peak
        v = values[f]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= values["bf16_tflops"]:
            raise ValueError(
                f"{where}.{f} must be in [0, bf16_tflops={values['bf16_tflops']:g}] (0: unknown), got {v!r}"
            )
        values[f] = float(v)
    g = values["gpus_per_node"]
    if isinstance(g, bool) or not isinstance(g, int) or g < 1:
        raise ValueError(f"{where}.gpus_per_node must be an integer >= 1, got {g!r}")
    for f in ("label", "trace_name"):
        if not isinstance(values[f], str) or not values[f]:
            raise ValueError(f"{where}.{f} must be a non-empty string, got {values[f]!r}")
    if not _TRACE_NAME.match(values["trace_name"]):  # a file-name suffix: placements-<trace_name>.csv
        raise ValueError(f"{where}.trace_name must be a plain name (letters, digits, '_', '.', '-')")
    return GpuType(**{f: values[f] for f in _FIELDS})


def _read_types_file(path: Path) -> dict:
    data = read_data_file(path, what="GPU types file")
    if isinstance(data, Mapping) and "gpu_types" in data:
        data = data["gpu_types"]
    return data
