"""Catalogues of GPU types and models, and the throughput oracle built on them.

Above :mod:`fastsched.costmodel`, which it reaches lazily (numba loads only for the strategy
search of models too large for data parallelism); the GPU table both read lives below them, in
:mod:`fastsched._gpus` (:mod:`.gpus` re-exports it). The cost model never imports this package.
"""

from fastsched._lazy import lazy_exports

# Public name -> defining module, imported on first use: importing this package (or the GPU
# table alone, as a cluster spec does) loads nothing else.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "ALIASES": "fastsched.catalog.gpus",
        "GPUS": "fastsched.catalog.gpus",
        "GpuType": "fastsched.catalog.gpus",
        "canonical_name": "fastsched.catalog.gpus",
        "gpu_type": "fastsched.catalog.gpus",
        "known_names": "fastsched.catalog.gpus",
        "trace_name": "fastsched.catalog.gpus",
        "with_types": "fastsched.catalog.gpus",
        "MODELS": "fastsched.catalog.models",
        "ModelSpec": "fastsched.catalog.models",
        "decoder_spec": "fastsched.catalog.models",
        "known_models": "fastsched.catalog.models",
        "load_model_spec": "fastsched.catalog.models",
        "model_spec": "fastsched.catalog.models",
        "DEFAULT_EFFICIENCY": "fastsched.catalog.oracle",
        "Calibration": "fastsched.catalog.oracle",
        "StepTime": "fastsched.catalog.oracle",
        "calibrate": "fastsched.catalog.oracle",
        "calibrate_floors": "fastsched.catalog.oracle",
        "max_local_bsz": "fastsched.catalog.oracle",
        "step_time": "fastsched.catalog.oracle",
    },
)

__all__ = [
    "ALIASES",
    "GPUS",
    "GpuType",
    "canonical_name",
    "gpu_type",
    "known_names",
    "trace_name",
    "with_types",
    "MODELS",
    "ModelSpec",
    "decoder_spec",
    "known_models",
    "load_model_spec",
    "model_spec",
    "DEFAULT_EFFICIENCY",
    "Calibration",
    "StepTime",
    "calibrate",
    "calibrate_floors",
    "max_local_bsz",
    "step_time",
]
