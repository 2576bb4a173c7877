"""``JobInfo`` and ``NodeInfo``: the validated inputs of the scheduling policy.

Drop-in for ``adaptdl_sched.policy.utils``. AdaptDL checks its invariants with ``assert``
(skipped under ``python -O``); here they raise ``ValueError``/``TypeError`` naming the field,
because the numba kernels downstream do not bounds-check.
"""

from __future__ import annotations

import numbers

from fastsched import _validate as V

__all__ = ["JobInfo", "NodeInfo"]


def _check_resources(owner: str, resources) -> dict:
    """Validate a ``{resource name: non-negative integer amount}`` mapping."""
    if not hasattr(resources, "items"):
        raise TypeError(
            f"{owner}.resources must be a mapping of resource name to amount, got {type(resources).__name__}"
        )
    out = {}
    for key, value in resources.items():
        if not isinstance(key, str):
            raise TypeError(f"{owner}.resources keys must be strings, got {key!r}")
        out[key] = V.check_int_scalar(f"{owner}.resources[{key!r}]", value, low=0)
    return out


class JobInfo:
    """A job to schedule.

    Parameters
    ----------
    resources : dict of str to int
        Resources requested by each replica (e.g. ``{"nvidia.com/gpu": 1, "pods": 1}``),
        non-negative integers.
    speedup_fn : callable
        ``speedup_fn(num_nodes, num_replicas)`` (broadcasting arrays). A fastsched
        :class:`~fastsched.goodput.SpeedupFunction` is read from its table; any other
        callable is tabulated once per scheduling round.
    creation_timestamp : comparable
        Creation time (any comparable value: datetime, float, tuple); ties in the job order
        are broken by it.
    min_replicas : int
        Replicas guaranteed when the job runs (a job gets 0 or at least this many).
    max_replicas : int
        Upper bound on replicas, ``>= 1`` and ``>= min_replicas``.
    preemptible : bool
        Non-preemptible jobs keep their allocation once they have one.
    restart_penalty : float, optional
        Fraction in ``[0, 1]`` of this job's value lost if the round changes its allocation;
        ``None`` (default): the policy's ``restart_penalty``. The Pollux paper's simulator
        uses ``1 - max(age - 30 * restarts, 0) / (age + 30)`` (young, often-restarted jobs
        are left alone).

    Raises
    ------
    ValueError, TypeError
        On negative amounts, ``max_replicas < 1``, ``min_replicas > max_replicas`` or a
        non-callable ``speedup_fn``.

    Examples
    --------
    >>> from fastsched import JobInfo
    >>> from fastsched.policy import linear_speedup
    >>> JobInfo({"nvidia.com/gpu": 1, "pods": 1}, linear_speedup, creation_timestamp=0.0,
    ...         min_replicas=0, max_replicas=4)
    JobInfo(resources={'nvidia.com/gpu': 1, 'pods': 1}, min_replicas=0, max_replicas=4, preemptible=True, creation_timestamp=0.0)
    >>> JobInfo({"nvidia.com/gpu": 1}, linear_speedup, 0.0, min_replicas=2, max_replicas=1)
    Traceback (most recent call last):
        ...
    ValueError: JobInfo.max_replicas (1) must be >= min_replicas (2)
    """

    __slots__ = (
        "resources",
        "speedup_fn",
        "creation_timestamp",
        "min_replicas",
        "max_replicas",
        "preemptible",
        "restart_penalty",
    )

    def __init__(
        self,
        resources,
        speedup_fn,
        creation_timestamp,
        min_replicas,
        max_replicas,
        preemptible=True,
        restart_penalty=None,
    ):
        self.resources = _check_resources("JobInfo", resources)
        if not callable(speedup_fn):
            raise TypeError(f"JobInfo.speedup_fn must be callable, got {type(speedup_fn).__name__}")
        self.speedup_fn = speedup_fn
        self.creation_timestamp = creation_timestamp
        self.min_replicas = V.check_int_scalar("JobInfo.min_replicas", min_replicas, low=0)
        self.max_replicas = V.check_int_scalar("JobInfo.max_replicas", max_replicas, low=1)
        if self.max_replicas < self.min_replicas:
            raise ValueError(
                f"JobInfo.max_replicas ({self.max_replicas}) must be >= min_replicas ({self.min_replicas})"
            )
        if not isinstance(preemptible, (bool, numbers.Integral)):
            raise TypeError(f"JobInfo.preemptible must be a bool, got {type(preemptible).__name__}")
        self.preemptible = bool(preemptible)
        self.restart_penalty = (
            None
            if restart_penalty is None
            else V.check_finite_scalar("JobInfo.restart_penalty", restart_penalty, low=0.0, high=1.0)
        )

    def __repr__(self) -> str:
        return (
            f"JobInfo(resources={self.resources!r}, min_replicas={self.min_replicas}, "
            f"max_replicas={self.max_replicas}, preemptible={self.preemptible}, "
            f"creation_timestamp={self.creation_timestamp!r})"
        )


class NodeInfo:
    """A node (or the template of a node the autoscaler may add).

    Parameters
    ----------
    resources : dict of str to int
        Resources available on the node for the policy's jobs, non-negative integers.
    preemptible : bool
        Preemptible (e.g. spot) nodes are used last.
    gpu_type : str, optional
        The node's GPU type (e.g. ``"aws"``, ``"rtx"``, ``"dgx-ext"`` in the Sia traces), for
        heterogeneity-aware callers. Keyword only; ``None`` (default) is an untyped node as in
        AdaptDL, and the policy treats typed and untyped nodes alike.

    Examples
    --------
    >>> from fastsched import NodeInfo
    >>> NodeInfo({"nvidia.com/gpu": 4, "pods": 32}, preemptible=False)
    NodeInfo(resources={'nvidia.com/gpu': 4, 'pods': 32}, preemptible=False)
    >>> node = NodeInfo({"nvidia.com/gpu": 8}, False, gpu_type="rtx")
    >>> node.gpu_type, node
    ('rtx', NodeInfo(resources={'nvidia.com/gpu': 8}, preemptible=False, gpu_type='rtx'))
    >>> NodeInfo({"nvidia.com/gpu": 8}, False).gpu_type is None
    True
    """

    __slots__ = ("resources", "preemptible", "gpu_type")

    def __init__(self, resources, preemptible, *, gpu_type=None):
        self.resources = _check_resources("NodeInfo", resources)
        if not isinstance(preemptible, (bool, numbers.Integral)):
            raise TypeError(f"NodeInfo.preemptible must be a bool, got {type(preemptible).__name__}")
        self.preemptible = bool(preemptible)
        if gpu_type is not None:
            if not isinstance(gpu_type, str):
                raise TypeError(f"NodeInfo.gpu_type must be a str or None, got {type(gpu_type).__name__}")
            if not gpu_type:
                raise ValueError("NodeInfo.gpu_type must be a non-empty name (or None for an untyped node)")
        self.gpu_type = gpu_type

    def __repr__(self) -> str:
        typed = "" if self.gpu_type is None else f", gpu_type={self.gpu_type!r}"
        return f"NodeInfo(resources={self.resources!r}, preemptible={self.preemptible}{typed})"
