"""Pollux scheduling policy: drop-in for ``adaptdl_sched.policy.pollux`` and ``.utils``.

Public: :class:`JobInfo`, :class:`NodeInfo`, :class:`PolluxPolicy`, :func:`get_job_info`
(the allocator's ``_get_job_info`` on plain dicts), :func:`exact_optimize` (MILP oracle),
:func:`build_problem` and :class:`Problem` (the arrays of one round), :class:`InvalidJobError`
(a job that is invalid or can never be placed).
"""

from fastsched.policy.exact import exact_optimize
from fastsched.policy.hints import get_job_info, linear_speedup
from fastsched.policy.pollux import PolluxPolicy
from fastsched.policy.problem import InvalidJobError, Problem, build_problem
from fastsched.policy.types import JobInfo, NodeInfo

__all__ = [
    "JobInfo",
    "NodeInfo",
    "PolluxPolicy",
    "get_job_info",
    "linear_speedup",
    "exact_optimize",
    "build_problem",
    "Problem",
    "InvalidJobError",
]
