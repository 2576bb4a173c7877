"""Run a sweep: one dask task per simulation (:func:`run_sweep`) or all in this process (:func:`run_serial`).

Both validate the spec and the output folder before any run, stream finished rows to
``runs.jsonl`` as they arrive (see :mod:`fastsched.sweep.store`), and at the end write
``runs.csv``, ``runs.json`` and ``summary.csv``. :func:`run_serial` is the reference a
distributed sweep must reproduce. Ctrl-C stops a sweep with every finished run kept in
``runs.jsonl``; the next call with the same output folder resumes from there.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from fastsched._progress import progress_bar
from fastsched.sim.presets import preset_policy
from fastsched.sweep import store
from fastsched.sweep.client import MAX_WORKERS, check_timeout, client_for
from fastsched.sweep.spec import GRID_KEYS, load_spec
from fastsched.sweep.table import SweepResult, make_row, summarize
from fastsched.sweep.task import METRICS, run_task
from fastsched.sweep.warm import warm_plugin

__all__ = ["run_sweep", "run_serial", "SweepInterrupted"]


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep: the finished runs are kept in the output folder.

    Attributes
    ----------
    done, total : int
        Runs finished (including resumed ones) and runs in the sweep.
    output_dir : Path or None
        Where they are kept (``None``: nothing was written).

    Examples
    --------
    >>> str(SweepInterrupted(3, 8, None))
    '3 of 8 runs finished; no output folder, nothing kept'
    """

    def __init__(self, done, total, output_dir):
        self.done, self.total, self.output_dir = done, total, output_dir
        where = f"kept in {output_dir / store.LOG_NAME}" if output_dir is not None else "no output folder, nothing kept"
        super().__init__(f"{done} of {total} runs finished; {where}")


class _Sink:
    """Collects rows, appends each to ``runs.jsonl`` and drives the progress bar."""

    def __init__(self, runs, done, columns, out, progress):
        self.columns = columns
        self.rows = dict(done)
        self.total = len(runs)
        self.out = out
        self.log = store.RowLog(out)
        stream = progress if hasattr(progress, "write") else None
        self.bar = progress_bar(
            len(runs), desc="sweep", unit="run", quiet=not progress, initial=len(self.rows), file=stream
        )
        self.errors = 0

    def add(self, run, out):
        row = make_row(run, self.columns, out)
        self.rows[run.run_id] = row
        self.log.add(row)
        if row["error"]:
            self.errors += 1
            self.bar.set_postfix_str(f"{self.errors} failed", refresh=False)
        self.bar.update(1)

    def close(self):
        self.log.close()
        self.bar.close()


def _policy_of(kwargs) -> str:
    """Return the policy a run's ``simulate`` keyword arguments select (its own, or its preset's)."""
    return preset_policy(kwargs.get("preset") or "default", kwargs.get("policy") or None)


def _check_spec_output(sweep, out: Path) -> None:
    """Refuse (without ``force``) a spec's ``output`` that leads outside the spec's folder.

    A spec is often shared or downloaded; ``"output": "../../x/a/b"`` would create folders
    elsewhere without the user having asked for them on the command line.
    """
    spec_out = sweep.output_dir()
    if spec_out is None or os.path.realpath(out) != os.path.realpath(spec_out):
        return  # the folder was given on the command line
    base, real = os.path.realpath(sweep.base_dir), os.path.realpath(spec_out)
    if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
        raise ValueError(
            f"the spec's output {sweep.output!r} leads outside the spec's folder {base} (to {spec_out}); "
            "give --output, or --force to write there"
        )


def _prepare(spec, output_dir, resume, force):
    """Validate everything (spec, output folder) without writing anything."""
    sweep = load_spec(spec)
    runs = sweep.runs()
    columns = ["workload", *[k for k in GRID_KEYS if k in sweep.grid]]
    out = Path(output_dir) if output_dir is not None else sweep.output_dir()
    if out is not None and not force:
        _check_spec_output(sweep, out)
    if out is not None:
        out = store.check_output(out, resume=resume, force=force, inputs=sweep.inputs())
    ids = {r.run_id for r in runs}
    done = {k: v for k, v in store.load_done(out).items() if k in ids} if resume and out is not None else {}
    return sweep, runs, columns, out, done


