"""``fastsched simulate`` outputs: never over an input, never over a file without --force, atomic."""

from __future__ import annotations

import errno
import json

import pytest

from fastsched.cli import main
from fastsched.sim import api

from ._helpers import TINY, listing, tiny_args, write
from ._helpers import record_and_stop as _record_and_stop


def test_output_equal_to_input_is_refused(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY)
    assert main([*tiny_args(w), "--output", w]) == 2
    assert "also an input" in capsys.readouterr().err
    assert (tmp_path / "w.csv").read_text() == TINY
    # the same file through another spelling of its path
    assert main([*tiny_args(w), "--output", str(tmp_path / "." / "w.csv"), "--force"]) == 2
    assert (tmp_path / "w.csv").read_text() == TINY


def test_existing_output_needs_force(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY)
    log = tmp_path / "log.jsonl"
    log.write_text("precious\n")
    assert main([*tiny_args(w), "--output", str(log)]) == 2
    assert "already exists" in capsys.readouterr().err and log.read_text() == "precious\n"
    assert main([*tiny_args(w), "--output", str(log), "--force"]) == 0
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert rows[:-1] and all("timestamp" in r for r in rows[:-1]) and "summary" in rows[-1]
    assert listing(tmp_path) == ["log.jsonl", "w.csv"]  # no temporary file left


@pytest.mark.parametrize("kind", ["folder", "missing-folder", "unwritable"])
def test_bad_output_paths(tmp_path, capsys, kind, monkeypatch):
    w = write(tmp_path, "w.csv", TINY)
    target = {
        "folder": tmp_path,
        "missing-folder": tmp_path / "nowhere" / "log.jsonl",
        "unwritable": tmp_path / "ro" / "log.jsonl",
    }[kind]
    if kind == "unwritable":
        (tmp_path / "ro").mkdir()

        def refuse(*a, **k):
            raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "ro"))

        monkeypatch.setattr("fastsched._atomic.tempfile.TemporaryFile", refuse)
    ran = []
    monkeypatch.setattr(api.Cluster, "step", _record_and_stop(ran))
    assert main([*tiny_args(w), "--output", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fastsched simulate: error: --output")
    assert ran == []  # refused before the first round


def test_full_disk_leaves_nothing_behind(tmp_path, capsys, monkeypatch):
    w = write(tmp_path, "w.csv", TINY)
    log = tmp_path / "log.jsonl"
    log.write_text("old\n")

    def full(self, now, seconds):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(api.Cluster, "_write_log", full)
    assert main([*tiny_args(w), "--output", str(log), "--force"]) == 2
    err = capsys.readouterr().err
    assert "no space left on the device" in err and str(log) in err and "Traceback" not in err
    assert log.read_text() == "old\n"  # the old file is untouched
    assert listing(tmp_path) == ["log.jsonl", "w.csv"]


@pytest.mark.parametrize(
    ("name", "message"),
    [("plotdir", "is a folder"), ("figure", "no format suffix"), ("figure.xyz", "unknown image format")],
)
def test_plot_path_checked_before_the_run(tmp_path, capsys, monkeypatch, name, message):
    w = write(tmp_path, "w.csv", TINY)
    (tmp_path / "plotdir").mkdir()
    ran = []
    monkeypatch.setattr(api.Cluster, "step", _record_and_stop(ran))
    before = listing(tmp_path)
    assert main([*tiny_args(w), "--plot", str(tmp_path / name)]) == 2
    assert message in capsys.readouterr().err
    assert ran == [] and listing(tmp_path) == before  # no DIR.png beside the folder, nothing written


def test_plot_is_written_after_the_summary(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    w = write(tmp_path, "w.csv", TINY)
    fig = tmp_path / "run.svg"
    assert main([*tiny_args(w), "--plot", str(fig)]) == 0
    assert "average JCT" in capsys.readouterr().out
    assert fig.read_text().lstrip().startswith("<?xml")
    assert listing(tmp_path) == ["run.svg", "w.csv"]


def test_interrupt_leaves_existing_output(tmp_path, capsys, monkeypatch):
    w = write(tmp_path, "w.csv", TINY)
    log = tmp_path / "log.jsonl"
    log.write_text("old\n")

    def step(self, seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(api.Cluster, "step", step)
    assert main([*tiny_args(w), "--output", str(log), "--force"]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "rerun" in err and "Traceback" not in err
    assert log.read_text() == "old\n" and listing(tmp_path) == ["log.jsonl", "w.csv"]
