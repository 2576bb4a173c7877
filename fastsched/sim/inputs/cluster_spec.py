"""Cluster descriptions: node groups of one GPU type each.

A cluster is a list of node groups ``(gpu_type, count, gpus_per_node)``. Nodes are numbered
``0 .. N-1`` in group order, so node ids of one type are contiguous. Written on the command
line as ``6xaws,3xrtx,2xdgx-ext`` (GPUs per node from the type, see :data:`GPU_TYPES`) or as
a TOML/JSON file::

    [[group]]                       # TOML; JSON: {"groups": [{...}, ...]} or a bare list
    type = "aws"
    count = 6
    gpus_per_node = 4               # optional for a known type

A job never spans two GPU types; policies read :attr:`ClusterSpec.node_types`.
"""

from __future__ import annotations

import numbers
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from fastsched._datafile import read_data_file
from fastsched.catalog import gpus as gpu_catalog
from fastsched.policy.types import NodeInfo
from fastsched.sim.inputs.preflight import MAX_GPUS

__all__ = ["GPU_TYPES", "NodeGroup", "ClusterSpec", "parse_cluster", "homogeneous_cluster", "MAX_CLUSTER_GPUS"]

#: Most GPUs a cluster description may hold, checked before its per-node tables are built (a
#: count of 10**12 would otherwise exhaust memory first): the simulator's limit,
#: :data:`fastsched.sim.inputs.preflight.MAX_GPUS`.
MAX_CLUSTER_GPUS = MAX_GPUS

#: GPUs per node of the GPU types of the Sia traces (file suffixes of ``placements-<type>.csv``).
#: Any name of :mod:`fastsched.catalog.gpus` is known too (``t4`` is read as ``aws``).
GPU_TYPES = {"aws": 4, "rtx": 8, "dgx-ext": 8, "azure": 8, "quad": 4, "dgx": 8}

#: Type name of a cluster given as ``nodes x gpus`` (no GPU type named).
DEFAULT_TYPE = "gpu"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class NodeGroup(NamedTuple):
    """``count`` nodes of ``gpus_per_node`` GPUs of type ``gpu_type``.

    Examples
    --------
    >>> NodeGroup("aws", 6, 4).gpus
    24
    """

    gpu_type: str
    count: int
    gpus_per_node: int

    @property
    def gpus(self) -> int:
        """GPUs in the group."""
        return self.count * self.gpus_per_node


