"""GPU catalogue: named GPU types with their public datasheet numbers (see :mod:`fastsched._gpus`).

The table lives in :mod:`fastsched._gpus`, below both this package and :mod:`fastsched.costmodel`
(the cost model's clusters read it, and this package's oracle calls the cost model); this module
is its documented face.
"""

from fastsched._gpus import (
    ALIASES,
    ATTENTION_FRACTION,
    GPUS,
    MATMUL_FRACTION,
    MAX_GPU_VALUE,
    GpuType,
    canonical_name,
    gpu_type,
    known_names,
    trace_name,
    with_types,
)

__all__ = [
    "GpuType",
    "GPUS",
    "ALIASES",
    "MATMUL_FRACTION",
    "ATTENTION_FRACTION",
    "MAX_GPU_VALUE",
    "gpu_type",
    "canonical_name",
    "trace_name",
    "known_names",
    "with_types",
]
