"""Validating a sweep spec's mapping: keys, values, stated size bounds (see :mod:`.spec`).

Every bound is checked before anything is expanded. Imports no simulator engine: the policies
are loaded only to check ``policy_options`` and to import a policy named ``module:Class``.
"""

from __future__ import annotations

import difflib
import json
import math
import numbers
import os
from pathlib import Path

from fastsched._validate import MAX_INT
from fastsched.sim.inputs.cluster_spec import parse_cluster
from fastsched.sim.inputs.preflight import MAX_GPUS, check_traces_dir
from fastsched.sim.inputs.workload import read_workload
from fastsched.sim.policies.names import POLICY_NAMES, POLICY_OPTIONS
from fastsched.sim.presets import PRESETS, preset_policy, preset_policy_options, preset_shape

__all__ = [
    "MAX_RUNS",
    "MAX_SEED",
    "MAX_SECONDS",
    "OPTION_LIMITS",
    "GRID_KEYS",
    "ALLOWED_KEYS",
    "BUILTIN",
    "canonical",
    "validate",
]

#: Most runs (workloads x grid x repetitions) one sweep may hold: 100,000 runs of the smallest
#: simulation already take hours on a workstation; more is a typing slip (``"seeds": 1e9``).
MAX_RUNS = 100_000
#: Largest seed (``seed``, or one of a ``seeds`` list): the largest integer
#: :func:`fastsched.sim.simulate` accepts (2**53, exact in a float).
MAX_SEED = MAX_INT
#: Largest ``max_time`` and ``interval`` in seconds: the largest integer ``simulate`` accepts.
MAX_SECONDS = MAX_INT
#: Upper bounds of numeric ``policy_options``: the policy allocates arrays of ``pop_size`` x
#: jobs x nodes per round (10,000 x 1,000 jobs x 64 nodes is ~5 GB at 8 bytes), and a round
#: runs ``generations`` generations (the default is 100).
OPTION_LIMITS = {"pop_size": 10_000, "generations": 100_000}

#: Simulation options that may be gridded, in the order the grid is expanded.
GRID_KEYS = (
    "policy",
    "preset",
    "traces",
    "cluster",
    "nodes",
    "gpus",
    "interval",
    "interference",
    "max_nodes",
    "max_time",
    "policy_options",
)
_META_KEYS = ("workloads", "seeds", "seed", "output", "name")
ALLOWED_KEYS = _META_KEYS + GRID_KEYS
BUILTIN = "builtin"


