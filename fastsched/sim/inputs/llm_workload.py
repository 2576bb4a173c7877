"""Seeded workloads of decoder-only transformer jobs, for scheduler studies of the LLM era.

:func:`llm_workload` draws jobs from stated distributions; every default is an argument:

* **Arrivals**: a Poisson process of ``jobs_per_hour`` (default 20). The Sia artifact's scale
  study spans 10-50 jobs per hour on a 64-GPU cluster (its ``workloads/scale/rate_10`` ...
  ``rate_50``); the Poisson process is our modelling choice.
* **Model sizes**: the catalogue's decoders (:mod:`fastsched.catalog.models`: GPT-3 shapes)
  with weights falling with size, by default 0.30, 0.20, 0.15, 0.15, 0.10, 0.07, 0.03 for 125M,
  350M, 760M, 1.3B, 2.7B, 6.7B and 13B. These weights are our assumption: no public trace gives
  the mix by model size; they follow the qualitative finding of Hu et al. (NSDI 2024,
  *Characterization of Large Language Model Development in the Datacenter*) that most jobs of
  an LLM cluster are small while a few large ones take most of its GPU time.
* **Kind**: pre-training with probability ``pretrain_fraction`` (default 0.3; our assumption),
  category ``scale-gpus`` (fixed batch: scale GPUs, not batch, like Sia's category of that
  name); otherwise fine-tuning, category ``adaptive``.
* **GPU request**: the smallest power of two whose memory holds the model's training state
  (16 bytes per parameter for mixed-precision Adam, Rajbhandari et al. 2020, ZeRO) with a
  quarter of headroom, times 1, 2 or 4 (uniform; our assumption), at most ``max_gpus``.
* **Batch**: the GPT-3 paper's batch for the size (Brown et al. 2020, Table 2.1;
  :data:`fastsched.catalog.models.DECODER_BATCH`).
* **Token budget**: the application's: one profile per model (``fastsched profile``), by default
  20 tokens per parameter (Hoffmann et al. 2022); shorter runs come from a profile written with
  fewer tokens.
"""

from __future__ import annotations

import math

import numpy as np

from fastsched.catalog.models import DECODER_BATCH, model_spec
from fastsched.sim.inputs.workload import WorkloadJob

__all__ = ["DEFAULT_MIX", "llm_workload"]

#: Default model-size mix (weights; see the module docstring for what they rest on).
DEFAULT_MIX = {
    "gpt-125m": 0.30,
    "gpt-350m": 0.20,
    "gpt-760m": 0.15,
    "gpt-1.3b": 0.15,
    "gpt-2.7b": 0.10,
    "gpt-6.7b": 0.07,
    "gpt-13b": 0.03,
}


def llm_workload(num_jobs=None, *, hours=8.0, jobs_per_hour=20.0, mix=None, pretrain_fraction=0.3,
                 gpu_memory_gib=80.0, max_gpus=64, seed=0) -> list[WorkloadJob]:  # fmt: skip
    """Draw a workload of transformer jobs (see the module docstring for the distributions).

    Parameters
    ----------
    num_jobs : int, optional
        Jobs to draw (default: as many as arrive within ``hours``).
    hours, jobs_per_hour : float
        Window and rate of the Poisson arrivals.
    mix : dict, optional
        ``{catalogued decoder: weight}`` (default :data:`DEFAULT_MIX`).
    pretrain_fraction : float
        Share of pre-training (fixed-batch) jobs.
    gpu_memory_gib : float
        Memory per GPU used to size requests.
    max_gpus : int
        Largest request.
    seed : int
        Seed of the draw: the same arguments give the same workload.

    Returns
    -------
    list of WorkloadJob
        Sorted by arrival; ``application`` is the model name, ``category`` its kind.

    Examples
    --------
    >>> jobs = llm_workload(5, seed=1)
    >>> len(jobs), jobs == llm_workload(5, seed=1), all(j.num_replicas & (j.num_replicas - 1) == 0 for j in jobs)
    (5, True, True)
    >>> sorted({j.category for j in llm_workload(40)})
    ['adaptive', 'scale-gpus']
    """
    mix = dict(DEFAULT_MIX if mix is None else mix)
    if not mix or any(not (isinstance(w, (int, float)) and w >= 0) for w in mix.values()) or sum(mix.values()) <= 0:
        raise ValueError(f"mix must map model names to non-negative weights with a positive sum, got {mix!r}")
    for name in mix:
        if name not in DECODER_BATCH:
            raise ValueError(f"mix: {name!r} is not a catalogued decoder; known: {sorted(DECODER_BATCH)}")
    for what, v in (("hours", hours), ("jobs_per_hour", jobs_per_hour), ("gpu_memory_gib", gpu_memory_gib)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < math.inf):
            raise ValueError(f"{what} must be a positive finite number, got {v!r}")
    if not (isinstance(pretrain_fraction, (int, float)) and 0.0 <= pretrain_fraction <= 1.0):
        raise ValueError(f"pretrain_fraction must be in [0, 1], got {pretrain_fraction!r}")
    for what, v in (("max_gpus", max_gpus), ("seed", seed)) + (
        (("num_jobs", num_jobs),) if num_jobs is not None else ()
    ):
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if what == "seed" else 1):
            raise ValueError(f"{what} must be an integer >= {0 if what == 'seed' else 1}, got {v!r}")
    rng = np.random.default_rng(seed)
    names = sorted(mix)
    weights = np.array([mix[n] for n in names], dtype=np.float64)
    weights /= weights.sum()
    jobs = []
    t = 0.0
    while num_jobs is None or len(jobs) < num_jobs:
        t += rng.exponential(3600.0 / jobs_per_hour)
        if num_jobs is None and t > hours * 3600.0:
            break
        name = names[int(rng.choice(len(names), p=weights))]
        m = model_spec(name)
        need = 16.0 * m.parameters * 1.25 / (gpu_memory_gib * 2.0**30)
        gpus = 1 << max(0, math.ceil(math.log2(max(need, 1.0))))
        gpus = min(gpus * int(rng.choice([1, 2, 4])), max_gpus)
        pretrain = bool(rng.random() < pretrain_fraction)
        jobs.append(
            WorkloadJob(
                name=f"{name}-{len(jobs)}",
                time=int(math.ceil(t)),
                application=name,
                num_replicas=gpus,
                batch_size=DECODER_BATCH[name],
                category="scale-gpus" if pretrain else "adaptive",
            )
        )
    return jobs
