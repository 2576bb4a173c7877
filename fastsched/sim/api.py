"""``simulate``: run a workload on a simulated cluster under a policy."""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastsched._atomic import atomic_open
from fastsched._progress import progress_callback
from fastsched._provenance import describe_input, python_call, record
from fastsched.sim.engine.cluster import Cluster
from fastsched.sim.engine.hetero_job import (
    SIA_RESTART_DELAYS,
    SIA_SLOWDOWNS,
    HeteroApplication,
    make_hetero_jobs,
    resolve_hetero_applications,
)
from fastsched.sim.engine.job import Job
from fastsched.sim.inputs import preflight
from fastsched.sim.inputs.cluster_spec import DEFAULT_TYPE, homogeneous_cluster
from fastsched.sim.inputs.workload import read_workload, validate_workload
from fastsched.sim.log_api import is_log, simulate_log
from fastsched.sim.presets import PRESETS
from fastsched.sim.results.isolated import result_isolated_jcts
from fastsched.sim.results.result import JobRecord, SimulationResult
from fastsched.sim.study import resolve_study
from fastsched.sim.truth.builtin import builtin_applications, builtin_workload
from fastsched.sim.truth.traces import Application, load_applications

__all__ = ["simulate", "check_simulation", "PRESETS"]


_DAY = 86400
#: Rounds with jobs waiting, no GPU held and no arrival ahead before the run is declared stuck.
_STALL_ROUNDS = 10


def _json_ready(value):
    """Non-finite floats as ``None`` (strict JSON), recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _resolve_apps(traces, applications):
    if applications is not None:
        if not isinstance(applications, dict) or not all(isinstance(a, Application) for a in applications.values()):
            raise TypeError("applications must be a dict of name -> Application")
        return applications
    if traces is not None:
        return load_applications(traces)
    return builtin_applications()


def _profiles_source(traces, applications) -> str:
    """Where the application profiles come from: ``"applications"``, a traces folder, ``"builtin"``.

    (``"oracle"``: catalogue jobs on catalogue GPU types without traces, see ``_on_oracle``.)
    """
    if applications is not None:
        return "applications"
    if traces is not None:
        return str(Path(traces).expanduser().resolve())
    return "builtin"


def _low_confidence(traces, applications, names, types) -> list:
    """``application/type`` of the run's modelled profiles flagged low-confidence (host-bound), sorted.

    A profile folder's ``profile.json`` (:func:`fastsched.catalog.profile.read_profile_info`)
    flags them; ready applications, by their ``low_confidence`` attribute (per type for a
    per-type application). Measured traces are never flagged.
    """
    out = set()
    if applications is not None:
        for name in names:
            app = applications.get(name)
            per_type = getattr(app, "apps", None)
            for t, a in per_type.items() if isinstance(per_type, dict) else [("", app)]:
                if getattr(a, "low_confidence", False) is True:
                    out.add(f"{name}/{t}" if t else name)
        return sorted(out)
    if traces is None:
        return []
    from fastsched.catalog.profile import read_profile_info

    for name in names:
        info = read_profile_info(Path(traces).expanduser() / name)
        if info is None:
            continue
        for t in info.get("low_confidence", []):
            if types is None or t in types:
                out.add(f"{name}/{t}")
    return sorted(out)


@contextlib.contextmanager
def _log_file(output):
    """Open the output: the caller's file object, or one written whole to the path ``output`` (see :mod:`fastsched._atomic`)."""
    if output is None or hasattr(output, "write"):
        yield output
    else:
        with atomic_open(output) as f:
            yield f


