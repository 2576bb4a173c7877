"""``fastsched cost CASE.json``: print a cost estimate of a case file.

Microbatch counts: ``--microbatches M`` costs ``M`` only (it replaces the case's
``microbatch_num`` and its ``microbatch_list``); without it the case's ``microbatch_num`` and
every count of its ``microbatch_list`` are costed, except counts the schedule cannot run
(``interleaved`` needs a multiple of the stages), which are skipped with a note on stderr
(and listed under ``skipped_microbatches`` with ``--json``). An explicit count the schedule
cannot run is refused (exit status 2).
"""

from __future__ import annotations

import json
import sys

__all__ = ["register", "run", "runnable_microbatches"]


def runnable_microbatches(counts, schedule, stages):
    """Split microbatch counts into those ``schedule`` can run on ``stages`` stages and the rest.

    Parameters
    ----------
    counts : iterable of int
    schedule : str
        ``"interleaved"`` needs a multiple of ``stages``; every other schedule runs any count.
    stages : int
        Pipeline stages (1 without a pipeline).

    Returns
    -------
    (list of int, list of int)
        Sorted, without duplicates: the runnable counts and the skipped ones.

    Examples
    --------
    >>> runnable_microbatches([1, 4, 16, 4], "interleaved", 2)
    ([4, 16], [1])
    >>> runnable_microbatches([1, 4], "1f1b", 2)
    ([1, 4], [])
    """
    counts = sorted({int(m) for m in counts})
    if schedule != "interleaved" or stages <= 1:
        return counts, []
    return [m for m in counts if m % stages == 0], [m for m in counts if m % stages != 0]


