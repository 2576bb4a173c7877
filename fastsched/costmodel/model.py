"""Pure estimates over an encoded program.

:func:`estimate` takes an :class:`~.encode.EncodedProgram` and the settings and runs
kernels only (:mod:`._estimate`, then a pipeline schedule from :mod:`.schedules`); it
returns an immutable :class:`~.cost.Cost`. :func:`estimate_cost` is
``estimate(encode(program))``. The settings live in :mod:`._settings`, the result type in
:mod:`.cost` and :class:`~.cost_model.CostModel`, the adapter with Paddle's names, in
:mod:`.cost_model` (above this module: it imports this one, never the reverse; import it from
:mod:`fastsched.costmodel`); the settings' and the result's names stay importable from here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fastsched._validate import check_finite_scalar
from fastsched.costmodel._estimate import estimate_packed
from fastsched.costmodel._packed import with_packed
from fastsched.costmodel._pipeline import GPIPE, INTERLEAVED, ONE_F_ONE_B, ZB_H1
from fastsched.costmodel._settings import Settings, bandwidth_of, check_pipeline_config
from fastsched.costmodel.cost import Cost, _cost_from_fields, _cost_view, _new, _set_out, _set_prep
from fastsched.costmodel.encode import EncodedProgram, encode
from fastsched.costmodel.schedules import PipelineSchedule
from fastsched.costmodel.schedules import _check as check_schedule

__all__ = ["Cost", "estimate", "estimate_cost", "PipelineSchedule"]
# Names that moved out and stay importable from here (Cost pickles name _cost_from_fields here).
_MOVED = (Settings, bandwidth_of, check_pipeline_config, _cost_from_fields, _new, _set_out, _set_prep)


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
