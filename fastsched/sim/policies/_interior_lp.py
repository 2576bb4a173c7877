"""A primal-dual interior-point solver for small inequality-form linear programs.

Gavel's published implementation solves its allocation LP with an interior-point solver
(ECOS through cvxpy). When the optimum is not unique (equal jobs, a type with spare GPUs),
an interior-point method ends in the relative interior of the optimal face: equal jobs get
equal time shares, where a simplex vertex gives one job everything. Which optimum is chosen
drives how often Gavel swaps jobs in and out, so the simulator needs the interior one.

Mehrotra's predictor-corrector on ``min c x  s.t.  A x + w = b,  x, w >= 0`` from the
all-ones start: every step treats the variables symmetrically, so interchangeable columns keep
equal values to rounding, and the iterates approach the central path's end point.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

__all__ = ["interior_point_lp"]


def _step_to_boundary(v, dv, eta):
    neg = dv < 0
    if not neg.any():
        return 1.0
    return float(min(1.0, eta * np.min(-v[neg] / dv[neg])))


def _direction(big, chol, z, s, rb, rc, rxs):
    """Newton direction of ``S dz + Z ds = rxs``, ``big dz = -rb``, ``big^T dy + ds = -rc``."""
    rhs = -rb - big @ ((rxs + z * rc) / s)
    dy = cho_solve(chol, rhs)
    ds = -rc - big.T @ dy
    dz = (rxs - z * ds) / s
    return dz, dy, ds


def interior_point_lp(c, a, b, *, tol=1e-10, max_iter=200):
    """Minimise ``c @ x`` subject to ``a @ x <= b`` and ``x >= 0`` (``b >= 0``, so ``x = 0`` is feasible).

    Parameters
    ----------
    c : numpy.ndarray, shape (n,)
    a : numpy.ndarray, shape (m, n)
        Dense constraint matrix.
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
    c = np.asarray(c, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m, n = a.shape
    if c.shape != (n,) or b.shape != (m,):
        raise ValueError(f"shapes disagree: c {c.shape}, a {a.shape}, b {b.shape}")
    if (b < 0).any():
        raise ValueError("b must be non-negative (x = 0 feasible)")
    # Standard form over z = (x, w): [a I] z = b, z >= 0, cost (c, 0).
    big = np.hstack([a, np.eye(m)])
    cost = np.concatenate([c, np.zeros(m)])
    nz = n + m
    z = np.ones(nz)
    s = np.ones(nz)
    y = np.zeros(m)
    bnorm, cnorm = 1.0 + np.linalg.norm(b), 1.0 + np.linalg.norm(cost)
    for _ in range(max_iter):
        rb = big @ z - b
        rc = big.T @ y + s - cost
        mu = float(z @ s) / nz
        if np.linalg.norm(rb) / bnorm < tol and np.linalg.norm(rc) / cnorm < tol and mu < tol:
            return z[:n].copy()
        normal = (big * (z / s)) @ big.T
        normal[np.diag_indices(m)] += 1e-14 * (1.0 + np.trace(normal) / m)
        chol = cho_factor(normal)  # SPD: full row rank (the slack block) and z / s > 0
        dz, dy, ds = _direction(big, chol, z, s, rb, rc, -z * s)
        ap, ad = _step_to_boundary(z, dz, 1.0), _step_to_boundary(s, ds, 1.0)
        mu_aff = float((z + ap * dz) @ (s + ad * ds)) / nz
        sigma = (mu_aff / mu) ** 3
        dz2, dy2, ds2 = _direction(big, chol, z, s, rb, rc, -z * s - dz * ds + sigma * mu)
        ap, ad = _step_to_boundary(z, dz2, 0.99), _step_to_boundary(s, ds2, 0.99)
        z = z + ap * dz2
        y = y + ad * dy2
        s = s + ad * ds2
    raise RuntimeError(f"interior-point LP did not converge in {max_iter} iterations")
