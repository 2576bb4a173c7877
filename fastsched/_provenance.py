"""Provenance of a result: the fastsched that made it, the command or call, the seeds, the inputs' hashes.

Every result a researcher keeps (the ``--json`` summary, the round log, a ``--jobs`` table, a
sweep's folder) carries one record under the key :data:`KEY`, so a number can be traced back to
what produced it and rerun. The record holds nothing that changes from run to run of the same
command (no clock, no host, no process id): the same command on the same inputs writes the same
bytes. Scripts that hash summaries (``benchmarks/sim/command_floors.py``) drop this one key.

A base module: it imports nothing of fastsched but the version.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
from pathlib import Path

from fastsched._version import __version__

__all__ = ["KEY", "record", "describe_input", "set_command", "command", "digest_file", "digest_folder", "python_call"]

#: The one key a summary, a log header or a metadata block holds the record under.
KEY = "provenance"

_command: str | None = None
_command_inputs: dict = {}  # files the command line itself reads (a --config file)
_digests: dict = {}  # (path, size, mtime_ns) -> sha256: a comparison or a sweep hashes each input once


def set_command(argv, inputs=None) -> None:
    """Record the command line that started this process (``None``: none, a Python call).

    :func:`fastsched.cli.main` calls it with its arguments, and ``inputs`` the files the command
    line reads itself (``{"config": path}``); :func:`record` reports both.

    Examples
    --------
    >>> set_command(["simulate", "--policy", "sia"])
    >>> command()
    'fastsched simulate --policy sia'
    >>> set_command(None)
    >>> command() is None
    True
    """
    global _command, _command_inputs
    _command = None if argv is None else shlex.join(["fastsched", *map(str, argv)])
    _command_inputs = {} if argv is None else {k: v for k, v in (inputs or {}).items() if v is not None}


def command() -> str | None:
    """Return the command line recorded by :func:`set_command`, or ``None``.

    Examples
    --------
    >>> set_command(None); command() is None
    True
    """
    return _command


def digest_file(path) -> str:
    """Return the SHA-256 (hex) of a file's bytes (memoised on path, size and modification time).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "w.csv"
    >>> _ = p.write_text("abc")
    >>> digest_file(p)[:16]
    'ba7816bf8f01cfea'
    """
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    found = _digests.get(key)
    if found is None:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        found = _digests[key] = h.hexdigest()
    return found


def digest_folder(path) -> dict:
    """Return a folder's content hash: SHA-256 over its files' relative names and hashes, in name order.

    Returns
    -------
    dict
        ``sha256``, ``files`` (count) and ``bytes`` (total size). Hidden files and ``__pycache__``
        are left out (they are not inputs).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.csv").write_text("1"); _ = (d / "b").mkdir(); _ = (d / "b" / "c.csv").write_text("22")
    >>> out = digest_folder(d)
    >>> out["files"], out["bytes"], len(out["sha256"])
    (2, 3, 64)
    """
    root = Path(path)
    h = hashlib.sha256()
    files = total = 0
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        h.update(rel.as_posix().encode() + b"\0" + digest_file(f).encode() + b"\n")
        files += 1
        total += f.stat().st_size
    return {"sha256": h.hexdigest(), "files": files, "bytes": total}


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, default=repr, separators=(",", ":"))


def describe_input(value):
    """Describe one input: a file or folder by path and content hash, anything else by value and hash.

    Returns
    -------
    dict or None
        ``None`` for ``None``; ``{"path", "sha256", "bytes"}`` for a file; ``{"path", "sha256",
        "files", "bytes"}`` for a folder; ``{"value", "sha256"}`` for a text that names no file (a
        cluster such as ``"6xaws,3xrtx"``, ``"builtin"``); ``{"value", "sha256"}`` of a canonical
        JSON text for other objects (a list of jobs given in Python).

    Examples
    --------
    >>> describe_input(None) is None
    True
    >>> d = describe_input("4xh100,4xa100-80gb")
    >>> d["value"], len(d["sha256"])
    ('4xh100,4xa100-80gb', 64)
    """
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)):
        p = Path(value).expanduser()
        try:
            if p.is_file():
                return {"path": str(value), "sha256": digest_file(p), "bytes": p.stat().st_size}
            if p.is_dir():
                return {"path": str(value), **digest_folder(p)}
        except (OSError, ValueError):
            pass
        text = str(value)
        return {"value": text, "sha256": hashlib.sha256(text.encode()).hexdigest()}
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, os.PathLike)) for v in value):
        return [describe_input(v) for v in value]
    text = _canonical(value if isinstance(value, (dict, list, tuple, int, float, bool)) else repr(value))
    shown = text if len(text) <= 200 else f"{type(value).__name__} of {len(value) if hasattr(value, '__len__') else 1}"
    return {"value": shown, "sha256": hashlib.sha256(text.encode()).hexdigest()}


def _described(value) -> bool:
    return isinstance(value, dict) and "sha256" in value  # already an input's description


def _versions() -> dict:
    out = {"fastsched": __version__, "python": sys.version.split()[0]}
    for name in ("numpy", "numba"):
        module = sys.modules.get(name)
        if module is not None:
            out[name] = getattr(module, "__version__", None)
    return out


def record(*, call=None, seeds=None, inputs=None, **extra) -> dict:
    """Return a provenance record (JSON-ready).

    Parameters
    ----------
    call : str, optional
        The Python call that made the result (``simulate(workload='w.csv', policy='sia')``).
    seeds : dict, optional
        Every seed of the run, by name (``{"seed": 0}``; a sweep's runs: ``{"seeds": [...]}``).
    inputs : dict, optional
        Inputs by name (workload, traces, cluster ...): each described by :func:`describe_input`
        (a value that is already a description, a dict with ``sha256``, is kept).
    **extra
        Further JSON-ready fields, kept as given.

    Returns
    -------
    dict
        ``versions`` (fastsched, python, numpy, numba), ``command`` (the command line, ``None``
        for a Python call), ``call``, ``seeds``, ``inputs`` and ``extra``'s fields.

    Examples
    --------
    >>> r = record(call="simulate()", seeds={"seed": 0}, inputs={"workload": "builtin"})
    >>> r["versions"]["fastsched"] == __version__, r["seeds"], r["inputs"]["workload"]["value"]
    (True, {'seed': 0}, 'builtin')
    """
    out = {
        "versions": _versions(),
        "command": command(),
        "call": call,
        "seeds": dict(seeds or {}),
        "inputs": {
            k: v if _described(v) else describe_input(v) for k, v in {**_command_inputs, **(inputs or {})}.items()
        },
    }
    out.update(extra)
    return out


def python_call(name: str, **kwargs) -> str:
    """Return ``name(k=v, ...)`` of the arguments that are not ``None`` (values by ``repr``, long ones cut).

    Examples
    --------
    >>> python_call("simulate", workload="w.csv", policy=None, seed=1)
    "simulate(workload='w.csv', seed=1)"
    """
    parts = []
    for k, v in kwargs.items():
        if v is None:
            continue
        text = repr(v)
        if len(text) > 120:
            text = f"<{type(v).__name__}{f' of {len(v)}' if hasattr(v, '__len__') else ''}>"
        parts.append(f"{k}={text}")
    return f"{name}({', '.join(parts)})"
