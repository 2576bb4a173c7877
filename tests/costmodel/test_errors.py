"""Bad input: clear errors naming the field."""

import pytest

from fastsched.costmodel import CostModel, Program, estimate_cost


def prog(ops, vars_=("x", "y", "z")):
    return {"vars": [{"name": v, "shape": [2]} for v in vars_], "ops": ops}


def op(i, ins, outs, cost=1.0, typ="relu"):
    return {"id": f"{typ}_{i}", "type": typ, "inputs": [["X", ins]], "outputs": [["Out", outs]], "cost": cost}


def test_cycle():
    p = prog([op(0, ["y"], ["x"]), op(1, ["x"], ["y"])])
    with pytest.raises(ValueError, match="cycle.*relu_0.*'y'"):
        estimate_cost(p)


def test_unknown_variable():
    with pytest.raises(ValueError, match="unknown variable 'nope'"):
        estimate_cost(prog([op(0, ["nope"], ["x"])]))
    with pytest.raises(ValueError, match="writes unknown variable 'q'"):
        estimate_cost(prog([op(0, [], ["q"])]))


def test_negative_and_nan_cost():
    with pytest.raises(ValueError, match="cost"):
        estimate_cost(prog([op(0, [], ["x"], cost=-1.0)]))
    with pytest.raises(ValueError, match="cost"):
        estimate_cost(prog([op(0, [], ["x"], cost=float("nan"))]))
    with pytest.raises(ValueError, match="cost"):
        estimate_cost(prog([op(0, [], ["x"])]), standalone_cost_data=[{"relu_0": -2.0}])
    with pytest.raises(ValueError, match="opcall_overhead"):
        estimate_cost(prog([]), opcall_overhead=-1)


def test_bad_pipeline_config():
    two = [prog([op(0, [], ["x"])]), prog([op(0, [], ["x"])])]
    with pytest.raises(ValueError, match=r"pipeline_config\[1\] names rank 5"):
        estimate_cost(two, pipeline_config=[[0], [5]])
    with pytest.raises(ValueError, match="more than one stage"):
        estimate_cost(two, pipeline_config=[[0], [0]])
    with pytest.raises(ValueError, match="pipeline_config"):
        estimate_cost(two, pipeline_config=[[0], []])
    with pytest.raises(TypeError, match="pipeline_config"):
        estimate_cost(two, pipeline_config="01")


def test_microbatch_num():
    with pytest.raises(ValueError, match="microbatch_num must be >= 1"):
        estimate_cost(prog([]), microbatch_num=0)
    with pytest.raises(TypeError, match="microbatch_num"):
        CostModel(microbatch_num="4")


def test_malformed_program():
    with pytest.raises(TypeError, match="shape"):
        Program.from_dict({"vars": [{"name": "x", "shape": ["a"]}], "ops": []})
    with pytest.raises(ValueError, match="dtype"):
        Program.from_dict({"vars": [{"name": "x", "shape": [1], "dtype": "float7"}], "ops": []})
    with pytest.raises(ValueError, match="duplicate variable"):
        Program.from_dict({"vars": [{"name": "x"}, {"name": "x"}], "ops": []})
    with pytest.raises(TypeError, match="cannot build"):
        Program.from_dict(42)
    with pytest.raises(ValueError, match="mem_unit"):
        estimate_cost(prog([]), mem_unit="bits")
    with pytest.raises(ValueError, match="bandwidth"):
        estimate_cost(prog([]), cluster=0.0)


def test_empty_program():
    c = estimate_cost(prog([], vars_=()))
    assert c.runtime == 0.0 and c.peak_mem == (0.0,)
    assert estimate_cost([]).runtime == 0.0
