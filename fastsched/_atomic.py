"""Output files: the one policy every command follows, and files written whole or not at all.

The policy (:func:`check_output`, run before any work):

* an existing file is replaced only with ``force``;
* an input of the run (a file, or any file inside an input folder such as a traces folder) is
  never written, ``force`` or not;
* only regular files are replaced: a device node, a pipe or a socket is refused;
* a symbolic link is written *through*, as a plain ``open`` would: the file it points to is
  replaced and the link stays (the checks above apply to that file);
* the folder must exist and be writable.

The writing (:func:`atomic_path`, :func:`atomic_open`): a temporary file in the target's
folder, renamed into place on success, so a reader never sees half a file and a run that
fails (a full disk, an error, Ctrl-C, ``SIGTERM``, ``SIGHUP``) leaves an existing file as it
was and no temporary file behind. The file gets the permissions a plain ``open`` would give:
an existing file's mode, else ``0o666`` less the umask.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from pathlib import Path

__all__ = ["atomic_path", "atomic_open", "check_output", "output_file", "output_target", "CLEANUP_SIGNALS"]

#: Signals on which temporary files are removed before the process ends (``SIGINT`` raises
#: ``KeyboardInterrupt``, which the writers already clean up after).
CLEANUP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))

_live: set[str] = set()  # temporary files not yet renamed into place
_lock = threading.Lock()
_previous: dict = {}  # signal -> handler in place before ours
_depth = 0


def _umask() -> int:
    """Return the process umask, read without changing it where Linux allows."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    with _lock:  # elsewhere: set and restore (not atomic, hence the lock)
        mask = os.umask(0)
        os.umask(mask)
    return mask


def output_target(path) -> Path:
    """Return the file a write to ``path`` lands in: ``path``, or the file a symbolic link points to.

    Raises
    ------
    ValueError
        ``path`` (or the link's target) exists and is not a regular file (a folder, a device,
        a pipe, a socket).

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> os.symlink(d / "real.csv", d / "link.csv")
    >>> output_target(d / "link.csv").name
    'real.csv'
    >>> output_target("/dev/null")
    Traceback (most recent call last):
    ...
    ValueError: /dev/null is not a regular file (a device, pipe, socket or folder); refusing to replace it
    """
    p = Path(path).expanduser()
    if p.is_symlink():
        p = Path(os.path.realpath(p))  # written through, as a plain open would
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        return p
    except OSError as exc:
        raise ValueError(f"{p}: cannot inspect ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{p} is not a regular file (a device, pipe, socket or folder); refusing to replace it")
    return p


def _inside(p: Path, folder: Path) -> bool:
    try:
        p.relative_to(folder)
    except ValueError:
        return False
    return True


def check_output(path, *, inputs=(), force=False, what="output", force_flag="--force") -> Path:
    r"""Check that a file may be written at ``path`` under the policy above; return the file written.

    Parameters
    ----------
    path : str or path
        Where the file will be written.
    inputs : iterable of str, path or None
        Files and folders the run reads (``None`` entries are ignored); ``path`` may be none
        of them, nor lie inside one of the folders.
    force : bool
        Allow replacing an existing file.
    what : str
        How the path is called in messages (e.g. ``"--output"``).
    force_flag : str or None
        The option that allows replacing, named in the message (``None``: the command has none).

    Returns
    -------
    Path
        The file that will be written (a symbolic link's target).

    Raises
    ------
    ValueError
        A folder or other non-regular file, an input, an existing file without ``force``, or a
        folder that does not exist or cannot be written.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "w.csv").write_text("name\n")
    >>> check_output(d / "log.jsonl").name
    'log.jsonl'
    >>> check_output(d / "w.csv", inputs=[d / "w.csv"], force=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: output ...w.csv is also an input of this run (...w.csv); writing it would destroy the input
    >>> check_output(d / "w.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: output ...w.csv already exists; use --force to replace it
    """
    given = Path(path).expanduser()
    if given.is_dir():
        raise ValueError(f"{what} {given} is a folder; give a file name")
    try:
        target = output_target(given)
    except ValueError as exc:
        raise ValueError(f"{what} {exc}") from None
    real = Path(os.path.realpath(target))
    for src in inputs:
        if src is None:
            continue
        s = Path(os.path.realpath(Path(src).expanduser()))
        same = real == s or (real.exists() and s.exists() and os.path.samefile(real, s))
        if same or (s.is_dir() and _inside(real, s)):
            where = f"also an input of this run ({src})" if same else f"inside the input folder {src}"
            raise ValueError(f"{what} {given} is {where}; writing it would destroy the input")
    if target.exists() and not force:
        how = f"use {force_flag} to replace it" if force_flag else "remove it first or choose another name"
        raise ValueError(f"{what} {given} already exists; {how}")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{what} {given}: folder {parent} does not exist")
    try:  # a real write, as the run will do it (permission bits do not tell root, or a read-only mount)
        tempfile.TemporaryFile(dir=parent).close()
    except OSError as exc:
        raise ValueError(f"{what} {given}: cannot write in folder {parent} ({exc.strerror or exc})") from None
    return target


