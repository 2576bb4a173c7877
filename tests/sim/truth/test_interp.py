"""The trace interpolator against scipy's LinearNDInterpolator, bit for bit, and its transforms against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.interpolate import LinearNDInterpolator
from scipy.spatial import Delaunay

from fastsched.sim.truth._interp import LinearInterpolator, barycentric_transforms, triangulate
from fastsched.sim.truth.traces import _nd_interpolator


def naive_transforms(points, simplices):
    out = np.full((len(simplices), 4, 3), np.nan)
    for s, simplex in enumerate(simplices):
        v = points[simplex]
        t = (v[:3] - v[3]).T  # columns: edge vectors
        out[s, 3] = v[3]
        if 1.0 / np.linalg.cond(t, 1) >= np.finfo(float).eps:
            out[s, :3] = np.linalg.inv(t)
    return out


def random_points(rng, n, grid):
    # Grids are what traces look like: many co-planar and co-spherical points, flat simplices.
    points = rng.integers(0, 4, (n, 3)).astype(float) if grid else rng.random((n, 3))
    return np.unique(points, axis=0)


def queries_for(rng, tri, n):
    """Random points in and around the hull, the vertices, and points on edges and faces."""
    pts = tri.points
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = hi - lo
    q = [rng.uniform(lo - 0.2 * span, hi + 0.2 * span, (n, 3)), pts[: n // 2]]
    simplices = tri.simplices[rng.integers(0, len(tri.simplices), n)]
    v = pts[simplices]  # (n, 4, 3)
    q.append((v[:, 0] + v[:, 1]) / 2)  # edge midpoints
    q.append((v[:, 0] + v[:, 1] + v[:, 2]) / 3)  # face centroids
    w = rng.dirichlet(np.ones(3), n)
    q.append(np.einsum("nk,nkd->nd", w, v[:, :3]))  # on a face (up to rounding)
    q.append(np.floor(q[0]) + rng.integers(0, 3, (n, 1)) * 0.5)  # on the grid's planes
    return np.concatenate(q)


def as_scipy(ours, n):
    return np.array([np.nan] * n if ours is None else ours)


def one_by_one(interpolator, q):
    # One point per call, as the simulator asks: scipy's search starts each call at simplex
    # 0 (within one call, each point's search starts where the previous point's ended).
    return np.concatenate([interpolator(x[None]) for x in q])


def _triangulation(seed, n, grid):
    rng = np.random.default_rng(seed)
    points = random_points(rng, n, grid)
    if len(points) < 5:
        return rng, None
    try:
        return rng, Delaunay(points)
    except Exception:  # all co-planar: Qhull refuses, and so would the simulator's traces
        return rng, None


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 2**32 - 1), st.integers(5, 40), st.booleans())
def test_transforms_match_numpy_and_scipy(seed, n, grid):
    _, tri = _triangulation(seed, n, grid)
    if tri is None:
        return
    ours = barycentric_transforms(tri.points, tri.simplices)
    ref = naive_transforms(tri.points, tri.simplices)
    finite = np.isfinite(ref[:, 0, 0]) & np.isfinite(ours[:, 0, 0])
    assert np.allclose(ours[finite], ref[finite], rtol=1e-9, atol=1e-9)
    assert np.allclose(ours[finite], tri.transform[finite], rtol=1e-9, atol=1e-9)
    # A simplex is flat in all of its rows or in none.
    assert np.array_equal(np.isnan(ours).all(axis=(1, 2)), np.isnan(ours).any(axis=(1, 2)))


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 2**32 - 1), st.integers(5, 60), st.booleans(), st.integers(1, 3))
def test_same_bits_as_scipy_on_the_same_transforms(seed, n, grid, nvalues):
    rng, tri = _triangulation(seed, n, grid)
    if tri is None:
        return
    values = rng.normal(size=(len(tri.points), nvalues)) * 10.0 ** rng.integers(-3, 4, nvalues)
    theirs = LinearNDInterpolator(tri, values)  # scipy's transforms: tri.transform (LAPACK)
    ours = LinearInterpolator(tri, values, transforms=tri.transform)
    q = queries_for(rng, tri, 30)
    expected = one_by_one(theirs, q)
    got = np.array([as_scipy(ours(x), nvalues) for x in q])
    assert got.tobytes() == expected.tobytes()
    assert np.isnan(expected).any(axis=1).any() or not grid  # outside points are exercised


def test_flat_simplices_are_stepped_over_like_scipy():
    # Co-spherical lattice points: Qhull's triangulation of them has flat slivers whose
    # transforms are NaN, so queries take the brute-force search with the wider tolerance.
    pts = np.array([[i, j, k] for i in range(3) for j in range(3) for k in range(3)], dtype=float)
    tri = Delaunay(pts)
    transforms = barycentric_transforms(tri.points, tri.simplices)
    assert np.isnan(transforms[:, 0, 0]).any()
    rng = np.random.default_rng(0)
    values = rng.random((len(pts), 2))
    ours = LinearInterpolator(tri, values, transforms=tri.transform)
    theirs = LinearNDInterpolator(tri, values)
    # Beside a flat simplex, a hair off its plane: inside a neighbour only within sqrt(eps).
    flat = tri.points[tri.simplices[np.isnan(transforms[:, 0, 0])]].mean(axis=1)
    near = (flat[:, None, :] + rng.normal(size=(len(flat), 8, 3)) * 1e-10).reshape(-1, 3)
    q = np.concatenate([queries_for(rng, tri, 200), pts + 1e-15, pts - 1e-15, near])
    got = np.array([as_scipy(ours(x), 2) for x in q])
    assert got.tobytes() == one_by_one(theirs, q).tobytes()


def test_real_traces_answer_as_scipy(shared_dir):
    from fastsched.sim.truth._trace_files import read_trace_folder

    folder = shared_dir / "sia-traces" / "traces"
    if not folder.is_dir():
        pytest.skip("needs Sia's traces")
    app = sorted(p for p in folder.iterdir() if p.is_dir())[0]
    gpu = sorted(p.name for p in app.iterdir() if p.is_dir())[0] if any(p.is_dir() for p in app.iterdir()) else None
    tables = read_trace_folder(app / gpu if gpu else app, None)
    tri = Delaunay(tables.nd_points)
    ours = LinearInterpolator(tri, tables.nd_values, transforms=tri.transform)
    theirs = LinearNDInterpolator(tri, tables.nd_values)
    rng = np.random.default_rng(1)
    hi = tables.nd_points.max(axis=0)
    grid = [(n, g, b) for n in range(1, int(hi[0]) + 2) for g in range(n, int(hi[1]) + 2, 3) for b in (1, 7.5, 32, 100)]
    q = np.concatenate([np.array(grid, dtype=float), queries_for(rng, tri, 100)])
    got = np.array([as_scipy(ours(x), 2) for x in q])
    assert got.tobytes() == one_by_one(theirs, q).tobytes()


def test_simulator_interpolator_is_ours_on_its_transforms(tmp_path):
    rng = np.random.default_rng(3)
    points = np.column_stack([rng.integers(1, 5, 60), rng.integers(1, 17, 60), rng.integers(8, 128, 60)]).astype(float)
    points = np.unique(points, axis=0)
    values = rng.random((len(points), 2))
    ours = _nd_interpolator(points, values)
    tri = triangulate(points, cache_dir=tmp_path)
    same = LinearInterpolator(tri, values, transforms=barycentric_transforms(points, tri.simplices))
    theirs = LinearNDInterpolator(points, values)  # LAPACK's transforms: equal to rounding
    queries = np.column_stack([rng.uniform(1, 4, 200), rng.uniform(1, 16, 200), rng.uniform(8, 127, 200)])
    a = np.array([as_scipy(ours(x), 2) for x in queries])
    assert a.tobytes() == np.array([as_scipy(same(x), 2) for x in queries]).tobytes()
    b = one_by_one(theirs, queries)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    assert np.allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-12, atol=1e-12)


def test_flat_points_have_no_interpolator_and_bad_values_are_refused(tmp_path):
    flat = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0]], dtype=float)
    assert triangulate(flat, cache_dir=tmp_path) is None and _nd_interpolator(flat, np.zeros((5, 2))) is None
    tri = Delaunay(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=float))
    with pytest.raises(ValueError, match="values"):
        LinearInterpolator(tri, np.zeros((4, 2)))


def test_kept_triangulation_is_qhulls(tmp_path):
    rng = np.random.default_rng(5)
    points = np.unique(rng.integers(0, 4, (40, 3)).astype(float), axis=0)
    d = Delaunay(points)
    first = triangulate(points, cache_dir=tmp_path)
    (kept,) = tmp_path.glob("fastsched-delaunay-*.npz")
    again = triangulate(points, cache_dir=tmp_path)  # read back
    for tri in (first, again):
        for name in ("points", "simplices", "neighbors", "equations", "min_bound", "max_bound"):
            ours, theirs = getattr(tri, name), getattr(d, name)
            assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes(), name
        assert (tri.paraboloid_scale, tri.paraboloid_shift) == (d.paraboloid_scale, d.paraboloid_shift)
    values = rng.random((len(points), 2))
    q = queries_for(rng, d, 50)
    a = [LinearInterpolator(again, values)(x) for x in q]
    assert a == [LinearInterpolator(d, values)(x) for x in q]
    # Another point set is not answered from this file, and a damaged file is ignored.
    other = points + [0.0, 0.0, 0.5]
    assert triangulate(other, cache_dir=tmp_path).points.tobytes() == other.tobytes()
    kept.write_bytes(b"not a triangulation")
    assert triangulate(points, cache_dir=tmp_path).simplices.tobytes() == d.simplices.tobytes()


def test_a_cache_that_cannot_be_written_only_costs_a_triangulation(tmp_path):
    # A cache folder that cannot hold files (here a plain file; a read-only mount behaves
    # alike): the triangulation is still returned and nothing is left behind.
    points = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=float)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    tri = triangulate(points, cache_dir=blocked)
    assert tri is not None and tri.points.tobytes() == points.tobytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder"]


def test_geometry_is_kept_by_the_points_bytes(monkeypatch):
    # The simulator keeps each point set's triangulation and transforms in memory: identical
    # points (another run, another draw of a profile) are answered without triangulating,
    # other points are triangulated anew, and what is kept cannot be changed by a caller.
    from fastsched.sim.truth import traces

    calls = []

    def counted(points, **kw):
        calls.append(points.tobytes())
        return triangulate(points, **kw)

    monkeypatch.setattr(traces, "triangulate", counted)
    monkeypatch.setattr(traces, "_GEOMETRY", {})
    rng = np.random.default_rng(11)
    points = np.unique(rng.integers(1, 9, (50, 3)).astype(float), axis=0)
    values = rng.random((len(points), 2))
    first = _nd_interpolator(points, values)
    again = _nd_interpolator(points.copy(), values * 2)  # same layouts, other step times: a hit
    assert len(calls) == 1
    q = queries_for(rng, Delaunay(points), 40)
    fresh = LinearInterpolator(triangulate(points), values * 2)  # built without the memo
    assert [again(x) for x in q] == [fresh(x) for x in q]
    assert [first(x) for x in q] == [LinearInterpolator(triangulate(points), values)(x) for x in q]
    moved = points.copy()
    moved[0, 2] += 0.5  # one point moved: a miss
    _nd_interpolator(moved, values)
    assert len(calls) == 2 and calls[1] == moved.tobytes()
    tri, tf = traces._GEOMETRY[(points.shape, points.tobytes())]
    with pytest.raises(ValueError, match="read-only"):
        tf[0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        tri.simplices[0, 0] = 0
    flat = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0]], dtype=float)
    assert _nd_interpolator(flat, np.zeros((5, 2))) is None and _nd_interpolator(flat, np.ones((5, 2))) is None
    assert len(calls) == 3  # a flat set is remembered too
    monkeypatch.setattr(traces, "GEOMETRY_CACHE_SIZE", 3)
    _nd_interpolator(points + 1.0, values)  # a fourth set: the oldest goes
    assert len(traces._GEOMETRY) == 3 and (points.shape, points.tobytes()) not in traces._GEOMETRY
