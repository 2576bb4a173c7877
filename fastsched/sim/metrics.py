"""The field's scheduling metrics from a simulation's records (Sia/Themis-style figures).

All times in seconds, GPU-hours in hours. Definitions (each function documents its own):

* JCT statistics over completed jobs: mean, median, 99th percentile (linear interpolation);
* makespan: last completion minus first submission;
* GPU-hours per job (all jobs), also split by GPU type (the split sums to the total);
* restarts per job;
* contention: jobs waiting or running after each round's scheduling, mean and max over rounds;
* finish-time fairness: a job's JCT over the time it would need on an equal ``1/N`` share of
  the cluster, ``N`` being the mean contention while it was in the system. The share time is
  its GPU-seconds spread over ``s = min(G / N, held)`` GPUs, ``held`` being the mean GPUs it
  held over the rounds it held any (a job is not assumed to use more than it did), so
  ``ftf = JCT * s / GPU-seconds``: 1 for a job that ran from submission to end without
  waiting, within its share; waiting, or running above a share it would not have had alone
  (``s < held``), moves the figure accordingly.

Finish-time fairness is an approximation. The exact figure needs each job's JCT when run
alone on ``G / N`` GPUs, i.e. one more simulation per job: the Sia study runs the job alone
under the same policy on each GPU type at ``floor(G / N)`` and ``ceil(G / N)`` GPUs,
interpolates linearly between the two JCTs (``JCT / (G / N)`` below one GPU; Gavel's rigid jobs
run at their requested count and are scaled by ``requested / (G / N)`` above the share), and
averages the types weighted by their GPU counts. Here the isolated time is estimated from the
job's own run instead: GPU-seconds over the share, i.e. as if its speedup were linear within
the share and its GPU-seconds the same alone. The biases mostly point one way, towards
figures lower (fairer-looking) than the exact ones: restarts and waits for a restart count in
the GPU-seconds although a job alone would restart less; a job held above its share is
credited with linear speedup, while sublinear scaling makes its isolated run on fewer GPUs
more efficient per GPU; a job held below its share is measured against the GPUs it held,
not against the larger share it could have used alone.
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


def compute_metrics(result) -> dict:
    """Compute the metrics of :data:`METRIC_KEYS` for a :class:`~fastsched.sim.result.SimulationResult`.

    GPU-hours count every job (finished or not); JCT and fairness figures count completed
    jobs; the cluster size for fairness is the mean GPUs available over the rounds.

    Examples
    --------
    >>> import numpy as np
    >>> from fastsched.sim.result import JobRecord, SimulationResult
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
        ftf = finish_time_fairness(
            [j.completion_time - j.submission_time for j in done], [j.attained_service for j in done], n, gpus, held
        )
        out["ftf_worst"] = float(ftf.max())
        out["ftf_unfair_fraction"] = float(np.mean(ftf > FTF_UNFAIR_THRESHOLD))
    else:
        out["ftf_worst"] = out["ftf_unfair_fraction"] = _NAN
    return out
