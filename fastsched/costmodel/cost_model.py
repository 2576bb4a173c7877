"""``CostModel``: the adapter with Paddle's names over :func:`.encode.encode` and :func:`.model.estimate`.

:class:`CostModel` keeps the reference's method names (``init``, ``merge_comm``,
``get_runtime_cost``, ``get_mem``, ``get_pipeline_time``, ``get_cost``) for code written
against Paddle; each method is a thin call of the pure functions on a cached encoding.
"""

from __future__ import annotations

import math

import numpy as np

from fastsched._validate import check_int_scalar
from fastsched.costmodel._merge import merge_fixed_point
from fastsched.costmodel._settings import Settings, check_pipeline_config
from fastsched.costmodel.cost import Cost
from fastsched.costmodel.encode import EncodedProgram, encode
from fastsched.costmodel.model import estimate, rank_times, stage_times
from fastsched.costmodel.schedules import PipelineSchedule, pipeline_schedule, pipeline_time

__all__ = ["CostModel", "CostModelMode"]


class CostModelMode:
    """The seed's mode names (kept for familiarity; the model has one mode).

    Examples
    --------
    >>> CostModelMode.DEFAULT, CostModelMode.BENCHMARKING, CostModelMode.ANALYSIS, CostModelMode.MIXED
    (0, 1, 2, 3)
    """

    DEFAULT = 0
    BENCHMARKING = 1
    ANALYSIS = 2
    MIXED = 3


