"""Run a sweep: one dask task per simulation, results as tables, resumable.

:func:`run_sweep` submits every run of a :class:`~fastsched.sweep.spec.SweepSpec` to a dask
``Client`` (a ``LocalCluster`` sized to the machine by default), streams finished rows to
``runs.jsonl`` in the output folder as they arrive, and at the end writes ``runs.csv``,
``runs.json`` and ``summary.csv``. :func:`run_serial` runs the same tasks in this process
(the reference a distributed sweep must reproduce).
"""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from fastsched.sweep.spec import GRID_KEYS, RunConfig, clean_number, load_spec

__all__ = ["run_sweep", "run_serial", "SweepResult", "METRICS", "default_workers"]

#: Per-run figures read from ``SimulationResult.summary()`` (missing ones are left empty).
#: The scalar figures of :data:`fastsched.sim.metrics.METRIC_KEYS` (heterogeneous-cluster study).
FIELD_METRICS = (
    "p50_jct",
    "gpu_hours_per_job",
    "restarts_per_job",
    "contention_mean",
    "contention_max",
    "ftf_worst",
    "ftf_unfair_fraction",
)
METRICS = (
    "avg_jct",
    "p99_jct",
    "makespan",
    "gpu_utilization",
    "jobs",
    "completed",
    "restarts",
    "rounds",
    *FIELD_METRICS,
)
#: Figures aggregated in ``summary.csv`` (mean and standard deviation over repetitions).
SUMMARY_METRICS = ("avg_jct", "p99_jct", "makespan", "gpu_utilization", "wall_s", *FIELD_METRICS)
#: Environment of worker processes: one thread per worker for numba and BLAS (no oversubscription).
WORKER_ENV = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def default_workers() -> int:
    """Worker processes of the default ``LocalCluster``: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# -- the task ------------------------------------------------------------------------------
def _summary_of(result) -> dict:
    """Headline figures of a simulation result, read defensively."""
    try:
        s = dict(result.summary())
    except Exception:  # noqa: BLE001 - fall back to attributes
        s = {}
    out = {}
    for key in METRICS:
        value = s.get(key)
        if value is None:
            value = getattr(result, key, None)
        if key == "gpu_utilization" and value is None:
            value = s.get("utilization", getattr(result, "utilization", None))
        if key == "jobs" and isinstance(value, (list, tuple)):
            value = len(value)
        if key in ("jobs", "completed", "restarts", "rounds"):
            out[key] = None if value is None else int(value)
        else:
            out[key] = clean_number(value)
    return out


def run_task(kwargs: dict, simulate_fn=None) -> dict:
    """Run one simulation and return its figures; never raises.

    Parameters
    ----------
    kwargs : dict
        Keyword arguments of ``simulate_fn`` (``workload`` included).
    simulate_fn : callable, optional
        Default :func:`fastsched.sim.simulate`.

    Returns
    -------
    dict
        :data:`METRICS`, ``wall_s`` and ``error`` (``None``, or the exception as text).
    """
    t0 = time.perf_counter()
    try:
        if simulate_fn is None:
            from fastsched.sim import simulate as simulate_fn
        result = simulate_fn(**kwargs)
        row = _summary_of(result)
        row["error"] = None
    except Exception as exc:  # noqa: BLE001 - a failing run is a row, not a failed sweep
        row = dict.fromkeys(METRICS)
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
        row["error"] = f"{type(exc).__name__}: {exc}{where}"
    row["wall_s"] = time.perf_counter() - t0
    return row


def warm_up(policies=("pollux", "tiresias", "optimus")) -> float:
    """Compile (or load from numba's cache) the simulator's kernels with a tiny simulation.

    Returns the seconds it took; failures are ignored (the first real task then compiles).
    """
    t0 = time.perf_counter()
    try:
        from fastsched.sim import simulate
        from fastsched.sim.builtin import builtin_workload

        jobs = [j for j in builtin_workload() if j.num_replicas <= 8][:2]
        for policy in policies:
            opts = {"pop_size": 8, "generations": 2} if policy == "pollux" else None
            try:
                simulate(jobs, policy=policy, nodes=2, gpus=4, seed=0, policy_options=opts, max_time=900)
            except Exception:  # noqa: BLE001 - unknown options etc.: retry plainly
                with contextlib.suppress(Exception):
                    simulate(jobs, policy=policy, nodes=2, gpus=4, seed=0, max_time=900)
    except Exception:  # noqa: BLE001 - best effort
        pass
    return time.perf_counter() - t0


def _warm_plugin(policies):
    """A dask ``WorkerPlugin`` that warms each worker's numba kernels once, when it starts."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class SweepWarmUp(WorkerPlugin):
        name = "fastsched-sweep-warmup"

        def __init__(self, policies):
            self.policies = tuple(policies)

        def setup(self, worker):
            worker.fastsched_warmup_s = warm_up(self.policies)

    return SweepWarmUp(policies)


# -- results -------------------------------------------------------------------------------
@dataclass
class SweepResult:
    """Outcome of a sweep.

    Attributes
    ----------
    rows : list of dict
        One per run, in spec order: ``run_id``, the configuration, ``repetition``, ``seed``,
        :data:`METRICS`, ``wall_s``, ``error``.
    summary : list of dict
        One per configuration: the configuration, ``runs``, ``errors``, and ``<metric>_mean`` /
        ``<metric>_std`` for :data:`SUMMARY_METRICS` over the successful runs.
    output_dir : Path or None
    elapsed_s : float
        Wall-clock seconds of the sweep (submission to last row), without cluster start-up.
    skipped : int
        Runs taken from an earlier sweep in ``output_dir``.
    columns : list of str
        Configuration columns (``workload`` and the gridded keys).
    """

    rows: list
    summary: list
    output_dir: Path | None = None
    elapsed_s: float = 0.0
    skipped: int = 0
    columns: list = field(default_factory=list)

    @property
    def errors(self) -> list:
        """Rows whose run failed."""
        return [r for r in self.rows if r.get("error")]

    def table(self) -> str:
        """The summary as an aligned plain-text table."""
        head = [*self.columns, "runs", "err", "avg_jct", "p99_jct", "makespan", "util"]
        lines = []
        for s in self.summary:
            cells = [_cell(s[c]) for c in self.columns] + [str(s["runs"]), str(s["errors"])]
            for m in ("avg_jct", "p99_jct", "makespan"):
                mean, std = s[f"{m}_mean"], s[f"{m}_std"]
                cells.append("-" if mean is None else f"{mean:.0f}" + ("" if std is None else f" ±{std:.0f}"))
            u = s["gpu_utilization_mean"]
            cells.append("-" if u is None else f"{100 * u:.1f}%")
            lines.append(cells)
        widths = [max(len(h), *(len(r[i]) for r in lines)) if lines else len(h) for i, h in enumerate(head)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in lines])


