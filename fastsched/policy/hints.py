"""Build a :class:`JobInfo` from an AdaptDLJob-like plain dict (no kubernetes dependency).

Mirrors ``adaptdl_sched.allocator.AdaptDLAllocator._get_job_info``: resources are the pod
requests of the job's template, ``max_replicas`` follows the profiling and batch-size rules,
and a job without performance hints gets the linear speedup ``lambda n, r: r``.
"""

from __future__ import annotations

import copy
import datetime
import math

from fastsched.goodput import GoodputFunction, GradParams, PerfParams, SpeedupFunction
from fastsched.policy.types import JobInfo

__all__ = ["get_job_info", "get_pod_requests", "set_default_resources", "linear_speedup"]

# Kubernetes overcommits these, so their *requests* count; every other resource (GPUs,
# extended resources) is requested through its limit.
_OVERCOMMITABLE = ("cpu", "memory", "ephemeral-storage")


def linear_speedup(num_nodes, num_replicas):
    """Speedup of a job without hints: linear in replicas (AdaptDL's ``lambda n, r: r``).

    Examples
    --------
    >>> from fastsched.policy import linear_speedup
    >>> linear_speedup(2, 8)
    8
    """
    return num_replicas


def _discretize(name: str, value) -> int:
    """Kubernetes quantity → integer in the smallest unit (mCPU for ``cpu``)."""
    factor = 1000 if name == "cpu" else 1
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("m"):
            factor /= 1000
            text = text[:-1]
        else:
            for idx, unit in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")):
                if text.endswith(unit):
                    factor *= 1024 ** (idx + 1)
                    text = text[:-2]
                    break
            else:
                for idx, unit in enumerate(("k", "M", "G", "T", "P", "E")):
                    if text.endswith(unit):
                        factor *= 1000 ** (idx + 1)
                        text = text[:-1]
                        break
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"resource {name!r}: cannot parse quantity {value!r}") from None
    return int(math.ceil(float(value) * factor))


def set_default_resources(pod_spec: dict, default_resources: dict | None = None) -> dict:
    """Return a copy of ``pod_spec`` whose first container has ``default_resources`` set.

    ``default_resources`` is ``{"requests": {...}, "limits": {...}}`` (AdaptDL reads it from
    its configuration; here it is an argument). Existing values win.

    Examples
    --------
    >>> from fastsched.policy.hints import set_default_resources
    >>> set_default_resources({"containers": [{}]}, {"limits": {"nvidia.com/gpu": 1}})
    {'containers': [{'resources': {'limits': {'nvidia.com/gpu': 1}}}]}
    """
    pod_spec = copy.deepcopy(pod_spec)
    if default_resources:
        container = pod_spec["containers"][0]
        container.setdefault("resources", {})
        for kind in ("requests", "limits"):
            if default_resources.get(kind) is not None:
                container["resources"].setdefault(kind, {})
                for k, v in default_resources[kind].items():
                    container["resources"][kind].setdefault(k, v)
    return pod_spec


def get_pod_requests(pod_spec: dict) -> dict:
    """Aggregate integer resource requests of all containers of a pod (plus ``pods: 1``).

    CPU is counted in millicores and memory in bytes; GPUs and other extended resources through
    their limits.

    Examples
    --------
    >>> from fastsched.policy.hints import get_pod_requests
    >>> get_pod_requests({"containers": [{"resources": {
    ...     "requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": 1}}}]})
    {'pods': 1, 'cpu': 500, 'memory': 1073741824, 'nvidia.com/gpu': 1}
    """
    requests_out = {"pods": 1}
    for container in pod_spec.get("containers", []):
        resources = container.get("resources")
        if not resources:
            continue
        requests = resources.get("requests") or {}
        for key in _OVERCOMMITABLE:
            if requests.get(key) is not None:
                requests_out[key] = requests_out.get(key, 0) + _discretize(key, requests[key])
        limits = resources.get("limits") or {}
        for key, val in limits.items():
            if key not in _OVERCOMMITABLE and val is not None:
                requests_out[key] = requests_out.get(key, 0) + _discretize(key, val)
    return {k: v for k, v in requests_out.items() if v > 0}


def _parse_timestamp(value):
    if isinstance(value, datetime.datetime):
        return value
    if not isinstance(value, str):
        raise TypeError(f"metadata.creationTimestamp must be an ISO-8601 string, got {type(value).__name__}")
    text = value.strip()
    # datetime.fromisoformat accepts "Z" only from Python 3.11; normalise for older ones.
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"metadata.creationTimestamp is not ISO-8601: {value!r}") from None


