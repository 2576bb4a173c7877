"""The result of a rigid-job replay as the simulator's own result types.

:func:`rigid_result` turns a :class:`~fastsched.sim.engine.rigid.RigidRun` into a
:class:`RigidResult`: a :class:`~fastsched.sim.results.result.SimulationResult` whose ``jobs``
are :class:`~fastsched.sim.results.result.JobRecord` (so tables, summaries and per-job files
read it as any run), with the event timeline kept beside it. Rounds do not exist here: the
per-round series (``times``, ``allocations`` ...) stay empty, and the figures that the base
class reads from them are computed from the events instead:

* GPU utilisation: GPU-seconds held over GPU-seconds of the cluster, from the first submission
  to the last completion (time-weighted between events);
* contention: jobs waiting or running, time-weighted mean and maximum over the same span;
* finish-time fairness: JCT over the job's JCT alone on the cluster, which for a rigid job is
  its run duration (exact, no estimate);
* queueing delay: first start minus submission (``avg_wait``, ``p99_wait``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fastsched.sim.results.metrics import FTF_UNFAIR_THRESHOLD
from fastsched.sim.results.result import JobRecord, SimulationResult

__all__ = ["RigidResult", "rigid_result"]


def _empty():
    return np.zeros(0)


@dataclass(repr=False)
class RigidResult(SimulationResult):
    """A :class:`SimulationResult` of rigid jobs replayed event by event.

    Attributes
    ----------
    first_start, run_s, gpus : numpy.ndarray
        Per job (workload order): first start (s), run duration on this cluster (s), GPUs.
    event_times, queued, running, held_gpus : numpy.ndarray
        At each decision: its time, jobs waiting, jobs running, GPUs held after it.

    Examples
    --------
    >>> from fastsched.sim.engine.rigid import run_rigid
    >>> run = run_rigid([0, 0], [100, 50], [4, 4], nodes=1, gpus_per_node=4, policy="fifo")
    >>> r = rigid_result(["a", "b"], [0, 0], [100, 50], [4, 4], run, "fifo", {"nodes": 1, "gpus": 4})
    >>> [(j.name, j.jct) for j in r.jobs], r.gpu_utilization
    ([('a', 100.0), ('b', 150.0)], 1.0)
    >>> s = r.summary()
    >>> s["avg_wait"], s["ftf_worst"], s["events"]
    (50.0, 3.0, 3)
    """

    #: No rounds: :mod:`~fastsched.sim.results.jobs` takes first starts and GPUs from the fields below.
    event_driven = True
    first_start: np.ndarray = field(default_factory=_empty)
    run_s: np.ndarray = field(default_factory=_empty)
    gpus: np.ndarray = field(default_factory=_empty)
    event_times: np.ndarray = field(default_factory=_empty)
    queued: np.ndarray = field(default_factory=_empty)
    running: np.ndarray = field(default_factory=_empty)
    held_gpus: np.ndarray = field(default_factory=_empty)

    def _weights(self):
        """Seconds each decision's state lasted (to the next), within first submission .. last completion."""
        t = self.event_times
        if t.size < 2:
            return np.zeros(t.size)
        return np.diff(t, append=t[-1])

    @property
    def gpu_utilization(self) -> float:
        """GPU-seconds held over the cluster's, first submission to last completion (time-weighted)."""
        w = self._weights()
        total = float(w.sum()) * self.config.get("nodes", 0) * self.config.get("gpus", 0)
        return float(np.dot(w, self.held_gpus) / total) if total else float("nan")

    def summary(self) -> dict:
        """Return the base summary, with the event-based figures (module docstring) and ``avg_wait``, ``p99_wait``."""
        out = super().summary()
        wait = self.first_start - np.array([j.submission_time for j in self.jobs], dtype=np.float64)
        done = np.isfinite(wait)
        out["avg_wait"] = float(wait[done].mean()) if done.any() else None
        out["p99_wait"] = float(np.percentile(wait[done], 99)) if done.any() else None
        w = self._weights()
        active = self.queued + self.running
        out["contention_mean"] = float(np.dot(w, active) / w.sum()) if w.sum() else float("nan")
        out["contention_max"] = float(active.max()) if active.size else float("nan")
        out["max_queued"] = int(self.queued.max()) if self.queued.size else 0
        fin = np.array([np.nan if j.completion_time is None else j.completion_time for j in self.jobs], np.float64)
        jct = fin - np.array([j.submission_time for j in self.jobs], np.float64)
        ok = np.isfinite(jct) & (self.run_s > 0)
        ftf = jct[ok] / self.run_s[ok]
        out["ftf_worst"] = float(ftf.max()) if ftf.size else float("nan")
        out["ftf_unfair_fraction"] = float(np.mean(ftf > FTF_UNFAIR_THRESHOLD)) if ftf.size else float("nan")
        out["events"] = int(self.event_times.size)
        return out

    def table(self) -> str:
        """Return the base table, events instead of rounds, and the queueing delay."""
        s = self.summary()
        lines = [ln for ln in super().table().splitlines() if not ln.startswith("rounds")]
        width = max(len(ln.split("  ")[0]) for ln in lines)

        def row(k, v):
            return f"{k:<{width}}  {v}"

        wait = s["avg_wait"]
        lines.insert(
            -1, row("queueing delay", "-" if wait is None else f"mean {wait:,.1f} s, p99 {s['p99_wait']:,.1f} s")
        )
        lines.insert(-1, row("events", f"{s['events']} decisions (event-driven, rigid jobs)"))
        return "\n".join(lines)


def rigid_result(names, submit, run_s, gpus, run, policy, config, *, application="rigid", wall_s=0.0) -> RigidResult:
    """Build the :class:`RigidResult` of ``run`` (a :class:`~fastsched.sim.engine.rigid.RigidRun`).

    ``names``, ``submit``, ``run_s`` (durations on this cluster) and ``gpus`` are per job, in the
    order given to :func:`~fastsched.sim.engine.rigid.run_rigid`; ``config`` needs ``nodes`` and
    ``gpus`` (per node).
    """
    finish = run.finish
    records = [
        JobRecord(
            name=str(nm),
            application=application,
            submission_time=float(s),
            completion_time=None if f != f else float(f),
            num_restarts=int(r),
            attained_service=float(a),
            epochs=0,
            category="rigid",
        )
        for nm, s, f, r, a in zip(
            names, np.asarray(submit, np.float64).tolist(), finish.tolist(), run.restarts.tolist(),
            run.gpu_seconds.tolist(), strict=True,
        )
    ]  # fmt: skip
    return RigidResult(
        jobs=records,
        policy=policy,
        config=dict(config),
        wall_s=wall_s,
        first_start=np.asarray(run.first_start, np.float64),
        run_s=np.asarray(run_s, np.float64),
        gpus=np.asarray(gpus, np.int64),
        event_times=run.times,
        queued=run.queued,
        running=run.running,
        held_gpus=run.used_gpus,
    )
