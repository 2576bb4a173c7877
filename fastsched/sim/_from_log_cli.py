"""``fastsched workload from-log LOG --sample N --map RULE``: a workload CSV sampled from a production log.

``register(subparsers)`` adds the command as ``workload-from-log`` (every command module's
hook, :mod:`fastsched.cli`), so that it never competes with the ``workload`` generator;
:func:`fastsched.cli.route_argv` turns the typed ``workload from-log ...`` into it before parsing.
"""

from __future__ import annotations

import re

__all__ = ["register", "run_from_log", "parse_sample", "COMMAND"]

#: The parser's name of ``fastsched workload from-log``.
COMMAND = "workload-from-log"


def parse_sample(text: str):
    """``"160"`` -> ``(160, None)`` jobs; ``"20/h"`` -> ``(None, 20.0)`` jobs per hour.

    Examples
    --------
    >>> parse_sample("160"), parse_sample("12.5/h")
    ((160, None), (None, 12.5))
    >>> parse_sample("many")
    Traceback (most recent call last):
    ...
    ValueError: --sample must be a job count (160) or a rate per hour (20/h), got 'many'
    """
    m = re.fullmatch(r"\s*(\d+)\s*", text)
    if m:
        return int(m.group(1)), None
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*/\s*h\s*", text)
    if m:
        return None, float(m.group(1))
    raise ValueError(f"--sample must be a job count (160) or a rate per hour (20/h), got {text!r}")


def _hours_pair(text: str, flag: str):
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"{flag} must be START,END in hours (e.g. 2,10), got {text!r}") from None
    return a * 3600.0, b * 3600.0


def register(subparsers) -> None:
    """Add ``workload-from-log`` (typed ``fastsched workload from-log``) to ``subparsers``.

    :func:`fastsched.cli.route_argv` turns the typed command into this parser's name.
    """
    q = subparsers.add_parser(
        COMMAND,
        prog="fastsched workload from-log",
        help="sample a Philly/Helios/PAI/Slurm log into a workload CSV, the Pollux/Sia way (fastsched workload "
        "from-log)",
        description="Read LOG (format told by its first bytes), keep jobs that ran >= 60 s and < 1,000 "
        "GPU-hours in a window, draw --sample of them (seeded), give each an application by its GPU-time "
        "and a GPU count and batch size among that application's configurations of 50-80%% scaling "
        "efficiency (--map pollux: the OSDI'21 rule; sia: SOSP'23's; sia-philly: Sia's philly set).",
    )
    q.add_argument("log", help="cluster_job_log (Philly), cluster_log.csv (Helios), PAI folder, sacct --parsable2")
    q.add_argument("--format", choices=("philly", "helios", "pai", "slurm"), default=None, help="override detection")
    q.add_argument("--sample", required=True, help="jobs to draw (160) or jobs per window hour (20/h)")
    q.add_argument("--map", dest="rule", choices=("pollux", "sia", "sia-philly"), default="pollux", help="the rule")
    q.add_argument("--window", default="2,10", help="START,END hours: of the day (pollux) or from the log's start")
    q.add_argument("--daily", action="store_const", const=True, default=None, help="pool the window's hours over days")
    q.add_argument(
        "--absolute", dest="daily", action="store_const", const=False, help="window hours from the first submission"
    )
    q.add_argument("--sizes", choices=("configurations", "log"), default="configurations")
    q.add_argument("--traces", default=None, help="application trace folder (default: the builtin profiles)")
    q.add_argument("--fallback-traces", default=None, help="sia-philly: the 8-GPU-node traces folder (Sia's)")
    q.add_argument("--fallback-gpu-type", default="rtx", help="GPU type of --fallback-traces (default rtx)")
    q.add_argument("--vc", action="append", default=None, help="keep this virtual cluster / partition (repeat)")
    q.add_argument("--states", default="finished", help="finished (default), completed, or a comma list")
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--output", "-o", required=True, help="workload CSV to write")
    q.add_argument("--ids", default=None, help="also write name,log_id (join results back to the log)")
    q.add_argument("-q", "--quiet", action="store_true")
    q.set_defaults(func=run_from_log)


def run_from_log(args) -> int:
    """Execute ``fastsched workload from-log``; return the exit status."""
    import csv
    from pathlib import Path

    from fastsched.sim.inputs.logs.read import read_log
    from fastsched.sim.inputs.workload import write_workload
    from fastsched.sim.log_workload import workload_from_log

    num_jobs, rate = parse_sample(args.sample)
    window = _hours_pair(args.window, "--window")
    states = (
        args.states if args.states in ("finished", "completed") else tuple(s.strip() for s in args.states.split(","))
    )
    log = read_log(args.log, args.format, vcs=args.vc, states=states)
    applications = fallback = None
    if args.traces is not None:
        from fastsched.sim.truth.traces import load_applications

        applications = load_applications(args.traces)
    if args.fallback_traces is not None:
        from fastsched.sim.truth.traces import PUBLISHED_OVERRIDES, TraceApplication

        root = Path(args.fallback_traces)
        fallback = {
            d.name: TraceApplication(d, d.name, gpu_type=args.fallback_gpu_type, **PUBLISHED_OVERRIDES.get(d.name, {}))
            for d in sorted(root.iterdir())
            if (d / f"placements-{args.fallback_gpu_type}.csv").is_file()
        }
    out = workload_from_log(
        log,
        num_jobs=num_jobs,
        rate=rate,
        window=window,
        rule=args.rule,
        daily=args.daily,
        sizes=args.sizes,
        applications=applications,
        fallback_applications=fallback,
        seed=args.seed,
    )
    write_workload(out.jobs, args.output)
    if args.ids:
        with open(args.ids, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(("name", "log_id"))
            w.writerows((j.name, i) for j, i in zip(out.jobs, out.log_ids, strict=True))
    if not args.quiet:
        mix = {}
        for j in out.jobs:
            mix[j.application] = mix.get(j.application, 0) + 1
        dropped = ", ".join(f"{k} {v}" for k, v in log.dropped.items()) or "none"
        print(f"{log.format} log: {log.rows} read, {len(log.jobs)} kept (dropped: {dropped})")
        print(f"{len(out.jobs)} jobs drawn of {out.eligible} eligible -> {args.output}")
        print("applications: " + ", ".join(f"{k} {v}" for k, v in sorted(mix.items())))
    return 0
