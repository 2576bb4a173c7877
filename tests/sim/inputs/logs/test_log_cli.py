"""``fastsched workload from-log``: its parser (as ``fastsched.cli`` would route it) and run, on a parser of its own."""

from __future__ import annotations

import argparse
import csv

import pytest

from fastsched.cli import route_argv
from fastsched.sim._from_log_cli import register
from fastsched.sim.inputs.logs import synthetic_log
from fastsched.sim.inputs.workload import read_workload


def _parse(argv):
    parser = argparse.ArgumentParser(prog="fastsched")
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(route_argv(argv))


def test_from_log_writes_a_workload_and_the_ids(tmp_path, capsys):
    log = synthetic_log(tmp_path / "cluster_log.csv", num_jobs=5000, seed=3).path
    out, ids = tmp_path / "w.csv", tmp_path / "ids.csv"
    args = _parse(
        ["workload", "from-log", str(log), "--sample", "40", "--seed", "2", "-o", str(out), "--ids", str(ids)]
    )
    assert args.func(args) == 0
    jobs = read_workload(out)
    assert len(jobs) == 40
    with open(ids, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["name"] for r in rows] == [j.name for j in jobs]
    text = capsys.readouterr().out
    assert "helios log: 5000 read, 5000 kept" in text and "40 jobs drawn" in text
    # the same arguments, the same file
    again = tmp_path / "w2.csv"
    args = _parse(["workload", "from-log", str(log), "--sample", "40", "--seed", "2", "-o", str(again), "-q"])
    args.func(args)
    assert again.read_text() == out.read_text()


def test_from_log_rate_absolute_window_and_bad_flags(tmp_path):
    log = synthetic_log(tmp_path / "cluster_log.csv", num_jobs=5000, seed=3).path
    out = tmp_path / "w.csv"
    args = _parse(
        ["workload", "from-log", str(log), "--sample", "10/h", "--absolute", "--window", "0,4", "-o", str(out), "-q"]
    )
    assert args.daily is False
    args.func(args)
    assert len(read_workload(out)) == 40 and max(j.time for j in read_workload(out)) < 4 * 3600
    args = _parse(["workload", "from-log", str(log), "--sample", "lots", "-o", str(out)])
    with pytest.raises(ValueError, match="--sample must be a job count"):
        args.func(args)
    args = _parse(["workload", "from-log", str(log), "--sample", "5", "--window", "2-10", "-o", str(out)])
    with pytest.raises(ValueError, match="--window must be START,END in hours"):
        args.func(args)


def test_the_workload_generators_help_names_from_log(capsys):
    # `from-log` is its own command under the hood (route_argv); a user reading `workload --help` must still find it
    from fastsched.cli import main

    with pytest.raises(SystemExit):
        main(["workload", "--help"])
    assert "fastsched workload from-log" in " ".join(capsys.readouterr().out.split())
