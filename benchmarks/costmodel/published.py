"""Predicted training throughput against published large-model runs (issue 37, item 4).

Tables (``benchmarks/costmodel/published/*.json``, each with its exact source):

* ``narayanan``: Narayanan et al., SC'21, Table 1: GPT on A100-80GB, Megatron-LM tensor x
  pipeline x data parallelism, full recomputation, unfused attention (model TFLOP/s per GPU);
* ``foundry-a100``: MosaicML LLM Foundry's MPT benchmarks, A100-80GB: FSDP (ZeRO-3), fused
  attention, with and without activation checkpointing (tokens/s per GPU);
* ``foundry-h100``: the same on H100-80GB, BF16.

Every row is priced with the GPU type's one set of constants (``Cluster.from_gpu``) and one
software :class:`~fastsched.costmodel.roofline.Stack`, with the run's stated facts (its
parallel degrees, microbatch, recomputation, attention kernel, whether the data-parallel
communication overlaps). Calibration fits the stack's two shares (``gemm``, ``attention``) on
ONE table by least squares of the log ratios and scores the others with them.

Usage::

    python benchmarks/costmodel/published.py                  # the code's default stack
    python benchmarks/costmodel/published.py --calibrate narayanan
    python benchmarks/costmodel/published.py --calibrate foundry-a100 --markdown
    python benchmarks/costmodel/published.py --gpu-types benchmarks/costmodel/published/sensitivity_g.json

``--gpu-types FILE`` overrides GPU constants (:func:`fastsched.catalog.gpus.with_types`): the
sensitivities of ``benchmarks/results/costmodel.md`` (``published/sensitivity_*.json``).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from fastsched._gpus import with_types
from fastsched.costmodel import Cluster, Transformer, search
from fastsched.costmodel.price import price
from fastsched.costmodel.roofline import DEFAULT_STACK

HERE = Path(__file__).resolve().parent / "published"
TABLES = {
    "narayanan": "narayanan_sc21_table1.json",
    "foundry-a100": "llmfoundry_a100_80gb.json",
    "foundry-h100": "llmfoundry_h100_80gb_bf16.json",
}


def load(name) -> dict:
    """Read table ``name`` (source, settings, rows as dicts)."""
    d = json.loads((HERE / TABLES[name]).read_text())
    d["rows"] = [dict(zip(d["columns"], r, strict=True)) for r in d["rows"]]
    return d


def _narayanan_row(t, r, stack, catalog=None):
    m = Transformer(layers=r["layers"], hidden=r["hidden"], heads=r["heads"], seq=t["seq"], vocab=t["vocab"],
                    global_batch=r["global_batch"], attention=t["attention"])  # fmt: skip
    c = Cluster.from_gpu(t["gpu"], gpus=r["gpus"], catalog=catalog)
    res = search(m, c, schedules=tuple(t["schedules"]), recompute=(t["recompute"],), zero=(0,), stack=stack)
    mine = [x for x in res.rows() if x["tp"] == r["tp"] and x["pp"] == r["pp"]]
    if not mine:
        return None, "the published tp x pp does not fit this memory model"
    best = mine[0]
    pred = m.flops_per_step(recompute=True) / (best["time_ms"] * 1e-3) / r["gpus"] / 1e12
    how = f"mb {best['micro_batch']}, {best['schedule']}" + (
        f" v={best['virtual_stages']}" if best["schedule"] == "interleaved" else ""
    )
    return pred, how


def _foundry_row(t, r, stack, catalog=None):
    a = t["architecture"][r["model"]]
    m = Transformer(layers=a["layers"], hidden=a["hidden"], heads=a["heads"], seq=r["seq"], vocab=t["vocab"],
                    global_batch=r["global_batch"], attention=t["attention"])  # fmt: skip
    c = Cluster.from_gpu(t["gpu"], gpus=r["gpus"], catalog=catalog)
    row = price(m, c, micro_batch=r["micro_batch"], zero=3,
                recompute="full" if r["activation_checkpointing"] else "none", stack=stack)  # fmt: skip
    pred = r["global_batch"] * r["seq"] / (row["time_ms"] * 1e-3) / r["gpus"]
    how = f"{row['memory_bytes'] / 2**30:.0f} GiB" + ("" if row["fits"] else " (over 80 GiB)")
    return pred, how


def predict(name, stack=None, catalog=None):
    """``[(row, published, predicted or None, note)]`` of table ``name`` under ``stack`` (and GPU ``catalog``)."""
    t = load(name)
    stack = DEFAULT_STACK if stack is None else stack
    stack = stack._replace(comm_overlap=t["comm_overlap"])  # a fact of the published run, not fitted
    out = []
    for r in t["rows"]:
        if name == "narayanan":
            pred, how = _narayanan_row(t, r, stack, catalog)
            pub = r["tflops_per_gpu"]
        else:
            pred, how = _foundry_row(t, r, stack, catalog)
            pub = r["tokens_per_s_per_gpu"]
        out.append((r, pub, pred, how))
    return out


def log_errors(results) -> np.ndarray:
    return np.array([math.log(p / pub) if p else math.inf for _, pub, p, _ in results])


def calibrate(name, catalog=None):
    """Fit the (gemm, attention) shares minimising the squared log error on table ``name``.

    A grid of step 0.05 over [0.3, 1] x [0.1, 1], then one of step 0.01 around its best point
    (a table without fused attention fits ``gemm`` only; ``attention`` keeps its default).
    """
    fused = load(name)["attention"] == "fused"
    memo = {}

    def loss(g, a):
        key = (round(g, 4), round(a, 4))
        if key not in memo:
            e = log_errors(predict(name, DEFAULT_STACK._replace(gemm=key[0], attention=key[1]), catalog))
            memo[key] = float(np.sum(e**2))
        return memo[key]

    def best_of(gs, as_):
        return min(((loss(g, a), g, a) for g in gs for a in as_), key=lambda x: x[0])

    a_grid = np.arange(0.10, 1.0001, 0.05) if fused else [DEFAULT_STACK.attention]
    _, g0, a0 = best_of(np.arange(0.30, 1.0001, 0.05), a_grid)
    fine_g = [g for g in np.arange(g0 - 0.04, g0 + 0.0401, 0.01) if 0.0 < g <= 1.0]
    fine_a = [a for a in np.arange(a0 - 0.04, a0 + 0.0401, 0.01) if 0.0 < a <= 1.0] if fused else [a0]
    _, g, a = best_of(fine_g, fine_a)
    return DEFAULT_STACK._replace(gemm=round(float(g), 2), attention=round(float(a), 2))


def summary(results) -> dict:
    """Median and largest |error|, rows outside 10 % and 15 %."""
    ratios = np.array([p / pub if p else math.inf for _, pub, p, _ in results])
    err = np.abs(ratios - 1.0)
    return {
        "rows": len(ratios),
        "median_abs_err": float(np.median(err)),
        "max_abs_err": float(err.max()),
        "outside_10": int((err > 0.10).sum()),
        "outside_15": int((err > 0.15).sum()),
        "ratio_min": float(ratios.min()),
        "ratio_max": float(ratios.max()),
    }


def _label(name, r):
    if name == "narayanan":
        return f"{r['model']} tp{r['tp']} pp{r['pp']} {r['gpus']} GPUs"
    ck = "ckpt" if r["activation_checkpointing"] else "no ckpt"
    return f"{r['model']} s={r['seq']} {r['gpus']} GPUs mb {r['micro_batch']} x{r['grad_accum']} {ck}"


def table_markdown(name, results) -> str:
    unit = "TFLOP/s/GPU" if name == "narayanan" else "tokens/s/GPU"
    lines = [f"| run | published {unit} | predicted | ratio | note |", "|---|---:|---:|---:|---|"]
    for r, pub, pred, how in results:
        flag = (
            ""
            if pred and abs(pred / pub - 1) <= 0.10
            else (" **>10 %**" if pred and abs(pred / pub - 1) <= 0.15 else " **>15 %**")
        )
        ptxt = f"{pred:.0f}" if pred else "-"
        rtxt = f"{pred / pub:.2f}{flag}" if pred else "-"
        lines.append(f"| {_label(name, r)} | {pub} | {ptxt} | {rtxt} | {how} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calibrate", choices=sorted(TABLES), default=None, help="fit the stack on this one table")
    ap.add_argument("--markdown", action="store_true", help="print every row as markdown tables")
    ap.add_argument("--gpu-types", default=None, help="JSON/TOML file of GPU constants to override (a sensitivity)")
    args = ap.parse_args(argv)
    catalog = None if args.gpu_types is None else with_types(args.gpu_types)
    stack = DEFAULT_STACK if args.calibrate is None else calibrate(args.calibrate, catalog)
    print(f"stack: gemm={stack.gemm:.2f} attention={stack.attention:.2f} memory={stack.memory} link={stack.link}"
          + (f" (calibrated on {args.calibrate})" if args.calibrate else " (the code's default)"))  # fmt: skip
    out = {}
    for name in TABLES:
        res = predict(name, stack, catalog)
        s = summary(res)
        role = "calibration" if name == args.calibrate else "scored"
        out[name] = {"role": role, **s}
        print(f"{name:>13} ({role}): {s}")
        if args.markdown:
            print(f"\n#### {name}\n\n{table_markdown(name, res)}\n")
    print(json.dumps({"stack": stack._asdict(), "tables": out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
