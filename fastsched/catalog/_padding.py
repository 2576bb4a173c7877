"""Padding of variable-length samples to a batch's longest: the expected longest of ``m`` draws.

A framework that pads every sample of a batch to the batch's longest (speech clips, unbucketed)
pays for ``m`` samples of the longest length, and replicas that synchronise each step wait for
the slowest of them, so ``n`` GPUs of ``b`` samples each pay for the longest of ``n b`` draws.
With sample lengths log-normal of log-standard deviation ``s``, the longest of ``m`` draws over
the mean length is

    r(m) = E[max of m] / E[length] = integral of exp(s z - s^2 / 2) m Phi(z)^(m-1) phi(z) dz

(``phi``, ``Phi``: the standard normal density and distribution), 1 at ``m = 1`` or ``s = 0``.
Evaluated by the trapezoid rule on a fixed grid of ``z``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

# Enough range and resolution for m up to 2^53 and s up to 2 (the integrand is negligible
# outside [-9, 10] and smooth on a 1/200 grid).
_Z = np.linspace(-9.0, 10.0, 3801)
_LOG_CDF = np.log(np.array([0.5 * math.erfc(-z / math.sqrt(2.0)) for z in _Z]))
_LOG_PDF = -0.5 * _Z**2 - 0.5 * math.log(2.0 * math.pi)
_DZ = _Z[1] - _Z[0]


def padded_ratio(m, spread):
    """Return the expected longest of ``m`` log-normal draws over their mean (log-sd ``spread``).

    Parameters
    ----------
    m : float or array of float
        Draws (>= 1).
    spread : float
        Log-standard deviation of the length (0: all samples the same length).

    Examples
    --------
    >>> float(padded_ratio(1, 0.35)), float(padded_ratio(64, 0.0))
    (1.0, 1.0)
    >>> bool(1.5 < padded_ratio(20, 0.35) < padded_ratio(200, 0.35) < 2.5)
    True
    """
    m = np.asarray(m, dtype=np.float64)
    if spread == 0.0:
        return np.ones_like(m)
    # A profile asks for the same few draw counts many times: integrate each once per process.
    uniq, inverse = np.unique(m, return_inverse=True)
    out = np.array([_ratio(x, float(spread)) for x in uniq.tolist()])
    return out[inverse].reshape(m.shape)


@functools.lru_cache(maxsize=100_000)
def _ratio(m: float, spread: float) -> float:
    """:func:`padded_ratio` of one draw count (trapezoid rule on the fixed grid)."""
    w = np.exp(np.log(np.array([m])) + (m - 1.0) * _LOG_CDF + _LOG_PDF + spread * _Z - 0.5 * spread**2)
    return float((w.sum() - 0.5 * (w[0] + w[-1])) * _DZ)
