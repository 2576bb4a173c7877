"""Optional adapter: Paddle static programs -> :class:`~fastsched.costmodel.program.Program`.

Paddle is imported lazily (``pip install fastsched[paddle]``); nothing else in
:mod:`fastsched.costmodel` needs it. Works with legacy-IR programs
(``FLAGS_enable_pir_api=0``), as the reference cost model does.
"""

from __future__ import annotations

__all__ = ["from_paddle", "estimate_cost_paddle", "example_programs"]


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

    Examples
    --------
    >>> import importlib.util
    >>> if importlib.util.find_spec("paddle") is not None:
    ...     progs, _ = example_programs("mlp")
    ...     assert from_paddle(progs).n_ops == len(progs[0].global_block().ops)
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

    Examples
    --------
    >>> import importlib.util
    >>> if importlib.util.find_spec("paddle") is not None:
    ...     progs, _ = example_programs("mlp")
    ...     assert estimate_cost_paddle(progs).runtime == 0.0  # no per-op costs given
    """
    from fastsched.costmodel.model import estimate_cost

    prog = from_paddle(programs, standalone_cost_data, pipeline_config)
    return estimate_cost(prog, pipeline_config=pipeline_config, **kwargs)


def _mlp_body(x, widths, act="relu"):
    import paddle

    h = x
    for w in widths:
        h = paddle.static.nn.fc(h, w, activation=act)
    return h


def _matmul(a, b, trans_y=False):
    # paddle.matmul takes the PIR path even under the legacy IR in Paddle 3.x: append the op
    from paddle.base.layer_helper import LayerHelper

    helper = LayerHelper("matmul_v2")
    out = helper.create_variable_for_type_inference(dtype=a.dtype)
    helper.append_op(
        type="matmul_v2",
        inputs={"X": a, "Y": b},
        outputs={"Out": out},
        attrs={"trans_x": False, "trans_y": trans_y},
    )
    return out


def _transformer_body(x, layers, hidden, heads):
    # pre-built nn.TransformerEncoderLayer uses the PIR API; this is the same block by hand
    import paddle

    F = paddle.nn.functional
    B, S, H = x.shape
    d = H // heads
    h = x
    for _ in range(layers):

        def split(t):
            return paddle.transpose(paddle.reshape(t, [B, S, heads, d]), [0, 2, 1, 3])

        q, k, v = (split(paddle.static.nn.fc(h, H, num_flatten_dims=2)) for _ in range(3))
        p = F.softmax(paddle.scale(_matmul(q, k, trans_y=True), 1.0 / d**0.5))
        ctx = paddle.reshape(paddle.transpose(_matmul(p, v), [0, 2, 1, 3]), [B, S, H])
        h = F.layer_norm(h + paddle.static.nn.fc(ctx, H, num_flatten_dims=2), [H])
        m = paddle.static.nn.fc(
            paddle.static.nn.fc(h, 4 * H, num_flatten_dims=2, activation="gelu"), H, num_flatten_dims=2
        )
        h = F.layer_norm(h + m, [H])
    return h


def _grad_role_ops(block, start):
    # index of the first optimizer op (reads LearningRate) at or after ``start``
    for i in range(start, len(block.ops)):
        if "LearningRate" in block.ops[i].input_names:
            return i
    return len(block.ops)


def example_programs(kind="mlp", *, layers=2, batch=4, hidden=32, heads=4, seq=8, ranks=2):
    """Paddle static training programs for cross-checks (legacy IR; needs paddle).

    Parameters
    ----------
    kind : {"mlp", "transformer", "mlp-dp", "transformer-dp", "mlp-pp", "transformer-pp"}
        ``-dp``: ``ranks`` data-parallel copies with an ``all_reduce`` (ring 0) of every
        gradient before the optimizer. ``-pp``: two pipeline stages, the activation sent
        forward and its gradient sent back with ``send_v2``/``recv_v2``.
    layers, batch, hidden, heads, seq, ranks : int

    Returns
    -------
    programs : list of paddle.static.Program
        One per rank.
    pipeline_config : list or None

    Examples
    --------
    >>> import importlib.util
    >>> have_paddle = importlib.util.find_spec("paddle") is not None
    >>> progs = example_programs("mlp")[0] if have_paddle else []
    >>> len(progs) in (0, 1)
    True
    """
    import os

    os.environ.setdefault("FLAGS_enable_pir_api", "0")
    paddle = _require_paddle()
    paddle.enable_static()
    base, _, split = kind.partition("-")
    if base not in ("mlp", "transformer") or split not in ("", "dp", "pp"):
        raise ValueError(f"kind must be mlp/transformer with an optional -dp or -pp, got {kind!r}")

    def body(x, part):
        if base == "mlp":
            return _mlp_body(x, [hidden] * layers)
        return _transformer_body(x, layers, hidden, heads)

    shape = [batch, hidden] if base == "mlp" else [batch, seq, hidden]
    if split == "pp":
        return _pipeline_pair(paddle, shape, body), [[0], [1]]
    progs = []
    for _ in range(ranks if split == "dp" else 1):
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            x = paddle.static.data("x", shape, "float32")
            loss = paddle.mean(body(x, 0))
            opt = paddle.optimizer.Adam(1e-3)
            params_grads = opt.backward(loss)
            if split == "dp":
                blk = main.global_block()
                for _, g in params_grads:
                    blk.append_op(
                        type="all_reduce",
                        inputs={"x": [g]},
                        outputs={"out": [g]},
                        attrs={"ring_id": 0, "reduce_type": 0, "op_role": 1},
                    )
            opt.apply_gradients(params_grads)
        progs.append(main)
    return progs, None


def _pipeline_pair(paddle, shape, body):
    # stage 0: x -> body -> h, send h; recv h@GRAD, backward, optimizer
    main0, start0 = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main0, start0):
        x = paddle.static.data("x", shape, "float32")
        h = body(x, 0)
        hg = paddle.static.data("h_grad", list(h.shape), "float32")
        opt = paddle.optimizer.Adam(1e-3)
        params = [p for p in main0.global_block().all_parameters()]
        grads = paddle.static.gradients([h], params, target_gradients=[hg])
        opt.apply_gradients(list(zip(params, grads, strict=True)))
    blk = main0.global_block()
    n_fwd = next(i for i, op in enumerate(blk.ops) if op.has_attr("op_role") and int(op.attr("op_role")) & 1)
    blk._insert_op(n_fwd, type="send_v2", inputs={"X": [h]}, attrs={"ring_id": 0, "peer": 1, "op_role": 0})
    blk._insert_op(
        n_fwd + 1,
        type="recv_v2",
        outputs={"Out": [hg]},
        attrs={"ring_id": 0, "peer": 1, "out_shape": list(h.shape), "dtype": 5, "op_role": 1},
    )
    # stage 1: recv h, body -> loss, backward (h@GRAD too), send h@GRAD, optimizer
    main1, start1 = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main1, start1):
        hin = paddle.static.data("h", list(h.shape), "float32")
        hin.stop_gradient = False
        loss = paddle.mean(body(hin, 1))
        opt = paddle.optimizer.Adam(1e-3)
        params_grads = opt.backward(loss)
        opt.apply_gradients(params_grads)
    blk = main1.global_block()
    blk._insert_op(
        0,
        type="recv_v2",
        outputs={"Out": [hin]},
        attrs={"ring_id": 0, "peer": 0, "out_shape": list(h.shape), "dtype": 5, "op_role": 0},
    )
    first_opt = _grad_role_ops(blk, 0)
    blk._insert_op(first_opt, type="send_v2", inputs={"X": ["h@GRAD"]}, attrs={"ring_id": 0, "peer": 0, "op_role": 1})
    return [main0, main1]
