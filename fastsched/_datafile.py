"""Read a small JSON or TOML settings file (cluster specs, GPU types) with errors that name the file.

One reader, so every settings file accepts a byte-order mark, refuses text that is not UTF-8 and
refuses pathological nesting (a deeply nested file would otherwise end in an internal
``RecursionError`` inside the JSON parser) in the same way. Imports nothing from fastsched.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["MAX_FILE_DEPTH", "read_data_file"]

#: Deepest bracket nesting accepted in a settings file; real ones need 3 or 4 levels.
MAX_FILE_DEPTH = 32


def _depth(text: str) -> int:
    """Deepest bracket nesting of a JSON/TOML text (brackets in strings counted too: an upper bound)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def read_data_file(path, *, what: str = "file", max_depth: int = MAX_FILE_DEPTH):
    r"""Parse a ``.toml`` file as TOML and anything else as JSON.

    Parameters
    ----------
    path : str or path
        The file.
    what : str
        What the file is, for the messages (``"cluster file"``).
    max_depth : int
        Deepest bracket nesting accepted.

    Returns
    -------
    The parsed data (a dict for TOML; any JSON value otherwise).

    Raises
    ------
    FileNotFoundError
        Naming the file when it does not exist.
    ValueError
        Naming the file: not UTF-8, nested too deep, or not valid TOML/JSON.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.json"
    >>> _ = p.write_text('\ufeff{"nodes": [1, 2]}', encoding="utf-8")
    >>> read_data_file(p)
    {'nodes': [1, 2]}
    >>> _ = p.write_text("[" * 40 + "]" * 40)
    >>> read_data_file(p, what="cluster file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...c.json: cluster file nested more than 32 levels deep
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    try:  # a byte-order mark is accepted, as by the workload and spec readers
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None
    if _depth(text) > max_depth:
        raise ValueError(f"{path}: {what} nested more than {max_depth} levels deep")
    if path.suffix.lower() == ".toml":
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not valid TOML: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