def _resolve_workload(workload, scale=None):
    if scale is not None:
        from fastsched.sim.inputs.scale import scale_workload

        return validate_workload(scale_workload(builtin_workload() if workload is None else workload, scale))
    if workload is None:
        return builtin_workload()
    if isinstance(workload, (str, os.PathLike)):
        return read_workload(workload)
    return validate_workload(workload)  # the CSV reader's rules (unique names ...) for a list too


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
    cluster=None,
    cap_replicas=False,
    scale=None,
) -> SimulationResult:
    """Simulate a workload on a cluster of ``nodes`` x ``gpus`` GPUs.

    Parameters
    ----------
    workload : str, path, list of WorkloadJob, optional
        A workload CSV (``name, time, application, num_replicas, batch_size``) or its
        rows; default: the builtin synthetic workload. A production log (a Philly, Helios,
        PAI or Slurm file, told by its first bytes, or its :class:`~fastsched.sim.inputs.logs.LogJobs`)
        is replayed as rigid jobs by :func:`~fastsched.sim.log_api.simulate_log` under one of
        :data:`~fastsched.sim.engine.rigid.RIGID_POLICIES` (``fifo`` by default), to its last
        completion; only ``policy``, ``nodes``, ``gpus``, ``preset`` and ``output`` apply.
    traces : str or path, optional
        Folder of application trace folders (``<app>/placements.csv`` ...). Default: the
        builtin application profiles.
    applications : dict of str -> Application, optional
        Ready application models (instead of ``traces``).
    policy : str or SimPolicy, optional
        Scheduler (default from the preset: pollux): a name of
        :data:`~fastsched.sim.policies.POLICY_NAMES`, ``"package.module:Class"`` or an installed
        plugin's name (:func:`~fastsched.sim.policies.make_policy`), or a ready policy.
    nodes, gpus : int, optional
        Cluster size of one (unnamed) GPU type (default from the preset: 16 x 4).
    interval : int, optional
        Scheduling interval in seconds (default 60).
    interference : float, optional
        Slowdown in [0, 1) of distributed jobs sharing a node (default 0).
    max_nodes : int, optional
        Autoscaling bound: follow the policy's desired cluster size up to this many nodes.
    seed : int, optional
        Seed of the policy's random search (Pollux). ``None`` means 0, so every run is
        reproducible; vary it to sample the search's randomness.
    preset : {"default", "osdi21", "osdi21-exact", "sia", "sia-artifact", "sia-homogeneous"}
        Named configuration (see :data:`PRESETS`); explicit arguments override it.
    policy_options : dict, optional
        Options of a built-in policy given by name, over the preset's (``{"time_limit": 1.5}``
        for ``"sia"``; Pollux's: :class:`fastsched.sim.policies.pollux.PolluxSimPolicy`).
    output : str, path or file object, optional
        Write one JSON object per round (JSON lines), then one ``{"summary": {...}}`` line
        with :meth:`SimulationResult.summary` (the metrics included). A path is written through
        a temporary file in the same folder, renamed into place when the run completes; it may
        not be the workload itself.
    progress : bool or callable, optional
        ``True``: a progress bar on stderr (when it is a terminal); a callable is called after
        each round as ``progress(completed_jobs, total_jobs, sim_time)`` (and once with 0 before
        the first round, once every check has passed); ``None``/``False``: nothing.
    max_time : int
        Simulated seconds after which the run stops (unfinished jobs keep
        ``completion_time=None`` and are listed in ``summary()["incomplete"]``).
    cluster : str, path or ClusterSpec, optional
        Nodes of named GPU types, e.g. ``"6xaws,3xrtx,2xdgx-ext"`` or a TOML/JSON file (see
        :func:`~fastsched.sim.inputs.cluster_spec.parse_cluster`); needs per-type ``traces`` (the Sia
        layout). Exclusive with ``nodes``/``gpus``. Default from the preset.
    cap_replicas : bool
        On a typed cluster, lower requests for more GPUs than the largest type has (for the
        policies that run jobs at their requested count) instead of raising.
    scale : int, optional
        Sia's scaling study (:mod:`fastsched.sim.inputs.scale`): merge ``scale`` workloads (copies of
        ``workload``, or a folder's CSVs in turn) and multiply every node group (or ``nodes``)
        by ``scale``. The summary keeps ``workload`` as given and adds ``scale``.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        Unknown preset/policy/application, bad sizes, or a job that can never run.
    FileNotFoundError
        Missing workload or trace files.

    Examples
    --------
    Two jobs of the builtin application profiles under Tiresias on one 4-GPU node:

    >>> from fastsched.sim import WorkloadJob
    >>> jobs = [WorkloadJob("a", 0, "cifar10", 1, 128), WorkloadJob("b", 30, "ncf", 1, 32768)]
    >>> result = simulate(jobs, policy="tiresias", nodes=1, gpus=4)
    >>> s = result.summary()
    >>> s["policy"], s["jobs"], s["completed"], s["makespan"]
    ('tiresias', 2, 2, 4190.0)
    >>> [(job.name, job.jct) for job in result.jobs]
    [('a', 4190.0), ('b', 114.0)]
    """
    args = dict(locals())  # the arguments as given: progress and resolve_study's, name for name
    if is_log(workload):  # a production log: rigid jobs, event by event (fastsched.sim.log_api)
        return _replay_log(workload, args)
    del args["progress"]
    study = resolve_study(**args)
    # The call for the provenance, in the signature's order: objects by name, output left out.
    shown = {"applications": None if applications is None else sorted(applications), "output": None,
             "policy": getattr(policy, "name", policy), "cluster": None if cluster is None else str(cluster),
             "cap_replicas": cap_replicas or None}  # fmt: skip
    call = python_call("simulate", **{**args, **shown})
    progress, own_bar = progress_callback(progress)
    wjobs = _inputs(study)
    apps, spec = _truth(study, wjobs)
    jobs = _job_state(study, wjobs, apps, spec)
    with _log_file(output) as log, contextlib.ExitStack() as stack:
        if own_bar:
            stack.callback(progress.close)
        cluster = Cluster(
            jobs, study.policy, study.nodes, study.gpus,
            interference=study.interference, max_nodes=study.max_nodes, log=log, spec=spec,
        )  # fmt: skip
        run = _run_rounds(study, cluster, jobs, spec, progress)
        result = _result(study, wjobs, jobs, spec, cluster, run)
        result.provenance = _provenance(study, spec, call)
        if log is not None:
            log.write(json.dumps({"summary": _json_ready(result.summary())}) + "\n")
    return result


