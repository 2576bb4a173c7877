"""The simulator's module paths before issue 36's layout still import: as the moved modules themselves."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MOVED = {
    "workload": "inputs.workload",
    "cluster_spec": "inputs.cluster_spec",
    "llm_workload": "inputs.llm_workload",
    "traces": "truth.traces",
    "builtin": "truth.builtin",
    "oracle": "truth.oracle",
    "hetero_apps": "truth.per_type",
    "hetero": "engine.hetero_job",
    "metrics": "results.metrics",
    "isolated": "results.isolated",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_moved_module(old):
    module = importlib.import_module(f"fastsched.sim.{old}")
    assert module is importlib.import_module(f"fastsched.sim.{MOVED[old]}")
    assert module.__name__ == f"fastsched.sim.{MOVED[old]}"  # classes pickle under the new path


def test_the_documented_names_import_from_the_old_paths():
    from fastsched.sim.builtin import builtin_workload
    from fastsched.sim.cluster_spec import MAX_CLUSTER_GPUS
    from fastsched.sim.workload import WorkloadJob

    assert MAX_CLUSTER_GPUS > 0 and all(isinstance(j, WorkloadJob) for j in builtin_workload())


def test_an_unknown_submodule_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("fastsched.sim.no_such_module")


def test_python_m_runs_a_moved_command():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-m", "fastsched.sim.derive", "--help"], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert "Regenerate the builtin profiles" in out.stdout