def canonical(obj) -> str:
    """Return canonical JSON text (sorted keys, no whitespace), the form that is hashed.

    Examples
    --------
    >>> canonical({"b": 1, "a": [1.5]})
    '{"a":[1.5],"b":1}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _fail(key, message):
    raise ValueError(f"sweep spec: {key!r} {message}")


def _as_list(key, value, *, dict_is_scalar=False):
    if isinstance(value, (list, tuple)):
        if len(value) == 0:
            _fail(key, "is an empty list: the grid would be empty")
        return list(value)
    if isinstance(value, dict) and not dict_is_scalar:
        _fail(key, "must be a value or a list of values, not a mapping")
    return [value]


def _check_int(key, v, low, high=None):
    if isinstance(v, float) and not math.isfinite(v):
        _fail(key, f"must hold integers, got {v!r}")
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or (isinstance(v, float) and v != int(v)):
        _fail(key, f"must hold integers, got {v!r}")
    if int(v) < low:
        _fail(key, f"must be >= {low}, got {v!r}")
    if high is not None and int(v) > high:
        _fail(key, f"must be <= {high}, got {v!r}")
    return int(v)


def _check_values(key, values, base_dir, *, typed=False):
    out = []
    for v in values:
        if key == "policy":
            if not isinstance(v, str) or not v:
                _fail(key, f"must be one of {list(POLICY_NAMES)}, 'package.module:Class' or a plugin's name, got {v!r}")
            if v not in POLICY_NAMES:  # a researcher's own policy, as `fastsched simulate --policy` takes it
                from fastsched.sim.policies.registry import load_policy

                try:
                    load_policy(v)
                except (TypeError, ValueError) as exc:
                    _fail(key, str(exc))
        elif key == "preset":
            if not isinstance(v, str) or v not in PRESETS:
                _fail(key, f"must be one of {sorted(PRESETS)}, got {v!r}")
        elif key in ("nodes", "gpus"):
            v = _check_int(key, v, 1, MAX_GPUS)
        elif key in ("interval", "max_time"):
            v = _check_int(key, v, 1, MAX_SECONDS)
        elif key == "max_nodes":
            v = None if v is None else _check_int(key, v, 1, MAX_GPUS)
        elif key == "interference":
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0.0 <= float(v) < 1.0):
                _fail(key, f"must be a number in [0, 1), got {v!r}")
            v = float(v)
        elif key == "traces":
            if not isinstance(v, str) or not v:
                _fail(key, f"must be a folder path, got {v!r}")
            v = os.path.normpath(v)  # "./t" and "t" are one folder
            p = Path(v).expanduser()
            p = p if p.is_absolute() else base_dir / p
            if not p.is_dir():
                _fail(key, f"names a trace folder that does not exist: {p}")
            if not typed:  # a typed cluster reads per-GPU-type traces on purpose
                try:
                    check_traces_dir(p)
                except ValueError as exc:
                    _fail(key, str(exc))
        elif key == "cluster":
            if not isinstance(v, str):
                _fail(key, f"must be a cluster spec string or file path, got {v!r}")
            if v.lower().endswith((".toml", ".json")):
                p = Path(v).expanduser()
                v = str(p if p.is_absolute() else base_dir / p)
            try:
                parse_cluster(v)
            except (ValueError, FileNotFoundError) as exc:
                _fail(key, str(exc))
        elif key == "policy_options":
            if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
                _fail(key, f"must be a mapping of option names to values (or a list of them), got {v!r}")
            try:
                canonical(v)
            except (TypeError, ValueError):
                _fail(key, f"must be JSON-serialisable, got {v!r}")
            for name, limit in OPTION_LIMITS.items():
                x = v.get(name)
                if isinstance(x, numbers.Real) and not isinstance(x, bool) and not x <= limit:
                    _fail(key, f"{name} must be <= {limit} (see OPTION_LIMITS), got {x!r}")
        out.append(v)
    if len({canonical(v) for v in out}) != len(out):
        _fail(key, f"lists the same value twice: {values!r}")
    return out


def _check_policy_options(grid) -> None:
    """Build the policy of every (preset, policy, policy_options) of the grid: bad options fail here."""
    for preset in grid.get("preset", ["default"]):
        for policy in grid.get("policy", [None]):
            name = preset_policy(preset, policy)
            for opts in grid.get("policy_options", [{}]):
                if not opts:
                    continue
                if name not in POLICY_OPTIONS:
                    _fail("policy_options", f"apply to {list(POLICY_OPTIONS)} only; {name} takes none, got {opts!r}")
                seed = {"seed": 0} if name == "pollux" else {}
                from fastsched.sim.policies.registry import make_policy  # the policies: only for options

                try:
                    make_policy(name, **{**preset_policy_options(preset, name), **opts, **seed})
                except (TypeError, ValueError) as exc:
                    _fail("policy_options", f"{opts!r} is not valid for {name} (preset {preset!r}): {exc}")


def _check_cluster_options(raw, grid, presets) -> None:
    """Refuse combinations every run would fail on (simulate's rules), before any run."""
    if "cluster" in raw:
        both = [k for k in ("nodes", "gpus") if k in raw]
        if both:
            _fail("cluster", f"and {' and '.join(map(repr, both))} are exclusive: give one cluster description")

    # A run fails when it autoscales (max_nodes set) on a typed cluster: the spec's own, or its
    # preset's when the spec gives no nodes/gpus. Refused only when that is every run; a grid
    # that mixes (presets with and without a typed cluster, max_nodes None and set) is the
    # cross product the user asked for, and its failing runs are reported as failed runs.
    def typed(preset) -> bool:
        if "cluster" in raw:
            return True
        return "nodes" not in raw and "gpus" not in raw and bool(preset_shape(preset)[0])

    all_typed = all(typed(p) for p in grid.get("preset", ["default"]))  # simulate's default preset
    every_autoscales = "max_nodes" in grid and all(n is not None for n in grid["max_nodes"])
    if all_typed and every_autoscales:
        _fail("max_nodes", "(autoscaling) needs a cluster of one unnamed GPU type (nodes/gpus), not a typed cluster")


def validate(raw: dict, base: Path) -> tuple:
    """Check a spec's mapping; return ``(workloads, grid, seeds, seed, output, raw as JSON)``.

    Examples
    --------
    >>> from pathlib import Path
    >>> validate({"workloads": "builtin", "policy": ["fifo", "las"], "seeds": 2}, Path("."))[:4]
    (['builtin'], {'policy': ['fifo', 'las']}, 2, 0)
    """
    for key in raw:
        if key not in ALLOWED_KEYS:
            close = difflib.get_close_matches(str(key), ALLOWED_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"sweep spec: unknown key {key!r}{hint}; allowed keys: {', '.join(ALLOWED_KEYS)}")
    if "workloads" not in raw:
        raise ValueError("sweep spec: 'workloads' is required (CSV paths or \"builtin\")")

    workloads = []
    first: dict = {}
    for wl in _as_list("workloads", raw["workloads"]):
        if not isinstance(wl, str) or not wl:
            _fail("workloads", f"must hold CSV paths or 'builtin', got {wl!r}")
        same = wl
        if wl != BUILTIN:
            p = Path(wl).expanduser()
            p = p if p.is_absolute() else base / p
            if not p.is_file():
                _fail("workloads", f"names a workload file that does not exist: {p}")
            try:
                read_workload(p)
            except ValueError as exc:
                _fail("workloads", f"names an unreadable workload {p}: {exc}")
            same = os.path.realpath(p)  # "w.csv", "./w.csv" and a link to it are one workload
            wl = os.path.normpath(wl)
        if same in first:
            _fail("workloads", f"lists the same workload twice ({first[same]!r} and {wl!r})")
        first[same] = wl
        workloads.append(wl)

    seeds = raw.get("seeds", 1)
    if isinstance(seeds, (list, tuple)):
        if not seeds:
            _fail("seeds", "is an empty list: the grid would be empty")
        if len(seeds) > MAX_RUNS:
            _fail("seeds", f"lists {len(seeds)} seeds, more than a sweep's limit of {MAX_RUNS} runs")
        seeds = [_check_int("seeds", s, 0, MAX_SEED) for s in seeds]
        if len(set(seeds)) != len(seeds):
            _fail("seeds", "lists the same seed twice")
    else:
        seeds = _check_int("seeds", seeds, 0)
        if seeds == 0:
            _fail("seeds", "is 0: the grid would be empty")
        if seeds > MAX_RUNS:
            _fail("seeds", f"is {seeds} repetitions, more than a sweep's limit of {MAX_RUNS} runs")
    seed = _check_int("seed", raw.get("seed", 0), 0, MAX_SEED)
    output = raw.get("output")
    if output is not None and not isinstance(output, str):
        _fail("output", f"must be a folder path, got {output!r}")

    presets = raw.get("preset", [])
    presets = presets if isinstance(presets, list) else [presets]
    typed = "cluster" in raw or any(p in PRESETS and preset_shape(p)[0] for p in presets if isinstance(p, str))
    grid = {}
    for key in GRID_KEYS:
        if key in raw:
            values = _as_list(key, raw[key], dict_is_scalar=key == "policy_options")
            grid[key] = _check_values(key, values, base, typed=typed)
    n_runs = (
        len(workloads) * math.prod(len(v) for v in grid.values()) * (seeds if isinstance(seeds, int) else len(seeds))
    )
    if n_runs > MAX_RUNS:
        raise ValueError(f"sweep spec: the grid holds {n_runs} runs, more than a sweep's limit of {MAX_RUNS}")
    biggest = max([*grid.get("nodes", [16]), *(n for n in grid.get("max_nodes", []) if n is not None)])
    if biggest * max(grid.get("gpus", [4])) > MAX_GPUS:
        _fail("nodes", f"x gpus reaches {biggest * max(grid.get('gpus', [4]))} GPUs, more than the limit of {MAX_GPUS}")
    _check_cluster_options(raw, grid, presets)
    _check_policy_options(grid)
    json_raw = json.loads(json.dumps(raw, default=str))
    return workloads, grid, seeds, seed, output, json_raw
