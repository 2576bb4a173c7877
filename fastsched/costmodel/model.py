"""The cost model: ``CostModel`` (the seed's method names) and ``estimate_cost``.

Per rank: build the op graph arrays (:mod:`.graph`), cost communication ops from their
tensor and ring size (``merge_comm``), merge to a fixed point (``merge_linear`` +
``merge_branch``, one kernel), sum forward/backward/optimizer time
(``get_runtime_cost``), simulate memory (``get_mem``) and the pipeline
(``get_pipeline_time``). Each step is one hop to a numba kernel over arrays.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from fastsched._validate import check_choice, check_finite_scalar, check_int_scalar
from fastsched.costmodel._memory import static_and_peak
from fastsched.costmodel._merge import merge_fixed_point
from fastsched.costmodel._pipeline import simulate_pipeline
from fastsched.costmodel.graph import (
    BWD,
    DEFAULT_BANDWIDTH,
    FWD,
    OPTIM,
    RankGraph,
    build_rank_graph,
    comm_cost,
)
from fastsched.costmodel.program import Program

__all__ = ["Cost", "CostModel", "CostModelMode", "estimate_cost", "PipelineSchedule"]


class CostModelMode:
    """The seed's mode names (kept for familiarity; the model has one mode)."""

    DEFAULT = 0
    BENCHMARKING = 1
    ANALYSIS = 2
    MIXED = 3


@dataclass
class Cost:
    """Result of :func:`estimate_cost`.

    Attributes
    ----------
    runtime : float
        Pipeline time (ms) for ``microbatch_num`` microbatches, or the slowest rank's
        ``fwd + bwd + optim`` without a pipeline.
    static_mem, peak_mem : list of float
        Per rank, in bytes (or elements with ``mem_unit="elements"``).
    fwd_time, bwd_time, optim_time : list of float
        Per rank, after merging (ms).
    premerge : list of (fwd, bwd, optim)
        Per rank, plain sums of op cost + call overhead before merging.
    n_ops, nodes_after : list of int
        Per rank op count and node count at the merge fixed point.
    mem_unit : str
    """

    runtime: float = 0.0
    static_mem: list = field(default_factory=list)
    peak_mem: list = field(default_factory=list)
    fwd_time: list = field(default_factory=list)
    bwd_time: list = field(default_factory=list)
    optim_time: list = field(default_factory=list)
    premerge: list = field(default_factory=list)
    n_ops: list = field(default_factory=list)
    nodes_after: list = field(default_factory=list)
    mem_unit: str = "bytes"

    def to_dict(self) -> dict:
        """Plain-JSON form of every field."""
        return {
            "runtime": self.runtime,
            "static_mem": list(self.static_mem),
            "peak_mem": list(self.peak_mem),
            "fwd_time": list(self.fwd_time),
            "bwd_time": list(self.bwd_time),
            "optim_time": list(self.optim_time),
            "premerge_fwd_bwd_optim": [list(t) for t in self.premerge],
            "n_ops": list(self.n_ops),
            "nodes_after": list(self.nodes_after),
            "mem_unit": self.mem_unit,
        }


@dataclass
class PipelineSchedule:
    """Executed pipeline events (for plotting): arrays of equal length."""

    total: float
    stage: np.ndarray
    kind: np.ndarray  # 0 fwd, 1 bwd, 2 optim
    microbatch: np.ndarray
    start: np.ndarray
    end: np.ndarray


def _bandwidth(cluster) -> float:
    if cluster is None:
        return DEFAULT_BANDWIDTH
    if isinstance(cluster, numbers.Real) and not isinstance(cluster, bool):
        bw = cluster
    elif isinstance(cluster, Mapping) and "bandwidth" in cluster:
        bw = cluster["bandwidth"]
    elif hasattr(cluster, "bandwidth"):
        bw = cluster.bandwidth
    else:
        raise TypeError(
            f"cluster must be None, a bandwidth number, or have a 'bandwidth' (MB/ms), got {type(cluster).__name__}"
        )
    return check_finite_scalar("cluster.bandwidth", bw, low=0.0, low_open=True)


