"""Sweep specifications: load, validate and expand a grid of simulation configurations.

A spec is a mapping (a Python dict, or a JSON / TOML / YAML file holding one):

``workloads`` (required)
    A workload CSV path, ``"builtin"``, or a list of them. Relative paths are resolved
    against the spec file's folder (against the current folder for a dict).
``seeds``
    A count ``N`` (default 1): repetitions ``0..N-1``, each with a seed derived from
    (``seed``, configuration, repetition); or a list of seeds used verbatim, one repetition each.
``seed``
    The sweep's base seed (default 0), an integer >= 0.
``output``
    Default output folder (relative paths resolved like the workloads).
any :func:`fastsched.sim.simulate` option
    ``policy``, ``preset``, ``traces``, ``cluster``, ``nodes``, ``gpus``, ``interval``,
    ``interference``, ``max_nodes``, ``max_time``, ``policy_options``: a scalar, or a list of
    values to grid over (``policy_options`` is a dict, or a list of dicts; ``cluster`` a spec
    such as ``"6xaws,3xrtx,2xdgx-ext"`` or a TOML/JSON node-group file).

Everything is checked before any simulation runs (``policy_options`` by building the policy of
every combination in the grid); errors are ``ValueError`` naming the key. Sizes have stated
upper bounds (:data:`MAX_RUNS`, :data:`MAX_SEED`, :data:`MAX_SPEC_NODES`, :data:`OPTION_LIMITS`
...), checked before anything is expanded, so a typing slip fails at once instead of running
out of time or memory.

A workload is one workload however its path is spelled (``"w.csv"`` and ``"./w.csv"``). A
run's id (what resuming matches) is keyed by content: the workload's bytes, the traces
folder's and a cluster file's, the options of its configuration, its seed and the fastsched
version; an edited input gets a new id, so it is run again and the stale row is never reported.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import numbers
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fastsched._validate import MAX_INT
from fastsched._version import __version__
from fastsched.sim.api import PRESETS
from fastsched.sim.cluster_spec import parse_cluster
from fastsched.sim.policies import POLICY_NAMES, POLICY_OPTIONS, make_policy
from fastsched.sim.preflight import MAX_GPUS, check_traces_dir
from fastsched.sim.workload import read_workload

__all__ = [
    "SweepSpec",
    "RunConfig",
    "load_spec",
    "GRID_KEYS",
    "derive_seed",
    "config_key",
    "MAX_RUNS",
    "MAX_SEED",
    "MAX_SPEC_BYTES",
    "MAX_SPEC_NODES",
    "OPTION_LIMITS",
]

#: Most runs (workloads x grid x repetitions) one sweep may hold: 100,000 runs of the smallest
#: simulation already take hours on a workstation; more is a typing slip (``"seeds": 1e9``).
MAX_RUNS = 100_000
#: Largest seed (``seed``, or one of a ``seeds`` list): the largest integer
#: :func:`fastsched.sim.simulate` accepts (2**53, exact in a float).
MAX_SEED = MAX_INT
#: Largest ``max_time`` and ``interval`` in seconds: the largest integer ``simulate`` accepts.
MAX_SECONDS = MAX_INT
#: Largest spec file read: a spec is a few hundred bytes; 10 MB leaves room for long lists.
MAX_SPEC_BYTES = 10_000_000
#: Most values a spec may hold once YAML aliases are expanded (a "billion laughs" spec of 600
#: bytes expands to 10**9): 100,000 is far above any grid :data:`MAX_RUNS` allows.
MAX_SPEC_NODES = 100_000
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


def _canonical(obj) -> str:
    """Canonical JSON text (sorted keys, no whitespace) used for hashing."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def config_key(config: dict) -> str:
    """Return a stable hex digest of a configuration (independent of dict order and of the process).

    Examples
    --------
    >>> key = config_key({"workload": "builtin", "policy": "tiresias"})
    >>> len(key), key == config_key({"policy": "tiresias", "workload": "builtin"})
    (64, True)
    """
    return hashlib.sha256(_canonical(config).encode()).hexdigest()


