"""Locate ../shared beside the checkout (skip cleanly when absent)."""

import pytest

from tests.conftest import SHARED

CASES = SHARED / "paddle-cases"


def case_paths():
    if not CASES.is_dir():
        return []
    return sorted(CASES.glob("*.json"))


def need_cases():
    if not CASES.is_dir():
        pytest.skip(f"shared cases not found at {CASES}")
