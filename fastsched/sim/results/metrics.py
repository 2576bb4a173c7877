"""The field's scheduling metrics from a simulation's records (Sia/Themis-style figures).

All times in seconds, GPU-hours in hours. Definitions (each function documents its own):

* JCT statistics over completed jobs: mean, median, 99th percentile (linear interpolation);
* makespan: last completion minus first submission;
* GPU-hours per job (all jobs), also split by GPU type (the split sums to the total);
* restarts per job;
* contention: jobs waiting or running after each round's scheduling, mean and max over rounds;
* finish-time fairness: a job's JCT over its JCT alone on an equal ``1/N`` share of the
  cluster, ``N`` being its mean contention (jobs waiting or running per round, over the rounds
  it was in the system) and ``G`` the cluster's GPUs (all types): the worst over completed
  jobs, and the fraction above :data:`FTF_UNFAIR_THRESHOLD`.

The isolated JCT (``ftf_method="isolated"``, the default for results of
:func:`~fastsched.sim.simulate`, which stores it as ``SimulationResult.isolated_jct``) follows
the Sia study's definition (its artifact's ``ftf_simulator.py``): per GPU type, the job alone on
``floor(G / N)`` and ``ceil(G / N)`` GPUs of that type (at most the type's GPUs), interpolated
linearly in between; below one GPU the one-GPU time divided by ``G / N``; a job with a fixed GPU
count ``n`` (Gavel, rigid jobs) on ``n`` GPUs, times ``n / (G / N)`` when ``n`` is above the
share; the types averaged weighted by their GPU counts. Where the study re-simulates each job
alone under the same policy (about six single-job simulations per job), the time alone here
is computed from the simulator's true model of the job (:mod:`fastsched.sim.results.isolated`): it
starts at the first round after its submission, pauses its start delay once, then trains each
epoch at the best true goodput any configuration within the share reaches (GPU count, packed
placement, batch size and accumulation; its true throughput and statistical-efficiency traces
and its slowdown). It is the job's best run alone: it does not spend its first rounds on one GPU
learning its scaling, nor restart, nor is it limited to the configurations a policy offers; so
its time is shorter and its figures higher (less fair-looking) than a re-simulation's. A job
alone on the cluster scores exactly 1 (up to whole-second epoch crossings) when its
configuration is fixed; under an adaptive policy (Sia, Pollux) above 1 by its learning ramp
(one GPU, then at most doubling per round, each step a restart): a few % for jobs of hours, up
to 2-3 for jobs of minutes on fast GPUs, whose ramp is most of their run. Values below 1 are
jobs that finished earlier than on their share alone (they used more than ``G / N`` GPUs).

``ftf_method="gpu_seconds"`` (the fallback for results without ``isolated_jct``, e.g. built by
hand) estimates the isolated time from the job's own run instead: its GPU-seconds spread over
``s = min(G / N, held)`` GPUs (``held``: the mean GPUs it held over the rounds it held any), so
``ftf = JCT * s / GPU-seconds``. It leans low (fairer-looking): restarts count in the
GPU-seconds, speedup within the share is taken as linear, and a job held below its share is
measured against what it held.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "METRIC_KEYS",
    "FTF_UNFAIR_THRESHOLD",
    "jct_stats",
    "contention_stats",
    "job_contention",
    "finish_time_fairness",
    "compute_metrics",
]

#: Keys of :func:`compute_metrics`.
METRIC_KEYS = (
    "avg_jct",
    "p50_jct",
    "p99_jct",
    "makespan",
    "gpu_hours_per_job",
    "gpu_hours_by_type",
    "restarts_per_job",
    "contention_mean",
    "contention_max",
    "ftf_worst",
    "ftf_unfair_fraction",
)

#: A job with finish-time fairness above this is counted as treated unfairly.
FTF_UNFAIR_THRESHOLD = 1.05

_NAN = float("nan")


def jct_stats(jcts) -> dict:
    """Mean, median and p99 of job completion times (NaN when empty).

    Examples
    --------
    >>> jct_stats([100.0, 200.0, 600.0])
    {'avg_jct': 300.0, 'p50_jct': 200.0, 'p99_jct': 592.0}
    """
    j = np.asarray(jcts, dtype=np.float64)
    if j.size == 0:
        return {"avg_jct": _NAN, "p50_jct": _NAN, "p99_jct": _NAN}
    return {
        "avg_jct": float(j.mean()),
        "p50_jct": float(np.percentile(j, 50)),
        "p99_jct": float(np.percentile(j, 99)),
    }


def contention_stats(active_jobs) -> tuple[float, float]:
    """Mean and max of the jobs in the system per round (NaN without rounds).

    Examples
    --------
    >>> contention_stats([1, 3, 2, 0])
    (1.5, 3.0)
    """
    a = np.asarray(active_jobs, dtype=np.float64)
    if a.size == 0:
        return _NAN, _NAN
    return float(a.mean()), float(a.max())


def job_contention(times, active_jobs, submission, completion) -> np.ndarray:
    """Mean jobs in the system over the rounds each job spent in it.

    A round ending at ``t`` counts for a job with ``submission <= t`` and (``completion is
    None`` or ``t <= completion``); a job that saw no round gets its own count, 1.

    Examples
    --------
    >>> job_contention([60, 120, 180], [1, 2, 2], [0, 100], [150, None]).tolist()
    [1.5, 2.0]
    """
    times = np.asarray(times, dtype=np.float64)
    active = np.asarray(active_jobs, dtype=np.float64)
    out = np.ones(len(submission), dtype=np.float64)
    for i, (s, c) in enumerate(zip(submission, completion, strict=True)):
        mask = times >= s
        if c is not None:
            mask &= times <= c
        if mask.any():
            out[i] = max(float(active[mask].mean()), 1.0)
    return out


def finish_time_fairness(jcts, gpu_seconds, contention, total_gpus, held_gpus=None) -> np.ndarray:
    """``JCT * s / GPU-seconds`` with ``s = min(G / N, held)``: JCT over the time on an equal share.

    Parameters
    ----------
    jcts, gpu_seconds, contention : array_like
        Per completed job: JCT, GPU-seconds held, mean contention ``N``.
    total_gpus : float
        GPUs in the cluster ``G``.
    held_gpus : array_like, optional
        Mean GPUs each job held while it held any (default: no cap on the share).

    Returns
    -------
    numpy.ndarray
        Infinite for a job that completed without holding a GPU-second.

    Examples
    --------
    A job alone (N = 1) on 4 GPUs that held all 4 for its whole JCT of 100 s scores 1; one
    that waited 100 s first scores 2.

    >>> finish_time_fairness([100.0, 200.0], [400.0, 400.0], [1.0, 1.0], 4).tolist()
    [1.0, 2.0]

    With 2 jobs on 8 GPUs the share is 4; a job that held 2 GPUs is measured against 2:
    100 s holding 2 GPUs (200 GPU-s) scores 1.

    >>> finish_time_fairness([100.0], [200.0], [2.0], 8, held_gpus=[2]).tolist()
    [1.0]
    """
    jcts = np.asarray(jcts, dtype=np.float64)
    gs = np.asarray(gpu_seconds, dtype=np.float64)
    share = float(total_gpus) / np.asarray(contention, dtype=np.float64)
    if held_gpus is not None:
        share = np.minimum(share, np.asarray(held_gpus, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = jcts * share / gs
    return np.where(gs > 0, out, np.inf)


def compute_metrics(result, ftf_method=None) -> dict:
    """Compute the metrics of :data:`METRIC_KEYS` for a :class:`~fastsched.sim.results.result.SimulationResult`.

    GPU-hours count every job (finished or not); JCT and fairness figures count completed
    jobs; the cluster size for fairness is the mean GPUs available over the rounds.

    Parameters
    ----------
    result : SimulationResult
    ftf_method : {None, "isolated", "gpu_seconds"}
        Denominator of finish-time fairness (see the module docstring): ``"isolated"`` reads
        ``result.isolated_jct`` (stored by :func:`~fastsched.sim.simulate`); ``"gpu_seconds"``
        estimates it from each job's GPU-seconds; ``None`` (default): ``"isolated"`` when the
        result has ``isolated_jct``, else ``"gpu_seconds"``.

    Raises
    ------
    ValueError
        An unknown ``ftf_method``, or ``"isolated"`` on a result without ``isolated_jct``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched.sim.results.result import JobRecord, SimulationResult
    >>> jobs = [JobRecord("a", "app", 0, 120, 1, 480.0, 1), JobRecord("b", "app", 60, 180, 0, 240.0, 1)]
    >>> r = SimulationResult(jobs=jobs, policy="x", config={"interval": 60}, times=np.array([60, 120, 180]),
    ...                      used_gpus=np.array([4, 4, 2]), total_gpus=np.array([4, 4, 4]),
    ...                      active_jobs=np.array([2, 2, 1]), allocations=np.array([[4, 0], [2, 2], [0, 2]]))
    >>> m = compute_metrics(r)
    >>> m["avg_jct"], m["makespan"], m["gpu_hours_per_job"], m["restarts_per_job"]
    (120.0, 180.0, 0.1, 0.5)
    >>> m["gpu_hours_by_type"], m["contention_max"]
    ({'gpu': 0.1}, 2.0)
    >>> round(m["ftf_worst"], 6), m["ftf_unfair_fraction"]  # b: 120 s * min(4 / (5/3), 2 held) / 240 GPU-s
    (1.0, 0.0)

    With each job's JCT alone (``isolated_jct``, as :func:`~fastsched.sim.simulate` stores it):
    a at 120 s over 100 s alone, b at 120 s over 120 s.

    >>> r.isolated_jct = np.array([100.0, 120.0])
    >>> m = compute_metrics(r)
    >>> m["ftf_worst"], m["ftf_unfair_fraction"]
    (1.2, 0.5)
    >>> compute_metrics(r, ftf_method="gpu_seconds")["ftf_worst"] == 1.0
    True
    """
    jobs = result.jobs
    done = [j for j in jobs if j.completion_time is not None]
    out = jct_stats([j.completion_time - j.submission_time for j in done])
    out["makespan"] = (
        float(max(j.completion_time for j in done) - min(j.submission_time for j in jobs)) if done else _NAN
    )
    num = len(jobs)
    total_gs = sum(float(j.attained_service) for j in jobs)
    out["gpu_hours_per_job"] = total_gs / 3600.0 / num if num else _NAN
    by_type: dict = {}
    for j in jobs:
        split = getattr(j, "gpu_seconds_by_type", None)
        if not split:  # one (unnamed) GPU type, or a job that never held a GPU
            split = {result.config.get("gpu_type", "gpu"): j.attained_service} if j.attained_service else {}
        for t, v in split.items():
            by_type[t] = by_type.get(t, 0.0) + float(v)
    out["gpu_hours_by_type"] = {t: v / 3600.0 / num for t, v in by_type.items()} if num else {}
    out["restarts_per_job"] = sum(j.num_restarts for j in jobs) / num if num else _NAN
    out["contention_mean"], out["contention_max"] = contention_stats(result.active_jobs)
    if done and result.times.size:
        n = job_contention(
            result.times, result.active_jobs, [j.submission_time for j in done], [j.completion_time for j in done]
        )
        gpus = float(np.mean(result.total_gpus)) if result.total_gpus.size else _NAN
        idx = [i for i, j in enumerate(jobs) if j.completion_time is not None]
        alloc = result.allocations
        held = None
        if alloc.size and alloc.shape[1] == len(jobs):
            a = alloc[:, idx].astype(np.float64)
            rounds = (a > 0).sum(axis=0)
            held = np.where(rounds > 0, a.sum(axis=0) / np.maximum(rounds, 1), np.inf)
        jcts = np.array([j.completion_time - j.submission_time for j in done], dtype=np.float64)
        iso = getattr(result, "isolated_jct", None)
        if ftf_method is None:
            ftf_method = "isolated" if iso is not None else "gpu_seconds"
        if ftf_method == "isolated":
            if iso is None:
                raise ValueError("ftf_method='isolated' needs result.isolated_jct (a result of simulate())")
            ftf = jcts / np.asarray(iso, dtype=np.float64)[idx]
        elif ftf_method == "gpu_seconds":
            ftf = finish_time_fairness(jcts, [j.attained_service for j in done], n, gpus, held)
        else:
            raise ValueError(f"ftf_method must be 'isolated', 'gpu_seconds' or None, got {ftf_method!r}")
        out["ftf_worst"] = float(ftf.max())
        out["ftf_unfair_fraction"] = float(np.mean(ftf > FTF_UNFAIR_THRESHOLD))
    else:
        out["ftf_worst"] = out["ftf_unfair_fraction"] = _NAN
    return out
