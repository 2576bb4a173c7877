"""``fastsched cost CASE.json``: print a cost estimate of a case file."""

from __future__ import annotations

import json

__all__ = ["register", "run"]


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
    p.add_argument("--microbatches", type=int, default=None, help="override microbatch_num")
    p.add_argument("--mem-unit", choices=("bytes", "elements"), default="bytes")
    p.add_argument(
        "--merge-order",
        choices=("serial-first", "parallel-first"),
        default="serial-first",
        help="merge rule priority (default: serial-first, as the reference)",
    )
    p.add_argument(
        "--schedule",
        default="seed",
        help="pipeline schedule: seed (default, the reference's), gpipe, 1f1b, interleaved, zb-h1",
    )
    p.add_argument("--virtual-stages", type=int, default=1, help="model chunks per stage (interleaved)")
    link = p.add_mutually_exclusive_group()
    link.add_argument("--cluster", metavar="CLUSTER.json", default=None, help="cluster description (GB/s, µs)")
    link.add_argument("--bandwidth", type=float, default=None, help="one link for everything, GB/s")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--timeline", metavar="OUT.png", default=None, help="draw the pipeline schedule")
    p.set_defaults(func=run)


def run(args) -> int:
    """Execute ``fastsched cost`` for parsed ``args``; return the exit status."""
    from fastsched.costmodel.case import load_case
    from fastsched.costmodel.cluster import Cluster, load_cluster
    from fastsched.costmodel.deviations import deviations

    case = load_case(args.case)
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
    cost = cm.get_cost()
    mbs = sorted({*case.microbatch_list, cm.microbatch_num})
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
            plot_timeline(cm.get_pipeline_schedule(), tmp, title=f"{case.name} ({args.schedule})")
    if args.json:
        d = cost.to_dict()
        d["name"] = case.name
        d["microbatch_num"] = cm.microbatch_num
        d["pipeline_time_by_microbatch"] = by_mb
        d["deviations"] = [c for c, _ in devs]
        print(json.dumps(d))
        return 0
    unit = "B" if args.mem_unit == "bytes" else "elem"
    print(f"case {case.name}: {len(cost.n_ops)} rank(s), {sum(cost.n_ops)} ops")
    print(f"runtime (microbatches={cm.microbatch_num}, schedule={args.schedule}): {cost.runtime:.6g} ms")
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
