"""Shared test configuration.

Data that lives outside the repository (``../shared`` beside the checkout) is reached through
the ``shared_dir`` fixture, which skips with a reason when it is absent (a user's clone).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

SHARED = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))

# CI: fewer examples but deterministic; locally: the default profile.
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# A long adversarial session: HYPOTHESIS_PROFILE=fuzz pytest tests/embedding/test_fuzz.py
settings.register_profile("fuzz", max_examples=60_000, deadline=None, suppress_health_check=list(HealthCheck))
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """Path to ``../shared``; skips the test when it is not there."""
    if not SHARED.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED} (set FASTSCHED_SHARED)")
    return SHARED
