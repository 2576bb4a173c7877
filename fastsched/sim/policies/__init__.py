"""Simulator scheduling policies, one module per policy, and the registry of their names.

:func:`make_policy` builds a policy from its name (:data:`POLICY_NAMES`); the base class is
:class:`~fastsched.sim.policies.base.SimPolicy`.
"""

from __future__ import annotations

from fastsched.sim.policies.base import SimPolicy
from fastsched.sim.policies.baselines import OptimusPolicy, TiresiasPolicy
from fastsched.sim.policies.gavel import GavelPolicy
from fastsched.sim.policies.pollux import LinearSpeedup, PolluxSimPolicy, RebasedSpeedup
from fastsched.sim.policies.sia import SiaPolicy

__all__ = [
    "SimPolicy",
    "POLICY_NAMES",
    "make_policy",
    "PolluxSimPolicy",
    "RebasedSpeedup",
    "LinearSpeedup",
    "TiresiasPolicy",
    "OptimusPolicy",
    "SiaPolicy",
    "GavelPolicy",
    "POLICY_OPTIONS",
]

_REGISTRY = {
    "pollux": PolluxSimPolicy,
    "tiresias": TiresiasPolicy,
    "optimus": OptimusPolicy,
    "sia": SiaPolicy,
    "gavel": GavelPolicy,
}
POLICY_NAMES = tuple(_REGISTRY)
#: Policies whose constructor takes options (``policy_options`` / the presets' option blocks).
POLICY_OPTIONS = ("pollux", "sia", "gavel")


def make_policy(name, **options) -> SimPolicy:
    """Build a simulator policy by name.

    Parameters
    ----------
    name : str or SimPolicy
        One of :data:`POLICY_NAMES`, or a ready :class:`SimPolicy` (returned as is).
    **options
        Passed to the constructor of the policies in :data:`POLICY_OPTIONS` (Pollux: ``p``,
        ``restart_penalty``, ``seed``, ...; Sia: ``p``, ``lambda_n``, ...; Gavel: ``placement``);
        ignored by the others.

    Raises
    ------
    ValueError
        For an unknown name.

    Examples
    --------
    >>> make_policy("tiresias").name
    'tiresias'
    >>> make_policy("fifo")
    Traceback (most recent call last):
    ...
    ValueError: policy must be one of ['pollux', 'tiresias', 'optimus', 'sia', 'gavel'], got 'fifo'
    """
    if isinstance(name, SimPolicy):
        return name
    cls = _REGISTRY.get(name)
    if cls is None:
        raise ValueError(f"policy must be one of {list(POLICY_NAMES)}, got {name!r}")
    if name in POLICY_OPTIONS:
        return cls(**options)
    return cls()
