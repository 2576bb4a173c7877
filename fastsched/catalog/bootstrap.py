"""Bootstrap profiles: a job's per-type step times from a short measurement, the oracle for the rest.

Sia profiles each job on one GPU of each type before placing it. A bootstrap profile takes what
such a measurement gives, per GPU type:

* the **one-GPU rows** at a few per-GPU batches (step seconds), and
* optionally **one full-node row**: one batch on all ``G`` GPUs of a node (step and sync seconds),

and fits a :class:`~fastsched.catalog.oracle.StepAdjust` and a floor on the datasheet model of
:func:`fastsched.catalog.step_time`, which then prices every other placement. Everything is a
multiplier of what the datasheet model predicts, so the fit follows any change of the
datasheet constants (the default efficiency included):

1. ``gpu_scale``, ``host_scale`` and ``floor_s`` (which gates the step, ``max(floor, work)``),
   least squares of the log step over the one-GPU rows, plus the full-node row read with its
   measured sync: that row's compute is at least the one-GPU compute (``contention >= 0``), so a
   full-node step no longer than the one-GPU step plus its measured sync says the sync hid under
   a floor, not behind a slow host. The floor is kept only where Akaike's criterion says it
   earns its parameter (a floor and a slow host fit a few one-GPU rows almost alike, and hide
   the sync differently);
2. ``node_sync_s``: the full node's all-reduce ``A`` that makes the predicted exposed sync of
   the full-node row its measured sync (0 where the datasheet ring already exposes as much); a
   one-node placement of ``g`` GPUs pays at least ``node_sync_s (g - 1) / (G - 1)``. One row
   cannot split ``A`` between a slower shared path (bandwidth) and a latency per ring step
   (``hop_latency_s``, the alpha of the alpha-beta model: Thakur, Rabenseifner and Gropp 2005;
   Patarasuk and Yuan 2009). A hardware bound (a node's GPUs reach each other at least over
   PCIe) was tried as the split and made the held-out rows worse (``benchmarks/results/oracle.md``,
   hypothesis L), so without more rows all of ``A`` is the shared path.
   ``two_node_row``, the row of two full nodes, identifies the latency: a latency grows with
   the ring's steps, a bandwidth does not. Its all-reduce over the datasheet's two-node ring,
   over the ring's ``2 (2G - 1)`` steps, is ``hop_latency_s`` (at least 0, at most what ``A``
   leaves over the full node's datasheet ring); the shared path keeps the rest of ``A``. Every
   placement of ``n`` GPUs pays ``2 (n - 1)`` steps of it, at ``(g - 1) / (G - 1)`` of it for a
   fullest node of ``g`` GPUs (NCF's 6.4 MB take 136 ms on a full V100 node, 10 ms a ring step,
   and about as long a step on 2-4 such nodes: no link's bandwidth explains it);
3. ``contention``: the compute of the full-node row over the one-GPU compute, ``1 +
   contention``, with ``(g - 1) / (G - 1)`` of it for a placement whose fullest node uses ``g``
   GPUs (spread placements pay their fullest node's: yolov3's 1+1, 2+2 and 4+4 GPUs of two A100
   nodes take what 1, 2 and 4 GPUs of one node take).

Without a full-node row the fit is step 1 alone (no contention, the datasheet's sync). A type
whose fitted host time (or floor) is at least :data:`~fastsched.catalog.oracle.HOST_BOUND_RATIO`
of its GPU time at the largest batch it holds is flagged ``low_confidence``: its multi-GPU
steps rest on host costs the one-GPU rows show only in sum. Validated on the Sia traces' held-out
rows by ``benchmarks/oracle.py --bootstrap`` (``benchmarks/results/oracle.md``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastsched.catalog import gpus as gcat
from fastsched.catalog._step_adjust import MAX_SCALE
from fastsched.catalog.models import ModelSpec, model_spec
from fastsched.catalog.oracle import (
    BUCKET_BYTES,
    DEFAULT_EFFICIENCY,
    HOST_BOUND_RATIO,
    HOST_S_PER_KERNEL,
    MAX_FLOOR_S,
    OVERLAP,
    StepAdjust,
    _check_eff,
    _combine,
    _dp_parts,
    _max_dp_batch,
    allreduce_seconds,
    host_share,
    step_time,
)

__all__ = ["Bootstrap", "fit_bootstrap", "bootstrap_rows", "two_node_row", "bootstrap_from_traces", "NODE_ROW"]

#: Which of the full-node rows a trace folder's bootstrap takes: the one at the median batch.
NODE_ROW = "median batch"
#: Weight of the tie-breaker that sends a part the rows never show to the datasheet's value.
_TIE = 1e-9


class Bootstrap(NamedTuple):
    """A bootstrap profile of one model on one GPU type (see the module docstring).

    Attributes
    ----------
    adjust : StepAdjust
        The fitted multipliers, contention and shared-path sync.
    floor_s : float
        The fitted per-step floor (gates the step).
    rows : int
        One-GPU rows fitted.
    node_row : tuple or None
        The full-node row ``(local_bsz, step, sync)`` used, if any.
    fit_error : float
        Median relative step error over the rows fitted.
    host_share : float
        Fitted host time (or floor) over GPU time at the largest batch one GPU holds.
    low_confidence : bool
        ``host_share >= HOST_BOUND_RATIO``.
    efficiency : float or None
        The datasheet efficiency the multipliers are relative to (``None``: the oracle's
        default pricing, :func:`~fastsched.catalog.oracle.flat_efficiency`).
    two_node_row : tuple or None
        The row of two full nodes ``(local_bsz, step, sync)`` the fit was given (``None`` on a
        one-GPU node). It sets ``adjust.hop_latency_s`` only where the full node's all-reduce
        exceeds its datasheet ring; otherwise the latency stays 0.

    Examples
    --------
    >>> rows = [(b, step_time("bert", "v100", (1,), b, efficiency=0.3).step) for b in (4, 8, 16, 32)]
    >>> bs = fit_bootstrap("bert", "v100", rows)
    >>> round(bs.adjust.gpu_scale * 0.3 / 0.4, 2), bs.low_confidence  # 0.4: the datasheet default
    (1.0, False)
    """

    adjust: StepAdjust
    floor_s: float
    rows: int
    node_row: tuple | None
    fit_error: float
    host_share: float
    low_confidence: bool
    efficiency: float | None = DEFAULT_EFFICIENCY
    two_node_row: tuple | None = None


def _check_multi(name, row):
    row = tuple(float(x) for x in row)
    if len(row) != 3:
        raise ValueError(f"{name}: expected (local_bsz, step, sync) seconds, got {row!r}")
    b, st, sy = row
    if not (b >= 1 and math.isfinite(b)) or not (0 < st < math.inf) or not (0 <= sy < st):
        raise ValueError(f"{name}: local_bsz >= 1 and 0 <= sync < step seconds, got {row!r}")
    return row


def _check_rows(one_gpu, node_row):
    rows = [tuple(r) for r in one_gpu]
    if not rows:
        raise ValueError("one_gpu: at least one (local_bsz, step) row is needed")
    for r in rows:
        if len(r) < 2 or not all(isinstance(x, (int, float, np.number)) and not isinstance(x, bool) for x in r[:2]):
            raise ValueError(f"one_gpu: rows are (local_bsz, step seconds), got {r!r}")
        b, st = float(r[0]), float(r[1])
        if not (b >= 1 and math.isfinite(b)) or not (0 < st < math.inf):
            raise ValueError(f"one_gpu: local_bsz must be >= 1 and step > 0 seconds, got {r!r}")
    if node_row is not None:
        node_row = _check_multi("node_row", node_row)
    return np.array([float(r[0]) for r in rows]), np.array([float(r[1]) for r in rows]), node_row


def _argmin3(loss, grids):
    """Minimiser of ``loss(a, h, f)`` (broadcast arrays) over three grids, refined twice around the best."""
    a, h, f = grids
    for level in range(3):
        val = loss(a[:, None, None], h[None, :, None], f[None, None, :])
        i, j, k = np.unravel_index(int(np.argmin(val)), val.shape)
        best = a[i], h[j], f[k]
        if level == 2:
            return best
        # the next grid spans the neighbours of the best point, nine points each
        a = np.geomspace(a[max(i - 1, 0)], a[min(i + 1, len(a) - 1)], 9)
        h = np.geomspace(h[max(j - 1, 0)], h[min(j + 1, len(h) - 1)], 9)
        if k == 0:  # no floor shows: keep 0, with a few small ones beside it
            f = f[:1] if len(f) < 2 else np.concatenate([[0.0], np.geomspace(f[1] / 10.0, f[1], 5)])
        else:
            f = np.geomspace(f[max(k - 1, 1)], f[min(k + 1, len(f) - 1)], 9)
    return best


def fit_bootstrap(model, gpu, one_gpu, node_row=None, *, two_node_row=None, efficiency=None, catalog=None) -> Bootstrap:
    """Fit a :class:`Bootstrap` of ``model`` on ``gpu`` from its one-GPU rows and an optional full-node row.

    Parameters
    ----------
    model : str or ModelSpec
        A data-parallel model (one that fits one GPU of the type).
    gpu : str or GpuType
    one_gpu : sequence of (local_bsz, step)
        Step seconds on one GPU at a few per-GPU batches (more batches pin the floor and the
        host share better).
    node_row : (local_bsz, step, sync), optional
        One batch on all GPUs of one node: step and exposed sync seconds (AdaptDL's
        ``step_time`` and ``sync_time``).
    two_node_row : (local_bsz, step, sync), optional
        One batch on all GPUs of two nodes, which sets ``hop_latency_s`` (needs ``node_row``).
    efficiency : float, optional
        The datasheet efficiency the multipliers are relative to (default the oracle's).

    Raises
    ------
    ValueError
        Empty or malformed rows (the message names the argument), a model that does not fit
        one GPU of the type.

    Examples
    --------
    >>> true = dict(floor_s=0.09, adjust=StepAdjust(contention=0.8))
    >>> one = [(b, step_time("cifar10", "v100", (1,), b, **true).step) for b in (32, 128, 512, 2048)]
    >>> full = step_time("cifar10", "v100", (8,), 256, **true)
    >>> bs = fit_bootstrap("cifar10", "v100", one, (256, full.step, full.sync))
    >>> round(bs.floor_s, 3), bs.adjust.contention > 0  # the floor gates the short steps; 8 GPUs contend
    (0.09, True)
    >>> again = step_time("cifar10", "v100", (8,), 256, floor_s=bs.floor_s, adjust=bs.adjust)
    >>> round(again.step / full.step, 6)  # the full-node row is reproduced
    1.0
    """
    m = model if isinstance(model, ModelSpec) else model_spec(model)
    g = gpu if isinstance(gpu, gcat.GpuType) else gcat.gpu_type(gpu, catalog)
    if _max_dp_batch(m, g) < 1:
        raise ValueError(f"{m.name} does not fit one {g.name}: a bootstrap profile needs one-GPU rows")
    b, t, node = _check_rows(one_gpu, node_row)
    two = None if two_node_row is None else _check_multi("two_node_row", two_node_row)
    if two is not None and node is None:
        raise ValueError("two_node_row: needs node_row too (the full node sets the shared path it is read against)")
    eff = DEFAULT_EFFICIENCY if efficiency is None else _check_eff("efficiency", efficiency, 4.0)
    host, gpu_s, bwd = _dp_parts(m, g, b, eff, HOST_S_PER_KERNEL, 1)
    host = np.broadcast_to(host, b.shape)
    log_t = np.log(t)
    G = max(int(g.gpus_per_node), 1)
    if node is not None:
        nh, ng, _ = _dp_parts(m, g, node[0], eff, HOST_S_PER_KERNEL, G)
        n_step, n_sync = node[1], node[2]

    def loss(a, h, f):
        step, _ = _combine(h[..., None] * host, a[..., None] * gpu_s, a[..., None] * bwd, 0.0, 1.0, None, f[..., None])
        out = np.sum((np.log(step) - log_t) ** 2, axis=-1)
        if node is not None and G > 1:
            # the full-node row, read with its measured sync: compute at least the one-GPU compute
            comp = np.hypot(h * float(nh), a * float(ng))
            k = np.maximum((n_step - n_sync) / comp, 1.0)
            out = out + (np.log(np.maximum(f, comp * k + n_sync)) - math.log(n_step)) ** 2
        # ties (a part that never shows) go to the datasheet's value
        return out + _TIE * (np.log(a) ** 2 + np.log(h) ** 2)

    grids = (np.geomspace(1.0 / MAX_SCALE, MAX_SCALE, 46), np.geomspace(1e-2, 1e2, 31),
             np.concatenate([[0.0], np.geomspace(1e-4, 10.0, 41)]))  # fmt: skip
    a, h, f = (float(x) for x in _argmin3(loss, grids))
    if f > 0.0:
        # A floor is one more parameter: kept only where it earns it (Akaike's criterion,
        # n log(RSS / n) + 2k), else the host and GPU parts explain the rows without one.
        a0, h0, _ = (float(x) for x in _argmin3(loss, grids[:2] + (np.zeros(1),)))
        n = b.size + (node is not None and G > 1)
        with_floor = float(loss(np.array(a), np.array(h), np.array(f))) + 1e-12
        without = float(loss(np.array(a0), np.array(h0), np.array(0.0))) + 1e-12
        if n * math.log(without / n) + 4.0 <= n * math.log(with_floor / n) + 6.0:
            a, h, f = a0, h0, 0.0
    f = min(f, MAX_FLOOR_S)
    adjust = StepAdjust(gpu_scale=a, host_scale=h)
    if node is not None and G > 1:
        adjust = _fit_node(m, g, adjust, f, node, eff, two)
    pred = step_time(m, g, (1,), b, efficiency=eff, floor_s=f, adjust=adjust).step
    err = float(np.median(np.abs(pred - t) / t))
    share = host_share(m, g, efficiency=eff, floor_s=f, adjust=adjust)
    return Bootstrap(adjust, f, int(b.size), node, err, share, share >= HOST_BOUND_RATIO, eff,
                     two if node is not None and G > 1 else None)  # fmt: skip


def _fit_node(m, g, adjust, floor, node, eff, two=None):
    """``node_sync_s`` from the full-node row's sync, ``contention`` from its step, ``hop_latency_s`` from ``two``."""
    G = int(g.gpus_per_node)
    b, n_step, n_sync = node
    grad = m.grad_bytes_per_param * m.parameters
    last = min(1.0, BUCKET_BYTES / grad)
    host, gpu_s, bwd = _scaled_parts(m, g, b, eff, G, adjust)
    ring = allreduce_seconds(grad, g, (G,))
    _, exposed = _combine(host, gpu_s, bwd, ring, last, None, floor)
    node_ar = 0.0
    if n_sync > float(exposed):
        node_ar = _inverted(n_sync, bwd, host, gpu_s, last)
    adjust = _fit_contention(m, g, adjust._replace(node_sync_s=float(node_ar)), floor, node, eff)
    if two is None or node_ar <= ring:
        return adjust
    # The two full nodes' all-reduce over the datasheet's two-node ring is latency: it grows
    # with the ring's 2 (2G - 1) steps, a shared path's bandwidth would not. At most what the
    # full node leaves over its own ring, so that the full-node row is still reproduced.
    # Both rows are read with the fitted contention (the fullest node uses all G GPUs in each).
    k = 1.0 + adjust.contention
    node_ar = max(_inverted(n_sync, bwd * k, host * k, gpu_s * k, last), node_ar)
    b2, _, sync2 = two
    h2, g2, w2 = _scaled_parts(m, g, b2, eff, 2 * G, adjust, k)
    a2 = _inverted(sync2, w2, h2, g2, last)
    alpha = (a2 - allreduce_seconds(grad, g, (G, G))) / (2.0 * (2 * G - 1))
    alpha = float(min(max(alpha, 0.0), (node_ar - ring) / (2.0 * (G - 1))))
    adjust = adjust._replace(node_sync_s=float(node_ar - 2.0 * (G - 1) * alpha), hop_latency_s=alpha)
    return _fit_contention(m, g, adjust, floor, node, eff)  # the full-node row reproduced again


def _scaled_parts(m, g, b, eff, n, adjust, k=1.0):
    """``(host, gpu, backward)`` seconds of a row on ``n`` GPUs, with ``adjust``'s scales and the compute factor ``k``."""
    host, gpu_s, bwd = _dp_parts(m, g, b, eff, HOST_S_PER_KERNEL, n)
    return host * adjust.host_scale * k, gpu_s * adjust.gpu_scale * k, bwd * adjust.gpu_scale * k


def _inverted(sync, bwd, host, gpu_s, last) -> float:
    """Return the all-reduce whose exposed part, ``max(ar x last bucket, ar - window)``, is the measured ``sync``."""
    window = float(np.minimum(OVERLAP * bwd, np.hypot(host, gpu_s) - host))
    return float(min(sync + window, sync / last, MAX_FLOOR_S))


def _fit_contention(m, g, adjust, floor, node, eff):
    """``contention`` that makes the full-node row's predicted step its measured step (bisection)."""
    G = int(g.gpus_per_node)
    b, n_step, _ = node

    def step_at(c):
        return step_time(m, g, (G,), b, efficiency=eff, floor_s=floor, adjust=adjust._replace(contention=c)).step

    lo, hi = 0.0, MAX_SCALE
    if step_at(lo) >= n_step:
        return adjust  # no contention shows (or the floor hides it)
    if step_at(hi) <= n_step:
        return adjust._replace(contention=hi)
    for _ in range(60):  # the step grows with the contention: bisect
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if step_at(mid) < n_step else (lo, mid)
    return adjust._replace(contention=0.5 * (lo + hi))


def bootstrap_rows(path, gpu_per_node) -> tuple:
    r"""Return the bootstrap's rows of a measured ``placements-<type>.csv``: ``(one_gpu, node_row)``.

    ``one_gpu``: every one-GPU row as ``(local_bsz, step)``; ``node_row``: of the rows on all
    ``gpu_per_node`` GPUs of one node, the one at the median batch (:data:`NODE_ROW`), as
    ``(local_bsz, step, sync)``, or ``None``. Other rows of the file are not read: a full trace
    folder gives the same profile as a short measurement of these rows alone.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "placements-aws.csv"
    >>> _ = p.write_text("placement,local_bsz,step_time,sync_time\n1,32,0.1,0\n1,64,0.15,0\n4,32,0.2,0.05\n"
    ...                  "4,64,0.25,0.04\n4,128,0.3,0.03\n22,32,0.4,0.2\n")
    >>> bootstrap_rows(p, 4)
    ([(32.0, 0.1), (64.0, 0.15)], (64.0, 0.25, 0.04))
    """
    from fastsched.catalog.profile import _read_rows  # deferred: profile imports this module

    rows = _read_rows(Path(path))
    one = [(b, st) for p, b, st, _ in rows if p == (1,)]
    if not one:
        raise ValueError(f"{path}: no one-GPU rows (placement 1): a bootstrap profile needs them")
    return one, _median_row(rows, (int(gpu_per_node),))


def two_node_row(path, gpu_per_node) -> tuple | None:
    r"""Return the row of two full nodes of a measured ``placements-<type>.csv`` at the median batch, or ``None``.

    ``(local_bsz, step, sync)`` of the rows on ``gpu_per_node`` GPUs of each of two nodes, the
    one at the median batch (``None`` for one-GPU nodes or a file without such rows).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "placements-aws.csv"
    >>> _ = p.write_text("placement,local_bsz,step_time,sync_time\n1,32,0.1,0\n44,32,0.4,0.2\n44,64,0.5,0.2\n")
    >>> two_node_row(p, 4)
    (32.0, 0.4, 0.2)
    """
    from fastsched.catalog.profile import _read_rows  # deferred: profile imports this module

    G = int(gpu_per_node)
    return _median_row(_read_rows(Path(path)), (G, G))


def _median_row(rows, placement) -> tuple | None:
    """``(local_bsz, step, sync)`` of ``rows`` on ``placement`` (all GPUs of its nodes, more than one) at the median batch."""
    on = sorted((b, st, sy) for p, b, st, sy in rows if p == placement and placement[0] > 1)
    return on[(len(on) - 1) // 2] if on else None


def bootstrap_from_traces(app_dir, gpu_types, *, model=None, node_row=True, catalog=None) -> dict:
    """Fit a :class:`Bootstrap` per GPU type from an application's measured ``placements-<type>.csv``.

    Parameters
    ----------
    app_dir : str or path
        The application's folder (its name is the catalogued model unless ``model``).
    gpu_types : iterable of str
        Types to profile; a type without a ``placements-<type>.csv`` is left out of the result.
    node_row : bool
        Use the full-node row at the median batch (default), or the one-GPU rows only.

    Returns
    -------
    dict
        ``{trace name: Bootstrap}``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fastsched.catalog.profile import write_profile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_profile("cifar10", ["t4"], d, floors={"aws": 0.2})
    >>> fits = bootstrap_from_traces(d / "cifar10", ["t4"])
    >>> round(fits["aws"].floor_s, 3), fits["aws"].node_row is not None
    (0.2, True)
    """
    from fastsched.catalog.profile import _calibration_model, _measured_files  # deferred: profile imports this module

    app_dir = Path(app_dir)
    m = _calibration_model(app_dir, model)
    out = {}
    for name, g, path in _measured_files(app_dir, gpu_types, catalog):
        one, full = bootstrap_rows(path, g.gpus_per_node)
        out[name] = fit_bootstrap(m, g, one, full if node_row else None)
    return out
