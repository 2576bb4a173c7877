r"""LLM jobs on a 256-GPU cluster of H100 and A100 nodes, under several policies (issue 23's study).

Usage::

    python benchmarks/oracle_llm_study.py [--hours 2] [--rate 20] [--policies sia,gavel,tiresias,pollux]
        [--overlap 1] [--log runs.jsonl] [--svg benchmarks/results/oracle_llm.svg] [--markdown out.md]

Workload: :func:`fastsched.sim.inputs.llm_workload.llm_workload` (seed 0); truth: oracle applications
(:func:`fastsched.sim.truth.oracle.oracle_applications`, default efficiencies) with the all-reduce
overlapped with the backward pass (``overlap=1``, PyTorch DDP's bucketed overlap: the stacks
LLM jobs train on); cluster 16 x 8 H100 + 16 x 8 A100-80GB. One line per policy: average and
p99 JCT (over the completed jobs; and the average over all jobs with the unfinished ones at the
cut-off, a lower bound), completed jobs, GPU-hours per type, CPU and wall seconds of the simulation. ``--log``
keeps finished policies (JSON lines) so the policies can run one process at a time.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

CLUSTER = "16xh100,16xa100-80gb"


def run_policy(pol, jobs, apps, max_days):
    """Simulate one policy; a JSON-ready record of what it gave and what it cost."""
    from fastsched.sim import simulate

    c0, t0 = time.process_time(), time.perf_counter()
    r = simulate(jobs, applications=apps, cluster=CLUSTER, policy=pol, max_time=int(max_days * 86400))
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    s = r.summary()
    by_type: dict = {}
    jcts, bounded = [], []
    for j in r.jobs:
        for t, sec in (j.gpu_seconds_by_type or {}).items():
            by_type[t] = by_type.get(t, 0.0) + sec / 3600.0
        if j.completion_time is not None:
            jcts.append(j.completion_time - j.submission_time)
        # an unfinished job counts as finishing at the cut-off: a lower bound of its JCT
        bounded.append((j.completion_time if j.completion_time is not None else max_days * 86400) - j.submission_time)
    return {"policy": pol, "avg_jct": s["avg_jct"], "p99_jct": s["p99_jct"], "makespan": s["makespan"],
            "completed": s["completed"], "jobs": s["jobs"], "restarts": s["restarts"], "gpu_hours": by_type,
            "avg_jct_bound": sum(bounded) / len(bounded), "jct_s": sorted(jcts), "cpu_s": cpu,
            "wall_s": wall}  # fmt: skip


def plot(recs, n_jobs, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.2))
    a.bar([r["policy"] for r in recs], [r["avg_jct"] / 3600 for r in recs], color="#4477aa")
    a.set_ylabel("average JCT (h)")
    a.set_title(f"{n_jobs} LLM jobs, 128 H100 + 128 A100-80GB")
    for r in recs:
        x = np.array(r["jct_s"]) / 3600
        b.step(x, np.arange(1, len(x) + 1) / r["jobs"], where="post", label=r["policy"])
    b.set_xscale("log")
    b.set_xlabel("JCT (h)")
    b.set_ylabel("jobs completed (share)")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hours", type=float, default=2.0)
    ap.add_argument("--rate", type=float, default=20.0)
    ap.add_argument("--policies", default="sia,gavel,tiresias,pollux")
    ap.add_argument("--overlap", type=float, default=1.0, help="share of the backward pass hiding the all-reduce")
    ap.add_argument("--max-days", type=float, default=14.0)
    ap.add_argument("--log", type=Path, default=None, help="JSON lines of finished policies (resumes)")
    ap.add_argument("--svg", default=None)
    ap.add_argument("--markdown", type=Path, default=None)
    args = ap.parse_args(argv)
    from fastsched.sim.inputs.llm_workload import llm_workload
    from fastsched.sim.truth.oracle import oracle_applications

    jobs = llm_workload(hours=args.hours, jobs_per_hour=args.rate, seed=0)
    names = sorted({j.application for j in jobs})
    apps = oracle_applications(names, ["h100", "a100-80gb"], overlap=args.overlap)
    mix = ", ".join(f"{n} x{sum(j.application == n for j in jobs)}" for n in names)
    print(f"{len(jobs)} jobs ({mix}); overlap {args.overlap:g}")
    done = {}
    if args.log is not None and args.log.is_file():
        for line in args.log.read_text().splitlines():
            r = json.loads(line)
            if r.get("overlap") == args.overlap:
                done[r["policy"]] = r
    recs = []
    for pol in args.policies.split(","):
        rec = done.get(pol)
        if rec is None:
            rec = run_policy(pol, jobs, apps, args.max_days) | {"overlap": args.overlap}
            if args.log is not None:
                with open(args.log, "a") as f:
                    f.write(json.dumps(rec) + "\n")
        recs.append(rec)
        gh = ", ".join(f"{t} {h:.0f}" for t, h in sorted(rec["gpu_hours"].items()))
        print(f"{pol}: avg JCT {rec['avg_jct'] / 3600:.2f} h, {rec['completed']}/{rec['jobs']} done, GPU-h {gh}, "
              f"{rec['cpu_s']:.0f} CPU s, {rec['wall_s']:.0f} s wall", flush=True)  # fmt: skip
    if args.markdown:
        lines = ["| policy | avg JCT (h) | all jobs, unfinished at the cut-off (h) | p99 JCT (h) | makespan (h) "
                 "| completed | restarts | GPU-h h100 / a100-80gb | CPU s | wall s |",
                 "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for r in recs:
            gh = r["gpu_hours"]
            lines.append(f"| {r['policy']} | {r['avg_jct'] / 3600:.2f} | {r['avg_jct_bound'] / 3600:.2f} | "
                         f"{r['p99_jct'] / 3600:.2f} | "
                         f"{r['makespan'] / 3600:.1f} | {r['completed']}/{r['jobs']} | {r['restarts']} | "
                         f"{gh.get('h100', 0):.0f} / {gh.get('a100-80gb', 0):.0f} | {r['cpu_s']:.0f} | "
                         f"{r['wall_s']:.0f} |")  # fmt: skip
        args.markdown.write_text(f"{len(jobs)} jobs ({mix}); overlap {args.overlap:g}\n\n" + "\n".join(lines) + "\n")
    if args.svg:
        plot(recs, len(jobs), args.svg)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
