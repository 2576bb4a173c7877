"""Extreme but legal cases (issue 27): range checks naming the field, finite results only."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.costmodel import encode, estimate, estimate_cost
from fastsched.costmodel.deviations import deviations
from fastsched.costmodel.synthetic import transformer_stack


def one_op(**fields):
    op = {"id": "relu_0", "type": "relu", "outputs": [["Out", ["x"]]], "cost": 1.0, **fields}
    return {"vars": [{"name": "x", "shape": [4]}], "ops": [op]}


@pytest.mark.parametrize("ranks", [1, 2])  # the one-rank fast path and the general path
@pytest.mark.parametrize(
    "field, value",
    [
        ("op_role", 2**63),
        ("op_role", 2**31),
        ("op_role", -1),
        ("ring_id", 2**63),
        ("peer", -(2**40)),
        ("desc_id", 2**64),
    ],
)
def test_op_integer_fields_range_checked(ranks, field, value):
    # op_role=2**63 raised a bare OverflowError from encode._encode_general.
    prog = [one_op(**{field: value})] * ranks
    with pytest.raises(ValueError, match=rf"rank 0: op 'relu_0': {field} must be in \["):
        encode(prog)


@pytest.mark.parametrize("ranks", [1, 2])
@pytest.mark.parametrize("shape", [[10**20], [2**53 + 1, 1], [-1, 2**40, 2**40]])
def test_shapes_range_checked(ranks, shape):
    prog = one_op()
    prog["vars"][0]["shape"] = shape
    with pytest.raises(ValueError, match="rank 0: variable 'x': shape"):
        encode([prog] * ranks)


@pytest.mark.parametrize("ranks", [1, 2])
def test_limits_themselves_accepted(ranks):
    prog = one_op(op_role=2**31 - 1, desc_id=2**63 - 1)
    prog["vars"][0]["shape"] = [2**53]
    enc = encode([prog] * ranks)
    assert enc.var_fixed.tolist() == [2.0**53] * ranks


def test_rank_number_range_checked():
    prog = one_op()
    prog["rank"] = 2**40
    with pytest.raises(ValueError, match=r"rank 1099511627776: rank must be in \["):
        encode({"ranks": [prog]})


@pytest.mark.parametrize(
    "kwargs",
    [{"opcall_overhead": 1e308}, {"batch_size": 2**53}],
)
def test_non_finite_results_are_errors(kwargs):
    # opcall_overhead=1e308 gave runtime=inf in a Cost that looked normal.
    prog = {
        "vars": [{"name": "x", "shape": [-1] * 20}],  # (2**53)**20 bytes at the largest batch
        "ops": [
            {"id": f"a{i}", "type": "relu", "outputs": [["Out", ["x"]]] if i == 0 else [], "cost": 1.0}
            for i in range(3)
        ],
    }
    with pytest.raises(ValueError, match="overflows float64"):
        estimate_cost(prog, **kwargs)


def test_huge_costs_overflow_named():
    prog = {"vars": [], "ops": [{"id": f"a{i}", "type": "relu", "cost": 1e308} for i in range(3)]}
    with pytest.raises(ValueError, match=r"overflows float64 \(runtime = inf\)"):
        estimate_cost(prog)
    two = transformer_stack(1, ranks=2)
    enc = encode(two)
    cost = estimate(enc, pipeline_config=[[0], [1]], microbatch_num=4)
    assert math.isfinite(cost.runtime)


@pytest.mark.parametrize("pipeline_config", [[[0], []], [[]], [0]])
def test_deviations_bad_pipeline_config(pipeline_config):
    # deviations raised IndexError: list index out of range on a stage without ranks.
    prog = {"vars": [{"name": "x"}], "ops": []}
    enc = encode([prog, prog])
    with pytest.raises((ValueError, TypeError), match="pipeline_config"):
        deviations(enc, pipeline_config=pipeline_config)
    with pytest.raises((ValueError, TypeError), match="pipeline_config"):
        encode([prog, prog], pipeline_config=pipeline_config)


# -- mutated programs: every accepted encoding costs finitely and deviations never raises ----
EXTREME_INTS = [0, 1, -1, -2, 2**31 - 1, 2**31, 2**53, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), 2**64]
EXTREME_FLOATS = [0.0, 1e-300, 1.0, 1e100, 1e300, 1e308, 1.7976931348623157e308]
BASE = transformer_stack(1, ranks=2).to_dict()


@st.composite
def mutated(draw):
    prog = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 4))):
        rank = draw(st.sampled_from(prog["ranks"]))
        if draw(st.booleans()) and rank["ops"]:
            op = draw(st.sampled_from(rank["ops"]))
            field = draw(st.sampled_from(["op_role", "ring_id", "peer", "desc_id", "cost"]))
            pool = EXTREME_FLOATS if field == "cost" else EXTREME_INTS
            op[field] = draw(st.sampled_from(pool))
        elif rank["vars"]:
            var = draw(st.sampled_from(rank["vars"]))
            var["shape"] = draw(st.lists(st.sampled_from([*EXTREME_INTS, 4, -1]), max_size=3))
    rank_no = draw(st.sampled_from([None, 0, 2**31, 2**63]))
    if rank_no is not None:
        prog["ranks"][0]["rank"] = rank_no
    return prog


@settings(max_examples=40, deadline=None)
@given(
    mutated(),
    st.sampled_from([None, [[0], [1]], [[0, 1]]]),
    st.sampled_from([1, 2**20, 2**53]),
    st.sampled_from([0.0, 1e300, 1e308]),
)
def test_mutated_programs(prog, pipeline_config, batch_size, overhead):
    try:
        enc = encode(prog, pipeline_config=pipeline_config)
    except (ValueError, TypeError):
        return
    devs = deviations(enc, pipeline_config=pipeline_config, opcall_overhead=overhead)
    assert all(isinstance(code, str) for code, _ in devs)
    try:
        cost = estimate(enc, pipeline_config=pipeline_config, batch_size=batch_size, opcall_overhead=overhead)
    except ValueError as exc:
        assert "overflows" in str(exc) or "microbatch" in str(exc)
        return
    for field in ("static_mem", "peak_mem", "fwd_time", "bwd_time", "optim_time"):
        vals = np.asarray(getattr(cost, field), dtype=float)
        assert np.all(np.isfinite(vals)) and np.all(vals >= 0), field
    assert math.isfinite(cost.runtime) and cost.runtime >= 0


# -- issue 26.3: optimizer ops in hand-written programs --------------------------------------
def _sgd(inputs, role=2):
    return {
        "vars": [{"name": "w", "shape": [4], "persistable": True}, {"name": "lr", "shape": [1]}],
        "ops": [
            {
                "id": "sgd_0",
                "type": "sgd",
                "inputs": inputs,
                "outputs": [["ParamOut", ["w"]]],
                "cost": 0.5,
                "op_role": role,
            }
        ],
    }


@pytest.mark.parametrize("ranks", [1, 2])
def test_optimizer_role_without_learning_rate_reported(ranks):
    # An sgd op with op_role 2 and no LearningRate input was silently costed as forward/backward.
    from fastsched.costmodel import Program

    prog = [_sgd([["Param", ["w"]]])] * ranks
    for program in (prog, Program.from_dict({"ranks": prog})):
        enc = encode(program)
        assert "optimizer-role" in [code for code, _ in deviations(enc)]
        assert estimate(enc).optim_time == (0.0,) * ranks  # Paddle's rule: no LearningRate input


@pytest.mark.parametrize("ranks", [1, 2])
@pytest.mark.parametrize("lr", [[], ["lr"]])
def test_learning_rate_slot_makes_an_optimizer_op(ranks, lr):
    enc = encode([_sgd([["Param", ["w"]], ["LearningRate", lr]])] * ranks)
    assert "optimizer-role" not in [code for code, _ in deviations(enc)]
    assert estimate(enc).optim_time == (0.5,) * ranks
    # other roles without the slot are not optimizer ops and are not reported
    for role in (0, 1, 256, 257):
        enc = encode([_sgd([["Param", ["w"]]], role=role)] * ranks)
        assert "optimizer-role" not in [code for code, _ in deviations(enc)]


def test_shared_cases_report_no_optimizer_role(shared_dir):
    # Real Paddle programs: every role-2 op has a LearningRate input; nothing new is reported.
    from fastsched.costmodel import load_case

    paths = sorted((shared_dir / "paddle-cases").glob("*.json"))
    if not paths:
        pytest.skip("no shared cases")
    for path in paths:
        case = load_case(path)
        assert "optimizer-role" not in case.encoded.facts, path.name
