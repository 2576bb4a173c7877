"""Plain references for :mod:`fastsched.sim.results.isolated`, written from the semantics, and a synthetic application."""

from __future__ import annotations

import math

from fastsched.sim.engine.hetero_job import fixed_batch_throughput
from fastsched.sim.results.isolated import batch_candidates, packed_placement
from fastsched.sim.truth.traces import Application


class LinearApp(Application):
    """Step time ``a * local_bsz + sync * (replicas > 1)``; gradient statistics per epoch; ``work`` per epoch."""

    def __init__(self, a=0.01, sync=0.0, epochs=3, work=1000.0, sqr=1.0, var=0.0, init=8, max_bsz=64, local=(1, 64)):
        self.name = "linear"
        self.a, self.sync, self.work = float(a), float(sync), work
        self.sqr, self.var = sqr, var
        self.init_batch_size, self.max_batch_size = int(init), int(max_bsz)
        self.min_local_bsz, self.max_local_bsz = int(local[0]), int(local[1])
        self.max_epochs = int(epochs)

    def throughput(self, placement, local_bsz):
        reps = sum(placement)
        if not (self.min_local_bsz <= local_bsz <= self.max_local_bsz):
            raise ValueError("outside the measured range")
        sync = self.sync if reps > 1 else 0.0
        return self.a * local_bsz + sync, sync

    def grad_stats(self, batch_size, epoch):
        sqr = self.sqr[epoch] if isinstance(self.sqr, (list, tuple)) else self.sqr
        var = self.var[epoch] if isinstance(self.var, (list, tuple)) else self.var
        return float(sqr), float(var)

    def progress(self, epoch):
        if isinstance(self.work, (list, tuple)):
            return float(sum(self.work[:epoch]))
        return self.work * epoch

    def iteration(self, batch_size, epoch):
        return epoch


def training_seconds_ref(app, gpus_per_node, max_gpus, batch_size=None, num_replicas=None):
    """Loop over shares, epochs, GPU counts and batches; the simulator's gain formula written out."""
    limit = max_gpus
    if app.max_replicas is not None:
        limit = min(limit, app.max_replicas)
    if batch_size is None:
        limit = min(limit, app.max_batch_size // app.min_local_bsz)
    out = []
    for k in range(1, max_gpus + 1):
        total = 0.0
        for e in range(app.completion_epoch(app.init_batch_size) + 1):
            best = 0.0
            for r in range(1, min(k, limit) + 1):
                if num_replicas is not None and r != num_replicas:
                    continue
                batches = [batch_size] if batch_size is not None else batch_candidates(app, r, app.max_local_bsz)
                for b in batches:
                    sqr, var = app.grad_stats(b, e)
                    scale = b / app.init_batch_size
                    gain = (var + sqr) / (var / scale + sqr)
                    best = max(best, gain * fixed_batch_throughput(app, packed_placement(r, gpus_per_node), b))
            work = app.progress(e + 1) - app.progress(e)
            total += work / best if best > 0 else math.inf
        out.append(total)
    return out
