"""Pure estimates over an encoded program, and ``CostModel``, the adapter with Paddle's names.

:func:`estimate` takes an :class:`~.encode.EncodedProgram` and the settings and runs
kernels only (:mod:`._estimate`, then a pipeline schedule from :mod:`.schedules`); it
returns an immutable :class:`Cost`. :func:`estimate_cost` is ``estimate(encode(program))``.
:class:`CostModel` keeps the reference's method names (``init``, ``merge_comm``,
``get_runtime_cost``, ``get_mem``, ``get_pipeline_time``, ``get_cost``) for code written
against Paddle; each method is a thin call of these functions on a cached encoding.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from fastsched._validate import check_choice, check_finite_scalar, check_int_scalar
from fastsched.costmodel._estimate import estimate_packed
from fastsched.costmodel._merge import merge_fixed_point
from fastsched.costmodel._pipeline import GPIPE, INTERLEAVED, ONE_F_ONE_B, ZB_H1
from fastsched.costmodel.cluster import CommParams, comm_params
from fastsched.costmodel.encode import EncodedProgram, encode, with_packed
from fastsched.costmodel.graph import DEFAULT_BANDWIDTH
from fastsched.costmodel.schedules import SCHEDULES, PipelineResult, PipelineSchedule, pipeline_schedule, pipeline_time
from fastsched.costmodel.schedules import _check as check_schedule

__all__ = ["Cost", "CostModel", "CostModelMode", "estimate", "estimate_cost", "PipelineSchedule"]


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


class Cost:
    """Result of :func:`estimate` (immutable; per-rank values are tuples).

    :func:`estimate` returns a view over the one array its kernel filled; each attribute
    is read from it on access (so a caller who wants only ``runtime`` pays for nothing
    else). Constructing a ``Cost`` with keyword arguments gives the same object eagerly.

    Attributes
    ----------
    runtime : float
        Pipeline time (ms) for ``microbatch_num`` microbatches, or the slowest rank's
        ``fwd + bwd + optim`` without a pipeline.
    static_mem, peak_mem : tuple of float
        Per rank, in bytes (or elements with ``mem_unit="elements"``).
    fwd_time, bwd_time, optim_time : tuple of float
        Per rank, after merging (ms).
    premerge : tuple of (fwd, bwd, optim)
        Per rank, plain sums of op cost + call overhead before merging.
    n_ops, nodes_after : tuple of int
        Per rank op count and node count at the merge fixed point.
    mem_unit : str
    pipeline : PipelineResult or None
        Per-stage times, bubble fraction, activation memory and p2p time of the schedule
        (``None`` without ``pipeline_config``; not compared by ``==``).

    Examples
    --------
    >>> c = estimate_cost({"vars": [{"name": "x", "shape": [4]}],
    ...                    "ops": [{"id": "a", "type": "relu", "outputs": [["Out", ["x"]]], "cost": 2.0}]})
    >>> c.runtime, c.peak_mem
    (2.0, (16.0,))
    >>> c == Cost(**{k: getattr(c, k) for k in Cost.FIELDS})
    True
    """

    #: Attribute names, in order.
    FIELDS = (
        "runtime",
        "static_mem",
        "peak_mem",
        "fwd_time",
        "bwd_time",
        "optim_time",
        "premerge",
        "n_ops",
        "nodes_after",
        "mem_unit",
        "pipeline",
    )
    __slots__ = ("_out", "_prep", "_vals")

    def __init__(
        self,
        runtime=0.0,
        static_mem=(),
        peak_mem=(),
        fwd_time=(),
        bwd_time=(),
        optim_time=(),
        premerge=(),
        n_ops=(),
        nodes_after=(),
        mem_unit="bytes",
        pipeline=None,
    ):
        vals = (runtime, static_mem, peak_mem, fwd_time, bwd_time, optim_time, premerge, n_ops, nodes_after)
        vals = (float(runtime),) + tuple(tuple(x) for x in vals[1:]) + (mem_unit, pipeline)
        object.__setattr__(self, "_out", None)
        object.__setattr__(self, "_prep", None)
        object.__setattr__(self, "_vals", vals)

    def __setattr__(self, name, value):
        raise AttributeError(f"Cost is immutable: cannot set {name!r}")

    __delattr__ = __setattr__

    def _seg(self, k):
        R = self._prep.n_ranks
        a = 1 + 6 * R + k * R
        return tuple(self._out[a : a + R].tolist())

    def _times(self, p):
        return tuple(self._out[1 + p : 1 + 3 * self._prep.n_ranks : 3].tolist())

    @property
    def runtime(self) -> float:
        """Runtime (ms)."""
        return self._vals[0] if self._out is None else float(self._out[0])

    @property
    def static_mem(self) -> tuple:
        """Static memory per rank."""
        return self._vals[1] if self._out is None else self._seg(0)

    @property
    def peak_mem(self) -> tuple:
        """Peak memory per rank."""
        return self._vals[2] if self._out is None else self._seg(1)

    @property
    def fwd_time(self) -> tuple:
        """Forward time per rank (ms, merged)."""
        return self._vals[3] if self._out is None else self._times(0)

    @property
    def bwd_time(self) -> tuple:
        """Backward time per rank (ms, merged)."""
        return self._vals[4] if self._out is None else self._times(1)

    @property
    def optim_time(self) -> tuple:
        """Optimizer time per rank (ms, merged)."""
        return self._vals[5] if self._out is None else self._times(2)

    @property
    def premerge(self) -> tuple:
        """Per rank ``(fwd, bwd, optim)`` before merging."""
        if self._out is None:
            return self._vals[6]
        R = self._prep.n_ranks
        return tuple(map(tuple, self._out[1 + 3 * R : 1 + 6 * R].reshape(R, 3).tolist()))

    @property
    def n_ops(self) -> tuple:
        """Op count per rank."""
        return self._vals[7] if self._out is None else self._prep.n_ops

    @property
    def nodes_after(self) -> tuple:
        """Node count per rank after merging."""
        if self._out is None:
            return self._vals[8]
        return tuple(int(x) for x in self._seg(2))

    @property
    def mem_unit(self) -> str:
        """``"bytes"`` or ``"elements"``."""
        return self._vals[9] if self._out is None else self._prep.mem_unit

    @property
    def pipeline(self) -> PipelineResult | None:
        """The schedule's :class:`PipelineResult` (``None`` without a pipeline)."""
        if self._out is None:
            return self._vals[10]
        p = self._prep
        if p.schedule is None:
            return None
        S, o = p.n_stages, 2 + 9 * p.n_ranks
        out = self._out
        return PipelineResult(
            schedule=p.schedule,
            microbatches=p.microbatches,
            stages=S,
            virtual_stages=p.virtual_stages,
            total=float(out[0]),
            stage_busy=tuple(out[o : o + S].tolist()),
            bubble_fraction=float(out[o - 1]),
            peak_inflight=tuple(int(x) for x in out[o + S : o + 2 * S].tolist()),
            peak_activation_bytes=tuple(out[o + 3 * S : o + 4 * S].tolist()),
            p2p_time=tuple(out[o + 2 * S : o + 3 * S].tolist()),
        )

    def _key(self):
        return tuple(getattr(self, f) for f in self.FIELDS[:-1])

    def __eq__(self, other):
        if not isinstance(other, Cost):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return "Cost(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS) + ")"

    def __reduce__(self):
        return (_cost_from_fields, tuple(getattr(self, f) for f in self.FIELDS))

    def to_dict(self) -> dict:
        """Plain-JSON form of every field.

        Examples
        --------
        >>> c = estimate_cost({"vars": [{"name": "x", "shape": [4]}],
        ...                    "ops": [{"id": "a", "type": "relu", "outputs": [["Out", ["x"]]], "cost": 2.0}]})
        >>> d = c.to_dict()
        >>> d["runtime"], d["peak_mem"], d["n_ops"], "pipeline" in d
        (2.0, [16.0], [1], False)
        """
        d = {
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
        pipe = self.pipeline
        if pipe is not None:
            d["pipeline"] = pipe.to_dict()
        return d


def _cost_from_fields(*vals):
    return Cost(*vals)


# slot setters (bypass Cost.__setattr__, which forbids mutation)
_new = object.__new__
_set_out = Cost._out.__set__
_set_prep = Cost._prep.__set__


def _cost_view(out, prep) -> Cost:
    """Return the :class:`Cost` read from a kernel's output array ``out`` (which it then owns).

    ``_vals`` stays unset: every field reads ``out`` when ``_out`` is set.
    """
    c = _new(Cost)
    _set_out(c, out)
    _set_prep(c, prep)
    return c


def bandwidth_of(cluster) -> float:
    """Link bandwidth in the seed's unit (bytes / bandwidth = ms) from a ``cluster`` argument.

    Parameters
    ----------
    cluster : None, float, mapping or object with ``bandwidth``
        ``None`` gives the seed's constant 32.768 (which divides *bytes*, so it is
        32.768 bytes/ms: the seed meant MB/ms but applied it to bytes).

    Returns
    -------
    float

    Examples
    --------
    >>> bandwidth_of(None), bandwidth_of({"bandwidth": 2.0})
    (32.768, 2.0)
    """
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


def check_pipeline_config(pipeline_config, n_ranks):
    """Validate ``pipeline_config`` (stage -> rank list) against ``n_ranks``; return a list copy.

    Examples
    --------
    >>> check_pipeline_config([[0], [1, 2]], 3)
    [[0], [1, 2]]
    """
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


@dataclass(frozen=True)
class Settings:
    """Validated estimate settings (see :func:`estimate` for the meaning of each).

    Examples
    --------
    >>> Settings.make(schedule="1f1b").comm.seed_units
    True
    """

    comm: CommParams = CommParams(DEFAULT_BANDWIDTH, 0.0, DEFAULT_BANDWIDTH, 0.0, 1 << 62, True)
    batch_size: int | None = 1
    microbatch_num: int = 1
    opcall_overhead: float = 0.0
    mem_unit: str = "bytes"
    comm_cost: str = "model"
    merge_order: str = "serial-first"
    schedule: str = "seed"
    virtual_stages: int = 1

    @classmethod
    def make(
        cls,
        cluster=None,
        batch_size=1,
        microbatch_num=1,
        opcall_overhead=0.0,
        mem_unit="bytes",
        comm_cost="model",
        merge_order="serial-first",
        schedule="seed",
        virtual_stages=1,
    ) -> Settings:
        """Validate every argument (``ValueError``/``TypeError`` naming it).

        Examples
        --------
        >>> Settings.make(microbatch_num=4).microbatch_num
        4
        """
        args = (cluster, batch_size, microbatch_num, opcall_overhead, mem_unit, comm_cost, merge_order, schedule)
        try:
            return _settings_cached(*args, virtual_stages)
        except TypeError:  # an unhashable argument (a dict cluster): validate without the cache
            return _make_settings(*args, virtual_stages)


def _make_settings(
    cluster, batch_size, microbatch_num, opcall_overhead, mem_unit, comm_cost, merge_order, schedule, virtual_stages
):
    return Settings(
        comm=comm_params(cluster, bandwidth_of),
        batch_size=None if batch_size is None else check_int_scalar("batch_size", batch_size, low=1),
        microbatch_num=check_int_scalar("microbatch_num", microbatch_num, low=1),
        opcall_overhead=check_finite_scalar("opcall_overhead", opcall_overhead, low=0.0),
        mem_unit=check_choice("mem_unit", mem_unit, {"bytes", "elements"}),
        comm_cost=check_choice("comm_cost", comm_cost, {"model", "given"}),
        merge_order=check_choice("merge_order", merge_order, {"parallel-first", "serial-first"}),
        schedule=check_choice("schedule", schedule, set(SCHEDULES)),
        virtual_stages=check_int_scalar("virtual_stages", virtual_stages, low=1),
    )


# Settings are immutable and validation is pure: repeated estimates with the same arguments
# (the common case) skip it. Keys include the argument types (1 and 1.0 validate differently).
_settings_cached = functools.lru_cache(maxsize=256, typed=True)(_make_settings)


def _check_batch(enc: EncodedProgram, batch_size):
    if batch_size is None and enc.var_ndyn.size and enc.var_ndyn.max() > 0:
        j = int(np.argmax(enc.var_ndyn > 0))
        raise ValueError(f"variable {enc.var_names[j]!r} has a dynamic (-1) dimension: give batch_size")


class _Prepared(NamedTuple):
    # Settings-dependent constants of one (encoding, settings, pipeline) combination.
    P: np.ndarray
    out_len: int
    n_ranks: int
    n_stages: int
    n_ops: tuple
    mem_unit: str
    schedule: str | None
    microbatches: int
    virtual_stages: int
    pp_src: object


_SCHED_KIND = {"seed": 0, "gpipe": GPIPE, "1f1b": ONE_F_ONE_B, "interleaved": INTERLEAVED, "zb-h1": ZB_H1}
_CACHE_MAX = 64


def packed(enc: EncodedProgram) -> EncodedProgram:
    """``enc`` itself when it carries its packed arrays, else a packed copy."""
    return enc if enc.packed is not None and enc.cache is not None else with_packed(enc)


def _prepare(enc: EncodedProgram, s: Settings, pipeline_config, activation_bytes, p2p_bytes) -> _Prepared:
    # Validate everything that depends on the settings and the pipeline (not on the
    # kernel's results) and lay it out as the kernel's settings vector P (the stage table
    # follows the settings, see _estimate.PARAMS).
    pp = check_pipeline_config(pipeline_config, enc.n_ranks)
    _check_batch(enc, s.batch_size)
    R = enc.n_ranks
    c = s.comm
    P = [
        float(1 if s.batch_size is None else s.batch_size),
        c.bw_intra,
        c.lat_intra,
        c.bw_inter,
        c.lat_inter,
        float(c.gpus_per_node),
        s.opcall_overhead,
        float(s.comm_cost == "model"),
        float(s.mem_unit == "bytes"),
        float(s.merge_order == "serial-first"),
        float(s.microbatch_num),
        0.0,
        1.0,
        0.0,
        0.5,
        0.0,
        0.0,
    ]
    if pp is None:
        return _Prepared(np.array(P), 2 + 9 * R, R, 0, tuple(enc.ops_per_rank()), s.mem_unit, None, 0, 0, None)
    S = len(pp)
    schedule, m, v = check_schedule(s.schedule, S, s.microbatch_num, s.virtual_stages)
    p2p_ms = check_finite_scalar("p2p_ms", float(p2p_bytes) / c.bw_inter + c.lat_inter, low=0.0)
    P[11], P[12], P[13] = float(_SCHED_KIND[schedule]), float(v), p2p_ms
    if activation_bytes is not None:
        act = np.broadcast_to(np.asarray(activation_bytes, np.float64), (S,))
        if not np.all(np.isfinite(act)) or act.min() < 0:
            raise ValueError("activation_bytes must be finite and >= 0")
        P[15] = 1.0
        P.extend(act.tolist())
    ptr = np.cumsum([0] + [len(r) for r in pp])
    P[16] = float(len(P))  # the stage table: [S, stage_ptr[0..S], ranks...]
    P.extend([float(S), *ptr.tolist(), *(r for st in pp for r in st)])
    src = [list(st) for st in pipeline_config]
    return _Prepared(np.array(P), 2 + 9 * R + 4 * S, R, S, tuple(enc.ops_per_rank()), s.mem_unit, schedule, m, v, src)


def _prepared(enc: EncodedProgram, s: Settings, pipeline_config, activation_bytes, p2p_bytes) -> _Prepared:
    # The prepared constants are kept on the encoding, keyed by the (cached, immutable)
    # settings and the identity of the pipeline config, which is compared by value on every
    # hit (a caller may have mutated it). Results are never kept: the kernel runs each call.
    cache = enc.cache
    try:
        key = (s, id(pipeline_config), activation_bytes, p2p_bytes)
        hit = cache.get(key)
    except TypeError:  # unhashable activation_bytes: no caching
        return _prepare(enc, s, pipeline_config, activation_bytes, p2p_bytes)
    if hit is not None and hit.pp_src == pipeline_config:
        return hit
    prep = _prepare(enc, s, pipeline_config, activation_bytes, p2p_bytes)
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    cache[key] = prep
    return prep


def run_packed(enc: EncodedProgram, prep: _Prepared) -> np.ndarray:
    """Run the one-call kernel with prepared constants; return its output array.

    Raises a ``ValueError`` when a result overflows float64 (huge costs, sizes or settings):
    never a ``Cost`` holding ``inf``.
    """
    out = np.empty(prep.out_len)
    if estimate_packed(enc.packed, prep.P, out):
        # a fixed-order schedule that cannot progress: a bug, never user input
        raise RuntimeError(f"schedule {prep.schedule!r} deadlocked")
    # Without a pipeline the last slot (the bubble fraction) is never written: not checked.
    if not np.isfinite(out[: prep.out_len if prep.schedule is not None else prep.out_len - 1]).all():
        _not_finite(out, prep)
    return out


def _not_finite(out: np.ndarray, prep: _Prepared) -> None:
    k, R = int(np.argmax(~np.isfinite(out))), prep.n_ranks
    names = ("fwd_time", "bwd_time", "optim_time")
    if k == 0:
        what = "runtime"
    elif k < 1 + 3 * R:
        what = f"{names[(k - 1) % 3]} of rank {(k - 1) // 3}"
    elif k < 1 + 6 * R:
        what = f"premerge {names[(k - 1) % 3][:-5]} time of rank {(k - 1 - 3 * R) // 3}"
    elif k < 1 + 8 * R:
        what = f"{'static_mem' if k < 1 + 7 * R else 'peak_mem'} of rank {(k - 1) % R}"
    else:
        what = "the pipeline's times"
    P = prep.P
    raise ValueError(
        f"the estimate overflows float64 ({what} = {float(out[k])!r}): op costs, variable sizes or settings are too "
        f"large (batch_size={P[0]:g}, microbatch_num={P[10]:g}, opcall_overhead={P[6]:g})"
    )


def rank_times(enc: EncodedProgram, s: Settings):
    """Run the per-rank kernel: ``(times[R,3], premerge[R,3], static[R], peak[R], nodes[R])``.

    Examples
    --------
    >>> enc = encode({"vars": [{"name": "x"}], "ops": [{"id": "a", "type": "relu",
    ...               "outputs": [["Out", ["x"]]], "cost": 1.5}]})
    >>> rank_times(enc, Settings())[0].tolist()
    [[1.5, 0.0, 0.0]]
    """
    enc = packed(enc)
    out = run_packed(enc, _prepared(enc, s, None, None, 0.0))
    R = enc.n_ranks
    times = out[1 : 1 + 3 * R].reshape(R, 3)
    pre = out[1 + 3 * R : 1 + 6 * R].reshape(R, 3)
    return (
        times,
        pre,
        out[1 + 6 * R : 1 + 7 * R],
        out[1 + 7 * R : 1 + 8 * R],
        out[1 + 8 * R : 1 + 9 * R].astype(np.int64),
    )


def stage_times(times, pp):
    """Per-stage ``(fwd, bwd, optim)``: stage ``s`` is as slow as its slowest rank (B7).

    Examples
    --------
    >>> f, b, o = stage_times(np.array([[1.0, 2, 0], [3, 1, 0]]), [[0, 1]])
    >>> f.tolist(), b.tolist()
    ([3.0], [2.0])
    """
    sf = np.array([times[r, 0].max() for r in pp], np.float64)
    sb = np.array([times[r, 1].max() for r in pp], np.float64)
    so = np.array([times[r, 2].max() for r in pp], np.float64)
    return sf, sb, so


def estimate(
    enc: EncodedProgram,
    *,
    cluster=None,
    pipeline_config=None,
    batch_size=1,
    microbatch_num=1,
    opcall_overhead=0.0,
    mem_unit="bytes",
    comm_cost="model",
    merge_order="serial-first",
    schedule="seed",
    virtual_stages=1,
    activation_bytes=None,
    p2p_bytes=0.0,
) -> Cost:
    """Estimate runtime and memory of an encoded program (kernels only; pure).

    Parameters
    ----------
    enc : EncodedProgram
        From :func:`~fastsched.costmodel.encode.encode`.
    cluster : None, float, dict with ``bandwidth``, Cluster or dict of Cluster fields
        A :class:`~fastsched.costmodel.cluster.Cluster` costs communication in real units
        (GB/s, µs, intra/inter node by rank placement). ``None`` or a number keeps the seed's
        unit: bytes divided by the bandwidth (default 32.768, see :func:`bandwidth_of`),
        which reproduces the reference's numbers but is 10**6 too slow for MB/ms.
    pipeline_config : list of rank lists, optional
        Stage ``s`` -> ranks of that stage.
    batch_size : int or None
        Fills ``-1`` dimensions (B8); ``None`` makes such a dimension an error.
    microbatch_num : int
        Microbatches (>= 1).
    opcall_overhead : float
        ms per original op call (B12).
    mem_unit : {"bytes", "elements"}
    comm_cost : {"model", "given"}
        Re-cost communication ops from tensor size and ring ("model", as the seed does),
        or keep each op's ``cost``.
    merge_order : {"serial-first", "parallel-first"}
        See :mod:`fastsched.costmodel._merge`.
    schedule : {"seed", "gpipe", "1f1b", "interleaved", "zb-h1"}
        Pipeline schedule (see :mod:`fastsched.costmodel.schedules`); "seed" reproduces
        the reference.
    virtual_stages : int
        Model chunks per stage of the interleaved schedule.
    activation_bytes : float or sequence of float, optional
        Activation bytes one microbatch keeps per stage (for the per-stage peak
        activation memory of the schedule); default: the stage's peak non-static memory.
    p2p_bytes : float
        Bytes sent between consecutive stages per microbatch and direction (costed with
        the cluster bandwidth and added to the pipeline's critical path).

    Returns
    -------
    Cost

    Examples
    --------
    >>> enc = encode([{"vars": [{"name": "x"}], "ops": [{"id": "a", "type": "relu",
    ...               "outputs": [["Out", ["x"]]], "cost": 1.0, "op_role": r}]} for r in (0, 1)])
    >>> estimate(enc, pipeline_config=[[0], [1]], microbatch_num=4, schedule="1f1b").runtime
    5.0
    """
    s = Settings.make(
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
    enc = packed(enc)
    prep = _prepared(enc, s, pipeline_config, activation_bytes, p2p_bytes)
    return _cost_view(run_packed(enc, prep), prep)


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
    schedule="seed",
    virtual_stages=1,
) -> Cost:
    """Estimate runtime and memory of a distributed program: ``estimate(encode(program))``.

    Parameters
    ----------
    program : Program, dict or list of rank dicts
        The distributed program (one entry per rank); never modified.
    standalone_cost_data : mapping or list of mappings, optional
        Computation op costs (keys: desc_id, op id or op type).
    cluster, pipeline_config, batch_size, microbatch_num, opcall_overhead, mem_unit, comm_cost, merge_order
        As for :func:`estimate`.
    schedule, virtual_stages
        As for :func:`estimate`.

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
    enc = encode(program, standalone_cost_data=standalone_cost_data, pipeline_config=pipeline_config)
    return estimate(
        enc,
        cluster=cluster,
        pipeline_config=pipeline_config,
        batch_size=batch_size,
        microbatch_num=microbatch_num,
        opcall_overhead=opcall_overhead,
        mem_unit=mem_unit,
        comm_cost=comm_cost,
        merge_order=merge_order,
        schedule=schedule,
        virtual_stages=virtual_stages,
    )


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
