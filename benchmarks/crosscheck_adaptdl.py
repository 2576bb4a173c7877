"""Cross-check fastsched's results against the AdaptDL 0.2.11 reference on random problems.

Usage::

    python benchmarks/crosscheck_adaptdl.py --ref-python ../refenv/adaptdl/bin/python [--cases 200]

Draws random goodput models and queries (evaluate, optimize with and without bounds and
accumulation, speedups) and random step-time observations for ``fit_perf_params``, runs the
identical inputs through the reference interpreter (one subprocess, JSON in and out), and
reports the largest relative differences, any (atomic_bsz, accum_steps) disagreements that
are not rounding-level ties, and how the fitted parameters and objectives compare.
Exits 1 on a real disagreement; prints a message and exits 0 without ``--ref-python``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REF_SCRIPT = r"""
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
np.int = int  # adaptdl 0.2.11 uses the removed alias on newer numpy
from adaptdl.goodput import GoodputFunction, PerfParams, GradParams, fit_perf_params, _obj_fn
cases = json.load(sys.stdin)
out = []
for c in cases:
    fn = GoodputFunction(PerfParams(*c["perf"]), GradParams(*c["grad"]), c["init"])
    n, r = np.array(c["nodes"]), np.array(c["replicas"])
    g, a, s = fn.optimize(n, r, c["max_bsz"], c["range"], c["accum"])
    ev = fn.evaluate(n, r, np.array(c["atomic"]), np.array(c["steps"]))
    obs = c["obs"]
    fit = fit_perf_params(*[np.array(obs[k]) for k in ("n", "r", "a", "t1", "t2")])
    args = [np.array(obs[k]) for k in ("n", "r", "a", "t1", "t2")]
    out.append({"goodput": g.tolist(), "atomic": a.tolist(), "steps": s.tolist(), "evaluate": ev.tolist(),
                "fit": list(map(float, fit)), "fit_obj": float(_obj_fn(fit, *args))})
json.dump(out, sys.stdout)
"""


def make_cases(count: int, seed: int) -> list[dict]:
    rng = np.random.RandomState(seed)
    cases = []
    for _ in range(count):
        perf = list(rng.gamma(2.0, 2.0, 6) * 10.0 ** rng.uniform(-3, 0, 6)) + [float(rng.uniform(1, 10))]
        grad = list(rng.gamma(2.0, 2.0, 2) * 10.0 ** rng.uniform(-4, 0, 2))
        init = int(rng.choice([16, 32, 64, 128, 256]))
        k = 30
        replicas = rng.randint(1, 65, k)
        nodes = np.array([rng.randint(1, r + 1) for r in replicas])
        lo = int(rng.choice([0, 8, 32, 64]))
        hi = int(rng.choice([0, 256, 512, 1024]))
        steps = rng.randint(0, 4, k)
        atomic = np.maximum(rng.randint(1, 512, k), -(-init // (replicas * (steps + 1))))
        m = int(rng.randint(1, 30))
        on = rng.randint(1, 5, m)
        orr = on * rng.randint(1, 5, m)
        oa = rng.randint(16, 512, m)
        t1 = (perf[0] + perf[1] * oa) * rng.uniform(0.9, 1.1, m)
        t2 = t1 * (1 + rng.uniform(0.05, 0.5) * orr) * rng.uniform(0.9, 1.1, m)
        cases.append(
            {
                "perf": perf,
                "grad": grad,
                "init": init,
                "nodes": nodes.tolist(),
                "replicas": replicas.tolist(),
                "max_bsz": init * int(rng.randint(1, 40)),
                "range": [lo or None, hi or None] if rng.rand() < 0.8 else None,
                "accum": bool(rng.rand() < 0.5),
                "atomic": atomic.tolist(),
                "steps": steps.tolist(),
                "obs": {"n": on.tolist(), "r": orr.tolist(), "a": oa.tolist(), "t1": t1.tolist(), "t2": t2.tolist()},
            }
        )
    return cases


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref-python")
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not args.ref_python:
        print("crosscheck_adaptdl: no --ref-python given; skipping (build one with ../shared/ref/adaptdl/setup_ref.sh)")
        return 0
    from fastsched import GoodputFunction, GradParams, PerfParams, fit_perf_params
    from fastsched.goodput.fit import fit_objective

    cases = make_cases(args.cases, args.seed)
    ref = json.loads(
        subprocess.run(
            [args.ref_python, "-c", REF_SCRIPT], input=json.dumps(cases), capture_output=True, text=True, check=True
        ).stdout
    )
    worst = {"goodput": 0.0, "evaluate": 0.0}
    choice_ties = choice_real = 0
    fit_close = fit_better = fit_worse = 0
    worst_fit_gap = 0.0
    for c, r in zip(cases, ref, strict=True):
        fn = GoodputFunction(PerfParams(*c["perf"]), GradParams(*c["grad"]), c["init"])
        n, rep = np.array(c["nodes"]), np.array(c["replicas"])
        g, a, s = fn.optimize(n, rep, c["max_bsz"], c["range"], c["accum"])
        ev = fn.evaluate(n, rep, np.array(c["atomic"]), np.array(c["steps"]))
        rg = np.array(r["goodput"])
        worst["goodput"] = max(worst["goodput"], float(np.max(np.abs(g - rg) / np.maximum(np.abs(rg), 1e-300))))
        worst["evaluate"] = max(worst["evaluate"], float(np.max(np.abs(ev - r["evaluate"]) / np.abs(r["evaluate"]))))
        differ = (a != np.array(r["atomic"])) | (s != np.array(r["steps"]))
        for i in np.flatnonzero(differ):
            same = abs(g[i] - rg[i]) <= 1e-12 * abs(rg[i])
            choice_ties += same
            choice_real += not same
        obs = [np.array(c["obs"][k]) for k in ("n", "r", "a", "t1", "t2")]
        ours = np.array(fit_perf_params(*obs))
        theirs = np.array(r["fit"])
        ours_obj = fit_objective(ours, *obs)
        if np.all(np.abs(ours - theirs) <= 1e-3 * np.maximum(np.abs(theirs), 1e-8)):
            fit_close += 1
        elif ours_obj <= r["fit_obj"] * (1 + 1e-9):
            fit_better += 1
        else:
            fit_worse += 1
            worst_fit_gap = max(worst_fit_gap, (ours_obj - r["fit_obj"]) / r["fit_obj"])
    print(f"cases: {len(cases)} (30 configurations each)")
    print(f"optimize goodput, max relative difference: {worst['goodput']:.2e}")
    print(f"evaluate, max relative difference:         {worst['evaluate']:.2e}")
    print(f"(atomic_bsz, accum_steps) choices differing: {choice_ties} rounding-level ties, {choice_real} real")
    print(
        f"fit_perf_params: {fit_close} within 1e-3 relative, {fit_better} different but objective no worse, "
        f"{fit_worse} worse (largest objective gap {worst_fit_gap:.2e})"
    )
    ok = worst["goodput"] <= 1e-12 and worst["evaluate"] <= 1e-12 and choice_real == 0 and fit_worse == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
