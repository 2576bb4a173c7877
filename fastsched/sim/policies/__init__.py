"""Simulator scheduling policies, one module per policy (re-exports only).

:func:`make_policy` (in :mod:`~fastsched.sim.policies.registry`) builds a policy from its name
(:data:`POLICY_NAMES`, ``"package.module:Class"`` or an installed plugin's name); the base class
is :class:`~fastsched.sim.policies.base.SimPolicy`, whose module documents the job and cluster
attributes a policy may rely on (:class:`~fastsched.sim.policies.base.JobView`).
"""

from fastsched._lazy import lazy_exports

# Public name -> defining module, imported on first use: importing this package (or a module
# inside it, such as .names for the command line) loads no policy.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "JobView": "fastsched.sim.policies.base",
        "SimPolicy": "fastsched.sim.policies.base",
        "free_gpus": "fastsched.sim.policies.base",
        "pack": "fastsched.sim.policies.base",
        "OptimusPolicy": "fastsched.sim.policies.baselines",
        "TiresiasPolicy": "fastsched.sim.policies.baselines",
        "GandivaPolicy": "fastsched.sim.policies.gandiva",
        "GavelPolicy": "fastsched.sim.policies.gavel",
        "LasPolicy": "fastsched.sim.policies.gavel_objectives",
        "MaxSumThroughputPolicy": "fastsched.sim.policies.gavel_objectives",
        "MinTotalDurationPolicy": "fastsched.sim.policies.gavel_objectives",
        "ThemisPolicy": "fastsched.sim.policies.themis",
        "LinearSpeedup": "fastsched.sim.policies.pollux",
        "PolluxSimPolicy": "fastsched.sim.policies.pollux",
        "RebasedSpeedup": "fastsched.sim.policies.pollux",
        "AlloxPolicy": "fastsched.sim.policies.queue",
        "FifoPolicy": "fastsched.sim.policies.queue",
        "SrtfPolicy": "fastsched.sim.policies.queue",
        "ENTRY_POINT_GROUP": "fastsched.sim.policies.names",
        "POLICY_NAMES": "fastsched.sim.policies.names",
        "POLICY_OPTIONS": "fastsched.sim.policies.names",
        "load_policy": "fastsched.sim.policies.registry",
        "make_policy": "fastsched.sim.policies.registry",
        "plugin_names": "fastsched.sim.policies.registry",
        "SiaPolicy": "fastsched.sim.policies.sia",
        "ShockwavePolicy": "fastsched.sim.policies.shockwave",
    },
)

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
