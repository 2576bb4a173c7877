"""Boundary checks shared by every public face.

numba kernels do not bounds-check and silently propagate NaN, so every public entry point
converts its inputs here, once, to contiguous arrays of a stable dtype (int64 counts,
float64 values) and raises ``TypeError``/``ValueError`` naming the offending argument.
"""

from __future__ import annotations

import numbers

import numpy as np

# Largest count accepted anywhere: every integer up to it is exact as a float64.
MAX_INT = 2**53

__all__ = [
    "real_array",
    "as_float_array",
    "as_int_array",
    "check_finite_scalar",
    "check_int_scalar",
    "check_choice",
    "count_error",
]


def _is_bool(x) -> bool:
    return isinstance(x, (bool, np.bool_))


def check_finite_scalar(name: str, value, low=None, high=None, low_open=False) -> float:
    """Return ``value`` as a finite Python float within ``[low, high]`` (or raise).

    Examples
    --------
    >>> check_finite_scalar("x", 3, low=0.0)
    3.0
    >>> check_finite_scalar("x", 0.0, low=0.0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: x must be > 0.0, got 0.0
    """
    # Fast path for a float or a plain int (not bool) plainly in range: what a simulator's
    # inner loop passes. Anything else, or anything out of range, takes the checks below,
    # which accept and reject exactly as before. ``v - v == 0.0`` is False for NaN and inf.
    if isinstance(value, float) or type(value) is int:
        v = float(value)
        if v - v == 0.0 and (low is None or v > low or (v == low and not low_open)) and (high is None or v <= high):
            return v
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v!r}")
    if low is not None and (v < low or (low_open and v == low)):
        op = ">" if low_open else ">="
        raise ValueError(f"{name} must be {op} {low}, got {v!r}")
    if high is not None and v > high:
        raise ValueError(f"{name} must be <= {high}, got {v!r}")
    return v


def check_int_scalar(name: str, value, *, low=None, high=None) -> int:
    """Return ``value`` as a Python int within ``[low, high]`` (or raise).

    Integral floats (``4.0``) are accepted; ``4.5``, NaN and bools are not.

    Examples
    --------
    >>> check_int_scalar("n", 4.0, low=1)
    4
    >>> check_int_scalar("n", 0, low=1)
    Traceback (most recent call last):
    ...
    ValueError: n must be >= 1, got 0
    """
    # Fast path for a plain int (not bool) plainly in range, as check_finite_scalar's: the
    # abstract-class checks below cost more than the rest (every speedup table asked, every
    # round). Anything else takes them, and is accepted or rejected exactly as before.
    if (
        type(value) is int
        and (low is None or value >= low)
        and (high is None or value <= high)
        and -MAX_INT <= value <= MAX_INT
    ):
        return value
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not isinstance(value, numbers.Integral):
        f = float(value)
        if not np.isfinite(f) or f != int(f):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if low is not None and v < low:
        raise ValueError(f"{name} must be >= {low}, got {v}")
    if high is not None and v > high:
        raise ValueError(f"{name} must be <= {high}, got {v}")
    if abs(v) > MAX_INT:
        raise ValueError(f"{name} is too large ({v}); the limit is 2**53")
    return v


def real_array(name: str, value) -> np.ndarray:
    """``np.asarray`` that accepts only non-empty int/float data (not bool, object or str)."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{name} must be a number or an array of numbers, got {type(value).__name__}")
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists etc.
        raise TypeError(f"{name} could not be converted to an array: {exc}") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    return arr


def as_float_array(name: str, value, *, low=None, low_open=False, high=None) -> np.ndarray:
    """Convert to a float64 array, checking finiteness and an optional range."""
    arr = real_array(name, value).astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (got NaN or inf)")
    if low is not None:
        bad = arr <= low if low_open else arr < low
        if np.any(bad):
            op = ">" if low_open else ">="
            raise ValueError(f"{name} must be {op} {low}, got {arr[bad].flat[0]!r}")
    if high is not None and np.any(arr > high):
        raise ValueError(f"{name} must be <= {high}, got {arr[arr > high].flat[0]!r}")
    return arr


def count_error(name: str, check: str, value=None, low=None) -> str:
    """Message of a failed count check (shared by :func:`as_int_array` and the CUDA path).

    ``check`` is ``"finite"``, ``"integral"``, ``"large"`` or ``"low"`` (``value`` is the
    first offending value, ``low`` the bound).
    """
    if check == "finite":
        return f"{name} must be finite (got NaN or inf)"
    if check == "integral":
        return f"{name} must hold integers"
    if check == "large":
        return f"{name} holds a value too large for a count (the limit is 2**53)"
    return f"{name} must be >= {low}, got {value}"


def as_int_array(name: str, value, *, low=None, high=None) -> np.ndarray:
    """Convert to an int64 array of integral values, checking an optional range."""
    arr = real_array(name, value)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValueError(count_error(name, "finite"))
        if np.any(arr != np.round(arr)):
            raise ValueError(count_error(name, "integral"))
    if arr.dtype.kind in "fu" and np.any(np.abs(arr) > MAX_INT):
        # Checked before the cast: float -> int64 is undefined beyond 2**63, uint64 wraps.
        raise ValueError(count_error(name, "large"))
    arr = arr.astype(np.int64, copy=False)
    if low is not None and np.any(arr < low):
        raise ValueError(count_error(name, "low", arr[arr < low].flat[0], low))
    if high is not None and np.any(arr > high):
        raise ValueError(f"{name} must be <= {high}, got {arr[arr > high].flat[0]}")
    return arr


def check_choice(name: str, value, choices) -> str:
    """Check that ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value
