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
import re
import sys

from fastsched import _interrupt, _provenance
from fastsched._interrupt import Interrupted, is_interrupt
from fastsched._version import __version__

__all__ = [
    "main",
    "build_parser",
    "route_argv",
    "Interrupted",
    "EXIT_BAD_INPUT",
    "EXIT_INTERRUPTED",
    "EXIT_BROKEN_PIPE",
]

# (subcommand module, what it provides); a module that is absent is skipped.
_COMMAND_MODULES = (
    "fastsched.sim._cli",
    "fastsched.costmodel._cli",
    "fastsched.costmodel._plan_cli",
    "fastsched.sim._profile_cli",
    "fastsched.sim._workload_cli",
    "fastsched.sim._from_log_cli",  # typed `fastsched workload from-log` (see route_argv)
    "fastsched.sweep._cli",  # and `fastsched sweep bands`
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


def _names_config(args) -> bool:
    return any(a == "--config" or str(a).startswith("--config=") for a in args)


class _Parser(argparse.ArgumentParser):
    """argparse with the command line's error style: one line ``PROG: error: ...``, no usage block.

    The message names the flag (``--nodes: expected an integer, got 'abc'``) and, for a choice
    or an option that does not exist, the closest one (``did you mean 'sia'?``). ``--help``
    still prints the usage.
    """

    def error(self, message):
        from fastsched._config_args import invalid_choice  # an error's path only: the parser stays light

        message = str(message)
        m = re.match(r"argument ([^:]+): (.*)", message, re.S)
        if m is not None:
            flag, what = m.group(1), m.group(2)
            flag = flag.split("/")[-1] if "/" in flag else flag  # "-q/--quiet": the long form
            kind = re.match(r"invalid (int|float) value: (.*)", what)
            if kind is not None:
                what = f"expected {'an integer' if kind.group(1) == 'int' else 'a number'}, got {kind.group(2)}"
            choice = re.match(r"invalid choice: '(.*?)'", what)
            if choice is not None:
                action = next((a for a in self._actions if flag in (*a.option_strings, a.metavar, a.dest)), None)
                if action is not None and action.choices is not None:
                    what = invalid_choice(choice.group(1), action.choices)
            is_command = any(isinstance(a, argparse._SubParsersAction) and a.metavar == flag for a in self._actions)
            message = f"unknown command: {what.removeprefix('invalid choice ')}" if is_command else f"{flag}: {what}"
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {' '.join(message.split())}\n")

    def parse_known_args(self, args=None, namespace=None):
        """Parse, with the values of ``--config FILE`` (a command that has that option) as defaults."""
        if args is not None and _names_config(args) and any(a.dest == "config" for a in self._actions):
            from fastsched._config_args import config_defaults, config_path

            path = config_path(args)
            if path is not None:
                try:
                    self.set_defaults(**config_defaults(self, path))
                except (ValueError, OSError) as exc:
                    self.error(f"--config: {_describe(exc)}")
        return super().parse_known_args(args, namespace)

    def unrecognized(self, extra) -> None:
        """Refuse arguments no option takes, naming the closest option of this command."""
        from fastsched._config_args import did_you_mean

        options = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
        words = [f"{w}{did_you_mean(w.split('=')[0], options) if w.startswith('-') else ''}" for w in extra]
        what = "unrecognized argument" if len(extra) == 1 else "unrecognized arguments"
        self.error(f"{what}: {' '.join(words)}")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every available subcommand registered.

    Examples
    --------
    >>> parser = build_parser()
    >>> parser.parse_args(["simulate", "--policy", "tiresias"]).policy
    'tiresias'
    """
    parser = _Parser(
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
    parser.set_defaults(_commands=sub.choices)  # main() reports a command's errors in that command's name
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
    # On a terminal the line after ^C (and after a progress bar) is not ended: start a new one.
    # Elsewhere (a log, a pipe) every line was ended, and a blank line would only be noise.
    lead = "\n" if _is_tty(sys.stderr) else ""
    print(f"{lead}{prefix}: interrupted{how}", file=sys.stderr)
    return EXIT_INTERRUPTED


def _is_tty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# Python wording -> command-line wording, for messages of the Python API that reach the command
# line (the Python call keeps its own wording; see :func:`_cli_wording`).
_PHRASES = (
    (re.compile(r"\bgive either cluster or nodes/gpus\b"), "give either --cluster or --nodes/--gpus"),
    (re.compile(r"\bpass traces=\s?"), "pass --traces DIR "),
    (re.compile(r"\bpass cluster=\s?"), "pass --cluster SPEC "),
)


def _cli_wording(message: str, parser, args) -> str:
    """Rewrite a Python argument's name in an error message as the flag the user typed.

    ``cluster.gpus must be >= 1`` from ``plan --gpus -8`` reads ``--gpus must be >= 1``: a
    message that starts with an argument's name (``seed``, ``max_nodes``, ``cluster.gpus``)
    names its flag when the command has that flag and the user gave it; the phrases of
    :data:`_PHRASES` (``pass traces=``) name the flag that would help.

    Examples
    --------
    >>> p = build_parser()
    >>> args = p.parse_args(["plan", "m.json", "--gpus", "-8"])
    >>> _cli_wording("cluster.gpus must be >= 1, got -8", args._commands["plan"], args)
    '--gpus must be >= 1, got -8'
    >>> _cli_wording("needs per-type traces: pass traces= (a folder)", args._commands["plan"], args)
    'needs per-type traces: pass --traces DIR (a folder)'
    """
    from fastsched._config_args import flag_of

    for pattern, text in _PHRASES:
        message = pattern.sub(text, message)
    if parser is None:
        return message
    m = re.match(r"([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?)(?= |:|=|\[)", message)
    if m is not None:
        dest = m.group(1).rsplit(".", 1)[-1]
        for action in parser._actions:
            flag = flag_of(action)
            given = getattr(args, action.dest, None) not in (None, action.default)
            if action.dest == dest and flag is not None and given:
                return flag + message[m.end() :]
    return message


def route_argv(argv) -> list:
    """Return ``argv`` with a two-word command as the one parser name it is registered under.

    ``workload from-log`` and ``sweep bands`` are commands of their own beside the workload
    generator and ``sweep SPEC`` (whose first argument is a file, where ``from-log`` and
    ``bands`` stand), so each is parsed by its own parser: ``workload-from-log``,
    ``sweep-bands``. Anything else is returned unchanged.

    Examples
    --------
    >>> route_argv(["sweep", "bands", "w.csv", "--profiles", "p"])[:2]
    ['sweep-bands', 'w.csv']
    >>> route_argv(["workload", "from-log", "log.csv"])[:2]
    ['workload-from-log', 'log.csv']
    >>> route_argv(["sweep", "spec.json"]), route_argv(["simulate", "bands"])
    (['sweep', 'spec.json'], ['simulate', 'bands'])
    """
    from fastsched.sim._from_log_cli import COMMAND
    from fastsched.sweep._cli import BANDS

    argv = list(argv)
    name = {("workload", "from-log"): COMMAND, ("sweep", "bands"): BANDS}.get(tuple(argv[:2]))
    return argv if name is None else [name, *argv[2:]]


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
    argv = route_argv(argv)
    try:
        parser = build_parser()  # imports every command's module: seconds on a cold start
    except KeyboardInterrupt:
        if debug:
            raise
        return _interrupted("fastsched", KeyboardInterrupt())
    args, extra = parser.parse_known_args(argv)
    command_parser = (getattr(args, "_commands", None) or {}).get(getattr(args, "command", None))
    if extra:
        (command_parser or parser).unrecognized(extra)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    # the command as typed: a routed one (`sweep bands`) names itself by its parser's prog
    prefix = getattr(command_parser, "prog", None) or f"fastsched {args.command}"
    # what the results' provenance records as the command (and a --config file as an input)
    config = None
    if _names_config(argv):
        from fastsched._config_args import config_path  # only then: a refusal loads few modules

        config = config_path(argv)
    _provenance.set_command(argv, inputs={"config": config})
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
            print(f"{prefix}: error: {_cli_wording(_describe(exc), command_parser, args)}", file=sys.stderr)
            return EXIT_BAD_INPUT
        print(
            f"{prefix}: internal error: {type(exc).__name__}: {_describe(exc)} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1
    finally:
        _provenance.set_command(None)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
