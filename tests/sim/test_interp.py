"""Barycentric transforms of the trace interpolator against plain numpy and scipy's own."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.interpolate import LinearNDInterpolator
from scipy.spatial import Delaunay

from fastsched.sim._interp import barycentric_transforms
from fastsched.sim.traces import _nd_interpolator


def naive_transforms(points, simplices):
    out = np.full((len(simplices), 4, 3), np.nan)
    for s, simplex in enumerate(simplices):
        v = points[simplex]
        t = (v[:3] - v[3]).T  # columns: edge vectors
        out[s, 3] = v[3]
        if 1.0 / np.linalg.cond(t, 1) >= np.finfo(float).eps:
            out[s, :3] = np.linalg.inv(t)
    return out


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 2**32 - 1), st.integers(5, 40), st.booleans())
def test_transforms_match_numpy_and_scipy(seed, n, grid):
    rng = np.random.default_rng(seed)
    # Grids are what traces look like: many co-planar points, degenerate simplices.
    points = rng.integers(0, 4, (n, 3)).astype(float) if grid else rng.random((n, 3))
    points = np.unique(points, axis=0)
    if len(points) < 5:
        return
    try:
        tri = Delaunay(points)
    except Exception:  # all co-planar: Qhull refuses, and so would the simulator's traces
        return
    simplices = np.ascontiguousarray(tri.simplices, dtype=np.int64)
    ours = barycentric_transforms(points, simplices)
    ref = naive_transforms(points, simplices)
    finite = np.isfinite(ref[:, 0, 0]) & np.isfinite(ours[:, 0, 0])
    assert np.allclose(ours[finite], ref[finite], rtol=1e-9, atol=1e-9)
    assert np.allclose(ours[finite], tri.transform[finite], rtol=1e-9, atol=1e-9)


def test_interpolator_answers_like_scipy():
    rng = np.random.default_rng(3)
    points = np.column_stack([rng.integers(1, 5, 60), rng.integers(1, 17, 60), rng.integers(8, 128, 60)]).astype(float)
    points = np.unique(points, axis=0)
    values = rng.random((len(points), 2))
    ours = _nd_interpolator(points, values)
    theirs = LinearNDInterpolator(points, values)
    queries = np.column_stack([rng.uniform(1, 4, 200), rng.uniform(1, 16, 200), rng.uniform(8, 127, 200)])
    a, b = ours(queries), theirs(queries)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-12, atol=1e-12)
