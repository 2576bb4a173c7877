"""Shared fixtures of the simulator tests: tiny hand-made traces and the ../shared locator."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SHARED

POLLUX = SHARED / "pollux-traces"


def require_shared():
    """Skip unless the Pollux traces are present beside the checkout."""
    if not (POLLUX / "traces").is_dir():
        pytest.skip(f"needs the Pollux traces at {POLLUX} (absent in a user's clone)")
    return POLLUX


def write_tiny_traces(root: Path) -> Path:
    """A two-node toy application 'toy' with hand-picked numbers; returns its folder."""
    app = root / "toy"
    app.mkdir(parents=True)
    (app / "placements.csv").write_text(
        "placement,local_bsz,step_time,sync_time\n"
        "1,4,1.0,0.0\n"
        "1,8,2.0,0.0\n"
        "2,4,1.5,0.5\n"
        "2,8,2.5,0.5\n"
        "11,4,2.0,1.0\n"
        "11,8,3.0,1.0\n"
        "12,4,2.5,1.5\n"
        "12,8,3.5,1.5\n"
    )
    (app / "scalability.csv").write_text(
        "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
        "4,8,4,4.0,3.0\n"
        "4,8,8,5.0,3.0\n"
        "4,4,4,3.0,2.0\n"
        "4,4,8,4.0,2.0\n"
    )
    # Two batch sizes, 3 epochs each. progress in steps at B=4.
    (app / "validation-4.csv").write_text(
        "progress,iteration,metric,grad_sqr,grad_var\n10.0,10,0.5,1.0,1.0\n20.0,20,0.6,1.0,2.0\n30.0,30,0.7,1.0,3.0\n"
    )
    (app / "validation-8.csv").write_text(
        "progress,iteration,metric,grad_sqr,grad_var\n12.0,6,0.4,3.0,5.0\n18.0,12,0.65,3.0,6.0\n33.0,18,0.8,3.0,7.0\n"
    )
    return app


@pytest.fixture
def tiny_traces(tmp_path):
    """Folder holding the 'toy' application."""
    write_tiny_traces(tmp_path)
    return tmp_path


# The two-type toy traces, a fixture of the tests of every role folder below.
from tests.sim.two_types import two_type_traces  # noqa: E402, F401
