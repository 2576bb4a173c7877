"""Device check of the CUDA target: correctness vs the CPU kernels, then throughput.

Run on a machine with a GPU (under 5 minutes on an H100/H200-class card)::

    python benchmarks/gpu_check.py

or, without a GPU, as a smoke test of the script itself on numba's simulator::

    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu_check.py --tiny

What it does
------------
(a) Correctness: on fresh random inputs of 1e5, 1e6 and 1e7 configurations, the CUDA
    elementwise goodput, 50-point grid search (goodput + argmax atomic/accum) and GA fitness
    equal the CPU kernels (1e-12 relative, argmax exact). CPU reference runs use every core.
(b) Timing at 1e6, 1e7, 1e8 candidates with data resident on the device: CUDA events around
    each launch, one warm-up launch (compilation) first, median of ``--repeats``.
    The CPU kernels run with ``--cpu-threads`` numba threads (default 2, the CI machine);
    above ``--cpu-max`` candidates the CPU throughput is the one measured at the largest size
    it ran (marked ``*``): it is flat in n by then, and running it would blow the 5 minutes.
(c) A table of throughput next to the CPU kernel's and the ratio, the transfers made (counts,
    bytes, time of one upload/download of the inputs) and the issue's floors:
    >= 1e9 goodput evaluations per second and >= 50x the CPU kernel on the largest grid.

Candidates
----------
* ``goodput``: one configuration (nodes, replicas, atomic_bsz, accum_steps) = one goodput evaluation.
* ``grid``: one (multi_node, replicas) key = 50 goodput evaluations + argmax (the table also
  shows evaluations per second = 50 x keys per second).
* ``fitness``: one scored individual of the GA's sparse population (16 jobs, 32 nodes, up to
  3 entries per job). The population holds at most ``--pop-rows`` rows; larger candidate counts
  score rows ``t mod P`` through the row-index variant (as when rescoring offspring), so device
  memory stays bounded.

Exit status 1 when a correctness check fails (floors are reported, not enforced).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # numpy >= 2.5 dropped it; older numba-cuda still calls it
    np.vstack = np.vstack

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numba  # noqa: E402

import fastsched.cuda as fc  # noqa: E402
from fastsched._jit import parallel_region  # noqa: E402
from fastsched.cuda._probe import cuda_api  # noqa: E402
from fastsched.goodput import GoodputFunction, GoodputParams, ModelBatch  # noqa: E402
from fastsched.goodput import _kernels as K  # noqa: E402
from fastsched.policy import _ga as G  # noqa: E402

GRID = K.GRID_POINTS
JOBS, NODES, ENTRIES, MAX_CNT = 16, 32, 3, 4


# --------------------------------------------------------------------------------------
# Random inputs
# --------------------------------------------------------------------------------------
def model(rng):
    """Random goodput model and grid bounds: (perf, sqr, var, init, max_bsz, lo, hi)."""
    perf = np.array(
        [
            rng.uniform(1e-3, 0.2),
            rng.uniform(1e-5, 1e-2),
            rng.uniform(1e-3, 0.5),
            rng.uniform(1e-5, 5e-2),
            rng.uniform(1e-4, 0.1),
            rng.uniform(1e-6, 1e-2),
            rng.uniform(1.0, 10.0),
        ]
    )
    init = float(rng.integers(16, 257))
    max_bsz = init * float(rng.uniform(8.0, 256.0))
    return perf, float(rng.uniform(0.01, 2.0)), float(rng.uniform(0.1, 50.0)), init, max_bsz, 1.0, init * 4.0


def configs(rng, n, init):
    """int64 (nodes, replicas, atomic, accum) with total batch >= init."""
    replicas = rng.integers(1, 1025, n)
    nodes = np.minimum(rng.integers(1, 65, n), replicas)
    accum = rng.integers(0, 4, n)
    atomic = rng.integers(1, 1025, n)
    atomic = np.maximum(atomic, np.ceil(init / (replicas * (accum + 1))).astype(np.int64))
    return nodes, replicas, atomic, accum


def keys(rng, n):
    """Grid-search keys: (multi_node bool, replicas int64); replicas up to 4096."""
    return rng.random(n) < 0.5, rng.integers(1, 4097, n)


def population(rng, rows):
    """Random sparse population [rows] and a problem (vectorised; see fastsched.policy._ga's encoding)."""

    def build(p):
        k = rng.integers(0, ENTRIES + 1, size=(p, JOBS))
        start = rng.integers(0, NODES - ENTRIES + 1, size=(p, JOBS))
        off = np.zeros((p, JOBS + 1), dtype=np.int64)
        np.cumsum(k, axis=1, out=off[:, 1:])
        q = np.arange(ENTRIES)
        mask = q[None, None, :] < k[:, :, None]
        pos = (off[:, :JOBS, None] + q[None, None, :])[mask]
        row = np.broadcast_to(np.arange(p)[:, None, None], mask.shape)[mask]
        node = np.zeros((p, JOBS * ENTRIES), dtype=np.int32)
        cnt = np.zeros((p, JOBS * ENTRIES), dtype=np.int32)
        node[row, pos] = (start[:, :, None] + q[None, None, :])[mask]
        cnt[row, pos] = rng.integers(1, MAX_CNT + 1, size=pos.size)
        return off, node, cnt

    off, node, cnt = build(rows)
    b_off, b_node, b_cnt = build(1)
    nb = int(b_off[0, -1])
    table = rng.uniform(0.0, 4.0, (JOBS, 3, ENTRIES * MAX_CNT + 1))
    table[:, 0, :] = 0.0
    table[:, :, 0] = 0.0
    consts = (
        table,
        rng.uniform(0.1, 3.0, JOBS),
        b_off[0].copy(),
        b_node[0, : max(nb, 1)].copy(),
        b_cnt[0, : max(nb, 1)].copy(),
        0.1,
        G.SUM,
        1.0,
    )
    return (off, node, cnt), consts


# --------------------------------------------------------------------------------------
# Runners (CPU kernels and CUDA entry points on identical inputs)
# --------------------------------------------------------------------------------------
def params(m):
    """Return the model ``m`` as the kernels take it (accumulation allowed)."""
    perf = np.array(m[0], dtype=np.float64)
    perf.flags.writeable = False
    return GoodputParams(perf, *(float(x) for x in m[1:7]), True)


def cpu_goodput(m, cols):
    out = np.empty(cols[0].shape[0])
    with parallel_region():
        assert K.elementwise(params(m), *cols, True, out) == K.OK
    return out


def cpu_grid(m, multi, reps):
    n = reps.shape[0]
    g, a, s = np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64)
    with parallel_region():
        K.optimize_keys_kernel(params(m), multi, reps, g, a, s)
    return g, a, s


