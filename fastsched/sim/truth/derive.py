"""Regenerate the builtin profiles and synthetic workload from a trace folder.

Usage::

    python -m fastsched.sim.truth.derive TRACES_DIR [--workloads DIR] [--out fastsched/sim/data]

Every number written is a summary computed here (fitted model parameters, curve knots,
epoch counts, a seeded random workload), not a copy of the traces.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

import numpy as np

from fastsched._validate import check_int_scalar
from fastsched.goodput import fit_perf_params
from fastsched.sim.inputs.workload import WorkloadJob, read_workload, write_workload
from fastsched.sim.truth._rules import id_placement
from fastsched.sim.truth.builtin import _PROFILES, BUILTIN_WORKLOAD_NAME, ModelApplication
from fastsched.sim.truth.traces import TraceApplication, load_applications

__all__ = ["derive_profile", "derive_profiles", "synthetic_workload", "main"]

NOISE_KNOTS = 6

#: Application mix of the synthetic workload (shares of jobs) and its size.
WORKLOAD_MIX = {"cifar10": 0.40, "ncf": 0.30, "bert": 0.10, "deepspeech2": 0.12, "yolov3": 0.08}


def _placement_rows(app: TraceApplication):
    nodes, reps, bsz, step, sync = [], [], [], [], []
    for pid, (x, st, sy) in app._by_placement.items():
        placement = id_placement(pid)
        for a, s, y in zip(x, st, sy, strict=True):
            nodes.append(len(placement))
            reps.append(sum(placement))
            bsz.append(a)
            step.append(s)
            sync.append(y)
    pts, vals = app._nd_points, app._nd_values
    nodes += list(pts[:, 0])
    reps += list(pts[:, 1])
    bsz += list(pts[:, 2])
    step += list(vals[:, 0])
    sync += list(vals[:, 1])
    arr = [np.asarray(v, dtype=np.float64) for v in (nodes, reps, bsz, step, sync)]
    keep = (arr[3] - arr[4] > 0) & (arr[3] > 0)
    return [a[keep] for a in arr]


def _noise_knots(app: TraceApplication, k: int = NOISE_KNOTS) -> list[float]:
    k = max(2, min(k, app.max_epochs))
    e = np.arange(app.max_epochs, dtype=np.float64)
    phi = []
    for epoch in range(app.max_epochs):
        sqr, var = app.grad_stats(app.init_batch_size, epoch)
        phi.append(var / sqr if sqr > 0 else 1e6)
    y = np.log10(np.clip(np.asarray(phi), 1e-3, 1e6))
    x = e / max(app.max_epochs - 1, 1) * (k - 1)
    # Least-squares linear spline on k evenly spaced knots (hat basis), lightly smoothed.
    basis = np.maximum(0.0, 1.0 - np.abs(x[:, None] - np.arange(k)[None, :]))
    ridge = 1e-3 * np.eye(k)
    coef = np.linalg.solve(basis.T @ basis + ridge, basis.T @ y)
    return [round(float(c), 4) for c in coef]


def derive_profile(app: TraceApplication) -> ModelApplication:
    r"""Summarise one trace application as a :class:`ModelApplication`.

    Examples
    --------
    >>> import tempfile
    >>> from fastsched.sim.truth.traces import write_example_application
    >>> app = write_example_application(tempfile.mkdtemp())
    >>> from fastsched.sim.truth.traces import load_application
    >>> profile = derive_profile(load_application(app))
    >>> type(profile).__name__, profile.name, profile.init_batch_size, profile.max_batch_size, profile.max_epochs
    ('ModelApplication', 'toy', 4, 8, 3)
    >>> sorted(derive_profiles(app.parent))  # every application folder next to it
    ['toy']
    """
    nodes, reps, bsz, step, sync = _placement_rows(app)
    perf = fit_perf_params(nodes, reps, bsz, step - sync, step)
    perf = [float(f"{v:.6g}") for v in perf]
    return ModelApplication(
        name=app.name,
        perf_params=perf,
        noise_knots=_noise_knots(app),
        progress_per_epoch=round(app.progress(app.max_epochs) / app.max_epochs, 2),
        init_batch_size=app.init_batch_size,
        max_batch_size=app.max_batch_size,
        min_local_bsz=app.min_local_bsz,
        max_local_bsz=app.max_local_bsz,
        max_epochs=app.max_epochs,
        fixed_batch_size=app.fixed_batch_size,
        max_replicas=app.max_replicas,
    )


def derive_profiles(traces_dir) -> dict[str, ModelApplication]:
    """Summaries of every application under ``traces_dir``.

    Examples
    --------
    See :func:`derive_profile` for a toy traces folder; one without applications is refused:

    >>> import tempfile
    >>> derive_profiles(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: ...: no application folders (with placements.csv) found
    """
    return {name: derive_profile(app) for name, app in load_applications(traces_dir).items()}


def _requests(workloads_dir, apps) -> dict[str, tuple[int, int]]:
    """Most common (replicas, batch size) request per application in a workload folder."""
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    if workloads_dir is not None and Path(workloads_dir).is_dir():
        for path in sorted(Path(workloads_dir).glob("*.csv")):
            for job in read_workload(path):
                counts[job.application][(job.num_replicas, job.batch_size)] += 1
    out = {}
    for name, app in apps.items():
        if counts[name]:
            out[name] = counts[name].most_common(1)[0][0]
        else:
            out[name] = (1, app.init_batch_size)
    return out


def synthetic_workload(apps, requests, *, num_jobs=48, duration=2 * 3600, seed=2021) -> list[WorkloadJob]:
    """Draw a seeded synthetic workload: Poisson arrivals over ``duration`` with :data:`WORKLOAD_MIX`.

    Parameters
    ----------
    apps : dict of str -> Application
        Applications by name; those of :data:`WORKLOAD_MIX` missing here are not drawn.
    requests : dict of str -> (int, int)
        ``(num_replicas, batch_size)`` each job of an application requests.
    num_jobs, duration, seed : int
        Number of jobs, arrival window in seconds, seed of the draw.

    Returns
    -------
    list of WorkloadJob

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> apps = builtin_applications()
    >>> requests = {name: (1, app.init_batch_size) for name, app in apps.items()}
    >>> jobs = synthetic_workload(apps, requests, num_jobs=3, seed=0)
    >>> [(job.name, job.time, job.num_replicas) for job in jobs]
    [('cifar10-0', 295, 1), ('deepspeech2-1', 1942, 1), ('deepspeech2-2', 4586, 1)]
    >>> synthetic_workload(apps, requests, num_jobs=3, seed=0) == jobs
    True
    """
    num_jobs = check_int_scalar("num_jobs", num_jobs, low=1)
    duration = check_int_scalar("duration", duration, low=1)
    seed = check_int_scalar("seed", seed, low=0)
    names = [n for n in WORKLOAD_MIX if n in apps]
    if not names:
        raise ValueError(f"apps holds none of the workload mix's applications {sorted(WORKLOAD_MIX)}")
    missing = [n for n in names if n not in requests]
    if missing:
        raise ValueError(f"requests has no (num_replicas, batch_size) for application(s) {missing}")
    rng = np.random.default_rng(seed)
    p = np.array([WORKLOAD_MIX[n] for n in names])
    p /= p.sum()
    times = np.sort(rng.uniform(0, duration, size=num_jobs)).astype(int)
    picks = rng.choice(len(names), size=num_jobs, p=p)
    jobs = []
    for i, (t, a) in enumerate(zip(times, picks, strict=True)):
        name = names[a]
        reps, bsz = requests[name]
        jobs.append(WorkloadJob(f"{name}-{i}", int(t), name, int(reps), int(bsz)))
    return jobs


def main(argv=None) -> int:
    """Command-line entry point (see the module docstring).

    Examples
    --------
    Needs the Pollux trace folders (``TRACES_DIR``), so it is not run here:

    >>> main(["path/to/pollux-traces", "--out", "profiles"])  # doctest: +SKIP
    0
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", help="folder of application trace folders")
    parser.add_argument("--workloads", help="folder of workload CSVs (for typical requests)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "data"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:  # one line naming the problem, as the fastsched command gives, and nothing written
        profiles = derive_profiles(args.traces)
        requests = _requests(args.workloads, profiles)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    out.mkdir(parents=True, exist_ok=True)
    doc = {
        "about": "Builtin application profiles derived from the Pollux traces by fastsched.sim.truth.derive",
        "applications": {name: prof.to_dict() for name, prof in profiles.items()},
        "requests": {name: list(r) for name, r in requests.items()},
    }
    (out / _PROFILES).write_text(json.dumps(doc, indent=1) + "\n")
    write_workload(synthetic_workload(profiles, requests), out / BUILTIN_WORKLOAD_NAME)
    print(f"wrote {out / _PROFILES} and {out / BUILTIN_WORKLOAD_NAME}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
