"""``fastsched sweep``: the command-line face of :func:`fastsched.sweep.run_sweep`."""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from pathlib import Path

from fastsched._interrupt import Interrupted

__all__ = ["register", "register_bands", "run", "default_output", "BANDS", "EXIT_FAILED_RUNS",
           "EXIT_INCOMPLETE"]  # fmt: skip

#: Exit status when some runs failed.
EXIT_FAILED_RUNS = 1
#: Exit status when some runs stopped with jobs unfinished (without ``--allow-incomplete``).
EXIT_INCOMPLETE = 3
#: The parser's name of ``fastsched sweep bands`` (:func:`fastsched.cli.route_argv`).
BANDS = "sweep-bands"


def register(subparsers) -> None:
    """Add the ``sweep`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "sweep",
        help="run a grid of simulations on dask.distributed",
        description=(
            "Run every configuration x seed of a sweep spec (JSON, TOML or YAML) as one dask task "
            "each, on a local cluster or an existing scheduler, and write runs.csv, runs.json and "
            "summary.csv. Re-running into the same output folder skips the runs already done. "
            "(Uncertainty bands of a study on profiled jobs: fastsched sweep bands WORKLOAD --profiles DIR.) "
            "Exit status: 0 done, 1 some runs failed, 2 bad input, 3 some runs left jobs "
            "unfinished, 130 interrupted."
        ),
    )
    p.add_argument("spec", help="sweep spec file (.json, .toml, .yaml)")
    p.add_argument("--scheduler", metavar="ADDR", help="dask scheduler address, e.g. tcp://host:8786")
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to wait for --scheduler (default 10)",
    )
    p.add_argument("--workers", type=int, help="worker processes of the local cluster (default: all CPUs)")
    p.add_argument(
        "--output",
        metavar="DIR",
        help="output folder, relative to the current folder (default: the spec's 'output', relative to the spec's "
        "folder as its workloads are; else SPEC-sweep/ beside the spec)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="save a figure of the sweep: average JCT per configuration, the repetitions (seeds) as error bars "
        "and points (needs matplotlib); the suffix picks the format",
    )
    p.add_argument("--serial", action="store_true", help="run in this process, without dask")
    p.add_argument("--no-resume", action="store_true", help="run everything again, ignoring earlier results")
    p.add_argument("--force", action="store_true", help="write into a non-sweep folder, or discard earlier results")
    p.add_argument("--allow-incomplete", action="store_true", help="exit 0 even if runs left jobs unfinished")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    register_bands(subparsers)


def register_bands(subparsers) -> None:
    """Add ``sweep-bands`` (typed ``fastsched sweep bands``, see :func:`fastsched.cli.route_argv`) to ``subparsers``."""
    from fastsched.sim._cli import parse_duration  # loaded by the parser already (simulate's)
    from fastsched.sim.presets import PRESETS

    p = subparsers.add_parser(
        BANDS,
        prog="fastsched sweep bands",
        help="uncertainty bands of a study on profiled jobs: N seeded draws of the profiles' stated ranges "
        "(fastsched sweep bands)",
        description=(
            "Run WORKLOAD on the profiles of --profiles (written by fastsched profile) and on --draws seeded "
            "draws of their stated uncertainty (the gradient-noise prior, the step-time error as validated), "
            "one ordinary sweep run per draw and policy, and print per policy the average JCT of the central "
            "run, the draws' median and 10-90 %% band, and how often the central run's order of the policies "
            "holds. Writes bands.json, bands.csv, the drawn profiles (profiles/) and the sweep's tables (runs/) "
            "to --out. Exit status: 0 done, 1 a run failed, 2 bad input, 3 runs left jobs unfinished, "
            "130 interrupted (resume with --resume)."
        ),
        epilog="Example: fastsched sweep bands workload-1.csv --profiles profiles/ --preset sia "
        "--policy sia,pollux,gavel --draws 20 --workers 4",
    )
    p.add_argument("workload", help="workload CSV (name,time,application,num_replicas,batch_size), or 'builtin'")
    p.add_argument("--profiles", required=True, metavar="DIR",
                   help="folder of application profiles (fastsched profile ... -o DIR); applications measured "
                   "by traces in it are used as they are")  # fmt: skip
    p.add_argument("--policy", metavar="NAME[,NAME...]",
                   help="policies to compare, comma-separated (default: the preset's)")  # fmt: skip
    p.add_argument("--draws", type=int, default=20, metavar="N", help="seeded draws (default 20; the central run "
                   "comes on top: about N + 1 runs per policy)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    p.add_argument("--run-seed", type=int, default=0, metavar="S",
                   help="seed of every run's policy search, the same in every draw (default 0)")  # fmt: skip
    p.add_argument("--vary", default="noise,step", metavar="WHAT",
                   help="what the draws move: noise, step, or noise,step (default)")  # fmt: skip
    p.add_argument("--step-dist", choices=("laplace", "normal"), default="laplace",
                   help="law of a step time's log error (default laplace: the held-out errors' tail)")  # fmt: skip
    p.add_argument("--noise-by", choices=("group", "application"), default="group",
                   help="one noise draw per prior group (default: a family's members move together) or per "
                   "application")  # fmt: skip
    p.add_argument("--preset", default="default", choices=sorted(PRESETS), help="named configuration")
    # no --nodes/--gpus: profiles price GPU types, so the cluster must have them (--cluster or a preset's)
    p.add_argument("--cluster", metavar="SPEC", help="nodes of GPU types, e.g. 6xaws,3xrtx,2xdgx-ext")
    p.add_argument("--max-time", type=parse_duration, default=None, metavar="T",
                   help="stop each run at this simulated time: seconds, or 90m, 12h, 60d (default 60d)")  # fmt: skip
    p.add_argument("--workers", type=int, metavar="N",
                   help="run the draws on a local dask cluster of N processes (default: in this process)")  # fmt: skip
    p.add_argument("--scheduler", metavar="ADDR", help="run the draws on this dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--out", metavar="DIR", help="output folder (default: WORKLOAD's name + -bands/, here)")
    p.add_argument("--resume", action="store_true", help="keep the runs an interrupted call finished in --out")
    p.add_argument("--force", action="store_true", help="replace the results in --out, or write into another folder")
    p.add_argument("--allow-incomplete", action="store_true", help="exit 0 even if runs left jobs unfinished")
    p.add_argument("--json", action="store_true", help="print the bands as one JSON object on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=_run_bands)


def _run_bands(args) -> int:
    from fastsched.sweep._bands_cli import run as run_bands  # only now: the parser stays light

    return run_bands(args)


def default_output(spec_path) -> Path:
    """Return a sweep's default output folder: ``SPEC-sweep`` beside the spec file.

    The same rule as a spec's own ``output`` and its workloads (relative to the spec's folder), so
    ``fastsched sweep examples/quick_sweep.json`` writes ``examples/quick_sweep-sweep/`` whatever
    the current folder; ``--output`` is a path of the command line, relative to the current folder.

    Examples
    --------
    >>> default_output("examples/quick_sweep.json").as_posix()
    'examples/quick_sweep-sweep'
    """
    p = Path(spec_path)
    return p.parent / f"{p.stem}-sweep"


def _check_plot(args, spec) -> None:
    """Check ``--plot`` before any run: matplotlib present, a writable image path that is no input."""
    from fastsched.sim.inputs import preflight

    if importlib.util.find_spec("matplotlib") is None:
        raise ValueError("--plot needs matplotlib: pip install 'fastsched[plot]'")
    preflight.check_plot_path(args.plot, inputs=[str(p) for p in spec.inputs()], force=args.force)


def _resume_command(args, output) -> str:
    words = ["fastsched", "sweep", args.spec, "--output", str(output)]
    if args.serial:
        words.append("--serial")
    if args.scheduler:
        words += ["--scheduler", args.scheduler]
    return shlex.join(words)


def _current_folder_importable(spec_path) -> None:
    # A policy module:Class of a file here is found, as `fastsched simulate --policy` finds it
    # (only then: the folder could shadow other modules).
    from fastsched.sweep._spec_read import read_spec_file

    try:
        raw = read_spec_file(spec_path)
    except (OSError, ValueError):
        return  # load_spec reports it
    policies = raw.get("policy") if isinstance(raw, dict) else None
    policies = policies if isinstance(policies, list) else [policies]
    if any(isinstance(p, str) and ":" in p for p in policies) and "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())


def run(args) -> int:
    """Run the ``sweep`` subcommand; returns 0, 1 when some runs failed, 3 when some were incomplete."""
    from fastsched.sweep.client import check_dask, check_timeout, check_workers
    from fastsched.sweep.spec import load_spec

    check_workers(args.workers, args.scheduler)
    if args.serial and (args.workers is not None or args.scheduler):
        raise ValueError("--serial runs in this process: --workers and --scheduler do not apply")
    _current_folder_importable(Path(args.spec))
    check_timeout(args.connect_timeout)
    # The spec first: a malformed spec is named before a missing engine, whichever is installed.
    spec = load_spec(args.spec)  # every stated bound, checked before the engine is imported
    if not args.serial:
        check_dask("fastsched sweep runs", "run the sweep in this process with --serial")
    from fastsched import _firstrun
    from fastsched.sweep.runner import SweepInterrupted, _simulate_serial, run_serial, run_sweep

    if not args.quiet:
        _firstrun.compile_notice("sweep")  # the workers compile on joining; loaded from the cache after
    output = Path(args.output) if args.output else (spec.output_dir() or default_output(args.spec))
    if args.plot:
        _check_plot(args, spec)
    common = {"output_dir": output, "resume": not args.no_resume, "force": args.force, "progress": not args.quiet}
    try:
        if args.serial:
            result = run_serial(spec, simulate_fn=_simulate_serial, **common)
        else:
            result = run_sweep(
                spec,
                client=args.scheduler,
                workers=args.workers,
                connect_timeout=args.connect_timeout,
                **common,
            )
    except SweepInterrupted as exc:
        raise Interrupted(f"{exc}; resume with: {_resume_command(args, output)}") from None
    print(result.table())
    n, bad, short = len(result.rows), len(result.errors), len(result.incomplete)
    print(
        f"\n{n} runs ({result.skipped} from an earlier sweep), {bad} failed, {short} incomplete, "
        f"{result.elapsed_s:.1f} s; tables in {result.output_dir}",
        file=sys.stderr,
    )
    if args.plot:
        from fastsched._atomic import atomic_path
        from fastsched.sweep.plot import plot_sweep

        with atomic_path(args.plot) as tmp:
            plot_sweep(result, tmp)
    for row in result.errors[:5]:
        print(f"  failed: {row['workload']} seed {row['seed']}: {row['error']}", file=sys.stderr)
    if bad:
        return EXIT_FAILED_RUNS
    if short and not args.allow_incomplete:
        first = result.incomplete[0]
        print(
            f"fastsched sweep: {short} run(s) stopped with jobs unfinished (e.g. {first['workload']} seed "
            f"{first['seed']}: {first['completed']}/{first['jobs']} completed, {first['incomplete']}); their "
            "figures cover completed jobs only. Raise max_time, or pass --allow-incomplete to accept this.",
            file=sys.stderr,
        )
        return EXIT_INCOMPLETE
    return 0
