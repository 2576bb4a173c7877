"""The benchmark harness: workloads defined once, an implementation axis, one timing protocol.

Three kinds of benchmark read from this module instead of repeating it:

* the **pytest-benchmark** suites (``python -m pytest benchmarks/goodput``) parametrize over
  :data:`IMPLEMENTATIONS` with :func:`impl_params`: fastsched runs in-process; a reference runs
  in a persistent subprocess of its own interpreter (:class:`Worker`), timed inside that process
  (:data:`REMOTE_CLOCK`), so the pipe between the two is not counted;
* the **asv** suites (``benchmarks/asv_goodput.py``, ``benchmarks/asv_sim.py``) time the same
  named workloads (:data:`GOODPUT_WORKLOADS`, :data:`SIM_WORKLOADS`);
* the **side-by-side** scripts (``benchmarks/compare_adaptdl.py``) call :func:`side_by_side`:
  each workload in fresh processes, implementations alternating, medians and per-round ratios.

The implementation axis
-----------------------
``"fastsched"`` is this checkout, in the current interpreter. ``"adaptdl"`` (AdaptDL 0.2.11) and
``"paddle"`` (PaddlePaddle 3.3.1) are reference implementations built into their own virtual
environments under ``../refenv/<name>/`` by ``../shared/ref/<name>/setup_ref.sh``; they are never
imported here, only run as subprocesses (``python harness.py serve ...``). A missing reference
interpreter makes its axis value a skip with a reason (:func:`skip_reason`), never a failure.
``FASTSCHED_REFENV`` points at another folder of reference environments;
``FASTSCHED_REF_<NAME>`` (e.g. ``FASTSCHED_REF_ADAPTDL``) at one interpreter.

This file runs under a reference interpreter too (as the worker), so at module level it imports
only the standard library and numpy; fastsched and pytest are imported where they are used.

Adding an area
--------------
Other suites plug in the same way (the policy's ``benchmarks/compare_policy.py`` and
``benchmarks/policy/``, the cost model's ``benchmarks/compare_paddle.py`` and
``benchmarks/costmodel/``, ``benchmarks/gpu_check.py``):

1. write ``make(name, api)`` returning a zero-argument callable, over an ``api`` namespace that
   both implementations provide (see :func:`goodput_api`), and register it in :data:`AREAS`
   with an ``api`` loader taking the implementation name;
2. in a pytest-benchmark module, ``@pytest.mark.parametrize("impl", impl_params(...))`` and
   ``run_benchmark(benchmark, impl, area, workload)``;
3. in an asv suite, ``setup`` builds ``make(name, api("fastsched"))`` and ``time_*`` calls it;
4. in a side-by-side script, ``side_by_side(area, workloads, impls)``.

Inputs come from ``numpy.random.RandomState`` (a stream that is stable across numpy versions),
so every implementation sees identical problems.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = Path(os.environ.get("FASTSCHED_SHARED", ROOT.parent / "shared"))
REFENV = Path(os.environ.get("FASTSCHED_REFENV", ROOT.parent / "refenv"))

#: The implementation axis, in display order.
IMPLEMENTATIONS = ("fastsched", "adaptdl", "paddle")

#: Environment of worker processes that must not oversubscribe a small machine.
SINGLE_THREAD_ENV = {
    "NUMBA_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}


# -- the implementation axis ---------------------------------------------------------------------
def interpreter(impl: str) -> str | None:
    """Python interpreter of ``impl``, or ``None`` when it is not installed here."""
    if impl == "fastsched":
        return sys.executable
    if impl not in IMPLEMENTATIONS:
        raise ValueError(f"impl must be one of {IMPLEMENTATIONS}, got {impl!r}")
    override = os.environ.get(f"FASTSCHED_REF_{impl.upper()}")
    path = Path(override) if override else REFENV / impl / "bin" / "python"
    return str(path) if path.exists() else None


def skip_reason(impl: str) -> str | None:
    """Why ``impl`` cannot run here (``None`` when it can)."""
    if interpreter(impl) is not None:
        return None
    return (
        f"reference implementation {impl!r} not installed: no interpreter at {REFENV / impl / 'bin' / 'python'} "
        f"(build it with ../shared/ref/{impl}/setup_ref.sh, or set FASTSCHED_REF_{impl.upper()})"
    )


# -- goodput workloads (fastsched and AdaptDL) ---------------------------------------------------
PERF = (0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GRAD = (0.00136, 0.000502)


def goodput_api(impl: str) -> types.SimpleNamespace:
    """Return the AdaptDL goodput API of ``impl`` ("fastsched" or "adaptdl") as one namespace."""
    if impl == "fastsched":
        import fastsched as m
        from fastsched.goodput import ModelBatch

        return types.SimpleNamespace(
            ModelBatch=ModelBatch,
            GoodputFunction=m.GoodputFunction,
            PerfParams=m.PerfParams,
            GradParams=m.GradParams,
            fit_perf_params=m.fit_perf_params,
            SpeedupFunction=m.SpeedupFunction,
        )
    if impl == "adaptdl":
        from adaptdl.goodput import GoodputFunction, GradParams, PerfParams, fit_perf_params
        from adaptdl_sched.policy.speedup import SpeedupFunction

        return types.SimpleNamespace(
            GoodputFunction=GoodputFunction,
            PerfParams=PerfParams,
            GradParams=GradParams,
            fit_perf_params=fit_perf_params,
            SpeedupFunction=SpeedupFunction,
        )
    raise ValueError(f"no goodput API for {impl!r}")


def configs(n: int, max_replicas: int, seed: int):
    """``n`` random (nodes, replicas) placements with ``1 <= nodes <= min(replicas, 8)``."""
    import numpy as np

    rng = np.random.RandomState(seed)
    replicas = rng.randint(1, max_replicas + 1, n)
    nodes = np.minimum(rng.randint(1, 9, n), replicas)
    return nodes, replicas


def fit_observations(n: int = 20, seed: int = 3):
    """``n`` noisy step-time observations of the :data:`PERF` model, as ``fit_perf_params`` takes them."""
    import numpy as np

    rng = np.random.RandomState(seed)
    nodes = rng.randint(1, 5, n)
    replicas = nodes * rng.randint(1, 5, n)
    atomic = rng.randint(32, 512, n)
    t_accum = (PERF[0] + PERF[1] * atomic) * rng.uniform(0.95, 1.05, n)
    t_optim = t_accum * (1 + 0.2 * replicas) * rng.uniform(0.95, 1.05, n)
    return nodes, replicas, atomic, t_accum, t_optim


def make_goodput(name: str, api) -> callable:
    """Zero-argument callable running goodput workload ``name`` on ``api`` (see :data:`GOODPUT_WORKLOADS`)."""
    import numpy as np

    fn = api.GoodputFunction(api.PerfParams(*PERF), api.GradParams(*GRAD), 128)
    bounds = {"max_batch_size": 1280, "atomic_bsz_range": (64, 256), "accumulation": True}
    if name == "optimize_scalar":
        return lambda: fn.optimize(1, 4, **bounds)
    if name == "optimize_scalar_new_model":
        # A new job's first question: no memo of any kind can answer it.
        perf, grad = api.PerfParams(*PERF), api.GradParams(*GRAD)
        return lambda: api.GoodputFunction(perf, grad, 128).optimize(1, 4, **bounds)
    if name.startswith("optimize_"):
        nodes, replicas = configs(_size(name), 64, 1)
        return lambda: fn.optimize(nodes, replicas, **bounds)
    if name == "optimize_distinct_1e4":
        # Every configuration a distinct key: de-duplication cannot help; pure grid-search cost.
        replicas = np.arange(1, 10**4 + 1)
        nodes = np.ones_like(replicas)
        return lambda: fn.optimize(
            nodes, replicas, max_batch_size=10**6, atomic_bsz_range=(64, 4096), accumulation=True
        )
    if name.startswith("evaluate_"):
        rng = np.random.RandomState(2)
        nodes, replicas = configs(_size(name), 64, 2)
        atomic = rng.randint(128, 512, nodes.shape[0])
        accum = rng.randint(0, 4, nodes.shape[0])
        return lambda: fn.evaluate(nodes, replicas, atomic, accum)
    if name == "fit_20":
        obs = fit_observations(20)
        return lambda: api.fit_perf_params(*obs)
    if name in ("tables_200_model_batch", "tables_200_one_by_one"):
        # A scheduler's batch: 200 jobs' speedup tables up to 256 replicas, fresh each round.
        rng = np.random.RandomState(5)
        models = []
        for _ in range(200):
            values = np.array(PERF) * rng.uniform(0.5, 2.0, 7)
            values[6] = rng.uniform(1.0, 3.0)  # gamma stays in [1, 10]
            models.append(api.GoodputFunction(api.PerfParams(*values), api.GradParams(*GRAD), 128))
        if name == "tables_200_one_by_one":
            return lambda: [
                api.SpeedupFunction(g, 1280, (64, 256), True, backend="cpu").table(256) for g in models
            ]
        batch = api.ModelBatch.from_speedup_functions([api.SpeedupFunction(g, 1280, (64, 256), True) for g in models])
        return lambda: batch.speedup_tables(256, backend="cpu")
    if name == "speedup_1000":
        nodes, replicas = configs(1000, 64, 4)
        speedup = api.SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
        speedup(nodes, replicas)  # warm: the figure is for a scheduler's repeated questions
        return lambda: speedup(nodes, replicas)
    raise ValueError(f"unknown goodput workload {name!r}; known: {sorted(GOODPUT_WORKLOADS)}")


def _size(name: str) -> int:
    return int(float(name.rsplit("_", 1)[1]))


#: Goodput workloads: name -> what it measures. Every one runs on fastsched and on AdaptDL.
GOODPUT_WORKLOADS = {
    "optimize_scalar": "optimize(1, 4): one scalar question, asked again (memo hits where the API keeps one)",
    "optimize_scalar_new_model": "a new GoodputFunction and its first optimize(1, 4)",
    "optimize_1e3": "optimize over 1e3 random placements (up to 64 replicas)",
    "optimize_1e5": "optimize over 1e5 random placements (up to 64 replicas)",
    "optimize_distinct_1e4": "optimize over 1e4 distinct replica counts (no de-duplication possible)",
    "evaluate_1e6": "evaluate 1e6 random configurations",
    "fit_20": "fit_perf_params on 20 observations",
    "speedup_1000": "SpeedupFunction on 1000 placements, warm",
    "tables_200_model_batch": "200 jobs' speedup tables to 256 replicas in one ModelBatch call (CPU)",
    "tables_200_one_by_one": "the same 200 tables through 200 fresh SpeedupFunctions (CPU)",
}

#: Goodput workloads that use fastsched-only API (the reference axis skips them).
FASTSCHED_ONLY = {"tables_200_model_batch", "tables_200_one_by_one"}


# -- simulator and sweep workloads (fastsched only: no reference simulator is installed) ----------
POLLUX_TRACES = SHARED / "pollux-traces"

#: A sweep of 32 quick runs: 8 scheduling intervals x 4 seeds of the built-in workload.
SWEEP_SPEC = {"workloads": ["builtin"], "policy": "optimus", "interval": [10, 12, 15, 20, 25, 30, 40, 60], "seeds": 4}


def make_sim(name: str) -> callable:
    """Zero-argument callable running simulator workload ``name`` (see :data:`SIM_WORKLOADS`).

    Raises ``FileNotFoundError`` for a workload that needs ``../shared`` when it is absent.
    """
    from fastsched.sim import simulate

    if name == "builtin_tiresias":
        return lambda: simulate(policy="tiresias")
    if name == "builtin_optimus":
        return lambda: simulate(policy="optimus")
    if name == "builtin_pollux":
        return lambda: simulate(seed=0)
    if name in ("workload6_optimus", "workload6_osdi21"):
        if not (POLLUX_TRACES / "traces").is_dir():
            raise FileNotFoundError(f"{POLLUX_TRACES / 'traces'} absent (set FASTSCHED_SHARED)")
        from fastsched.sim import load_applications

        apps = load_applications(POLLUX_TRACES / "traces")
        path = POLLUX_TRACES / "workloads" / "workload-6.csv"
        if name == "workload6_optimus":
            return lambda: simulate(path, applications=apps, policy="optimus")
        return lambda: simulate(path, applications=apps, preset="osdi21", seed=0)
    if name == "sweep_serial_32":
        from fastsched.sweep import run_serial

        return lambda: run_serial(SWEEP_SPEC)
    raise ValueError(f"unknown simulator workload {name!r}; known: {sorted(SIM_WORKLOADS)}")


#: Simulator workloads: name -> what it measures.
SIM_WORKLOADS = {
    "builtin_tiresias": "fastsched simulate --policy tiresias (built-in workload and profiles)",
    "builtin_optimus": "fastsched simulate --policy optimus",
    "builtin_pollux": "fastsched simulate (the README's command)",
    "workload6_optimus": "workload-6 of the Pollux artifact, its traces, Optimus+Oracle (needs ../shared)",
    "workload6_osdi21": "workload-6, Pollux with the osdi21 preset (needs ../shared)",
    "sweep_serial_32": "the 32-run SWEEP_SPEC, one run after another in this process",
}

#: Areas: name -> (workload registry, maker taking (name, api), api loader taking the impl, impls).
AREAS = {
    "goodput": (GOODPUT_WORKLOADS, make_goodput, goodput_api, ("fastsched", "adaptdl")),
    "sim": (SIM_WORKLOADS, lambda name, api: make_sim(name), lambda impl: None, ("fastsched",)),
}


def make(area: str, name: str, impl: str = "fastsched") -> callable:
    """Zero-argument callable of workload ``name`` of ``area`` on implementation ``impl``."""
    _, maker, api, _ = AREAS[area]
    return maker(name, api(impl))


# -- the timing protocol -------------------------------------------------------------------------
def measure_call(call, seconds: float = 1.0) -> dict:
    """Time ``call`` in this process: first call, then medians of calibrated samples.

    The first call (compilation or cache load for fastsched) is reported apart. Then a batch
    size is calibrated so one sample lasts at least 20 ms, and samples are taken for about
    ``seconds`` (at least 3, at most 50). Returns ``first_call_s``, ``median_s`` and
    ``median_cpu_s`` (per call), ``samples`` and ``reps``.
    """
    t0 = time.perf_counter()
    call()
    first = time.perf_counter() - t0
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        if time.perf_counter() - t0 >= 0.02 or reps >= 1 << 20:
            break
        reps *= 4
    wall, cpu = [], []
    deadline = time.perf_counter() + seconds
    while len(wall) < 3 or (time.perf_counter() < deadline and len(wall) < 50):
        c0 = time.process_time()
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        wall.append((time.perf_counter() - t0) / reps)
        cpu.append((time.process_time() - c0) / reps)
    return {
        "first_call_s": first,
        "median_s": statistics.median(wall),
        "median_cpu_s": statistics.median(cpu),
        "samples": len(wall),
        "reps": reps,
    }


def _worker_env(impl: str) -> tuple[dict, str]:
    env = dict(os.environ)
    if impl == "fastsched":
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        return env, str(ROOT)
    env.pop("PYTHONPATH", None)  # the reference must not see this checkout
    return env, "/"


def measure(impl: str, area: str, name: str, seconds: float = 1.0) -> dict:
    """Run :func:`measure_call` on one workload in a fresh process of ``impl``'s interpreter."""
    python = interpreter(impl)
    if python is None:
        raise RuntimeError(skip_reason(impl))
    env, cwd = _worker_env(impl)
    cmd = [python, str(HERE / "harness.py"), "measure", "--impl", impl, "--area", area, "--workload", name]
    out = subprocess.run(
        [*cmd, "--seconds", str(seconds)], check=True, capture_output=True, text=True, env=env, cwd=cwd
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def side_by_side(area: str, names, impls=("fastsched", "adaptdl"), rounds: int = 3, seconds: float = 1.0, log=None):
    """Measure workloads on several implementations alternately; medians and ratios.

    Each round measures every implementation once, in order, each in a fresh process, so slow
    drifts of a shared machine hit all of them alike. Returns one dict per workload:
    ``{"workload", impl: median seconds per call, ..., "first_call_s": {impl: ...},
    "ratio": median over rounds of (other impl / first impl), "ratio_min", "ratio_max"}``; the
    ratio is reported for the second implementation against the first.
    """
    impls = [i for i in impls if interpreter(i) is not None]
    rows = []
    for name in names:
        runs = {impl: [] for impl in impls}
        for _ in range(rounds):
            for impl in impls:
                runs[impl].append(measure(impl, area, name, seconds))
        row = {"workload": name, "first_call_s": {}}
        for impl in impls:
            row[impl] = statistics.median(r["median_s"] for r in runs[impl])
            row["first_call_s"][impl] = statistics.median(r["first_call_s"] for r in runs[impl])
        if len(impls) > 1:
            ratios = [b["median_s"] / a["median_s"] for a, b in zip(runs[impls[0]], runs[impls[1]], strict=True)]
            row.update(ratio=statistics.median(ratios), ratio_min=min(ratios), ratio_max=max(ratios))
        rows.append(row)
        if log is not None:
            print(f"  done {name}", file=log)
    return rows


# -- persistent workers and the pytest-benchmark axis --------------------------------------------
class RemoteClock:
    """A clock that advances only by the time measured inside reference worker processes.

    Used as pytest-benchmark's ``timer`` for reference implementations, so the figures are the
    reference's own call times, without the pipe to its process. Each reading adds 1 ns so that
    pytest-benchmark's precision probe (which waits for the clock to move) terminates; that is
    two orders of magnitude below the resolution of any figure it reports.
    """

    def __init__(self):
        self.elapsed = 0.0
        self._reads = 0

    def __call__(self) -> float:
        self._reads += 1
        return self.elapsed + self._reads * 1e-9


#: The timer of every reference axis value in the pytest-benchmark suites.
REMOTE_CLOCK = RemoteClock()


class Worker:
    """A persistent subprocess of ``impl``'s interpreter that runs one workload on request.

    ``worker()`` runs the workload once there and returns the seconds it took inside the worker
    (also added to :data:`REMOTE_CLOCK`). Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, impl: str, area: str, name: str, clock: RemoteClock = REMOTE_CLOCK):
        python = interpreter(impl)
        if python is None:
            raise RuntimeError(skip_reason(impl))
        env, cwd = _worker_env(impl)
        cmd = [python, str(HERE / "harness.py"), "serve", "--impl", impl, "--area", area, "--workload", name]
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=cwd, bufsize=1
        )
        self._clock = clock
        ready = self._proc.stdout.readline()
        if not ready.startswith("ready"):
            self.close()
            raise RuntimeError(f"{impl} worker for {area}/{name} did not start (said {ready!r})")
        self.first_call_s = float(ready.split()[1])

    def __call__(self) -> float:
        self._proc.stdin.write("call\n")
        seconds = float(self._proc.stdout.readline())
        self._clock.elapsed += seconds
        return seconds

    def close(self) -> None:
        """Stop the worker process."""
        if self._proc.poll() is None:
            try:
                self._proc.stdin.write("quit\n")
                self._proc.stdin.close()
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def impl_params(area: str):
    """``pytest.param`` values of the implementation axis of ``area``.

    A reference that is not installed is a skip with its reason; a reference that is gets
    :data:`REMOTE_CLOCK` as its pytest-benchmark timer.
    """
    import pytest

    params = []
    for impl in AREAS[area][3]:
        marks = [] if impl == "fastsched" else [pytest.mark.benchmark(timer=REMOTE_CLOCK)]
        reason = skip_reason(impl)
        if reason:
            marks.append(pytest.mark.skip(reason=reason))
        params.append(pytest.param(impl, id=impl, marks=marks))
    return params


_WORKERS: dict = {}


def run_benchmark(benchmark, impl: str, area: str, name: str):
    """Time workload ``name`` of ``area`` on ``impl`` with pytest-benchmark's ``benchmark`` fixture.

    fastsched runs in this process; a reference in a persistent :class:`Worker` (one per
    workload, kept for the session and stopped at exit).
    """
    benchmark.group = f"{area}:{name}"
    benchmark.extra_info["impl"] = impl
    if impl != "fastsched" and name in FASTSCHED_ONLY:
        import pytest

        pytest.skip(f"{name} uses fastsched-only API")
    if impl == "fastsched":
        call = make(area, name, impl)
        call()  # compile or load outside the timing
        return benchmark(call)
    key = (impl, area, name)
    if key not in _WORKERS:
        _WORKERS[key] = Worker(impl, area, name)
    return benchmark(_WORKERS[key])


def _close_workers():
    for worker in _WORKERS.values():
        worker.close()
    _WORKERS.clear()


import atexit  # noqa: E402  (registered once, after the registry it cleans up)

atexit.register(_close_workers)


# -- command line: the worker side ---------------------------------------------------------------
def _main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="benchmark worker (run by the harness, not by hand)")
    ap.add_argument("mode", choices=["measure", "serve"])
    ap.add_argument("--impl", required=True, choices=IMPLEMENTATIONS)
    ap.add_argument("--area", required=True, choices=sorted(AREAS))
    ap.add_argument("--workload", required=True)
    ap.add_argument("--seconds", type=float, default=1.0)
    args = ap.parse_args(argv)
    if args.impl == "fastsched" and str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    call = make(args.area, args.workload, args.impl)
    if args.mode == "measure":
        print(json.dumps(measure_call(call, args.seconds)), flush=True)
        return 0
    t0 = time.perf_counter()
    call()
    print(f"ready {time.perf_counter() - t0!r}", flush=True)
    for line in sys.stdin:
        if line.strip() != "call":
            break
        t0 = time.perf_counter()
        call()
        print(repr(time.perf_counter() - t0), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
