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
    """Base class of simulator policies.

    Attributes
    ----------
    name : str
        Registry name.
    heterogeneity_unaware : bool
        Jobs keep one merged throughput model for all GPU types (Pollux in Sia's study).
    needs_gpu_types : bool
        The policy works on GPU types (Sia, Gavel): on a plain ``nodes x gpus`` cluster the
        simulator gives it one type.
    default_interval : int or None
        Scheduling interval the policy is defined with (Gavel: 360 s), used when the caller
        gives none; ``None``: the preset's.
    cluster : ClusterSpec or None
        Set by :meth:`bind_cluster` before the first round.

    Examples
    --------
    A policy overrides :meth:`optimize` (and whatever else it needs):

    >>> from fastsched.sim.builtin import builtin_applications
    >>> from fastsched.sim.job import Job
    >>> class NodeZero(SimPolicy):
    ...     name = "node0"
    ...     def optimize(self, now, jobs, nodes, allocations):
    ...         return {job.name: [0] for job in jobs}
    >>> job = Job("a", builtin_applications()["cifar10"], 0)
    >>> NodeZero().optimize(0, [job], {0: 4}, {})
    {'a': [0]}
    >>> NodeZero().desired_nodes() is None
    True
    """

    name = "policy"
    heterogeneity_unaware = False
    needs_gpu_types = False
    default_interval = None
    cluster = None
    interval = 60

    def bind_cluster(self, spec, interval) -> None:
        """Receive the cluster (a :class:`~fastsched.sim.cluster_spec.ClusterSpec`) and the round length."""
        self.cluster = spec
        self.interval = interval

    def uses_requested_gpus(self, wjob) -> bool:
        """Tell whether the job runs on exactly its workload-requested GPU count under this policy."""
        return False

    def job_kwargs(self, wjob, app) -> dict:
        """Extra :class:`~fastsched.sim.job.Job` arguments for a workload row and its app."""
        return {}

    def optimize(self, now, jobs, nodes, allocations) -> dict:  # pragma: no cover - interface
        """Return ``{job name: [node id per replica]}`` for the active ``jobs``."""
        raise NotImplementedError

    def desired_nodes(self):
        """Cluster size the policy asks for (autoscaling), or ``None``."""
        return None
