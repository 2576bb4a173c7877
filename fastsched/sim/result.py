"""The outcome of a simulation: per-job records, summary figures and the allocation timeline."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fastsched.sim.metrics import compute_metrics

__all__ = ["JobRecord", "SimulationResult"]


@dataclass(frozen=True)
class JobRecord:
    """What happened to one job.

    Attributes
    ----------
    name, application : str
    submission_time : int
    completion_time : int or None
        ``None`` if the job did not finish (the simulation was cut short).
    num_restarts : int
        Reallocations after the first allocation.
    attained_service : float
        GPU-seconds held.
    epochs : int
        Epochs finished.
    gpu_seconds_by_type : dict of str -> float, optional
        GPU-seconds held per GPU type (typed clusters; ``None``: all on one type).
    """

    name: str
    application: str
    submission_time: int
    completion_time: int | None
    num_restarts: int
    attained_service: float
    epochs: int
    gpu_seconds_by_type: dict | None = None

    @property
    def jct(self) -> float | None:
        """Job completion time (completion - submission), or ``None``."""
        if self.completion_time is None:
            return None
        return float(self.completion_time - self.submission_time)


@dataclass
class SimulationResult:
    """Result of :func:`fastsched.sim.simulate`.

    Attributes
    ----------
    jobs : list of JobRecord
        In workload order.
    policy : str
    config : dict
        The simulation settings (nodes, GPUs per node, interval, seed, ...).
    wall_s : float
        Wall-clock seconds of the simulation.
    policy_s : float
        Of which seconds spent in the policy.
    times : numpy.ndarray
        Cluster time at the end of each round (int64, shape ``(rounds,)``).
    used_gpus, total_gpus, active_jobs : numpy.ndarray
        GPUs allocated, GPUs in the cluster and active jobs after each round's policy call.
    allocations : numpy.ndarray
        ``(rounds, jobs)`` int16 GPUs held by each job after each round.
    """

    jobs: list
    policy: str
    config: dict
    wall_s: float = 0.0
    policy_s: float = 0.0
    times: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    used_gpus: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    total_gpus: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    active_jobs: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    allocations: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.int16))

    # -- figures ---------------------------------------------------------------------------
    @property
    def jcts(self) -> np.ndarray:
        """JCTs of the completed jobs, in workload order (float64 seconds)."""
        return np.array([j.jct for j in self.jobs if j.completion_time is not None], dtype=np.float64)

    @property
    def completed(self) -> int:
        """Number of completed jobs."""
        return sum(j.completion_time is not None for j in self.jobs)

    @property
    def avg_jct(self) -> float:
        """Mean JCT over completed jobs (NaN if none)."""
        j = self.jcts
        return float(j.mean()) if j.size else float("nan")

    @property
    def p99_jct(self) -> float:
        """99th percentile JCT (linear interpolation; NaN if none)."""
        j = self.jcts
        return float(np.percentile(j, 99)) if j.size else float("nan")

    @property
    def makespan(self) -> float:
        """Seconds from the first submission to the last completion."""
        done = [j.completion_time for j in self.jobs if j.completion_time is not None]
        if not done:
            return float("nan")
        return float(max(done) - min(j.submission_time for j in self.jobs))

    @property
    def gpu_utilization(self) -> float:
        """Allocated GPU-seconds over available GPU-seconds between first submission and end."""
        if self.times.size == 0:
            return float("nan")
        start = min(j.submission_time for j in self.jobs)
        interval = self.config.get("interval", 60)
        mask = self.times > start
        total = float(np.sum(self.total_gpus[mask])) * interval
        return float(np.sum(self.used_gpus[mask]) * interval / total) if total else float("nan")

    @property
    def restarts(self) -> int:
        """Total reallocations after first allocations, over all jobs."""
        return int(sum(j.num_restarts for j in self.jobs))

    def summary(self) -> dict:
        """The headline figures as a JSON-ready dict.

        Keys: ``avg_jct``, ``p99_jct``, ``makespan`` (s), ``jobs``, ``completed``,
        ``gpu_utilization`` (fraction), ``restarts``, ``rounds``, ``wall_s``, ``policy_s``,
        ``policy``, plus the configuration.
        """
        out = {
            "policy": self.policy,
            "jobs": len(self.jobs),
            "completed": self.completed,
            "avg_jct": self.avg_jct,
            "p99_jct": self.p99_jct,
            "makespan": self.makespan,
            "gpu_utilization": self.gpu_utilization,
            "restarts": self.restarts,
            "rounds": int(self.times.size),
            "wall_s": self.wall_s,
            "policy_s": self.policy_s,
        }
        out.update(compute_metrics(self))  # the field's metrics (fastsched.sim.metrics.METRIC_KEYS)
        for k, v in self.config.items():
            out.setdefault(k, v)
        return out

    def table(self) -> str:
        """The summary as an aligned plain-text table."""
        s = self.summary()

        def hours(x):
            return f"{x:,.1f} s ({x / 3600:.2f} h)"

        rows = [
            ("policy", s["policy"]),
            (
                "cluster",
                self.config.get("cluster") or f"{self.config.get('nodes')} nodes x {self.config.get('gpus')} GPUs",
            ),
            ("jobs completed", f"{s['completed']} / {s['jobs']}"),
            ("average JCT", hours(s["avg_jct"])),
            ("p99 JCT", hours(s["p99_jct"])),
            ("makespan", hours(s["makespan"])),
            ("median JCT", hours(s["p50_jct"])),
            ("GPU utilization", f"{100 * s['gpu_utilization']:.1f} %"),
            ("GPU-hours per job", f"{s['gpu_hours_per_job']:.3f} h"),
            ("  by GPU type", ", ".join(f"{t} {v:.3f} h" for t, v in s["gpu_hours_by_type"].items())),
            ("restarts per job", f"{s['restarts_per_job']:.2f}"),
            ("contention", f"mean {s['contention_mean']:.1f}, max {s['contention_max']:.0f} jobs"),
            ("finish-time fairness", f"worst {s['ftf_worst']:.2f}, {100 * s['ftf_unfair_fraction']:.1f} % above 1.05"),
            ("restarts", f"{s['restarts']}"),
            ("rounds", f"{s['rounds']} x {self.config.get('interval')} s"),
            ("wall time", f"{s['wall_s']:.2f} s (policy {s['policy_s']:.2f} s)"),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)

    def __repr__(self) -> str:
        return (
            f"SimulationResult(policy={self.policy!r}, jobs={len(self.jobs)}, completed={self.completed}, "
            f"avg_jct={self.avg_jct:.1f}, makespan={self.makespan:.0f}, wall_s={self.wall_s:.2f})"
        )
