"""One resolved description of a study: what :func:`~fastsched.sim.simulate` runs, checked once.

:func:`resolve_study` turns ``simulate``'s keyword arguments (the command line's flags and a
sweep's runs arrive as the same arguments) into a :class:`Study`: the preset read once
(:mod:`fastsched.sim.presets`), the policy built with its options, the cluster parsed and
scaled, every size checked against the simulator's limits. The pipeline of
:func:`~fastsched.sim.simulate` (inputs -> truth -> job state -> loop -> results) reads only
the study.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from fastsched import _validate as V
from fastsched.sim.inputs import preflight
from fastsched.sim.inputs.cluster_spec import ClusterSpec, parse_cluster
from fastsched.sim.policies import POLICY_NAMES, POLICY_OPTIONS, SimPolicy, make_policy
from fastsched.sim.presets import preset_config, preset_policy, preset_policy_options, preset_shape

__all__ = ["Study", "resolve_study"]


class Study(NamedTuple):
    """A study resolved from ``simulate``'s arguments (see :func:`~fastsched.sim.simulate` for each).

    Examples
    --------
    >>> study = resolve_study(policy="tiresias", nodes=2, gpus=4)
    >>> study.policy.name, study.nodes, study.gpus, study.interval, study.spec is None
    ('tiresias', 2, 4, 60, True)
    """

    workload: Any  #: as given (a path, rows, or None: the builtin workload)
    traces: Any
    applications: dict | None
    policy: SimPolicy  #: built, with the preset's and the caller's options
    preset: str
    job_model: str | None  #: the preset's job model ("sia": the Sia study's restart delays and slowdowns)
    seed: int
    cluster: Any  #: the cluster as given or as the preset names it (None: nodes x gpus)
    spec: ClusterSpec | None  #: the parsed (and scaled) cluster of named GPU types
    nodes: int
    gpus: int
    interval: int
    interference: float
    max_nodes: int | None
    max_time: int
    scale: int | None
    cap_replicas: bool
    output: Any


def _build_policy(preset, policy, seed, policy_options) -> tuple:
    """Return ``(policy, its own interval or None, seed)``: the policy built with its options."""
    cfg = preset_config(preset)
    policy = preset_policy(preset, policy)
    if not isinstance(policy, SimPolicy) and policy not in POLICY_NAMES:
        policy = make_policy(policy)  # "module:Class" or a plugin's name; a ValueError naming it otherwise
    seed = 0 if seed is None else V.check_int_scalar("seed", seed, low=0)
    pol_name = policy.name if isinstance(policy, SimPolicy) else policy
    # Only a built-in policy given by name is built here, so only it takes the preset's options
    # (keyed by its name) and policy_options; a policy object is already built, and its name
    # may be any string, a preset key such as "interval" included.
    by_name = not isinstance(policy, SimPolicy)
    if policy_options and not (by_name and pol_name in POLICY_OPTIONS):
        raise ValueError(
            f"policy_options apply to the built-in policies {list(POLICY_OPTIONS)} given by name only;"
            f" {pol_name} takes none, got {policy_options!r}"
        )
    options = preset_policy_options(preset, pol_name) if by_name else {}
    options.update(policy_options or {})
    if by_name and pol_name == "pollux":
        options["seed"] = seed
    pol = make_policy(policy, **options) if policy in POLICY_OPTIONS else make_policy(policy)
    # A policy's own interval (e.g. Gavel's 360 s rounds) unless the preset is that policy's.
    return pol, None if cfg.get("policy") == pol.name else pol.default_interval, seed


def _shape(preset, cluster, nodes, gpus, max_nodes, scale) -> tuple:
    """Return ``(cluster, spec, nodes, gpus, scale)``: the cluster given or the preset's, scaled, checked."""
    if cluster is not None and (nodes is not None or gpus is not None):
        raise ValueError("give either cluster or nodes/gpus, not both")
    cluster, nodes, gpus = preset_shape(preset, cluster=cluster, nodes=nodes, gpus=gpus)
    spec = parse_cluster(cluster) if cluster is not None else None
    if scale is not None:
        # The cluster first: K copies of the workload are made only for a cluster within the limits.
        from fastsched.sim.inputs.scale import scale_cluster

        scale = V.check_int_scalar("scale", scale, low=1)
        if spec is not None:
            spec = scale_cluster(spec, scale)
        else:
            nodes = V.check_int_scalar("nodes", nodes, low=1) * scale
    if spec is not None:
        nodes, gpus = spec.num_nodes, max(spec.node_gpus)
        if max_nodes is not None:
            raise ValueError("max_nodes (autoscaling) needs a cluster of one unnamed GPU type (nodes/gpus)")
    return cluster, spec, V.check_int_scalar("nodes", nodes, low=1), V.check_int_scalar("gpus", gpus, low=1), scale


def resolve_study(
    workload=None,
    *,
    traces=None,
    applications=None,
    policy=None,
    nodes=None,
    gpus=None,
    interval=None,
    interference=None,
    max_nodes=None,
    seed=None,
    preset="default",
    policy_options=None,
    output=None,
    max_time=60 * 86400,
    cluster=None,
    cap_replicas=False,
    scale=None,
) -> Study:
    """Resolve ``simulate``'s arguments (all but ``progress``) into a checked :class:`Study`.

    Reads nothing but the cluster file a ``cluster`` path names; the workload and the traces
    are read by the pipeline, after these checks.

    Raises
    ------
    ValueError, TypeError
        An unknown preset or policy, options a policy does not take, sizes out of range or
        over the simulator's limits (the message names the argument).

    Examples
    --------
    >>> study = resolve_study(preset="sia")
    >>> study.policy.name, str(study.spec), study.nodes, study.job_model
    ('sia', '6xaws,3xrtx,2xdgx-ext', 11, 'sia')
    >>> resolve_study(nodes=0)
    Traceback (most recent call last):
    ...
    ValueError: nodes must be >= 1, got 0
    """
    cfg = preset_config(preset)
    pol, policy_interval, seed = _build_policy(preset, policy, seed, policy_options)
    cluster, spec, nodes, gpus, scale = _shape(preset, cluster, nodes, gpus, max_nodes, scale)
    if interval is None:
        interval = cfg["interval"] if policy_interval is None else policy_interval
    interval = V.check_int_scalar("interval", interval, low=1)
    interference = V.check_finite_scalar(
        "interference", cfg["interference"] if interference is None else interference, low=0.0, high=1.0
    )
    if interference >= 1.0:
        raise ValueError("interference must be < 1")
    if max_nodes is not None:
        max_nodes = V.check_int_scalar("max_nodes", max_nodes, low=nodes)
    max_time = V.check_int_scalar("max_time", max_time, low=1)
    preflight.check_cluster(nodes, gpus, max_nodes, interval, max_time)
    return Study(
        workload, traces, applications, pol, preset, cfg.get("job_model"), seed, cluster, spec, nodes, gpus,
        interval, interference, max_nodes, max_time, scale, cap_replicas, output,
    )  # fmt: skip
