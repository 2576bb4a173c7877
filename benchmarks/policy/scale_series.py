"""Scale series of PolluxPolicy up to 2048 GPUs (512 nodes x 4) with 1000 jobs.

Usage::

    python -m benchmarks.policy.scale_series [--sizes 64x16 256x64 1000x512] [--long-gens 1000]

Per size: cold round (fresh policy, no base allocation) and warm rounds (same policy, base =
previous result), wall and CPU seconds; the population's memory (and what AdaptDL's dense
``[2P, J, 2N]`` int64 genome would take); the first objective on the real nodes against the
best known (the MILP where it solves within ``--milp-limit`` s, else the best of long GA runs)
and the one-replica first fit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc

from benchmarks.policy.scale import scale_instance
from fastsched.policy import PolluxPolicy, exact_optimize
from fastsched.policy.problem import allocation_objective, build_problem


def first_fit(jobs, nodes):
    free = {k: dict(n.resources) for k, n in nodes.items()}
    out = {}
    for key, job in jobs.items():
        for nk in sorted(free):
            if all(free[nk].get(r, 0) >= v for r, v in job.resources.items()):
                for r, v in job.resources.items():
                    free[nk][r] -= v
                out[key] = [nk]
                break
    return out


def timed(policy, *args):
    w, c = time.perf_counter(), time.process_time()
    out = policy.optimize(*args)
    return out, time.perf_counter() - w, time.process_time() - c


def run(num_jobs, num_nodes, warm_rounds, long_gens, milp_limit):
    jobs, nodes, template = scale_instance(num_jobs, num_nodes)
    PolluxPolicy(seed=99, generations=2).optimize(jobs, nodes, {}, template)  # load kernels, tables
    res = {"jobs": num_jobs, "nodes": num_nodes, "gpus": 4 * num_nodes}
    prob = build_problem(jobs, nodes, {}, template)
    cold = []
    for seed in range(3):
        p = PolluxPolicy(seed=seed)
        (_, _), w, c = timed(p, jobs, nodes, {}, template)
        cold.append((w, c, p.last_stats["objective_real"]))
    res["cold_wall_s"] = statistics.median(x[0] for x in cold)
    res["cold_cpu_s"] = statistics.median(x[1] for x in cold)
    res["cold_objective"] = [x[2] for x in cold]
    for parallel in (None, False):
        policy = PolluxPolicy(seed=0, parallel=parallel)
        base, _ = policy.optimize(jobs, nodes, {}, template)
        walls, cpus = [], []
        for _ in range(warm_rounds):
            (base, _), w, c = timed(policy, jobs, nodes, base, template)
            walls.append(w)
            cpus.append(c)
        tag = "" if parallel is None else "_serial"
        res["warm_wall_s" + tag] = statistics.median(walls)
        res["warm_cpu_s" + tag] = statistics.median(cpus)
        res["warm_wall_all" + tag] = walls
    # Memory on its own round: tracemalloc slows Python-side allocation down.
    tracemalloc.start()
    policy.optimize(jobs, nodes, base, template)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    res["population_mb"] = policy.last_stats["population_bytes"] / 1e6
    res["traced_peak_mb"] = peak / 1e6
    res["dense_genome_mb"] = 2 * policy.pop_size * num_jobs * 2 * num_nodes * 8 / 1e6
    res["first_fit"] = allocation_objective(prob, first_fit(jobs, nodes))
    best, how = None, None
    if milp_limit > 0 and num_jobs <= 256:
        t = time.perf_counter()
        _, opt, status = exact_optimize(jobs, nodes, {}, template, time_limit=milp_limit)
        res["milp"] = {"objective": opt, "status": status, "seconds": time.perf_counter() - t}
        if status == "optimal":
            best, how = opt, "milp"
    if best is None and long_gens > 0:
        longs = []
        for seed in range(2):
            p = PolluxPolicy(seed=100 + seed, generations=long_gens, pop_size=200)
            p.optimize(jobs, nodes, {}, template)
            longs.append(p.last_stats["objective_real"])
        best, how = max(longs + res["cold_objective"]), f"best of GA {long_gens} gens x 200"
    res["best_known"] = best
    res["best_known_from"] = how
    if best:
        res["cold_objective_vs_best"] = statistics.mean(res["cold_objective"]) / best
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", nargs="+", default=["64x16", "256x64", "1000x512"])
    ap.add_argument("--warm-rounds", type=int, default=5)
    ap.add_argument("--long-gens", type=int, default=1000)
    ap.add_argument("--milp-limit", type=float, default=120.0)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    out = []
    for size in args.sizes:
        j, n = map(int, size.split("x"))
        r = run(j, n, args.warm_rounds, args.long_gens, args.milp_limit)
        out.append(r)
        print(
            f"{j:5d} jobs {4 * n:5d} GPUs: cold {r['cold_wall_s'] * 1e3:7.1f} ms "
            f"(cpu {r['cold_cpu_s'] * 1e3:6.1f}), warm {r['warm_wall_s'] * 1e3:7.1f} ms "
            f"(cpu {r['warm_cpu_s'] * 1e3:6.1f}; serial {r['warm_wall_s_serial'] * 1e3:6.1f}); population {r['population_mb']:.1f} MB "
            f"(dense genome {r['dense_genome_mb']:.0f} MB), traced peak {r['traced_peak_mb']:.1f} MB; "
            f"objective {statistics.mean(r['cold_objective']):.3f} vs best {r['best_known'] or float('nan'):.3f} "
            f"({r['best_known_from']}), first fit {r['first_fit']:.3f}",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
