"""Growth of fastsched.costmodel's estimate_cost with program size (synthetic stacks).

Prints, per size, the median warm time of ``estimate_cost`` on a prebuilt Program (parse
+ merge + memory + pipeline) and the log-log slope k of time against op count between
~100 and ~100k ops. Usage: ``python benchmarks/costmodel/scaling.py [--max-layers 2000]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from fastsched.costmodel import estimate_cost, transformer_stack


def measure(layers, repeats):
    """Return (n_ops, median seconds) of estimate_cost on a ``layers``-layer stack."""
    prog = transformer_stack(layers)
    estimate_cost(prog)  # compile / load cache
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        estimate_cost(prog)
        ts.append(time.perf_counter() - t)
    return prog.n_ops, statistics.median(ts)


def main(argv=None) -> int:
    """Run the sweep and print the fit."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-layers", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    t = time.perf_counter()
    estimate_cost(transformer_stack(1))
    print(f"cold first call (import excluded, compile or cache load): {time.perf_counter() - t:.3f} s")
    layers = [2, 8, 32, 128, 512, args.max_layers]
    rows = [measure(L, args.repeats if L < 512 else 3) for L in layers]
    for (n, s), L in zip(rows, layers, strict=False):
        print(f"layers {L:5d}  ops {n:7d}  {s * 1e3:10.3f} ms  {s / n * 1e6:7.3f} us/op")
    n = np.array([r[0] for r in rows], float)
    s = np.array([r[1] for r in rows], float)
    k = np.polyfit(np.log(n), np.log(s), 1)[0]
    print(f"log-log slope k over {int(n[0])}..{int(n[-1])} ops: {k:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