def _check_pp(pipeline_config, n_ranks):
    if pipeline_config is None:
        return None
    if not isinstance(pipeline_config, Sequence) or isinstance(pipeline_config, (str, bytes)):
        raise TypeError("pipeline_config must be a list of rank lists (stage -> ranks)")
    if len(pipeline_config) == 0:
        raise ValueError("pipeline_config must have at least one stage")
    out = []
    seen = set()
    for s, ranks in enumerate(pipeline_config):
        if not isinstance(ranks, Sequence) or isinstance(ranks, (str, bytes)) or not ranks:
            raise ValueError(f"pipeline_config[{s}] must be a non-empty list of ranks")
        st = []
        for r in ranks:
            r = check_int_scalar(f"pipeline_config[{s}] rank", r)
            if not 0 <= r < n_ranks:
                raise ValueError(f"pipeline_config[{s}] names rank {r}, but the program has {n_ranks} ranks")
            if r in seen:
                raise ValueError(f"pipeline_config: rank {r} appears in more than one stage")
            seen.add(r)
            st.append(r)
        out.append(st)
    return out


class CostModel:
    """Static cost model of a distributed program (the seed's interface).

    Parameters
    ----------
    mode : int, optional
        Accepted for compatibility; ignored.
    cluster : None, float, or object with ``bandwidth``
        Link bandwidth in the seed's unit (default 32.768: bytes / this = ms).
    batch_size : int or None
        Fills ``-1`` dimensions (B8).
    microbatch_num : int
        Microbatches of the pipeline simulation (>= 1).
    opcall_overhead : float
        ms added once per original op (B12).
    standalone_cost_data : None, mapping or list of mappings
        Computation op costs; one mapping per pipeline stage (or one for all). Keys may be
        ``desc_id`` ints, op ids or op types (B14); absent ops keep their own ``cost``.
    pipeline_config : None or list of rank lists
        Stage ``s`` -> ranks.
    mem_unit : {"bytes", "elements"}
        Memory unit (B9).
    comm_cost : {"model", "given"}
        Re-cost communication ops from tensor size and ring ("model", as the seed does),
        or keep each op's ``cost``.
    merge_order : {"parallel-first", "serial-first"}
        Which merge rule wins when both apply (see :mod:`fastsched.costmodel._merge`).
        "serial-first" (default) serialises every node that depends on one node first,
        which is what the seed's pass order does on most graphs (it reproduces the
        reference's runtimes); "parallel-first" is a series-parallel reduction in which
        parallel branches take the max of their costs before anything is serialised.
    """

    def __init__(
        self,
        mode=CostModelMode.BENCHMARKING,
        cluster=None,
        batch_size=1,
        microbatch_num=1,
        opcall_overhead=0.0,
        standalone_cost_data=None,
        pipeline_config=None,
        mem_unit="bytes",
        comm_cost="model",
        merge_order="serial-first",
    ):
        self.mode = mode
        self.merge_order = check_choice("merge_order", merge_order, {"parallel-first", "serial-first"})
        self.bandwidth = _bandwidth(cluster)
        self.cluster = cluster
        self.batch_size = None if batch_size is None else check_int_scalar("batch_size", batch_size, low=1)
        self.microbatch_num = check_int_scalar("microbatch_num", microbatch_num, low=1)
        self.opcall_overhead = check_finite_scalar("opcall_overhead", opcall_overhead, low=0.0)
        self.cost_data = standalone_cost_data
        self.pp2rank = pipeline_config
        self.mem_unit = check_choice("mem_unit", mem_unit, {"bytes", "elements"})
        self.comm_cost_mode = check_choice("comm_cost", comm_cost, {"model", "given"})
        self.program = None
        self.graphs: list[RankGraph] = []
        self.op_cost: list[np.ndarray] = []
        self.labels: list[np.ndarray] = []
        self.node_cost: list[np.ndarray] = []
        self.fwd_time: list = []
        self.bwd_time: list = []
        self.optim_time: list = []
        self.merge_stats: list = []

    # ------------------------------------------------------------------ building
    def _cost_lookup(self, stage):
        data = self.cost_data
        if data is None:
            return None
        if isinstance(data, Mapping):
            table = data
        elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
            if len(data) == 0:
                return None
            idx = 0 if stage is None else stage
            if idx >= len(data):
                raise ValueError(f"standalone_cost_data has {len(data)} entries, stage {idx} needs one")
            table = data[idx]
            if table is None:
                return None
            if not isinstance(table, Mapping):
                raise TypeError("standalone_cost_data entries must be mappings")
        else:
            raise TypeError("standalone_cost_data must be a mapping or a list of mappings")

        def lookup(op):
            # desc_id is what the seed looks up; op id and type are accepted too (B14)
            for key in (op.desc_id, op.id, op.type):
                if key is not None and key in table:
                    v = table[key]
                    if isinstance(v, bool) or not isinstance(v, numbers.Real):
                        raise TypeError(f"standalone_cost_data[{key!r}] must be a number")
                    return float(v)
            return None

        return lookup

    def parse_program(self, distributed_program) -> list:
        """Build the array graph of every rank (the seed's ``parse_program``).

        Parameters
        ----------
        distributed_program : Program, dict or list of rank dicts

        Returns
        -------
        list of RankGraph
        """
        prog = Program.from_dict(distributed_program)
        self.program = prog
        self.total_rank = len(prog.ranks)
        self.pp2rank = _check_pp(self.pp2rank, self.total_rank)
        rank2pp = {}
        if self.pp2rank is not None:
            for s, ranks in enumerate(self.pp2rank):
                for r in ranks:
                    rank2pp[r] = s
        self.graphs = [
            build_rank_graph(
                r,
                batch_size=self.batch_size,
                cost_lookup=self._cost_lookup(rank2pp.get(i)),
            )
            for i, r in enumerate(prog.ranks)
        ]
        return self.graphs

    def build_op_graph(self):
        """No-op: the op graph is built (deduplicated) by :meth:`parse_program`."""
        return self.graphs

    def build_runtime_graph(self):
        """No-op: merging works on copies of the op graph arrays."""
        return self.graphs

    def eliminate_multi_edges(self, graph=None):
        """No-op: edges are distinct by construction."""
        return graph

    def init(self, distributed_program):
        """Parse the program and cost its communication ops (the seed's ``init``)."""
        self.parse_program(distributed_program)
        self.merge_comm()
        return self

    def merge_comm(self):
        """Cost communication ops from tensor bytes, ring size and bandwidth.

        A ring's size is the number of ranks whose program uses that ``ring_id``.
        """
        ring_ranks: dict = {}
        for i, g in enumerate(self.graphs):
            for rid in np.unique(g.ring[g.ring >= 0]):
                ring_ranks.setdefault(int(rid), set()).add(i)
        self.op_cost = []
        for g in self.graphs:
            c = g.base_cost.copy()
            if self.comm_cost_mode == "model":
                for j in np.nonzero(g.comm)[0]:
                    n = len(ring_ranks.get(int(g.ring[j]), ())) if g.ring[j] >= 0 else 2
                    c[j] = comm_cost(int(g.comm[j]), g.comm_bytes[j], n, self.bandwidth)
            # call overhead once per original op, carried through merges (B12)
            self.op_cost.append(c + self.opcall_overhead)
        return self.op_cost

    # ------------------------------------------------------------------ merging
    def merge(self):
        """Merge every rank's graph to the fixed point; return merges made per rank."""
        self.labels, self.node_cost, self.merge_stats = [], [], []
        for g, c in zip(self.graphs, self.op_cost, strict=False):
            label, ncost, a, b, s = merge_fixed_point(
                c, g.phase, g.edge_src, g.edge_dst, self.merge_order == "serial-first"
            )
            self.labels.append(label)
            self.node_cost.append(ncost)
            self.merge_stats.append((a, b, s))
        return [sum(t) for t in self.merge_stats]

    def merge_linear(self):
        """Seed name; linear and branch merging run together in :meth:`merge`."""
        return sum(self.merge())

    merge_branch = merge_linear

    def premerge_times(self) -> list:
        """Per rank ``(fwd, bwd, optim)`` sums of op cost + overhead before merging."""
        out = []
        for g, c in zip(self.graphs, self.op_cost, strict=False):
            out.append(tuple(float(c[g.phase == p].sum()) for p in (FWD, BWD, OPTIM)))
        return out

    def get_runtime_cost(self):
        """Per-rank forward, backward and optimizer time after merging.

        Recomputed on every call (the seed appended, so values accumulated, B13).
        """
        if len(self.labels) != len(self.graphs):
            self.merge()
        self.fwd_time, self.bwd_time, self.optim_time = [], [], []
        for g, label, ncost in zip(self.graphs, self.labels, self.node_cost, strict=False):
            reps = np.nonzero(label == np.arange(g.n_ops))[0]
            ph = g.phase[reps]
            nc = ncost[reps]
            self.fwd_time.append(float(nc[ph == FWD].sum()))
            self.bwd_time.append(float(nc[ph == BWD].sum()))
            self.optim_time.append(float(nc[ph == OPTIM].sum()))
        return self.fwd_time, self.bwd_time, self.optim_time

    # ------------------------------------------------------------------ memory
    def get_mem(self):
        """Per-rank static and peak memory (liveness-based, freed on last use: B1)."""
        static_list, peak_list = [], []
        for g in self.graphs:
            size = g.var_bytes if self.mem_unit == "bytes" else g.var_elems
            st, pk = static_and_peak(g.first_use, g.last_use, size, g.persistable, g.n_ops)
            static_list.append(float(st))
            peak_list.append(float(pk))
        return static_list, peak_list

    # ------------------------------------------------------------------ pipeline
    def _stage_times(self):
        f = np.asarray(self.fwd_time, np.float64)
        b = np.asarray(self.bwd_time, np.float64)
        o = np.asarray(self.optim_time, np.float64)
        # stage s runs on the ranks of stage s; it is as slow as its slowest rank (B7)
        sf = np.array([f[r].max() for r in self.pp2rank], np.float64)
        sb = np.array([b[r].max() for r in self.pp2rank], np.float64)
        so = np.array([o[r].max() for r in self.pp2rank], np.float64)
        return sf, sb, so

    def get_pipeline_time(self, microbatch_num=None) -> float:
        """Pipeline time for ``microbatch_num`` microbatches (default: the model's).

        Without ``pipeline_config``: the slowest rank's ``fwd + bwd + optim``.
        """
        return self.get_pipeline_schedule(microbatch_num).total

    def get_pipeline_schedule(self, microbatch_num=None) -> PipelineSchedule:
        """Run the pipeline simulation and return its executed events."""
        m = self.microbatch_num if microbatch_num is None else microbatch_num
        m = check_int_scalar("microbatch_num", m, low=1)
        if not self.fwd_time and self.graphs:
            self.get_runtime_cost()
        if self.pp2rank is None:
            tot = [f + b + o for f, b, o in zip(self.fwd_time, self.bwd_time, self.optim_time, strict=False)]
            total = max(tot) if tot else 0.0
            e = np.empty(0, np.int64)
            return PipelineSchedule(total, e, e, e, e.astype(float), e.astype(float))
        sf, sb, so = self._stage_times()
        total, st, kd, mb, s0, s1 = simulate_pipeline(sf, sb, so, m)
        return PipelineSchedule(float(total), st, kd, mb, s0, s1)

    def get_cost(self) -> Cost:
        """Run every phase and return a :class:`Cost` (callable repeatedly, B13)."""
        if not self.op_cost and self.graphs:
            self.merge_comm()
        cost = Cost(mem_unit=self.mem_unit)
        cost.static_mem, cost.peak_mem = self.get_mem()
        self.merge()
        self.get_runtime_cost()
        cost.runtime = self.get_pipeline_time()
        cost.fwd_time = list(self.fwd_time)
        cost.bwd_time = list(self.bwd_time)
        cost.optim_time = list(self.optim_time)
        cost.premerge = self.premerge_times()
        cost.n_ops = [g.n_ops for g in self.graphs]
        cost.nodes_after = [int(np.sum(lb == np.arange(lb.size))) for lb in self.labels]
        return cost


