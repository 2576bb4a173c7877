"""``fastsched simulate``: the command-line face of :func:`fastsched.sim.simulate`.

Everything is checked before the first round (options, paths, every workload row: see
:mod:`fastsched.sim.inputs.preflight`); outputs are written to a temporary file and renamed into
place, never over an input and never over an existing file without ``--force``; a run that
ends with jobs unfinished says so and exits with status 3 unless ``--allow-incomplete``.
Several policies (``--policy a,b,c``) stream their rows as they finish
(:mod:`fastsched.sim._compare_cli`). ``--config FILE`` gives any option from a TOML/JSON file
(:mod:`fastsched._config_args`); ``--jobs FILE`` writes one row per job
(:mod:`fastsched.sim.results.jobs`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import sys
from pathlib import Path

from fastsched._interrupt import Interrupted
from fastsched.sim.policies.names import POLICY_NAMES
from fastsched.sim.presets import PRESETS, preset_shape

__all__ = ["register", "run", "parse_duration", "EXIT_INCOMPLETE"]

#: Exit status of a run that stopped with jobs unfinished (without ``--allow-incomplete``).
EXIT_INCOMPLETE = 3

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> int:
    """Seconds of a duration written ``N``, ``Ns``, ``Nm``, ``Nh`` or ``Nd`` (``--max-time``).

    Examples
    --------
    >>> parse_duration("90"), parse_duration("2h"), parse_duration("1.5d")
    (90, 7200, 129600)
    >>> parse_duration("soon")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a duration such as 3600, 90m, 12h or 60d, got 'soon'
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([smhd]?)\s*", str(text))
    if m is None:
        raise argparse.ArgumentTypeError(f"expected a duration such as 3600, 90m, 12h or 60d, got {text!r}")
    seconds = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    if not (math.isfinite(seconds) and 1 <= seconds < 2**62):
        raise argparse.ArgumentTypeError(f"the duration must be between 1 s and 2**62 s, got {text!r}")
    return int(round(seconds))


