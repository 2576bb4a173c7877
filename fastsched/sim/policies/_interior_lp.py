"""A primal-dual interior-point solver for small inequality-form linear programs.

Gavel's published implementation solves its allocation LP with an interior-point solver
(ECOS through cvxpy). When the optimum is not unique (equal jobs, a type with spare GPUs),
an interior-point method ends in the relative interior of the optimal face: equal jobs get
equal time shares, where a simplex vertex gives one job everything. Which optimum is chosen
drives how often Gavel swaps jobs in and out, so the simulator needs the interior one.

Mehrotra's predictor-corrector on ``min c x  s.t.  A x + w = b,  x, w >= 0`` from the
all-ones start: every step treats the variables symmetrically, so interchangeable columns keep
equal values to rounding, and the iterates approach the central path's end point.

The algorithm is written once (:func:`_mehrotra`) over three operations on ``A``: products
with ``A`` and ``A^T`` and solves with the normal matrix ``A diag(dx) A^T + diag(dw)``.
:func:`interior_point_lp` supplies them for any sparse ``A`` (sparse LU);
:func:`job_type_lp` for Gavel's job x type structure, where the normal matrix is a diagonal
job block bordered by a few type rows and a solve costs ``O(jobs x types^2)``. No dense BLAS
either way (its thread pool stalls on a loaded host).
"""

from __future__ import annotations

import numpy as np

__all__ = ["interior_point_lp", "job_type_lp"]


def _step_to_boundary(v, dv, eta):
    neg = dv < 0
    if not neg.any():
        return 1.0
    return float(min(1.0, eta * np.min(-v[neg] / dv[neg])))


def _check_b(b):
    if (b < 0).any():
        raise ValueError("b must be non-negative (x = 0 feasible)")


def _direction(point, matvec, rmatvec, rxs_x, rxs_w):
    """Newton step of ``S dz + Z ds = rxs``, ``[A I] dz = -rb``, ``[A I]^T dy + ds = -rc`` (``z = (x, w)``)."""
    x, w, sx, sw, rb, rcx, rcw, solve = point
    dy = solve(-rb - matvec((rxs_x + x * rcx) / sx) - (rxs_w + w * rcw) / sw)
    dsx, dsw = -rcx - rmatvec(dy), -rcw - dy
    return (rxs_x - x * dsx) / sx, (rxs_w - w * dsw) / sw, dy, dsx, dsw


def _mehrotra(c, b, matvec, rmatvec, factor, tol, max_iter):
    """Minimise ``c x`` s.t. ``A x <= b``, ``x >= 0`` given ``A``'s operations (see the module docstring).

    ``factor(dx, dw)`` returns ``solve(r)`` for ``(A diag(dx) A^T + diag(dw)) y = r``.
    """
    n, m = c.size, b.size
    x, w = np.ones(n), np.ones(m)  # primal, slack of A x <= b
    sx, sw = np.ones(n), np.ones(m)  # dual slacks of x >= 0, w >= 0
    y = np.zeros(m)
    bnorm, cnorm = 1.0 + np.linalg.norm(b), 1.0 + np.linalg.norm(c)
    for _ in range(max_iter):
        rb = matvec(x) + w - b
        aty = rmatvec(y)
        rcx, rcw = aty + sx - c, y + sw
        mu = (x @ sx + w @ sw) / (n + m)
        # Feasibility to 100 tol: the regularised normal equations (see the factors) stop the
        # residuals from shrinking further once inactive rows' scalings reach ~1e20, while the
        # gap keeps closing; the caller rounds to far coarser than that.
        feas = 100.0 * tol
        if np.linalg.norm(rb) / bnorm < feas and np.sqrt(rcx @ rcx + rcw @ rcw) / cnorm < feas and mu < tol:
            return x
        point = (x, w, sx, sw, rb, rcx, rcw, factor(x / sx, w / sw))
        ax, aw, ay, asx, asw = _direction(point, matvec, rmatvec, -x * sx, -w * sw)
        ap = min(_step_to_boundary(x, ax, 1.0), _step_to_boundary(w, aw, 1.0))
        ad = min(_step_to_boundary(sx, asx, 1.0), _step_to_boundary(sw, asw, 1.0))
        mu_aff = ((x + ap * ax) @ (sx + ad * asx) + (w + ap * aw) @ (sw + ad * asw)) / (n + m)
        target = (mu_aff / mu) ** 3 * mu
        ddx, ddw, ddy, dsx, dsw = _direction(
            point, matvec, rmatvec, -x * sx - ax * asx + target, -w * sw - aw * asw + target
        )
        ap = min(_step_to_boundary(x, ddx, 0.99), _step_to_boundary(w, ddw, 0.99))
        ad = min(_step_to_boundary(sx, dsx, 0.99), _step_to_boundary(sw, dsw, 0.99))
        x, w = x + ap * ddx, w + ap * ddw
        y, sx, sw = y + ad * ddy, sx + ad * dsx, sw + ad * dsw
    raise RuntimeError(f"interior-point LP did not converge in {max_iter} iterations")


