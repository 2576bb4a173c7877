"""Simulator scheduling policies, one module per policy (re-exports only).

:func:`make_policy` (in :mod:`~fastsched.sim.policies.registry`) builds a policy from its name
(:data:`POLICY_NAMES`); the base class is :class:`~fastsched.sim.policies.base.SimPolicy`.
"""

from __future__ import annotations

from fastsched.sim.policies.base import SimPolicy
from fastsched.sim.policies.baselines import OptimusPolicy, TiresiasPolicy
from fastsched.sim.policies.gavel import GavelPolicy
from fastsched.sim.policies.pollux import LinearSpeedup, PolluxSimPolicy, RebasedSpeedup
from fastsched.sim.policies.registry import POLICY_NAMES, POLICY_OPTIONS, make_policy
from fastsched.sim.policies.sia import SiaPolicy

__all__ = [
    "SimPolicy",
    "POLICY_NAMES",
    "make_policy",
    "PolluxSimPolicy",
    "RebasedSpeedup",
    "LinearSpeedup",
    "TiresiasPolicy",
    "OptimusPolicy",
    "SiaPolicy",
    "GavelPolicy",
    "POLICY_OPTIONS",
]
