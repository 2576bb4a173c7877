"""Sweep specs, seeds, tables, resume and the CLI, without dask (serial runner)."""

from __future__ import annotations

import csv
import json

import pytest

from fastsched.sweep import derive_seed, load_spec, run_serial
from tests.sweep._helpers import comparable, small_spec, write_workloads


def test_grid_expansion_and_order(tmp_path):
    spec = load_spec(small_spec(tmp_path))
    runs = spec.runs()
    assert len(spec.configs()) == 4 and len(runs) == 8
    assert [r.config["interval"] for r in runs] == [30, 30, 60, 60] * 2
    assert len({r.run_id for r in runs}) == 8
    assert all(r.kwargs["policy"] == "tiresias" and r.kwargs["seed"] == r.seed for r in runs)


def test_seeds_deterministic_and_order_independent():
    cfg = {"workload": "builtin", "interval": 60, "nodes": 4}
    same = {"nodes": 4, "interval": 60, "workload": "builtin"}
    assert derive_seed(3, cfg, 0) == derive_seed(3, same, 0)
    seeds = {derive_seed(3, cfg, r) for r in range(5)} | {
        derive_seed(4, cfg, 0),
        derive_seed(3, {**cfg, "nodes": 8}, 0),
    }
    assert len(seeds) == 7
    assert all(0 <= s < 2**31 for s in seeds)


def test_explicit_seed_list(tmp_path):
    runs = load_spec(small_spec(tmp_path, seeds=[11, 12])).runs()
    assert [r.seed for r in runs[:2]] == [11, 12]


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"intervals": [30]}, "intervals"),
        ({"interval": []}, "interval"),
        ({"seeds": 0}, "seeds"),
        ({"seeds": []}, "seeds"),
        ({"workloads": []}, "workloads"),
        ({"workloads": ["missing.csv"]}, "workloads"),
        ({"policy": "no-such-policy"}, "policy"),
        ({"nodes": [4, 0]}, "nodes"),
        ({"interference": 1.5}, "interference"),
        ({"traces": "no/such/dir"}, "traces"),
        ({"preset": "nope"}, "preset"),
        ({"policy_options": [1, 2]}, "policy_options"),
    ],
)
def test_bad_spec_names_the_key(tmp_path, extra, key):
    with pytest.raises(ValueError, match=repr(key)):
        load_spec(small_spec(tmp_path, **extra), base_dir=tmp_path)


def test_missing_workloads_key_and_unknown_key_hint(tmp_path):
    with pytest.raises(ValueError, match="'workloads' is required"):
        load_spec({"interval": 60})
    with pytest.raises(ValueError, match="did you mean 'workloads'"):
        load_spec({"workload": "builtin"})


def test_file_formats_resolve_relative_paths(tmp_path):
    write_workloads(tmp_path)
    (tmp_path / "s.json").write_text(json.dumps({"workloads": ["a.csv"], "interval": [30, 60]}))
    (tmp_path / "s.toml").write_text('workloads = ["a.csv"]\ninterval = [30, 60]\n')
    a, b = load_spec(tmp_path / "s.json"), load_spec(tmp_path / "s.toml")
    assert a.configs() == b.configs()
    assert a.runs()[0].kwargs["workload"] == str(tmp_path / "a.csv")
    (tmp_path / "s.ini").write_text("x")
    with pytest.raises(ValueError, match="unknown spec format"):
        load_spec(tmp_path / "s.ini")
    (tmp_path / "bad.toml").write_text("workloads = [")
    with pytest.raises(ValueError, match="could not parse"):
        load_spec(tmp_path / "bad.toml")


def test_yaml_spec(tmp_path):
    pytest.importorskip("yaml", reason="PyYAML not installed (YAML specs are optional)")
    write_workloads(tmp_path)
    (tmp_path / "s.yaml").write_text("workloads: [a.csv]\ninterval: [30, 60]\nseeds: 2\n")
    assert len(load_spec(tmp_path / "s.yaml").runs()) == 4


def test_serial_tables_errors_and_resume(tmp_path):
    spec = small_spec(tmp_path, nodes=[2, 1], gpus=[4, 2], interval=60)  # 1 x 2 GPUs cannot run a 4-GPU job
    out = tmp_path / "out"
    res = run_serial(spec, output_dir=out)
    assert len(res.rows) == 16
    bad = [r for r in res.rows if r["error"]]
    assert bad and all("more GPUs" in r["error"] for r in bad)
    assert all(r["workload"].endswith("a.csv") and r["nodes"] * r["gpus"] < 4 for r in bad)
    ok = [r for r in res.rows if not r["error"]]
    assert all(r["avg_jct_s"] > 0 and r["makespan_s"] > 0 and 0 < r["gpu_utilization"] <= 1 for r in ok)
    with open(out / "runs.csv") as f:
        assert len(list(csv.DictReader(f))) == 16
    assert len(json.loads((out / "runs.json").read_text())) == 16
    with open(out / "summary.csv") as f:
        summary = list(csv.DictReader(f))
    assert len(summary) == 8 and {s["runs"] for s in summary} == {"2"}
    assert "avg_jct_s_mean" in summary[0] and "avg_jct_s_std" in summary[0]

    calls = []

    def counting(**kw):
        from fastsched.sim import simulate

        calls.append(kw)
        return simulate(**kw)

    again = run_serial(spec, output_dir=out, simulate_fn=counting)
    assert len(calls) == len(bad)  # only the failed runs are retried
    assert again.skipped == 16 - len(bad)
    assert comparable(again.rows) == comparable(res.rows)


def test_cli_serial(tmp_path, capsys):
    from fastsched.cli import main

    spec = small_spec(tmp_path, seeds=1, interval=60)
    (tmp_path / "s.json").write_text(json.dumps(spec))
    rc = main(["sweep", str(tmp_path / "s.json"), "--serial", "--output", str(tmp_path / "o"), "-q"])
    assert rc == 0
    assert "avg_jct_s" in capsys.readouterr().out
    assert (tmp_path / "o" / "summary.csv").is_file()
    (tmp_path / "bad.json").write_text(json.dumps({**spec, "bogus": 1}))
    assert main(["sweep", str(tmp_path / "bad.json"), "--serial", "-q"]) == 2
    assert "bogus" in capsys.readouterr().err
