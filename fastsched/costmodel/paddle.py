"""Optional adapter: Paddle static programs -> :class:`~fastsched.costmodel.program.Program`.

Paddle is imported lazily (``pip install fastsched[paddle]``); nothing else in
:mod:`fastsched.costmodel` needs it. Works with legacy-IR programs
(``FLAGS_enable_pir_api=0``), as the reference cost model does.
"""

from __future__ import annotations

__all__ = ["from_paddle", "estimate_cost_paddle"]


def _require_paddle():
    try:
        import paddle  # noqa: F401
    except ImportError:
        raise ImportError("fastsched.costmodel.paddle needs paddlepaddle (pip install fastsched[paddle])") from None
    return paddle


def _dtype_name(dtype) -> str:
    s = str(dtype)
    s = s.replace("paddle.", "").replace("VarType.", "").lower()
    return {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}.get(s, s)


def from_paddle(programs, standalone_cost_data=None, pipeline_config=None):
    """Describe Paddle static programs (one per rank) without keeping Paddle objects.

    Parameters
    ----------
    programs : list of paddle.static.Program
        Single-block programs, one per rank. They are only read (B13).
    standalone_cost_data : list of mappings, optional
        As for the reference (``desc_id -> ms``, one mapping per stage); costs are stored
        on the ops.
    pipeline_config : list of rank lists, optional
        Used to pick each rank's cost mapping.

    Returns
    -------
    Program
    """
    _require_paddle()
    from fastsched.costmodel.program import Op, Program, Rank, Var

    rank2stage = {}
    for s, rs in enumerate(pipeline_config or []):
        for r in rs:
            rank2stage[r] = s
    ranks = []
    for i, prog in enumerate(programs):
        if len(prog.blocks) != 1:
            raise ValueError(f"programs[{i}]: programs with more than one block are not supported")
        block = prog.blocks[0]
        data = None
        if standalone_cost_data:
            data = standalone_cost_data[rank2stage.get(i, 0)]
        vs = []
        for v in block.vars.values():
            try:
                shape = tuple(int(d) for d in v.shape)
            except Exception:
                shape = ()
            vs.append(Var(v.name, shape, _dtype_name(v.dtype), bool(v.persistable)))
        ops = []
        for op in block.ops:
            desc_id = op.desc.id()
            cost = 0.0
            if data is not None:
                for key in (desc_id, op.type):
                    if key in data:
                        cost = float(data[key])
                        break
            ops.append(
                Op(
                    id=f"{op.type}_{op.idx}",
                    type=op.type,
                    inputs=tuple((s, tuple(op.input(s))) for s in op.input_names),
                    outputs=tuple((s, tuple(op.output(s))) for s in op.output_names),
                    op_role=int(op.attr("op_role")) if op.has_attr("op_role") else 0,
                    ring_id=int(op.attr("ring_id")) if op.has_attr("ring_id") else None,
                    peer=int(op.attr("peer")) if op.has_attr("peer") else None,
                    cost=cost,
                    desc_id=int(desc_id),
                )
            )
        ranks.append(Rank(vars=tuple(vs), ops=tuple(ops), rank=i, stage=rank2stage.get(i)))
    return Program(ranks=tuple(ranks))


def estimate_cost_paddle(programs, standalone_cost_data=None, pipeline_config=None, **kwargs):
    """:func:`~fastsched.costmodel.model.estimate_cost` on Paddle programs.

    Parameters
    ----------
    programs, standalone_cost_data, pipeline_config
        As for :func:`from_paddle`.
    **kwargs
        Passed to :func:`~fastsched.costmodel.model.estimate_cost`.

    Returns
    -------
    Cost
    """
    from fastsched.costmodel.model import estimate_cost

    prog = from_paddle(programs, standalone_cost_data, pipeline_config)
    return estimate_cost(prog, pipeline_config=pipeline_config, **kwargs)
