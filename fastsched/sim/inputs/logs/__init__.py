"""Production cluster logs: Microsoft Philly, SenseTime Helios, Alibaba PAI and Slurm ``sacct``.

:func:`read_log` reads any of the four into :class:`LogJobs` (numpy columns of
:class:`LogJob` records: id in the log, submission, recorded duration, GPUs, ...), filtered,
with the count of every job left out and why. :func:`synthetic_log` writes a Helios-format
log at full size from published distributions; :func:`fastsched.sim.log_workload.workload_from_log`
(above this layer: it reads the applications' truth) samples a log into a workload of today's
CSV format, the way the Pollux and Sia studies built theirs.
"""

from fastsched._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "LogJob": "fastsched.sim.inputs.logs._records",
        "LogJobs": "fastsched.sim.inputs.logs._records",
        "LogRead": "fastsched.sim.inputs.logs._records",
        "FINISHED_STATES": "fastsched.sim.inputs.logs._records",
        "UNFINISHED_STATES": "fastsched.sim.inputs.logs._records",
        "DROP_REASONS": "fastsched.sim.inputs.logs._records",
        "read_log": "fastsched.sim.inputs.logs.read",
        "detect_format": "fastsched.sim.inputs.logs._detect",
        "LOG_FORMATS": "fastsched.sim.inputs.logs._detect",
        "synthetic_log": "fastsched.sim.inputs.logs.synthetic",
        "SYNTHETIC_PROFILES": "fastsched.sim.inputs.logs.synthetic",
    },
)