class ClusterSpec:
    """A cluster as node groups of one GPU type each.

    Parameters
    ----------
    groups : sequence of NodeGroup or (type, count, gpus_per_node)
        At least one group; counts and GPUs per node >= 1. Two groups may share a type
        only with the same GPUs per node.

    Examples
    --------
    >>> spec = ClusterSpec([("aws", 2, 4), ("rtx", 1, 8)])
    >>> spec.types, spec.num_nodes, spec.total_gpus
    (('aws', 'rtx'), 3, 16)
    >>> spec.node_types
    ('aws', 'aws', 'rtx')
    >>> spec.gpus_by_type
    {'aws': 8, 'rtx': 8}
    >>> str(spec)
    '2xaws,1xrtx'
    """

    def __init__(self, groups):
        out = []
        for i, g in enumerate(groups):
            try:  # a string would unpack into its letters: 'aws' -> ('a', 'w', 's')
                gpu_type, count, gpn = (None,) if isinstance(g, (str, bytes)) else g
            except (TypeError, ValueError):
                raise ValueError(f"node group {i}: expected (type, count, gpus_per_node), got {g!r}") from None
            if not isinstance(gpu_type, str) or not _NAME.match(gpu_type):
                raise ValueError(f"node group {i}: bad GPU type name {gpu_type!r}")
            for what, v in (("count", count), ("gpus_per_node", gpn)):
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < 1:
                    raise ValueError(f"node group {i} ({gpu_type}): {what} must be an integer >= 1, got {v!r}")
            out.append(NodeGroup(gpu_type, int(count), int(gpn)))  # numpy integers as Python ints
        if not out:
            raise ValueError("a cluster needs at least one node group")
        total = sum(g.gpus for g in out)  # before the per-node tables below are built
        if total > MAX_CLUSTER_GPUS:
            raise ValueError(
                f"the cluster has {total} GPUs ({', '.join(f'{g.count}x{g.gpu_type}' for g in out)}), more than the "
                f"simulator's limit of {MAX_CLUSTER_GPUS}"
            )
        per_type: dict = {}
        for g in out:
            if per_type.setdefault(g.gpu_type, g.gpus_per_node) != g.gpus_per_node:
                raise ValueError(
                    f"GPU type {g.gpu_type!r} appears with {per_type[g.gpu_type]} and {g.gpus_per_node} GPUs per node"
                )
        self.groups: tuple[NodeGroup, ...] = tuple(out)
        self.types: tuple[str, ...] = tuple(per_type)
        self.gpus_per_node_by_type: dict[str, int] = per_type
        self.node_types: tuple[str, ...] = tuple(g.gpu_type for g in out for _ in range(g.count))
        self.node_gpus: tuple[int, ...] = tuple(g.gpus_per_node for g in out for _ in range(g.count))
        self.gpus_by_type: dict[str, int] = {t: 0 for t in self.types}
        self.nodes_by_type: dict[str, list[int]] = {t: [] for t in self.types}
        for i, t in enumerate(self.node_types):
            self.gpus_by_type[t] += self.node_gpus[i]
            self.nodes_by_type[t].append(i)

    @property
    def num_nodes(self) -> int:
        """Number of nodes."""
        return len(self.node_types)

    @property
    def total_gpus(self) -> int:
        """Number of GPUs."""
        return sum(self.node_gpus)

    @property
    def is_homogeneous(self) -> bool:
        """True with a single GPU type."""
        return len(self.types) == 1

    def nodes(self) -> dict[int, int]:
        """``{node id: GPUs}``, the form policies receive.

        Examples
        --------
        >>> ClusterSpec([("aws", 2, 4), ("rtx", 1, 8)]).nodes()
        {0: 4, 1: 4, 2: 8}
        """
        return dict(enumerate(self.node_gpus))

    def node_infos(self, resource="nvidia.com/gpu") -> dict:
        """``{node id: NodeInfo}`` for the policy API, each node carrying its GPU type.

        Examples
        --------
        >>> infos = ClusterSpec([("aws", 1, 4), ("rtx", 1, 8)]).node_infos()
        >>> infos[1]
        NodeInfo(resources={'nvidia.com/gpu': 8}, preemptible=False, gpu_type='rtx')
        """
        return {
            i: NodeInfo({resource: g}, preemptible=False, gpu_type=t)
            for i, (g, t) in enumerate(zip(self.node_gpus, self.node_types, strict=True))
        }

    def max_gpus_per_type(self) -> int:
        """GPUs of the largest type (the most one job can get).

        Examples
        --------
        >>> ClusterSpec([("aws", 2, 4), ("rtx", 1, 4)]).max_gpus_per_type()
        8
        """
        return max(self.gpus_by_type.values())

    def __eq__(self, other) -> bool:
        return isinstance(other, ClusterSpec) and self.groups == other.groups

    def __hash__(self) -> int:
        return hash(self.groups)

    def __str__(self) -> str:
        # Round-trips through parse_cluster: GPUs per node spelled out unless the type's default.
        return ",".join(
            f"{g.count}x{g.gpu_type}" + ("" if _default_gpn(g.gpu_type) == g.gpus_per_node else f":{g.gpus_per_node}")
            for g in self.groups
        )

    def __repr__(self) -> str:
        return f"ClusterSpec({[tuple(g) for g in self.groups]!r})"

    def to_dict(self) -> dict:
        """JSON-ready ``{"groups": [{"type", "count", "gpus_per_node"}, ...]}``.

        Examples
        --------
        >>> ClusterSpec([("aws", 1, 4)]).to_dict()
        {'groups': [{'type': 'aws', 'count': 1, 'gpus_per_node': 4}]}
        """
        return {
            "groups": [{"type": g.gpu_type, "count": g.count, "gpus_per_node": g.gpus_per_node} for g in self.groups]
        }


def homogeneous_cluster(nodes, gpus, gpu_type=DEFAULT_TYPE) -> ClusterSpec:
    """``nodes`` nodes of ``gpus`` GPUs of one type.

    Examples
    --------
    >>> str(homogeneous_cluster(16, 4))
    '16xgpu:4'
    """
    return ClusterSpec([(gpu_type, nodes, gpus)])


def _known(gpu_type, where, catalog=None):
    if not isinstance(gpu_type, str):
        raise ValueError(f"{where}: type must be a GPU type name, got {gpu_type!r}")
    gpn = GPU_TYPES.get(gpu_type) if catalog is None else None
    if gpn is None:
        try:
            gpn = gpu_catalog.gpu_type(gpu_type, catalog).gpus_per_node
        except ValueError:
            known = gpu_catalog.known_names(catalog)
            raise ValueError(f"{where}: unknown GPU type {gpu_type!r}; known types: {known}") from None
    return gpn


def _default_gpn(gpu_type):
    try:
        return _known(gpu_type, "")
    except ValueError:
        return None


def _type_name(gpu_type, catalog=None):
    # A catalogued name or alias becomes its trace name (t4 -> aws), so traces keep being read
    # from placements-<suffix>.csv; other names (user types given GPUs per node) stay as written.
    try:
        return gpu_catalog.trace_name(gpu_type, catalog)
    except ValueError:
        return gpu_type


