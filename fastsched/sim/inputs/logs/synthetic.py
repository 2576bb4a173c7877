"""A synthetic production log at full size, written in Helios' ``cluster_log.csv`` format.

No real log is shipped (they are large and their licences differ), yet readers and a rigid-job
engine need a million-job log to be tested and timed on. :func:`synthetic_log` draws one from a
profile whose every number is stated with its source (:data:`SYNTHETIC_PROFILES`); numbers the
sources do not give are marked as assumptions.

Helios (Hu et al., SC'21, "Characterization and Prediction of Deep Learning Workloads in
Large-Scale GPU Datacenters"; the summary table ``helios_cluster_summary.csv`` of its artifact,
S-Lab-System-Group/HeliosArtifact, all four clusters):

* 1,580,464 GPU jobs (of 3,362,981) from 2020-04-01 to 2020-09-28 (181 days); the arrival rate;
* GPUs per GPU job: mean 3.716, median 1. The shares over 1, 2, 4, ..., 64 GPUs are an
  assumption that meets both (60.6% one GPU; 13.4% eight GPUs);
* run time of GPU jobs: median 206 s, mean 6,651.6 s; all GPU jobs together used 78.0e9
  GPU-seconds (completed 40.0e9 + cancelled 30.7e9 + failed 7.3e9), i.e. 49,356 GPU-seconds per
  job, twice what independent sizes and run times would give: bigger jobs run longer. The model
  is log-normal, ``log d = mu + beta * log2(gpus) + sigma * Z``, clipped at 30 days (assumption);
  ``mu``, ``beta`` and ``sigma`` are solved so that the median, the mean and the GPU-seconds per
  job are the published ones;
* final states of GPU jobs: 62.4% completed, 22.1% cancelled, 15.5% failed;
* CPU jobs, when asked for (``cpu_fraction``; 53.0% of Helios' jobs): run time median 2 s,
  mean 628.8 s, log-normal;
* arrivals: a Poisson process whose rate follows the time of day,
  ``1 + 0.4 cos(2 pi (h - 15) / 24)`` (peak at 15:00). The paper shows a diurnal submission
  pattern; the amplitude and peak hour are assumptions;
* virtual clusters: Helios' clusters have about 25 VCs each (``cluster_gpu_number.csv``); 100
  VCs here, job shares Zipf-like (assumption), 1,000 users likewise (assumption); queueing is
  not modelled (the start time is the submission; the published median wait is 0 s).

Philly (Jeon et al., ATC'19; msr-fiddle/philly-traces README): 117,325 jobs submitted from
2017-08-07 to 2017-12-22 (137 days) on about 2,500 GPUs (the issue's figure). We found no
published Philly aggregate of GPU counts and run times that we could read, so the ``philly``
profile keeps Helios' shapes at Philly's arrival rate: an assumption, stated as one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastsched._validate import check_finite_scalar, check_int_scalar

__all__ = ["SYNTHETIC_PROFILES", "SyntheticLog", "synthetic_log", "duration_model"]

_DAY = 86400.0
_HELIOS = {
    "source": "Hu et al. SC'21; HeliosArtifact helios_cluster_summary.csv (all four clusters)",
    "gpus": 6400,
    "gpu_jobs": 1_580_464,
    "span_days": 181.0,
    "start": "2020-04-01 00:00:00",
    # GPUs per job -> share: assumption meeting the published mean 3.716 and median 1.
    "gpu_shares": {1: 0.6063, 2: 0.10, 4: 0.10, 8: 0.1337, 16: 0.04, 32: 0.015, 64: 0.005},
    "run_median": 206.0,
    "run_mean": 6651.598,
    "gpu_seconds_per_job": 78.0e9 / 1_580_464,
    "run_cap_days": 30.0,  # assumption
    "states": {"COMPLETED": 0.624, "CANCELLED": 0.221, "FAILED": 0.155},
    "cpu_run_median": 2.0,
    "cpu_run_mean": 628.759,
    "diurnal_amplitude": 0.4,  # assumption
    "diurnal_peak_hour": 15.0,  # assumption
    "vcs": 100,  # about 25 per cluster x 4 (cluster_gpu_number.csv); shares assumed Zipf-like
    "users": 1000,  # assumption
}
_PHILLY = dict(
    _HELIOS,
    source="Philly: jobs and span from msr-fiddle/philly-traces README; shapes assumed as Helios'",
    gpus=2500,
    gpu_jobs=117_325,
    span_days=137.0,
    start="2017-08-07 00:00:00",
    vcs=14,
    users=300,
)
#: Profiles of :func:`synthetic_log`; see the module docstring for each number's source.
SYNTHETIC_PROFILES = {"helios": _HELIOS, "philly": _PHILLY}


class SyntheticLog(NamedTuple):
    """What :func:`synthetic_log` wrote.

    Attributes
    ----------
    path : Path
    jobs, gpu_jobs : int
    span : float
        Seconds from the first possible submission to the last.
    gpus : int
        The cluster size the profile describes (no job asks for more).
    duration_params : tuple of float
        ``(mu, beta, sigma)`` of the GPU jobs' run-time model.
    """

    path: Path
    jobs: int
    gpu_jobs: int
    span: float
    gpus: int
    duration_params: tuple


def _norm_cdf(x):
    # numpy alone: scipy.stats takes seconds to import, for seven values
    return 0.5 * np.array([math.erfc(-v / math.sqrt(2.0)) for v in np.atleast_1d(x)])


def _newton(f, x0, tol=1e-12, steps=100):
    """Solve ``f(x) = 0`` (3 equations) by Newton's method with a finite-difference Jacobian."""
    x = np.array(x0, dtype=float)
    for _ in range(steps):
        fx = np.array(f(x))
        if np.max(np.abs(fx)) < tol:
            return x
        jac = np.empty((fx.size, x.size))
        for k in range(x.size):
            h = 1e-7 * max(1.0, abs(x[k]))
            xk = x.copy()
            xk[k] += h
            jac[:, k] = (np.array(f(xk)) - fx) / h
        step = np.linalg.solve(jac, -fx)
        t = 1.0
        while t > 1e-4 and np.max(np.abs(f(x + t * step))) >= np.max(np.abs(fx)):
            t /= 2  # damped: never a step that makes the residual worse
        x = x + t * step
    raise ValueError(f"the profile's run-time moments cannot be met by the model (residual {np.max(np.abs(fx)):.2g})")


