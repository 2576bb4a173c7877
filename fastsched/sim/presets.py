"""Named simulator configurations (``simulate(preset=...)``, ``fastsched simulate --preset``).

Plain data and the functions that read it, importing nothing, so the command line can offer
the names without loading the simulator. Every reader of a preset (``simulate``, the command
line's early checks, a sweep's spec) goes through :func:`preset_config`, :func:`preset_policy`,
:func:`preset_policy_options` and :func:`preset_shape`: one resolution of what a preset gives.

Examples
--------
>>> from fastsched.sim.presets import PRESETS
>>> sorted(PRESETS)
['default', 'osdi21', 'osdi21-exact', 'sia', 'sia-artifact', 'sia-homogeneous']
>>> PRESETS["osdi21"]["nodes"], PRESETS["osdi21"]["gpus"], PRESETS["sia"]["policy"]
(16, 4, 'sia')
"""

from __future__ import annotations

__all__ = ["PRESETS", "preset_config", "preset_policy", "preset_policy_options", "preset_shape"]

#: Named configurations. ``osdi21`` is the published simulator study of the Pollux paper
#: (16 nodes x 4 GPUs, 60 s interval), with the research Pollux objective term for term
#: (SIMULATOR.md 6.5): power mean p = -1 of ``S_j + 1e-3``, speedups re-based at the fair
#: share, each job's own multiplicative restart factor ``max(age - 30 restarts, 0) / (age +
#: 30)`` when its allocation changes, no autoscaling placeholders (the paper's cluster is
#: fixed), interference avoidance, at most 16 nodes per job. ``restart_penalty="osdi21-global"``
#: (an option, not a preset) applies one GPU-weighted mean restart factor to all jobs instead.
#: ``osdi21-exact`` names the same configuration as ``osdi21``. How close the presets come
#: to the paper's figures is measured, not promised here: ``benchmarks/results/sim.md``.
PRESETS = {
    "default": {"nodes": 16, "gpus": 4, "interval": 60, "interference": 0.0, "policy": "pollux", "pollux": {}},
    "osdi21": {
        "nodes": 16,
        "gpus": 4,
        "interval": 60,
        "interference": 0.0,
        "policy": "pollux",
        "pollux": {"variant": "osdi21", "restart_penalty": "osdi21", "power_shift": True, "placeholders": False},
    },
    # The Sia study (SOSP'23): 6 aws (T4) + 3 rtx (2080 Ti) + 2 dgx-ext (A100) nodes, 60 s rounds,
    # Sia with p = -0.5 and lambda_n = 1.1; Pollux as compared there (research objective,
    # heterogeneity-unaware); Gavel with its own 360 s rounds unless an interval is given.
    # job_model "sia": the study's per-application restart delays and goodput slowdowns
    # (fastsched.sim.engine.hetero_job.SIA_RESTART_DELAYS / SIA_SLOWDOWNS).
    "sia": {
        "cluster": "6xaws,3xrtx,2xdgx-ext",
        "interval": 60,
        "interference": 0.0,
        "policy": "sia",
        "sia": {"p": -0.5, "lambda_n": 1.1},
        "pollux": {"variant": "osdi21", "placeholders": False},
        "job_model": "sia",
        # The baselines as Gavel's artifact runs them: its sequential worker assignment, the
        # allocation re-solved when jobs arrive or finish; FIFO without head-of-line blocking.
        "fifo": {"strict": False},
        "las": {"placement": "sequential", "reoptimize": "on-change"},
        "themis": {"placement": "sequential", "reoptimize": "on-change", "rtol": 1e-3},
        "min-total-duration": {"placement": "sequential", "reoptimize": "on-change"},
        "max-sum-throughput": {"placement": "sequential"},
        "gandiva": {"quantum": 600},
        # Shockwave as the study ports it: a fair share of 1/N of the time whatever the GPU count.
        "shockwave": {"window": 5, "k": 1e-3, "lam": 12.0, "rhomax": 1.0, "fair_share": "jobs", "node_limit": 50},
    },
}
# Presets are read, never mutated, so a derived one may share its base's nested settings.
PRESETS["osdi21-exact"] = {**PRESETS["osdi21"]}  # another name for the same configuration
# The same study's settings on 16 T4 nodes.
PRESETS["sia-homogeneous"] = {**PRESETS["sia"], "cluster": "16xaws"}
# The study with Sia's estimate as the study's code makes it (for side-by-side checks against
# that code): an adaptive job's goodput estimate may choose batch sizes only up to its workload
# row's (training itself goes up to the application's), and the bootstrap ratio between types
# divides the largest one-GPU batch by the slowest one-GPU step. ``sia`` keeps the method as
# published, consistent between estimate and training; benchmarks/results/hetero.md compares both.
PRESETS["sia-artifact"] = {
    **PRESETS["sia"],
    "sia": {**PRESETS["sia"]["sia"], "estimate_batch": "requested", "bootstrap_rate": "independent-maxima"},
}


def preset_config(preset) -> dict:
    """Return the configuration of the preset named ``preset`` (read only).

    Raises
    ------
    ValueError
        For an unknown name (the message names ``preset`` and lists the names).

    Examples
    --------
    >>> preset_config("sia")["interval"]
    60
    >>> preset_config("nope")
    Traceback (most recent call last):
    ...
    ValueError: preset must be one of ['default', 'osdi21', 'osdi21-exact', 'sia', 'sia-artifact', 'sia-homogeneous'], got 'nope'
    """
    if not isinstance(preset, str) or preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    return PRESETS[preset]


def preset_policy(preset, policy=None):
    """Return ``policy``, or the preset's policy name when it is ``None``.

    Examples
    --------
    >>> preset_policy("sia"), preset_policy("sia", "fifo")
    ('sia', 'fifo')
    """
    return preset_config(preset)["policy"] if policy is None else policy


def preset_policy_options(preset, policy_name) -> dict:
    """Return a copy of the options the preset gives the built-in policy ``policy_name`` (``{}``: none).

    Examples
    --------
    >>> preset_policy_options("sia", "gandiva")
    {'quantum': 600}
    >>> preset_policy_options("default", "fifo")
    {}
    """
    return dict(preset_config(preset).get(policy_name, {}))


def preset_shape(preset, *, cluster=None, nodes=None, gpus=None) -> tuple:
    """Return the ``(cluster, nodes, gpus)`` a run gets: what is given, the rest from the preset.

    A run with neither ``cluster`` nor ``nodes``/``gpus`` takes the preset's typed cluster when
    it has one (``nodes`` and ``gpus`` then stay ``None``: the cluster gives them); otherwise
    ``nodes`` and ``gpus`` default to the preset's (16 x 4 when it names none). Checks nothing.

    Examples
    --------
    >>> preset_shape("sia")
    ('6xaws,3xrtx,2xdgx-ext', None, None)
    >>> preset_shape("sia", nodes=2)
    (None, 2, 4)
    >>> preset_shape("default")
    (None, 16, 4)
    """
    cfg = preset_config(preset)
    if cluster is None and nodes is None and gpus is None:
        cluster = cfg.get("cluster")
    if cluster is not None:
        return cluster, nodes, gpus
    return None, cfg.get("nodes", 16) if nodes is None else nodes, cfg.get("gpus", 4) if gpus is None else gpus
