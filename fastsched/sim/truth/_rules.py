"""Simulator rules that several modules apply, each written once.

* The split of a fixed total batch size into a per-GPU micro-batch and accumulation steps:
  AdaptDL's rule, the same scalar function the goodput grid search uses
  (:func:`fastsched.goodput._formulas.grid_candidate`), then capped so the total stays within
  the application's maximum.
* Placement ids: the traces' ``placement`` column writes a placement of at most 9 GPUs per
  node as the integer of its digits, ``(2, 2) -> 22``.
* A packed placement: a GPU count on as few nodes as possible, full nodes first (the
  placement the policies and the isolated-run oracle assume for a count).
* An application's true work: the progress each epoch needs, and the statistical gain per
  optimizer step of a batch size in each epoch (what the isolated runs and the oracle
  baselines' remaining steps both divide).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from fastsched.goodput._formulas import EPS, efficiency, grid_candidate

__all__ = ["fixed_batch_config", "placement_id", "id_placement", "packed_placement", "epoch_work", "gain_row"]


def fixed_batch_config(app, num_replicas, batch_size, max_local_bsz) -> tuple:
    """Per-GPU batch and accumulation steps of a fixed total ``batch_size`` on ``num_replicas`` GPUs.

    The per-GPU share is split into ``accum + 1`` passes of at most ``max_local_bsz`` (the
    placement's memory limit); a single GPU above the application's initial batch size always
    accumulates at least once; the per-GPU batch never takes the total above the application's
    maximum.

    Returns
    -------
    tuple of int
        ``(atomic_bsz, accum_steps)``, the per-GPU batch at least 1.

    Raises
    ------
    ValueError
        If ``num_replicas`` GPUs taking ``accum_steps + 1`` passes of even one sample each
        exceed the application's ``max_batch_size``: no per-GPU batch runs the job there (the
        cap would make it 0), so the placement is refused rather than run with no samples.
        Choosing another configuration instead would change the batch size the job asked for.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> fixed_batch_config(app, 2, 1024, 256), fixed_batch_config(app, 1, 256, 1024)
    ((256, 1), (128, 1))
    >>> fixed_batch_config(app, 8192, 8192, 256)
    Traceback (most recent call last):
    ...
    ValueError: num_replicas: 8192 GPUs x 1 passes of at least one sample exceed max_batch_size 4096 of cifar10
    """
    local_bsz = math.ceil(batch_size / num_replicas - EPS)
    atomic, accum = grid_candidate(
        float(local_bsz), int(num_replicas), float(app.init_batch_size), float(max_local_bsz), True
    )
    atomic, accum = int(atomic), int(accum)
    cap = int(app.max_batch_size / (num_replicas * (accum + 1)))
    if cap < 1:
        raise ValueError(
            f"num_replicas: {num_replicas} GPUs x {accum + 1} passes of at least one sample exceed "
            f"max_batch_size {app.max_batch_size} of {getattr(app, 'name', 'the application')}"
        )
    return min(atomic, cap), accum


def placement_id(placement):
    """Return the traces' id of ``placement`` (GPUs per node, zeros dropped); ``None`` if a node has 10+ GPUs.

    Examples
    --------
    >>> placement_id((2, 0, 2)), placement_id((4,)), placement_id((12,)), placement_id(())
    (22, 4, None, None)
    """
    p = [int(x) for x in placement if x]
    if not p or max(p) >= 10:
        return None
    return int("".join(map(str, p)))


def id_placement(pid) -> tuple:
    """Return the placement (GPUs per node) of a traces' placement id.

    Examples
    --------
    >>> id_placement(22), sum(id_placement(1111))
    ((2, 2), 4)
    """
    return _id_placement(int(pid))


@functools.lru_cache(maxsize=4096)
def _id_placement(pid):
    # Memoised: the trace loaders ask it once per row, of a few dozen distinct ids.
    return tuple(int(c) for c in str(pid))


def packed_placement(num_gpus, gpus_per_node) -> tuple[int, ...]:
    """GPUs per node of ``num_gpus`` GPUs on as few nodes of ``gpus_per_node`` as possible.

    Examples
    --------
    >>> packed_placement(10, 4), packed_placement(3, 8), packed_placement(8, 4)
    ((4, 4, 2), (3,), (4, 4))
    """
    full, rest = divmod(int(num_gpus), int(gpus_per_node))
    return (int(gpus_per_node),) * full + ((rest,) if rest else ())


_efficiency = getattr(efficiency, "py_func", efficiency)


def epoch_work(app, last_epoch) -> np.ndarray:
    """Progress each epoch ``0..last_epoch`` needs (the simulator's epoch boundaries).

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> work = epoch_work(app, 3)
    >>> work.shape, bool((work > 0).all())
    ((4,), True)
    """
    marks = np.array([app.progress(e) for e in range(last_epoch + 2)], dtype=np.float64)
    return np.diff(marks)


def gain_row(app, batch_size, num_epochs) -> np.ndarray:
    """Statistical gain per optimizer step (progress a step makes) of ``batch_size`` in each epoch.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> gain_row(app, app.init_batch_size, 2).round(6).tolist()  # the initial batch: one step, one unit
    [1.0, 1.0]
    """
    init = float(app.init_batch_size)
    out = np.empty(num_epochs, dtype=np.float64)
    for e in range(num_epochs):
        sqr, var = app.grad_stats(batch_size, e)
        out[e] = _efficiency(float(sqr), float(var), init, float(batch_size)) * float(batch_size) / init
    return out
