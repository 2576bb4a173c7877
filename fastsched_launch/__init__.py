"""The ``fastsched`` console script's entry point: Ctrl-C while fastsched is still importing.

Importing ``fastsched`` takes seconds on a cold start (numpy, numba, loading compiled kernels).
A console script that imports :func:`fastsched.cli.main` directly dies of a ``KeyboardInterrupt``
raised there with Python's traceback, before the command line's own handling exists. This
package imports nothing at import time; :func:`main` imports the command line inside a
``try``, so Ctrl-C at any moment ends with one line and exit status 130.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv=None) -> int:
    """Run ``fastsched`` (:func:`fastsched.cli.main`); exit status 130 if interrupted while importing it.

    Examples
    --------
    >>> main(["--version"])  # doctest: +SKIP
    fastsched ...
    """
    try:
        from fastsched.cli import main as cli_main
    except KeyboardInterrupt:
        print("\nfastsched: interrupted", file=sys.stderr)
        return 130
    return cli_main(argv)
