"""Checks made before the first simulated round, so that bad input fails before the work.

:func:`simulate <fastsched.sim.simulate>` calls :func:`check_run` once its arguments are
resolved: output paths (writable, not a folder, not one of the inputs), the traces folder's
layout, and every workload row against the application it names and the policy that will
run it (a batch size the traces never measured would otherwise fail hundreds of rounds in,
or run silently at a clipped size). The command line adds :func:`check_output_path` with
``force`` and :func:`check_plot_path`. Every error is a ``ValueError`` (``FileNotFoundError``
for a missing input) whose message names the path, or the job and its application.
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

from fastsched._atomic import check_output

__all__ = [
    "check_output_path",
    "check_plot_path",
    "check_traces_dir",
    "check_cluster",
    "check_jobs",
    "check_run",
    "PLOT_FORMATS",
    "MAX_GPUS",
]

#: Most GPUs a simulated cluster may have: the allocation timeline stores GPU counts as int16,
#: and the policies walk every node each round.
MAX_GPUS = 2**15 - 1

#: File suffixes ``--plot`` accepts (formats every matplotlib backend install writes).
PLOT_FORMATS = ("png", "pdf", "svg", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


def check_output_path(path, *, inputs=(), force=True, what="output") -> Path:
    """Check that a file can be written at ``path`` without destroying anything.

    The policy of every command, :func:`fastsched._atomic.check_output`: never onto an input
    (a file, or inside an input folder), an existing file only with ``force``, regular files
    only (a symbolic link is written through to its target), in a writable folder.

    Parameters
    ----------
    path : str or path
        Where the file will be written (through a temporary file renamed into place).
    inputs : iterable of str or path
        Files and folders read by the same run; writing over (or inside) one of them is refused.
    force : bool
        Allow replacing an existing file.
    what : str
        How the path is called in messages (e.g. ``"--output"``).

    Returns
    -------
    Path
        The file that will be written.

    Raises
    ------
    ValueError
        ``path`` is a folder or another non-regular file, is (or is inside) one of ``inputs``,
        exists (without ``force``), or its folder does not exist or is not writable.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> check_output_path(folder / "log.jsonl").name
    'log.jsonl'
    >>> check_output_path(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: output ... is a folder; give a file name
    """
    return check_output(path, inputs=inputs, force=force, what=what)


def check_plot_path(path, *, inputs=(), force=True) -> Path:
    """Check a figure path: a writable file whose suffix names a known image format.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> check_plot_path(folder / "run.svg").suffix
    '.svg'
    >>> check_plot_path(folder / "run")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --plot ...run has no format suffix; end it with one of .png, .pdf, ...
    """
    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"--plot {p} is a folder; give a file name such as {p / 'simulation.png'}")
    fmt = p.suffix.lower().lstrip(".")
    known = ", ".join("." + f for f in PLOT_FORMATS)
    if not fmt:
        raise ValueError(f"--plot {p} has no format suffix; end it with one of {known}")
    if fmt not in PLOT_FORMATS:
        raise ValueError(f"--plot {p}: unknown image format {p.suffix!r}; use one of {known}")
    return check_output_path(p, inputs=inputs, force=force, what="--plot")


def check_traces_dir(traces, *, per_type="error") -> Path:
    """Check a traces folder: it exists and follows this simulator's layout.

    The simulator reads one ``placements.csv`` and one ``scalability.csv`` per application.
    A folder from a heterogeneous-cluster study also holds per-GPU-type files
    (``placements-<type>.csv``); reading its unsuffixed files simulates one GPU type, so such a
    folder is refused with the list of types found (``per_type="error"``, the command line
    without ``--cluster``), or read with a ``UserWarning`` saying so (``per_type="warn"``,
    the Python API).

    Raises
    ------
    FileNotFoundError
        If the folder does not exist.
    ValueError
        If it is a file, or follows the per-GPU-type layout.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> (folder / "bert").mkdir()
    >>> for f in ("placements.csv", "placements-aws.csv", "placements-rtx.csv"):
    ...     _ = (folder / "bert" / f).write_text("")
    >>> check_traces_dir(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: traces ...: per-GPU-type trace files (GPU types aws, rtx) ...
    """
    p = Path(traces).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"traces folder not found: {p}")
    if not p.is_dir():
        raise ValueError(f"traces {p} is a file; give the folder holding one folder per application")
    types = set()
    for sub in sorted(p.iterdir()):
        if sub.is_dir():
            for f in sub.glob("placements-*.csv"):
                types.add(f.stem.split("-", 1)[1])
    if types and per_type == "warn":
        warnings.warn(
            f"traces {p} holds per-GPU-type trace files (GPU types {', '.join(sorted(types))}); on a cluster "
            "without GPU types only the unsuffixed placements.csv / scalability.csv are read (pass cluster= "
            "to simulate the types)",
            UserWarning,
            stacklevel=3,
        )
    elif types:
        raise ValueError(
            f"traces {p}: per-GPU-type trace files (GPU types {', '.join(sorted(types))}) from a "
            "heterogeneous-cluster study; without --cluster only the unsuffixed placements.csv would be read. "
            "Give --cluster (e.g. 4xrtx) to simulate GPU types, or a folder with one placements.csv and "
            "scalability.csv per application."
        )
    return p


def check_cluster(nodes, gpus, max_nodes, interval, max_time) -> None:
    """Check the cluster's size and the round length against the simulation's limits.

    Raises
    ------
    ValueError
        More than :data:`MAX_GPUS` GPUs (at the autoscaling bound too), or a scheduling
        interval longer than ``max_time`` (no job could ever run).

    Examples
    --------
    >>> check_cluster(16, 4, None, 60, 86400)
    >>> check_cluster(10**9, 4, None, 60, 86400)
    Traceback (most recent call last):
    ...
    ValueError: nodes x gpus = 4000000000 GPUs is more than the simulator's limit of 32767
    """
    biggest = max(nodes, max_nodes or 0)
    if biggest * gpus > MAX_GPUS:
        what = "max_nodes" if max_nodes and max_nodes > nodes else "nodes"
        raise ValueError(f"{what} x gpus = {biggest * gpus} GPUs is more than the simulator's limit of {MAX_GPUS}")
    if interval > max_time:
        raise ValueError(
            f"interval ({interval} s) is longer than max_time ({max_time} s): no job would get time to run"
        )


def _atomic_batch(app, batch_size, replicas):
    """Per-GPU batch and accumulation steps of a fixed batch on ``replicas`` GPUs.

    The same arithmetic as :meth:`fastsched.sim.engine.job.Job.update_local_bsz` for a fixed batch.
    """
    local = math.ceil(batch_size / replicas - 1e-8)
    accum = math.ceil(local / app.max_local_bsz - 1e-8) - 1
    if replicas == 1 and batch_size > app.init_batch_size:
        accum = max(1, accum)
    atomic = math.ceil(local / (accum + 1) - 1e-8)
    return min(atomic, int(app.max_batch_size / (replicas * (accum + 1)))), accum


def _run_batch(job, app, policy_name, policy):
    """Return the batch size ``job`` runs at under the policy, or ``None`` where the policy chooses it."""
    if policy is not None:
        # The policy's own job arguments: one rule for what it runs at, plugins included.
        return policy.job_kwargs(job, app).get("target_batch_size")
    return job.batch_size if policy_name in ("tiresias", "optimus") else None


def _job_problem(job, app, policy_name, total_gpus, per_gpu=True, batch=None):
    """Why ``job`` cannot run under ``policy_name`` at ``batch`` (see :func:`_run_batch`), or ``None``."""
    if batch is None:
        return None  # Pollux chooses GPUs and batch sizes itself; the row's sizes are unused
    lo, hi = app.init_batch_size, app.max_batch_size
    b = batch
    if not lo <= b <= hi:
        side = "below" if b < lo else "above"
        how = "its workload batch size" if b == job.batch_size else f"batch size {b}"
        return (
            f"batch_size {b} is {side} {app.name}'s measured range [{lo}, {hi}] ({policy_name} runs this job at {how})"
        )
    if policy_name == "tiresias" and per_gpu:
        r = job.num_replicas
        if r > total_gpus:
            return f"num_replicas {r} is more GPUs than the cluster has ({total_gpus})"
        if app.max_replicas is not None and r > app.max_replicas:
            return f"num_replicas {r} is above {app.name}'s limit of {app.max_replicas} GPU(s)"
        atomic, _ = _atomic_batch(app, b, r)
        if not app.min_local_bsz <= atomic <= app.max_local_bsz:
            return (
                f"batch_size {b} on num_replicas {r} GPUs is {atomic} per GPU, outside {app.name}'s measured "
                f"per-GPU range [{app.min_local_bsz}, {app.max_local_bsz}]"
            )
    return None


def check_jobs(jobs, applications, policy_name, total_gpus, *, source=None, per_gpu=True, policy=None) -> None:
    """Check every workload row against its application and the policy that will run it.

    Parameters
    ----------
    jobs : list of WorkloadJob
    applications : dict of str -> Application
    policy_name : str
        The policy, for messages and its GPU-count rule: Tiresias runs each job on its row's
        GPU count.
    policy : SimPolicy, optional
        The policy that will run the jobs: the batch size each job runs at is the one its
        :meth:`~fastsched.sim.policies.base.SimPolicy.job_kwargs` gives
        (``target_batch_size``; ``None`` for a policy that chooses it, as Pollux and Sia's
        adaptive jobs), and it must lie in the application's measured range. Without it,
        ``"tiresias"`` and ``"optimus"`` run each job at its row's batch size and every other
        name chooses its own.
    total_gpus : int
        GPUs in the (initial) cluster.
    source : str, optional
        The workload file, for messages.
    per_gpu : bool
        Also check GPU counts and per-GPU batch sizes (one GPU type). A typed cluster passes
        ``False``: its per-GPU ranges differ by type and the throughput model answers beyond
        the measured ones, so only the batch size's validated range is checked before the run.

    Raises
    ------
    ValueError
        Naming the first bad job (and how many there are), or unknown applications.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> apps = builtin_applications()
    >>> check_jobs([WorkloadJob("a", 0, "cifar10", 2, 256)], apps, "tiresias", 64)
    >>> check_jobs([WorkloadJob("a", 0, "cifar10", 2, 1)], apps, "tiresias", 64)
    Traceback (most recent call last):
    ...
    ValueError: job 'a' (cifar10): batch_size 1 is below cifar10's measured range [128, 4096] (tiresias runs this job at its workload batch size)
    """
    where = f"{source}: " if source else ""
    unknown = sorted({j.application for j in jobs if j.application not in applications})
    if unknown:
        raise ValueError(f"{where}workload uses unknown application(s) {unknown}; available: {sorted(applications)}")
    bad = []
    for j in jobs:
        app = applications[j.application]
        problem = _job_problem(j, app, policy_name, total_gpus, per_gpu, _run_batch(j, app, policy_name, policy))
        if problem is not None:
            bad.append((j, problem))
    if bad:
        j, problem = bad[0]
        more = f" (and {len(bad) - 1} more job(s))" if len(bad) > 1 else ""
        raise ValueError(f"{where}job {j.name!r} ({j.application}): {problem}{more}")


def check_run(*, workload=None, traces=None, output=None, inputs=()) -> None:
    r"""Run the path checks of one :func:`~fastsched.sim.simulate` call, before anything is read.

    ``output`` may be a path or an open file (not checked); an existing output file is
    replaced (the command line refuses it without ``--force`` first), but never one of the
    run's inputs: the workload, ``traces`` and the files or folders in ``inputs`` (e.g. a
    cluster file). A traces folder with per-GPU-type files gives a ``UserWarning`` (see
    :func:`check_traces_dir`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> w = pathlib.Path(tempfile.mkdtemp()) / "w.csv"
    >>> _ = w.write_text("name,time,application,num_replicas,batch_size\n")
    >>> check_run(workload=w, output=w)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: output ...w.csv is also an input of this run (...w.csv); writing it would destroy the input
    """
    if isinstance(workload, (str, os.PathLike)):
        wp = Path(workload).expanduser()
        if wp.is_dir():
            raise ValueError(f"workload {wp} is a folder, not a workload CSV")
        if not wp.is_file():
            raise FileNotFoundError(f"workload file not found: {wp}")
    if traces is not None:
        check_traces_dir(traces, per_type="warn")
    if isinstance(output, (str, os.PathLike)):
        files = [workload, traces, *inputs]
        files = [f for f in files if isinstance(f, (str, os.PathLike)) and Path(f).expanduser().exists()]
        check_output_path(output, inputs=files, force=True)
