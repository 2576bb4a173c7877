"""numba kernel: barycentric transforms of a 3-D Delaunay triangulation.

The published simulator interpolates unmeasured placements with scipy's
``LinearNDInterpolator`` over Qhull's Delaunay triangulation. scipy computes each simplex's
barycentric transform with LAPACK on the first query: seconds for the larger traces (one
small LAPACK call per simplex, each waking BLAS threads), with rounding that depends on the
BLAS build and CPU. :func:`barycentric_transforms` computes the same transforms with
explicit 3x3 cofactor inverses in a fixed order; the simulator hands them to scipy's
triangulation, so scipy's own point location and interpolation run unchanged.
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit

_EPS = np.finfo(np.float64).eps


@jit
def barycentric_transforms(points, simplices):
    """Per simplex: the inverse of ``T = [v0 - v3, v1 - v3, v2 - v3]`` (rows 0-2) and ``v3`` (row 3).

    ``c = Tinv (x - v3)`` are the first three barycentric coordinates of ``x``. As scipy does,
    a simplex whose reciprocal 1-norm condition number is below machine epsilon (flat)
    gets NaN, which point location treats as degenerate.
    """
    m = simplices.shape[0]
    out = np.empty((m, 4, 3))
    for s in range(m):
        r = points[simplices[s, 3]]
        # a[j][i] = coordinate j of (v_i - v3): the columns of T are the edge vectors.
        a00 = points[simplices[s, 0], 0] - r[0]
        a10 = points[simplices[s, 0], 1] - r[1]
        a20 = points[simplices[s, 0], 2] - r[2]
        a01 = points[simplices[s, 1], 0] - r[0]
        a11 = points[simplices[s, 1], 1] - r[1]
        a21 = points[simplices[s, 1], 2] - r[2]
        a02 = points[simplices[s, 2], 0] - r[0]
        a12 = points[simplices[s, 2], 1] - r[1]
        a22 = points[simplices[s, 2], 2] - r[2]
        c00 = a11 * a22 - a12 * a21
        c01 = a12 * a20 - a10 * a22
        c02 = a10 * a21 - a11 * a20
        det = a00 * c00 + a01 * c01 + a02 * c02
        out[s, 3, 0] = r[0]
        out[s, 3, 1] = r[1]
        out[s, 3, 2] = r[2]
        if det != 0.0:
            inv = 1.0 / det
            out[s, 0, 0] = c00 * inv
            out[s, 0, 1] = (a02 * a21 - a01 * a22) * inv
            out[s, 0, 2] = (a01 * a12 - a02 * a11) * inv
            out[s, 1, 0] = c01 * inv
            out[s, 1, 1] = (a00 * a22 - a02 * a20) * inv
            out[s, 1, 2] = (a02 * a10 - a00 * a12) * inv
            out[s, 2, 0] = c02 * inv
            out[s, 2, 1] = (a01 * a20 - a00 * a21) * inv
            out[s, 2, 2] = (a00 * a11 - a01 * a10) * inv
            norm_a = max(abs(a00) + abs(a10) + abs(a20), abs(a01) + abs(a11) + abs(a21), abs(a02) + abs(a12) + abs(a22))
            norm_inv = 0.0
            for j in range(3):
                col = abs(out[s, 0, j]) + abs(out[s, 1, j]) + abs(out[s, 2, j])
                if col > norm_inv:
                    norm_inv = col
            if 1.0 / (norm_a * norm_inv) >= _EPS:
                continue
        for i in range(4):
            for j in range(3):
                out[s, i, j] = np.nan
    return out
