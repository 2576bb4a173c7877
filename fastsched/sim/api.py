"""``simulate``: run a workload on a simulated cluster under a policy."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import numpy as np

from fastsched import _validate as V
from fastsched.sim.cluster import Cluster
from fastsched.sim.job import Job
from fastsched.sim.policies import POLICY_NAMES, SimPolicy, make_policy
from fastsched.sim.result import JobRecord, SimulationResult
from fastsched.sim.traces import Application, load_applications
from fastsched.sim.workload import WorkloadJob, read_workload

__all__ = ["simulate", "PRESETS"]

#: Named configurations. ``osdi21`` is the published simulator study of the Pollux paper
#: (16 nodes x 4 GPUs, 60 s interval, the research Pollux objective: fairness power mean
#: p = -1 of speedups re-based at the fair share, multiplicative restart penalty,
#: interference avoidance, at most 16 nodes per job). Its restart factor is applied as one
#: penalty per round (the allocated jobs' GPU-weighted mean factor): measured on workload-6,
#: seeds 0-1, 2614.1 / 2590.6 s (+6.4 % vs the paper's 2446 s); mean over workloads 1-8:
#: 2884.9 s (seed 0), 2891.2 s (seed 1), +5 % vs the paper's 2751 s (benchmarks/results/sim.md).
#: ``osdi21-exact`` is the paper's objective term for term (each job's own restart factor,
#: power mean of ``S_j + 1e-3``, no autoscaling placeholders so ``S_j = speedup / 4``):
#: 2809.3 / 2841.1 / 2843.1 s (mean 2831 s, +15.7 %). Its JCT falls with a longer search
#: (measured before the fit-memo fix, seed 0: 2892 s at 30 generations, 2853 at 100, 2716 at
#: 300, 2667 at 1000), so the gap is where our GA and pymoo's land on that rugged
#: objective, not the objective itself.
PRESETS = {
    "default": {"nodes": 16, "gpus": 4, "interval": 60, "interference": 0.0, "policy": "pollux", "pollux": {}},
    "osdi21": {
        "nodes": 16,
        "gpus": 4,
        "interval": 60,
        "interference": 0.0,
        "policy": "pollux",
        "pollux": {"variant": "osdi21"},
    },
    "osdi21-exact": {
        "nodes": 16,
        "gpus": 4,
        "interval": 60,
        "interference": 0.0,
        "policy": "pollux",
        "pollux": {"variant": "osdi21", "restart_penalty": "osdi21", "power_shift": True, "placeholders": False},
    },
}

_DAY = 86400


def _resolve_apps(traces, applications):
    if applications is not None:
        if not isinstance(applications, dict) or not all(isinstance(a, Application) for a in applications.values()):
            raise TypeError("applications must be a dict of name -> Application")
        return applications
    if traces is not None:
        return load_applications(traces)
    from fastsched.sim.builtin import builtin_applications

    return builtin_applications()


def _resolve_workload(workload):
    if workload is None:
        from fastsched.sim.builtin import builtin_workload

        return builtin_workload()
    if isinstance(workload, (str, Path)):
        return read_workload(workload)
    jobs = list(workload)
    if not jobs or not all(isinstance(j, WorkloadJob) for j in jobs):
        raise TypeError("workload must be a CSV path or a non-empty list of WorkloadJob")
    return jobs


def simulate(
    workload=None,
    *,
    traces=None,
    applications=None,
    policy=None,
    nodes=None,
    gpus=None,
    interval=None,
    interference=None,
    max_nodes=None,
    seed=None,
    preset="default",
    policy_options=None,
    output=None,
    progress=None,
    max_time=60 * _DAY,
) -> SimulationResult:
    """Simulate a workload on a cluster of ``nodes`` x ``gpus`` GPUs.

    Parameters
    ----------
    workload : str, path, list of WorkloadJob, optional
        A workload CSV (``name, time, application, num_replicas, batch_size``) or its
        rows; default: the builtin synthetic workload.
    traces : str or path, optional
        Folder of application trace folders (``<app>/placements.csv`` ...). Default: the
        builtin application profiles.
    applications : dict of str -> Application, optional
        Ready application models (instead of ``traces``).
    policy : {"pollux", "tiresias", "optimus"} or SimPolicy, optional
        Scheduler (default from the preset: pollux).
    nodes, gpus : int, optional
        Cluster size (default from the preset: 16 x 4).
    interval : int, optional
        Scheduling interval in seconds (default 60).
    interference : float, optional
        Slowdown in [0, 1) of distributed jobs sharing a node (default 0).
    max_nodes : int, optional
        Autoscaling bound: follow the policy's desired cluster size up to this many nodes.
    seed : int, optional
        Seed of the policy's random search (Pollux). ``None`` means 0, so every run is
        reproducible; vary it to sample the search's randomness.
    preset : {"default", "osdi21", "osdi21-exact"}
        Named configuration (see :data:`PRESETS`); explicit arguments override it.
    policy_options : dict, optional
        Extra options of the Pollux policy adapter (see :class:`fastsched.sim.pollux.PolluxSimPolicy`).
    output : str, path or file object, optional
        Write one JSON object per round (JSON lines).
    progress : callable, optional
        Called after each round as ``progress(completed_jobs, total_jobs, sim_time)``.
    max_time : int
        Simulated seconds after which the run stops (unfinished jobs keep
        ``completion_time=None``).

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        Unknown preset/policy/application, bad sizes, or a job that can never run.
    FileNotFoundError
        Missing workload or trace files.
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    cfg = PRESETS[preset]
    policy = cfg["policy"] if policy is None else policy
    if not isinstance(policy, SimPolicy):
        V.check_choice("policy", policy, POLICY_NAMES)
    nodes = V.check_int_scalar("nodes", cfg["nodes"] if nodes is None else nodes, low=1)
    gpus = V.check_int_scalar("gpus", cfg["gpus"] if gpus is None else gpus, low=1)
    interval = V.check_int_scalar("interval", cfg["interval"] if interval is None else interval, low=1)
    interference = V.check_finite_scalar(
        "interference", cfg["interference"] if interference is None else interference, low=0.0, high=1.0
    )
    if interference >= 1.0:
        raise ValueError("interference must be < 1")
    if max_nodes is not None:
        max_nodes = V.check_int_scalar("max_nodes", max_nodes, low=nodes)
    seed = 0 if seed is None else V.check_int_scalar("seed", seed, low=0)
    max_time = V.check_int_scalar("max_time", max_time, low=1)

    apps = _resolve_apps(traces, applications)
    wjobs = _resolve_workload(workload)
    unknown = sorted({j.application for j in wjobs if j.application not in apps})
    if unknown:
        raise ValueError(f"workload uses unknown application(s) {unknown}; available: {sorted(apps)}")

    options = dict(cfg.get("pollux", {}))
    options.update(policy_options or {})
    options["seed"] = seed
    pol = make_policy(policy, **options) if policy == "pollux" else make_policy(policy)
    total = nodes * gpus
    if pol.name == "tiresias":
        too_big = [j.name for j in wjobs if j.num_replicas > total]
        if too_big:
            raise ValueError(f"job(s) {too_big[:5]} request more GPUs than the cluster has ({total})")
    jobs = [Job(w.name, apps[w.application], w.time, **pol.job_kwargs(w, apps[w.application])) for w in wjobs]

    config = {
        "nodes": nodes,
        "gpus": gpus,
        "interval": interval,
        "interference": interference,
        "max_nodes": max_nodes,
        "seed": seed,
        "preset": preset,
    }
    with contextlib.ExitStack() as stack:
        log = None
        if output is not None:
            log = output if hasattr(output, "write") else stack.enter_context(open(output, "w"))
        cluster = Cluster(jobs, pol, nodes, gpus, interference=interference, max_nodes=max_nodes, log=log)
        t0 = time.perf_counter()
        done = 0
        while not cluster.all_complete() and cluster.current_time < max_time:
            cluster.step(interval)
            if progress is not None:
                done = sum(j.completion_time is not None for j in jobs)
                progress(done, len(jobs), cluster.current_time)
        wall = time.perf_counter() - t0
    records = [
        JobRecord(
            name=j.name,
            application=j.application.name,
            submission_time=j.submission_time,
            completion_time=j.completion_time,
            num_restarts=j.num_restarts or 0,
            attained_service=float(j.attained_service),
            epochs=j.epoch,
        )
        for j in jobs
    ]
    return SimulationResult(
        jobs=records,
        policy=pol.name,
        config=config,
        wall_s=wall,
        policy_s=cluster.policy_seconds,
        times=np.array(cluster.times, dtype=np.int64),
        used_gpus=np.array(cluster.used_gpus, dtype=np.int64),
        total_gpus=np.array(cluster.total_gpus, dtype=np.int64),
        active_jobs=np.array(cluster.active, dtype=np.int64),
        allocations=np.array(cluster.alloc_rows, dtype=np.int16).reshape(len(cluster.alloc_rows), len(jobs)),
    )
