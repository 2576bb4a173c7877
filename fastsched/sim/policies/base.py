"""Scheduling policies as the simulator sees them: the base class.

A :class:`SimPolicy` is called once per scheduling round with the active jobs (simulator
:class:`~fastsched.sim.job.Job` objects, in workload order), the nodes (``{node id: GPUs}``)
and the current allocations (``{job name: [node id per replica]}``); it returns the new
allocations in the same form. The Pollux adapter lives in :mod:`fastsched.sim.policies.pollux`,
the baselines in :mod:`fastsched.sim.policies.baselines`, the registry in
:mod:`fastsched.sim.policies`.
"""

from __future__ import annotations

__all__ = ["SimPolicy"]


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