def cpu_fitness(pop, consts):
    n = pop[0].shape[0]
    obj, size = np.empty(n), np.empty(n, np.int64)
    with parallel_region():
        G.evaluate_population(*pop, *consts, obj, size)
    return obj, size


def gpu_goodput(m, d_cols, d_out=None):
    return fc.elementwise(params(m), *d_cols, True, d_out, keep_on_device=d_out is not None)


def gpu_grid(m, d_multi, d_reps, outs=(None, None, None)):
    return fc.optimize_keys(params(m), d_multi, d_reps, *outs)


def gpu_fitness(d_pop, d_consts, rows=None, outs=(None, None)):
    return fc.evaluate_population(*d_pop, *d_consts, *outs, rows=rows, keep_on_device=outs[0] is not None)


# --------------------------------------------------------------------------------------
# Correctness
# --------------------------------------------------------------------------------------
def rel_err(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    denom = np.where(want == 0.0, 1.0, np.abs(want))
    return float(np.max(np.abs(got - want) / denom)) if want.size else 0.0


def check(sizes, seed, pop_rows) -> bool:
    ok = True
    print(f"\n(a) correctness vs CPU kernels (CPU with {numba.get_num_threads()} threads)")
    print(f"{'kernel':<10}{'n':>12}{'max rel err':>14}{'argmax diff':>13}  result")
    for n in sizes:
        rng = np.random.default_rng([seed, n])
        m = model(rng)
        cols = configs(rng, n, m[3])
        err = rel_err(fc.elementwise(params(m), *cols, True), cpu_goodput(m, cols))
        good = err <= 1e-12
        ok &= good
        print(f"{'goodput':<10}{n:>12,}{err:>14.2e}{'-':>13}  {'ok' if good else 'FAIL'}")
        multi, reps = keys(rng, n)
        cg, ca, cs = cpu_grid(m, multi, reps)
        gg, ga, gs = gpu_grid(m, multi, reps)
        err = rel_err(gg, cg)
        diff = int(np.count_nonzero((ga != ca) | (gs != cs)))
        good = err <= 1e-12 and diff == 0
        ok &= good
        print(f"{'grid':<10}{n:>12,}{err:>14.2e}{diff:>13}  {'ok' if good else 'FAIL'}")
        p = min(n, pop_rows)
        pop, consts = population(rng, p)
        co, cz = cpu_fitness(pop, consts)
        rows = None if p == n else (np.arange(n, dtype=np.int64) % p)
        go, gz = gpu_fitness(pop, consts, rows)
        want_o, want_z = (co, cz) if rows is None else (co[rows], cz[rows])
        err = rel_err(go, want_o)
        diff = int(np.count_nonzero(gz != want_z))
        good = err <= 1e-12 and diff == 0
        ok &= good
        print(f"{'fitness':<10}{n:>12,}{err:>14.2e}{diff:>13}  {'ok' if good else 'FAIL'}  (population {p:,} rows)")
    return ok


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------
def gpu_time(fn, repeats) -> float:
    """Median seconds of ``fn()`` between CUDA events, after one warm-up call."""
    cuda = cuda_api()
    fn()
    cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = cuda.event(), cuda.event()
        t0 = time.perf_counter()
        start.record()
        fn()
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        # The simulator records no event timings (-1): fall back to the wall clock there.
        times.append(ms / 1e3 if ms > 0 else time.perf_counter() - t0)
    return statistics.median(times)


def cpu_time(fn, repeats) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def transfer_time(host_arrays) -> tuple[float, float, int]:
    """Seconds for one upload and one download of ``host_arrays`` (pageable memory)."""
    cuda = cuda_api()
    cuda.synchronize()
    t0 = time.perf_counter()
    devs = [fc.to_device(a) for a in host_arrays]
    cuda.synchronize()
    t1 = time.perf_counter()
    for d in devs:
        fc.to_host(d)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, sum(a.nbytes for a in host_arrays)


def bench(sizes, seed, repeats, cpu_threads, cpu_max, pop_rows):
    cuda = cuda_api()
    rows_out = []
    transfers = []
    cpu_rate = {}
    for n in sizes:
        rng = np.random.default_rng([seed, 7, n])
        m = model(rng)
        d_perf = fc.to_device(m[0])
        md = (d_perf,) + m[1:]
        # --- elementwise goodput
        cols = configs(rng, n, m[3])
        up, down, nbytes = transfer_time(cols)
        transfers.append(("goodput", n, up, down, nbytes))
        d_cols = [fc.to_device(c) for c in cols]
        d_out = cuda.device_array(n, dtype=np.float64)
        t_gpu = gpu_time(lambda md=md, d_cols=d_cols, d_out=d_out: gpu_goodput(md, d_cols, d_out), repeats)
        rows_out.append(
            (
                "goodput",
                n,
                t_gpu,
                1,
                *cpu_measure(
                    "goodput", n, cpu_max, cpu_rate, cpu_threads, lambda m=m, cols=cols: cpu_goodput(m, cols), repeats
                ),
            )
        )
        del d_cols, d_out, cols
        # --- grid search
        multi, reps = keys(rng, n)
        up, down, nbytes = transfer_time([multi, reps])
        transfers.append(("grid", n, up, down, nbytes))
        d_multi, d_reps = fc.to_device(multi), fc.to_device(reps)
        outs = (
            cuda.device_array(n, np.float64),
            cuda.device_array(n, np.int64),
            cuda.device_array(n, np.int64),
        )
        t_gpu = gpu_time(lambda md=md, a=d_multi, b=d_reps, o=outs: gpu_grid(md, a, b, o), repeats)
        rows_out.append(
            (
                "grid",
                n,
                t_gpu,
                GRID,
                *cpu_measure(
                    "grid", n, cpu_max, cpu_rate, cpu_threads, lambda m=m, a=multi, b=reps: cpu_grid(m, a, b), repeats
                ),
            )
        )
        del d_multi, d_reps, outs, multi, reps
        # --- fitness
        p = min(n, pop_rows)
        pop, consts = population(rng, p)
        up, down, nbytes = transfer_time(list(pop))
        transfers.append(("fitness", n, up, down, nbytes))
        d_pop = [fc.to_device(a) for a in pop]
        d_consts = [fc.to_device(np.asarray(c)) if isinstance(c, np.ndarray) else c for c in consts]
        rows = None if p == n else fc.to_device(np.arange(n, dtype=np.int64) % p)
        outs = (cuda.device_array(n, np.float64), cuda.device_array(n, np.int64))
        t_gpu = gpu_time(lambda d=d_pop, c=d_consts, r=rows, o=outs: gpu_fitness(d, c, r, o), repeats)
        rows_out.append(
            (
                "fitness",
                n,
                t_gpu,
                1,
                *cpu_measure(
                    "fitness",
                    p,
                    cpu_max,
                    cpu_rate,
                    cpu_threads,
                    lambda pop=pop, c=consts: cpu_fitness(pop, c),
                    repeats,
                    n,
                ),
            )
        )
        del d_pop, d_consts, rows, outs, pop
    return rows_out, transfers


def cpu_measure(kind, n, cpu_max, cpu_rate, cpu_threads, fn, repeats, n_report=None):
    """CPU candidates/s at ``n`` (measured when ``n <= cpu_max``, else the last measured rate)."""
    n_report = n if n_report is None else n_report
    if n <= cpu_max and n_report <= cpu_max:
        previous = numba.get_num_threads()
        numba.set_num_threads(min(cpu_threads, numba.config.NUMBA_NUM_THREADS))
        try:
            t = cpu_time(fn, repeats if n <= cpu_max // 10 else max(1, repeats // 2))
        finally:
            numba.set_num_threads(previous)
        cpu_rate[kind] = n / t
        return cpu_rate[kind], False
    return cpu_rate.get(kind, math.nan), True


def report(rows, transfers, cpu_threads, simulator):
    print(f"\n(b, c) throughput, data resident on the device (median); CPU = numba kernel on {cpu_threads} threads")
    hdr = f"{'kernel':<9}{'candidates':>13}{'GPU ms':>11}{'GPU cand/s':>13}{'GPU evals/s':>13}{'CPU cand/s':>13}{'ratio':>9}"
    print(hdr)
    print("-" * len(hdr))
    for kind, n, t, evals, cpu, extrapolated in rows:
        rate = n / t
        mark = "*" if extrapolated else " "
        print(
            f"{kind:<9}{n:>13,}{t * 1e3:>11.3f}{rate:>13.3e}{rate * evals:>13.3e}{cpu:>12.3e}{mark}{rate / cpu:>9.1f}"
        )
    print("* CPU rate measured at the largest size it ran (--cpu-max), reused here.")
    print("\ntransfers (pageable host memory; not inside the timings above)")
    print(f"{'inputs of':<9}{'candidates':>13}{'MB':>10}{'H2D ms':>10}{'D2H ms':>10}{'H2D GB/s':>10}")
    for kind, n, up, down, nbytes in transfers:
        print(
            f"{kind:<9}{n:>13,}{nbytes / 1e6:>10.1f}{up * 1e3:>10.2f}{down * 1e3:>10.2f}{nbytes / max(up, 1e-9) / 1e9:>10.2f}"
        )
    stats = fc.transfer_stats()
    print(
        f"counted by fastsched.cuda over the whole run: {stats['h2d_count']} H2D ({stats['h2d_bytes'] / 1e6:.1f} MB), "
        f"{stats['d2h_count']} D2H ({stats['d2h_bytes'] / 1e6:.1f} MB)"
    )
    largest = max(n for _, n, *_ in rows)
    grid = [r for r in rows if r[0] == "grid" and r[1] == largest][0]
    evals = grid[1] / grid[2] * GRID
    ratio = grid[1] / grid[2] / grid[4]
    note = " (simulator: timings meaningless)" if simulator else ""
    print(f"\nfloors{note}:")
    print(
        f"  grid search goodput evaluations/s at {largest:,}: {evals:.3e}  (floor 1e9: {'PASS' if evals >= 1e9 else 'FAIL'})"
    )
    print(f"  grid search vs CPU kernel at {largest:,}: {ratio:.1f}x  (floor 50x: {'PASS' if ratio >= 50 else 'FAIL'})")


# --------------------------------------------------------------------------------------
# API level: the public faces, NumPy in/out and device arrays in/out, against backend="cpu"
# --------------------------------------------------------------------------------------
def wall(fn, repeats) -> float:
    """Median wall seconds of ``fn()`` (synchronised), after one warm-up call."""
    cuda = cuda_api()
    fn()
    cuda.synchronize()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def api_check(name, got, want) -> bool:
    """Print and return whether ``got`` equals the CPU result (1e-12 relative; integers exact)."""
    got = [np.asarray(g.copy_to_host() if hasattr(g, "copy_to_host") else g) for g in got]
    err = max(rel_err(g, w) for g, w in zip(got, want, strict=True) if w.dtype.kind == "f")
    diff = sum(int(np.count_nonzero(g != w)) for g, w in zip(got, want, strict=True) if w.dtype.kind != "f")
    good = err <= 1e-12 and diff == 0
    print(f"  {name:<17} max rel err {err:.2e}, integer mismatches {diff}: {'ok' if good else 'FAIL'}")
    return good


def api_bench(seed, repeats, eval_n, opt_n, jobs, table_reps):
    """Time the API calls on CUDA and on the CPU (every host core).

    Returns rows (call, n, cuda seconds, cpu seconds, evaluations per item) and whether every API
    result equals backend="cpu"'s.
    """
    cuda = cuda_api()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    rng = np.random.default_rng([seed, 99])
    m = model(rng)
    fn = GoodputFunction(m[0], (m[1], m[2]), m[3])
    rows = []
    cols = configs(rng, eval_n, m[3])
    t_np = wall(lambda: fn.evaluate(*cols, backend="cuda"), repeats)
    t_cpu = wall(lambda: fn.evaluate(*cols, backend="cpu"), repeats)
    d_cols = [cuda.to_device(c) for c in cols]
    t_dev = wall(lambda: fn.evaluate(*d_cols), repeats)
    rows += [("evaluate numpy", eval_n, t_np, t_cpu, 1), ("evaluate device", eval_n, t_dev, t_cpu, 1)]
    print("\n(d) API results against backend='cpu'")
    want = [fn.evaluate(*cols, backend="cpu")]
    ok = api_check("evaluate numpy", [fn.evaluate(*cols, backend="cuda")], want)
    ok &= api_check("evaluate device", [fn.evaluate(*d_cols)], want)
    del want
    reps = np.arange(1, opt_n + 1, dtype=np.int64)  # every configuration a distinct key
    nodes = np.where(np.arange(opt_n) % 2 == 0, 1, np.minimum(2, reps))
    kw = {"max_batch_size": m[4], "atomic_bsz_range": (None, m[6]), "accumulation": True}
    t_np = wall(lambda: fn.optimize(nodes, reps, backend="cuda", **kw), repeats)
    t_cpu = wall(lambda: fn.optimize(nodes, reps, backend="cpu", **kw), max(1, repeats // 2))
    d_nodes, d_reps = cuda.to_device(nodes), cuda.to_device(reps)
    t_dev = wall(lambda: fn.optimize(d_nodes, d_reps, **kw), repeats)
    rows += [("optimize numpy", opt_n, t_np, t_cpu, GRID), ("optimize device", opt_n, t_dev, t_cpu, GRID)]
    want = fn.optimize(nodes, reps, backend="cpu", **kw)
    ok &= api_check("optimize numpy", fn.optimize(nodes, reps, backend="cuda", **kw), want)
    ok &= api_check("optimize device", fn.optimize(d_nodes, d_reps, **kw), want)
    ms = [model(rng) for _ in range(jobs)]
    batch = ModelBatch(
        [mj[0] for mj in ms], [(mj[1], mj[2]) for mj in ms], [mj[3] for mj in ms], [mj[4] for mj in ms], None, True
    )
    t_gpu = wall(lambda: batch.speedup_tables(table_reps, backend="cuda"), repeats)
    t_cpu = wall(lambda: batch.speedup_tables(table_reps, backend="cpu"), 1)
    rows.append(("tables of jobs", jobs * 2 * table_reps, t_gpu, t_cpu, GRID))
    want = [batch.speedup_tables(table_reps, backend="cpu")]
    ok &= api_check("tables of jobs", [batch.speedup_tables(table_reps, backend="cuda")], want)
    return rows, ok


def api_report(rows):
    print("\n(d) API level (median wall time incl. transfers and validation); CPU = backend='cpu' on every core")
    print(f"{'call':<17}{'n':>13}{'CUDA ms':>11}{'CPU ms':>11}{'ratio':>9}{'items/s':>12}{'evals/s':>12}")
    for name, n, t, c, evals in rows:
        print(f"{name:<17}{n:>13,}{t * 1e3:>11.2f}{c * 1e3:>11.2f}{c / t:>9.1f}{n / t:>12.3e}{n / t * evals:>12.3e}")
    print("floors: evaluate device >= 1e10 evals/s; optimize device >= 5e8 keys/s; optimize numpy >= 30x CPU;")
    print("        evaluate numpy >= 1.0x CPU; tables of 1000 jobs x 2048 replicas >= 30x CPU.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiny", action="store_true", help="tiny sizes (simulator smoke test)")
    ap.add_argument("--seed", type=int, default=20260101)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cpu-threads", type=int, default=2, help="numba threads of the CPU baseline (default 2)")
    ap.add_argument("--cpu-max", type=float, default=1e6, help="largest candidate count the CPU baseline runs")
    ap.add_argument("--pop-rows", type=int, default=1 << 20, help="largest GA population held on the device")
    ap.add_argument("--check-sizes", type=float, nargs="*", default=[1e5, 1e6, 1e7])
    ap.add_argument("--sizes", type=float, nargs="*", default=[1e6, 1e7, 1e8])
    ap.add_argument("--api-evaluate", type=float, default=1e8, help="configurations of the API evaluate rows")
    ap.add_argument("--api-optimize", type=float, default=1e7, help="distinct keys of the API optimize rows")
    ap.add_argument("--api-jobs", type=int, default=1000, help="jobs of the many-tables row")
    ap.add_argument("--api-replicas", type=int, default=2048, help="replicas per job of the many-tables row")
    args = ap.parse_args(argv)
    if args.tiny:
        args.check_sizes, args.sizes, args.repeats = [120, 300], [100, 200, 400], 1
        args.cpu_max, args.pop_rows = 200, 150
        args.api_evaluate, args.api_optimize, args.api_jobs, args.api_replicas = 200, 60, 3, 8
        # The simulator runs each CUDA thread as a Python thread that waits at every barrier: small
        # blocks keep the thread hand-offs, which dominate its run time on a loaded machine, few.
        fc.set_threads_per_block(8)
    simulator = bool(int(os.environ.get("NUMBA_ENABLE_CUDASIM", "0") or 0))
    if not fc.is_available():
        print(f"CUDA unavailable: {fc.unavailable_reason()}", file=sys.stderr)
        return 2
    dev = "simulator" if simulator else cuda_api().get_current_device().name
    dev = dev.decode() if isinstance(dev, bytes) else dev
    print(f"fastsched gpu_check on {dev}; numba {numba.__version__}; host threads {numba.config.NUMBA_NUM_THREADS}")
    t0 = time.perf_counter()
    fc.reset_transfer_stats()
    ok = check([int(s) for s in args.check_sizes], args.seed, args.pop_rows)
    print(f"correctness: {'PASS' if ok else 'FAIL'} ({time.perf_counter() - t0:.1f} s)")
    rows, transfers = bench(
        [int(s) for s in args.sizes], args.seed, args.repeats, args.cpu_threads, int(args.cpu_max), args.pop_rows
    )
    report(rows, transfers, args.cpu_threads, simulator)
    api_rows, api_ok = api_bench(
        args.seed, args.repeats, int(args.api_evaluate), int(args.api_optimize), args.api_jobs, args.api_replicas
    )
    api_report(api_rows)
    ok &= api_ok
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
