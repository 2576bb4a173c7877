"""pytest-benchmark suite for fastsched.costmodel (run: pytest benchmarks/costmodel; not in the default test path)."""

import os
from pathlib import Path

import pytest

from fastsched.costmodel import CostModel, estimate_cost, load_case, transformer_stack

CASES = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[2].parent / "shared")) / "paddle-cases"


@pytest.fixture(scope="module")
def mlp_l64():
    path = CASES / "mlp_L64.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    case = load_case(path)
    case.estimate()  # compile
    return case


def test_mlp_l64_get_cost(benchmark, mlp_l64):
    benchmark(mlp_l64.estimate)


@pytest.mark.parametrize("layers", [2, 32, 512, 2000])
def test_transformer_stack(benchmark, layers):
    prog = transformer_stack(layers)
    estimate_cost(prog)
    benchmark.extra_info["n_ops"] = prog.n_ops
    benchmark(estimate_cost, prog)


def test_merge_only_100k(benchmark):
    prog = transformer_stack(2000)
    cm = CostModel().init(prog)
    cm.merge()
    benchmark(cm.merge)