def _open_output(sweep, out, resume, runs, call):
    """Create the output folder and record the spec and its provenance: once the runs can start."""
    if out is not None:
        store.create_output(out, resume=resume)
        store.atomic_write(out / "spec.json", json.dumps(sweep.raw, indent=1, sort_keys=True) + "\n")
        where = str(sweep.source or "<dict>")
        record = store.provenance(sweep, runs, call=f"{call}(spec={where!r}, output_dir={str(out)!r})")
        store.atomic_write(out / store.PROVENANCE_NAME, json.dumps(record, indent=1) + "\n")


def _finish(runs, sink, columns, out, t0, skipped):
    rows = [sink.rows[r.run_id] for r in runs]
    result = SweepResult(rows, summarize(rows, columns), out, time.perf_counter() - t0, skipped, columns)
    if out is not None:
        store.write_tables(result, out)
    return result


def run_serial(spec, *, output_dir=None, resume=True, force=False, progress=False, simulate_fn=None) -> SweepResult:
    """Run a sweep one simulation after another in this process (no dask).

    Same tables, seeds, resume and interruption behaviour as :func:`run_sweep`; the
    reference a distributed sweep reproduces.

    Examples
    --------
    >>> spec = {"workloads": "builtin", "policy": ["tiresias", "optimus"], "max_time": 3600}
    >>> result = run_serial(spec)
    >>> [(r["policy"], r["jobs"]) for r in result.rows]
    [('tiresias', 48), ('optimus', 48)]
    """
    sweep, runs, columns, out, done = _prepare(spec, output_dir, resume, force)
    sink = None
    t0 = time.perf_counter()
    try:  # from the first write on, Ctrl-C says what was kept and how to resume
        _open_output(sweep, out, resume, runs, "run_serial")
        sink = _Sink(runs, done, columns, out, progress)
        for run in runs:
            if run.run_id not in done:
                sink.add(run, run_task(run.kwargs, simulate_fn))
    except KeyboardInterrupt:
        raise SweepInterrupted(len(sink.rows) if sink else len(done), len(runs), out) from None
    finally:
        if sink is not None:
            sink.close()
    return _finish(runs, sink, columns, out, t0, len(done))


