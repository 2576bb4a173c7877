"""Cluster simulator: replay a workload on N nodes x G GPUs under a scheduling policy.

Public: :func:`simulate` (returns a :class:`SimulationResult`), the application models
(:class:`TraceApplication`, :func:`load_applications`, the builtin profiles), workloads
(:func:`read_workload`, :class:`WorkloadJob`) and the pieces of the loop (:class:`Job`,
:class:`Cluster`) for custom experiments. Clusters of several GPU types: :func:`parse_cluster`,
:class:`ClusterSpec`, per-type models (:class:`HeteroApplication`, :class:`HeteroJob`,
:func:`load_hetero_applications`); the field's metrics: :func:`compute_metrics`.
"""

from fastsched.sim.api import PRESETS, simulate
from fastsched.sim.cluster import Cluster
from fastsched.sim.cluster_spec import ClusterSpec, parse_cluster
from fastsched.sim.hetero import HeteroApplication, HeteroJob, load_hetero_applications
from fastsched.sim.job import Job
from fastsched.sim.metrics import compute_metrics
from fastsched.sim.result import JobRecord, SimulationResult
from fastsched.sim.traces import Application, TraceApplication, load_application, load_applications
from fastsched.sim.workload import WorkloadJob, read_workload, write_workload

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
