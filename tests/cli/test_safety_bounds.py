"""Stated upper bounds, checked before any work (issue 28.6): counts of 10**12 refuse or work, never hang."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.cli import main
from fastsched.costmodel._bounds import MODEL_BOUNDS
from fastsched.costmodel.cluster import Cluster
from fastsched.costmodel.search import Transformer, _divisors, enumerate_configs
from fastsched.sim import api
from fastsched.sim.inputs.cluster_spec import MAX_CLUSTER_GPUS, ClusterSpec, parse_cluster

from ._helpers import TINY, write
from ._helpers import record_and_stop as _record_and_stop


def test_cluster_beyond_the_limit_is_refused_before_the_node_tables():
    n = MAX_CLUSTER_GPUS // 4 + 1  # one node too many (cheap to build were it not checked)
    with pytest.raises(ValueError, match=f"limit of {MAX_CLUSTER_GPUS}"):
        parse_cluster(f"{n}xaws")
    with pytest.raises(ValueError, match=f"limit of {MAX_CLUSTER_GPUS}"):
        ClusterSpec([("a", 2, MAX_CLUSTER_GPUS)])
    assert parse_cluster(f"{MAX_CLUSTER_GPUS // 4}xaws").total_gpus <= MAX_CLUSTER_GPUS


def test_cluster_file_count_beyond_the_limit_names_the_file(tmp_path, capsys, monkeypatch):
    c = write(tmp_path, "c.toml", f'[[group]]\ntype = "aws"\ncount = {MAX_CLUSTER_GPUS + 1}\n')
    ran = []
    monkeypatch.setattr(api.Cluster, "step", _record_and_stop(ran))
    assert main(["simulate", write(tmp_path, "w.csv", TINY), "--cluster", c, "-q"]) == 2
    err = capsys.readouterr().err
    assert "c.toml" in err and "count" in err and ran == []


# Run where memory is capped: were the bound missing, the 10**12 nodes would exhaust it (and
# the message would be "out of memory", not the limit's).
_CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, resource.RLIM_INFINITY))
from fastsched.cli import main
codes = [main(a) for a in (
    ["simulate", sys.argv[1], "--cluster", "1000000000000xaws", "-q"],
    ["simulate", sys.argv[1], "--cluster", sys.argv[2], "-q"],
)]
sys.exit(0 if codes == [2, 2] else 1)
"""


def test_cluster_of_10_12_nodes_is_refused_not_built(tmp_path):
    w = write(tmp_path, "w.csv", TINY)
    c = write(tmp_path, "c.toml", '[[group]]\ntype = "aws"\ncount = 1000000000000\n')
    proc = subprocess.run([sys.executable, "-c", _CAPPED, w, c], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and all(f"limit of {MAX_CLUSTER_GPUS}" in line for line in lines), proc.stderr


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 5000), upto=st.one_of(st.none(), st.integers(1, 6000)))
def test_divisors_match_trial_division(n, upto):
    assert _divisors(n, upto) == [k for k in range(1, n + 1) if n % k == 0 and (upto is None or k <= upto)]


@pytest.mark.parametrize(("layers", "batch"), [(24, 10**15), (MODEL_BOUNDS["layers"], 512)])
def test_plan_of_huge_models_enumerates_promptly(layers, batch):
    # trial division up to 10**15 (or a walk over every virtual-stage candidate of the deepest
    # model accepted) hung before
    m = Transformer(layers=layers, hidden=2304, heads=24, seq=2048, vocab=51200, global_batch=batch)
    table = enumerate_configs(m, Cluster(gpus=64, gpus_per_node=8))
    small = Transformer(layers=24, hidden=2304, heads=24, seq=2048, vocab=51200, global_batch=512)
    assert table.shape[1] == 10 and 0 < len(table) <= 20 * len(enumerate_configs(small, Cluster(gpus=64)))


def test_sweep_workers_beyond_the_limit_refused(tmp_path, capsys):
    spec = tmp_path / "s.json"
    spec.write_text(json.dumps({"workloads": "builtin", "policy": "tiresias"}))
    assert main(["sweep", str(spec), "-q", "--workers", "1000000000000", "--output", str(tmp_path / "o")]) == 2
    assert "--workers" in capsys.readouterr().err and not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("layers", MODEL_BOUNDS["layers"] + 1), ("hidden", 2**40), ("seq", 2**30), ("vocab", 2**30)],
)
def test_transformer_fields_over_their_stated_bound_are_refused(field, value):
    base = {"layers": 4, "hidden": 64, "heads": 4, "seq": 16, "vocab": 100, "global_batch": 8}
    with pytest.raises(ValueError, match=f"model.{field} must be <= {MODEL_BOUNDS[field]}"):
        Transformer(**{**base, field: value})


def test_cluster_over_the_stated_gpu_bound_is_refused():
    with pytest.raises(ValueError, match="cluster.gpus must be <= "):
        Cluster(gpus=10**12)
