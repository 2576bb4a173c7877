"""``Cost``: the immutable result of an estimate, read lazily from the kernel's output array."""

from __future__ import annotations

from fastsched.costmodel.schedules import PipelineResult

__all__ = ["Cost"]


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
    >>> from fastsched.costmodel import estimate_cost
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
        >>> from fastsched.costmodel import estimate_cost
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
