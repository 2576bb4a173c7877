"""Cluster simulator: replay a workload on N nodes x G GPUs under a scheduling policy.

Public: :func:`simulate` (returns a :class:`SimulationResult`), the application models
(:class:`TraceApplication`, :func:`load_applications`, the builtin profiles), workloads
(:func:`read_workload`, :class:`WorkloadJob`) and the pieces of the loop (:class:`Job`,
:class:`Cluster`) for custom experiments.
"""

from fastsched.sim.api import PRESETS, simulate
from fastsched.sim.cluster import Cluster
from fastsched.sim.job import Job
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
]
