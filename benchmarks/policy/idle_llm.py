"""Issue 38, item 6: why Pollux leaves most of a 64-GPU LLM cluster idle (reproducer).

Usage::

    python benchmarks/policy/idle_llm.py [--keep DIR]

Profiles 350M, 1.3B and 6.7B decoders with ``fastsched profile`` on ``h100,a100-80gb``, shortens
each run to 5 % of its token budget (the first 5 rows of its validation curve, so the study takes
a minute), and runs eight fine-tuning jobs (two 6.7B, three 1.3B, three 350M; adaptive) on
``4xh100,4xa100-80gb`` under Pollux and Sia. Prints each policy's average JCT, makespan and
utilisation, then, for the round where one 6.7B job is left alone under Pollux: the job's merged
observations (Pollux is heterogeneity-unaware: one profile per job across GPU types), the
speedups Pollux believes from its fit of them, and the true step times of the same placements.
Results and the explanation: ``benchmarks/results/hetero.md`` ("Idle GPUs under Pollux").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

MODELS = ("gpt-350m", "gpt-1.3b", "gpt-6.7b")
WORKLOAD = """name,time,application,num_replicas,batch_size,category
ft7b-0,0,gpt-6.7b,8,1024,adaptive
ft7b-1,600,gpt-6.7b,8,1024,adaptive
ft1b-0,0,gpt-1.3b,4,512,adaptive
ft1b-1,300,gpt-1.3b,4,512,adaptive
ft1b-2,1200,gpt-1.3b,4,512,adaptive
ft350-0,0,gpt-350m,2,256,adaptive
ft350-1,900,gpt-350m,2,256,adaptive
ft350-2,1800,gpt-350m,2,256,adaptive
"""
CLUSTER = "4xh100,4xa100-80gb"


def prepare(root: Path):
    traces = root / "traces"
    for m in MODELS:
        cmd = [sys.executable, "-m", "fastsched", "profile", m, "--gpu", "h100,a100-80gb", "--output", str(traces)]
        subprocess.run([*cmd, "--force", "-q"], check=True)
        for f in (traces / m).glob("validation-*.csv"):
            lines = f.read_text().splitlines()
            f.write_text("\n".join(lines[:6]) + "\n")
    (root / "wl.csv").write_text(WORKLOAD)
    return root / "wl.csv", traces


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", help="folder for the profiles and workload (default: a temporary one)")
    args = ap.parse_args()
    import fastsched.sim.policies.pollux as pm
    from fastsched.sim import simulate

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.keep or tmp)
        root.mkdir(parents=True, exist_ok=True)
        wl, traces = prepare(root)
        lone = {}
        cls = next(c for c in vars(pm).values() if isinstance(c, type) and getattr(c, "name", "") == "pollux")
        real = cls.optimize

        def spy(self, now, jobs, nodes, allocations):
            out = real(self, now, jobs, nodes, allocations)
            if len(jobs) == 1 and jobs[0].name.startswith("ft7b") and not lone:
                job = jobs[0]
                fn = job.speedup_fn()
                lone.update(
                    t=now,
                    name=job.name,
                    gpus=len(out.get(job.name, [])),
                    max_replicas=self._max_replicas(job),
                    profile=dict(job.profile),
                    belief={
                        (n, r): float(np.asarray(fn(np.array([n]), np.array([r]))).ravel()[0])
                        for n, r in [(1, 2), (1, 4), (1, 8), (2, 16), (4, 32)]
                    },
                )
            return out

        cls.optimize = spy
        for policy in ("pollux", "sia"):
            r = simulate(str(wl), traces=str(traces), cluster=CLUSTER, policy=policy)
            s = r.summary()
            print(
                f"{policy}: avg JCT {s['avg_jct'] / 3600:.2f} h, makespan {s['makespan'] / 3600:.2f} h, "
                f"GPU utilisation {100 * s['gpu_utilization']:.1f} %"
            )
        cls.optimize = real
        if lone:
            print(f"Pollux, t = {lone['t'] / 3600:.1f} h: {lone['name']} alone, given {lone['gpus']} of 64 GPUs")
            print(f"  max_replicas (2 x most GPUs it has run on): {lone['max_replicas']}")
            print("  merged observations (nodes, GPUs, per-GPU batch) -> (step s, sync s):")
            for k, v in lone["profile"].items():
                print(f"    {k} -> ({v[0]:.2f}, {v[1]:.2f})")
            print("  believed speedup (nodes, GPUs):", {k: round(v, 2) for k, v in lone["belief"].items()})
        from fastsched.sim.engine.hetero_job import load_hetero_applications

        app = load_hetero_applications(traces, ["h100", "a100-80gb"], ["gpt-6.7b"])["gpt-6.7b"]
        for t in ("h100", "a100-80gb"):
            row = {pl: round(app.apps[t].throughput(pl, 64)[0], 2) for pl in [(2,), (4,), (8,), (8, 8)]}
            print(f"  true step time at per-GPU batch 64 on {t}:", row)


if __name__ == "__main__":
    main()
