"""Simulator scheduling policies, one module per policy, and the registry of their names.

:func:`make_policy` builds a policy from its name (:data:`POLICY_NAMES`); the base class is
:class:`~fastsched.sim.policies.base.SimPolicy`.
"""

from __future__ import annotations

from fastsched.sim.policies.base import SimPolicy
from fastsched.sim.policies.baselines import OptimusPolicy, TiresiasPolicy
from fastsched.sim.policies.pollux import LinearSpeedup, PolluxSimPolicy, RebasedSpeedup

__all__ = [
    "SimPolicy",
    "POLICY_NAMES",
    "make_policy",
    "PolluxSimPolicy",
    "RebasedSpeedup",
    "LinearSpeedup",
    "TiresiasPolicy",
    "OptimusPolicy",
]

_REGISTRY = {
    "pollux": PolluxSimPolicy,
    "tiresias": TiresiasPolicy,
    "optimus": OptimusPolicy,
}
POLICY_NAMES = tuple(_REGISTRY)


def make_policy(name, **options) -> SimPolicy:
    """Build a simulator policy by name.

    Parameters
    ----------
    name : str or SimPolicy
        One of :data:`POLICY_NAMES`, or a ready :class:`SimPolicy` (returned as is).
    **options
        Passed to the policy's constructor (Pollux only: ``p``, ``restart_penalty``,
        ``interference_avoidance``, ``seed``, ``fair_share``, ...; ignored by the baselines).

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
    ValueError: policy must be one of ['pollux', 'tiresias', 'optimus'], got 'fifo'
    """
    if isinstance(name, SimPolicy):
        return name
    cls = _REGISTRY.get(name)
    if cls is None:
        raise ValueError(f"policy must be one of {list(POLICY_NAMES)}, got {name!r}")
    if cls is PolluxSimPolicy:
        return cls(**options)
    return cls()
