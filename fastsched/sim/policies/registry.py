"""The registry of simulator policies: their names and :func:`make_policy`."""

from __future__ import annotations

from fastsched.sim.policies.base import SimPolicy
from fastsched.sim.policies.baselines import OptimusPolicy, TiresiasPolicy
from fastsched.sim.policies.gavel import GavelPolicy
from fastsched.sim.policies.pollux import PolluxSimPolicy
from fastsched.sim.policies.sia import SiaPolicy

__all__ = ["POLICY_NAMES", "POLICY_OPTIONS", "make_policy"]

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
        ignored by the others (:func:`fastsched.sim.simulate` rejects them up front).

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
