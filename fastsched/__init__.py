"""fastsched: numba-compiled core for goodput-optimised cluster scheduling and cost models.

The public names of AdaptDL's ``adaptdl.goodput`` and ``adaptdl_sched.policy`` are
re-exported here, so switching from AdaptDL means changing only the import::

    from fastsched import GoodputFunction, PerfParams, GradParams, fit_perf_params
    from fastsched import SpeedupFunction, JobInfo, NodeInfo, PolluxPolicy

Every name is imported on first use, so a scheduler that only needs the policy does not pay
for the cost model (:mod:`fastsched.costmodel`), the simulator (:mod:`fastsched.sim`) or
sweeps (:mod:`fastsched.sweep`) at start-up, and a command pays only for what it uses.

Examples
--------
>>> import fastsched
>>> fastsched.PolluxPolicy.__module__
'fastsched.policy.pollux'
"""

from __future__ import annotations

import importlib

from fastsched._version import __version__

# name -> module that defines it, imported on first use (PEP 562): ``import fastsched`` (and so
# any ``import fastsched.<module>``) loads nothing else.
_LAZY = {
    "GoodputFunction": "fastsched.goodput",
    "GradParams": "fastsched.goodput",
    "PerfParams": "fastsched.goodput",
    "SpeedupFunction": "fastsched.goodput",
    "fit_perf_params": "fastsched.goodput",
    "JobInfo": "fastsched.policy",
    "NodeInfo": "fastsched.policy",
    "PolluxPolicy": "fastsched.policy",
    "Case": "fastsched.costmodel",
    "Cost": "fastsched.costmodel",
    "CostModel": "fastsched.costmodel",
    "Program": "fastsched.costmodel",
    "estimate_cost": "fastsched.costmodel",
    "load_case": "fastsched.costmodel",
    "simulate": "fastsched.sim",
    "SimulationResult": "fastsched.sim",
    "run_sweep": "fastsched.sweep",
}
# Subpackages reachable as attributes after a bare ``import fastsched``.
_SUBPACKAGES = ("costmodel", "cuda", "goodput", "policy", "sim", "sweep")

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"fastsched.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fastsched' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBPACKAGES))
