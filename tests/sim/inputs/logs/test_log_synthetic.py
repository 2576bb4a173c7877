"""The synthetic log: seeded, readable, and drawn from the distributions its profile states."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from fastsched.sim.inputs.logs import SYNTHETIC_PROFILES, read_log, synthetic_log
from fastsched.sim.inputs.logs.synthetic import duration_model

HELIOS = SYNTHETIC_PROFILES["helios"]


def test_same_seed_same_file_other_seed_other_file(tmp_path):
    a = synthetic_log(tmp_path / "a.csv", num_jobs=3000, seed=4)
    b = synthetic_log(tmp_path / "b.csv", num_jobs=3000, seed=4)
    c = synthetic_log(tmp_path / "c.csv", num_jobs=3000, seed=5)
    assert a.path.read_bytes() == b.path.read_bytes()
    assert a.path.read_bytes() != c.path.read_bytes()


def test_duration_model_meets_the_published_moments():
    """Integrate the clipped mixture numerically (not the solver's closed form)."""
    mu, beta, sigma = duration_model(HELIOS)
    cap = HELIOS["run_cap_days"] * 86400
    sizes = sorted(HELIOS["gpu_shares"])
    shares = np.array([HELIOS["gpu_shares"][g] for g in sizes])
    shares /= shares.sum()
    mean = gpu_sec = below_median = 0.0
    for g, p in zip(sizes, shares, strict=True):
        d = stats.lognorm(s=sigma, scale=math.exp(mu + beta * math.log2(g)))
        m = integrate.quad(lambda x, d=d: x * d.pdf(x), 0, cap, limit=200, points=[d.median()])[0] + cap * d.sf(cap)
        mean += p * m
        gpu_sec += p * g * m
        below_median += p * d.cdf(HELIOS["run_median"])
    assert below_median == pytest.approx(0.5, abs=1e-6)
    assert mean == pytest.approx(HELIOS["run_mean"], rel=1e-4)
    assert gpu_sec == pytest.approx(HELIOS["gpu_seconds_per_job"], rel=1e-4)
    assert float(shares @ np.array(sizes)) == pytest.approx(3.716, abs=1e-3)  # the published mean GPU count


def test_a_sample_follows_the_profile(tmp_path):
    n = 100_000
    out = synthetic_log(tmp_path / "log.csv", num_jobs=n, seed=0)
    r = read_log(out.path)
    j = r.jobs
    assert len(j) == n and not r.dropped
    assert np.median(j.duration) == pytest.approx(HELIOS["run_median"], rel=0.04)
    assert j.gpus.mean() == pytest.approx(3.716, rel=0.02)
    assert np.median(j.gpus) == 1
    for state, share in HELIOS["states"].items():
        assert np.mean(j.state == state.lower()) == pytest.approx(share, abs=0.005)
    # the arrival rate is the published one: GPU jobs per day
    assert out.span / 86400 == pytest.approx(n / (HELIOS["gpu_jobs"] / HELIOS["span_days"]))
    assert j.submit.max() <= out.span
    # diurnal: the six afternoon hours (peak at 15:00) hold more submissions than the six night hours
    absolute = r.origin + j.submit
    first_day = r.origin - r.origin % 86400
    whole_days = absolute < first_day + (out.span // 86400) * 86400  # the last, partial day has no afternoon
    hour = (absolute[whole_days] % 86400) // 3600
    day, night = np.sum((hour >= 12) & (hour < 18)), np.sum(hour < 6)
    k = 24 * math.sqrt(2) / (2 * math.pi)  # integral of the cosine over each six hours, +k and -k
    expect = (6 + 0.4 * k) / (6 - 0.4 * k)
    assert day / night == pytest.approx(expect, rel=0.05)
    assert np.all(j.queued == 0)


def test_cpu_jobs_are_dropped_by_the_gpu_filter(tmp_path):
    out = synthetic_log(tmp_path / "log.csv", num_jobs=4000, cpu_fraction=0.5, seed=2)
    assert (out.jobs, out.gpu_jobs) == (8000, 4000)
    r = read_log(out.path)
    assert len(r.jobs) == 4000 and r.dropped == {"no GPUs": 4000}


def test_philly_profile_and_arguments(tmp_path):
    out = synthetic_log(tmp_path / "p.csv", profile="philly", num_jobs=1000, seed=1)
    assert out.gpus == 2500 and out.span / 86400 == pytest.approx(1000 / (117_325 / 137.0))
    assert synthetic_log(tmp_path / "d.csv", num_jobs=100, days=2.0).span == 2 * 86400
    with pytest.raises(ValueError, match="profile must be one of"):
        synthetic_log(tmp_path / "x.csv", profile="venus")
    with pytest.raises(ValueError, match="num_jobs must be >= 1"):
        synthetic_log(tmp_path / "x.csv", num_jobs=0)
    with pytest.raises(ValueError, match="cpu_fraction must be < 1"):
        synthetic_log(tmp_path / "x.csv", cpu_fraction=1.0)