def derive_seed(sweep_seed: int, config: dict, repetition: int) -> int:
    """Seed of one run from (sweep seed, configuration, repetition).

    Uses :class:`numpy.random.SeedSequence` keyed by the SHA-256 of the configuration's
    canonical JSON, so it never depends on Python's salted ``hash``, on the worker, or on
    the order of execution.

    Returns
    -------
    int
        A seed in ``[0, 2**31)``.

    Examples
    --------
    >>> cfg = {"workload": "builtin", "policy": "tiresias"}
    >>> derive_seed(7, cfg, 0)
    1944921588
    >>> derive_seed(7, {"policy": "tiresias", "workload": "builtin"}, 0), derive_seed(7, cfg, 1) != derive_seed(7, cfg, 0)
    (1944921588, True)
    """
    digest = hashlib.sha256(_canonical(config).encode()).digest()
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    ss = np.random.SeedSequence(entropy=[int(sweep_seed), *words, int(repetition)])
    return int(ss.generate_state(1, np.uint32)[0] >> 1)


@dataclass(frozen=True)
class RunConfig:
    """One simulation of a sweep.

    Attributes
    ----------
    config : dict
        The configuration as written in the spec (``workload`` plus the gridded options);
        what identifies the run in the tables.
    repetition : int
    seed : int
        The seed passed to :func:`fastsched.sim.simulate`.
    kwargs : dict
        Keyword arguments of ``simulate`` (paths resolved).
    run_id : str
        Stable identifier of (config, repetition, seed), used to resume.

    Examples
    --------
    >>> run = load_spec({"workloads": "builtin", "policy": ["tiresias"], "seed": 7}).runs()[0]
    >>> run.config, run.repetition, run.seed, len(run.run_id)
    ({'workload': 'builtin', 'policy': 'tiresias'}, 0, 1944921588, 20)
    >>> run.kwargs["workload"], run.kwargs["policy"], run.kwargs["seed"]  # None: the builtin workload
    (None, 'tiresias', 1944921588)
    """

    config: dict
    repetition: int
    seed: int
    kwargs: dict = field(repr=False)
    run_id: str = ""


@dataclass
class SweepSpec:
    """A validated sweep.

    Attributes
    ----------
    workloads : list of str
        As written in the spec, normalised (``"./w.csv"`` is ``"w.csv"``).
    grid : dict
        Key -> list of values, for the keys present in the spec (in :data:`GRID_KEYS` order).
    seeds : int or list of int
    seed : int
    base_dir : Path
        Folder against which relative paths are resolved.
    output : str or None
    raw : dict
        The spec as given (JSON-ready).
    source : Path or None
        The spec file, when read from one.

    Examples
    --------
    >>> spec = load_spec({"workloads": "builtin", "policy": ["tiresias", "optimus"], "seeds": 2, "seed": 7})
    >>> spec.workloads, spec.grid, spec.repetitions, spec.output_dir()
    (['builtin'], {'policy': ['tiresias', 'optimus']}, 2, None)
    >>> spec.configs()
    [{'workload': 'builtin', 'policy': 'tiresias'}, {'workload': 'builtin', 'policy': 'optimus'}]
    >>> [(run.config["policy"], run.repetition) for run in spec.runs()]
    [('tiresias', 0), ('tiresias', 1), ('optimus', 0), ('optimus', 1)]
    """

    workloads: list
    grid: dict
    seeds: object
    seed: int
    base_dir: Path
    output: str | None
    raw: dict

    source: Path | None = None

    @property
    def repetitions(self) -> int:
        """Runs per configuration."""
        return self.seeds if isinstance(self.seeds, int) else len(self.seeds)

    def configs(self) -> list[dict]:
        """Return the configurations (without seeds), workloads outermost, in a stable order.

        Examples
        --------
        >>> spec = load_spec({"workloads": "builtin", "policy": ["tiresias", "optimus"], "interference": [0.0, 0.25]})
        >>> [(c["policy"], c["interference"]) for c in spec.configs()]
        [('tiresias', 0.0), ('tiresias', 0.25), ('optimus', 0.0), ('optimus', 0.25)]
        """
        keys = list(self.grid)
        out = []
        for wl in self.workloads:
            for values in itertools.product(*(self.grid[k] for k in keys)):
                cfg = {"workload": wl}
                cfg.update(zip(keys, values, strict=True))
                out.append(cfg)
        return out

    def runs(self) -> list[RunConfig]:
        """Every run (configuration x repetition), in table order.

        Examples
        --------
        >>> spec = load_spec({"workloads": "builtin", "policy": ["tiresias"], "seeds": [3, 5]})
        >>> [(run.repetition, run.seed, run.kwargs["policy"], run.kwargs["workload"]) for run in spec.runs()]
        [(0, 3, 'tiresias', None), (1, 5, 'tiresias', None)]
        """
        runs = []
        digests: dict = {}
        for cfg in self.configs():
            kwargs = {k: v for k, v in cfg.items() if k != "workload"}
            kwargs["workload"] = None if cfg["workload"] == BUILTIN else str(self._resolve(cfg["workload"]))
            if "traces" in kwargs:
                kwargs["traces"] = str(self._resolve(kwargs["traces"]))
            content = self._content(cfg, kwargs, digests)
            for rep in range(self.repetitions):
                seed = derive_seed(self.seed, cfg, rep) if isinstance(self.seeds, int) else int(self.seeds[rep])
                ident = {"config": cfg, "content": content, "repetition": rep, "seed": seed, "version": __version__}
                runs.append(RunConfig(cfg, rep, seed, {**kwargs, "seed": seed}, config_key(ident)[:20]))
        return runs

    @staticmethod
    def _content(cfg, kwargs, digests) -> dict:
        """SHA-256 of the files a configuration reads (its workload, traces folder, cluster file)."""
        files = {"workload": kwargs["workload"], "traces": kwargs.get("traces")}
        if isinstance(cfg.get("cluster"), str) and cfg["cluster"].lower().endswith((".toml", ".json")):
            files["cluster"] = cfg["cluster"]
        out = {}
        for key, path in files.items():
            if path is not None:
                real = os.path.realpath(path)
                if real not in digests:
                    digests[real] = _digest(Path(real))
                out[key] = digests[real]
        return out

    def inputs(self) -> list[Path]:
        """Return the files and folders the sweep reads: the spec file, workloads, traces folders, cluster files.

        Examples
        --------
        >>> load_spec({"workloads": "builtin"}).inputs()
        []
        """
        out = [self.source] if self.source is not None else []
        out += [self._resolve(w) for w in self.workloads if w != BUILTIN]
        out += [self._resolve(t) for t in self.grid.get("traces", [])]
        out += [Path(c) for c in self.grid.get("cluster", []) if c.lower().endswith((".toml", ".json"))]
        return out

    def _resolve(self, path) -> Path:
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.base_dir / p

    def output_dir(self) -> Path | None:
        """Return the spec's ``output`` folder, resolved, or ``None``.

        Examples
        --------
        >>> spec = load_spec({"workloads": "builtin", "output": "out"}, base_dir="/tmp/sweeps")
        >>> spec.output_dir().as_posix()
        '/tmp/sweeps/out'
        """
        return None if self.output is None else self._resolve(self.output)