def interior_point_lp(c, a, b, *, tol=1e-10, max_iter=200):
    """Minimise ``c @ x`` subject to ``a @ x <= b`` and ``x >= 0`` (``b >= 0``, so ``x = 0`` is feasible).

    Parameters
    ----------
    c : numpy.ndarray, shape (n,)
    a : numpy.ndarray or scipy sparse array, shape (m, n)
    b : numpy.ndarray, shape (m,)
        Non-negative right-hand side.
    tol : float
        Relative primal/dual infeasibility and duality gap at which to stop.
    max_iter : int

    Returns
    -------
    numpy.ndarray, shape (n,)
        An optimal ``x`` in the relative interior of the optimal face (to ``tol``).

    Raises
    ------
    ValueError
        ``b`` has a negative entry, or the shapes disagree.
    RuntimeError
        No convergence within ``max_iter`` iterations (the problem is unbounded).

    Examples
    --------
    Three equal jobs sharing two GPUs: every optimum sums to 2; the interior one splits evenly.

    >>> import numpy as np
    >>> x = interior_point_lp(-np.ones(3), np.ones((1, 3)), np.array([2.0]))
    >>> np.round(x, 6).tolist()
    [0.666667, 0.666667, 0.666667]
    """
    # scipy is imported where it is used: a run whose policy needs no LP does not load it.
    from scipy import sparse
    from scipy.sparse.linalg import splu

    c = np.asarray(c, dtype=np.float64)
    a = sparse.csr_array(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m, n = a.shape
    if c.shape != (n,) or b.shape != (m,):
        raise ValueError(f"shapes disagree: c {c.shape}, a {a.shape}, b {b.shape}")
    _check_b(b)
    a_t = a.T.tocsr()

    def factor(dx, dw):
        normal = a @ sparse.diags_array(dx) @ a_t + sparse.diags_array(dw)
        normal = normal + 1e-13 * (1.0 + np.abs(normal.diagonal()).max()) * sparse.eye_array(m)  # as below
        return splu(normal.tocsc()).solve

    return _mehrotra(c, b, a.__matmul__, a_t.__matmul__, factor, tol, max_iter)


def job_type_lp(value, jobs, types, weight, num_jobs, capacity, *, tol=1e-10, max_iter=200):
    """Maximise ``value @ x`` with one variable per (job, type) pair: time shares under job and type limits.

    Constraints: ``sum of x over each job's pairs <= 1`` and, per type ``t``,
    ``sum of weight * x over t's pairs <= capacity[t]``; ``x >= 0``. The same LP as
    :func:`interior_point_lp` on the explicit matrix, solved through its structure.

    Parameters
    ----------
    value, weight : numpy.ndarray, shape (n,)
        Objective coefficient and capacity use (GPUs) of each pair.
    jobs, types : numpy.ndarray of int, shape (n,)
        Job ``0 .. num_jobs - 1`` and type ``0 .. len(capacity) - 1`` of each pair; at most one
        pair per (job, type).
    num_jobs : int
    capacity : numpy.ndarray, shape (T,)
        Non-negative.
    tol, max_iter
        As for :func:`interior_point_lp`.

    Returns
    -------
    numpy.ndarray, shape (n,)

    Examples
    --------
    Three 1-GPU jobs, two types of one GPU each; job 0 is worth 2 on type 1, the rest 1: job 0
    takes type 1, jobs 1 and 2 share type 0 evenly.

    >>> import numpy as np
    >>> x = job_type_lp(np.array([1.0, 2.0, 1.0, 1.0, 1.0, 1.0]), np.array([0, 0, 1, 1, 2, 2]),
    ...                 np.array([0, 1, 0, 1, 0, 1]), np.ones(6), 3, np.array([1.0, 1.0]))
    >>> np.round(x, 6).tolist()
    [0.0, 1.0, 0.5, 0.0, 0.5, 0.0]
    """
    value = np.asarray(value, dtype=np.float64)
    weight = np.asarray(weight, dtype=np.float64)
    jobs = np.asarray(jobs, dtype=np.intp)
    types = np.asarray(types, dtype=np.intp)
    capacity = np.asarray(capacity, dtype=np.float64)
    n, nt = value.size, capacity.size
    if not (jobs.shape == types.shape == weight.shape == (n,)):
        raise ValueError("value, jobs, types and weight must have one entry per pair")
    b = np.concatenate([np.ones(num_jobs), capacity])
    _check_b(b)

    def matvec(x):
        return np.concatenate([np.bincount(jobs, x, num_jobs), np.bincount(types, weight * x, nt)])

    def rmatvec(y):
        return y[jobs] + weight * y[num_jobs + types]

    def factor(dx, dw):
        # [[diag(d_job), B], [B^T, diag(d_type)]]: Schur complement on the few type rows.
        dmat = np.zeros((num_jobs, nt))
        dmat[jobs, types] = dx
        border = np.zeros((num_jobs, nt))
        border[jobs, types] = weight * dx
        d_job = dmat.sum(axis=1) + dw[:num_jobs]
        scaled = border / d_job[:, None]
        schur = -np.einsum("jt,ju->tu", scaled, border)
        # Diagonal without cancellation: d_t - sum_j B_jt^2 / d_j = dw_t + sum_j B_jt w_jt (d_j - dx_jt) / d_j,
        # with d_j - dx_jt summed from the job's other terms.
        for t in range(nt):
            rest = dw[:num_jobs] + dmat[:, :t].sum(axis=1) + dmat[:, t + 1 :].sum(axis=1)
            wt = np.zeros(num_jobs)
            wt[jobs[types == t]] = weight[types == t]
            schur[t, t] = dw[num_jobs + t] + np.sum(scaled[:, t] * wt * rest)
        # A degenerate optimum (a type filled by jobs each at their full share) makes the system
        # singular in the limit: a tiny static regularisation, as interior-point codes use.
        schur[np.diag_indices(nt)] += 1e-13 * (1.0 + np.abs(np.diag(schur)).max())

        def solve(r):
            r_job, r_type = r[:num_jobs], r[num_jobs:]
            y_type = np.linalg.solve(schur, r_type - np.einsum("jt,j->t", border, r_job / d_job))
            return np.concatenate([(r_job - np.einsum("jt,t->j", border, y_type)) / d_job, y_type])

        return solve

    return _mehrotra(-value, b, matvec, rmatvec, factor, tol, max_iter)
