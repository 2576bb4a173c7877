"""Warm-up: compile (or load from numba's cache) every CPU kernel a command can use, and calibrate.

Runs a tiny simulation under every policy (Pollux, Sia, Gavel, Tiresias, Optimus: the goodput
model, fitting, the searches and the baselines; for Pollux also the kernels of large rounds,
:func:`fastsched.policy._precompile.compile_round_kernels`) and a tiny cost-model estimate and
plan search,
then writes the record of :mod:`fastsched._warmup` (the command layer: it imports the simulator
and the cost model, which read the record through the base module only).
"""

from __future__ import annotations

import time

from fastsched._cache import ALL_PACKAGES, SIM_PACKAGES, cache_state, written_since
from fastsched._warmup import COMMAND_PACKAGES, MIN_TIMED, load_record, probe_rate, write_record

__all__ = ["warmup", "POLICIES"]

#: The simulator's policies whose kernels warm-up always compiles (at least; by default it runs
#: every policy of the registry, :data:`fastsched.sim.policies.POLICY_NAMES`).
POLICIES = ("pollux", "sia", "gavel", "tiresias", "optimus")


def _registry_policies() -> tuple:
    from fastsched.sim.policies import POLICY_NAMES

    return tuple(dict.fromkeys((*POLICIES, *POLICY_NAMES)))


def _tiny_simulations(policies, out, stream):
    from fastsched.sim.api import simulate
    from fastsched.sim.truth.builtin import builtin_workload

    jobs = [j for j in builtin_workload() if j.num_replicas <= 8][:2]
    for policy in policies:
        t0 = time.perf_counter()
        opts = {"pop_size": 8, "generations": 2} if policy == "pollux" else None
        simulate(jobs, policy=policy, nodes=2, gpus=4, seed=0, policy_options=opts, max_time=900)
        if policy == "pollux":
            # A tiny simulation runs small rounds only: the large rounds' kernels (threaded,
            # parallel, the relaxation's seed) would otherwise compile in the middle of a run.
            from fastsched.policy import PolluxPolicy
            from fastsched.policy._precompile import compile_round_kernels

            compile_round_kernels(PolluxPolicy)
        out[f"simulate:{policy}"] = time.perf_counter() - t0
        if stream is not None:
            stream.write(f"  simulate ({policy}): {out[f'simulate:{policy}']:.1f} s\n")


def _tiny_rigid(out, stream):
    """Compile the rigid-job kernel (a production log replayed event by event): one policy compiles it all."""
    from fastsched.sim.engine.rigid import run_rigid

    t0 = time.perf_counter()
    run_rigid([0, 1], [5, 5], [1, 2], nodes=1, gpus_per_node=2, policy="fifo")
    out["rigid"] = time.perf_counter() - t0
    if stream is not None:
        stream.write(f"  rigid jobs (logs): {out['rigid']:.1f} s\n")


def _tiny_costmodel(out, stream):
    t0 = time.perf_counter()
    try:
        from fastsched.costmodel import estimate_cost, transformer_stack
        from fastsched.costmodel.cluster import Cluster
        from fastsched.costmodel.search import Transformer, search
    except ImportError:
        return
    estimate_cost(transformer_stack(1))
    estimate_cost(transformer_stack(1, ranks=2), pipeline_config=[[0], [1]], microbatch_num=2, schedule="1f1b")
    search(Transformer(layers=2, hidden=64, heads=4, seq=16, vocab=100, global_batch=8), Cluster(gpus=2))
    out["costmodel"] = time.perf_counter() - t0
    if stream is not None:
        stream.write(f"  cost model: {out['costmodel']:.1f} s\n")


def warmup(*, policies=None, costmodel=True, stream=None, record=True) -> dict:
    """Compile (or load from numba's cache) every CPU kernel a command can use.

    Useful when building a container image: later processes start warm.

    Parameters
    ----------
    policies : iterable of str, optional
        Simulator policies to run once (default: every policy of the registry).
    costmodel : bool
        Also compile the cost model's kernels (estimates and the plan search).
    stream : file object, optional
        Where to report each step (default: nowhere).
    record : bool
        Write the record of kernels and compile rate (:func:`load_record`); only a warm-up of
        every policy and the cost model writes one.

    Returns
    -------
    dict
        Seconds per step (``"simulate:pollux"``, ..., ``"costmodel"``).

    Examples
    --------
    >>> times = warmup(policies=("tiresias",), costmodel=False)  # doctest: +SKIP
    >>> sorted(times)  # doctest: +SKIP
    ['simulate:tiresias']
    """
    every = _registry_policies()
    policies = every if policies is None else tuple(policies)
    out: dict = {}
    wall0 = time.time() - 1.0  # file times may be rounded down to the second
    t0 = time.perf_counter()
    _tiny_simulations(policies, out, stream)
    if set(policies) >= set(every):
        _tiny_rigid(out, stream)
    if costmodel:
        _tiny_costmodel(out, stream)
    seconds = time.perf_counter() - t0
    if not (record and costmodel and set(policies) >= set(every)):
        return out
    import numba

    sim_state = cache_state(SIM_PACKAGES)
    log_state = cache_state(COMMAND_PACKAGES["simulate-log"])
    cost_state = cache_state(("fastsched.costmodel",))
    compiled = written_since(ALL_PACKAGES, wall0)
    old = load_record()
    if compiled >= MIN_TIMED:
        rate, source = seconds / compiled, "warm-up"
    elif old is not None:
        rate, source = old["rate_s"], old.get("rate_from", "warm-up")
    else:  # everything was cached already: nothing timed; the probe's rate until a warm-up compiles
        rate, source = probe_rate(), "probe"
    write_record(
        {
            "numba": numba.__version__,
            "rate_s": rate,
            "rate_from": source,
            "compiled": compiled,
            "seconds": seconds,
            "kernels": {
                "simulate": sorted(sim_state.present),
                "simulate-log": sorted(log_state.present),
                "sweep": sorted(sim_state.present),
                "sweep bands": sorted(sim_state.present),
                "cost": sorted(cost_state.present),
                "plan": sorted(cost_state.present),
                "warmup": sorted(sim_state.present + cost_state.present),
            },
        }
    )
    return out
