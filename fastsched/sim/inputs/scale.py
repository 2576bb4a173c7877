"""Workloads and clusters k times larger: the setting of Sia's scaling study (its Fig. 9).

The study grows the heterogeneous cluster k-fold and merges k workloads of the same arrival
rate. :func:`scale_workload` merges k workload files (taken in turn from the ones given, so
one file merged k times is k copies of it), each copy's job names suffixed with its copy
number; :func:`scale_cluster` multiplies every node group's node count by k. ``fastsched
simulate --scale K`` applies both.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from fastsched.sim.inputs.cluster_spec import ClusterSpec, NodeGroup, parse_cluster
from fastsched.sim.inputs.workload import WorkloadJob, read_workload

__all__ = ["scale_workload", "scale_cluster", "workload_files"]


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return k


def workload_files(folder) -> list[Path]:
    """List the workload CSVs of ``folder`` in natural order (``workload-2`` before ``workload-10``).

    Raises
    ------
    FileNotFoundError
        No such folder, or no CSV in it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for n in (10, 2, 1):
    ...     _ = (root / f"workload-{n}.csv").write_text("name,time,application,num_replicas,batch_size")
    >>> [p.name for p in workload_files(root)]
    ['workload-1.csv', 'workload-2.csv', 'workload-10.csv']
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"workload folder not found: {folder}")
    files = [p for p in folder.iterdir() if p.suffix == ".csv" and p.is_file()]
    if not files:
        raise FileNotFoundError(f"{folder}: no workload CSV in it")
    return sorted(files, key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)])


def scale_workload(workloads, k) -> list[WorkloadJob]:
    """Merge ``k`` workloads, taken in turn from ``workloads``; copy ``c`` suffixes its names ``-x<c>``.

    Parameters
    ----------
    workloads : str, path, list of WorkloadJob, or a list of those
        One workload (a CSV path, a folder of CSVs, or rows) or several; a folder stands for
        its CSVs in natural order.
    k : int
        Copies to merge (>= 1). ``k = 1`` returns the first workload's rows unchanged.

    Returns
    -------
    list of WorkloadJob
        Sorted by submission time; ties keep copy order, then each file's row order.

    Examples
    --------
    >>> from fastsched.sim import WorkloadJob
    >>> a = [WorkloadJob("j", 5, "cifar10", 1, 128)]
    >>> b = [WorkloadJob("j", 0, "ncf", 1, 256)]
    >>> [(w.name, w.time) for w in scale_workload([a, b], 3)]
    [('j-x1', 0), ('j-x0', 5), ('j-x2', 5)]
    >>> scale_workload([a], 1) == a
    True
    """
    k = _check_k(k)
    sources = _sources(workloads)
    if k == 1:
        return _rows(sources[0])
    merged = []
    for c in range(k):
        for i, w in enumerate(_rows(sources[c % len(sources)])):
            merged.append((w.time, c, i, WorkloadJob(f"{w.name}-x{c}", *_fields(w))))
    merged.sort(key=lambda t: t[:3])
    return [t[3] for t in merged]


def _fields(w):
    return w.time, w.application, w.num_replicas, w.batch_size, w.category


def _sources(workloads) -> list:
    if isinstance(workloads, (str, os.PathLike)):
        workloads = [workloads]
    elif isinstance(workloads, list) and workloads and isinstance(workloads[0], WorkloadJob):
        workloads = [workloads]
    if not isinstance(workloads, (list, tuple)) or not workloads:
        raise TypeError("workloads must be a path, a list of WorkloadJob, or a non-empty list of those")
    out = []
    for src in workloads:
        if isinstance(src, (str, os.PathLike)) and Path(src).is_dir():
            out.extend(workload_files(src))
        else:
            out.append(src)
    return out


def _rows(src) -> list:
    if isinstance(src, (str, os.PathLike)):
        return read_workload(src)
    rows = list(src)
    if not rows or not all(isinstance(w, WorkloadJob) for w in rows):
        raise TypeError("each workload must be a CSV path or a non-empty list of WorkloadJob")
    return rows


def scale_cluster(cluster, k) -> ClusterSpec:
    """Return the cluster with every node group's node count multiplied by ``k``.

    Examples
    --------
    >>> str(scale_cluster("6xaws,3xrtx,2xdgx-ext", 4))
    '24xaws,12xrtx,8xdgx-ext'
    """
    k = _check_k(k)
    spec = cluster if isinstance(cluster, ClusterSpec) else parse_cluster(cluster)
    return ClusterSpec([NodeGroup(g.gpu_type, g.count * k, g.gpus_per_node) for g in spec.groups])
