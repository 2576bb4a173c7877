"""Seeded workloads: Poisson arrivals of jobs drawn from a mix (the builtin one, or a study's workloads).

:func:`poisson_workload` draws arrivals from a Poisson process and each job's kind (application,
GPUs, batch, category) from a *mix*: a list of jobs resampled with replacement. The mix is its
source's empirical distribution, so a generated workload has the study's applications and request
sizes in the study's proportions, with new arrival times for every seed:

* ``"builtin"``: the builtin synthetic workload (:func:`fastsched.sim.truth.builtin.builtin_workload`);
* a workload CSV, or a folder of them: the jobs of every file pooled, e.g. Sia's job mix from
  ``../shared/sia-traces/workloads/saturn`` (the Sia artifact's workloads sampled from the Helios
  Saturn trace) or ``.../philly`` (the Pollux workloads as Sia adapted them).

The rate defaults to the mix's own (jobs per hour of arrival window, pooled over its files), so
the generated load matches the source's. Resampling an observed workload with fresh Poisson
arrivals is our modelling choice (the mix is kept, the arrival process is the textbook one);
:func:`fastsched.sim.inputs.llm_workload.llm_workload` draws LLM jobs from stated distributions instead.

Sweep seeds vary only a policy's own randomness; to vary arrivals, generate one workload per
seed (``fastsched workload w.csv --seeds 5``) and list them as the sweep's ``workloads``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from fastsched._validate import check_int_scalar
from fastsched.sim.inputs.workload import WorkloadJob, read_workload

__all__ = ["read_mix", "poisson_workload", "mix_rate"]

#: Upper bound on the jobs of one generated workload (the simulator's own limits are far above).
MAX_JOBS = 1_000_000


def read_mix(source="builtin") -> list[list[WorkloadJob]]:
    """Read a mix: the workloads whose jobs a generated workload resamples, one list per file.

    Parameters
    ----------
    source : str or path or list of WorkloadJob
        ``"builtin"``, a workload CSV, a folder of workload CSVs (every ``*.csv`` in it, in name
        order), or jobs given in Python.

    Returns
    -------
    list of list of WorkloadJob
        One list per workload (their arrival windows give the mix's rate, :func:`mix_rate`).

    Examples
    --------
    >>> mix = read_mix("builtin")
    >>> len(mix), len(mix[0])
    (1, 48)
    """
    if isinstance(source, (list, tuple)):
        jobs = list(source)
        if not jobs or not all(isinstance(j, WorkloadJob) for j in jobs):
            raise ValueError("mix: give a non-empty list of WorkloadJob, 'builtin', a workload CSV or a folder of them")
        return [jobs]
    if str(source) == "builtin":
        # the builtin workload's file (fastsched.sim.truth.builtin reads the same), not the module: a
        # layer above the inputs
        from importlib import resources

        with resources.as_file(resources.files("fastsched.sim").joinpath("data", "builtin_workload.csv")) as f:
            return [read_workload(f)]
    path = Path(source).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() == ".csv" and p.is_file())
        if not files:
            raise ValueError(f"mix {path}: a folder with no workload CSV in it")
        return [read_workload(f) for f in files]
    if not path.exists():
        raise FileNotFoundError(f"mix not found: {path} (give 'builtin', a workload CSV or a folder of them)")
    return [read_workload(path)]


def mix_rate(mix) -> tuple[float, float]:
    """Return a mix's arrival rate (jobs per hour, pooled) and its mean arrival window (hours).

    A workload's window is its last arrival (times start at 0); one whose jobs all arrive at
    once counts one hour.

    Examples
    --------
    >>> rate, hours = mix_rate(read_mix("builtin"))
    >>> round(rate, 1), round(hours, 2)
    (24.7, 1.94)
    """
    spans = [max(j.time for j in jobs) / 3600.0 for jobs in mix]
    spans = [s if s > 0 else 1.0 for s in spans]
    total = sum(len(jobs) for jobs in mix)
    return total / sum(spans), sum(spans) / len(spans)


def poisson_workload(mix="builtin", *, jobs_per_hour=None, hours=None, num_jobs=None, seed=0) -> list[WorkloadJob]:
    """Draw a workload: Poisson arrivals, each job's kind resampled from ``mix``.

    Parameters
    ----------
    mix : str or path or list of WorkloadJob
        See :func:`read_mix` (default ``"builtin"``).
    jobs_per_hour : float, optional
        Rate of the arrivals (default: the mix's own, :func:`mix_rate`).
    hours : float, optional
        Arrival window: jobs arriving later are not drawn (default: the mix's mean window, unless
        ``num_jobs`` is given).
    num_jobs : int, optional
        Draw exactly this many jobs (then ``hours`` does not apply).
    seed : int
        Seed of the draw: the same arguments give the same workload; another seed, other
        arrivals and other kinds.

    Returns
    -------
    list of WorkloadJob
        Sorted by arrival, named ``<application>-<index>``, with the drawn job's application,
        GPUs, batch and category.

    Raises
    ------
    ValueError
        A bad rate, window, count or seed (named), or both ``hours`` and ``num_jobs``.

    Examples
    --------
    >>> jobs = poisson_workload(num_jobs=4, seed=1)
    >>> [j.name for j in jobs], jobs == poisson_workload(num_jobs=4, seed=1)
    (['ncf-0', 'cifar10-1', 'cifar10-2', 'cifar10-3'], True)
    >>> [j.time for j in jobs] != [j.time for j in poisson_workload(num_jobs=4, seed=2)]
    True
    """
    seed = check_int_scalar("seed", seed, low=0)
    if num_jobs is not None and hours is not None:
        raise ValueError("give hours or num_jobs, not both")
    if num_jobs is not None:
        num_jobs = check_int_scalar("num_jobs", num_jobs, low=1, high=MAX_JOBS)
    pools = read_mix(mix)
    rate, window = mix_rate(pools)
    rate = rate if jobs_per_hour is None else jobs_per_hour
    hours = window if hours is None and num_jobs is None else hours
    for what, v in (("jobs_per_hour", rate), ("hours", hours)):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < math.inf):
            raise ValueError(f"{what} must be a positive finite number, got {v!r}")
    if num_jobs is None and rate * hours > MAX_JOBS:
        raise ValueError(f"jobs_per_hour x hours = {rate * hours:.0f} expected jobs, over the limit of {MAX_JOBS}")
    pool = [j for jobs in pools for j in jobs]
    rng = np.random.default_rng(seed)
    out = []
    t = 0.0
    while num_jobs is None or len(out) < num_jobs:
        t += rng.exponential(3600.0 / rate)
        if num_jobs is None and t > hours * 3600.0:
            break
        kind = pool[int(rng.integers(len(pool)))]
        out.append(
            WorkloadJob(
                f"{kind.application}-{len(out)}",
                int(math.ceil(t)),
                kind.application,
                kind.num_replicas,
                kind.batch_size,
                kind.category,
            )
        )
    if not out:
        raise ValueError(f"no job arrived within {hours:g} h at {rate:g} jobs per hour; raise hours or jobs_per_hour")
    return out
