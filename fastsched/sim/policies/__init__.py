"""Simulator scheduling policies, one module per policy (re-exports only).

:func:`make_policy` (in :mod:`~fastsched.sim.policies.registry`) builds a policy from its name
(:data:`POLICY_NAMES`, ``"package.module:Class"`` or an installed plugin's name); the base class
is :class:`~fastsched.sim.policies.base.SimPolicy`, whose module documents the job and cluster
attributes a policy may rely on (:class:`~fastsched.sim.policies.base.JobView`).
"""

from __future__ import annotations

from fastsched.sim.policies.base import JobView, SimPolicy, free_gpus, pack
from fastsched.sim.policies.baselines import OptimusPolicy, TiresiasPolicy
from fastsched.sim.policies.gandiva import GandivaPolicy
from fastsched.sim.policies.gavel import GavelPolicy
from fastsched.sim.policies.gavel_objectives import LasPolicy, MaxSumThroughputPolicy, MinTotalDurationPolicy
from fastsched.sim.policies.pollux import LinearSpeedup, PolluxSimPolicy, RebasedSpeedup
from fastsched.sim.policies.queue import AlloxPolicy, FifoPolicy, SrtfPolicy
from fastsched.sim.policies.registry import (
    ENTRY_POINT_GROUP,
    POLICY_NAMES,
    POLICY_OPTIONS,
    load_policy,
    make_policy,
    plugin_names,
)
from fastsched.sim.policies.shockwave import ShockwavePolicy
from fastsched.sim.policies.sia import SiaPolicy
from fastsched.sim.policies.themis import ThemisPolicy

__all__ = [
    "SimPolicy",
    "JobView",
    "free_gpus",
    "pack",
    "POLICY_NAMES",
    "make_policy",
    "load_policy",
    "plugin_names",
    "ENTRY_POINT_GROUP",
    "PolluxSimPolicy",
    "RebasedSpeedup",
    "LinearSpeedup",
    "TiresiasPolicy",
    "OptimusPolicy",
    "SiaPolicy",
    "GavelPolicy",
    "FifoPolicy",
    "SrtfPolicy",
    "LasPolicy",
    "ThemisPolicy",
    "MinTotalDurationPolicy",
    "MaxSumThroughputPolicy",
    "GandivaPolicy",
    "AlloxPolicy",
    "ShockwavePolicy",
    "POLICY_OPTIONS",
]
