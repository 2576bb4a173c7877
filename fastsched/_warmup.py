"""Warm-up: compile (or load from numba's cache) every CPU kernel a command can use, and calibrate.

Runs a tiny simulation under every policy (Pollux, Sia, Gavel, Tiresias, Optimus: the goodput
model, fitting, the searches and the baselines; for Pollux also the kernels of large rounds,
:func:`fastsched.policy._precompile.compile_round_kernels`) and a tiny cost-model estimate and
plan search.
It then writes a record beside numba's cache (:func:`record_path`): the kernels each command
used, and the seconds per kernel this machine took to compile them, which
:func:`fastsched._firstrun.compile_notice` multiplies by the kernels still to compile.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

from fastsched._cache import ALL_PACKAGES, SIM_PACKAGES, cache_state, written_since

__all__ = ["warmup", "load_record", "record_path", "probe_rate", "POLICIES", "COMMAND_PACKAGES", "PROBE_RATIO"]

#: The simulator's policies whose kernels warm-up always compiles (at least; by default it runs
#: every policy of the registry, :data:`fastsched.sim.policies.POLICY_NAMES`).
POLICIES = ("pollux", "sia", "gavel", "tiresias", "optimus")


def _registry_policies() -> tuple:
    from fastsched.sim.policies import POLICY_NAMES

    return tuple(dict.fromkeys((*POLICIES, *POLICY_NAMES)))


#: Packages whose kernels each command compiles.
COMMAND_PACKAGES = {
    "simulate": SIM_PACKAGES,
    "sweep": SIM_PACKAGES,
    "cost": ("fastsched.costmodel",),
    "plan": ("fastsched.costmodel",),
    "warmup": ALL_PACKAGES,
}
#: Cold compile time of a command over (kernels the record-less notice counts x the probe's time),
#: measured on the development machine: 13.6 and 5.3 in two runs under heavy load (the probe is
#: noisy there), so 9 (benchmarks/results/cli.md). Used only before the first warm-up.
PROBE_RATIO = 9.0


def probe_rate() -> float:
    """Seconds per kernel on this machine, estimated from compiling a small fixed function.

    Compiles (never caches) a loop over an array with a branch twice and times the second
    (the first also starts numba's compiler up): the machine's compile speed, scaled by
    :data:`PROBE_RATIO`. Costs about a second.

    Examples
    --------
    >>> probe_rate() > 0
    True
    """
    import numba
    import numpy as np

    def probe(x, k):  # a fresh function each call: compiled, never taken from a cache
        total = 0.0
        for i in range(x.shape[0]):
            v = x[i] * k
            if v > 1.0:
                total += np.sqrt(v)
            else:
                total -= v * v
        return total

    numba.njit(cache=False)(probe)(np.ones(4), 2.0)  # the first compile of a process also starts numba up
    t0 = time.perf_counter()
    numba.njit(cache=False)(probe)(np.ones(4), 2.0)  # a new dispatcher: compiled again
    return (time.perf_counter() - t0) * PROBE_RATIO


# Fewer newly compiled kernels than this: too little to time a rate from (the record keeps its old one).
_MIN_TIMED = 5
_RECORD = "fastsched-warmup.json"


def record_path() -> Path | None:
    """Where the warm-up record lives: beside numba's cache of the goodput kernels (``None``: no cache).

    Examples
    --------
    >>> p = record_path()
    >>> p is None or p.name == "fastsched-warmup.json"
    True
    """
    dirs = cache_state(("fastsched.goodput",)).cache_dirs
    return Path(dirs[0]) / _RECORD if dirs else None


def load_record() -> dict | None:
    """Return the last warm-up's record on this machine, or ``None`` (none, unreadable, another numba).

    Returns
    -------
    dict or None
        ``rate_s`` (seconds per kernel compiled), ``kernels`` (command -> kernel names),
        ``compiled``, ``seconds``, ``numba``.

    Examples
    --------
    >>> rec = load_record()
    >>> rec is None or rec["rate_s"] > 0
    True
    """
    import numba

    path = record_path()
    try:
        rec = json.loads(path.read_text(encoding="utf-8")) if path is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or rec.get("numba") != numba.__version__:
        return None
    rate = rec.get("rate_s")
    if not isinstance(rate, (int, float)) or not rate > 0 or not isinstance(rec.get("kernels"), dict):
        return None
    return rec


def _write_record(rec) -> None:
    path = record_path()
    if path is None:
        return
    from fastsched._atomic import atomic_path

    # A read-only cache: the estimates fall back to the probe. atomic_path's temporary file has a
    # unique name and is removed on failure (a second OSError from removing it cannot escape).
    with contextlib.suppress(OSError, ValueError), atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _tiny_simulations(policies, out, stream):
    from fastsched.sim.api import simulate
    from fastsched.sim.builtin import builtin_workload

    jobs = [j for j in builtin_workload() if j.num_replicas <= 8][:2]
    for policy in policies:
        t0 = time.perf_counter()
        opts = {"pop_size": 8, "generations": 2} if policy == "pollux" else None
        simulate(jobs, policy=policy, nodes=2, gpus=4, seed=0, policy_options=opts, max_time=900)
        if policy == "pollux":
            # A tiny simulation runs small rounds only: the large rounds' kernels (threaded,
            # parallel, the relaxation's seed) would otherwise compile in the middle of a run.
            from fastsched.policy._precompile import compile_round_kernels

            compile_round_kernels()
        out[f"simulate:{policy}"] = time.perf_counter() - t0
        if stream is not None:
            stream.write(f"  simulate ({policy}): {out[f'simulate:{policy}']:.1f} s\n")


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
    if costmodel:
        _tiny_costmodel(out, stream)
    seconds = time.perf_counter() - t0
    if not (record and costmodel and set(policies) >= set(every)):
        return out
    import numba

    sim_state = cache_state(SIM_PACKAGES)
    cost_state = cache_state(("fastsched.costmodel",))
    compiled = written_since(ALL_PACKAGES, wall0)
    old = load_record()
    if compiled >= _MIN_TIMED:
        rate, source = seconds / compiled, "warm-up"
    elif old is not None:
        rate, source = old["rate_s"], old.get("rate_from", "warm-up")
    else:  # everything was cached already: nothing timed; the probe's rate until a warm-up compiles
        rate, source = probe_rate(), "probe"
    _write_record(
        {
            "numba": numba.__version__,
            "rate_s": rate,
            "rate_from": source,
            "compiled": compiled,
            "seconds": seconds,
            "kernels": {
                "simulate": sorted(sim_state.present),
                "sweep": sorted(sim_state.present),
                "cost": sorted(cost_state.present),
                "plan": sorted(cost_state.present),
                "warmup": sorted(sim_state.present + cost_state.present),
            },
        }
    )
    return out