def check_simulation(workload=None, **kwargs) -> None:
    """Make every check :func:`simulate` makes before its first round, and run nothing.

    The study is resolved, the workload and the traces read, every job checked against its
    application and the cluster, and the jobs built, as :func:`simulate` does; the output path is
    checked but not written. A comparison (:func:`fastsched.sim._compare.check_policies`) checks
    every policy's run this way before the first one starts.

    Parameters
    ----------
    workload, **kwargs
        As :func:`simulate`'s (not ``progress``).

    Raises
    ------
    ValueError, TypeError, OSError
        What :func:`simulate` would raise before its first round.

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob
    >>> check_simulation([WorkloadJob("a", 0, "cifar10", 2, 256)], policy="gavel", nodes=1, gpus=4)
    >>> check_simulation([WorkloadJob("a", 0, "cifar10", 8, 256)], policy="gavel", nodes=1, gpus=4)
    Traceback (most recent call last):
    ...
    ValueError: job(s) ['a'] request more GPUs than the largest GPU type has (4); ...
    """
    if "progress" in kwargs:
        raise TypeError("check_simulation runs nothing: progress does not apply")
    study = resolve_study(workload, **kwargs)
    wjobs = _inputs(study)
    apps, spec = _truth(study, wjobs)
    _job_state(study, wjobs, apps, spec)


def _provenance(study, spec, call) -> dict:
    """Return what made the run (:mod:`fastsched._provenance`): version, command or call, seeds, inputs' SHA-256."""
    inputs = {
        "workload": _builtin("builtin_workload.csv") if study.workload is None else study.workload,
        "traces": _builtin("builtin_apps.json") if study.traces is None and study.applications is None else study.traces,
        "cluster": None if study.cluster is None else (str(spec) if spec is not None and not _is_file(study.cluster)
                                                       else study.cluster),
    }  # fmt: skip
    if study.applications is not None:
        inputs["applications"] = {k: type(v).__name__ for k, v in sorted(study.applications.items())}
    seeds = {"seed": study.seed}  # the policy's random search; the arrivals are the workload's (hashed)
    return record(call=call, seeds=seeds, inputs={k: v for k, v in inputs.items() if v is not None})


def _builtin(name) -> dict:
    """Return a builtin input's description: named ``builtin``, hashed by its data file's bytes."""
    from importlib import resources

    with resources.as_file(resources.files("fastsched.sim").joinpath("data", name)) as f:
        return {"value": "builtin", "sha256": describe_input(f)["sha256"]}


def _is_file(value) -> bool:
    return isinstance(value, (str, os.PathLike)) and Path(value).expanduser().is_file()


#: simulate()'s arguments a log replay takes; the others must keep their defaults (max_time does
#: not apply: a replay runs to its last completion).
_LOG_ARGS = {"workload", "policy", "nodes", "gpus", "preset", "output", "progress", "max_time"}
_DEFAULTS = {"preset": "default", "cap_replicas": False, "max_time": 60 * _DAY}


def _replay_log(workload, args) -> SimulationResult:
    """Replay a production log (:func:`~fastsched.sim.log_api.simulate_log`); refuse options it cannot use."""
    given = sorted(k for k, v in args.items() if k not in _LOG_ARGS and v != _DEFAULTS.get(k) and v is not None)
    if given:
        raise ValueError(f"{', '.join(given)}: not for a production log (rigid jobs replayed event by event)")
    result = simulate_log(
        workload, policy=args["policy"], nodes=args["nodes"], gpus=args["gpus"], preset=args["preset"]
    )
    if args["output"] is not None:
        with _log_file(args["output"]) as log:
            log.write(json.dumps({"summary": _json_ready(result.summary())}) + "\n")
    return result


