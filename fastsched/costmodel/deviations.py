"""Which of the reference's bugs (B1-B14) change the numbers of a given program.

The module docstring of :mod:`fastsched.costmodel` lists every deviation from Paddle's
cost model; :func:`deviations` says which of them apply to one encoded program and
setting, so ``fastsched cost`` can print them next to the results.
"""

from __future__ import annotations

import numpy as np

from fastsched._validate import check_choice, check_finite_scalar, check_int_scalar
from fastsched.costmodel._settings import check_pipeline_config
from fastsched.costmodel.cluster import Cluster
from fastsched.costmodel.encode import EncodedProgram

__all__ = ["deviations", "SEED_UNIT_NOTE", "ROLE_NOTE"]

#: What the default bandwidth means (printed whenever communication is costed with it).
SEED_UNIT_NOTE = (
    "communication uses the seed's constant: bytes / 32.768 = ms (it meant 32.768 MB/ms but divides bytes, "
    "so comm times are 1e6 x too large); give a cluster (--cluster FILE or --bandwidth GB/s) for real units"
)

#: Printed when an op's ``op_role`` says optimizer but nothing else does (Paddle's rule decides).
ROLE_NOTE = (
    "ops with op_role 2 (optimizer) but no LearningRate input are costed as forward/backward, as Paddle "
    "decides by that input; give such an op a LearningRate input slot (it may be empty: "
    '["LearningRate", []]) to cost it as optimizer'
)

_TEXT = {
    "B1": "memory is a liveness simulation (the reference never frees and skips ops reading parameters)",
    "B2": "no bounded queue (the reference deadlocks with >= 1024 source nodes or microbatches)",
    "B3": "communication moving gradients (@GRAD or backward role) counts as backward (reference: forward)",
    "B4": "ops reading @GRAD variables count as backward (the reference's check never matches)",
    "B6": "parallel branches merge without counting ops twice (the reference duplicates them)",
    "B7": "stage s uses the slowest rank of stage s (the reference indexes ranks by stage id)",
    "B8": "batch_size fills -1 dimensions (the reference raises)",
    "B9": "memory in bytes from dtype sizes (the reference counts elements)",
    "B10": "every variable of a slot is connected (the reference keeps the first)",
    "B11": "Paddle 3.x collectives / recv are costed as communication; one-rank rings cost 0",
    "B12": "call overhead once per op (the reference charges it again per merged node)",
    "B14": "standalone cost data matched by op id or type (the reference only tries desc_id)",
}


def deviations(
    enc: EncodedProgram,
    *,
    pipeline_config=None,
    microbatch_num=1,
    opcall_overhead=0.0,
    mem_unit="bytes",
    cluster=None,
    n_parallel_merges=0,
) -> list:
    """``[(code, explanation)]`` of the deviations that change this program's results.

    Parameters
    ----------
    enc : EncodedProgram
    pipeline_config, microbatch_num, opcall_overhead, mem_unit, cluster
        The estimate's settings.
    n_parallel_merges : int
        Branch merges made (B6 applies when > 0).

    Returns
    -------
    list of (str, str)

    Raises
    ------
    ValueError, TypeError
        A setting the estimate would reject (naming it), e.g. a stage without ranks.

    Examples
    --------
    >>> from fastsched.costmodel import encode
    >>> enc = encode({"vars": [{"name": "x", "shape": [-1]}], "ops": []})
    >>> [code for code, _ in deviations(enc)]
    ['B8', 'B9']
    """
    # The estimate's own checks: a bad setting is a ValueError/TypeError naming it.
    pipeline_config = check_pipeline_config(pipeline_config, enc.n_ranks)
    microbatch_num = check_int_scalar("microbatch_num", microbatch_num, low=1)
    opcall_overhead = check_finite_scalar("opcall_overhead", opcall_overhead, low=0.0)
    mem_unit = check_choice("mem_unit", mem_unit, {"bytes", "elements"})
    n_parallel_merges = check_int_scalar("n_parallel_merges", n_parallel_merges, low=0)
    out = []
    f = enc.facts
    n_ops = enc.n_ops
    if n_ops:
        out.append("B1")
    # sources of the reference's graph: variables read before any write, ops with no input
    reads_first = int(np.sum(enc.first_use == -1)) + int(np.sum(enc.persistable))
    if reads_first >= 1024 or microbatch_num >= 1024:
        out.append("B2")
    for code in ("B3", "B4"):
        if code in f:
            out.append(code)
    if n_parallel_merges > 0:
        out.append("B6")
    if pipeline_config is not None and any(len(r) > 1 or r[0] != s for s, r in enumerate(pipeline_config)):
        out.append("B7")
    if "B8" in f:
        out.append("B8")
    if mem_unit == "bytes":
        out.append("B9")
    for code in ("B10", "B11"):
        if code in f:
            out.append(code)
    if opcall_overhead > 0 and n_ops:
        out.append("B12")
    if "B14" in f:
        out.append("B14")
    res = [(c, _TEXT[c]) for c in out]
    if "optimizer-role" in f:
        res.append(("optimizer-role", ROLE_NOTE))
    if (
        "comm" in f
        and not isinstance(cluster, Cluster)
        and not (isinstance(cluster, dict) and "bandwidth" not in cluster)
    ):
        res.append(("units", SEED_UNIT_NOTE))
    return res