def estimate_cost(
    program,
    cluster=None,
    pipeline_config=None,
    standalone_cost_data=None,
    batch_size=1,
    microbatch_num=1,
    opcall_overhead=0.0,
    mem_unit="bytes",
    comm_cost="model",
    merge_order="serial-first",
) -> Cost:
    """Estimate runtime and memory of a distributed program.

    Parameters
    ----------
    program : Program, dict or list of rank dicts
        The distributed program (one entry per rank); never modified.
    cluster : None, float, or object/dict with ``bandwidth``
        Link bandwidth (default: the seed's 32.768).
    pipeline_config : list of rank lists, optional
        Stage ``s`` -> ranks of that stage.
    standalone_cost_data : mapping or list of mappings, optional
        Computation op costs (keys: desc_id, op id or op type).
    batch_size : int or None
        Fills ``-1`` dimensions.
    microbatch_num : int
        Microbatches (>= 1).
    opcall_overhead : float
        ms per original op call.
    mem_unit : {"bytes", "elements"}
    comm_cost : {"model", "given"}
    merge_order : {"parallel-first", "serial-first"}

    Returns
    -------
    Cost

    Examples
    --------
    >>> prog = {"vars": [{"name": "x", "shape": [2]}, {"name": "y", "shape": [2]}],
    ...         "ops": [{"id": "relu_0", "type": "relu", "inputs": [["X", ["x"]]],
    ...                  "outputs": [["Out", ["y"]]], "cost": 0.5}]}
    >>> estimate_cost(prog).runtime
    0.5
    """
    cm = CostModel(
        cluster=cluster,
        batch_size=batch_size,
        microbatch_num=microbatch_num,
        opcall_overhead=opcall_overhead,
        standalone_cost_data=standalone_cost_data,
        pipeline_config=pipeline_config,
        mem_unit=mem_unit,
        comm_cost=comm_cost,
        merge_order=merge_order,
    )
    cm.init(program)
    return cm.get_cost()
