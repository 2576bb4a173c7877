"""``fastsched plan MODEL.json --gpus N``: rank parallel configurations of a transformer or a program.

Configurations that differ only in the pipeline schedule, the ZeRO stage and the memory they
need, and that tie on step time and every other figure (with one pipeline stage gpipe, 1f1b and
zb-h1 run the same; with one data replica ZeRO 0, 1 and 2 shard nothing) are printed as one
row, e.g. ``1f1b/gpipe`` and ``2/1/0``, led by the choice that needs the least memory (the
memory shown); ``--json`` gives each such row a ``ties`` list of the choices it stands for.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, fields

__all__ = ["register", "run", "collapse_ties", "COLUMNS"]

#: The table's abbreviated columns, explained under it and in ``--help``.
COLUMNS = (
    ("tp, pp, dp", "tensor-, pipeline- and data-parallel degrees"),
    ("mb", "micro-batch size (samples per microbatch per replica)"),
    ("m", "microbatches per step"),
    ("v", "virtual stages (model chunks) per pipeline stage, interleaved schedule"),
    ("recomp", "activation recomputation"),
    ("zero", "ZeRO stage (0: none)"),
    ("sp", "sequence parallelism (1: on)"),
)

#: Fields of a model file that ``fastsched profile`` reads (:func:`fastsched.catalog.load_model_spec`)
#: and a plan does not need: they describe the training run, not one step.
_RUN_FIELDS = ("tokens", "fixed_batch")

# What may differ inside one collapsed row; everything else (step time included) is equal.
_TIED_KEYS = ("schedule", "zero", "memory_bytes", "state_bytes", "activation_bytes")


def _tie_key(row) -> tuple:
    return tuple(sorted((k, v) for k, v in row.items() if k not in _TIED_KEYS))


def collapse_ties(result, top):
    """Return the first ``top`` distinct configurations of ``result``, ties folded into one row each.

    Rows are tied when they differ only in ``schedule``, ``zero`` and memory (``memory_bytes``
    and its parts) and are equal in every other column (step time and its parts included).

    Parameters
    ----------
    result : SearchResult
        Sorted by step time (:func:`~fastsched.costmodel.search.search`).
    top : int
        Rows wanted.

    Returns
    -------
    list of dict
        Per group, its member needing the least memory (the first in rank order among equals),
        with ``ties``: every member's schedule, zero and memory figures, that one first,
        then the others by memory.

    Examples
    --------
    >>> from fastsched.costmodel.cluster import Cluster
    >>> from fastsched.costmodel.search import Transformer, search
    >>> m = Transformer(layers=2, hidden=64, heads=4, seq=16, vocab=100, global_batch=8)
    >>> res = search(m, Cluster(gpus=1, gpus_per_node=1))
    >>> rows = collapse_ties(res, 3)
    >>> len(rows) <= 3, all(r["memory_bytes"] == r["ties"][0]["memory_bytes"] for r in rows)
    (True, True)
    """
    groups: dict = {}
    last_time = None
    for i in range(len(result)):
        row = result.row(i)
        if len(groups) >= top and row["time_ms"] > last_time:
            break  # every later row is slower than the chosen groups: no more ties with them
        key = _tie_key(row)
        if key in groups:
            groups[key].append(row)
        elif len(groups) < top:
            groups[key] = [row]
            last_time = row["time_ms"]
    out = []
    for members in groups.values():
        members = sorted(members, key=lambda r: r["memory_bytes"])  # stable: rank order among equals
        best = dict(members[0])
        best["ties"] = [{k: r[k] for k in _TIED_KEYS} for r in members]
        out.append(best)
    return out


def _joined(values) -> str:
    out = []
    for v in values:
        if str(v) not in out:
            out.append(str(v))
    return "/".join(out)


def _num(x, width) -> str:
    # a tiny negative round-off (a bubble of -1e-13 ms) must not print as -0.0
    text = f"{x:.1f}"
    if text == "-0.0":
        text = "0.0"
    return f"{text:>{width}}"


def _check_model_fields(data, path) -> None:
    from fastsched.costmodel.search import Transformer

    names = [f.name for f in fields(Transformer)]
    optional = [f.name for f in fields(Transformer) if f.default is not MISSING]
    missing = [f.name for f in fields(Transformer) if f.default is MISSING and f.name not in data]
    if missing:
        raise ValueError(
            f"{path}: model field(s) missing: {', '.join(missing)} (a model file holds {', '.join(names)}; "
            f"{' and '.join(optional)} are optional)"
        )


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
        help="samples per step (default: the model file's global_batch; a program's: the case's batch_size x GPUs)",
    )
    p.add_argument("--rank", type=int, default=None, help="program only: which rank's program to read (default 0)")
    p.add_argument("--gpus", type=int, required=True, help="number of GPUs")
    p.add_argument("--cluster", metavar="CLUSTER.json", default=None, help="cluster fields (the options override)")
    p.add_argument(
        "--gpu",
        default=None,
        help="catalogued GPU type (e.g. h100, a100-80gb, mi300x): memory, links, GPUs per node and the GEMM model's "
        "constants (measured matmul ceiling, SMs, HBM bandwidth) from fastsched.catalog; --tflops replaces the GEMM "
        "model by a flat achievable rate (the other options override)",
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
    from fastsched._datafile import read_data_file
    from fastsched.costmodel._bounds import check_plan_request

    # The shared reader names the file in every refusal (missing, not UTF-8, not JSON), as profile's does.
    data = read_data_file(args.model, what="model file")
    name = None
    is_program = isinstance(data, dict) and ("ranks" in data or "ops" in data)
    if not is_program and isinstance(data, dict):
        # a transformer: --global-batch replaces the file's (it was ignored); --rank has no meaning
        if args.rank is not None:
            raise ValueError(f"--rank reads one rank of a case or program file; {args.model} is a transformer model")
        if args.global_batch is not None:
            data["global_batch"] = args.global_batch
        # One model file serves plan and profile: profile's extra fields (the folder name, the
        # token budget, the batch rule) describe a whole training run, not the step planned here.
        name = data.pop("name", None)
        for key in _RUN_FIELDS:
            data.pop(key, None)
    # The stated bounds first: an out-of-range request is refused before the cost model loads.
    check_plan_request(args.gpus, data if isinstance(data, dict) else None)

    from fastsched.costmodel.case import Case, load_case
    from fastsched.costmodel.cluster import Cluster
    from fastsched.costmodel.program_search import ProgramModel
    from fastsched.costmodel.search import Transformer, search

    rank = 0 if args.rank is None else args.rank
    if is_program:
        case = load_case(args.model) if "ranks" in data else Case("program", data)
        gb = args.global_batch if args.global_batch is not None else case.batch_size * args.gpus
        model = ProgramModel(case, global_batch=gb, rank=rank)
    else:
        if not isinstance(data, dict):
            raise ValueError(f"{args.model}: a model file holds a JSON object")
        _check_model_fields(data, args.model)
        model = Transformer.from_dict(data)
    fields = {}
    if args.cluster:
        cluster_fields = read_data_file(args.cluster, what="cluster file")
        if not isinstance(cluster_fields, dict):
            raise ValueError(f"{args.cluster}: a cluster file holds a JSON object")
        fields.update(cluster_fields)
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
    if args.top < 1:
        raise ValueError(f"--top must be >= 1, got {args.top}")
    res = search(model, cluster, schedules=schedules)
    rows = collapse_ties(res, args.top)
    if is_program:
        desc = {
            "program": args.model,
            "rank": rank,
            "forward_ops": model.n_forward,
            "parameters": model.parameters,
            "global_batch": model.global_batch,
            "batch_size": model.batch_size,
        }
        title = f"program {args.model} ({model.n_forward} forward ops, {model.parameters:.4g} parameters)"
    else:
        desc = model.to_dict() if name is None else {"name": str(name), **model.to_dict()}
        title = f"{model.parameters / 1e9:.1f}B parameters"
        if name is not None:
            title = f"{name}: {title}"
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
    labels = [(_joined(t["schedule"] for t in r["ties"]), _joined(t["zero"] for t in r["ties"])) for r in rows]
    ws = max([11, *(len(a) for a, _ in labels)])
    wz = max([4, *(len(b) for _, b in labels)])
    hdr = (
        f"{'tp':>3} {'pp':>3} {'dp':>5} {'mb':>3} {'m':>5} {'schedule':>{ws}} {'v':>2} {'recomp':>9} {'zero':>{wz}} "
        f"{'sp':>2} {'step ms':>10} {'bubble':>8} {'tp comm':>8} {'pp comm':>8} {'dp comm':>8} {'mem GiB':>8}"
    )
    print(hdr)
    for r, (sched, zero) in zip(rows, labels, strict=True):
        print(
            f"{r['tp']:>3} {r['pp']:>3} {r['dp']:>5} {r['micro_batch']:>3} {r['microbatches']:>5} "
            f"{sched:>{ws}} {r['virtual_stages']:>2} {r['recompute']:>9} {zero:>{wz}} "
            f"{int(r['sequence_parallel']):>2} {_num(r['time_ms'], 10)} {_num(r['bubble_ms'], 8)} "
            f"{_num(r['tp_comm_ms'], 8)} {_num(r['pp_comm_ms'], 8)} {_num(r['dp_comm_ms'], 8)} "
            f"{_num(r['memory_bytes'] / 2**30, 8)}"
        )
    print("\n".join(f"  {k}: {v}" for k, v in COLUMNS))
    if any(len(r["ties"]) > 1 for r in rows):
        print("  a/b: choices that tie on step time, shown once; memory is the first one's (the least)")
    return 0
