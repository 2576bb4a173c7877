"""numba kernel: the seed's pipeline simulation over microbatches.

Events are processed first-in first-out, exactly as the seed's queue does: stage ``s``
may have ``S - s`` forwards in flight (a 1F1B warm-up), a forward that finds no slot goes
back to the end of the queue, the last stage turns a forward into a backward, a backward
moves to the previous stage and frees a slot, and a stage's optimizer step follows its
last backward. The queue is an unbounded ring buffer (the seed's ``Queue(1024)`` blocks
for 1024 or more microbatches, B2).
"""

from __future__ import annotations

import numpy as np

from fastsched._jit import jit

__all__ = ["simulate_pipeline"]


@jit
def simulate_pipeline(fwd, bwd, optim, m):
    """Simulate ``m`` microbatches over ``S = len(fwd)`` stages.

    Parameters
    ----------
    fwd, bwd, optim : float64[S]
        Per-stage time of one forward, one backward (per microbatch) and the optimizer.
    m : int
        Number of microbatches (>= 1).

    Returns
    -------
    total : float
        Time at which the last stage finishes.
    ev_stage, ev_kind, ev_mb : int64[k]
        Executed events (kind 0 fwd, 1 bwd, 2 optim; mb -1 for optim), in execution order.
    ev_start, ev_end : float64[k]
    """
    S = fwd.shape[0]
    cap = 2 * (m + S) + 8
    q_stage = np.empty(cap, np.int64)
    q_kind = np.empty(cap, np.int64)
    q_mb = np.empty(cap, np.int64)
    q_t = np.empty(cap, np.float64)
    head = 0
    count = 0
    n_ev = 2 * m * S + S
    ev_stage = np.empty(n_ev, np.int64)
    ev_kind = np.empty(n_ev, np.int64)
    ev_mb = np.empty(n_ev, np.int64)
    ev_start = np.empty(n_ev, np.float64)
    ev_end = np.empty(n_ev, np.float64)
    k = 0
    gtime = np.zeros(S, np.float64)
    slots = np.empty(S, np.int64)
    for s in range(S):
        slots[s] = S - s
    left = np.full(S, m, np.int64)
    for i in range(m):
        j = (head + count) % cap
        q_stage[j] = 0
        q_kind[j] = 0
        q_mb[j] = i
        q_t[j] = -1.0
        count += 1
    while count > 0:
        s = q_stage[head]
        kd = q_kind[head]
        mb = q_mb[head]
        t0 = q_t[head]
        head = (head + 1) % cap
        count -= 1
        if kd == 0:
            if slots[s] <= 0:
                j = (head + count) % cap  # no slot yet: back to the end of the queue
                q_stage[j] = s
                q_kind[j] = 0
                q_mb[j] = mb
                q_t[j] = t0
                count += 1
                continue
            start = max(gtime[s], t0)
            end = start + fwd[s]
            j = (head + count) % cap
            if s != S - 1:
                q_stage[j] = s + 1
                q_kind[j] = 0
            else:
                q_stage[j] = s
                q_kind[j] = 1
            q_mb[j] = mb
            q_t[j] = end
            count += 1
            slots[s] -= 1
        elif kd == 1:
            start = max(gtime[s], t0)
            end = start + bwd[s]
            if s != 0:
                j = (head + count) % cap
                q_stage[j] = s - 1
                q_kind[j] = 1
                q_mb[j] = mb
                q_t[j] = end
                count += 1
            slots[s] += 1
            left[s] -= 1
            if left[s] == 0:
                j = (head + count) % cap
                q_stage[j] = s
                q_kind[j] = 2
                q_mb[j] = -1
                q_t[j] = end
                count += 1
        else:
            start = max(gtime[s], t0)
            end = start + optim[s]
        gtime[s] = end
        ev_stage[k] = s
        ev_kind[k] = kd
        ev_mb[k] = mb
        ev_start[k] = start
        ev_end[k] = end
        k += 1
    total = 0.0
    for s in range(S):
        if gtime[s] > total:
            total = gtime[s]
    return total, ev_stage[:k], ev_kind[:k], ev_mb[:k], ev_start[:k], ev_end[:k]
