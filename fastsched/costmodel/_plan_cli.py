"""``fastsched plan MODEL.json --gpus N``: rank parallel configurations of a transformer or a program."""

from __future__ import annotations

import json

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Add the ``plan`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "plan",
        help="search data/tensor/pipeline parallel configurations of a transformer or a program",
        description="Rank every data/tensor/pipeline configuration (microbatch, schedule, recomputation, ZeRO) "
        "of a transformer (MODEL.json: layers, hidden, heads, seq, vocab, global_batch) that fits the GPUs' "
        "memory, by predicted step time. A case or program JSON (with 'ranks' or 'ops': per-op costs) is "
        "searched over pipeline x data parallelism (no tensor parallelism; see "
        "fastsched.costmodel.program_search).",
    )
    p.add_argument(
        "model",
        help="model JSON (layers, hidden, heads, seq, vocab, global_batch[, dtype_bytes]) or a case/program JSON",
    )
    p.add_argument(
        "--global-batch",
        type=int,
        default=None,
        help="program only: samples per step (default: the case's batch_size x GPUs)",
    )
    p.add_argument("--rank", type=int, default=0, help="program only: which rank's program to read (default 0)")
    p.add_argument("--gpus", type=int, required=True, help="number of GPUs")
    p.add_argument("--cluster", metavar="CLUSTER.json", default=None, help="cluster fields (the options override)")
    p.add_argument(
        "--gpu",
        default=None,
        help="catalogued GPU type (e.g. h100, a100-80gb, mi300x): memory, TFLOP/s at 40%% of the BF16 peak, links "
        "and GPUs per node from fastsched.catalog (the other options override)",
    )
    p.add_argument("--gpus-per-node", type=int, default=None)
    p.add_argument("--memory-gib", type=float, default=None, help="memory per GPU, GiB")
    p.add_argument("--tflops", type=float, default=None, help="achievable TFLOP/s per GPU")
    p.add_argument("--intra-gbps", type=float, default=None, help="intra-node bandwidth per GPU, GB/s")
    p.add_argument("--inter-gbps", type=float, default=None, help="inter-node bandwidth per GPU, GB/s")
    p.add_argument("--schedules", default=None, help="comma-separated subset of gpipe,1f1b,interleaved,zb-h1")
    p.add_argument("--top", type=int, default=10, help="rows to print (default 10)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args) -> int:
    """Execute ``fastsched plan`` for parsed ``args``; return the exit status."""
    from fastsched.costmodel.case import Case, load_case
    from fastsched.costmodel.cluster import Cluster
    from fastsched.costmodel.program_search import ProgramModel
    from fastsched.costmodel.search import Transformer, search

    with open(args.model, encoding="utf-8") as fh:
        data = json.load(fh)
    is_program = isinstance(data, dict) and ("ranks" in data or "ops" in data)
    if is_program:
        case = load_case(args.model) if "ranks" in data else Case("program", data)
        gb = args.global_batch if args.global_batch is not None else case.batch_size * args.gpus
        model = ProgramModel(case, global_batch=gb, rank=args.rank)
    else:
        if not isinstance(data, dict):
            raise ValueError(f"{args.model}: a model file holds a JSON object")
        model = Transformer.from_dict(data)
    fields = {}
    if args.cluster:
        with open(args.cluster, encoding="utf-8") as fh:
            fields.update(json.load(fh))
    if args.gpu is not None:
        fields["gpu"] = args.gpu
    fields["gpus"] = args.gpus
    for opt, key, scale in (
        ("gpus_per_node", "gpus_per_node", 1),
        ("memory_gib", "memory_gib", 1),
        ("tflops", "flops", 1e12),
        ("intra_gbps", "intra_bandwidth", 1),
        ("inter_gbps", "inter_bandwidth", 1),
    ):
        v = getattr(args, opt)
        if v is not None:
            fields[key] = v * scale
    cluster = Cluster.from_dict(fields)
    schedules = None if args.schedules is None else tuple(s.strip() for s in args.schedules.split(","))
    res = search(model, cluster, schedules=schedules)
    rows = res.rows(args.top)
    if is_program:
        desc = {
            "program": args.model,
            "rank": args.rank,
            "forward_ops": model.n_forward,
            "parameters": model.parameters,
            "global_batch": model.global_batch,
            "batch_size": model.batch_size,
        }
        title = f"program {args.model} ({model.n_forward} forward ops, {model.parameters:.4g} parameters)"
    else:
        desc = model.to_dict()
        title = f"{model.parameters / 1e9:.1f}B parameters"
    if args.json:
        print(
            json.dumps(
                {
                    "model": desc,
                    "cluster": cluster.to_dict(),
                    "evaluated": res.n_evaluated,
                    "fit": len(res),
                    "configs": rows,
                }
            )
        )
        return 0
    print(
        f"{title} on {cluster.gpus} GPUs: {res.n_evaluated} configurations, {len(res)} fit {cluster.memory_gib:g} GiB"
    )
    hdr = (
        f"{'tp':>3} {'pp':>3} {'dp':>5} {'mb':>3} {'m':>5} {'schedule':>11} {'v':>2} {'recomp':>9} {'zero':>4} "
        f"{'sp':>2} {'step ms':>10} {'bubble':>8} {'tp comm':>8} {'pp comm':>8} {'dp comm':>8} {'mem GiB':>8}"
    )
    print(hdr)
    for r in rows:
        print(
            f"{r['tp']:>3} {r['pp']:>3} {r['dp']:>5} {r['micro_batch']:>3} {r['microbatches']:>5} "
            f"{r['schedule']:>11} {r['virtual_stages']:>2} {r['recompute']:>9} {r['zero']:>4} "
            f"{int(r['sequence_parallel']):>2} {r['time_ms']:>10.1f} {r['bubble_ms']:>8.1f} "
            f"{r['tp_comm_ms']:>8.1f} {r['pp_comm_ms']:>8.1f} {r['dp_comm_ms']:>8.1f} "
            f"{r['memory_bytes'] / 2**30:>8.1f}"
        )
    return 0
