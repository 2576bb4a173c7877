"""Scheduling policies as the simulator sees them, and the registry of policy names.

A :class:`SimPolicy` is called once per scheduling round with the active jobs (simulator
:class:`~fastsched.sim.job.Job` objects, in workload order), the nodes (``{node id: GPUs}``)
and the current allocations (``{job name: [node id per replica]}``); it returns the new
allocations in the same form. The Pollux adapter lives in :mod:`fastsched.sim.pollux`, the
baselines in :mod:`fastsched.sim.baselines`.
"""

from __future__ import annotations

__all__ = ["SimPolicy", "POLICY_NAMES", "make_policy"]

POLICY_NAMES = ("pollux", "tiresias", "optimus")


class SimPolicy:
    """Base class of simulator policies."""

    name = "policy"

    def job_kwargs(self, wjob, app) -> dict:
        """Extra :class:`~fastsched.sim.job.Job` arguments for a workload row and its app."""
        return {}

    def optimize(self, now, jobs, nodes, allocations) -> dict:  # pragma: no cover - interface
        """Return ``{job name: [node id per replica]}`` for the active ``jobs``."""
        raise NotImplementedError

    def desired_nodes(self):
        """Cluster size the policy asks for (autoscaling), or ``None``."""
        return None


def make_policy(name, **options) -> SimPolicy:
    """Build a simulator policy by name.

    Parameters
    ----------
    name : {"pollux", "tiresias", "optimus"} or SimPolicy
        A policy name, or a ready :class:`SimPolicy` (returned as is).
    **options
        Passed to the policy's constructor (Pollux only: ``p``, ``restart_penalty``,
        ``interference_avoidance``, ``seed``, ``fair_share``, ...).

    Raises
    ------
    ValueError
        For an unknown name.
    """
    if isinstance(name, SimPolicy):
        return name
    if name == "tiresias":
        from fastsched.sim.baselines import TiresiasPolicy

        return TiresiasPolicy()
    if name == "optimus":
        from fastsched.sim.baselines import OptimusPolicy

        return OptimusPolicy()
    if name == "pollux":
        from fastsched.sim.pollux import PolluxSimPolicy

        return PolluxSimPolicy(**options)
    raise ValueError(f"policy must be one of {list(POLICY_NAMES)}, got {name!r}")
