"""Pollux scheduling policy: drop-in for ``adaptdl_sched.policy.pollux`` and ``.utils``.

Public: :class:`JobInfo`, :class:`NodeInfo`, :class:`PolluxPolicy`, :func:`get_job_info`
(the allocator's ``_get_job_info`` on plain dicts), :func:`exact_optimize` (MILP oracle),
:func:`build_problem` and :class:`Problem` (the arrays of one round), :class:`InvalidJobError`
(a job that is invalid or can never be placed).
"""

from fastsched._lazy import lazy_exports

# Public name -> defining module, imported on first use: importing this package (or a module
# inside it) loads nothing else.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "exact_optimize": "fastsched.policy.exact",
        "get_job_info": "fastsched.policy.hints",
        "linear_speedup": "fastsched.policy.hints",
        "PolluxPolicy": "fastsched.policy.pollux",
        "InvalidJobError": "fastsched.policy.problem",
        "Problem": "fastsched.policy.problem",
        "build_problem": "fastsched.policy.problem",
        "JobInfo": "fastsched.policy.types",
        "NodeInfo": "fastsched.policy.types",
    },
)

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
