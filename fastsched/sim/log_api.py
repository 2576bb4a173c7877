"""``simulate_log``: replay a production log's jobs as rigid jobs (:mod:`fastsched.sim.engine.rigid`).

:func:`~fastsched.sim.simulate` hands a log to :func:`simulate_log` when its workload is one
(:func:`is_log`: a :class:`~fastsched.sim.inputs.logs.LogJobs`, a
:class:`~fastsched.sim.inputs.logs.LogRead`, or a file whose first bytes are a Philly, Helios,
PAI or Slurm log's), so ``fastsched simulate LOG --nodes N --gpus G --policy fifo,sjf`` works on
a log with no other flag.
"""

from __future__ import annotations

import os
import time

import numpy as np

__all__ = ["simulate_log", "is_log", "log_jobs"]


def is_log(workload, log_format=None) -> bool:
    """Tell whether ``workload`` is a production log (not a workload CSV).

    Examples
    --------
    >>> from fastsched.sim.inputs.logs import LogJobs
    >>> is_log(LogJobs.empty()), is_log(None), is_log([])
    (True, False, False)
    """
    from fastsched.sim.inputs.logs import LogJobs, LogRead

    if isinstance(workload, (LogJobs, LogRead)):
        return True
    if not isinstance(workload, (str, os.PathLike)):
        return False
    if log_format is not None:
        return True
    from fastsched.sim.inputs.logs._detect import detect_format

    try:
        detect_format(workload)
    except (ValueError, OSError):
        return False
    return True


def log_jobs(log, log_format=None, **read_options):
    """``(LogJobs, source, format)`` of a path, a :class:`LogRead` or :class:`LogJobs`."""
    from fastsched.sim.inputs.logs import LogJobs, LogRead, read_log

    if isinstance(log, LogJobs):
        return log, f"{len(log)} jobs given", None
    if isinstance(log, LogRead):
        return log.jobs, f"{len(log.jobs)} jobs given", log.format
    r = read_log(log, log_format, **read_options)
    return r.jobs, str(log), r.format


def simulate_log(
    log,
    *,
    policy=None,
    nodes=None,
    gpus=None,
    log_format=None,
    gpu_type=None,
    recorded_type=None,
    speed=None,
    precision="bf16",
    restart_s=None,
    thresholds=None,
    depth=None,
    lease=None,
    starve_limit=None,
    preset="default",
    read_options=None,
    notice=None,
):
    """Replay a production log's jobs as rigid jobs under ``policy`` on ``nodes`` x ``gpus`` GPUs.

    Parameters
    ----------
    log : str, path, LogRead or LogJobs
        A Philly/Helios/PAI/Slurm log (read with :func:`~fastsched.sim.inputs.logs.read_log`,
        ``read_options`` passed on) or jobs already read.
    policy : str
        One of :data:`~fastsched.sim.engine.rigid.RIGID_POLICIES` (default ``fifo``). The names
        are the rigid policies' even where a round-based policy has the same one: ``themis``
        here is Themis on rigid jobs, not the round-based
        :class:`~fastsched.sim.policies.themis.ThemisPolicy` (which needs applications), and a
        preset's options for the round-based policy of that name do not apply.
    nodes, gpus : int, optional
        Cluster size (default the preset's: 16 x 4).
    log_format : str, optional
        Overrides the format detection.
    gpu_type, recorded_type, precision : str, optional
        The cluster's GPU type: each job's duration is divided by
        :func:`~fastsched.sim.engine.rigid.speed_ratio` from the type the log records for it
        (``recorded_type`` for jobs whose log names none) to ``gpu_type``.
    speed : float, optional
        A given speed ratio instead (exclusive with ``gpu_type``).
    restart_s, thresholds, depth, lease, starve_limit, notice
        See :func:`~fastsched.sim.engine.rigid.run_rigid` (``starve_limit``: Tiresias' starvation
        promotion, off by default; ``lease``: Themis').

    Returns
    -------
    RigidResult

    Examples
    --------
    >>> from fastsched.sim.inputs.logs import LogJob, LogJobs
    >>> jobs = LogJobs.from_rows([LogJob("1", 0.0, 600.0, 4, 1, "", "completed", "", "u", 0.0),
    ...                           LogJob("2", 60.0, 60.0, 2, 1, "", "completed", "", "u", 0.0)])
    >>> r = simulate_log(jobs, policy="backfill", nodes=1, gpus=4)
    >>> [(j.name, j.jct) for j in r.jobs]
    [('1', 600.0), ('2', 600.0)]
    """
    from fastsched.sim.engine.rigid import BACKFILL_DEPTH, RIGID_POLICIES, TIRESIAS_THRESHOLDS, run_rigid, speed_ratio
    from fastsched.sim.presets import preset_shape
    from fastsched.sim.results.rigid import rigid_result

    policy = "fifo" if policy is None else policy
    if not isinstance(policy, str) or policy not in RIGID_POLICIES:
        raise ValueError(
            f"policy: a log replays rigid jobs under one of {list(RIGID_POLICIES)}, got {policy!r} "
            "(the round-based policies need a workload of applications: fastsched workload from-log)"
        )
    cluster, nodes, gpus = preset_shape(preset, nodes=nodes, gpus=gpus)
    if cluster is not None:
        raise ValueError(f"preset {preset!r} names a cluster of GPU types; a log replays on nodes x gpus: give them")
    jobs, source, fmt = log_jobs(log, log_format, **(read_options or {}))
    if speed is not None and gpu_type is not None:
        raise ValueError("speed and gpu_type: give one (a ratio, or the cluster's type to take it from the catalogue)")
    if gpu_type is not None:
        types = np.where(jobs.gpu_type == "", recorded_type or "", jobs.gpu_type)
        if np.any(types == ""):
            raise ValueError("recorded_type: the log names no GPU type for some jobs; say which type they ran on")
        ratios = {t: speed_ratio(t, gpu_type, precision) for t in set(types.tolist())}
        speed = np.array([ratios[t] for t in types.tolist()], np.float64)
    elif speed is None:
        speed = 1.0
    config = {
        "nodes": nodes,
        "gpus": gpus,
        "workload": source,
        "log_format": fmt,
        "jobs_model": "rigid",
        "preset": preset,
        "restart_s": restart_s,
    }
    if lease is not None:
        config["lease"] = lease
    if starve_limit is not None:
        config["starve_limit"] = starve_limit
    if gpu_type is not None:
        config["gpu_type"] = gpu_type
    t0 = time.perf_counter()
    run = run_rigid(
        jobs.submit, jobs.duration, jobs.gpus, nodes=nodes, gpus_per_node=gpus, policy=policy, speed=speed,
        restart_s=restart_s, thresholds=TIRESIAS_THRESHOLDS if thresholds is None else thresholds,
        depth=BACKFILL_DEPTH if depth is None else depth, lease=lease, starve_limit=starve_limit, names=jobs.name,
        notice=notice,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    run_s = jobs.duration / np.broadcast_to(np.asarray(speed, np.float64), jobs.duration.shape)
    result = rigid_result(jobs.name, jobs.submit, run_s, jobs.gpus, run, policy, config, wall_s=wall)
    return result
