"""Price one parallel configuration of a transformer: what :func:`~.search.search` ranks, for one row.

A published run states its configuration (tensor, pipeline and data degrees, microbatch size
and count, recomputation, ZeRO stage); :func:`price` gives its predicted step time and memory
with the search's cost function, whether or not it fits the GPU's memory.
"""

from __future__ import annotations

import numpy as np

from fastsched._validate import check_int_scalar
from fastsched.costmodel._search import search_kernel
from fastsched.costmodel.cluster import Cluster
from fastsched.costmodel.search import RECOMPUTE, SCHEDULE_NAMES, SearchResult, Transformer, cluster_tuple

__all__ = ["price"]


def price(
    model,
    cluster,
    *,
    tp=1,
    pp=1,
    micro_batch=1,
    schedule="1f1b",
    virtual_stages=1,
    recompute="none",
    zero=0,
    sequence_parallel=False,
    stack=None,
) -> dict:
    """Step time breakdown and memory of one configuration (the columns of :meth:`SearchResult.row`).

    The data degree is ``cluster.gpus / (tp pp)`` and the microbatches per step
    ``model.global_batch / (dp micro_batch)``; both must divide exactly. ``fits`` tells whether
    the memory fits ``cluster.memory_gib``.

    Parameters
    ----------
    model : Transformer or dict
    cluster : Cluster or dict
    tp, pp, micro_batch, virtual_stages, zero : int
    schedule : str
        One of :data:`~.search.SCHEDULE_NAMES`.
    recompute : str
        One of :data:`~.search.RECOMPUTE`.
    sequence_parallel : bool
    stack : Stack, optional
        See :func:`~.search.search`.

    Examples
    --------
    >>> m = Transformer(layers=24, hidden=2048, heads=16, seq=2048, vocab=50368, global_batch=64)
    >>> row = price(m, Cluster.from_gpu("a100-80gb", gpus=8), micro_batch=8, zero=3)
    >>> row["dp"], row["microbatches"], row["fits"], row["time_ms"] > row["dp_comm_ms"] >= 0
    (8, 1, True, True)
    """
    model = model if isinstance(model, Transformer) else Transformer.from_dict(model)
    cluster = cluster if isinstance(cluster, Cluster) else Cluster.from_dict(cluster)
    t = check_int_scalar("tp", tp, low=1)
    p = check_int_scalar("pp", pp, low=1)
    b = check_int_scalar("micro_batch", micro_batch, low=1)
    v = check_int_scalar("virtual_stages", virtual_stages, low=1)
    z = check_int_scalar("zero", zero, low=0, high=3)
    if schedule not in SCHEDULE_NAMES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULE_NAMES)}, got {schedule!r}")
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {', '.join(RECOMPUTE)}, got {recompute!r}")
    if cluster.gpus % (t * p):
        raise ValueError(f"tp={t} x pp={p} does not divide cluster.gpus={cluster.gpus}")
    d = cluster.gpus // (t * p)
    if model.global_batch % (d * b):
        raise ValueError(f"dp={d} x micro_batch={b} does not divide model.global_batch={model.global_batch}")
    if model.layers % (p * v) or model.heads % t or model.hidden % t:
        raise ValueError(f"pp={p} x virtual_stages={v} must divide the layers and tp={t} the heads and hidden size")
    m = model.global_batch // (d * b)
    sp = bool(sequence_parallel) and t > 1
    row = np.array(
        [[t, p, d, b, m, SCHEDULE_NAMES.index(schedule), v, RECOMPUTE.index(recompute), z, int(sp)]], np.int64
    )
    out = search_kernel(model.tuple(), cluster_tuple(cluster, stack), row)
    res = SearchResult(row, out, 1).row(0)
    res["fits"] = bool(out[0, -1] <= cluster.memory_bytes)
    return res
