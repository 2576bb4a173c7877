"""The names of the built-in simulator policies (plain data, importing nothing).

The command line lists them without loading any policy; :mod:`.registry` maps each name to its
class, and a test checks that the two agree.

Examples
--------
>>> from fastsched.sim.policies.names import POLICY_NAMES, POLICY_OPTIONS
>>> POLICY_NAMES[:3]
('pollux', 'tiresias', 'optimus')
>>> set(POLICY_OPTIONS) <= set(POLICY_NAMES)
True
"""

from __future__ import annotations

__all__ = ["POLICY_NAMES", "POLICY_OPTIONS", "ENTRY_POINT_GROUP"]

#: Built-in policy names, in the order the help texts list them.
POLICY_NAMES = (
    "pollux",
    "tiresias",
    "optimus",
    "sia",
    "gavel",
    "fifo",
    "srtf",
    "las",
    "themis",
    "min-total-duration",
    "max-sum-throughput",
    "gandiva",
    "allox",
    "shockwave",
)
#: Policies whose constructor takes options (``policy_options`` / the presets' option blocks).
POLICY_OPTIONS = (
    "pollux",
    "sia",
    "gavel",
    "fifo",
    "themis",
    "las",
    "min-total-duration",
    "max-sum-throughput",
    "gandiva",
    "shockwave",
)
#: Entry-point group in which installed packages register policy names.
ENTRY_POINT_GROUP = "fastsched.policies"
