"""``fastsched simulate LOG --nodes N --gpus G --policy fifo,sjf,tiresias --jobs out.csv``: replay a log.

The ``simulate`` command hands a workload that is a production log (told by its first bytes, or
``--log-format``) to :func:`run_log`: the log is read once, each policy replays it as rigid jobs
(:func:`~fastsched.sim.log_api.simulate_log`), and the summary (a table, or ``--json`` lines) and
the per-job table (``--jobs``, :func:`~fastsched.sim.results.jobs.write_jobs`: one file per policy
when several) are written as for any run.

``--policy`` names rigid policies (:data:`~fastsched.sim.engine.rigid.RIGID_POLICIES`): on a log,
``themis`` and ``gandiva`` are the rigid ones of :mod:`fastsched.sim.engine.rigid`, not the
round-based policies of the same names (they need a workload of applications). Before the first
replay on a machine whose numba cache lacks the event loop, the simulator's first-run notice
(:func:`fastsched._firstrun.compile_notice`) says it is compiling, as for a round-based run.
"""

from __future__ import annotations

import json
import sys

__all__ = ["add_log_arguments", "is_log_run", "run_log"]


def add_log_arguments(parser, run) -> None:
    """Add ``--log-format`` to ``simulate``'s parser.

    The command's function becomes :func:`run_log` for a log and ``run`` for anything else.
    """
    parser.add_argument(
        "--log-format",
        choices=("philly", "helios", "pai", "slurm"),
        help="read WORKLOAD as a production log of this format (default: told by its first bytes)",
    )

    def run_any(args) -> int:
        return run_log(args) if is_log_run(args) else run(args)

    parser.set_defaults(func=run_any)


def is_log_run(args) -> bool:
    """Tell whether ``simulate``'s workload is a production log."""
    if not args.workload:
        return False
    if getattr(args, "log_format", None):
        return True
    from fastsched.sim.inputs.logs._detect import detect_format  # light: no engine before the checks

    try:
        detect_format(args.workload)
    except (ValueError, OSError):
        return False
    return True


def _compile_notice() -> None:
    from fastsched import _firstrun

    _firstrun.compile_notice("simulate-log")  # counts the event loop's kernels (it imports their module)


def run_log(args) -> int:
    """Run ``simulate`` on a production log for parsed ``args``; return the exit status."""
    from fastsched.sim.engine.rigid import RIGID_POLICIES

    names = [p.strip() for p in (args.policy or "fifo").split(",")]
    for p in names:
        if p not in RIGID_POLICIES:
            raise ValueError(
                f"--policy: a log replays rigid jobs under {', '.join(RIGID_POLICIES)}; got {p!r} (the round-based "
                "policies need applications: build a workload with 'fastsched workload from-log')"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"--policy: a policy is named twice in {args.policy!r}")
    flags = {
        "--cluster": args.cluster,
        "--scale": getattr(args, "scale", None),
        "--interval": args.interval,
        "--interference": args.interference,
        "--max-nodes": args.max_nodes,
        "--seed": args.seed,
        "--cap-replicas": args.cap_replicas or None,
        "--plot": args.plot,
    }
    given = [f for f, v in flags.items() if v is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: not for a production log (rigid jobs replayed event by event)")
    from fastsched.sim.inputs import preflight

    outputs = [("--output", args.output)]
    if args.jobs:
        from fastsched.sim.results.jobs import jobs_paths

        outputs += [("--jobs", path) for path in jobs_paths(args.jobs, names)]
    for flag, path in outputs:
        if path:
            preflight.check_output_path(path, inputs=[args.workload], force=args.force, what=flag)
    from fastsched.sim._compare import comparison_table
    from fastsched.sim.api import _json_ready
    from fastsched.sim.inputs.logs import read_log
    from fastsched.sim.log_api import simulate_log

    read = read_log(args.workload, args.log_format)
    if not args.quiet and read.dropped:
        why = ", ".join(f"{n} {reason}" for reason, n in read.dropped.items())
        print(f"fastsched simulate: {args.workload}: {len(read.jobs)} jobs kept, left out: {why}", file=sys.stderr)
    # the event loop compiles on a cold cache (~35 s): the first replay says so once its inputs are
    # checked, with the simulator's first-run notice (as a round-based run does)
    notice = None if args.quiet else _compile_notice
    results = [
        simulate_log(
            read, policy=p, nodes=args.nodes, gpus=args.gpus, preset=args.preset, notice=notice if i == 0 else None
        )
        for i, p in enumerate(names)
    ]
    for r in results:
        r.config["workload"] = str(args.workload)
    if args.json:
        for r in results:
            print(json.dumps(_json_ready(r.summary())))
    else:
        print(results[0].table() if len(results) == 1 else comparison_table(results))
    sys.stdout.flush()
    if args.output:
        from fastsched._atomic import atomic_open

        with atomic_open(args.output) as f:
            for r in results:
                f.write(json.dumps({"summary": _json_ready(r.summary())}) + "\n")
    if args.jobs:
        from fastsched.sim.results.jobs import jobs_path, write_jobs

        for p, r in zip(names, results, strict=True):
            write_jobs(r, jobs_path(args.jobs, p, len(results) > 1))
    return 0
