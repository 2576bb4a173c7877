"""Cases in the ``paddle-cost-model-case/1`` JSON format: program + settings + results.

:func:`load_case` encodes the program straight from the parsed JSON (no per-op objects)
and keeps the encoding; :meth:`Case.estimate` then runs kernels only. The
:class:`~.program.Program` view is built lazily, on first access of ``case.program``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path

import numpy as np

from fastsched._numba_private import compiled_for
from fastsched._validate import check_int_scalar
from fastsched.costmodel._estimate import estimate_packed
from fastsched.costmodel._settings import check_pipeline_config
from fastsched.costmodel.cost import Cost, _new, _set_out, _set_prep
from fastsched.costmodel.cost_model import CostModel
from fastsched.costmodel.encode import EncodedProgram, encode, gc_paused
from fastsched.costmodel.model import estimate, packed
from fastsched.costmodel.program import Program

__all__ = ["Case", "load_case"]

_SETTINGS = ("pipeline_config", "microbatch_num", "batch_size", "opcall_overhead")
_empty = np.empty


def _setting(name):
    # a plain attribute kept in ``_name``; assigning it drops Case's prepared fast path
    slot = "_" + name

    def get(self):
        return getattr(self, slot)

    def set(self, value):
        self.__dict__[slot] = value
        self.__dict__["_fast"] = None

    return property(get, set, doc=f"``{name}`` (assigning it is seen by the next estimate).")


class Case:
    """A program with the settings it was evaluated under.

    Parameters
    ----------
    name : str
    program : Program, dict or list of rank dicts
    pipeline_config : list or None
    microbatch_num, batch_size : int
    opcall_overhead : float
    microbatch_list : list of int
        Extra microbatch counts (``pipeline_time_by_microbatch``).
    results : dict
        The reference's outputs stored in the file (may be empty).

    Examples
    --------
    >>> c = Case("one", {"vars": [{"name": "x"}], "ops": [{"id": "a", "type": "relu",
    ...          "outputs": [["Out", ["x"]]], "cost": 1.0}]})
    >>> c.estimate().runtime, c.estimate(opcall_overhead=0.5).runtime
    (1.0, 1.5)
    """

    def __init__(
        self,
        name,
        program,
        pipeline_config=None,
        microbatch_num=1,
        batch_size=1,
        opcall_overhead=0.0,
        microbatch_list=(),
        results=None,
    ):
        self.name = name
        self._source = program
        self.pipeline_config = pipeline_config
        self.microbatch_num = microbatch_num
        self.batch_size = batch_size
        self.opcall_overhead = opcall_overhead
        self.microbatch_list = _microbatch_list(microbatch_list)
        if results and not isinstance(results, Mapping):
            raise TypeError(
                f"results must be a JSON object (the reference's outputs) or null, got {type(results).__name__}"
            )
        self.results = dict(results or {})
        self.encoded: EncodedProgram = encode(program)

    # The settings the file's estimate runs under, and the encoding: assigning any of them
    # drops the prepared fast path of estimate() (a list mutated in place is caught there)
    pipeline_config = _setting("pipeline_config")
    microbatch_num = _setting("microbatch_num")
    batch_size = _setting("batch_size")
    opcall_overhead = _setting("opcall_overhead")
    encoded = _setting("encoded")

    def __getstate__(self):
        # the prepared fast path holds a compiled entry point (not picklable); it is rebuilt
        # by the first estimate after unpickling
        state = dict(self.__dict__)
        state["_fast"] = None
        return state

    @cached_property
    def program(self) -> Program:
        """The program as :class:`Program` objects (built on first access)."""
        return Program.from_dict(self._source)

    def _settings(self, overrides):
        kw = {k: getattr(self, k) for k in _SETTINGS}
        kw.update(overrides)
        return kw

    def model(self, **overrides) -> CostModel:
        """Return an initialised :class:`CostModel` with the case's settings + overrides.

        Examples
        --------
        >>> c = Case("two", {"vars": [{"name": "x"}], "ops": [{"id": "a", "type": "relu",
        ...          "outputs": [["Out", ["x"]]], "cost": 1.0}]}, microbatch_list=[1, 4])
        >>> cm = c.model(opcall_overhead=0.5)
        >>> cm.get_cost().runtime, cm.settings.opcall_overhead
        (1.5, 0.5)
        """
        kw = self._settings(overrides)
        cm = CostModel(**kw)
        if kw.get("standalone_cost_data") is None:
            cm.encoded = self.encoded  # same program, no cost data: reuse the encoding
            cm.pp2rank = check_pipeline_config(cm.pp2rank, self.encoded.n_ranks)
        else:
            cm.init(self._source)
        return cm

    def estimate(self, **overrides) -> Cost:
        """Estimate the case; keyword arguments override the file's settings.

        Parameters
        ----------
        **overrides
            Any :func:`~fastsched.costmodel.model.estimate` argument (``microbatch_num``,
            ``mem_unit``, ``schedule``, ...).

        Returns
        -------
        Cost

        Examples
        --------
        >>> c = Case("two", {"vars": [{"name": "x"}], "ops": [{"id": "a", "type": "relu",
        ...          "outputs": [["Out", ["x"]]], "cost": 1.0}]}, microbatch_list=[1, 4])
        >>> c.estimate().runtime, c.estimate(opcall_overhead=0.25).runtime
        (1.0, 1.25)
        """
        fast = self._fast
        if fast is not None and not overrides:
            # the file's settings, unchanged since the constants were prepared (assignments
            # reset _fast; a pipeline config mutated in place is compared by value). The
            # kernel runs on every call, into a fresh output array owned by the result.
            kernel, IF, P, n, prep, src = fast
            if src is None or self._pipeline_config == src:
                out = _empty(n)
                if kernel(IF, P, out):
                    raise RuntimeError(f"schedule {prep.schedule!r} deadlocked")
                c = _new(Cost)  # _cost_view, inlined
                _set_out(c, out)
                _set_prep(c, prep)
                return c
        if overrides:
            return estimate(self.encoded, **self._settings(overrides))
        enc = packed(self.encoded)
        cost = estimate(enc, **self._settings(overrides))
        prep = cost._prep
        # the compiled kernel for exactly these arrays' types (the fast path passes the same
        # two arrays and a fresh float64 output), skipping the dispatcher's type resolution
        kernel = compiled_for(estimate_packed, enc.packed, prep.P, cost._out)
        self._fast = (kernel, enc.packed, prep.P, prep.out_len, prep, prep.pp_src)
        return cost

    def pipeline_time_by_microbatch(self, microbatches=None, **overrides) -> dict:
        """``{m: runtime}`` for each microbatch count (default: the file's list).

        Examples
        --------
        >>> c = Case("two", {"vars": [{"name": "x"}], "ops": [{"id": "a", "type": "relu",
        ...          "outputs": [["Out", ["x"]]], "cost": 1.0}]}, microbatch_list=[1, 4])
        >>> c.pipeline_time_by_microbatch()
        {1: 1.0, 4: 1.0}
        """
        cm = self.model(**overrides)
        ms = self.microbatch_list if microbatches is None else microbatches
        return {int(m): cm.get_pipeline_time(m) for m in ms}


def load_case(path) -> Case:
    """Read and encode a case file.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    Case

    Raises
    ------
    ValueError
        The file holds no program (``ranks`` omitted) or is malformed.

    Examples
    --------
    >>> import json, tempfile, os
    >>> d = {"name": "t", "ranks": [{"vars": [{"name": "x"}], "ops": []}]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = os.path.join(tmp, "t.json")
    ...     _ = open(p, "w").write(json.dumps(d))
    ...     load_case(p).estimate().runtime
    0.0
    """
    # parsing and encoding allocate many containers and no cycles: the cyclic collector is
    # paused for both (once; it would otherwise rescan the young parsed data, see encode)
    with gc_paused():
        return _load_case(os.fspath(path))


def _load_case(path: str) -> Case:
    fd = os.open(path, os.O_RDONLY)  # one read of the known size (buffered open costs ~2 us more)
    try:
        raw = os.read(fd, os.fstat(fd).st_size + 1)
        while len(raw) and (more := os.read(fd, 1 << 20)):  # a file that grew meanwhile
            raw += more
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:  # name the file: json's message does not
        raise ValueError(f"{path}: not a JSON case file ({exc})") from None
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to be a case file") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a case file holds a JSON object")
    if data.get("ranks") is None:
        raise ValueError(f"{path}: no program in this file (ranks omitted)")
    return Case(
        name=str(data["name"]) if "name" in data else Path(path).stem,
        program={"ranks": data["ranks"]},
        pipeline_config=data.get("pipeline_config"),
        microbatch_num=data.get("microbatch_num", 1),
        batch_size=data.get("batch_size", 1),
        opcall_overhead=data.get("opcall_overhead", 0.0),
        microbatch_list=data.get("microbatch_list") or (),
        results=data.get("results"),
    )


def _microbatch_list(counts) -> list:
    # Extra microbatch counts, each checked as microbatch_num is (a string was iterated into
    # its characters, and a bare number failed as "'int' object is not iterable").
    if isinstance(counts, (str, bytes, Mapping)) or not isinstance(counts, Iterable):
        raise TypeError(f"microbatch_list must be a list of microbatch counts, got {type(counts).__name__}")
    return [check_int_scalar(f"microbatch_list[{k}]", m, low=1) for k, m in enumerate(counts)]