def _on_signal(signum, frame):
    """Remove the temporary files, then do what the signal did before (by default: end the process)."""
    for tmp in list(_live):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _live.clear()
    previous = _previous.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # the status a shell expects (128 + signum), as without the handler


@contextlib.contextmanager
def _cleanup_on_signals():
    """While active (main thread only: where Python runs handlers), the signals remove the temporary files."""
    global _depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _depth == 0:
        for sig in CLEANUP_SIGNALS:
            prev = signal.getsignal(sig)
            if prev is signal.SIG_IGN or prev is None:
                continue  # ignored (nohup) or set outside Python: the run goes on, so must its files
            _previous[sig] = prev
            signal.signal(sig, _on_signal)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            for sig, prev in list(_previous.items()):
                signal.signal(sig, prev)
            _previous.clear()


def _block(on: bool, previous=None):
    """Block Ctrl-C and the cleanup signals (``on``), or restore the mask ``previous``."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        return None
    if on:
        return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *CLEANUP_SIGNALS})
    signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    return None


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path`` (same suffix); rename it to ``path`` on success.

    ``path`` may be a symbolic link (the file it points to is replaced) but no other kind of
    non-regular file. The result has the permissions of the file it replaces, else those a
    plain ``open`` gives (``0o666`` less the umask).

    Examples
    --------
    >>> import os, pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "fig.svg"
    >>> with atomic_path(target) as tmp:
    ...     _ = pathlib.Path(tmp).write_text("<svg/>")
    ...     tmp.endswith(".svg"), target.exists()
    (True, False)
    >>> target.read_text()
    '<svg/>'
    >>> oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    True
    """
    p = output_target(path)
    try:
        mode = stat.S_IMODE(p.stat().st_mode)  # replacing: keep its mode, as open("w") would
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    with _cleanup_on_signals():
        # No signal between creating the file and recording it (its handler would miss the file).
        blocked = _block(True)
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{p.stem}.", suffix=p.suffix or ".tmp", dir=p.parent)
            _live.add(tmp)
        finally:
            _block(False, blocked)
        try:
            os.fchmod(fd, mode)  # mkstemp makes 0600 files
            os.close(fd)
            yield tmp
            os.replace(tmp, p)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        finally:
            _live.discard(tmp)


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


@contextlib.contextmanager
def output_file(path, *, inputs=(), force=False, what="output", force_flag="--force"):
    """Check ``path`` under the policy (:func:`check_output`), then yield a temporary path renamed onto it.

    For a command that writes one file at the end of its work: one call gives both the checks
    and the atomic write.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> with output_file(target, what="--timeline") as tmp:
    ...     _ = pathlib.Path(tmp).write_text("x")
    >>> with output_file(target, what="--timeline", force_flag=None) as tmp:  # doctest: +ELLIPSIS
    ...     pass
    Traceback (most recent call last):
    ...
    ValueError: --timeline ...t.txt already exists; remove it first or choose another name
    """
    target = check_output(path, inputs=inputs, force=force, what=what, force_flag=force_flag)
    with atomic_path(target) as tmp:
        yield tmp
