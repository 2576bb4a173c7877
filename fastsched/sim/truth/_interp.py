"""Piecewise-linear interpolation over Qhull's Delaunay triangulation, without scipy.interpolate.

The published simulator interpolates unmeasured placements with scipy's
``LinearNDInterpolator``. Importing ``scipy.interpolate`` costs about 0.15 CPU s more than
``scipy.spatial`` alone (its package loads ``scipy.optimize``), and a simulation asks it a
handful of questions (2 in Sia's ``rate_50`` run under Tiresias, 8 under Sia). So only the
triangulation comes from scipy (:class:`scipy.spatial.Delaunay`, Qhull; kept in a file
beside numba's cache, so a later process needs no scipy.spatial either); this module
answers the queries itself, with the arithmetic of scipy's interpolator, operation for
operation, so every answer has the same bits:

* :func:`barycentric_transforms`: per simplex, the inverse of its edge matrix by explicit
  3x3 cofactors (scipy would call LAPACK once per simplex, with rounding that depends on
  the BLAS build), NaN for a flat simplex;
* :class:`LinearInterpolator`: the point location of scipy's interpolator (a walk on the
  lifted paraboloid, then a directed walk through neighbours, then a brute-force scan that
  looks past flat simplices with a wider tolerance), and the barycentric sum over the
  simplex found.

Queries are few and scalar, so the walk is plain Python on lists of floats: Python's float
operations are the IEEE double operations of the compiled original, and no compiled kernel
has to be loaded for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import platform
import zipfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["barycentric_transforms", "LinearInterpolator", "Triangulation", "triangulate"]

_DBL_EPS = float(np.finfo(np.float64).eps)
# The tolerances of scipy's interpolator (scipy/interpolate/_interpnd.pyx): a point within
# 100 ulp of a simplex is inside it; next to a flat simplex the neighbour's side facing it
# gets sqrt(eps).
_EPS = 100 * _DBL_EPS
_EPS_BROAD = math.sqrt(_DBL_EPS)


def barycentric_transforms(points, simplices):
    """Per simplex: the inverse of ``T = [v0 - v3, v1 - v3, v2 - v3]`` (rows 0-2) and ``v3`` (row 3).

    ``c = Tinv (x - v3)`` are the first three barycentric coordinates of ``x``. A simplex whose
    reciprocal 1-norm condition number is below machine epsilon (flat) gets NaN in every
    row, which point location treats as degenerate. Element-wise array arithmetic: each
    simplex's entries are the same IEEE operations in the same order as a scalar loop.

    Parameters
    ----------
    points : numpy.ndarray, shape (n, 3)
    simplices : numpy.ndarray of int, shape (m, 4)

    Returns
    -------
    numpy.ndarray, shape (m, 4, 3)

    Examples
    --------
    >>> pts = np.array([[0.0, 0, 0], [2, 0, 0], [0, 2, 0], [0, 0, 2]])
    >>> t = barycentric_transforms(pts, np.array([[1, 2, 3, 0]]))
    >>> t[0, :3].tolist(), t[0, 3].tolist()
    ([[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5]], [0.0, 0.0, 0.0])
    >>> bool(np.isnan(barycentric_transforms(pts * [1, 1, 0], np.array([[1, 2, 3, 0]]))).all())  # flat
    True
    """
    points = np.asarray(points, dtype=np.float64)
    simplices = np.asarray(simplices)
    m = simplices.shape[0]
    v = points[simplices]  # (m, 4, 3)
    r = v[:, 3]
    # a[j][i] = coordinate j of (v_i - v3): the columns of T are the edge vectors.
    a00, a10, a20 = (v[:, 0, k] - r[:, k] for k in range(3))
    a01, a11, a21 = (v[:, 1, k] - r[:, k] for k in range(3))
    a02, a12, a22 = (v[:, 2, k] - r[:, k] for k in range(3))
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    det = a00 * c00 + a01 * c01 + a02 * c02
    out = np.empty((m, 4, 3))
    out[:, 3] = r
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = 1.0 / det
        out[:, 0, 0] = c00 * inv
        out[:, 0, 1] = (a02 * a21 - a01 * a22) * inv
        out[:, 0, 2] = (a01 * a12 - a02 * a11) * inv
        out[:, 1, 0] = c01 * inv
        out[:, 1, 1] = (a00 * a22 - a02 * a20) * inv
        out[:, 1, 2] = (a02 * a10 - a00 * a12) * inv
        out[:, 2, 0] = c02 * inv
        out[:, 2, 1] = (a01 * a20 - a00 * a21) * inv
        out[:, 2, 2] = (a00 * a11 - a01 * a10) * inv
        norm_a = _first_max(
            np.abs(a00) + np.abs(a10) + np.abs(a20),
            np.abs(a01) + np.abs(a11) + np.abs(a21),
            np.abs(a02) + np.abs(a12) + np.abs(a22),
        )
        norm_inv = np.zeros(m)
        for j in range(3):
            col = np.abs(out[:, 0, j]) + np.abs(out[:, 1, j]) + np.abs(out[:, 2, j])
            norm_inv = np.where(col > norm_inv, col, norm_inv)
        good = (det != 0.0) & (1.0 / (norm_a * norm_inv) >= _DBL_EPS)
    out[~good] = np.nan
    return out


def _first_max(a, b, c):
    # Python's max(a, b, c): a later argument replaces the maximum only if strictly greater.
    best = np.where(b > a, b, a)
    return np.where(c > best, c, best)


class Triangulation(NamedTuple):
    """Qhull's Delaunay triangulation as arrays: what :class:`LinearInterpolator` reads.

    The attributes of the same names of :class:`scipy.spatial.Delaunay`.

    Examples
    --------
    >>> import tempfile
    >>> cube = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=float)
    >>> with tempfile.TemporaryDirectory() as where:
    ...     tri = triangulate(cube, cache_dir=where)
    >>> type(tri).__name__, tri.simplices.shape[1], tri.neighbors.shape == tri.simplices.shape
    ('Triangulation', 4, True)
    """

    points: np.ndarray
    simplices: np.ndarray
    neighbors: np.ndarray
    equations: np.ndarray
    paraboloid_scale: float
    paraboloid_shift: float
    min_bound: np.ndarray
    max_bound: np.ndarray


# scipy.spatial.Delaunay's default options for 3-D points ("Qt" is always added).
_QHULL_OPTIONS = b"Qbb Qc Qz Q12 Qt"


def triangulate(points, *, cache_dir=None):
    """Qhull's Delaunay triangulation of ``points`` (scipy's options), or ``None`` if they are flat.

    Qhull's answer depends only on the points (and the scipy build), so it is kept in a file
    beside numba's cache of fastsched's kernels, keyed by the points' bytes and scipy's
    version: a later process reads it back instead of importing ``scipy.spatial`` (~0.15 CPU s)
    and running Qhull. The file holds the points too, and any file that does not match
    exactly is ignored.

    Parameters
    ----------
    points : numpy.ndarray, shape (n, 3)
    cache_dir : str or path, optional
        Where to keep triangulations; default beside numba's cache (none when there is none).

    Returns
    -------
    Triangulation or None

    Examples
    --------
    >>> import tempfile
    >>> cube = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=float)
    >>> with tempfile.TemporaryDirectory() as where:
    ...     first, again = triangulate(cube, cache_dir=where), triangulate(cube, cache_dir=where)
    ...     flat = triangulate(cube[:4] * [1, 1, 0], cache_dir=where)
    >>> first.simplices.shape[1], bool((first.simplices == again.simplices).all()), flat is None
    (4, True, True)
    """
    points = np.ascontiguousarray(points, dtype=np.float64)
    path = _cache_file(points, cache_dir)
    tri = _read_triangulation(path, points) if path is not None else None
    if tri is not None:
        return tri
    # Deferred: scipy.spatial costs ~0.15 CPU s to import, and only unmeasured placements
    # whose triangulation is not kept yet need it.
    from scipy.spatial import Delaunay, QhullError

    try:
        d = Delaunay(points)
    except QhullError:  # flat point set (e.g. one node measured): nothing to interpolate in
        return None
    tri = Triangulation(
        d.points,
        d.simplices,
        d.neighbors,
        d.equations,
        float(d.paraboloid_scale),
        float(d.paraboloid_shift),
        d.min_bound,
        d.max_bound,
    )
    if path is not None:
        _write_triangulation(path, tri)
    return tri


def _cache_file(points, cache_dir):
    if cache_dir is None:
        from fastsched._warmup import record_path  # numba's cache folder of the goodput kernels (a base module)

        record = record_path()
        if record is None:
            return None
        cache_dir = record.parent
    import scipy  # the package alone: its modules load lazily

    key = hashlib.sha256(points.tobytes())
    # Qhull's choice among equally valid triangulations of co-spherical points (the traces'
    # grids) may differ across builds and machines: a cache shared by several is keyed apart.
    build = f"{points.shape} scipy {scipy.__version__} numpy {np.__version__} {platform.machine()} "
    key.update(build.encode() + _QHULL_OPTIONS)
    return Path(cache_dir) / f"fastsched-delaunay-{key.hexdigest()[:32]}.npz"


def _read_triangulation(path, points):
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in Triangulation._fields}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if arrays["points"].shape != points.shape or arrays["points"].tobytes() != points.tobytes():
        return None
    m = arrays["simplices"].shape
    if len(m) != 2 or m[1] != 4 or arrays["neighbors"].shape != m or arrays["equations"].shape != (m[0], 5):
        return None
    arrays["paraboloid_scale"] = float(arrays["paraboloid_scale"])
    arrays["paraboloid_shift"] = float(arrays["paraboloid_shift"])
    return Triangulation(**arrays)


def _write_triangulation(path, tri):
    # Best effort: a cache that cannot be written (read-only, full) only means Qhull runs again
    # next time (atomic_path refuses a path it cannot inspect with a ValueError). Its temporary
    # file has a unique name and is removed on failure.
    from fastsched._atomic import atomic_path

    with contextlib.suppress(OSError, ValueError), atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **tri._asdict())


class LinearInterpolator:
    """Linear interpolation of ``values`` over a 3-D Delaunay triangulation, as scipy's ``LinearNDInterpolator``.

    Same point location, tolerances and sums as ``scipy.interpolate.LinearNDInterpolator``
    given the same triangulation and transforms: the same bits for every query (points on
    faces and edges, outside the hull, beside flat simplices).

    Parameters
    ----------
    tri : Triangulation or scipy.spatial.Delaunay
        A 3-D triangulation (:func:`triangulate`).
    values : array_like, shape (n, k)
        Values at ``tri.points``.
    transforms : numpy.ndarray, shape (m, 4, 3), optional
        Barycentric transforms of ``tri``'s simplices; default :func:`barycentric_transforms`.

    Examples
    --------
    >>> import tempfile
    >>> cube = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=float)
    >>> with tempfile.TemporaryDirectory() as where:
    ...     tri = triangulate(cube, cache_dir=where)
    >>> f = LinearInterpolator(tri, np.column_stack([cube.sum(axis=1), cube[:, 0]]))
    >>> f((0.5, 0.25, 0.25)), f((1.0, 1.0, 1.0)), f((2.0, 0.0, 0.0))
    ((1.0, 0.5), (3.0, 1.0), None)
    """

    def __init__(self, tri, values, transforms=None):
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2 or values.shape[0] != tri.points.shape[0]:
            raise ValueError(f"values must have shape (npoints, k) with npoints={tri.points.shape[0]}")
        if tri.points.shape[1] != 3:
            raise ValueError(f"tri must be 3-D, got {tri.points.shape[1]}-D")
        if transforms is None:
            transforms = barycentric_transforms(tri.points, tri.simplices)
        self._tf = np.asarray(transforms, dtype=np.float64)
        self._flat = np.isnan(self._tf[:, 0, 0])
        self._simplices = np.asarray(tri.simplices)
        self._nb = np.asarray(tri.neighbors)
        self._eq = np.asarray(tri.equations, dtype=np.float64)
        self._values = values
        self._scale = float(tri.paraboloid_scale)
        self._shift = float(tri.paraboloid_shift)
        self._lo = tri.min_bound.tolist()
        self._hi = tri.max_bound.tolist()

    def __call__(self, x):
        """Interpolate at point ``x``: a tuple of floats, ``None`` outside the hull."""
        x = [float(v) for v in x]
        found = self._locate(x)
        if found is None:
            return None
        s, c = found
        rows = self._values[self._simplices[s]].tolist()  # the simplex's vertices, in order
        out = []
        for k in range(self._values.shape[1]):
            acc = 0.0
            for j in range(4):
                acc = acc + c[j] * rows[j][k]
            out.append(acc)
        return tuple(out)

    # -- point location: scipy.spatial._qhull's _find_simplex with start 0 --------------------
    def _outside_box(self, x):
        return any(x[i] < self._lo[i] - _EPS or x[i] > self._hi[i] + _EPS for i in range(3))

    def _locate(self, x):
        """``(simplex, barycentric coordinates)`` of the simplex holding ``x``, or ``None``."""
        if self._outside_box(x) or not len(self._simplices):
            return None
        # Walk towards a simplex whose facet on the lifted paraboloid lies below the lifted
        # point, then search from there.
        z3 = 0.0
        for i in range(3):
            z3 += x[i] ** 2  # C pow(), as the compiled original
        z = (x[0], x[1], x[2], z3 * self._scale + self._shift)
        s = 0
        best = self._plane_distance(s, z)
        changed = True
        while changed:
            if best > 0:
                break
            changed = False
            for k in range(4):
                nb = int(self._nb[s, k])  # s may change mid-sweep: the sweep goes on from k + 1
                if nb == -1:
                    continue
                dist = self._plane_distance(nb, z)
                if dist > best + _EPS * (1 + abs(best)):
                    s, best, changed = nb, dist, True
        return self._directed(x, s)

    def _plane_distance(self, s, z):
        eq = self._eq[s].tolist()
        dist = eq[4]
        for k in range(4):
            dist += eq[k] * z[k]
        return dist

    def _directed(self, x, s):
        for _ in range(1 + len(self._simplices) // 4):
            t = self._tf[s].tolist()
            c = [0.0, 0.0, 0.0, 1.0]
            inside = 1
            for k in range(4):
                if k < 3:
                    c[k] = _coordinate(t, x, k)
                else:
                    c[3] = ((1.0 - c[0]) - c[1]) - c[2]
                if c[k] < -_EPS:  # x lies beyond the face opposite vertex k
                    nb = int(self._nb[s, k])
                    if nb == -1:
                        return None
                    s, inside = nb, -1
                    break
                if not c[k] <= 1 + _EPS:  # beyond vertex k, or NaN (a flat simplex)
                    inside = 0
            if inside == 1:
                return s, c
            if inside == 0:
                return self._brute_force(x)
        return self._brute_force(x)

    def _brute_force(self, x):
        """Find the first simplex, in index order, holding ``x``; beside a flat one, its neighbours in turn.

        scipy scans simplex by simplex; the same tests on every simplex at once, then the first
        that passes in scipy's order (simplex ``s``, and for a flat ``s`` its neighbour ``k``:
        order ``4 s + k``).
        """
        if self._outside_box(x):
            return None
        c = _all_coordinates(self._tf, x)  # NaN rows for flat simplices: they pass no test
        m = len(c)
        never = 4 * m
        key = np.where(np.all((c >= -_EPS) & (c <= 1 + _EPS), axis=1), 4 * np.arange(m), never)
        flat = np.flatnonzero(self._flat)
        if flat.size:
            # A flat simplex: accept a neighbour's, with leeway on the side facing it.
            nbs = self._nb[flat]  # (f, 4)
            usable = nbs != -1
            nbs = np.where(usable, nbs, 0)
            usable &= ~self._flat[nbs]
            cc = c[nbs]  # (f, 4 neighbours, 4 coordinates)
            lower = np.where(self._nb[nbs] == flat[:, None, None], -_EPS_BROAD, -_EPS)
            good = usable & np.all((cc >= lower) & (cc <= 1 + _EPS), axis=2)
            key[flat] = np.where(good, 4 * flat[:, None] + np.arange(4), never).min(axis=1)
        first = int(key.min())
        if first == never:
            return None
        s, k = divmod(first, 4)
        if self._flat[s]:
            s = int(self._nb[s, k])
        return s, c[s].tolist()


def _coordinate(t, x, i):
    """Barycentric coordinate ``i < 3`` of ``x``: row ``i`` of the inverse times ``x - v3``."""
    row, r = t[i], t[3]
    acc = 0.0
    for j in range(3):
        acc += row[j] * (x[j] - r[j])
    return acc


def _all_coordinates(transforms, x):
    """:func:`_coordinate` for every simplex, and the fourth ``((1 - c0) - c1) - c2``."""
    m = transforms.shape[0]
    d = [x[j] - transforms[:, 3, j] for j in range(3)]
    c = np.empty((m, 4))
    last = np.ones(m)
    for i in range(3):
        acc = np.zeros(m)
        for j in range(3):
            acc = acc + transforms[:, i, j] * d[j]
        c[:, i] = acc
        last = last - acc
    c[:, 3] = last
    return c