def _cell(v) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return "" if v is None else str(v)


def _make_row(run: RunConfig, columns, out: dict) -> dict:
    row = {"run_id": run.run_id}
    row.update({c: run.config.get(c) for c in columns})
    row["repetition"] = run.repetition
    row["seed"] = run.seed
    row.update({k: out.get(k) for k in METRICS})
    row["wall_s"] = out.get("wall_s")
    row["error"] = out.get("error")
    return row


def _mean_std(values):
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None, None
    mean = sum(vals) / len(vals)
    if len(vals) < 2:
        return mean, None
    var = sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)
    return mean, math.sqrt(var)


def summarize(rows, columns) -> list:
    """Group rows by configuration: run and error counts, mean and sample std of each figure."""
    groups = {}
    for r in rows:
        key = json.dumps([r.get(c) for c in columns], sort_keys=True)
        groups.setdefault(key, []).append(r)
    out = []
    for members in groups.values():
        s = {c: members[0].get(c) for c in columns}
        ok = [r for r in members if not r.get("error")]
        s["runs"] = len(members)
        s["errors"] = len(members) - len(ok)
        for m in SUMMARY_METRICS:
            s[f"{m}_mean"], s[f"{m}_std"] = _mean_std([r.get(m) for r in ok])
        out.append(s)
    return out


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _csv_text(rows, header) -> str:
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([_cell(r.get(h)) for h in header])
    return buf.getvalue()


