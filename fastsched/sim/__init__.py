"""Cluster simulator: replay a workload on N nodes x G GPUs under a scheduling policy.

Public: :func:`simulate` (returns a :class:`SimulationResult`), the application models
(:class:`TraceApplication`, :func:`load_applications`, the builtin profiles), workloads
(:func:`read_workload`, :class:`WorkloadJob`) and the pieces of the loop (:class:`Job`,
:class:`Cluster`) for custom experiments. Clusters of several GPU types: :func:`parse_cluster`,
:class:`ClusterSpec`, per-type models (:class:`HeteroApplication`, :class:`HeteroJob`,
:func:`load_hetero_applications`); the field's metrics: :func:`compute_metrics`.
"""

from fastsched._lazy import lazy_exports

# Public name -> defining module, imported on first use: importing this package (or a module
# inside it) loads nothing else.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "PRESETS": "fastsched.sim.presets",
        "simulate": "fastsched.sim.api",
        "Cluster": "fastsched.sim.cluster",
        "ClusterSpec": "fastsched.sim.cluster_spec",
        "parse_cluster": "fastsched.sim.cluster_spec",
        "HeteroApplication": "fastsched.sim.hetero",
        "HeteroJob": "fastsched.sim.hetero",
        "load_hetero_applications": "fastsched.sim.hetero",
        "Job": "fastsched.sim.job",
        "compute_metrics": "fastsched.sim.metrics",
        "JobRecord": "fastsched.sim.result",
        "SimulationResult": "fastsched.sim.result",
        "Application": "fastsched.sim.traces",
        "TraceApplication": "fastsched.sim.traces",
        "load_application": "fastsched.sim.traces",
        "load_applications": "fastsched.sim.traces",
        "WorkloadJob": "fastsched.sim.workload",
        "read_workload": "fastsched.sim.workload",
        "write_workload": "fastsched.sim.workload",
    },
)

__all__ = [
    "simulate",
    "PRESETS",
    "SimulationResult",
    "JobRecord",
    "Application",
    "TraceApplication",
    "load_application",
    "load_applications",
    "WorkloadJob",
    "read_workload",
    "write_workload",
    "Job",
    "Cluster",
    "ClusterSpec",
    "parse_cluster",
    "HeteroApplication",
    "HeteroJob",
    "load_hetero_applications",
    "compute_metrics",
]