class CostModel:
    """Paddle's ``CostModel`` interface, as an adapter over :func:`encode` and :func:`estimate`.

    The reference's methods mutate the model in phases (``init`` parses and costs
    communication, ``get_runtime_cost`` merges, ...); here the program is encoded once by
    :meth:`init` and every ``get_*`` method is a pure function of that encoding and the
    settings, so calling them in any order, any number of times, gives the same answers
    (B13). The caller's program is never modified.

    Parameters
    ----------
    mode : int, optional
        Accepted for compatibility; ignored.
    cluster : None, float, or object with ``bandwidth``
        Link bandwidth in bytes/ms (default 32.768: the seed's constant).
    batch_size : int or None
        Fills ``-1`` dimensions (B8).
    microbatch_num : int
        Microbatches of the pipeline simulation (>= 1).
    opcall_overhead : float
        ms added once per original op (B12).
    standalone_cost_data : None, mapping or list of mappings
        Computation op costs; one mapping per pipeline stage (or one for all). Keys may be
        ``desc_id`` ints, op ids or op types (B14).
    pipeline_config : None or list of rank lists
        Stage ``s`` -> ranks.
    mem_unit : {"bytes", "elements"}
    comm_cost : {"model", "given"}
    merge_order : {"parallel-first", "serial-first"}
    schedule : str
        Pipeline schedule (default "seed").
    virtual_stages : int

    Examples
    --------
    >>> cm = CostModel(microbatch_num=2).init({"vars": [{"name": "x"}],
    ...     "ops": [{"id": "a", "type": "relu", "outputs": [["Out", ["x"]]], "cost": 1.0}]})
    >>> cm.get_runtime_cost(), cm.get_cost().runtime
    (([1.0], [0.0], [0.0]), 1.0)
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
        schedule="seed",
        virtual_stages=1,
    ):
        self.mode = mode
        self.cluster = cluster
        self.settings = Settings.make(
            cluster,
            batch_size,
            microbatch_num,
            opcall_overhead,
            mem_unit,
            comm_cost,
            merge_order,
            schedule,
            virtual_stages,
        )
        self.cost_data = standalone_cost_data
        self.pp2rank = pipeline_config
        self.encoded: EncodedProgram | None = None
        self._times = None

    @property
    def microbatch_num(self) -> int:
        """Default microbatch count."""
        return self.settings.microbatch_num

    def parse_program(self, distributed_program) -> EncodedProgram:
        """Encode the program (the seed's ``parse_program``); returns the encoding.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> enc = CostModel().parse_program(transformer_stack(1, ranks=2))
        >>> enc.n_ranks, enc.ops_per_rank()
        (2, [53, 53])
        """
        enc = encode(distributed_program, standalone_cost_data=self.cost_data, pipeline_config=self.pp2rank)
        self.pp2rank = check_pipeline_config(self.pp2rank, enc.n_ranks)
        self.encoded = enc
        self._times = None
        return enc

    def init(self, distributed_program) -> CostModel:
        """Encode the program (the seed's ``init``); returns ``self``.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel()
        >>> cm.init(transformer_stack(1)) is cm, cm.encoded.n_ops
        (True, 53)
        """
        self.parse_program(distributed_program)
        return self

    def _enc(self) -> EncodedProgram:
        if self.encoded is None:
            raise ValueError("call init(program) first")
        return self.encoded

    def _rank_times(self):
        if self._times is None:
            self._times = rank_times(self._enc(), self.settings)
        return self._times

    # The reference's phases: building and merging are part of the kernels.
    def build_op_graph(self):
        """No-op (kept name): the op graph is built by :meth:`init`.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> cm.build_op_graph() is cm.encoded, cm.build_runtime_graph() is cm.merge_comm()
        (True, True)
        """
        return self.encoded

    build_runtime_graph = build_op_graph
    merge_comm = build_op_graph

    def eliminate_multi_edges(self, graph=None):
        """No-op (kept name): edges are distinct by construction.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> cm.eliminate_multi_edges("graph")
        'graph'
        """
        return graph

    def merge(self) -> list:
        """Merge every rank's graph; return the merges made per rank (series+parallel+serial).

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> cm.merge()
        [20, 20]
        """
        enc, s = self._enc(), self.settings
        out = []
        times = rank_times(enc, s)  # validates; the merge below is for the statistics only
        del times
        for r in range(enc.n_ranks):
            o0, o1 = enc.op_ptr[r], enc.op_ptr[r + 1]
            e0, e1 = enc.edge_ptr[r], enc.edge_ptr[r + 1]
            _, _, a, b, c = merge_fixed_point(
                enc.base_cost[o0:o1].copy(),
                enc.phase[o0:o1],
                enc.edge_src[e0:e1],
                enc.edge_dst[e0:e1],
                s.merge_order == "serial-first",
            )
            out.append(a + b + c)
        return out

    def parallel_merges(self) -> int:
        """Count the branch (parallel) merges over all ranks.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> cm.parallel_merges()
        0
        """
        enc, s = self._enc(), self.settings
        n = 0
        for r in range(enc.n_ranks):
            o0, o1 = enc.op_ptr[r], enc.op_ptr[r + 1]
            e0, e1 = enc.edge_ptr[r], enc.edge_ptr[r + 1]
            n += merge_fixed_point(
                enc.base_cost[o0:o1].copy(),
                enc.phase[o0:o1],
                enc.edge_src[e0:e1],
                enc.edge_dst[e0:e1],
                s.merge_order == "serial-first",
            )[3]
        return int(n)

    def merge_linear(self):
        """Seed name; linear and branch merging run together.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> cm.merge_linear(), cm.merge_branch()
        (40, 40)
        """
        return sum(self.merge())

    merge_branch = merge_linear

    def get_runtime_cost(self):
        """Per-rank ``(fwd, bwd, optim)`` lists after merging (same on every call, B13).

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> fwd, bwd, optim = cm.get_runtime_cost()
        >>> fwd, optim
        ([0.140625, 0.140625], [0.0673828125, 0.0673828125])
        """
        t = self._rank_times()[0]
        return t[:, 0].tolist(), t[:, 1].tolist(), t[:, 2].tolist()

    def premerge_times(self) -> list:
        """Per rank ``(fwd, bwd, optim)`` sums of op cost + overhead before merging.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> cm.premerge_times()[0]
        (0.140625, 0.1484375, 0.0673828125)
        """
        return [tuple(x) for x in self._rank_times()[1].tolist()]

    def get_mem(self):
        """Per-rank static and peak memory lists (liveness-based, freed on last use: B1).

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> static, peak = cm.get_mem()
        >>> static, peak
        ([442372.0, 442372.0], [602116.0, 602116.0])
        """
        t = self._rank_times()
        return t[2].tolist(), t[3].tolist()

    def _pipe(self, microbatch_num, events):
        m = self.settings.microbatch_num if microbatch_num is None else microbatch_num
        m = check_int_scalar("microbatch_num", m, low=1)
        sf, sb, so = stage_times(self._rank_times()[0], self.pp2rank)
        s = self.settings
        if events:
            res = pipeline_schedule(sf, sb, so, m, schedule=s.schedule, virtual_stages=s.virtual_stages)
        else:
            res = pipeline_time(sf, sb, so, m, schedule=s.schedule, virtual_stages=s.virtual_stages)
        if not math.isfinite(res.total):
            raise ValueError(f"the pipeline time overflows float64 with microbatch_num={m}: stage times too large")
        return res

    def get_pipeline_time(self, microbatch_num=None) -> float:
        """Pipeline time for ``microbatch_num`` microbatches (default: the model's).

        Without ``pipeline_config``: the slowest rank's ``fwd + bwd + optim``.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> cm.get_pipeline_time(), cm.get_pipeline_time(4)
        (0.9345703125, 1.5126953125)
        """
        if self.pp2rank is None:
            t = self._rank_times()[0]
            if microbatch_num is not None:
                check_int_scalar("microbatch_num", microbatch_num, low=1)
            tot = t[:, 0] + t[:, 1] + t[:, 2]
            return float(tot.max()) if tot.size else 0.0
        return self._pipe(microbatch_num, False).total

    def get_pipeline_schedule(self, microbatch_num=None) -> PipelineSchedule:
        """Return the schedule's events (for plotting); empty without a pipeline.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> sched = cm.get_pipeline_schedule()
        >>> sched.total, len(sched.stage), sched.stage.tolist()[:3]
        (0.9345703125, 10, [0, 0, 1])
        """
        if self.pp2rank is None:
            e = np.empty(0, np.int64)
            return PipelineSchedule(self.get_pipeline_time(microbatch_num), e, e, e, e.astype(float), e.astype(float))
        return self._pipe(microbatch_num, True)

    def get_cost(self) -> Cost:
        """Estimate with the model's settings (callable repeatedly; pure).

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> cm = CostModel(microbatch_num=2, pipeline_config=[[0], [1]]).init(transformer_stack(1, ranks=2))
        >>> cost = cm.get_cost()
        >>> cost.runtime, cost.n_ops
        (0.9345703125, (53, 53))
        """
        s = self.settings
        return estimate(
            self._enc(),
            cluster=self.cluster,
            pipeline_config=self.pp2rank,
            batch_size=s.batch_size,
            microbatch_num=s.microbatch_num,
            opcall_overhead=s.opcall_overhead,
            mem_unit=s.mem_unit,
            comm_cost=s.comm_cost,
            merge_order=s.merge_order,
            schedule=s.schedule,
            virtual_stages=s.virtual_stages,
        )
