"""Times one named goodput workload in this interpreter and prints a JSON line.

Runs unchanged under fastsched's interpreter and under AdaptDL's reference interpreter:
``--api fastsched`` or ``--api adaptdl`` picks the import. Inputs come from
``numpy.random.RandomState`` (a stream that is stable across numpy versions), so both sides
see identical problems. Standalone on purpose: it must not import anything from this repo
when run by the reference interpreter.
"""

import argparse
import json
import sys
import time

import numpy as np

PERF = (0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GRAD = (0.00136, 0.000502)


def load_api(name):
    if name == "fastsched":
        import fastsched as api

        return (
            api.GoodputFunction,
            api.PerfParams,
            api.GradParams,
            api.fit_perf_params,
            api.SpeedupFunction,
        )
    from adaptdl.goodput import GoodputFunction, GradParams, PerfParams, fit_perf_params
    from adaptdl_sched.policy.speedup import SpeedupFunction

    return GoodputFunction, PerfParams, GradParams, fit_perf_params, SpeedupFunction


def configs(n, max_replicas, seed):
    rng = np.random.RandomState(seed)
    replicas = rng.randint(1, max_replicas + 1, n)
    nodes = np.minimum(rng.randint(1, 9, n), replicas)
    return nodes, replicas


def make(workload, api):
    GoodputFunction, PerfParams, GradParams, fit_perf_params, SpeedupFunction = api
    fn = GoodputFunction(PerfParams(*PERF), GradParams(*GRAD), 128)
    if workload == "optimize_scalar":
        return lambda: fn.optimize(1, 4, max_batch_size=1280, atomic_bsz_range=(64, 256), accumulation=True)
    if workload == "optimize_1e5":
        nodes, replicas = configs(100_000, 64, 1)
        return lambda: fn.optimize(nodes, replicas, max_batch_size=1280, atomic_bsz_range=(64, 256), accumulation=True)
    if workload == "evaluate_1e6":
        rng = np.random.RandomState(2)
        nodes, replicas = configs(1_000_000, 64, 2)
        atomic = rng.randint(128, 512, nodes.shape[0])
        accum = rng.randint(0, 4, nodes.shape[0])
        return lambda: fn.evaluate(nodes, replicas, atomic, accum)
    if workload == "fit_20":
        rng = np.random.RandomState(3)
        nodes = rng.randint(1, 5, 20)
        replicas = nodes * rng.randint(1, 5, 20)
        atomic = rng.randint(32, 512, 20)
        t_accum = (PERF[0] + PERF[1] * atomic) * rng.uniform(0.95, 1.05, 20)
        t_optim = t_accum * (1 + 0.2 * replicas) * rng.uniform(0.95, 1.05, 20)
        return lambda: fit_perf_params(nodes, replicas, atomic, t_accum, t_optim)
    if workload == "speedup_1000":
        nodes, replicas = configs(1000, 64, 4)
        sp = SpeedupFunction(fn, max_batch_size=1280, atomic_bsz_range=(64, 256))
        sp(nodes, replicas)  # warm the memo: the figure is for warm calls
        return lambda: sp(nodes, replicas)
    raise SystemExit(f"unknown workload {workload}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", choices=["fastsched", "adaptdl"], required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--seconds", type=float, default=1.0, help="approximate timing budget")
    args = ap.parse_args()
    call = make(args.workload, load_api(args.api))
    t0 = time.perf_counter()
    call()  # first call: compilation/caching happen here for fastsched
    first = time.perf_counter() - t0
    # Calibrate a batch size so one sample lasts >= ~20 ms, then take samples.
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        dt = time.perf_counter() - t0
        if dt >= 0.02 or reps >= 1 << 20:
            break
        reps *= 4
    samples = []
    deadline = time.perf_counter() + args.seconds
    while len(samples) < 3 or (time.perf_counter() < deadline and len(samples) < 50):
        c0 = time.process_time()
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        samples.append(((time.perf_counter() - t0) / reps, (time.process_time() - c0) / reps))
    wall = sorted(s[0] for s in samples)
    cpu = sorted(s[1] for s in samples)
    print(
        json.dumps(
            {
                "first_call_s": first,
                "median_s": wall[len(wall) // 2],
                "median_cpu_s": cpu[len(cpu) // 2],
                "samples": len(samples),
                "reps": reps,
            }
        )
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
