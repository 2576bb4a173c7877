"""The outcome of a simulation: per-job records, summary figures and the allocation timeline."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fastsched.sim.results.metrics import compute_metrics

__all__ = ["JobRecord", "SimulationResult", "cluster_shape"]


def cluster_shape(config) -> dict:
    """Nodes and GPUs of a run's cluster (``config`` of a :class:`SimulationResult`), in total and per type.

    Returns
    -------
    dict
        ``nodes`` and ``total_gpus`` (at the start; autoscaling may change them), ``gpus`` (GPUs
        per node, ``None`` when the nodes differ); for a cluster of GPU types also
        ``nodes_by_type``, ``gpus_by_type`` and ``gpus_per_node_by_type``. Empty when
        ``config`` gives no cluster.

    Examples
    --------
    >>> shape = cluster_shape({"cluster": "6xaws,3xrtx,2xdgx-ext", "nodes": 11, "gpus": 8})
    >>> shape["nodes"], shape["total_gpus"], shape["gpus"]
    (11, 64, None)
    >>> shape["nodes_by_type"], shape["gpus_by_type"]
    ({'aws': 6, 'rtx': 3, 'dgx-ext': 2}, {'aws': 24, 'rtx': 24, 'dgx-ext': 16})
    >>> cluster_shape({"cluster": "1xslow:2,3xfast:4"})["gpus_by_type"]  # any GPU type's name
    {'slow': 2, 'fast': 12}
    >>> cluster_shape({"nodes": 16, "gpus": 4})
    {'nodes': 16, 'gpus': 4, 'total_gpus': 64}
    """
    if config.get("cluster"):
        nodes_by_type, per_node = _typed_groups(str(config["cluster"]), config.get("gpus_by_type") or {})
        counts = set(per_node.values())
        return {
            "nodes": sum(nodes_by_type.values()),
            "gpus": counts.pop() if len(counts) == 1 else None,
            "total_gpus": sum(nodes_by_type[t] * per_node[t] for t in nodes_by_type),
            "nodes_by_type": nodes_by_type,
            "gpus_by_type": {t: nodes_by_type[t] * per_node[t] for t in nodes_by_type},
            "gpus_per_node_by_type": per_node,
        }
    nodes, gpus = config.get("nodes"), config.get("gpus")
    if isinstance(nodes, int) and isinstance(gpus, int):
        return {"nodes": nodes, "gpus": gpus, "total_gpus": nodes * gpus}
    return {}


def _typed_groups(text, gpus_by_type) -> tuple:
    """Nodes and GPUs per node by type of ``str(ClusterSpec)`` (``6xaws,1xfast:2``), any type names."""
    from fastsched.sim.inputs.cluster_spec import GPU_TYPES

    nodes: dict = {}
    per_node: dict = {}
    for part in text.split(","):
        count, _, rest = part.strip().partition("x")
        gpu_type, _, gpus = rest.partition(":")
        nodes[gpu_type] = nodes.get(gpu_type, 0) + int(count)
        if gpus:
            per_node[gpu_type] = int(gpus)
    for t in nodes:  # the type's default size, else the run's GPUs of that type over its nodes
        per_node.setdefault(t, GPU_TYPES.get(t) or int(gpus_by_type.get(t, 0)) // nodes[t])
    return nodes, {t: per_node[t] for t in nodes}


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
    modelled_gpu_seconds : float
        GPU-seconds trained at (placement, batch) points the application's throughput model
        answered rather than its measured rows.

    Examples
    --------
    >>> from fastsched.sim import JobRecord
    >>> record = JobRecord("a", "cifar10", submission_time=60, completion_time=1260, num_restarts=1,
    ...                    attained_service=4800.0, epochs=30)
    >>> record.jct
    1200.0
    """

    name: str
    application: str
    submission_time: int
    completion_time: int | None
    num_restarts: int
    attained_service: float
    epochs: int
    gpu_seconds_by_type: dict | None = None
    modelled_gpu_seconds: float = 0.0

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
    policy_times : numpy.ndarray
        Seconds of each policy call (float64; rounds where no decision was due make none).
    used_gpus_by_type : dict of str -> numpy.ndarray, optional
        Clusters of GPU types: GPUs allocated of each type after each round's policy call
        (int64, shape ``(rounds,)`` each); ``None`` for an untyped cluster.
    isolated_jct : numpy.ndarray, optional
        Per job, its JCT alone on an equal share of the cluster (NaN if not completed; see
        :mod:`fastsched.sim.results.isolated`), the denominator of finish-time fairness; ``None``:
        finish-time fairness falls back to the GPU-seconds estimate (:mod:`fastsched.sim.results.metrics`).

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob, simulate
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 2, 256), WorkloadJob("b", 60, "ncf", 1, 256)]
    >>> result = simulate(jobs, policy="tiresias", nodes=1, gpus=4)
    >>> result.completed, len(result.jobs), result.policy
    (2, 2, 'tiresias')
    >>> result.allocations.shape == (result.times.size, len(jobs))
    True
    >>> result.summary()["completed"], "average JCT" in result.table()
    (2, True)
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
    policy_times: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    isolated_jct: np.ndarray | None = None
    used_gpus_by_type: dict | None = None

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
    def avg_jct(self) -> float | None:
        """Mean JCT over completed jobs in seconds; ``None`` when no job completed.

        There is no mean of no JCTs: ``None`` (``null`` in JSON) says so, where a NaN
        would pass silently through averages over runs.

        Examples
        --------
        >>> r = SimulationResult(jobs=[JobRecord("a", "cifar10", 0, 600, 0, 60.0, 3)], policy="fifo", config={})
        >>> r.avg_jct
        600.0
        >>> SimulationResult(jobs=[JobRecord("a", "cifar10", 0, None, 0, 0.0, 0)], policy="fifo", config={}).avg_jct
        """
        j = self.jcts
        return float(j.mean()) if j.size else None

    @property
    def p99_jct(self) -> float | None:
        """99th percentile JCT (linear interpolation); ``None`` when no job completed."""
        j = self.jcts
        return float(np.percentile(j, 99)) if j.size else None

    @property
    def makespan(self) -> float | None:
        """Seconds from the first submission to the last completion; ``None`` when no job completed."""
        done = [j.completion_time for j in self.jobs if j.completion_time is not None]
        if not done:
            return None
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
    def incomplete(self) -> dict:
        """Why jobs did not finish: ``{reason: count}``, empty when every job completed.

        Reasons: ``"arrived after the end"`` (submitted after the last round, e.g. beyond
        ``max_time``), ``"never started"`` (submitted, never given a GPU) and ``"running at the
        end"`` (had GPUs, did not finish).

        Examples
        --------
        >>> r = SimulationResult(
        ...     jobs=[JobRecord("a", "cifar10", 0, 600, 0, 60.0, 3), JobRecord("b", "cifar10", 900, None, 0, 0.0, 0)],
        ...     policy="tiresias", config={"interval": 60}, times=np.array([60, 600]))
        >>> r.incomplete
        {'arrived after the end': 1}
        """
        end = int(self.times[-1]) if self.times.size else 0
        out: dict = {}
        for j in self.jobs:
            if j.completion_time is not None:
                continue
            if j.submission_time > end:
                reason = "arrived after the end"
            elif j.attained_service <= 0:
                reason = "never started"
            else:
                reason = "running at the end"
            out[reason] = out.get(reason, 0) + 1
        return out

    @property
    def modelled_share(self) -> float:
        """Share of the GPU-seconds held that trained on modelled throughput (NaN if none held).

        Examples
        --------
        >>> r = SimulationResult(jobs=[JobRecord("a", "cifar10", 0, 600, 0, 400.0, 3, modelled_gpu_seconds=100.0)],
        ...                      policy="tiresias", config={})
        >>> r.modelled_share
        0.25
        """
        held = sum(j.attained_service for j in self.jobs)
        return float(sum(j.modelled_gpu_seconds for j in self.jobs) / held) if held else float("nan")

    @property
    def restarts(self) -> int:
        """Total reallocations after first allocations, over all jobs."""
        return int(sum(j.num_restarts for j in self.jobs))

    def summary(self) -> dict:
        """Return the headline figures as a JSON-ready dict.

        Keys: ``avg_jct``, ``p50_jct``, ``p99_jct``, ``makespan`` (s; ``None`` when no job
        completed),
        ``jobs``, ``completed``, ``incomplete`` (:attr:`incomplete`), ``gpu_utilization``
        (fraction), ``restarts``, ``rounds``, ``wall_s``, ``policy_s``, ``policy_calls``,
        ``policy_s_median`` and ``policy_s_p95`` (per call), ``modelled_share``
        (:attr:`modelled_share`), ``policy``, plus the
        configuration (which includes ``workload``, ``profiles`` and ``max_time`` for a
        result of :func:`~fastsched.sim.simulate`).

        Examples
        --------
        >>> r = SimulationResult(jobs=[JobRecord("a", "cifar10", 0, 600, 0, 60.0, 3)], policy="tiresias",
        ...                      config={"interval": 60, "workload": "w.csv"}, times=np.array([60, 600]),
        ...                      used_gpus=np.array([1, 1]), total_gpus=np.array([4, 4]),
        ...                      active_jobs=np.array([1, 1]), allocations=np.ones((2, 1), np.int16))
        >>> s = r.summary()
        >>> s["completed"], s["jobs"], s["incomplete"], s["avg_jct"], s["workload"]
        (1, 1, {}, 600.0, 'w.csv')
        """
        out = {
            "policy": self.policy,
            "jobs": len(self.jobs),
            "completed": self.completed,
            "incomplete": self.incomplete,
            "avg_jct": self.avg_jct,
            "p99_jct": self.p99_jct,
            "makespan": self.makespan,
            "gpu_utilization": self.gpu_utilization,
            "restarts": self.restarts,
            "rounds": int(self.times.size),
            "wall_s": self.wall_s,
            "policy_s": self.policy_s,
            "policy_calls": int(self.policy_times.size),
            "policy_s_median": float(np.median(self.policy_times)) if self.policy_times.size else float("nan"),
            "policy_s_p95": float(np.percentile(self.policy_times, 95)) if self.policy_times.size else float("nan"),
            "modelled_share": self.modelled_share,
        }
        out.update(compute_metrics(self))  # the field's metrics (fastsched.sim.results.metrics.METRIC_KEYS)
        if not out["completed"]:  # no JCT to report: None, as the properties
            out.update(avg_jct=None, p50_jct=None, p99_jct=None, makespan=None)
        for k, v in self.config.items():
            out.setdefault(k, v)
        out.update(cluster_shape(self.config))
        return out

    def table(self) -> str:
        """Return the summary as an aligned plain-text table.

        Examples
        --------
        >>> r = SimulationResult(jobs=[JobRecord("a", "cifar10", 900, None, 0, 0.0, 0)], policy="tiresias",
        ...                      config={"interval": 60}, times=np.array([60, 600]),
        ...                      used_gpus=np.array([0, 0]), total_gpus=np.array([4, 4]),
        ...                      active_jobs=np.array([1, 1]), allocations=np.ones((2, 1), np.int16))
        >>> print(r.table())  # doctest: +NORMALIZE_WHITESPACE
        policy                tiresias
        cluster               None nodes x None GPUs
        jobs completed        0 / 1
        not completed         1 arrived after the end
        average JCT           - (no job completed)
        p99 JCT               - (no job completed)
        makespan              - (no job completed)
        median JCT            - (no job completed)
        GPU utilization       -
        GPU-hours per job     0.000 h
          by GPU type         -
        restarts per job      0.00
        contention            mean 1.0, max 1 jobs
        finish-time fairness  -
        restarts              0
        rounds                2 x 60 s
        wall time             0.00 s (policy 0.00 s)
        """
        s = self.summary()

        def hours(x):
            if x is None or not np.isfinite(x):
                return "- (no job completed)"
            return f"{x:,.1f} s ({x / 3600:.2f} h)"

        def num(x, fmt):
            return "-" if x is None or not np.isfinite(x) else fmt.format(x)

        rows = [("policy", s["policy"])]
        for key, label in (("workload", "workload"), ("profiles", "profiles")):
            if key in self.config:
                rows.append((label, str(self.config[key])))
        if "scale" in self.config:  # Sia's scaling study: K workloads merged on K times the nodes
            rows.append(("scale", f"x{self.config['scale']} (workload copies and nodes)"))
        rows += [
            ("cluster", _cluster_text(self.config)),
            ("jobs completed", f"{s['completed']} / {s['jobs']}"),
        ]
        if s["incomplete"]:
            rows.append(("not completed", ", ".join(f"{n} {why}" for why, n in s["incomplete"].items())))
        util = s["gpu_utilization"]
        rows += [
            ("average JCT", hours(s["avg_jct"])),
            ("p99 JCT", hours(s["p99_jct"])),
            ("makespan", hours(s["makespan"])),
            ("median JCT", hours(s["p50_jct"])),
            ("GPU utilization", num(100 * util, "{:.1f} %")),
            ("GPU-hours per job", num(s["gpu_hours_per_job"], "{:.3f} h")),
            ("  by GPU type", ", ".join(f"{t} {v:.3f} h" for t, v in s["gpu_hours_by_type"].items()) or "-"),
            ("restarts per job", num(s["restarts_per_job"], "{:.2f}")),
        ]
        if s["modelled_share"] > 0:  # only beyond the measured traces
            rows.append(("modelled throughput", f"{100 * s['modelled_share']:.1f} % of GPU-time"))
        rows += [
            (
                "contention",
                "-"
                if not np.isfinite(s["contention_mean"])
                else f"mean {s['contention_mean']:.1f}, max {s['contention_max']:.0f} jobs",
            ),
            (
                "finish-time fairness",
                "-"
                if not np.isfinite(s["ftf_worst"])
                else f"worst {s['ftf_worst']:.2f}, {100 * s['ftf_unfair_fraction']:.1f} % above 1.05",
            ),
            ("restarts", f"{s['restarts']}"),
            ("rounds", f"{s['rounds']} x {self.config.get('interval')} s"),
            ("wall time", f"{s['wall_s']:.2f} s (policy {s['policy_s']:.2f} s)"),
        ]
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)

    def __repr__(self) -> str:
        avg, makespan = self.avg_jct, self.makespan
        return (
            f"SimulationResult(policy={self.policy!r}, jobs={len(self.jobs)}, completed={self.completed}, "
            f"avg_jct={'None' if avg is None else f'{avg:.1f}'}, "
            f"makespan={'None' if makespan is None else f'{makespan:.0f}'}, wall_s={self.wall_s:.2f})"
        )


def _cluster_text(config) -> str:
    shape = cluster_shape(config)
    if not config.get("cluster"):
        return f"{config.get('nodes')} nodes x {config.get('gpus')} GPUs"
    types = ", ".join(f"{t} {n}x{shape['gpus_per_node_by_type'][t]}" for t, n in shape["nodes_by_type"].items())
    return f"{config['cluster']} ({shape['nodes']} nodes, {shape['total_gpus']} GPUs: {types})"
