"""The registry of simulator policies: names, plugins and :func:`make_policy`.

A policy is named three ways: a built-in name (:data:`POLICY_NAMES`), ``"package.module:Class"``
(any importable :class:`~fastsched.sim.policies.base.SimPolicy` subclass), or the name an
installed package registers in the entry-point group :data:`ENTRY_POINT_GROUP`::

    # the plugin package's pyproject.toml
    [project.entry-points."fastsched.policies"]
    my-fifo = "my_package.policies:MyFifo"

A built-in name wins over a plugin of the same name.
"""

from __future__ import annotations

import importlib

from fastsched.sim.policies.base import SimPolicy
from fastsched.sim.policies.names import ENTRY_POINT_GROUP, POLICY_NAMES, POLICY_OPTIONS

__all__ = ["POLICY_NAMES", "POLICY_OPTIONS", "ENTRY_POINT_GROUP", "make_policy", "load_policy", "plugin_names"]

# Built-in name -> "module:Class", imported when the name is first asked for: a run loads its
# own policy's module (and whatever that needs), not the other thirteen (Gavel's and Sia's
# bring the whole goodput and assignment stacks).
_REGISTRY = {
    "pollux": "fastsched.sim.policies.pollux:PolluxSimPolicy",
    "tiresias": "fastsched.sim.policies.baselines:TiresiasPolicy",
    "optimus": "fastsched.sim.policies.baselines:OptimusPolicy",
    "sia": "fastsched.sim.policies.sia:SiaPolicy",
    "gavel": "fastsched.sim.policies.gavel:GavelPolicy",
    "fifo": "fastsched.sim.policies.queue:FifoPolicy",
    "srtf": "fastsched.sim.policies.queue:SrtfPolicy",
    "las": "fastsched.sim.policies.gavel_objectives:LasPolicy",
    "themis": "fastsched.sim.policies.themis:ThemisPolicy",
    "min-total-duration": "fastsched.sim.policies.gavel_objectives:MinTotalDurationPolicy",
    "max-sum-throughput": "fastsched.sim.policies.gavel_objectives:MaxSumThroughputPolicy",
    "gandiva": "fastsched.sim.policies.gandiva:GandivaPolicy",
    "allox": "fastsched.sim.policies.queue:AlloxPolicy",
    "shockwave": "fastsched.sim.policies.shockwave:ShockwavePolicy",
}


def _builtin(name) -> type:
    module_name, _, attr = _REGISTRY[name].partition(":")
    return getattr(importlib.import_module(module_name), attr)


def _entry_points() -> dict:
    # Imported here: importlib.metadata costs ~20 ms to import, and a built-in policy's run
    # never looks at entry points.
    import importlib.metadata

    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def plugin_names() -> tuple:
    """Names registered by installed packages in :data:`ENTRY_POINT_GROUP` (built-in names excluded).

    Examples
    --------
    >>> isinstance(plugin_names(), tuple)
    True
    """
    return tuple(sorted(n for n in _entry_points() if n not in _REGISTRY))


def _check_class(obj, what):
    if not (isinstance(obj, type) and issubclass(obj, SimPolicy)):
        raise ValueError(f"policy {what} is not a SimPolicy subclass (got {obj!r})")
    return obj


def load_policy(name) -> type:
    """Return the :class:`SimPolicy` subclass a policy name stands for (built-in, ``module:Class`` or plugin).

    Parameters
    ----------
    name : str
        A built-in name, ``"package.module:Class"`` (``Class`` may be dotted:
        ``module:Outer.Inner``), or an entry-point name of :data:`ENTRY_POINT_GROUP`.

    Raises
    ------
    ValueError
        Naming the policy: unknown name, a module that cannot be imported, a missing class, or
        an object that is not a :class:`SimPolicy` subclass.

    Examples
    --------
    >>> load_policy("gavel").__name__
    'GavelPolicy'
    >>> load_policy("fastsched.sim.policies.base:SimPolicy").__name__
    'SimPolicy'
    >>> load_policy("fastsched.sim.policies.base:free_gpus")
    Traceback (most recent call last):
    ...
    ValueError: policy 'fastsched.sim.policies.base:free_gpus' is not a SimPolicy subclass (got <function free_gpus ...>)
    >>> load_policy("no_such_module:Fifo")
    Traceback (most recent call last):
    ...
    ValueError: policy 'no_such_module:Fifo': cannot import module 'no_such_module' (No module named 'no_such_module')
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"policy must be a non-empty string or a SimPolicy, got {name!r}")
    if name in _REGISTRY:
        return _builtin(name)
    if ":" in name:
        module_name, _, attr = name.partition(":")
        if not module_name or not attr:
            raise ValueError(f"policy {name!r}: expected 'package.module:Class'")
        try:  # a plugin module may fail in any way (a syntax error, its own code): say which policy
            obj = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001
            raise ValueError(f"policy {name!r}: cannot import module {module_name!r} ({exc})") from None
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except Exception:  # noqa: BLE001 - AttributeError, or whatever a class's __getattr__ raises
                raise ValueError(f"policy {name!r}: module {module_name!r} has no attribute {attr!r}") from None
        return _check_class(obj, repr(name))
    ep = _entry_points().get(name)
    if ep is None:
        import difflib

        known = list(POLICY_NAMES) + list(plugin_names())
        near = difflib.get_close_matches(str(name), known, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ValueError(f"policy must be one of {known} or 'package.module:Class', got {name!r}{hint}")
    try:
        obj = ep.load()
    except Exception as exc:  # a broken plugin: say which entry point
        raise ValueError(
            f"policy {name!r}: entry point {ep.value!r} of {ENTRY_POINT_GROUP!r} failed to load: {exc}"
        ) from exc
    return _check_class(obj, f"{name!r} (entry point {ep.value!r})")


def make_policy(name, **options) -> SimPolicy:
    """Build a simulator policy by name.

    Parameters
    ----------
    name : str or SimPolicy
        One of :data:`POLICY_NAMES`, ``"package.module:Class"``, an installed plugin's name
        (see :func:`load_policy`), or a ready :class:`SimPolicy` (returned as is).
    **options
        Passed to the constructor of the policies in :data:`POLICY_OPTIONS` (Pollux: ``p``,
        ``restart_penalty``, ``seed``, ...; Sia: ``p``, ``lambda_n``, ...; Gavel: ``placement``)
        and of plugins when given; ignored by the other built-ins (:func:`fastsched.sim.simulate`
        rejects them up front).

    Raises
    ------
    ValueError
        For an unknown name (see :func:`load_policy`).

    Examples
    --------
    >>> make_policy("tiresias").name
    'tiresias'
    >>> make_policy("nosuch")
    Traceback (most recent call last):
    ...
    ValueError: policy must be one of ['pollux', 'tiresias', 'optimus', 'sia', 'gavel', ...] or 'package.module:Class', got 'nosuch'
    """
    if isinstance(name, SimPolicy):
        return name
    cls = load_policy(name)
    if name in _REGISTRY:
        return cls(**options) if name in POLICY_OPTIONS else cls()
    try:  # a plugin's constructor is the user's code: its failure names the policy
        policy = cls(**options)
    except Exception as exc:  # noqa: BLE001
        raise ValueError(
            f"policy {name!r}: {cls.__name__}(**{options!r}) failed: {type(exc).__name__}: {exc}"
        ) from None
    if cls.optimize is SimPolicy.optimize:  # refused now, not at the first round
        raise ValueError(
            f"policy {name!r}: class {cls.__qualname__} does not define optimize(now, jobs, nodes, allocations)"
        )
    return policy
