"""Real Paddle: fastsched's adapter and cost model against Paddle 3.3.1's own cost model.

Run with an interpreter that has paddlepaddle (and numba: fastsched's kernels)::

    python benchmarks/costmodel/paddle_crosscheck.py --ref-python /work/refenv/paddle/bin/python

With ``--ref-python`` the script re-runs itself under that interpreter, adding this
checkout and an overlay holding only this interpreter's numba and llvmlite to its path
(nothing is installed into the reference venv). It builds static training programs with
``paddle.static`` (legacy IR, :func:`fastsched.costmodel.paddle.example_programs`): an MLP
and a small transformer, single rank, data-parallel (2 ranks, ``all_reduce`` of every
gradient) and pipeline-split (2 stages, ``send_v2``/``recv_v2``), gives both models the
same per-op costs (``standalone_cost_data``), and prints both results, the deviations that
explain each difference, and the time of each side (medians, alternating).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("mlp", "transformer", "mlp-dp", "transformer-dp", "mlp-pp", "transformer-pp")


def _reexec(ref_python, argv):
    import llvmlite
    import numba

    with tempfile.TemporaryDirectory() as overlay:
        for mod in (numba, llvmlite):
            src = Path(mod.__file__).parent
            os.symlink(src, Path(overlay) / src.name)
        env = dict(os.environ, FLAGS_enable_pir_api="0", PYTHONPATH=f"{ROOT}{os.pathsep}{overlay}")
        return subprocess.call([ref_python, __file__, *argv], env=env)


def _costs(programs, pp):
    # one synthetic cost table per stage, multiples of 1/1024 ms (exact sums)
    stages = len(pp) if pp else 1
    rank2st = {r: s for s, rs in enumerate(pp or []) for r in rs}
    data = [{} for _ in range(stages)]
    for i, prog in enumerate(programs):
        for j, op in enumerate(prog.global_block().ops):
            data[rank2st.get(i, 0)][op.desc.id()] = ((j * 7) % 13 + 1) / 1024
    return data


def _paddle_cost(programs, data, pp, mb):
    import queue
    import types

    import paddle.distributed.auto_parallel.static.cost_model as cm

    class _Unbounded(queue.Queue):
        def __init__(self, maxsize=0):
            super().__init__(0)

    cm.queue = types.SimpleNamespace(Queue=_Unbounded)  # Queue(1024) deadlocks (B2)
    m = cm.CostModel(batch_size=4, microbatch_num=mb, standalone_cost_data=data, pipeline_config=pp)
    m.init(programs)
    c = m.get_cost()
    return c.runtime, list(m.fwd_time), list(m.bwd_time), list(m.optim_time), list(c.static_mem)


def run(reps):
    """Build every program kind, estimate with both models, print a markdown table."""
    from fastsched.costmodel import deviations, encode, estimate
    from fastsched.costmodel.paddle import example_programs, from_paddle

    print(
        "| program | ranks | ops | Paddle runtime | ours | fwd/bwd/optim equal | static mem equal | deviations | "
        "Paddle init+get_cost ms | ours: adapter ms | encode+estimate ms | ratio (estimate) |"
    )
    print("|---|---:|---:|---:|---:|---|---|---|---:|---:|---:|---:|")
    for kind in KINDS:
        mb = 4
        progs, pp = example_programs(kind)
        data = _costs(progs, pp)
        n_vars = [len(p.global_block().vars) for p in progs]
        t_ours, t_ad, t_ref = [], [], []
        for _ in range(reps):
            a = time.perf_counter()
            prog = from_paddle(progs, data, pp)
            b = time.perf_counter()
            enc = encode(prog)
            ours = estimate(enc, pipeline_config=pp, microbatch_num=mb, batch_size=4, mem_unit="elements")
            t_ours.append(time.perf_counter() - b)
            t_ad.append(b - a)
            assert [len(p.global_block().vars) for p in progs] == n_vars  # never mutates (B13)
            fresh, _ = example_programs(kind)  # Paddle adds a variable to its input: fresh copies
            a = time.perf_counter()
            ref = _paddle_cost(fresh, _costs(fresh, pp), pp, mb)
            t_ref.append(time.perf_counter() - a)
        times_eq = (list(ours.fwd_time), list(ours.bwd_time), list(ours.optim_time)) == tuple(ref[1:4])
        mem_eq = list(ours.static_mem) == ref[4]
        devs = [c for c, _ in deviations(enc, pipeline_config=pp, microbatch_num=mb, mem_unit="elements")]
        to, tr, ta = statistics.median(t_ours), statistics.median(t_ref), statistics.median(t_ad)
        print(
            f"| {kind} | {enc.n_ranks} | {enc.n_ops} | {ref[0]:.6g} | {ours.runtime:.6g} | {times_eq} | {mem_eq} | "
            f"{' '.join(devs)} | {tr * 1e3:.2f} | {ta * 1e3:.2f} | {to * 1e3:.3f} | {tr / to:.0f}x |"
        )


def main(argv=None) -> int:
    """Entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref-python", default=None, help="interpreter with paddlepaddle 3.x")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    if args.ref_python:
        return _reexec(args.ref_python, ["--reps", str(args.reps)])
    os.environ.setdefault("FLAGS_enable_pir_api", "0")
    try:
        import paddle  # noqa: F401
    except ImportError:
        print("paddle is not importable here: pass --ref-python /path/to/paddle/python")
        return 0
    run(args.reps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
