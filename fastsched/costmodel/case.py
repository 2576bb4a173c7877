"""Cases in the ``paddle-cost-model-case/1`` JSON format: program + settings + results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from fastsched.costmodel.model import Cost, CostModel
from fastsched.costmodel.program import Program

__all__ = ["Case", "load_case"]

_SETTINGS = ("pipeline_config", "microbatch_num", "batch_size", "opcall_overhead")


@dataclass
class Case:
    """A program with the settings it was evaluated under.

    Attributes
    ----------
    name : str
    program : Program
    pipeline_config : list or None
    microbatch_num, batch_size : int
    opcall_overhead : float
    microbatch_list : list of int
        Extra microbatch counts (``pipeline_time_by_microbatch``).
    results : dict
        The reference's outputs stored in the file (may be empty).
    """

    name: str
    program: Program
    pipeline_config: list | None = None
    microbatch_num: int = 1
    batch_size: int | None = 1
    opcall_overhead: float = 0.0
    microbatch_list: list = field(default_factory=list)
    results: dict = field(default_factory=dict)

    def model(self, **overrides) -> CostModel:
        """Return an initialised :class:`CostModel` with the case's settings + overrides."""
        kw = {k: getattr(self, k) for k in _SETTINGS}
        kw.update(overrides)
        cm = CostModel(**kw)
        cm.init(self.program)
        return cm

    def estimate(self, **overrides) -> Cost:
        """Estimate the case; keyword arguments override the file's settings.

        Parameters
        ----------
        **overrides
            Any :class:`CostModel` argument (``microbatch_num``, ``mem_unit``, ...).

        Returns
        -------
        Cost
        """
        return self.model(**overrides).get_cost()

    def pipeline_time_by_microbatch(self, microbatches=None, **overrides) -> dict:
        """``{m: runtime}`` for each microbatch count (default: the file's list)."""
        cm = self.model(**overrides)
        cm.get_cost()
        ms = self.microbatch_list if microbatches is None else microbatches
        return {int(m): cm.get_pipeline_time(m) for m in ms}


def load_case(path) -> Case:
    """Read a case file.

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
    """
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a case file holds a JSON object")
    if data.get("ranks") is None:
        raise ValueError(f"{path}: no program in this file (ranks omitted)")
    return Case(
        name=str(data.get("name", path.stem)),
        program=Program.from_dict(data),
        pipeline_config=data.get("pipeline_config"),
        microbatch_num=data.get("microbatch_num", 1),
        batch_size=data.get("batch_size", 1),
        opcall_overhead=data.get("opcall_overhead", 0.0),
        microbatch_list=list(data.get("microbatch_list") or []),
        results=dict(data.get("results") or {}),
    )
