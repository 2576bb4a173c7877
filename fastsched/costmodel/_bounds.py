"""Stated upper bounds of the strategy search's inputs, checked before any work.

The search's time grows with the divisors of the GPU count and of the layer count, and with
the model's dimensions through its figures; these bounds keep every accepted request to
seconds, and stand far above any real cluster or published model (the largest trained
decoders have about 100-130 layers, hidden sizes near 25,000 and vocabularies of a few
hundred thousand; the largest training clusters hold about 10**5 GPUs).

This module imports nothing, so ``fastsched plan`` refuses an out-of-range request before it
loads the cost model (numba, numpy).
"""

from __future__ import annotations

__all__ = ["MAX_GPUS", "MAX_WORK", "MODEL_BOUNDS", "check_plan_request"]

#: Most GPUs a plan may cover (2**24, about 16.8 million).
MAX_GPUS = 1 << 24

#: Largest ``microbatches x stages x virtual_stages`` a pipeline simulation runs (two completion-time
#: tables of this size); ``fastsched cost --microbatches`` is bounded by it too.
MAX_WORK = 20_000_000

#: Largest value of each transformer field a plan accepts.
MODEL_BOUNDS = {
    "layers": 1 << 16,
    "hidden": 1 << 20,
    "heads": 1 << 16,
    "seq": 1 << 24,
    "vocab": 1 << 24,
    "global_batch": 1 << 53,
    "dtype_bytes": 16,
}


def _over(name, value, bound) -> str | None:
    # Only integers are compared here: every other value is left to the full validation.
    if isinstance(value, int) and not isinstance(value, bool) and value > bound:
        return f"{name}={value} is over the limit of {bound:,}"
    return None


def check_plan_request(gpus, model=None) -> None:
    """Raise ``ValueError`` when a plan's GPU count or a transformer field is over its bound.

    Parameters
    ----------
    gpus : int
        GPUs of the plan (``cluster.gpus``).
    model : mapping, optional
        A transformer's fields (a model file's object); other keys are ignored.

    Examples
    --------
    >>> check_plan_request(64, {"layers": 24, "hidden": 2048})
    >>> check_plan_request(10**12)
    Traceback (most recent call last):
    ...
    ValueError: cluster.gpus=1000000000000 is over the limit of 16,777,216 (fastsched.costmodel._bounds.MAX_GPUS)
    >>> check_plan_request(8, {"layers": 10**9})
    Traceback (most recent call last):
    ...
    ValueError: model.layers=1000000000 is over the limit of 65,536 (fastsched.costmodel._bounds.MODEL_BOUNDS)
    """
    msg = _over("cluster.gpus", gpus, MAX_GPUS)
    if msg:
        raise ValueError(f"{msg} (fastsched.costmodel._bounds.MAX_GPUS)")
    for name, bound in MODEL_BOUNDS.items():
        msg = _over(f"model.{name}", (model or {}).get(name), bound)
        if msg:
            raise ValueError(f"{msg} (fastsched.costmodel._bounds.MODEL_BOUNDS)")
