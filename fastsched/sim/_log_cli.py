"""``fastsched simulate LOG --nodes N --gpus G --policy fifo,sjf,tiresias --jobs out.csv``: replay a log.

The ``simulate`` command hands a workload that is a production log (told by its first bytes, or
``--log-format``) to :func:`run_log`: the log is read once, each policy replays it as rigid jobs
(:func:`~fastsched.sim.log_api.simulate_log`), and the summary (a table, or ``--json`` lines) and
the per-job table (``--jobs``) are written as for any run.
"""

from __future__ import annotations

import csv
import json
import math
import sys

__all__ = ["add_log_arguments", "is_log_run", "run_log", "write_rigid_jobs", "RIGID_JOB_COLUMNS"]

#: Columns of ``--jobs`` for a log replay (the per-job table's names; ``policy`` first when
#: several policies share one file). ``final_gpus`` is the log's GPU count; ``epochs`` and
#: ``final_batch_size`` do not exist for a rigid job and stay empty.
RIGID_JOB_COLUMNS = (
    "name",
    "application",
    "category",
    "submit_s",
    "first_start_s",
    "finish_s",
    "jct_s",
    "wait_s",
    "gpu_s",
    "restarts",
    "epochs",
    "final_gpus",
    "final_batch_size",
)


def add_log_arguments(parser, run) -> None:
    """Add ``--log-format`` (and ``--jobs``, when the command has none yet) to ``simulate``'s parser.

    The command's function becomes :func:`run_log` for a log and ``run`` for anything else.
    """
    parser.add_argument(
        "--log-format",
        choices=("philly", "helios", "pai", "slurm"),
        help="read WORKLOAD as a production log of this format (default: told by its first bytes)",
    )
    if "--jobs" not in parser._option_string_actions:  # the per-job table may come from elsewhere
        parser.add_argument("--jobs", metavar="FILE", help="write one row per job (CSV)")

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


def _num(x):
    return "" if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def write_rigid_jobs(results, path) -> None:
    """Write the per-job table of rigid ``results`` to the CSV ``path`` (``policy`` first if several)."""
    from fastsched._atomic import atomic_open

    several = len(results) > 1
    with atomic_open(path) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow((["policy"] if several else []) + list(RIGID_JOB_COLUMNS))
        for r in results:
            for j, start, gpus in zip(r.jobs, r.first_start.tolist(), r.gpus.tolist(), strict=True):
                wait = start - j.submission_time if math.isfinite(start) else None
                row = [j.name, j.application, "rigid", j.submission_time, _num(start), _num(j.completion_time)]
                row += [_num(j.jct), _num(wait), j.attained_service, j.num_restarts, "", gpus, ""]
                w.writerow(([r.policy] if several else []) + row)


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

    for flag, path in (("--output", args.output), ("--jobs", getattr(args, "jobs", None))):
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
    results = [simulate_log(read, policy=p, nodes=args.nodes, gpus=args.gpus, preset=args.preset) for p in names]
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
    if getattr(args, "jobs", None):
        write_rigid_jobs(results, args.jobs)
    return 0
