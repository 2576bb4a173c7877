"""Catalogues of GPU types and models, and the throughput oracle built on them.

Base level: imports nothing above :mod:`fastsched.costmodel` (which it reaches only lazily, for
the strategy search of models too large for data parallelism).
"""

from fastsched.catalog.gpus import ALIASES, GPUS, GpuType, canonical_name, gpu_type, known_names, trace_name, with_types
from fastsched.catalog.models import MODELS, ModelSpec, decoder_spec, known_models, load_model_spec, model_spec
from fastsched.catalog.oracle import DEFAULT_EFFICIENCY, StepTime, calibrate, max_local_bsz, step_time

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
    "StepTime",
    "calibrate",
    "max_local_bsz",
    "step_time",
]