def _parse_string(text: str) -> ClusterSpec:
    groups = []
    for part in text.split(","):
        item = part.strip()
        m = re.fullmatch(r"(\d+)\s*[xX*]\s*([A-Za-z0-9][A-Za-z0-9_.-]*)(?::(\d+))?", item)
        if m is None:
            raise ValueError(
                f"cluster spec {text!r}: cannot read {part!r}; expected COUNTxTYPE[:GPUS_PER_NODE], e.g. '6xaws,3xrtx'"
            )
        count, gpu_type, gpn = int(m.group(1)), m.group(2), m.group(3)
        if count < 1:
            raise ValueError(f"cluster spec {text!r}: {part!r} has no nodes")
        if gpn is None:
            gpn = _known(gpu_type, f"cluster spec {text!r}")
        elif int(gpn) < 1:
            raise ValueError(f"cluster spec {text!r}: {part!r} has no GPUs per node")
        groups.append((_type_name(gpu_type), count, int(gpn)))
    return ClusterSpec(groups)


def _parse_file(path: Path) -> ClusterSpec:
    data = read_data_file(path, what="cluster file")
    catalog = None
    if isinstance(data, dict) and "gpu_types" in data:  # user types / overrides of the catalogue
        catalog = gpu_catalog.with_types(data["gpu_types"])
    if isinstance(data, dict):
        items = data.get("group", data.get("groups"))
        if items is None:
            raise ValueError(f"{path}: expected a 'group' (TOML) or 'groups' (JSON) list of node groups")
    else:
        items = data
    if not isinstance(items, list) or not items:
        raise ValueError(f"{path}: the node groups must be a non-empty list, got {items!r}")
    groups = []
    for i, item in enumerate(items):
        where = f"{path}: node group {i}"
        if not isinstance(item, dict):
            raise ValueError(f"{where}: expected a table/object, got {item!r}")
        extra = sorted(set(item) - {"type", "count", "gpus_per_node"})
        if extra:
            raise ValueError(f"{where}: unknown key(s) {extra}; allowed: type, count, gpus_per_node")
        if "type" not in item or "count" not in item:
            raise ValueError(f"{where}: needs 'type' and 'count', got {item!r}")
        gpu_type = item["type"]
        if not isinstance(gpu_type, str) or not _NAME.match(gpu_type):
            raise ValueError(f"{where}: type must be a GPU type name, got {gpu_type!r}")
        gpn = item.get("gpus_per_node")
        if gpn is None:
            gpn = _known(gpu_type, where, catalog)
        for what, v in (("count", item["count"]), ("gpus_per_node", gpn)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{where}: {what} must be an integer >= 1, got {v!r}")
            if v > MAX_CLUSTER_GPUS:
                raise ValueError(f"{where}: {what} {v} is more than the simulator's limit of {MAX_CLUSTER_GPUS} GPUs")
        groups.append((_type_name(gpu_type, catalog), item["count"], gpn))
    try:
        return ClusterSpec(groups)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def parse_cluster(spec) -> ClusterSpec:
    """Read a cluster description.

    Parameters
    ----------
    spec : str, path, ClusterSpec or sequence of (type, count, gpus_per_node)
        ``"6xaws,3xrtx,2xdgx-ext"`` (GPUs per node from :data:`GPU_TYPES`, or given as
        ``"2xmygpu:8"``), a path to a ``.toml``/``.json`` file of node groups, a ready
        :class:`ClusterSpec`, or its groups.

    Raises
    ------
    ValueError
        A malformed part (quoted), an unknown GPU type without ``gpus_per_node`` (naming the
        known types), bad counts.
    FileNotFoundError
        A path that does not exist.

    Examples
    --------
    >>> spec = parse_cluster("6xaws,3xrtx,2xdgx-ext")
    >>> spec.gpus_by_type
    {'aws': 24, 'rtx': 24, 'dgx-ext': 16}
    >>> str(parse_cluster("6xt4,3xrtx2080ti,2xa100-40gb,1xh100"))  # catalogue names; Sia types by suffix
    '6xaws,3xrtx,2xdgx-ext,1xh100'
    >>> parse_cluster("2xzz100")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: cluster spec '2xzz100': unknown GPU type 'zz100'; known types: [...]
    >>> parse_cluster("2xzz100:8").total_gpus
    16
    """
    if isinstance(spec, ClusterSpec):
        return spec
    if isinstance(spec, Path) or (isinstance(spec, str) and spec.lower().endswith((".toml", ".json"))):
        path = Path(spec)
        if not path.is_file():
            raise FileNotFoundError(f"cluster file not found: {path}")
        return _parse_file(path)
    if isinstance(spec, str):
        if not spec.strip():
            raise ValueError("cluster spec is empty")
        return _parse_string(spec)
    if isinstance(spec, (list, tuple)):
        return ClusterSpec(spec)
    raise TypeError(f"cluster must be a spec string, a path or a ClusterSpec, got {type(spec).__name__}")
