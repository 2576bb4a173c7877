"""Pipeline schedules over per-stage times: seed, GPipe, 1F1B, interleaved 1F1B, ZB-H1.

Each stage ``s`` has a forward time ``fwd[s]``, a backward time ``bwd[s]`` (per
microbatch) and an optimizer step ``optim[s]`` after its last backward. Schedules:

``"seed"``
    The reference's FIFO queue (stage ``s`` holds at most ``S - s`` forwards in flight).
    The default: it reproduces Paddle's numbers. No point-to-point time.
``"gpipe"``
    All forwards, then all backwards (Huang et al. 2019). Peak in flight: ``m``.
``"1f1b"``
    PipeDream-flush / Megatron-LM 1F1B: ``S - s - 1`` warm-up forwards, then one forward
    and one backward alternately, then the remaining backwards. On equal stages the time is
    ``(m + S - 1)(f + b)`` and the bubble fraction ``(S - 1) / (m + S - 1)`` (as GPipe).
``"interleaved"``
    Megatron-LM's interleaved 1F1B (Narayanan et al. SC'21): each stage holds
    ``virtual_stages`` (``v``) model chunks of ``1/v`` of its time; the bubble is divided by
    ``v``: ``(m + (S - 1)/v)(f + b)`` on equal stages. ``m`` must be a multiple of ``S``.
``"zb-h1"``
    Zero-bubble ZB-H1 (Qi et al., ICLR'24): the backward is split into the input gradient
    ``B`` (``1 - wgrad_fraction`` of it) and the weight gradient ``W``; 1F1B order in which
    stage ``s`` defers each ``W`` by ``s`` microbatches, so the deferred ``W`` fill the
    cool-down bubble while no stage holds more than ``S`` microbatches (1F1B's peak, on
    stage 0). On equal stages with ``m >= S`` the bubble is ``(S - 1)(f + B - min(W, f))``
    instead of 1F1B's ``(S - 1)(f + B + W)``: a third of it when ``f = B = W``.

All run in O(microbatches x stages) time. Peak activation memory of a stage is its peak
number of microbatches (chunks) in flight (forward done, backward -- for ZB-H1 the weight
gradient -- not yet) times the activation bytes of one microbatch (chunk).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fastsched._validate import check_choice, check_finite_scalar, check_int_scalar
from fastsched.costmodel._bounds import MAX_WORK
from fastsched.costmodel._pipeline import GPIPE, INTERLEAVED, ONE_F_ONE_B, ZB_H1, simulate_ordered, simulate_seed

__all__ = [
    "SCHEDULES",
    "MAX_WORK",
    "MAX_EVENTS",
    "PipelineResult",
    "PipelineSchedule",
    "pipeline_time",
    "pipeline_schedule",
]

#: Schedule names understood by :func:`pipeline_time`.
SCHEDULES = ("seed", "gpipe", "1f1b", "interleaved", "zb-h1")
_KIND = {"gpipe": GPIPE, "1f1b": ONE_F_ONE_B, "interleaved": INTERLEAVED, "zb-h1": ZB_H1}
#: Largest number of events :func:`pipeline_schedule` records (for plots).
MAX_EVENTS = 5_000_000


@dataclass(frozen=True)
class PipelineResult:
    """Outcome of one schedule.

    Attributes
    ----------
    schedule : str
    microbatches, stages, virtual_stages : int
    total : float
        Time (ms) at which the last stage finishes, optimizer included.
    stage_busy : tuple of float
        Work per stage (ms), optimizer included.
    bubble_fraction : float
        Idle share of the stages before the optimizer: ``1 - sum(busy_fb) / (S * makespan)``.
    peak_inflight : tuple of int
        Peak microbatches (chunks) holding activations, per stage.
    peak_activation_bytes : tuple of float
        ``peak_inflight`` x activation bytes of one microbatch (chunk), per stage.
    p2p_time : tuple of float
        Point-to-point time received by each stage (ms).

    Examples
    --------
    >>> r = pipeline_time([1.0, 1.0], [2.0, 2.0], [0.0, 0.0], 4, schedule="1f1b")
    >>> r.total, round(r.bubble_fraction, 12)  # (m + S - 1)(f + b), (S - 1)/(m + S - 1)
    (15.0, 0.2)
    """

    schedule: str
    microbatches: int
    stages: int
    virtual_stages: int
    total: float
    stage_busy: tuple
    bubble_fraction: float
    peak_inflight: tuple
    peak_activation_bytes: tuple
    p2p_time: tuple

    def to_dict(self) -> dict:
        """Plain-JSON form.

        Examples
        --------
        >>> d = pipeline_time([1.0, 1.0], [2.0, 2.0], [0.0, 0.0], 4, schedule="1f1b").to_dict()
        >>> d["schedule"], d["stages"], d["total"], d["stage_busy"]
        ('1f1b', 2, 15.0, [12.0, 12.0])
        """
        return {
            "schedule": self.schedule,
            "microbatches": self.microbatches,
            "stages": self.stages,
            "virtual_stages": self.virtual_stages,
            "total": self.total,
            "stage_busy": list(self.stage_busy),
            "bubble_fraction": self.bubble_fraction,
            "peak_inflight": list(self.peak_inflight),
            "peak_activation_bytes": list(self.peak_activation_bytes),
            "p2p_time": list(self.p2p_time),
        }


@dataclass(frozen=True)
class PipelineSchedule:
    """Executed pipeline events (for plotting): arrays of equal length.

    ``kind`` is 0 forward, 1 backward (input gradient for ZB-H1), 2 optimizer, 3 weight
    gradient; ``microbatch`` is -1 for the optimizer.

    Examples
    --------
    >>> ev = pipeline_schedule([1.0], [1.0], [0.5], 2)
    >>> ev.total, ev.kind.tolist()
    (4.5, [0, 1, 0, 1, 2])
    """

    total: float
    stage: np.ndarray
    kind: np.ndarray
    microbatch: np.ndarray
    start: np.ndarray
    end: np.ndarray


def _stage_arrays(fwd, bwd, optim):
    out = []
    for name, x in (("fwd", fwd), ("bwd", bwd), ("optim", optim)):
        a = np.ascontiguousarray(np.asarray(x, dtype=np.float64).reshape(-1))
        if not np.all(np.isfinite(a)) or (a.size and a.min() < 0):
            raise ValueError(f"{name} stage times must be finite and >= 0")
        out.append(a)
    if not (out[0].size == out[1].size == out[2].size) or out[0].size == 0:
        raise ValueError("fwd, bwd and optim need one entry per stage (at least one stage)")
    return out


def _check(schedule, S, m, virtual_stages):
    schedule = check_choice("schedule", schedule, set(SCHEDULES))
    m = check_int_scalar("microbatch_num", m, low=1)
    v = check_int_scalar("virtual_stages", virtual_stages, low=1)
    if v > 1 and schedule != "interleaved":
        raise ValueError(f"virtual_stages={v} needs schedule='interleaved' (got {schedule!r})")
    if schedule == "interleaved" and m % S != 0:
        raise ValueError(f"microbatch_num={m} must be a multiple of the {S} stages for schedule='interleaved'")
    work = m * S * v
    if work > MAX_WORK:
        raise ValueError(
            f"microbatch_num={m} x {S} stages x {v} virtual stages = {work:.3g} operations exceeds the "
            f"simulation limit of {MAX_WORK:.0e}; on equal stages use the closed form "
            "(m + (S - 1)/v)(f + b) of 1F1B/interleaved"
        )
    return schedule, m, v


def _run(fwd, bwd, optim, m, schedule, virtual_stages, wgrad_fraction, p2p_ms, record):
    f, b, o = _stage_arrays(fwd, bwd, optim)
    S = f.shape[0]
    schedule, m, v = _check(schedule, S, m, virtual_stages)
    p2p = check_finite_scalar("p2p_ms", p2p_ms, low=0.0)
    wf = check_finite_scalar("wgrad_fraction", wgrad_fraction, low=0.0, high=1.0)
    if schedule == "seed":
        # the seed has no point-to-point time
        total, span, busy, peak, st, kd, mb, s0, s1 = simulate_seed(f, b, o, m, record)
        n_p2p = np.zeros(S, np.int64)
    else:
        bb, w = b, np.zeros(S)
        if schedule == "zb-h1":
            w = b * wf
            bb = b - w
        total, span, busy, peak, n_p2p, st, kd, mb, s0, s1, dead = simulate_ordered(
            _KIND[schedule], f, bb, w, o, m, v, p2p, record
        )
        if dead:  # a fixed order that cannot progress: a bug, never user input
            raise RuntimeError(f"schedule {schedule!r} deadlocked at m={m}, S={S}, v={v}")
    makespan = float(span)
    fb = busy - o
    bubble = 1.0 - float(fb.sum()) / (S * makespan) if makespan > 0 else 0.0
    return total, busy, max(bubble, 0.0), peak, n_p2p, (st, kd, mb, s0, s1), schedule, m, v


def pipeline_time(
    fwd,
    bwd,
    optim,
    microbatch_num,
    *,
    schedule="seed",
    virtual_stages=1,
    activation_bytes=0.0,
    p2p_ms=0.0,
    wgrad_fraction=0.5,
) -> PipelineResult:
    """Time, bubble and activation memory of a pipeline schedule (no events kept).

    Parameters
    ----------
    fwd, bwd, optim : sequence of float
        Per-stage forward and backward time of one microbatch, and the optimizer step (ms).
    microbatch_num : int
        Microbatches (>= 1).
    schedule : {"seed", "gpipe", "1f1b", "interleaved", "zb-h1"}
    virtual_stages : int
        Chunks per stage (``"interleaved"`` only).
    activation_bytes : float or sequence of float
        Activation bytes one microbatch keeps on each stage.
    p2p_ms : float
        Time of one point-to-point transfer between stages (not used by "seed").
    wgrad_fraction : float
        Share of the backward that is weight gradient (``"zb-h1"``).

    Returns
    -------
    PipelineResult

    Raises
    ------
    ValueError
        Unknown schedule, ``virtual_stages`` without "interleaved", microbatches not a
        multiple of the stages for "interleaved", a problem too large to simulate.

    Examples
    --------
    >>> pipeline_time([1.0] * 4, [2.0] * 4, [0.0] * 4, 8, schedule="interleaved",
    ...               virtual_stages=2).total  # (m + (S-1)/v)(f + b)
    28.5
    """
    total, busy, bubble, peak, n_p2p, _, schedule, m, v = _run(
        fwd, bwd, optim, microbatch_num, schedule, virtual_stages, wgrad_fraction, p2p_ms, False
    )
    S = busy.shape[0]
    act = np.broadcast_to(np.asarray(activation_bytes, np.float64), (S,))
    if not np.all(np.isfinite(act)) or act.min() < 0:
        raise ValueError("activation_bytes must be finite and >= 0")
    return PipelineResult(
        schedule=schedule,
        microbatches=m,
        stages=S,
        virtual_stages=v,
        total=float(total),
        stage_busy=tuple(busy.tolist()),
        bubble_fraction=bubble,
        peak_inflight=tuple(peak.tolist()),
        peak_activation_bytes=tuple((peak * act / v).tolist()),
        p2p_time=tuple((n_p2p * float(p2p_ms)).tolist()),
    )


def pipeline_schedule(
    fwd, bwd, optim, microbatch_num, *, schedule="seed", virtual_stages=1, p2p_ms=0.0, wgrad_fraction=0.5
) -> PipelineSchedule:
    """Return the executed events of a schedule (for a Gantt chart); see :func:`pipeline_time`.

    Raises
    ------
    ValueError
        More than :data:`MAX_EVENTS` events would be recorded, or any error of
        :func:`pipeline_time`.

    Examples
    --------
    >>> ev = pipeline_schedule([1.0, 1.0], [1.0, 1.0], [0.0, 0.0], 2, schedule="gpipe")
    >>> ev.total, len(ev.stage)
    (6.0, 10)
    """
    S = len(np.atleast_1d(fwd))
    m = check_int_scalar("microbatch_num", microbatch_num, low=1)
    v = check_int_scalar("virtual_stages", virtual_stages, low=1)
    if 3 * m * S * v > MAX_EVENTS:
        raise ValueError(
            f"microbatch_num={m} on {S} stages has too many events to record ({MAX_EVENTS:.0e} max); "
            "use pipeline_time for the totals"
        )
    total, _, _, _, _, ev, _, _, _ = _run(fwd, bwd, optim, m, schedule, v, wgrad_fraction, p2p_ms, True)
    return PipelineSchedule(float(total), *ev)
