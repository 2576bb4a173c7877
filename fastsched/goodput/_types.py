"""Constants of the goodput model shared by the CPU faces and the CUDA launchers.

A module of its own so that :mod:`fastsched.cuda` reads them without importing a goodput face.
"""

from __future__ import annotations

__all__ = ["TABLE_MAX_REPLICAS"]

#: A speedup table covers at most this many replicas (16 MiB): larger queries are answered
#: without memoisation, so no input can make a table grow without bound.
TABLE_MAX_REPLICAS = 1 << 20
