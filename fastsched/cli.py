"""The ``fastsched`` command.

Each subcommand lives next to the code it drives, in a module exposing
``register(subparsers)``; that function adds its parser and sets ``func`` (a callable
taking the parsed namespace and returning an exit status). This file only wires them up,
so adding a command never touches another area's code, and gives every command the same
error style:

* bad input (``ValueError``, ``TypeError``, a missing or unwritable file, a full disk, a
  missing optional dependency): one line ``fastsched COMMAND: error: ...`` on stderr, exit
  status 2;
* anything else: one line naming the exception, exit status 1;
* Ctrl-C: one line (the command may say how to resume), exit status 130, also when it lands
  inside a compiled kernel (numba then reports it as a ``SystemError`` caused by the
  ``KeyboardInterrupt``: see :func:`fastsched._interrupt.is_interrupt`);
* stdout closed early (``fastsched plan --json | head``): no message, exit status 141
  (128 + SIGPIPE, what a tool killed by SIGPIPE gives);
* ``--debug`` (anywhere on the line, or ``FASTSCHED_DEBUG=1``) re-raises instead, with the
  full traceback.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

from fastsched import _interrupt
from fastsched._interrupt import Interrupted, is_interrupt
from fastsched._version import __version__

__all__ = ["main", "build_parser", "Interrupted", "EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_BROKEN_PIPE"]

# (subcommand module, what it provides); a module that is absent is skipped.
_COMMAND_MODULES = (
    "fastsched.sim._cli",
    "fastsched.costmodel._cli",
    "fastsched.costmodel._plan_cli",
    "fastsched.sim._profile_cli",
    "fastsched.sweep._cli",
    "fastsched._info_cli",
)

#: Exit status of a command given bad input (argparse uses the same).
EXIT_BAD_INPUT = 2
#: Exit status after Ctrl-C (128 + SIGINT, the shell convention).
EXIT_INTERRUPTED = 130
#: Exit status when the reader of stdout went away (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141

# Errors that mean "the input or the environment is wrong", not "fastsched is wrong".
_BAD_INPUT = (ValueError, TypeError, OSError, MemoryError, ImportError, OverflowError)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every available subcommand registered.

    Examples
    --------
    >>> parser = build_parser()
    >>> parser.parse_args(["simulate", "--policy", "tiresias"]).policy
    'tiresias'
    """
    parser = argparse.ArgumentParser(
        prog="fastsched",
        description="Goodput-optimised cluster scheduling and cost models on a numba core.",
    )
    parser.add_argument("--version", action="version", version=f"fastsched {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show full tracebacks instead of one-line errors (any position)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue  # that part of fastsched is not built/installed
            raise
        module.register(sub)
    return parser


def _describe(exc: BaseException) -> str:
    """One line for an exception: the message, with the path for OS errors."""
    if isinstance(exc, OSError) and exc.strerror:
        what = {errno.ENOSPC: "no space left on the device"}.get(exc.errno, exc.strerror)
        where = f": {exc.filename}" if exc.filename else ""
        return f"{what}{where}"
    if isinstance(exc, MemoryError):
        return "out of memory (is a size argument far too large?)"
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, KeyError):
        text = f"missing key {text}"
    return " ".join(text.split("\n")[0].split())


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout replaced by an object without a descriptor
        pass


def _interrupted(prefix, exc) -> int:
    how = f"; {exc}" if isinstance(exc, Interrupted) else ""
    print(f"\n{prefix}: interrupted{how}", file=sys.stderr)
    return EXIT_INTERRUPTED


def main(argv=None) -> int:
    """Entry point of the ``fastsched`` console script; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Examples
    --------
    >>> main(["simulate", "--nodes", "0", "--quiet"])
    2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv or os.environ.get("FASTSCHED_DEBUG", "") not in ("", "0")
    argv = [a for a in argv if a != "--debug"]  # accepted after the subcommand too
    try:
        parser = build_parser()  # imports every command's module: seconds on a cold start
    except KeyboardInterrupt:
        if debug:
            raise
        return _interrupted("fastsched", KeyboardInterrupt())
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    prefix = f"fastsched {args.command}"
    try:
        with _interrupt.sigint_handler():
            status = int(args.func(args) or 0)
            sys.stdout.flush()  # here, so that a closed pipe is reported below, not at exit
            _interrupt.check()  # a Ctrl-C that a finalizer swallowed still ends the command
        return status
    except (KeyboardInterrupt, Interrupted) as exc:
        if debug:
            raise
        return _interrupted(prefix, exc)
    except BrokenPipeError:
        if debug:
            raise
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # noqa: BLE001 - one line for everything; --debug shows the rest
        if debug:
            raise
        if is_interrupt(exc):  # Ctrl-C inside a compiled kernel, wrapped by the interpreter
            return _interrupted(prefix, exc)
        if isinstance(exc, _BAD_INPUT):
            print(f"{prefix}: error: {_describe(exc)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(
            f"{prefix}: internal error: {type(exc).__name__}: {_describe(exc)} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
