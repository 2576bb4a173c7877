"""Defects the fuzz strategies of the simulator's entry points found (issue 27), one test each.

Each failed before its fix: a raw exception, a hang, a file written outside ``--output`` or a
non-finite number written into a profile.
"""

from __future__ import annotations

import json
import sys

import pytest

from fastsched.catalog.gpus import with_types
from fastsched.catalog.models import check_model, load_model_spec, model_spec
from fastsched.sim.policies.registry import load_policy, make_policy
from fastsched.sim.truth.oracle import write_profile

DECODER = {"layers": 2, "hidden": 64, "heads": 4, "seq": 16, "vocab": 100, "global_batch": 8}


def _model_file(tmp_path, data, name="m.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_model_name_cannot_lead_out_of_the_output_folder(tmp_path):
    # The name becomes the profile's folder: "../../x" wrote beside --output, "" into it.
    c10 = {**model_spec("cifar10")._asdict(), "noise_scale": [200.0, 2000.0]}
    out = tmp_path / "a" / "b"
    out.mkdir(parents=True)
    for name in ("../../escape", "", "a/b"):
        with pytest.raises(ValueError, match="model.name"):
            load_model_spec(_model_file(tmp_path, {**c10, "name": name}))
    with pytest.raises(ValueError, match="model.name"):
        write_profile(check_model(model_spec("ncf")._replace(name="../../escape")), ["t4"], out)
    assert not (tmp_path / "escape").exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"global_batch": 2**70}, "init_batch_size"),  # a decoder file skipped check_model
        ({"tokens": 1e29}, "samples_per_epoch"),
    ],
)
def test_decoder_file_counts_are_bounded(tmp_path, change, field):
    with pytest.raises(ValueError, match=f"model.{field}"):
        load_model_spec(_model_file(tmp_path, {**DECODER, **change}))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_epochs", 2**63),  # wrote 2**63 validation rows: ran out of memory
        ("kernels", 2**63),
        ("max_batch_size", 2**63),
        ("noise_scale", [1.0, float("inf")]),  # inf in validation-<B>.csv
        ("flops_per_sample", 1e308),  # inf step times in placements-<type>.csv
        ("family", 3),
        ("fixed_batch", "no"),
        ("transformer", [1, 2]),
    ],
)
def test_model_fields_are_range_checked(tmp_path, field, value):
    data = {**model_spec("cifar10")._asdict(), "noise_scale": [200.0, 2000.0], field: value}
    with pytest.raises(ValueError, match=f"model.{field}"):
        load_model_spec(_model_file(tmp_path, data, "cifar10.json"))


def test_model_file_that_is_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="model file"):  # was IsADirectoryError
        load_model_spec(tmp_path)


def test_profile_never_writes_non_finite_times(tmp_path):
    # A tiny efficiency (or GPU numbers near 1e-300) overflows the oracle's times to inf.
    with pytest.raises(ValueError, match="placements-aws.csv: .*step_time.*not finite"):
        write_profile("cifar10", ["t4"], tmp_path, efficiencies={"aws": 1e-320})
    with pytest.raises(ValueError, match="grad_var.*not finite"):
        write_profile(check_model(model_spec("ncf")._replace(noise_scale=(1e-320, 1.0))), ["t4"], tmp_path)


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"base": "t4", "bf16_tflops": 1e308}, "bf16_tflops"),  # "cannot convert float NaN to integer"
        ({"base": "t4", "memory_gib": 1e308}, "memory_gib"),
        ({"base": "t4", "trace_name": "../../evil"}, "trace_name"),  # placements-../../evil.csv
        ({"base": "t4", "trace_name": "a/b"}, "trace_name"),
    ],
)
def test_gpu_type_numbers_and_names_are_bounded(spec, field):
    with pytest.raises(ValueError, match=f"gpu_types.x.{field}"):
        with_types({"x": spec})


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    (tmp_path / "fz_syntax.py").write_text("def x(:\n")
    (tmp_path / "fz_raises.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "fz_classes.py").write_text(
        "from fastsched.sim.policies.base import SimPolicy\n"
        "class NeedsArg(SimPolicy):\n    def __init__(self, x):\n        self.x = x\n"
        "class Raises(SimPolicy):\n    def __init__(self, **kw):\n        raise RuntimeError('init boom')\n"
        "class Meta(type):\n    def __getattr__(cls, name):\n        raise RuntimeError('getattr boom')\n"
        "class Weird(metaclass=Meta):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for mod in ("fz_syntax", "fz_raises", "fz_classes"):
        sys.modules.pop(mod, None)


@pytest.mark.parametrize(
    "name", ["fz_syntax:X", "fz_raises:X", "fz_classes:Weird.attr", "..:X", "fz_classes:NeedsArg", "fz_classes:Raises"]
)
def test_malformed_plugins_are_named(plugins, name):
    # A plugin module's SyntaxError or RuntimeError, a relative module name, a class attribute
    # lookup that raises, a constructor that needs arguments or raises: one ValueError naming it.
    with pytest.raises(ValueError, match=f"policy {name!r}"):
        make_policy(name)
    if name.endswith(("NeedsArg", "Raises")):
        assert load_policy(name).__name__ in name  # the class itself is fine; building it fails


@pytest.mark.parametrize(("tokens", "fixed"), [(float("inf"), True), (1e308, True), (-1, True), (1e9, "no")])
def test_decoder_file_tokens_and_flags(tmp_path, tokens, fixed):
    # tokens=Infinity raised a bare OverflowError; "fixed_batch": "no" was read as true.
    field = "tokens" if fixed is True else "fixed_batch"
    with pytest.raises(ValueError, match=f"model.{field}"):
        load_model_spec(_model_file(tmp_path, {**DECODER, "tokens": tokens, "fixed_batch": fixed}))


def test_cluster_groups_numpy_counts_and_a_bare_group():
    import numpy as np

    from fastsched.sim.inputs.cluster_spec import parse_cluster

    # numpy integers (as WorkloadJob takes them) were refused; a bare group unpacked its type's letters.
    spec = parse_cluster([("aws", np.int64(2), np.int32(4))])
    assert spec.total_gpus == 8 and type(spec.groups[0].count) is int
    with pytest.raises(ValueError, match="node group 0: expected \\(type, count, gpus_per_node\\), got 'aws'"):
        parse_cluster(["aws", 1, 4])
    with pytest.raises(ValueError, match="gpus_per_node must be an integer"):
        parse_cluster([("aws", 1, np.float32(4.0))])
