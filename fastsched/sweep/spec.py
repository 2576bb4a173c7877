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
``policy``
    A built-in name, ``"package.module:Class"`` or a plugin's name, as ``fastsched simulate
    --policy`` takes it (the command line imports modules of the current folder too; on an
    existing ``--scheduler`` the workers must be able to import it). A policy's own file is
    part of its runs' ids: an edited policy is run again.
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

The spec file is read in :mod:`._spec_read` and its mapping validated in :mod:`._spec_check`;
this module holds the validated spec and its expansion into runs.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fastsched._version import __version__
from fastsched.sim.policies.names import POLICY_NAMES
from fastsched.sweep._spec_check import (
    BUILTIN,
    GRID_KEYS,
    MAX_RUNS,
    MAX_SEED,
    OPTION_LIMITS,
    canonical,
    validate,
)
from fastsched.sweep._spec_read import MAX_SPEC_BYTES, MAX_SPEC_NODES, read_spec_file

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


def config_key(config: dict) -> str:
    """Return a stable hex digest of a configuration (independent of dict order and of the process).

    Examples
    --------
    >>> key = config_key({"workload": "builtin", "policy": "tiresias"})
    >>> len(key), key == config_key({"policy": "tiresias", "workload": "builtin"})
    (64, True)
    """
    return hashlib.sha256(canonical(config).encode()).hexdigest()


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
    digest = hashlib.sha256(canonical(config).encode()).digest()
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
        if cfg.get("policy") is not None and cfg["policy"] not in POLICY_NAMES:
            files["policy"] = _policy_source(cfg["policy"])  # an edited policy is run again
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


def _policy_source(name):
    """Return the file defining a policy named ``module:Class`` or by a plugin (``None``: no file)."""
    import sys

    from fastsched.sim.policies.registry import load_policy

    path = getattr(sys.modules.get(load_policy(name).__module__), "__file__", None)
    return path if path and os.path.isfile(path) else None


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
        raw = read_spec_file(path)
        base = Path(base_dir) if base_dir is not None else path.resolve().parent
        source = path
    elif isinstance(spec, dict):
        raw = dict(spec)
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        source = None
    else:
        raise TypeError(f"spec must be a dict or a path to a spec file, got {type(spec).__name__}")

    try:
        workloads, grid, seeds, seed, output, json_raw = validate(raw, base)
        return SweepSpec(workloads, grid, seeds, seed, base, output, json_raw, source)
    except ValueError as exc:
        if isinstance(spec, (str, Path)):  # name the file, as the parse errors do
            text = str(exc)
            named = text.replace("sweep spec:", f"{Path(spec)}:", 1) if "sweep spec:" in text else f"{spec}: {text}"
            raise ValueError(named) from None
        raise


def clean_number(x):
    """Convert to a float for a table: finite floats as is, NaN/inf/None as ``None``."""
    if x is None:
        return None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None
