"""``fastsched info`` (what is installed and where kernels are cached) and ``fastsched warmup``."""

from __future__ import annotations

import json
import sys
import time

from fastsched._version import __version__

__all__ = ["register", "info", "run_info", "run_warmup"]

_PACKAGES = ("numpy", "scipy", "numba", "numba-cuda", "tqdm", "dask", "distributed", "matplotlib")


def _version(dist: str):
    # importlib.metadata (and platform) load here, not at module level: building the command
    # line's parser imports this module for every command, and importlib.metadata costs
    # ~20 ms there (its email and calendar modules).
    import importlib.metadata

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
        ``kernels`` / ``kernels_cached`` (loaded kernels, and of which cached), ``cache_complete``
        (``True``: every kernel a command uses is cached, as the last ``fastsched warmup`` on this
        machine found them; ``False``: some are not, the list in ``kernels_missing``; ``None``: no
        warm-up record, unknown), ``cuda`` (bool) and ``cuda_detail``.

    Examples
    --------
    >>> d = info()
    >>> d["fastsched"] == __version__ and isinstance(d["cuda"], bool)
    True
    """
    import platform

    import numba

    from fastsched import cuda  # its probe initialises the driver: only when asked
    from fastsched._cache import ALL_PACKAGES, cache_state
    from fastsched._warmup import load_record

    state = cache_state(ALL_PACKAGES)
    record = load_record()
    if record is None:
        complete, missing = None, []
    else:
        missing = sorted(set(record["kernels"].get("warmup", ())) & set(state.missing))
        complete = not missing
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
        "cache_complete": complete,
        "kernels_missing": missing,
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
        description="Compile (or load from numba's cache) the kernels of the simulator under every policy and of "
        "the cost model, so that later runs start warm, and record the compile rate measured here (the "
        "first-run notices' estimates).",
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
        ("kernels cached", f"{d['kernels_cached']} of {d['kernels']} loaded; " + _completeness(d)),
        ("CUDA", ("available" if d["cuda"] else "not available") + f" ({d['cuda_detail']})"),
    ]
    width = max(len(k) for k, _ in rows)
    print("\n".join(f"{k:<{width}}  {v}" for k, v in rows))
    return 0


def _completeness(d) -> str:
    if d["cache_complete"] is None:
        return "complete? unknown ('fastsched warmup' compiles every kernel a command uses, and records them)"
    if d["cache_complete"]:
        return "complete (every kernel the commands use, as the last warm-up found them)"
    return f"incomplete: {len(d['kernels_missing'])} kernel(s) the commands use are not cached (run 'fastsched warmup')"


def run_warmup(args) -> int:
    """Run ``fastsched warmup``."""
    from fastsched import _firstrun
    from fastsched._cache import ALL_PACKAGES, cache_state
    from fastsched._warmup_run import warmup

    stream = None if args.quiet else sys.stderr
    if stream is not None:
        _firstrun.compile_notice("warmup", stream=stream)
    t0 = time.perf_counter()
    warmup(stream=stream)
    if stream is not None:
        state = cache_state(ALL_PACKAGES)
        stream.write(
            f"warm: {state.cached} of {state.kernels} kernels cached in {', '.join(state.cache_dirs) or '-'} "
            f"({time.perf_counter() - t0:.1f} s)\n"
        )
    return 0
