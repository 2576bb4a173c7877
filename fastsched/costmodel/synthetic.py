"""Synthetic training programs (transformer stacks) for benchmarks and scaling tests."""

from __future__ import annotations

from fastsched.costmodel.program import Op, Program, Rank, Var

__all__ = ["transformer_stack"]


def transformer_stack(layers: int, *, hidden: int = 64, seq: int = 16, ranks: int = 1) -> Program:
    """Build a forward + backward + Adam program of ``layers`` pre-LN transformer blocks.

    Each block has q/k/v projections, attention, an output projection, a gated MLP and two
    residual adds; the backward pass mirrors it (gradient ``sum`` where activations fork)
    and every parameter gets an ``adam`` op. About 51 ops per layer. Costs are multiples
    of 1/1024 ms, so sums are exact.

    Parameters
    ----------
    layers : int
    hidden, seq : int
        Tensor sizes (only memory depends on them).
    ranks : int
        Identical copies, one per rank (for pipeline configurations).

    Returns
    -------
    Program

    Examples
    --------
    >>> from fastsched.costmodel import estimate_cost
    >>> p = transformer_stack(2)
    >>> len(p.ranks), p.n_ops, sorted({op.type for op in p.ranks[0].ops if op.op_role == 2})
    (1, 104, ['adam'])
    >>> estimate_cost(p).runtime
    0.7109375
    >>> estimate_cost(transformer_stack(2, ranks=2), pipeline_config=[[0], [1]], microbatch_num=2).runtime
    1.87109375
    """
    vars_: dict = {}
    ops: list = []

    def var(name, shape, persistable=False):
        if name not in vars_:
            vars_[name] = Var(name, tuple(shape), "float32", persistable)
        return name

    def op(typ, ins, outs, role=0):
        i = len(ops)
        cost = ((i * 7) % 13 + 1) / 1024.0
        ops.append(
            Op(
                id=f"{typ}_{i}",
                type=typ,
                inputs=tuple((k, tuple(v)) for k, v in ins),
                outputs=tuple((k, tuple(v)) for k, v in outs),
                op_role=role,
                cost=cost,
                desc_id=i,
            )
        )

    act = (seq, hidden)
    x = var("x0", act)
    op("fill_constant", [], [("Out", [x])])
    params = []
    saved = []  # (kind, inputs, output, param names) per forward op, for the backward pass

    def fwd(typ, inputs, pnames, out):
        for p in pnames:
            var(p, (hidden, hidden), True)
            params.append(p)
        var(out, act)
        op(typ, [("X", inputs), ("Y", pnames)] if pnames else [("X", inputs)], [("Out", [out])])
        saved.append((typ, inputs, out, pnames))

    for layer in range(layers):
        p = f"l{layer}"
        fwd("layer_norm", [x], [f"{p}.ln1.w"], f"{p}.ln1")
        for h in ("q", "k", "v"):
            fwd("matmul_v2", [f"{p}.ln1"], [f"{p}.{h}.w"], f"{p}.{h}")
            fwd("transpose2", [f"{p}.{h}"], [], f"{p}.{h}t")
        fwd("matmul_v2", [f"{p}.qt", f"{p}.kt"], [], f"{p}.s")
        fwd("softmax", [f"{p}.s"], [], f"{p}.p")
        fwd("matmul_v2", [f"{p}.p", f"{p}.vt"], [], f"{p}.a")
        fwd("matmul_v2", [f"{p}.a"], [f"{p}.o.w"], f"{p}.o")
        fwd("elementwise_add", [x, f"{p}.o"], [], f"{p}.r1")
        fwd("layer_norm", [f"{p}.r1"], [f"{p}.ln2.w"], f"{p}.ln2")
        fwd("matmul_v2", [f"{p}.ln2"], [f"{p}.up.w"], f"{p}.up")
        fwd("matmul_v2", [f"{p}.ln2"], [f"{p}.gate.w"], f"{p}.gate")
        fwd("silu", [f"{p}.gate"], [], f"{p}.g")
        fwd("elementwise_mul", [f"{p}.up", f"{p}.g"], [], f"{p}.h")
        fwd("matmul_v2", [f"{p}.h"], [f"{p}.down.w"], f"{p}.down")
        fwd("elementwise_add", [f"{p}.r1", f"{p}.down"], [], f"{p}.out")
        x = f"{p}.out"
    loss = var("loss", ())
    op("reduce_mean", [("X", [x])], [("Out", [loss])], role=256)
    var(loss + "@GRAD", ())
    op("fill_constant", [], [("Out", [loss + "@GRAD"])], role=257)
    grads: dict = {x: [loss + "@GRAD"]}
    # the mean's gradient flows to the last activation
    for typ, inputs, out, pnames in reversed(saved):
        gs = grads.get(out)
        if not gs:
            continue
        if len(gs) > 1:
            g = var(out + "@GRAD@SUM", act)
            op("sum", [("X", gs)], [("Out", [g])], role=1)
        else:
            g = gs[0]
        outs = []
        for i, a in enumerate(inputs):
            ga = var(f"{a}@GRAD@{len(ops)}_{i}", act)
            grads.setdefault(a, []).append(ga)
            outs.append(ga)
        pg = [var(pn + "@GRAD", (hidden, hidden)) for pn in pnames]
        op(
            typ + "_grad",
            [("Out@GRAD", [g]), ("X", list(inputs)), ("Y", list(pnames))],
            [("X@GRAD", outs), ("Y@GRAD", pg)],
            role=1,
        )
    lr = var("learning_rate_0", (1,), True)
    for pn in params:
        m1 = var(pn + "_moment1_0", (hidden, hidden), True)
        m2 = var(pn + "_moment2_0", (hidden, hidden), True)
        op(
            "adam",
            [
                ("Grad", [pn + "@GRAD"]),
                ("LearningRate", [lr]),
                ("Moment1", [m1]),
                ("Moment2", [m2]),
                ("Param", [pn]),
            ],
            [("Moment1Out", [m1]), ("Moment2Out", [m2]), ("ParamOut", [pn])],
            role=2,
        )
    rank = Rank(vars=tuple(vars_.values()), ops=tuple(ops))
    return Program(ranks=tuple(Rank(vars=rank.vars, ops=rank.ops, rank=r) for r in range(ranks)))
