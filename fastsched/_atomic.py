"""Files written whole or not at all: a temporary file in the same folder, renamed into place.

A reader never sees half a file, and a run that fails (a full disk, Ctrl-C, an error) leaves an
existing file as it was and no temporary file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_path", "atomic_open"]


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path`` (same suffix); rename it to ``path`` on success.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "fig.svg"
    >>> with atomic_path(target) as tmp:
    ...     _ = pathlib.Path(tmp).write_text("<svg/>")
    ...     tmp.endswith(".svg"), target.exists()
    (True, False)
    >>> target.read_text()
    '<svg/>'
    """
    p = Path(path).expanduser()
    fd, tmp = tempfile.mkstemp(prefix=f".{p.stem}.", suffix=p.suffix or ".tmp", dir=p.parent)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_open(path, mode="w"):
    """Open a temporary text file beside ``path``; on success close it and rename it to ``path``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> try:
    ...     with atomic_open(target) as f:
    ...         _ = f.write("half a line")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> list(target.parent.iterdir())
    []
    """
    with atomic_path(path) as tmp, open(tmp, mode) as f:
        yield f