def register(subparsers) -> None:
    """Add the ``simulate`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "simulate",
        help="simulate a workload on a GPU cluster (default: builtin 16x4 Pollux run)",
        description=(
            "Replay a workload on N nodes x G GPUs under a scheduling policy and report job "
            "completion times. With no arguments, runs the builtin synthetic workload on the "
            "builtin application profiles. Catalogue models on catalogue GPU types (e.g. gpt-350m on "
            "--cluster 4xh100) run on the cost model's oracle when no --traces are given. Exit status: 0 done, "
            "1 a policy of several failed (the others printed), 2 bad input, 3 jobs left unfinished (see "
            "--max-time, --allow-incomplete), 130 interrupted (the policies finished before are printed)."
        ),
    )
    p.add_argument("workload", nargs="?", help="workload CSV (name,time,application,num_replicas,batch_size)")
    p.add_argument(
        "--config",
        metavar="FILE",
        help='options from a TOML or JSON file, keyed by the flags\' names (max-time = "12h", policy = ["sia", '
        '"gavel"], workload = "w.csv"; paths relative to the file); flags given here override it',
    )
    p.add_argument(
        "--traces",
        metavar="DIR",
        default=os.environ.get("FASTSCHED_TRACES"),
        help="folder of application trace folders (default: $FASTSCHED_TRACES, else builtin profiles)",
    )
    p.add_argument(
        "--policy",
        metavar="NAME[,NAME...]",
        help=f"scheduler (default: the preset's, pollux): one of {', '.join(POLICY_NAMES)}, an installed plugin's "
        "name, or package.module:Class (a SimPolicy subclass; the current folder is importable); several, comma-"
        "separated, run on the same workload and cluster and print one table",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="processes for several policies (default: one per policy up to the usable cores)",
    )
    p.add_argument("--preset", default="default", choices=sorted(PRESETS), help="named configuration")
    p.add_argument(
        "--cluster",
        metavar="SPEC",
        help="nodes of GPU types, e.g. 6xaws,3xrtx,2xdgx-ext, or a TOML/JSON file of node groups "
        "(per-type --traces, or catalogue models and GPU types for the oracle; exclusive with --nodes/--gpus)",
    )
    p.add_argument("--nodes", type=int, help="nodes in the cluster, one GPU type (default 16)")
    p.add_argument("--gpus", type=int, help="GPUs per node (default 4)")
    p.add_argument(
        "--cap-replicas",
        action="store_true",
        help="lower GPU requests above the largest GPU type's size instead of failing",
    )
    p.add_argument(
        "--scale",
        type=int,
        metavar="K",
        help="Sia's scaling study: merge K workloads (a folder's CSVs in turn, or K copies of one CSV; "
        "job names suffixed -x<copy>) and multiply every node group (or --nodes) by K",
    )
    p.add_argument("--interval", type=int, help="scheduling interval in seconds (default 60)")
    p.add_argument("--interference", type=float, help="slowdown of co-located distributed jobs (default 0)")
    p.add_argument("--max-nodes", type=int, help="autoscaling: grow up to this many nodes")
    p.add_argument("--seed", type=int, help="seed of the policy's random search (default 0)")
    p.add_argument(
        "--max-time",
        type=parse_duration,
        default=60 * 86400,
        metavar="T",
        help="stop the simulation at this simulated time: seconds, or 90m, 12h, 60d (default 60d)",
    )
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="exit 0 even if jobs are unfinished when the simulation stops",
    )
    p.add_argument("--output", metavar="LOG", help="write a JSON-lines log, one object per round")
    p.add_argument(
        "--jobs",
        metavar="FILE",
        help="write one row per job (times in s, GPU-seconds by type, restarts, final GPUs and batch): .csv, or "
        ".parquet with pyarrow; several policies: FILE-<policy>.csv each",
    )
    p.add_argument("--plot", metavar="FILE", help="save a figure; the suffix picks the format (.png, .pdf, .svg ...)")
    p.add_argument("--force", action="store_true", help="replace existing --output / --jobs / --plot files")
    p.add_argument(
        "--json", action="store_true", help="print the summary as one JSON object on stdout (one line per policy)"
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no first-run notice")
    p.set_defaults(func=run)
    p.config_paths = ("workload", "traces", "cluster", "output", "jobs", "plot")  # relative to a --config file
    from fastsched.sim._log_cli import add_log_arguments  # a production log as WORKLOAD: rigid jobs, its own run

    add_log_arguments(p, run)


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _policies(text) -> list:
    """Return the policies of ``--policy`` (``[None]``: the preset's), each resolved up front."""
    if text is None:
        return [None]
    names = [n.strip() for n in str(text).split(",")]
    if any(not n for n in names):
        raise ValueError(f"--policy: empty name in {text!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"--policy: a policy is named twice in {text!r}")
    from fastsched.sim.policies.registry import load_policy

    if any(":" in n for n in names) and "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # module:Class of a file here, as `python -m` would find it
    for n in names:
        try:
            load_policy(n)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"--policy: {exc}") from None
    return names


def _check_paths(args) -> None:
    """Paths of the command line, before anything runs."""
    from fastsched.sim.inputs import preflight

    inputs = [args.workload, args.traces, args.cluster]  # never written over, --force or not
    inputs = [f for f in inputs if f and Path(f).expanduser().exists()]
    # No preset (a caller other than simulate's parser): only the given cluster.
    typed_cluster = args.cluster if args.preset not in PRESETS else preset_shape(args.preset, cluster=args.cluster)[0]
    if args.traces and not typed_cluster:
        preflight.check_traces_dir(args.traces)  # per-GPU-type files without a cluster: refused
    if args.output:
        preflight.check_output_path(args.output, inputs=inputs, force=args.force, what="--output")
    if args.plot:
        preflight.check_plot_path(args.plot, inputs=inputs, force=args.force)
        if importlib.util.find_spec("matplotlib") is None:
            raise ValueError("--plot needs matplotlib: pip install 'fastsched[plot]'")
    if getattr(args, "jobs", None):  # (a namespace made by hand may not have the newer options)
        _check_jobs_paths(args, inputs, preflight)
    named = [(flag, getattr(args, flag, None)) for flag in ("output", "jobs", "plot") if getattr(args, flag, None)]
    for i, (a, pa) in enumerate(named):
        for b, pb in named[i + 1 :]:
            if Path(pa).expanduser().resolve() == Path(pb).expanduser().resolve():
                raise ValueError(f"--{a} and --{b} name the same file")


def _check_jobs_paths(args, inputs, preflight) -> None:
    from fastsched.sim.results.jobs import jobs_paths

    for path in jobs_paths(args.jobs, _policies(args.policy)):
        preflight.check_output_path(path, inputs=inputs, force=args.force, what="--jobs")


def _write_jobs(result, args, policy, several) -> None:
    from fastsched.sim.results.jobs import jobs_path, write_jobs

    write_jobs(result, jobs_path(args.jobs, policy, several))


def _oracle_note(args) -> None:
    """Say so when the run's truth will be the cost model's oracle (catalogue jobs on catalogue GPU types)."""
    if args.traces or args.quiet:
        return
    cluster = args.cluster if args.preset not in PRESETS else preset_shape(args.preset, cluster=args.cluster)[0]
    if cluster is None or args.nodes is not None or args.gpus is not None:
        return
    from fastsched.sim.inputs.cluster_spec import parse_cluster
    from fastsched.sim.inputs.workload import read_workload
    from fastsched.sim.truth.oracle import catalogue_covers

    if not args.workload or getattr(args, "scale", None) is not None or Path(args.workload).expanduser().is_dir():
        return  # the builtin workload runs on the builtin profiles; a scaled folder is left to simulate
    try:
        apps = sorted({j.application for j in read_workload(args.workload)})
        types = list(parse_cluster(cluster).types)
    except (OSError, ValueError):
        return  # simulate says what is wrong
    if catalogue_covers(apps, types):
        print(
            f"fastsched simulate: no --traces: {', '.join(apps)} run on the cost model's oracle (catalogue models on "
            f"GPU types {', '.join(types)}); --traces DIR runs measured traces instead",
            file=sys.stderr,
        )


def _save_plot(result, path) -> None:
    """Draw through a temporary file of the same format, renamed into place."""
    from fastsched._atomic import atomic_path
    from fastsched.sim.results.plot import plot_result  # needs matplotlib, an optional extra

    with atomic_path(path) as tmp:
        plot_result(result, tmp)


def _check_sizes(cluster, nodes, args) -> None:
    """Refuse a seed or a cluster over the simulator's limits before the simulator is imported.

    :func:`~fastsched.sim.simulate` makes the same checks with the same functions; making them
    here too refuses a far too large count at once, not after seconds of imports. Whatever they
    do not cover is left to ``simulate``.
    """
    from fastsched import _validate
    from fastsched.sim.inputs import preflight

    if args.seed is not None:
        _validate.check_int_scalar("seed", args.seed, low=0)
    given = nodes is not None or args.gpus is not None
    cluster, nodes, gpus = preset_shape(args.preset, cluster=cluster, nodes=nodes, gpus=args.gpus)
    if cluster is not None:
        if not given:  # both given: left to simulate's message
            from fastsched.sim.inputs.cluster_spec import parse_cluster

            parse_cluster(cluster)  # refuses node counts over the limit
        return
    if nodes >= 1 and gpus >= 1 and (args.interval or 1) >= 1:
        max_nodes = args.max_nodes if args.max_nodes is not None and args.max_nodes >= nodes else None
        preflight.check_cluster(nodes, gpus, max_nodes, args.interval or 1, args.max_time)


def _check_scaled(args) -> None:
    """Check the run's sizes with ``--scale`` applied (see :mod:`fastsched.sim.inputs.scale`).

    The scaled cluster is checked here, before the engine loads; :func:`~fastsched.sim.simulate`
    (``scale=K``) then scales the cluster and merges the ``K`` workloads itself, so the summary
    and the log name the workload as given and the scale.
    """
    k = getattr(args, "scale", None)
    if k is None:
        _check_sizes(args.cluster, args.nodes, args)
        return
    from fastsched.sim.inputs.scale import scale_cluster

    if k < 1:
        raise ValueError(f"--scale must be >= 1, got {k}")
    if not args.workload:
        raise ValueError("--scale needs a workload: a CSV or a folder of CSVs")
    cluster, nodes, _ = preset_shape(args.preset, cluster=args.cluster, nodes=args.nodes, gpus=args.gpus)
    if cluster is not None:
        cluster, nodes = str(scale_cluster(cluster, k)), None
    else:
        nodes *= k
        if args.max_nodes is not None and args.max_nodes < nodes:
            raise ValueError(
                f"--max-nodes {args.max_nodes} is below the scaled cluster's {nodes} nodes "
                f"(--scale {k} multiplies the nodes, not --max-nodes)"
            )
    _check_sizes(cluster, nodes, args)


def _simulate_kwargs(args) -> dict:
    return dict(
        traces=args.traces,
        preset=args.preset,
        nodes=args.nodes,
        gpus=args.gpus,
        cluster=args.cluster,
        cap_replicas=args.cap_replicas,
        interval=args.interval,
        interference=args.interference,
        max_nodes=args.max_nodes,
        seed=args.seed,
        max_time=args.max_time,
        scale=getattr(args, "scale", None),
    )


def _report_incomplete(results, args) -> int:
    status = 0
    for result in results:
        missing = len(result.jobs) - result.completed
        if missing and not args.allow_incomplete:
            why = ", ".join(f"{n} {reason}" for reason, n in result.incomplete.items())
            who = f"{result.policy}: " if len(results) > 1 else ""
            print(
                f"fastsched simulate: {who}{missing} of {len(result.jobs)} jobs did not complete ({why}) by the end at "
                f"{int(result.times[-1]) if result.times.size else 0} s; the figures cover completed jobs only. "
                "Raise --max-time, or pass --allow-incomplete to accept this.",
                file=sys.stderr,
            )
            status = EXIT_INCOMPLETE
    return status


def _run_many(args, policies) -> int:
    """Several policies: checked first, run in parallel processes, each row printed as it finishes."""
    from fastsched._progress import line_seconds
    from fastsched.sim._compare_cli import run_many

    return run_many(
        args,
        policies,
        simulate_kwargs=_simulate_kwargs(args),
        clean=_clean,
        report_incomplete=_report_incomplete,
        write_jobs_of=lambda result, policy: _write_jobs(result, args, policy, True),
        progress_every=None if args.quiet else line_seconds(),
    )


def run(args) -> int:
    """Run the ``simulate`` subcommand for parsed ``args``; returns the exit status."""
    policies = _policies(args.policy)
    # Checked for one policy too: an option that is accepted and ignored is a silent surprise.
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    _check_paths(args)
    # --scale checked once, for one policy or several; simulate applies it (see fastsched.sim.inputs.scale)
    _check_scaled(args)
    _oracle_note(args)
    if len(policies) > 1:
        return _run_many(args, policies)
    # The engine is imported only now: the parser, and a refusal of the arguments, stay light.
    from fastsched import _firstrun
    from fastsched._interrupt import is_interrupt
    from fastsched._progress import JobsBar
    from fastsched.sim.api import simulate

    bar = JobsBar(quiet=args.quiet, notice=_firstrun.compile_notice)
    try:
        result = simulate(args.workload, policy=policies[0], output=args.output, progress=bar, **_simulate_kwargs(args))
    except (KeyboardInterrupt, SystemError) as exc:
        if not is_interrupt(exc):  # Ctrl-C inside a compiled kernel arrives as a SystemError
            raise
        bar.close()
        kept = f"; {args.output} was not written" if args.output else ""
        raise Interrupted(f"nothing to resume from{kept}: rerun the same command (the run is deterministic)") from None
    except OSError as exc:
        if args.output and exc.filename is None and exc.errno is not None:  # a failed write to the log (full disk)
            raise OSError(exc.errno, exc.strerror, args.output) from exc
        raise
    finally:
        bar.close()
    if args.json:
        print(json.dumps({k: _clean(v) for k, v in result.summary().items()}))
    else:
        print(result.table())
    sys.stdout.flush()
    if args.jobs:
        _write_jobs(result, args, policies[0], False)
    if args.plot:
        _save_plot(result, args.plot)
    return _report_incomplete([result], args)
