"""``profile.json``: how each GPU type of a profile folder was priced, and which are low-confidence.

Written by :func:`fastsched.catalog.profile.write_profile` beside the trace files (the trace
readers ignore it), read by :func:`read_profile_info`: the uncertainty bands
(:mod:`fastsched.sweep.uncertainty`) take each type's mode and prices from it, and a run's
summary names its low-confidence profiles from it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from fastsched._atomic import atomic_open
from fastsched.catalog.models import ModelSpec
from fastsched.catalog.oracle import HOST_BOUND_RATIO, flat_efficiency, host_share

__all__ = ["PROFILE_INFO", "read_profile_info"]

#: The file of a profile folder that says how each type was priced and which are low-confidence.
PROFILE_INFO = "profile.json"


def _type_info(app, mode: str, bs) -> dict:
    """Return what :data:`PROFILE_INFO` says of one type (JSON-ready)."""
    share = bs.host_share if bs is not None and math.isfinite(bs.host_share) else None
    if share is None:  # a datasheet type, or a drawn bootstrap (uncertainty bands) that did not measure it
        share = host_share(app.model, app.gpu, efficiency=app.efficiency, floor_s=app.floor, adjust=app.adjust)
    # efficiency: the flat share of the peaks the type is priced at; null: the GEMM model
    eff = flat_efficiency(app.model, app.gpu, app.efficiency)
    out = {"gpu": app.gpu.name, "mode": mode, "efficiency": eff, "floor_s": app.floor or 0.0,
           "host_share": share, "low_confidence": bool(share >= HOST_BOUND_RATIO)}  # fmt: skip
    if app.adjust is not None:
        out["adjust"] = app.adjust._asdict()
    if bs is not None:
        out["bootstrap"] = {"rows": bs.rows, "node_row": list(bs.node_row) if bs.node_row else None,
                            "fit_error": bs.fit_error if math.isfinite(bs.fit_error) else None}  # fmt: skip
    return out


def _write_info(path: Path, m: ModelSpec, info: dict) -> None:
    old = read_profile_info(path.parent) or {}
    types = {**old.get("types", {}), **info}
    spec = {k: list(v) if isinstance(v, tuple) else v for k, v in m._asdict().items()}
    data = {"model": m.name, "spec": spec, "host_bound_ratio": HOST_BOUND_RATIO, "types": types,
            "low_confidence": sorted(n for n, v in types.items() if v.get("low_confidence"))}  # fmt: skip
    with atomic_open(path, "w") as f:
        f.write(json.dumps(data, indent=1, sort_keys=True) + "\n")


def read_profile_info(app_dir) -> dict | None:
    """Return the :data:`PROFILE_INFO` record of a profile folder (``None``: none, or not a readable record).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fastsched.catalog.profile import write_profile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_profile("ncf", ["t4"], d)
    >>> read_profile_info(d / "ncf")["low_confidence"]  # NCF's host rivals its GPU
    ['aws']
    """
    path = Path(app_dir) / PROFILE_INFO
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("types"), dict) else None
