"""Simulator scheduling policies, one module per policy (re-exports only).

:func:`make_policy` (in :mod:`~fastsched.sim.policies.registry`) builds a policy from its name
(:data:`POLICY_NAMES`); the base class is :class:`~fastsched.sim.policies.base.SimPolicy`.
"""

from __future__ import annotations

from fastsched._lazy import lazy_exports

# Public name -> defining module, imported on first use: importing this package (or a module
# inside it) loads nothing else.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "SimPolicy": "fastsched.sim.policies.base",
        "OptimusPolicy": "fastsched.sim.policies.baselines",
        "TiresiasPolicy": "fastsched.sim.policies.baselines",
        "GavelPolicy": "fastsched.sim.policies.gavel",
        "LinearSpeedup": "fastsched.sim.policies.pollux",
        "PolluxSimPolicy": "fastsched.sim.policies.pollux",
        "RebasedSpeedup": "fastsched.sim.policies.pollux",
        "POLICY_NAMES": "fastsched.sim.policies.registry",
        "POLICY_OPTIONS": "fastsched.sim.policies.registry",
        "make_policy": "fastsched.sim.policies.registry",
        "SiaPolicy": "fastsched.sim.policies.sia",
    },
)

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