def _inputs(study) -> list:
    """Return the workload's rows, after the files and the output path are checked."""
    workload, traces = study.workload, study.traces
    # A typed cluster reads per-GPU-type traces on purpose; otherwise such a folder is refused.
    layout_checked = traces if study.applications is None and study.spec is None else None
    folder = (
        study.scale is not None and isinstance(workload, (str, os.PathLike)) and Path(workload).expanduser().is_dir()
    )
    preflight.check_run(
        workload=None if folder else workload,
        traces=layout_checked,
        output=study.output,
        inputs=(traces, study.cluster),
    )
    return _resolve_workload(workload, study.scale)


def _source(study):
    return str(study.workload) if isinstance(study.workload, (str, os.PathLike)) else None


def _on_oracle(study, wjobs) -> bool:
    """Whether the run's truth is the oracle: no traces, no applications, catalogue jobs on catalogue types."""
    if study.traces is not None or study.applications is not None or study.spec is None:
        return False
    from fastsched.sim.truth.oracle import catalogue_covers

    return catalogue_covers({j.application for j in wjobs}, study.spec.types)


def _truth(study, wjobs) -> tuple:
    """``(applications by name, cluster spec)``: the truth the jobs run on, every job checked against it."""
    pol, spec, traces, applications = study.policy, study.spec, study.traces, study.applications
    if _on_oracle(study, wjobs):
        # catalogue models on catalogue GPU types, no traces: the cost model's oracle is the truth
        from fastsched.sim.truth.oracle import oracle_applications

        applications = oracle_applications(sorted({j.application for j in wjobs}), spec.types)
    if spec is not None:
        apps = resolve_hetero_applications(traces, applications, spec, [j.application for j in wjobs])
        unknown = sorted({j.application for j in wjobs if j.application not in apps})
        if unknown:
            raise ValueError(f"workload uses unknown application(s) {unknown}; available: {sorted(apps)}")
        # Before the first round, as on a plain cluster: a bad row must not fail hours into the run.
        preflight.check_jobs(wjobs, apps, pol.name, spec.total_gpus, source=_source(study), per_gpu=False, policy=pol)
    else:
        apps = _resolve_apps(traces, applications)
        preflight.check_jobs(wjobs, apps, pol.name, study.nodes * study.gpus, source=_source(study), policy=pol)
    if spec is None and pol.needs_gpu_types:
        # A policy built for GPU types on a plain cluster: one type, named "gpu".
        spec = homogeneous_cluster(study.nodes, study.gpus)
        apps = {k: HeteroApplication({DEFAULT_TYPE: a}) for k, a in apps.items()}
    return apps, spec


def _job_state(study, wjobs, apps, spec) -> list:
    """Return the jobs, in their state before the first round."""
    pol = study.policy
    if spec is None:
        models: dict = {}  # the jobs' goodput models and fits, shared (see Job)
        fits: dict = {}
        return [
            Job(w.name, apps[w.application], w.time, **pol.job_kwargs(w, apps[w.application]), models=models, fits=fits)
            for w in wjobs
        ]
    pol.bind_cluster(spec, study.interval)
    sia = study.job_model == "sia"
    return make_hetero_jobs(
        wjobs,
        apps,
        pol,
        spec,
        cap_replicas=study.cap_replicas,
        restart_delays=SIA_RESTART_DELAYS if sia else None,
        slowdowns=SIA_SLOWDOWNS if sia else None,
        restart_on_move=not sia,  # the study restarts a job only on a new shape, type or resume
    )


def _final_batch(job, last):
    """Return the job's total batch in its last round with GPUs: now if it holds some, else when it last did."""
    if job.placement and job.completion_time is None:
        return int(job.batch_size)
    return None if last is None else int(last)


class _Run(NamedTuple):
    wall_s: float
    used_gpus_by_type: dict | None


