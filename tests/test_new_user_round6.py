"""A new study of 2026: a model of one's own through plan, profile and simulate; oracle jobs on
clusters named by catalogue aliases; scaled studies whose records say what was scaled.

Found by using the command line and the library from the documentation alone (sixth round).
"""

from __future__ import annotations

import json

import pytest

from fastsched.cli import main
from fastsched.sim import WorkloadJob, simulate

MODEL = {"layers": 2, "hidden": 64, "heads": 4, "seq": 16, "vocab": 100, "global_batch": 8}


# -- one model file for plan and profile --------------------------------------------------------
@pytest.mark.parametrize("extra", [{"name": "mine"}, {"tokens": 1e6}, {"fixed_batch": False}])
def test_plan_reads_the_model_file_profile_reads(tmp_path, capsys, extra):
    # profile's model file (plan's format plus a name, token budget or batch rule) plans too
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**MODEL, **extra}))
    assert main(["plan", str(path), "--gpus", "4", "--gpu", "h100", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows, "no configuration ranked"


def test_plan_still_refuses_a_field_neither_command_knows(tmp_path, capsys):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({**MODEL, "bogus": 1}))
    assert main(["plan", str(path), "--gpus", "4"]) == 2
    assert "bogus" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["garbage{", "\udcff"])
def test_plan_names_the_model_file_it_cannot_read(tmp_path, capsys, text):
    path = tmp_path / "m.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert main(["plan", str(path), "--gpus", "4"]) == 2
    err = capsys.readouterr().err
    assert "m.json" in err and "Traceback" not in err