def duration_model(profile: dict) -> tuple:
    """Solve ``(mu, beta, sigma)`` so the clipped run times meet the profile's published moments.

    Examples
    --------
    >>> mu, beta, sigma = duration_model(SYNTHETIC_PROFILES["helios"])
    >>> round(beta, 2), round(sigma, 2)  # run time grows about 43% per doubling of GPUs
    (0.36, 2.63)
    """
    sizes = np.array(sorted(profile["gpu_shares"]), dtype=float)
    shares = np.array([profile["gpu_shares"][int(g)] for g in sizes])
    shares = shares / shares.sum()
    cap = math.log(profile["run_cap_days"] * _DAY)
    med = math.log(profile["run_median"])

    def gaps(x):
        mu, log_sigma, beta = x
        sigma = math.exp(log_sigma)
        m = mu + beta * np.log2(sizes)
        # mean of a log-normal clipped at the cap: the part below it plus the cap times P(above)
        clipped = np.exp(m + sigma**2 / 2) * _norm_cdf((cap - m - sigma**2) / sigma) + np.exp(cap) * _norm_cdf(
            (m - cap) / sigma
        )
        return [
            float(shares @ _norm_cdf((med - m) / sigma)) - 0.5,
            math.log(float(shares @ clipped) / profile["run_mean"]),
            math.log(float((shares * sizes) @ clipped) / profile["gpu_seconds_per_job"]),
        ]

    mu, log_sigma, beta = _newton(gaps, [med, 1.0, 0.3])
    return float(mu), float(beta), float(math.exp(log_sigma))


def _arrivals(rng, n, span, amplitude, peak_hour):
    """``n`` sorted submission times on ``[0, span)`` from a rate that follows the time of day."""
    sec = np.arange(86400) + 0.5
    rate = 1.0 + amplitude * np.cos(2 * np.pi * (sec / 3600.0 - peak_hour) / 24.0)
    cdf = np.cumsum(rate)
    cdf /= cdf[-1]
    days = math.ceil(span / _DAY)
    t = rng.integers(0, days, n) * _DAY + np.searchsorted(cdf, rng.random(n))
    t = t[t < span] if days * _DAY > span else t
    while t.size < n:  # the last, partial day: redraw the few that fell past the span
        extra = rng.integers(0, days, n - t.size) * _DAY + np.searchsorted(cdf, rng.random(n - t.size))
        t = np.concatenate([t, extra[extra < span]])
    return np.sort(t)


def _zipf_choice(rng, k, n):
    w = 1.0 / np.arange(1, k + 1)
    return rng.choice(k, size=n, p=w / w.sum())