def _run_rounds(study, cluster, jobs, spec, progress) -> _Run:
    """Step the cluster round by round until every job completes or ``max_time``; refuse a stuck run."""
    t0 = time.perf_counter()
    last_arrival = max(j.submission_time for j in jobs)
    idle_rounds = 0
    if progress is not None:
        progress(0, len(jobs), cluster.current_time)  # every check passed: the first round starts now
    by_type = None if spec is None else {t: [] for t in spec.types}  # GPUs held per type, per round
    counted = held = None
    while not cluster.all_complete() and cluster.current_time < study.max_time:
        cluster.step(study.interval)
        if by_type is not None:
            if cluster.allocations is not counted:  # a new allocation (the cluster never edits one in place)
                counted, held = cluster.allocations, dict.fromkeys(by_type, 0)
                for alloc in counted.values():
                    if alloc:  # a job never spans two types (Cluster checks): its first node's type
                        held[spec.node_types[alloc[0]]] += len(alloc)
            for t, n in held.items():
                by_type[t].append(n)
        # Nothing held, nothing left to arrive, jobs waiting: they can never run.
        stalled = cluster.used_gpus[-1] == 0 and cluster.active[-1] > 0 and cluster.current_time > last_arrival
        idle_rounds = idle_rounds + 1 if stalled else 0
        if idle_rounds >= _STALL_ROUNDS:
            waiting = [j.name for j in jobs if j.completion_time is None][:5]
            raise ValueError(
                f"job(s) {waiting} can never run under {study.policy.name} on this cluster: no GPU was allocated "
                f"for {_STALL_ROUNDS} rounds while they waited"
            )
        if progress is not None:
            progress(cluster.completed, len(jobs), cluster.current_time)
    wall = time.perf_counter() - t0
    return _Run(wall, None if by_type is None else {t: np.array(v, np.int64) for t, v in by_type.items()})


def _result(study, wjobs, jobs, spec, cluster, run) -> SimulationResult:
    """Return the run as data: per-job records, the per-round series, the configuration, isolated JCTs."""
    workload = study.workload
    config = {
        "nodes": study.nodes,
        "gpus": study.gpus,
        "interval": study.interval,
        "interference": study.interference,
        "max_nodes": study.max_nodes,
        "seed": study.seed,
        "preset": study.preset,
        "max_time": study.max_time,
        "workload": "builtin" if workload is None else (_source(study) or f"{len(wjobs)} jobs given"),
        "profiles": "oracle" if _on_oracle(study, wjobs) else _profiles_source(study.traces, study.applications),
    }
    if study.scale is not None:  # only then: the summaries of unscaled runs stay as they were
        config["scale"] = study.scale
    low = _low_confidence(study.traces, study.applications, sorted({w.application for w in wjobs}),
                          None if spec is None else set(spec.types))  # fmt: skip
    if low:  # only then: the summaries of runs on measured traces stay as they were
        config["low_confidence"] = low
    extra = study.policy.run_summary() if hasattr(study.policy, "run_summary") else {}
    if not isinstance(extra, dict) or not all(isinstance(k, str) for k in extra):
        raise TypeError(f"policy {study.policy.name}: run_summary() must return a dict with str keys, got {extra!r}")
    if spec is not None:
        config["cluster"] = str(spec)
        config["gpus_by_type"] = dict(spec.gpus_by_type)
    records = [
        JobRecord(
            name=j.name,
            application=j.application.name,
            submission_time=j.submission_time,
            completion_time=j.completion_time,
            num_restarts=j.num_restarts or 0,
            attained_service=float(j.attained_service),
            epochs=j.epoch,
            gpu_seconds_by_type=dict(getattr(j, "gpu_seconds_by_type", None) or {}) or None,
            modelled_gpu_seconds=float(j.modelled_service),
            category=w.category,
            final_batch_size=_final_batch(j, cluster.last_batch.get(i)),
            final_gpu_type=getattr(j, "gpu_type", None) if spec is not None and j.num_restarts is not None else None,
        )
        for i, (j, w) in enumerate(zip(jobs, wjobs, strict=True))
    ]
    result = SimulationResult(
        jobs=records,
        policy=study.policy.name,
        config=config,
        wall_s=run.wall_s,
        policy_s=cluster.policy_seconds,
        times=np.array(cluster.times, dtype=np.int64),
        used_gpus=np.array(cluster.used_gpus, dtype=np.int64),
        total_gpus=np.array(cluster.total_gpus, dtype=np.int64),
        active_jobs=np.array(cluster.active, dtype=np.int64),
        allocations=cluster.allocation_matrix(),
        policy_times=np.array(cluster.policy_times, dtype=np.float64),
        used_gpus_by_type=run.used_gpus_by_type,
    )
    result.isolated_jct = result_isolated_jcts(jobs, result, spec)  # finish-time fairness's denominator
    if extra:  # only then: the summaries of default runs stay as they were
        clash = sorted(set(extra) & set(result.summary()))
        if clash:
            raise ValueError(f"policy {study.policy.name}: run_summary() keys {clash} are the summary's own")
        result.config.update(extra)
    return result
