"""``fastsched workload``: write seeded workloads (Poisson arrivals of a mix's jobs, or LLM jobs).

``fastsched workload w.csv`` draws Poisson arrivals of jobs resampled from the builtin workload;
``--mix DIR`` takes the mix from a study's workloads (Sia's: ``../shared/sia-traces/workloads/saturn``),
``--llm`` draws decoder-only transformer jobs of the catalogue
(:func:`fastsched.sim.inputs.llm_workload.llm_workload`). ``--seeds K`` writes K workloads of K
arrival seeds, ``w-s0.csv`` ... ``w-s<K-1>.csv``: list them in a sweep's ``workloads`` to vary the
arrivals, which a sweep's own seeds do not (they seed the policies' searches).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["register", "run", "seed_paths"]

#: Most workloads one command writes.
MAX_SEEDS = 1000


def register(subparsers) -> None:
    """Add the ``workload`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser(
        "workload",
        help="generate seeded workloads: Poisson arrivals of a mix's jobs (builtin, Sia's), or LLM jobs",
        description=(
            "Write a workload CSV (name,time,application,num_replicas,batch_size[,category]) of Poisson arrivals. "
            "Each job's application, GPUs, batch and category are drawn from a mix: the jobs of the builtin "
            "workload (default), of a workload CSV, or of a folder of them (e.g. Sia's job mix: "
            "../shared/sia-traces/workloads/saturn), at the mix's own rate unless --jobs-per-hour; or, with --llm, "
            "decoder-only transformer jobs of the catalogue (gpt-125m ... gpt-13b), which simulate runs on catalogue "
            "GPU types through the cost model's oracle. Same seed, same workload."
        ),
        epilog="To sample a workload from a production log (Philly, Helios, PAI, Slurm), the way the Pollux and "
        "Sia workloads were built: fastsched workload from-log LOG --sample N --map RULE (see its --help).",
    )
    p.add_argument("out", help="the workload CSV to write (with --seeds: OUT-s<seed>.csv for each seed)")
    p.add_argument("--mix", metavar="SOURCE", help="builtin (default), a workload CSV, or a folder of workload CSVs")
    p.add_argument("--llm", action="store_true", help="LLM jobs of the catalogue's decoders instead of a mix")
    p.add_argument("--jobs-per-hour", type=float, metavar="R", help="arrival rate (default: the mix's; --llm: 20)")
    p.add_argument("--hours", type=float, metavar="H", help="arrival window (default: the mix's; --llm: 8)")
    p.add_argument("--num-jobs", type=int, metavar="N", help="exactly N jobs (instead of a window)")
    p.add_argument("--seed", type=int, default=0, help="seed of the arrivals and the draws (default 0)")
    p.add_argument("--seeds", type=int, metavar="K", help="write K workloads, seeds SEED .. SEED+K-1")
    p.add_argument(
        "--pretrain-fraction", type=float, metavar="F", help="--llm: share of pre-training jobs (default 0.3)"
    )
    p.add_argument("--max-gpus", type=int, metavar="N", help="--llm: largest GPU request (default 64)")
    p.add_argument("--force", action="store_true", help="replace existing files")
    p.set_defaults(func=run)


def seed_paths(out, seed: int, count) -> list:
    """Return ``(seed, path)`` of each workload to write.

    Examples
    --------
    >>> seed_paths("w.csv", 3, None)
    [(3, 'w.csv')]
    >>> [p for _, p in seed_paths("runs/w.csv", 0, 2)]
    ['runs/w-s0.csv', 'runs/w-s1.csv']
    """
    if count is None:
        return [(seed, str(out))]
    p = Path(out)
    return [(s, str(p.with_name(f"{p.stem}-s{s}{p.suffix or '.csv'}"))) for s in range(seed, seed + count)]


def _check(args) -> None:
    if args.llm and args.mix is not None:
        raise ValueError("--llm draws LLM jobs; --mix names the jobs to resample: give one of them")
    if not args.llm and (args.pretrain_fraction is not None or args.max_gpus is not None):
        raise ValueError("--pretrain-fraction and --max-gpus apply to --llm workloads")
    if args.hours is not None and args.num_jobs is not None:
        raise ValueError("give --hours or --num-jobs, not both")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    if args.seeds is not None and not 1 <= args.seeds <= MAX_SEEDS:
        raise ValueError(f"--seeds must be in [1, {MAX_SEEDS}], got {args.seeds}")
    if not str(args.out).lower().endswith(".csv"):
        raise ValueError(f"the workload is a CSV: end {args.out} with .csv")


def _draw(args, seed):
    if args.llm:
        from fastsched.sim.inputs.llm_workload import llm_workload

        kw = {"seed": seed}
        for flag, key in (
            ("hours", "hours"),
            ("jobs_per_hour", "jobs_per_hour"),
            ("pretrain_fraction", "pretrain_fraction"),
            ("max_gpus", "max_gpus"),
        ):
            if getattr(args, flag) is not None:
                kw[key] = getattr(args, flag)
        return llm_workload(args.num_jobs, **kw)  # its errors name the arguments; the command line, the flags
    from fastsched.sim.inputs.generate import poisson_workload

    return poisson_workload(
        args.mix or "builtin",
        jobs_per_hour=args.jobs_per_hour,
        hours=args.hours,
        num_jobs=args.num_jobs,
        seed=seed,
    )


def run(args) -> int:
    """Run ``fastsched workload``: draw and write each seed's workload, one line per file on stdout."""
    from fastsched._atomic import atomic_path
    from fastsched.sim.inputs import preflight
    from fastsched.sim.inputs.workload import write_workload

    _check(args)
    targets = seed_paths(args.out, args.seed, args.seeds)
    inputs = [args.mix] if args.mix and Path(args.mix).expanduser().exists() else []
    for _, path in targets:  # every file checked before the first is written
        preflight.check_output_path(path, inputs=inputs, force=args.force, what="workload")
    for seed, path in targets:
        jobs = _draw(args, seed)
        with atomic_path(path) as tmp:
            write_workload(jobs, tmp)
        span = jobs[-1].time / 3600.0
        gpus = sum(j.num_replicas for j in jobs)
        print(f"{path}: {len(jobs)} jobs over {span:.2f} h, {gpus} GPUs requested in all, seed {seed}")
    return 0
