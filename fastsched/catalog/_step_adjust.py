"""A bootstrap profile's corrections of the datasheet step (:class:`StepAdjust`) and their bounds.

Kept apart from :mod:`fastsched.catalog.oracle`, which applies them (and re-exports every name
here), so that each module has one job: this one says what a measured correction is and checks
it; the oracle says how a step is priced.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["StepAdjust", "MAX_SCALE", "MAX_FLOOR_S"]

#: Largest per-step floor, seconds (an hour: any measured floor is far below).
MAX_FLOOR_S = 3600.0
#: Largest multiplier of a :class:`StepAdjust` (a factor of a thousand either way of the datasheet).
MAX_SCALE = 1000.0


class StepAdjust(NamedTuple):
    """Per (model, GPU type) corrections of the datasheet step, as a bootstrap profile measures them.

    Attributes
    ----------
    gpu_scale, host_scale : float
        Multipliers of the GPU and host parts of the step (1: the datasheet's).
    contention : float
        The compute of a placement whose fullest node uses all ``G`` GPUs takes ``1 +
        contention`` times the one-GPU compute; ``g`` GPUs, ``1 + contention (g - 1) / (G - 1)``.
    node_sync_s : float
        Seconds of the all-reduce over a full node's shared path (0: the datasheet ring only);
        a one-node placement of ``g`` GPUs pays at least ``node_sync_s (g - 1) / (G - 1)``.
    hop_latency_s : float
        Seconds each of a ring all-reduce's ``2 (n - 1)`` steps waits when the fullest node
        uses all ``G`` GPUs (the alpha of the alpha-beta model, beyond the datasheet's link
        latency); ``hop_latency_s (g - 1) / (G - 1)`` when it uses ``g``: 0 for one GPU per node.
        Paid by every placement of several GPUs, one node or several.

    Examples
    --------
    >>> StepAdjust().contention, StepAdjust(gpu_scale=2.0).host_scale, StepAdjust().hop_latency_s
    (0.0, 1.0, 0.0)
    """

    gpu_scale: float = 1.0
    host_scale: float = 1.0
    contention: float = 0.0
    node_sync_s: float = 0.0
    hop_latency_s: float = 0.0


def _bad_number(v, lo, hi) -> bool:
    return isinstance(v, bool) or not isinstance(v, (int, float)) or not (lo <= v <= hi)


def _check_adjust(a):
    """Return ``a`` (a :class:`StepAdjust` or ``None``) after checking each field's range."""
    if a is None:
        return None
    if not isinstance(a, StepAdjust):
        raise TypeError(f"adjust must be a StepAdjust, got {type(a).__name__}")
    for name in ("gpu_scale", "host_scale"):
        if _bad_number(getattr(a, name), 1.0 / MAX_SCALE, MAX_SCALE):
            raise ValueError(f"adjust.{name} must be in [{1.0 / MAX_SCALE:g}, {MAX_SCALE:g}], got {getattr(a, name)!r}")
    if _bad_number(a.contention, 0.0, MAX_SCALE):
        raise ValueError(f"adjust.contention must be in [0, {MAX_SCALE:g}], got {a.contention!r}")
    for name in ("node_sync_s", "hop_latency_s"):
        if _bad_number(getattr(a, name), 0.0, MAX_FLOOR_S):
            raise ValueError(f"adjust.{name} must be in [0, {MAX_FLOOR_S:g}] seconds, got {getattr(a, name)!r}")
    return a


def _node_factor(gpus_per_node: int, used) -> float:
    """Return ``(used - 1) / (G - 1)``: 0 for one GPU of a node, 1 for all ``G`` of it (1 for a one-GPU node)."""
    per_node = max(int(gpus_per_node), 1)
    return 1.0 if per_node == 1 else (min(used, per_node) - 1.0) / (per_node - 1.0)