def run_sweep(
    spec,
    client=None,
    *,
    output_dir=None,
    workers=None,
    resume=True,
    force=False,
    progress=True,
    warm=True,
    simulate_fn=None,
    connect_timeout=10.0,
) -> SweepResult:
    """Run every simulation of a sweep on dask.distributed, one task per run.

    Parameters
    ----------
    spec : dict, str, path or SweepSpec
        The sweep (see :mod:`fastsched.sweep.spec`); validated before anything is submitted.
    client : distributed.Client or str, optional
        A connected client, or a scheduler address (``tcp://host:port``). Default: a
        ``LocalCluster`` of ``workers`` single-threaded worker processes.
    output_dir : str or path, optional
        Where ``runs.jsonl`` (streamed), ``runs.csv``, ``runs.json``, ``summary.csv``,
        ``spec.json`` and ``provenance.json`` (fastsched's version, the command or call, the seeds,
        the SHA-256 of every input: see :mod:`fastsched._provenance`) go. Default: the spec's ``output``; with neither, nothing is written.
        It must not be a file, nor a folder of other files (unless ``force``).
    workers : int, optional
        Worker processes of the default cluster (default: the CPUs available).
    resume : bool
        Skip runs that already succeeded in ``output_dir`` (failed runs are run again).
    force : bool
        Write into a folder that is not a sweep's, or (with ``resume=False``) discard the
        results logged there.
    progress : bool or file object
        Show a progress bar on stderr when it is a terminal (or on the given stream).
    warm : bool
        Compile/load the numba kernels on each worker once, when it joins (a worker plugin).
    simulate_fn : callable, optional
        Replaces :func:`fastsched.sim.simulate` in the tasks (must be importable or picklable
        on the workers); called with the run's keyword arguments.
    connect_timeout : float
        Seconds to wait for a scheduler given by address.

    Returns
    -------
    SweepResult

    Raises
    ------
    ValueError
        A bad spec or output folder, or an unreachable scheduler (before any submission).
    ImportError
        If dask.distributed is not installed.
    SweepInterrupted
        On Ctrl-C, after closing the cluster; finished runs are kept in ``runs.jsonl``.

    Notes
    -----
    A run that raises becomes a row with its ``error``; a worker that dies is replaced and its
    tasks are run again elsewhere by the scheduler. Seeds depend only on the spec, so the
    table does not depend on the number of workers or on which worker ran what.

    Examples
    --------
    >>> spec = {"workloads": "builtin", "policy": ["tiresias", "optimus"], "seeds": 2}
    >>> result = run_sweep(spec, workers=2, output_dir="out")  # doctest: +SKIP
    >>> [s["avg_jct_s_mean"] for s in result.summary]  # doctest: +SKIP
    """
    check_timeout(connect_timeout)
    if workers is not None and not 1 <= workers <= MAX_WORKERS:  # before any work, not when the cluster starts
        raise ValueError(f"--workers must be in [1, {MAX_WORKERS}], got {workers}")
    sweep, runs, columns, out, done = _prepare(spec, output_dir, resume, force)
    todo = [r for r in runs if r.run_id not in done]
    if not todo:  # everything was done by an earlier sweep: no cluster needed
        _open_output(sweep, out, resume, runs, "run_sweep")
        sink = _Sink(runs, done, columns, out, progress)
        sink.close()
        return _finish(runs, sink, columns, out, time.perf_counter(), len(done))
    from distributed import as_completed  # optional dependency, checked by client_for

    sink = None
    t0 = time.perf_counter()
    try:  # Ctrl-C from the cluster's start on says what was kept and how to resume
        with client_for(client, workers, timeout=connect_timeout) as c:
            _open_output(
                sweep, out, resume, runs, "run_sweep"
            )  # connected: nothing is written for a scheduler out of reach
            futures = {}
            try:
                if warm:
                    register = getattr(c, "register_plugin", None) or c.register_worker_plugin
                    register(warm_plugin(sorted({_policy_of(r.kwargs) for r in todo})))
                sink = _Sink(runs, done, columns, out, progress)
                t0 = time.perf_counter()
                for run in todo:
                    key = f"fastsched-sweep-{run.run_id}"
                    fut = c.submit(run_task, run.kwargs, simulate_fn, key=key, pure=False)
                    futures[fut.key] = (fut, run)
                for fut in as_completed([f for f, _ in futures.values()]):
                    run = futures[fut.key][1]
                    try:
                        row = fut.result()
                    except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker after repeated deaths
                        row = dict.fromkeys(METRICS)
                        row.update(wall_s=None, error=f"{type(exc).__name__}: {exc}")
                    sink.add(run, row)
                    fut.release()
            except KeyboardInterrupt:
                for fut, _ in futures.values():  # before the cluster closes
                    fut.cancel()
                raise
    except KeyboardInterrupt:
        raise SweepInterrupted(len(sink.rows) if sink else len(done), len(runs), out) from None
    finally:
        if sink is not None:
            sink.close()
    return _finish(runs, sink, columns, out, t0, len(done))


def _simulate_serial(**kwargs):
    """:func:`fastsched.sim.simulate`, with Ctrl-C inside a kernel raised as the interrupt it is.

    The sweep records any ``Exception`` of a run as a failed run; an interrupt that landed in a
    compiled kernel arrives as a ``SystemError`` caused by ``KeyboardInterrupt``, and must stop
    the sweep (resumable) instead.
    """
    from fastsched._interrupt import check as check_interrupt
    from fastsched._interrupt import reraise_interrupt
    from fastsched.sim import simulate

    try:
        result = simulate(**kwargs)
    except Exception as exc:
        reraise_interrupt(exc)
        raise
    check_interrupt()  # a Ctrl-C whose raise a finalizer swallowed: stop before the next run
    return result
