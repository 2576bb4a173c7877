r"""LLM jobs on a 256-GPU cluster of H100 and A100 nodes, under several policies (issue 23's study).

Usage::

    python benchmarks/oracle_llm_study.py [--hours 2] [--rate 20] [--policies sia,gavel,tiresias,pollux]
        [--svg benchmarks/results/oracle_llm.svg]

Workload: :func:`fastsched.sim.llm_workload.llm_workload` (seed 0); truth: oracle applications
(:func:`fastsched.sim.oracle.oracle_applications`, default efficiencies); cluster 16 x 8 H100 +
16 x 8 A100-80GB. Prints one line per policy (average JCT, completed jobs, wall seconds).
"""

from __future__ import annotations

import argparse
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hours", type=float, default=2.0)
    ap.add_argument("--rate", type=float, default=20.0)
    ap.add_argument("--policies", default="sia,gavel,tiresias,pollux")
    ap.add_argument("--max-days", type=float, default=14.0)
    ap.add_argument("--svg", default=None)
    args = ap.parse_args(argv)
    from fastsched.sim import simulate
    from fastsched.sim.llm_workload import llm_workload
    from fastsched.sim.oracle import oracle_applications

    jobs = llm_workload(hours=args.hours, jobs_per_hour=args.rate, seed=0)
    names = sorted({j.application for j in jobs})
    apps = oracle_applications(names, ["h100", "a100-80gb"])
    print(f"{len(jobs)} jobs ({', '.join(f'{n} x{sum(j.application == n for j in jobs)}' for n in names)})")
    rows = []
    for pol in args.policies.split(","):
        t0 = time.perf_counter()
        r = simulate(jobs, applications=apps, cluster="16xh100,16xa100-80gb", policy=pol,
                     max_time=int(args.max_days * 86400))  # fmt: skip
        s = r.summary()
        rows.append((pol, s["avg_jct"], s["completed"], s["jobs"], time.perf_counter() - t0))
        print(f"{pol}: avg JCT {s['avg_jct'] / 3600:.2f} h, {s['completed']}/{s['jobs']} done, "
              f"{rows[-1][-1]:.0f} s wall", flush=True)  # fmt: skip
    if args.svg:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3))
        ax.bar([r[0] for r in rows], [r[1] / 3600 for r in rows], color="#4477aa")
        ax.set_ylabel("average JCT (h)")
        ax.set_title(f"{len(jobs)} LLM jobs, 128 H100 + 128 A100-80GB")
        fig.tight_layout()
        fig.savefig(args.svg, metadata={"Date": None})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
