"""Cluster simulator: replay a workload on N nodes x G GPUs under a scheduling policy.

Public: :func:`simulate` (returns a :class:`SimulationResult`), the application models
(:class:`TraceApplication`, :func:`load_applications`, the builtin profiles), workloads
(:func:`read_workload`, :class:`WorkloadJob`) and the pieces of the loop (:class:`Job`,
:class:`Cluster`) for custom experiments. Clusters of several GPU types: :func:`parse_cluster`,
:class:`ClusterSpec`, per-type models (:class:`HeteroApplication`, :class:`HeteroJob`,
:func:`load_hetero_applications`); the field's metrics: :func:`compute_metrics`.
"""

from fastsched._lazy import lazy_exports, moved_modules

# Public name -> defining module, imported on first use: importing this package (or a module
# inside it) loads nothing else.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "PRESETS": "fastsched.sim.presets",
        "simulate": "fastsched.sim.api",
        "Cluster": "fastsched.sim.engine.cluster",
        "ClusterSpec": "fastsched.sim.inputs.cluster_spec",
        "parse_cluster": "fastsched.sim.inputs.cluster_spec",
        "HeteroApplication": "fastsched.sim.truth.per_type",
        "HeteroJob": "fastsched.sim.engine.hetero_job",
        "load_hetero_applications": "fastsched.sim.truth.per_type",
        "Job": "fastsched.sim.engine.job",
        "compute_metrics": "fastsched.sim.results.metrics",
        "JobRecord": "fastsched.sim.results.result",
        "SimulationResult": "fastsched.sim.results.result",
        "Application": "fastsched.sim.truth.traces",
        "TraceApplication": "fastsched.sim.truth.traces",
        "load_application": "fastsched.sim.truth.traces",
        "load_applications": "fastsched.sim.truth.traces",
        "WorkloadJob": "fastsched.sim.inputs.workload",
        "read_workload": "fastsched.sim.inputs.workload",
        "write_workload": "fastsched.sim.inputs.workload",
    },
)

# The public modules before the simulator was split by role (issue 36) stay importable under
# their old names: ``fastsched.sim.workload`` is ``fastsched.sim.inputs.workload``, the same
# module object, and ``python -m fastsched.sim.derive`` still runs.
moved_modules(
    __name__,
    {
        "workload": "inputs.workload",
        "scale": "inputs.scale",
        "llm_workload": "inputs.llm_workload",
        "cluster_spec": "inputs.cluster_spec",
        "preflight": "inputs.preflight",
        "traces": "truth.traces",
        "hetero_apps": "truth.per_type",
        "builtin": "truth.builtin",
        "derive": "truth.derive",
        "oracle": "truth.oracle",
        "job": "engine.job",
        "hetero": "engine.hetero_job",
        "cluster": "engine.cluster",
        "result": "results.result",
        "metrics": "results.metrics",
        "isolated": "results.isolated",
        "plot": "results.plot",
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
