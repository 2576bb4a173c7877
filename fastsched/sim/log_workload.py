"""Build a workload (today's CSV format) from a production log, the way Pollux and Sia built theirs.

The published rule (the OSDI'21 Pollux artifact's workload generator, petuum/adaptdl branch
``osdi21-artifact``, ``simulator/workload.py``; the SOSP'23 Sia artifact's
``sia-simulator/utils/generate_workload.py`` and ``fix_workload.py``), read, not copied:

1. keep log jobs that ran at least 60 s and used less than 1,000 GPU-hours;
2. keep those submitted in a window: Pollux pools the hours of the day ``[start, end)`` over all
   days of the log (its workloads: 02:00-10:00, 160 jobs); Sia takes ``[start, end)`` hours from
   the log's first submission;
3. draw ``n`` of them uniformly without replacement, seeded; a job's submission time is its
   offset into the window;
4. give each an application by its GPU-time (GPUs x run time): under 1 GPU-hour a small model
   (Pollux: cifar10 or ncf, even odds; Sia: cifar10), 1-10 deepspeech2 or bert (even odds),
   10-100 yolov3, 100-1,000 imagenet (:data:`GPU_TIME_BINS`);
5. give it a GPU count and batch size drawn uniformly among the application's configurations
   whose scaling efficiency on a reference cluster lies strictly between 50% and 80%
   (:func:`application_configurations`). The log's own GPU count is not used (it is in a
   commented-out line of the Pollux generator; ``sizes="log"`` here uses it instead).

Names are ``<application>-<index>`` in submission order, as in the published files; the log
job each came from is returned beside them, so results can be joined back to the log.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastsched._validate import check_finite_scalar, check_int_scalar
from fastsched.sim.inputs.logs._records import LogJobs, LogRead
from fastsched.sim.inputs.workload import WorkloadJob

__all__ = [
    "GPU_TIME_BINS",
    "POLLUX_COUNTS",
    "SIA_COUNTS",
    "RULES",
    "FromLog",
    "application_configurations",
    "workload_from_log",
]

_H = 3600.0
#: Upper GPU-time bound (seconds, exclusive) -> applications drawn with even odds, per rule.
GPU_TIME_BINS = {
    "pollux": (
        (1 * _H, ("cifar10", "ncf")),
        (10 * _H, ("deepspeech2", "bert")),
        (100 * _H, ("yolov3",)),
        (1000 * _H, ("imagenet",)),
    ),
    "sia": (
        (1 * _H, ("cifar10",)),
        (10 * _H, ("deepspeech2", "bert")),
        (100 * _H, ("yolov3",)),
        (1000 * _H, ("imagenet",)),
    ),
}
POLLUX_COUNTS = (1, 2, 4, 6, 8, 12, 16, 24, 32, 48)
# The Sia artifact's list: 1 and the even counts below max_gpus (16): its workloads' imagenet
# jobs resampled by this rule have 10, 12 or 14 GPUs, never 16.
SIA_COUNTS = (1, 2, 4, 6, 8, 10, 12, 14)
#: Each rule: GPU-time bins, window kind, and the reference cluster of the configurations
#: ``(GPUs per node, GPU counts)``; a drawn configuration above ``max_gpus`` is drawn again from
#: the ``fallback`` reference.
RULES = {
    # OSDI'21 generator: 16 nodes x 4 GPUs.
    "pollux": {"bins": "pollux", "daily": True, "reference": (4, POLLUX_COUNTS), "max_gpus": None, "fallback": None},
    # SOSP'23 generator (its Saturn/Helios workloads): 8-GPU nodes, at most 16 GPUs.
    "sia": {"bins": "sia", "daily": False, "reference": (8, SIA_COUNTS), "max_gpus": None, "fallback": None},
    # SOSP'23 philly set: the Pollux workloads with ncf replaced by cifar10 and requests above 16
    # GPUs drawn again on the 8-GPU-node reference (fix_workload.py).
    "sia-philly": {
        "bins": "sia",
        "daily": True,
        "reference": (4, POLLUX_COUNTS),
        "max_gpus": 16,
        "fallback": (8, SIA_COUNTS),
    },
}


def _validated_batch_sizes(app) -> list[int]:
    """Return the total batch sizes an application was validated at (``validation-<B>.csv``).

    For a parametric application: powers of two from the initial to the largest batch size.
    """
    folder = getattr(app, "trace_dir", None)
    if folder is not None:
        sizes = sorted(
            int(m.group(1))
            for p in Path(folder).glob("validation-*.csv")
            if (m := re.fullmatch(r"validation-(\d+)\.csv", p.name))
        )
        if sizes:
            return sizes
    sizes, b = [], int(app.init_batch_size)
    while b < app.max_batch_size:
        sizes.append(b)
        b *= 2
    return sizes + [int(app.max_batch_size)]


def application_configurations(
    app,
    *,
    gpus_per_node=4,
    counts=POLLUX_COUNTS,
    max_gpus=None,
    efficiency=(0.5, 0.8),
    max_jct=12 * _H,
    batch_sizes=None,
) -> list[tuple[int, int, float]]:
    """Return the ``(num_replicas, batch_size, jct)`` configurations the published rule draws from.

    For each GPU count ``R`` (packed ``gpus_per_node`` to a node), the batch size among the
    validated ones that finishes training soonest in isolation: per-GPU batch
    ``ceil(B / R)``, split into gradient-accumulation steps of at most the largest per-GPU
    batch, time = steps to the last epoch at ``B`` x step time on the traces. ``R = 1`` is the
    baseline; ``R`` is kept when that time is under ``max_jct`` and its scaling efficiency
    ``jct(1) / jct(R) / R`` lies strictly inside ``efficiency``. With none kept, the one-GPU
    configuration. Counts stop at the first one whose smallest per-GPU batches exceed the
    largest batch size, beyond ``max_gpus``, or beyond the application's ``max_replicas``.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> apps = builtin_applications()
    >>> application_configurations(apps["ncf"])[0][:2]  # one GPU at most: the fallback
    (1, 32768)
    >>> all(0.5 < c[2] and c[0] >= 2 for c in application_configurations(apps["cifar10"]))
    True
    """
    gpn = check_int_scalar("gpus_per_node", gpus_per_node, low=1)
    lo, hi = efficiency
    sizes = sorted(batch_sizes) if batch_sizes is not None else _validated_batch_sizes(app)
    cap = getattr(app, "max_replicas", None)
    out, base = [], None
    for r in counts:
        if (max_gpus is not None and r > max_gpus) or (cap is not None and r > cap):
            break
        if r * app.min_local_bsz > app.max_batch_size:
            break
        placement = (gpn,) * (r // gpn) + ((r % gpn,) if r % gpn else ())
        best = None
        for b in sizes:
            local = math.ceil(b / r - 1e-8)
            if local < app.min_local_bsz:
                continue
            accum = math.ceil(local / app.max_local_bsz - 1e-8) - 1
            atomic = math.ceil(local / (accum + 1) - 1e-8)
            step, sync = app.throughput(placement, atomic)
            jct = app.iteration(b, app.completion_epoch(b)) * (step + accum * (step - sync))
            if best is None or jct < best[1]:
                best = (b, jct)
        if best is None:
            continue
        if r == 1:
            base = best
        elif base is not None and best[1] < max_jct and lo < base[1] / best[1] / r < hi:
            out.append((r, int(best[0]), float(best[1])))
    if not out:
        if base is None:
            raise ValueError(f"{app.name}: no batch size runs on one GPU; cannot build its configurations")
        out.append((1, int(base[0]), float(base[1])))
    return out


class FromLog(NamedTuple):
    """What :func:`workload_from_log` returns.

    Attributes
    ----------
    jobs : list of WorkloadJob
        The workload, in submission order (write it with :func:`fastsched.sim.write_workload`).
    log_ids : list of str
        The log id of each job, in the same order.
    eligible : int
        Log jobs that passed the run-time, GPU-time and window filters (``n`` were drawn).
    configurations : dict
        Application -> the configurations drawn from (``sizes="configurations"``).
    """

    jobs: list
    log_ids: list
    eligible: int
    configurations: dict


def _log_jobs(log):
    if isinstance(log, LogRead):
        return log.jobs, log.origin
    if isinstance(log, LogJobs):
        return log, 0.0
    if isinstance(log, (str, Path)):
        from fastsched.sim.inputs.logs.read import read_log

        r = read_log(log)
        return r.jobs, r.origin
    raise TypeError(f"log must be a LogRead, LogJobs or a log file path, got {type(log).__name__}")


def workload_from_log(
    log,
    *,
    num_jobs=None,
    rate=None,
    window=(2 * _H, 10 * _H),
    rule="pollux",
    daily=None,
    sizes="configurations",
    applications=None,
    fallback_applications=None,
    seed=0,
    min_duration=60.0,
    max_gpu_time=1000 * _H,
) -> FromLog:
    r"""Sample a production log into a workload, the Pollux/Sia way (see the module docstring).

    Parameters
    ----------
    log : LogRead, LogJobs or path
        A log read by :func:`~fastsched.sim.inputs.logs.read_log` (a path is read with its
        defaults). A bare :class:`LogJobs` has no absolute origin: ``daily`` windows then
        count hours from its first submission.
    num_jobs : int, optional
        Jobs to draw.
    rate : float, optional
        Or jobs per hour of window (``num_jobs = round(rate * hours)``); give one of the two.
    window : (float, float)
        Seconds: the time of day (``daily``) or from the log's first submission.
    rule : {"pollux", "sia", "sia-philly"}
        GPU-time bins and reference clusters (:data:`GPU_TIME_BINS`, :data:`RULES`).
    daily : bool, optional
        Pool the window's hours of the day over all days (the rule's default: Pollux yes,
        Sia no).
    sizes : {"configurations", "log"}
        GPU count and batch size from the application's configurations (published), or the
        log's GPU count with the application's initial batch size times it (capped at its
        largest batch size), the alternative left commented out in the Pollux generator.
    applications : dict, optional
        Application name -> :class:`~fastsched.sim.truth.traces.Application`; default the builtin
        profiles. For the published configurations pass the traces'
        (:func:`fastsched.sim.truth.traces.load_applications`).
    fallback_applications : dict, optional
        The applications on the rule's fallback reference (``sia-philly``: the Sia traces'
        ``rtx`` profiles); default ``applications``.
    seed : int
        Same seed, same workload.
    min_duration, max_gpu_time : float
        The published filters (60 s; 1,000 GPU-hours).

    Returns
    -------
    FromLog

    Raises
    ------
    ValueError
        Fewer eligible jobs than asked for, or an application of the bins not in
        ``applications``.

    Examples
    --------
    >>> from fastsched.sim.inputs.logs import LogJob, LogJobs
    >>> log = LogJobs.from_rows(LogJob(f"j{i}", 60.0 * i, 120.0 * (i + 1), 1 + i % 4, 1, "", "completed", "", "u", 0.0)
    ...                         for i in range(300))
    >>> w = workload_from_log(log, num_jobs=20, window=(0, 8 * 3600), seed=1)
    >>> len(w.jobs), w.eligible, w.jobs[0].name.split("-")[1]
    (20, 300, '0')
    >>> w == workload_from_log(log, num_jobs=20, window=(0, 8 * 3600), seed=1)
    True
    """
    jobs, origin = _log_jobs(log)
    if rule not in RULES:
        raise ValueError(f"rule must be one of {sorted(RULES)}, got {rule!r}")
    cfg = RULES[rule]
    gpn, counts = cfg["reference"]
    daily = cfg["daily"] if daily is None else daily
    if not isinstance(daily, bool):
        raise TypeError(f"daily must be True or False, got {daily!r}")
    if sizes not in ("configurations", "log"):
        raise ValueError(f"sizes must be 'configurations' or 'log', got {sizes!r}")
    if isinstance(window, (str, bytes)) or not hasattr(window, "__len__") or len(window) != 2:
        raise TypeError(f"window must be a (start, end) pair of seconds, got {window!r}")
    w0 = check_finite_scalar("window start", window[0], low=0.0)
    w1 = check_finite_scalar("window end", window[1])
    if not w0 < w1 or (daily and w1 - w0 > 86400):
        raise ValueError(f"window must have start < end{' within one day' if daily else ''}, got {window!r}")
    if (num_jobs is None) == (rate is None):
        raise ValueError("give one of num_jobs and rate")
    n = (
        check_int_scalar("num_jobs", num_jobs, low=1)
        if num_jobs is not None
        else max(1, round(check_finite_scalar("rate", rate, low=0.0, low_open=True) * (w1 - w0) / _H))
    )
    seed = check_int_scalar("seed", seed, low=0)
    if applications is None:
        from fastsched.sim.truth.builtin import builtin_applications

        applications = builtin_applications()
    bins = GPU_TIME_BINS[cfg["bins"]]
    fallback_applications = applications if fallback_applications is None else fallback_applications
    missing = sorted({a for _, apps in bins for a in apps} - set(applications))
    if missing:
        raise ValueError(f"applications: the {rule} bins need {missing}, which are not given")

    gpu_time = jobs.gpus * jobs.duration
    ok = (jobs.duration >= min_duration) & (gpu_time < max_gpu_time) & (jobs.gpus > 0)
    if daily:
        # Time of day of the absolute submission (the log's clock), shifted into the window.
        tod = np.mod(origin + jobs.submit if math.isfinite(origin) else jobs.submit, 86400.0)
        offset = np.mod(tod - w0, 86400.0)
        ok &= offset < (w1 - w0)
    else:
        offset = jobs.submit - w0
        ok &= (offset >= 0) & (offset < (w1 - w0))
    eligible = np.flatnonzero(ok)
    if eligible.size < n:
        raise ValueError(
            f"the window holds {eligible.size} eligible jobs (ran >= {min_duration:g} s, < {max_gpu_time / _H:g} GPU-hours); {n} asked for"
        )
    rng = np.random.default_rng(seed)
    pick = rng.choice(eligible, size=n, replace=False)
    pick = pick[np.argsort(np.floor(offset[pick]), kind="stable")]
    bounds = np.array([b for b, _ in bins])
    which = np.searchsorted(bounds, gpu_time[pick], side="right")

    configs, second = {}, {}
    out, ids = [], []
    for k, (i, b) in enumerate(zip(pick.tolist(), which.tolist(), strict=True)):
        choices = bins[b][1]
        name = choices[int(rng.integers(len(choices)))] if len(choices) > 1 else choices[0]
        app = applications[name]
        if sizes == "configurations":
            if name not in configs:
                configs[name] = application_configurations(app, gpus_per_node=gpn, counts=counts)
            r, batch, _ = configs[name][int(rng.integers(len(configs[name])))]
            if cfg["max_gpus"] is not None and r > cfg["max_gpus"]:
                if name not in second:
                    fgpn, fcounts = cfg["fallback"]
                    second[name] = application_configurations(
                        fallback_applications[name], gpus_per_node=fgpn, counts=fcounts, max_gpus=cfg["max_gpus"]
                    )
                r, batch, _ = second[name][int(rng.integers(len(second[name])))]
        else:
            r = int(jobs.gpus[i])
            batch = int(min(app.max_batch_size, app.init_batch_size * r))
        out.append(WorkloadJob(f"{name}-{k}", int(math.floor(offset[i])), name, int(r), int(batch)))
        ids.append(str(jobs.name[i]))
    configs.update({f"{k} (fallback)": v for k, v in second.items()})
    return FromLog(out, ids, int(eligible.size), configs)
