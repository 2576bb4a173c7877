"""``fastsched sweep``: the command-line face of :func:`fastsched.sweep.run_sweep`."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Add the ``sweep`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "sweep",
        help="run a grid of simulations on dask.distributed",
        description=(
            "Run every configuration x seed of a sweep spec (JSON, TOML or YAML) as one dask task "
            "each, on a local cluster or an existing scheduler, and write runs.csv, runs.json and "
            "summary.csv. Re-running into the same output folder skips the runs already done."
        ),
    )
    p.add_argument("spec", help="sweep spec file (.json, .toml, .yaml)")
    p.add_argument("--scheduler", metavar="ADDR", help="dask scheduler address, e.g. tcp://host:8786")
    p.add_argument("--workers", type=int, help="worker processes of the local cluster (default: all CPUs)")
    p.add_argument("--output", metavar="DIR", help="output folder (default: the spec's 'output', else SPEC-sweep/)")
    p.add_argument("--serial", action="store_true", help="run in this process, without dask")
    p.add_argument("--no-resume", action="store_true", help="run everything again, ignoring earlier results")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run the ``sweep`` subcommand; returns 0, or 1 when some runs failed."""
    from fastsched.sweep.runner import run_serial, run_sweep
    from fastsched.sweep.spec import load_spec

    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    if args.scheduler and args.workers is not None:
        raise ValueError("--workers sizes the local cluster; it cannot be combined with --scheduler")
    spec = load_spec(args.spec)
    output = args.output or spec.output_dir() or Path(Path(args.spec).stem + "-sweep")
    if args.serial:
        result = run_serial(spec, output_dir=output, resume=not args.no_resume, progress=not args.quiet)
    else:
        result = run_sweep(
            spec,
            client=args.scheduler,
            output_dir=output,
            workers=args.workers,
            resume=not args.no_resume,
            progress=not args.quiet,
        )
    print(result.table())
    n, bad = len(result.rows), len(result.errors)
    print(
        f"\n{n} runs ({result.skipped} from an earlier sweep), {bad} failed, {result.elapsed_s:.1f} s; "
        f"tables in {result.output_dir}",
        file=sys.stderr,
    )
    for row in result.errors[:5]:
        print(f"  failed: {row['workload']} seed {row['seed']}: {row['error']}", file=sys.stderr)
    return 1 if bad else 0
