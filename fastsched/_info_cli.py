"""``fastsched info`` (what is installed and where kernels are cached) and ``fastsched warmup``."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import sys
import time

import numba

from fastsched import _firstrun
from fastsched._version import __version__

__all__ = ["register", "info", "run_info", "run_warmup"]

# Every package with CPU kernels (cuda's are compiled for the device, on first use).
_ALL_PACKAGES = ("fastsched.goodput", "fastsched.policy", "fastsched.sim", "fastsched.costmodel")
_PACKAGES = ("numpy", "scipy", "numba", "numba-cuda", "tqdm", "dask", "distributed", "matplotlib")


def _version(dist: str):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def info() -> dict:
    """Describe what fastsched runs on: versions, numba's threading, the kernel cache, CUDA.

    Returns
    -------
    dict
        ``fastsched``, ``python``, ``platform``, ``packages`` (name -> version or ``None``),
        ``threading_layer`` (numba's configured layer), ``num_threads``, ``cache_dirs``,
        ``kernels`` / ``kernels_cached``, ``cuda`` (bool) and ``cuda_detail``.

    Examples
    --------
    >>> d = info()
    >>> d["fastsched"] == __version__ and isinstance(d["cuda"], bool)
    True
    """
    from fastsched import cuda  # its probe initialises the driver: only when asked

    state = _firstrun.cache_state(_ALL_PACKAGES)
    available = cuda.is_available()
    return {
        "fastsched": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": {name: _version(name) for name in _PACKAGES},
        "threading_layer": numba.config.THREADING_LAYER,
        "num_threads": numba.config.NUMBA_NUM_THREADS,
        "cache_dirs": list(state.cache_dirs),
        "kernels": state.kernels,
        "kernels_cached": state.cached,
        "cuda": available,
        "cuda_detail": cuda.unavailable_reason(),
    }


def register(subparsers) -> None:
    """Add the ``info`` and ``warmup`` subcommands to an argparse subparsers object."""
    p = subparsers.add_parser("info", help="versions, threading layer, kernel cache, CUDA availability")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_info)
    w = subparsers.add_parser(
        "warmup",
        help="compile every kernel now (e.g. while building a container image)",
        description="Compile (or load from numba's cache) the kernels of the simulator, the policy and the cost "
        "model, so that later runs start warm.",
    )
    w.add_argument("--quiet", "-q", action="store_true", help="print nothing")
    w.set_defaults(func=run_warmup)


def run_info(args) -> int:
    """Run ``fastsched info``."""
    d = info()
    if args.json:
        print(json.dumps(d))
        return 0
    pkgs = ", ".join(f"{k} {v}" for k, v in d["packages"].items() if v is not None)
    missing = [k for k, v in d["packages"].items() if v is None]
    rows = [
        ("fastsched", d["fastsched"]),
        ("python", f"{d['python']} ({d['platform']})"),
        ("packages", pkgs + (f" (not installed: {', '.join(missing)})" if missing else "")),
        ("threading layer", f"{d['threading_layer']} ({d['num_threads']} threads)"),
        ("kernel cache", ", ".join(d["cache_dirs"]) or "-"),
        ("kernels cached", f"{d['kernels_cached']} of {d['kernels']} loaded"),
        ("CUDA", ("available" if d["cuda"] else "not available") + f" ({d['cuda_detail']})"),
    ]
    width = max(len(k) for k, _ in rows)
    print("\n".join(f"{k:<{width}}  {v}" for k, v in rows))
    return 0


def run_warmup(args) -> int:
    """Run ``fastsched warmup``."""
    stream = None if args.quiet else sys.stderr
    if stream is not None:
        _firstrun.compile_notice("warmup", stream=stream)
    t0 = time.perf_counter()
    _firstrun.warmup(stream=stream)
    if stream is not None:
        state = _firstrun.cache_state(_ALL_PACKAGES)
        stream.write(
            f"warm: {state.cached} of {state.kernels} kernels cached in {', '.join(state.cache_dirs) or '-'} "
            f"({time.perf_counter() - t0:.1f} s)\n"
        )
    return 0
