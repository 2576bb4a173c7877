"""NodeInfo's optional GPU type: additive, keyword-only, ignored by the policy."""

from __future__ import annotations

import pickle

import pytest

from fastsched.policy import JobInfo, NodeInfo, PolluxPolicy

GPU = "nvidia.com/gpu"


def test_untyped_by_default_and_repr_unchanged():
    node = NodeInfo({GPU: 4}, False)
    assert node.gpu_type is None
    assert repr(node) == "NodeInfo(resources={'nvidia.com/gpu': 4}, preemptible=False)"


def test_typed_node_keeps_its_type():
    node = NodeInfo({GPU: 8}, preemptible=True, gpu_type="dgx-ext")
    assert node.gpu_type == "dgx-ext"
    assert "gpu_type='dgx-ext'" in repr(node)
    assert pickle.loads(pickle.dumps(node)).gpu_type == "dgx-ext"


def test_gpu_type_is_keyword_only():
    with pytest.raises(TypeError):
        NodeInfo({GPU: 4}, False, "aws")


@pytest.mark.parametrize("bad, exc", [(3, TypeError), (b"aws", TypeError), ("", ValueError)])
def test_bad_gpu_type_names_the_field(bad, exc):
    with pytest.raises(exc, match="NodeInfo.gpu_type"):
        NodeInfo({GPU: 4}, False, gpu_type=bad)


def test_policy_result_identical_with_typed_nodes(speedup_fn):
    jobs = {i: JobInfo({GPU: 1, "pods": 1}, speedup_fn, i, 0, 8) for i in range(4)}

    def run(types):
        nodes = {i: NodeInfo({GPU: 4, "pods": 32}, False, gpu_type=types[i]) for i in range(3)}
        tmpl = NodeInfo({GPU: 4, "pods": 32}, True, gpu_type=types[0])
        return PolluxPolicy(seed=7, generations=20).optimize(jobs, nodes, {0: [0, 0]}, tmpl)

    assert run([None, None, None]) == run(["aws", "aws", "rtx"])