def register(subparsers) -> None:
    """Add the ``cost`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "cost",
        help="estimate runtime and memory of a program (paddle-cost-model-case JSON)",
        description="Estimate runtime and memory of a distributed program. By default communication is costed "
        "with the seed's constant (bytes / 32.768 = ms), which reproduces Paddle's numbers but is not MB/ms; "
        "give --cluster or --bandwidth for real units.",
    )
    p.add_argument("case", help="case JSON file (paddle-cost-model-case/1 layout)")
    p.add_argument(
        "--microbatches",
        type=int,
        default=None,
        help="cost this microbatch count only (replaces the case's microbatch_num and microbatch_list)",
    )
    p.add_argument(
        "--mem-unit",
        choices=("bytes", "elements"),
        default="bytes",
        help="unit of the memory columns: bytes (default) or tensor elements (Paddle's unit)",
    )
    p.add_argument(
        "--merge-order",
        choices=("serial-first", "parallel-first"),
        default="serial-first",
        help="merge rule priority (default: serial-first, as the reference)",
    )
    p.add_argument(
        "--schedule",
        default="seed",
        help="pipeline schedule: seed (default: the reference cost model's FIFO queue, Paddle's numbers), gpipe, "
        "1f1b, interleaved, zb-h1",
    )
    p.add_argument("--virtual-stages", type=int, default=1, help="model chunks per stage (interleaved)")
    link = p.add_mutually_exclusive_group()
    link.add_argument("--cluster", metavar="CLUSTER.json", default=None, help="cluster description (GB/s, µs)")
    link.add_argument("--bandwidth", type=float, default=None, help="one link for everything, GB/s")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--timeline",
        metavar="OUT.png",
        default=None,
        help="draw the pipeline schedule (cases with a pipeline_config only)",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    """Execute ``fastsched cost`` for parsed ``args``; return the exit status."""
    from fastsched.costmodel._bounds import MAX_WORK

    # The stated bound first, before the cost model loads: no schedule simulates more microbatches.
    if args.microbatches is not None and not 1 <= args.microbatches <= MAX_WORK:
        raise ValueError(
            f"--microbatches must be in [1, {MAX_WORK:,}] (the pipeline simulation limit), got {args.microbatches}"
        )

    from fastsched.costmodel.case import load_case
    from fastsched.costmodel.cluster import Cluster, load_cluster
    from fastsched.costmodel.deviations import deviations

    case = load_case(args.case)
    if args.timeline and case.pipeline_config is None:
        raise ValueError(
            f"--timeline draws a pipeline schedule, and {args.case} has no pipeline_config (one stage): nothing to draw"
        )
    cluster = None
    if args.cluster:
        cluster = load_cluster(args.cluster)
    elif args.bandwidth is not None:
        cluster = Cluster(
            gpus=1,
            gpus_per_node=1,
            intra_bandwidth=args.bandwidth,
            inter_bandwidth=args.bandwidth,
            intra_latency_us=0.0,
            inter_latency_us=0.0,
        )
    over = {
        "mem_unit": args.mem_unit,
        "merge_order": args.merge_order,
        "schedule": args.schedule,
        "virtual_stages": args.virtual_stages,
        "cluster": cluster,
    }
    if args.microbatches is not None:
        over["microbatch_num"] = args.microbatches
    cm = case.model(**over)
    cost = cm.get_cost()  # refuses an explicit --microbatches the schedule cannot run
    stages = len(case.pipeline_config) if case.pipeline_config is not None else 1
    wanted = [cm.microbatch_num] if args.microbatches is not None else [*case.microbatch_list, cm.microbatch_num]
    mbs, skipped = runnable_microbatches(wanted, args.schedule, stages)
    if skipped:
        print(
            f"fastsched cost: note: skipped the case's microbatch count(s) {', '.join(map(str, skipped))}: "
            f"schedule {args.schedule!r} needs a multiple of the {stages} stages",
            file=sys.stderr,
        )
    by_mb = {str(m): cm.get_pipeline_time(m) for m in mbs}
    devs = deviations(
        case.encoded,
        pipeline_config=cm.pp2rank,
        microbatch_num=cm.microbatch_num,
        opcall_overhead=case.opcall_overhead,
        mem_unit=args.mem_unit,
        cluster=cluster,
        n_parallel_merges=cm.parallel_merges(),
    )
    if args.timeline:
        from fastsched._atomic import output_file
        from fastsched.costmodel.timeline import plot_timeline

        force = getattr(args, "force", None)  # the output policy: no silent replace, atomic, never an input
        with output_file(
            args.timeline,
            inputs=[args.case, args.cluster],
            force=bool(force),
            what="--timeline",
            force_flag=None if force is None else "--force",
        ) as tmp:
            try:
                plot_timeline(cm.get_pipeline_schedule(), tmp, title=f"{case.name} ({args.schedule})")
            except ValueError as exc:  # matplotlib's unknown format names neither the option nor the file
                raise ValueError(f"--timeline {args.timeline}: {exc}") from None
    if args.json:
        d = cost.to_dict()
        d["name"] = case.name
        d["microbatch_num"] = cm.microbatch_num
        d["pipeline_time_by_microbatch"] = by_mb
        d["skipped_microbatches"] = skipped
        d["deviations"] = [c for c, _ in devs]
        print(json.dumps(d))
        return 0
    unit = "B" if args.mem_unit == "bytes" else "elem"
    print(f"case {case.name}: {len(cost.n_ops)} rank(s), {sum(cost.n_ops)} ops")
    sched = "seed (the reference's FIFO queue, as Paddle)" if args.schedule == "seed" else args.schedule
    print(f"runtime (microbatches={cm.microbatch_num}, schedule={sched}): {cost.runtime:.6g} ms")
    hdr = f"{'rank':>4} {'ops':>7} {'nodes':>6} {'fwd ms':>12} {'bwd ms':>12} {'optim ms':>10}"
    print(hdr + f" {'static ' + unit:>14} {'peak ' + unit:>14}")
    for r in range(len(cost.n_ops)):
        print(
            f"{r:>4} {cost.n_ops[r]:>7} {cost.nodes_after[r]:>6} {cost.fwd_time[r]:>12.6g} "
            f"{cost.bwd_time[r]:>12.6g} {cost.optim_time[r]:>10.6g} "
            f"{cost.static_mem[r]:>14.6g} {cost.peak_mem[r]:>14.6g}"
        )
    if case.pipeline_config is not None:
        pr = cost.pipeline
        print("pipeline time by microbatches: " + ", ".join(f"{k}: {v:.6g}" for k, v in by_mb.items()))
        print(f"schedule {pr.schedule}: bubble fraction {pr.bubble_fraction:.4f}")
        print(f"{'stage':>5} {'busy ms':>12} {'in flight':>9} {'activation B':>14}")
        for s in range(pr.stages):
            print(f"{s:>5} {pr.stage_busy[s]:>12.6g} {pr.peak_inflight[s]:>9} {pr.peak_activation_bytes[s]:>14.6g}")
    print("deviations from Paddle's cost model that apply here:")
    for code, text in devs:
        print(f"  {code}: {text}")
    return 0