def synthetic_log(path, *, profile="helios", num_jobs=1_000_000, days=None, cpu_fraction=0.0, seed=0) -> SyntheticLog:
    r"""Write a synthetic log in Helios' ``cluster_log.csv`` format.

    Parameters
    ----------
    path : str or path
        The CSV to write (replaced if it exists).
    profile : {"helios", "philly"} or dict
        The distributions (:data:`SYNTHETIC_PROFILES`; a dict with the same keys for your own).
    num_jobs : int
        GPU jobs to write (plus CPU jobs if ``cpu_fraction > 0``).
    days : float, optional
        Span of submissions; by default the profile's arrival rate (GPU jobs per day) decides it:
        a million Helios jobs span 114.5 days, an offered load of about 78% of 6,400 GPUs.
    cpu_fraction : float
        Share of CPU jobs (``gpu_num`` 0) among all jobs written, in ``[0, 1)``.
    seed : int
        Same seed, same file.

    Returns
    -------
    SyntheticLog

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from fastsched.sim.inputs.logs import read_log
    >>> out = synthetic_log(pathlib.Path(tempfile.mkdtemp()) / "log.csv", num_jobs=2000, seed=1)
    >>> r = read_log(out.path)
    >>> r.format, len(r.jobs), int(r.jobs.gpus.max()) <= out.gpus
    ('helios', 2000, True)
    """
    if isinstance(profile, str) and profile not in SYNTHETIC_PROFILES:
        raise ValueError(f"profile must be one of {sorted(SYNTHETIC_PROFILES)} or a dict, got {profile!r}")
    prof = SYNTHETIC_PROFILES[profile] if isinstance(profile, str) else dict(profile)
    n_gpu = check_int_scalar("num_jobs", num_jobs, low=1)
    cpu_fraction = check_finite_scalar("cpu_fraction", cpu_fraction, low=0.0)
    if cpu_fraction >= 1.0:
        raise ValueError(f"cpu_fraction must be < 1, got {cpu_fraction}")
    seed = check_int_scalar("seed", seed, low=0)
    per_day = prof["gpu_jobs"] / prof["span_days"]
    span = (n_gpu / per_day if days is None else check_finite_scalar("days", days, low=0.0, low_open=True)) * _DAY
    n_cpu = int(round(n_gpu * cpu_fraction / (1.0 - cpu_fraction)))
    n = n_gpu + n_cpu
    rng = np.random.default_rng(seed)

    mu, beta, sigma = duration_model(prof)
    cap = prof["run_cap_days"] * _DAY
    sizes = np.array(sorted(prof["gpu_shares"]), dtype=np.int64)
    sizes = sizes[sizes <= prof["gpus"]]
    shares = np.array([prof["gpu_shares"][int(g)] for g in sizes])
    is_gpu = np.ones(n, dtype=bool)
    is_gpu[rng.choice(n, size=n_cpu, replace=False)] = False
    gpus = np.zeros(n, dtype=np.int64)
    gpus[is_gpu] = rng.choice(sizes, size=n_gpu, p=shares / shares.sum())
    z = rng.standard_normal(n)
    run = np.empty(n)
    run[is_gpu] = np.exp(mu + beta * np.log2(gpus[is_gpu]) + sigma * z[is_gpu])
    cpu_sigma = math.sqrt(2.0 * math.log(prof["cpu_run_mean"] / prof["cpu_run_median"]))
    run[~is_gpu] = np.exp(math.log(prof["cpu_run_median"]) + cpu_sigma * z[~is_gpu])
    run = np.clip(np.rint(run), 1.0, cap).astype(np.int64)
    names = list(prof["states"])
    p_state = np.array([prof["states"][s] for s in names])
    state = np.array(names)[rng.choice(len(names), size=n, p=p_state / p_state.sum())]
    submit = np.floor(_arrivals(rng, n, span, prof["diurnal_amplitude"], prof["diurnal_peak_hour"])).astype(np.int64)
    vc = _zipf_choice(rng, prof["vcs"], n)
    user = _zipf_choice(rng, prof["users"], n)
    cpus = np.where(gpus > 0, 4 * gpus, 1 + rng.integers(0, 8, n))  # assumption: 4 CPUs per GPU
    nodes = np.maximum(1, -(-gpus // 8))  # 8 GPUs per node (Helios' servers)

    path = Path(path)
    t0 = np.datetime64(prof["start"].replace(" ", "T"), "s")
    with open(path, "w", newline="") as f:
        f.write("job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n")
        for lo in range(0, n, 1 << 17):
            hi = min(n, lo + (1 << 17))
            sub = np.datetime_as_string(t0 + submit[lo:hi].astype("timedelta64[s]"), unit="s")
            end = np.datetime_as_string(t0 + (submit[lo:hi] + run[lo:hi]).astype("timedelta64[s]"), unit="s")
            lines = [
                f"{i + 1},u{u:04d},vc{v:03d},{g},{c},{k},{s},{a},{a},{b},{d},0\n"
                for i, u, v, g, c, k, s, a, b, d in zip(
                    range(lo, hi),
                    user[lo:hi].tolist(),
                    vc[lo:hi].tolist(),
                    gpus[lo:hi].tolist(),
                    cpus[lo:hi].tolist(),
                    nodes[lo:hi].tolist(),
                    state[lo:hi].tolist(),
                    np.char.replace(sub, "T", " ").tolist(),
                    np.char.replace(end, "T", " ").tolist(),
                    run[lo:hi].tolist(),
                    strict=True,
                )
            ]
            f.writelines(lines)
    return SyntheticLog(path, n, n_gpu, span, int(prof["gpus"]), (mu, beta, sigma))
