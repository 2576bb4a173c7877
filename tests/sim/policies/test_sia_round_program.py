"""Sia's round program built with arrays equals the per-candidate rule applied one by one."""

from __future__ import annotations

import dataclasses

import numpy as np

from fastsched.sim import simulate
from fastsched.sim.policies import SiaPolicy
from fastsched.sim.policies._sia_kernels import _ZERO_GAIN
from tests.sim.two_types import toy_workload

from .test_policies_hetero import CLUSTER


def _reference(pol, now, jobs, allocations):
    """The module docstring's rule, one (job, configuration) at a time: ``(columns, [(job, column, cost, forced)])``."""
    columns = list(pol.configs)
    col_of = {c: i for i, c in enumerate(columns)}
    out = []
    for j, job in enumerate(jobs):
        alloc = allocations.get(job.name, [])
        current = None
        if alloc:
            key = (pol.node_types[alloc[0]], len(set(alloc)), len(alloc))
            current = col_of.setdefault(key, len(columns))
            if current == len(columns):
                columns.append(key)
        if job.category == "rigid":
            extra, vals = pol._rigid_row(job)
            cols = []
            for cfg in extra:
                cols.append(col_of.setdefault(cfg, len(columns)))
                if cols[-1] == len(columns):
                    columns.append(cfg)
        else:
            cols, vals = pol._adaptive_rows([job])[0]
        keep = bool(alloc) and job.rescale_time > 0
        f = 1.0 if current is None else pol.restart_factor(now, job)
        row = {c: (v if c == current else v * f) for c, v in zip(cols, vals, strict=True)}
        if keep:
            row = {current: row.get(current, 1.0)}
        for c, v in row.items():
            a = round(max(v, _ZERO_GAIN) ** pol.p, 2)
            cost = a - pol.lambda_n if pol.p < 0 else pol.lambda_n - a
            if cost < 0 or keep:
                out.append((j, c, cost, keep))
    return columns, out


class _Checked(SiaPolicy):
    """Sia that checks each round's program against :func:`_reference` before solving it."""

    rounds = forced = restarts = 0

    def round_program(self, now, jobs, allocations):
        columns, column, problem = super().round_program(now, jobs, allocations)
        ref_columns, ref = _reference(self, now, jobs, allocations)
        assert columns == ref_columns
        got = list(
            zip(problem.job.tolist(), column.tolist(), problem.cost.tolist(), problem.forced.tolist(), strict=True)
        )
        assert got == ref  # same candidates, same order, same bits
        assert np.array_equal(problem.gpus, [columns[c][2] for c in column])
        cls = type(self)
        cls.rounds += 1
        cls.forced += int(problem.forced.sum())
        cls.restarts += sum(1 for job in jobs if allocations.get(job.name) and self.restart_factor(now, job) < 1)
        return columns, column, problem


def test_round_program_equals_the_rule_per_candidate(two_type_traces):
    # Adaptive and rigid jobs arriving while others run: restart factors, kept (mid-restart)
    # allocations (rounds shorter than the re-scale delay) and rigid jobs' own configurations all occur.
    work = toy_workload(n=8, spacing=30)
    work = [dataclasses.replace(w, category="rigid" if i % 3 == 2 else None) for i, w in enumerate(work)]
    result = simulate(work, policy=_Checked(), traces=two_type_traces, cluster=CLUSTER, interval=20)
    assert len(result.jobs) == len(work)
    assert _Checked.rounds > 5 and _Checked.forced > 0 and _Checked.restarts > 0