def get_job_info(job: dict, default_resources: dict | None = None) -> JobInfo:
    """Build the :class:`JobInfo` of an AdaptDLJob given as a plain dict.

    Parameters
    ----------
    job : dict
        ``{"metadata": {"creationTimestamp": ISO-8601}, "spec": {"template": {"spec":
        pod_spec}, "minReplicas", "maxReplicas", "preemptible"}, "status": {"train": hints}}``.
        Hints: ``perfParams`` (the seven :class:`PerfParams` fields by name),
        ``gradParams`` (``norm``, ``var``), ``initBatchSize``, ``maxBatchSize``,
        ``localBszBounds``, ``gradientAccumulation``, ``maxProfiledReplicas``.
    default_resources : dict, optional
        Default ``requests``/``limits`` for the first container.

    Returns
    -------
    JobInfo
        ``max_replicas = max(2 * maxProfiledReplicas, 1)``, capped by ``spec.maxReplicas``,
        raised to ``minReplicas``, and for a preemptible job with hints lowered so that
        ``maxBatchSize / max_replicas >= localBszBounds[0]``. Without ``perfParams`` and
        ``initBatchSize`` hints (or for a non-preemptible job) the speedup is linear.

    Examples
    --------
    >>> from fastsched.policy import get_job_info
    >>> pod = {"containers": [{"resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    >>> hints = {
    ...     "perfParams": {"alpha_c": 0.121, "beta_c": 0.00568, "alpha_n": 0.0236, "beta_n": 0.00634,
    ...                    "alpha_r": 0.0118, "beta_r": 0.00317, "gamma": 1.14},
    ...     "gradParams": {"norm": 0.00136, "var": 0.000502},
    ...     "initBatchSize": 128, "maxBatchSize": 1280, "localBszBounds": [64, 256],
    ...     "maxProfiledReplicas": 2,
    ... }
    >>> job = {"metadata": {"creationTimestamp": "2024-01-01T00:00:00Z"},
    ...        "spec": {"template": {"spec": pod}, "maxReplicas": 8}, "status": {"train": hints}}
    >>> info = get_job_info(job)
    >>> info.resources, info.max_replicas, type(info.speedup_fn).__name__
    ({'pods': 1, 'nvidia.com/gpu': 1}, 4, 'SpeedupFunction')
    """
    spec = job["spec"]
    pod_spec = set_default_resources(spec["template"]["spec"], default_resources)
    resources = get_pod_requests(pod_spec)
    hints = (job.get("status") or {}).get("train") or {}
    max_replicas = max(2 * (hints.get("maxProfiledReplicas") or 0), 1)
    if spec.get("maxReplicas"):
        max_replicas = min(max_replicas, spec["maxReplicas"])
    min_replicas = spec.get("minReplicas", 0) or 0
    max_replicas = max(max_replicas, min_replicas)
    preemptible = spec.get("preemptible", True)
    if {"perfParams", "initBatchSize"} <= hints.keys() and preemptible:
        max_batch_size = hints.get("maxBatchSize") or hints["initBatchSize"]
        if hints.get("localBszBounds"):
            min_local_bsz = hints["localBszBounds"][0] or 1
            if max_batch_size < min_local_bsz * max_replicas:
                max_replicas = int(max_batch_size / min_local_bsz)
        perf_params = PerfParams(*[hints["perfParams"][k] for k in PerfParams._fields])
        if hints.get("gradParams"):
            grad_params = GradParams(hints["gradParams"]["norm"], hints["gradParams"]["var"])
        else:
            grad_params = GradParams(0.0, 1.0)
        goodput_fn = GoodputFunction(perf_params, grad_params, hints["initBatchSize"])
        bounds = hints.get("localBszBounds")
        speedup_fn = SpeedupFunction(
            goodput_fn,
            hints.get("maxBatchSize"),
            tuple(bounds) if bounds else None,
            hints.get("gradientAccumulation", False),
        )
    else:
        speedup_fn = linear_speedup
    creation_ts = _parse_timestamp(job["metadata"]["creationTimestamp"])
    return JobInfo(resources, speedup_fn, creation_ts, min_replicas, max_replicas, preemptible)


# AdaptDL's private name, kept for call sites ported from its allocator.
_get_job_info = get_job_info
