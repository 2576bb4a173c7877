"""The ``fastsched`` command.

Each subcommand lives next to the code it drives, in a module exposing
``register(subparsers)``; that function adds its parser and sets ``func`` (a callable
taking the parsed namespace and returning an exit status). This file only wires them up,
so adding a command never touches another area's code.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from fastsched._version import __version__

# (subcommand module, what it provides); a module that is absent is skipped.
_COMMAND_MODULES = (
    "fastsched.sim._cli",
    "fastsched.costmodel._cli",
    "fastsched.costmodel._plan_cli",
    "fastsched.sweep._cli",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="fastsched",
        description="Goodput-optimised cluster scheduling and cost models on a numba core.",
    )
    parser.add_argument("--version", action="version", version=f"fastsched {__version__}")
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


def main(argv=None) -> int:
    """Entry point of the ``fastsched`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"fastsched {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