def write_tables(result: SweepResult, output_dir) -> None:
    """Write ``runs.csv``, ``runs.json`` and ``summary.csv`` of ``result`` into ``output_dir``."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    header = ["run_id", *result.columns, "repetition", "seed", *METRICS, "wall_s", "error"]
    _atomic_write(out / "runs.csv", _csv_text(result.rows, header))
    _atomic_write(out / "runs.json", json.dumps(result.rows, indent=1) + "\n")
    sheader = [*result.columns, "runs", "errors"] + [f"{m}_{s}" for m in SUMMARY_METRICS for s in ("mean", "std")]
    _atomic_write(out / "summary.csv", _csv_text(result.summary, sheader))


def _load_done(out: Path | None) -> dict:
    """Successful rows of earlier sweeps in ``out``, by run id."""
    done = {}
    if out is None:
        return done
    log = out / "runs.jsonl"
    if log.is_file():
        for line in log.read_text().splitlines():
            with contextlib.suppress(ValueError):
                row = json.loads(line)
                if isinstance(row, dict) and row.get("run_id") and not row.get("error"):
                    done[row["run_id"]] = row
    elif (out / "runs.json").is_file():
        with contextlib.suppress(ValueError):
            for row in json.loads((out / "runs.json").read_text()):
                if isinstance(row, dict) and row.get("run_id") and not row.get("error"):
                    done[row["run_id"]] = row
    return done


class ProgressBar:
    """A throttled one-line progress bar of finished runs on a stream (stderr by default)."""

    def __init__(self, total, stream=None, label="sweep"):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.min_interval = 0.1 if self.tty else 2.0
        self.label = label
        self._start = time.perf_counter()
        self._last = -math.inf
        self._shown = False

    def __call__(self, done, errors=0):
        now = time.perf_counter()
        if done < self.total and now - self._last < self.min_interval:
            return
        self._last = now
        width = 30
        fill = int(width * done / self.total) if self.total else width
        bar = "#" * fill + "-" * (width - fill)
        err = f"  {errors} failed" if errors else ""
        line = f"{self.label} [{bar}] {done}/{self.total} runs{err}  wall {now - self._start:6.1f} s"
        self.stream.write(("\r" + line) if self.tty else (line + "\n"))
        self.stream.flush()
        self._shown = True

    def close(self):
        if self._shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


# -- drivers -------------------------------------------------------------------------------
@contextlib.contextmanager
def _client_for(client, workers):
    """Yield a dask Client: the given one, one connected to an address, or a new LocalCluster."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("fastsched sweep needs dask.distributed: pip install 'fastsched[dask]'") from None
    if client is not None and not isinstance(client, str):
        yield client
        return
    if isinstance(client, str):
        with Client(client) as c:
            yield c
        return
    n = default_workers() if workers is None else int(workers)
    if n < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    with (
        LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
            env=dict(WORKER_ENV),
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


class _Sink:
    """Collects rows, appends each to ``runs.jsonl`` and drives the progress bar."""

    def __init__(self, runs, done, columns, out, progress):
        self.columns = columns
        self.rows = {rid: row for rid, row in done.items()}
        self.out = out
        self.log = None
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            self.log = open(out / "runs.jsonl", "a")  # noqa: SIM115 - closed in close()
        self.bar = None
        if progress:
            self.bar = ProgressBar(len(runs), stream=progress if hasattr(progress, "write") else None)
            self.bar(len(self.rows))
        self.errors = 0

    def add(self, run, out):
        row = _make_row(run, self.columns, out)
        self.rows[run.run_id] = row
        self.errors += bool(row["error"])
        if self.log is not None:
            self.log.write(json.dumps(row) + "\n")
            self.log.flush()
        if self.bar is not None:
            self.bar(len(self.rows), self.errors)

    def close(self):
        if self.log is not None:
            self.log.close()
        if self.bar is not None:
            self.bar.close()


def _prepare(spec, output_dir, resume):
    sweep = load_spec(spec)
    runs = sweep.runs()
    columns = ["workload", *[k for k in GRID_KEYS if k in sweep.grid]]
    out = Path(output_dir) if output_dir is not None else sweep.output_dir()
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        _atomic_write(out / "spec.json", json.dumps(sweep.raw, indent=1, sort_keys=True) + "\n")
    ids = {r.run_id for r in runs}
    done = {k: v for k, v in _load_done(out).items() if k in ids} if resume else {}
    if not resume and out is not None and (out / "runs.jsonl").exists():
        (out / "runs.jsonl").unlink()
    return sweep, runs, columns, out, done


def _finish(runs, sink, columns, out, t0, skipped):
    rows = [sink.rows[r.run_id] for r in runs]
    result = SweepResult(rows, summarize(rows, columns), out, time.perf_counter() - t0, skipped, columns)
    if out is not None:
        write_tables(result, out)
    return result


def run_serial(spec, *, output_dir=None, resume=True, progress=False, simulate_fn=None) -> SweepResult:
    """Run a sweep one simulation after another in this process (no dask).

    Same tables, seeds and resume behaviour as :func:`run_sweep`; the reference a
    distributed sweep reproduces.
    """
    sweep, runs, columns, out, done = _prepare(spec, output_dir, resume)
    sink = _Sink(runs, done, columns, out, progress)
    t0 = time.perf_counter()
    try:
        for run in runs:
            if run.run_id not in done:
                sink.add(run, run_task(run.kwargs, simulate_fn))
    finally:
        sink.close()
    return _finish(runs, sink, columns, out, t0, len(done))


def run_sweep(
    spec,
    client=None,
    *,
    output_dir=None,
    workers=None,
    resume=True,
    progress=True,
    warm=True,
    simulate_fn=None,
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
        Where ``runs.jsonl`` (streamed), ``runs.csv``, ``runs.json``, ``summary.csv`` and
        ``spec.json`` go. Default: the spec's ``output``; with neither, nothing is written.
    workers : int, optional
        Worker processes of the default cluster (default: the CPUs available).
    resume : bool
        Skip runs that already succeeded in ``output_dir`` (failed runs are run again).
    progress : bool or file object
        Show a progress bar on stderr (or on the given stream).
    warm : bool
        Compile/load the numba kernels on each worker once, when it joins (a worker plugin).
    simulate_fn : callable, optional
        Replaces :func:`fastsched.sim.simulate` in the tasks (must be importable or picklable
        on the workers); called with the run's keyword arguments.

    Returns
    -------
    SweepResult

    Raises
    ------
    ValueError
        A bad spec (before any submission).
    ImportError
        If dask.distributed is not installed.

    Notes
    -----
    A run that raises becomes a row with its ``error``; a worker that dies is replaced and its
    tasks are run again elsewhere by the scheduler. Seeds depend only on the spec, so the
    table does not depend on the number of workers or on which worker ran what.
    """
    sweep, runs, columns, out, done = _prepare(spec, output_dir, resume)
    todo = [r for r in runs if r.run_id not in done]
    policies = sorted({r.kwargs.get("policy") or "pollux" for r in runs})
    if not todo:  # everything was done by an earlier sweep: no cluster needed
        sink = _Sink(runs, done, columns, out, progress)
        sink.close()
        return _finish(runs, sink, columns, out, time.perf_counter(), len(done))
    with _client_for(client, workers) as c:
        if warm:
            plugin = _warm_plugin(policies)
            register = getattr(c, "register_plugin", None) or c.register_worker_plugin
            register(plugin)
        from distributed import as_completed

        sink = _Sink(runs, done, columns, out, progress)
        t0 = time.perf_counter()
        try:
            futures = {}
            for run in todo:
                fut = c.submit(run_task, run.kwargs, simulate_fn, key=f"fastsched-sweep-{run.run_id}", pure=False)
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
        finally:
            sink.close()
    return _finish(runs, sink, columns, out, t0, len(done))
