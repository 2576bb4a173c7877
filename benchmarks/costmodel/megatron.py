"""Predicted throughput of published Megatron-LM GPT runs on A100 (Narayanan et al., SC'21, Table 1).

For each published run (model, tensor and pipeline degree, GPUs, global batch) the search is
restricted to the published tensor and pipeline degrees and to full activation recomputation, as
in those runs (microbatch size, schedule and ZeRO stage are chosen by the search) and the prediction is turned into the paper's metric,
model FLOP/s per GPU with recomputation counted (``96 B s L h^2 (1 + s/6h + V/16Lh)`` per step).
One cluster description for every row, no per-row fitting: Selene-like DGX A100 nodes (8 GPUs,
80 GiB), NVLink 300 GB/s per GPU and direction, 8 x 200 Gb/s InfiniBand per node (25 GB/s per
GPU), and ``--efficiency`` x 312 TFLOP/s achievable on the matrix multiplies (default 0.75).

This is the flat model (one achievable FLOP/s for every matrix multiply), kept as the baseline;
the GEMM model with the A100's constants is held against this table and two others in
``benchmarks/costmodel/published.py`` (``benchmarks/results/costmodel.md``).

Usage: ``python benchmarks/costmodel/megatron.py [--efficiency 0.75]``
"""

from __future__ import annotations

import argparse

from fastsched.costmodel import Cluster, Transformer, search

# (name, heads, hidden, layers, tp, pp, gpus, global batch, published TFLOP/s per GPU)
PUBLISHED = (
    ("1.7B", 24, 2304, 24, 1, 1, 32, 512, 137),
    ("3.6B", 32, 3072, 30, 2, 1, 64, 512, 138),
    ("7.5B", 32, 4096, 36, 4, 1, 128, 512, 142),
    ("18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135),
    ("39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138),
    ("76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140),
    ("145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148),
    ("310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155),
    ("529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163),
    ("1008B", 160, 25600, 128, 8, 64, 3072, 3072, 163),
)


def predict(efficiency):
    """Yield ``(row, predicted TFLOP/s per GPU or None, best configuration or reason)``."""
    for row in PUBLISHED:
        name, a, h, L, t, p, n, B, _ = row
        m = Transformer(layers=L, hidden=h, heads=a, seq=2048, vocab=51200, global_batch=B, attention="unfused")
        c = Cluster(
            gpus=n,
            gpus_per_node=8,
            memory_gib=80,
            flops=efficiency * 312e12,
            intra_bandwidth=300.0,
            inter_bandwidth=25.0,
        )
        try:
            res = search(m, c, recompute=("full",))
        except ValueError as e:
            yield row, None, str(e)
            continue
        mine = [r for r in res.rows() if r["tp"] == t and r["pp"] == p]
        if not mine:
            yield row, None, f"tp={t} pp={p} does not fit 80 GiB in this memory model"
            continue
        best = mine[0]
        tflops = m.flops_per_step(recompute=True) / (best["time_ms"] * 1e-3) / n / 1e12
        yield row, tflops, best


def main(argv=None) -> int:
    """Print the markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--efficiency", type=float, default=0.75)
    args = ap.parse_args(argv)
    print(
        "| model | tp | pp | GPUs | batch | published TFLOP/s/GPU | predicted | ratio | chosen: mb, schedule, recompute |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for row, tf, best in predict(args.efficiency):
        name, _, _, _, t, p, n, B, pub = row
        if tf is None:
            print(f"| {name} | {t} | {p} | {n} | {B} | {pub} | - | - | {best} |")
            continue
        how = (
            f"{best['micro_batch']}, {best['schedule']}"
            + (f" v={best['virtual_stages']}" if best["schedule"] == "interleaved" else "")
            + f", {best['recompute']}"
        )
        print(f"| {name} | {t} | {p} | {n} | {B} | {pub} | {tf:.0f} | {tf / pub:.2f} | {how} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