def _digest(path: Path) -> str:
    """SHA-256 of a file's bytes, or of a folder's files (relative names and bytes, in name order)."""
    h = hashlib.sha256()
    if path.is_dir():
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(f.relative_to(path).as_posix().encode() + b"\0")
            h.update(_digest(f).encode())
        return h.hexdigest()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# -- loading -------------------------------------------------------------------------------
def _expanded_size(node, memo) -> int:
    """Values a composed YAML node stands for once its aliases are expanded (shared nodes counted each time)."""
    key = id(node)
    if key not in memo:
        memo[key] = 1  # a node that contains itself: counted once here, refused by the constructor
        value = node.value
        if isinstance(value, list):
            kids = [x for pair in value for x in (pair if isinstance(pair, tuple) else (pair,))]
            memo[key] = 1 + sum(_expanded_size(k, memo) for k in kids)
    return memo[key]


def _yaml_load(text: str, path: Path):
    """``yaml.safe_load`` that refuses a document expanding to more than :data:`MAX_SPEC_NODES` values."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node, {})
        if size > MAX_SPEC_NODES:
            raise ValueError(
                f"{path}: the spec expands to {size} values through YAML aliases (&/*), more than the limit "
                f"of {MAX_SPEC_NODES}"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _read_file(path: Path) -> dict:
    if not path.is_file():
        raise FileNotFoundError(f"sweep spec not found: {path}")
    if path.stat().st_size > MAX_SPEC_BYTES:
        raise ValueError(f"{path}: {path.stat().st_size} bytes, more than a spec's limit of {MAX_SPEC_BYTES}")
    suffix = path.suffix.lower()
    if suffix == ".json":
        parse = json.loads
    elif suffix == ".toml":
        import tomllib

        parse = tomllib.loads
    elif suffix in (".yaml", ".yml"):
        try:
            import yaml  # noqa: F401 - only to say what is missing
        except ImportError:
            raise ValueError(f"{path}: YAML specs need PyYAML (pip install pyyaml); use JSON or TOML") from None

        def parse(text):
            return _yaml_load(text, path)
    else:
        raise ValueError(f"{path}: unknown spec format {suffix!r} (use .json, .toml, .yaml or .yml)")
    try:
        data = parse(path.read_text(encoding="utf-8-sig"))
    except RecursionError:
        raise ValueError(f"{path}: could not parse the spec: nested too deeply") from None
    except ValueError as exc:
        if str(exc).startswith(str(path)):  # ours, already naming the file
            raise
        raise ValueError(f"{path}: could not parse the spec: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - JSON / TOML / YAML parser errors
        raise ValueError(f"{path}: could not parse the spec: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the spec must be a mapping of keys to values")
    return data


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
            if not isinstance(v, str) or v not in POLICY_NAMES:
                _fail(key, f"must be one of {list(POLICY_NAMES)}, got {v!r}")
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
                _canonical(v)
            except (TypeError, ValueError):
                _fail(key, f"must be JSON-serialisable, got {v!r}")
            for name, limit in OPTION_LIMITS.items():
                x = v.get(name)
                if isinstance(x, numbers.Real) and not isinstance(x, bool) and not x <= limit:
                    _fail(key, f"{name} must be <= {limit} (see OPTION_LIMITS), got {x!r}")
        out.append(v)
    if len({_canonical(v) for v in out}) != len(out):
        _fail(key, f"lists the same value twice: {values!r}")
    return out


def _check_policy_options(grid) -> None:
    """Build the policy of every (preset, policy, policy_options) of the grid: bad options fail here."""
    for preset in grid.get("preset", ["default"]):
        for policy in grid.get("policy", [None]):
            name = policy or PRESETS[preset]["policy"]
            for opts in grid.get("policy_options", [{}]):
                if not opts:
                    continue
                if name not in POLICY_OPTIONS:
                    _fail("policy_options", f"apply to {list(POLICY_OPTIONS)} only; {name} takes none, got {opts!r}")
                seed = {"seed": 0} if name == "pollux" else {}
                try:
                    make_policy(name, **{**PRESETS[preset].get(name, {}), **opts, **seed})
                except (TypeError, ValueError) as exc:
                    _fail("policy_options", f"{opts!r} is not valid for {name} (preset {preset!r}): {exc}")


def load_spec(spec, *, base_dir=None) -> SweepSpec:
    """Load and validate a sweep spec.

    Parameters
    ----------
    spec : dict, str, path or SweepSpec
        The spec itself, or a ``.json`` / ``.toml`` / ``.yaml`` file holding it.
    base_dir : str or path, optional
        Folder for relative paths (default: the spec file's folder, or the current folder).

    Returns
    -------
    SweepSpec

    Raises
    ------
    ValueError
        Unknown key, missing or empty ``workloads``, a workload file that does not exist or
        cannot be read, an empty grid, or a bad value; the message names the key.
    FileNotFoundError
        If the spec file does not exist.

    Examples
    --------
    >>> spec = load_spec({"workloads": "builtin", "policy": ["tiresias", "optimus"], "seeds": 2})
    >>> len(spec.runs()), load_spec(spec) is spec
    (4, True)
    >>> load_spec({"workloads": "builtin", "polcy": ["tiresias"]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...polcy...
    """
    if isinstance(spec, SweepSpec):
        return spec
    if isinstance(spec, (str, Path)):
        path = Path(spec).expanduser()
        raw = _read_file(path)
        base = Path(base_dir) if base_dir is not None else path.resolve().parent
        source = path
    elif isinstance(spec, dict):
        raw = dict(spec)
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        source = None
    else:
        raise TypeError(f"spec must be a dict or a path to a spec file, got {type(spec).__name__}")

    try:
        spec_obj = _validate(raw, base)
        spec_obj.source = source
        return spec_obj
    except ValueError as exc:
        if isinstance(spec, (str, Path)):  # name the file, as the parse errors do
            text = str(exc)
            named = text.replace("sweep spec:", f"{Path(spec)}:", 1) if "sweep spec:" in text else f"{spec}: {text}"
            raise ValueError(named) from None
        raise


def _validate(raw: dict, base: Path) -> SweepSpec:
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
    typed = "cluster" in raw or any(isinstance(p, str) and PRESETS.get(p, {}).get("cluster") for p in presets)
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
    _check_policy_options(grid)
    json_raw = json.loads(json.dumps(raw, default=str))
    return SweepSpec(workloads, grid, seeds, seed, base, output, json_raw)


def clean_number(x):
    """Convert to a float for a table: finite floats as is, NaN/inf/None as ``None``."""
    if x is None:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None
