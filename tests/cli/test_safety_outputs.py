"""One output-path policy for every command (issue 28.5, 26.4): no input written, no silent replace, atomic, umask."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from fastsched._atomic import atomic_open, check_output
from fastsched.cli import main
from fastsched.sim import api

from ._helpers import TINY, listing, tiny_args, write
from ._helpers import record_and_stop as _record_and_stop

TOML = '[[group]]\ntype = "aws"\ncount = 1\n'


@pytest.fixture
def umask022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_output_onto_the_cluster_file_is_refused_even_with_force(tmp_path, capsys, monkeypatch):
    w = write(tmp_path, "w.csv", TINY)
    c = write(tmp_path, "c.toml", TOML)
    ran = []
    monkeypatch.setattr(api.Cluster, "step", _record_and_stop(ran))
    args = ["simulate", w, "--cluster", c, "--traces", str(tmp_path), "-q", "--output", c, "--force"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "input" in err and "c.toml" in err and err.count("\n") == 1
    assert (tmp_path / "c.toml").read_text() == TOML and ran == []


def test_output_inside_the_traces_folder_is_refused(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY)
    traces = tmp_path / "traces"
    (traces / "ncf").mkdir(parents=True)
    trace = write(traces / "ncf", "placements.csv", "mine")
    assert main([*tiny_args(w), "--traces", str(traces), "--output", trace, "--force"]) == 2
    assert "input folder" in capsys.readouterr().err
    # a new file inside the folder destroys nothing
    assert check_output(traces / "log.jsonl", inputs=[traces]).name == "log.jsonl"
    assert (traces / "ncf" / "placements.csv").read_text() == "mine"


def test_simulate_api_never_writes_its_cluster_file(tmp_path):
    c = write(tmp_path, "c.toml", TOML)
    with pytest.raises(ValueError, match="input"):
        api.simulate(None, cluster=c, traces=str(tmp_path), output=c)
    assert (tmp_path / "c.toml").read_text() == TOML


def test_non_regular_target_is_refused(tmp_path, capsys):
    w = write(tmp_path, "w.csv", TINY)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert main([*tiny_args(w), "--output", str(fifo), "--force"]) == 2
    assert "not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_symlink_is_written_through(tmp_path, capsys, umask022):
    w = write(tmp_path, "w.csv", TINY)
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    os.chmod(real, 0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert main([*tiny_args(w), "--output", str(link)]) == 2  # the file it points to exists
    assert "already exists" in capsys.readouterr().err
    assert main([*tiny_args(w), "--output", str(link), "--force"]) == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert '"summary"' in real.read_text() and _mode(real) == 0o640  # replaced, keeping its mode
    assert listing(tmp_path) == ["link.jsonl", "real.jsonl", "w.csv"]


def test_output_log_and_plot_get_the_mode_of_a_plain_open(tmp_path, umask022):
    w = write(tmp_path, "w.csv", TINY)
    log = tmp_path / "log.jsonl"
    extra = []
    if _has_matplotlib():
        extra = ["--plot", str(tmp_path / "run.svg")]
    assert main([*tiny_args(w), "--output", str(log), *extra]) == 0
    assert _mode(log) == 0o644
    if extra:
        assert _mode(tmp_path / "run.svg") == 0o644


def test_atomic_write_respects_another_umask(tmp_path):
    old = os.umask(0o077)
    try:
        with atomic_open(tmp_path / "a.txt") as f:
            f.write("x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a.txt") == 0o600


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_cost_timeline_is_not_replaced_silently(tmp_path, capsys, umask022, shared_dir):
    pytest.importorskip("matplotlib")
    case = shared_dir / "paddle-cases" / "pp_tfm_L16_S2.json"
    png = tmp_path / "t.png"
    png.write_bytes(b"mine")
    assert main(["cost", str(case), "--timeline", str(png)]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and err.count("\n") == 1
    assert png.read_bytes() == b"mine"
    fresh = tmp_path / "new.png"
    assert main(["cost", str(case), "--timeline", str(fresh)]) == 0
    assert fresh.read_bytes().startswith(b"\x89PNG") and _mode(fresh) == 0o644
    assert listing(tmp_path) == ["new.png", "t.png"]


def test_policy_names_the_missing_force_flag(tmp_path):
    (tmp_path / "a").write_text("x")
    with pytest.raises(ValueError, match="remove it first"):
        check_output(tmp_path / "a", what="--timeline", force_flag=None)


_SLOW_RUN = """
import sys, time
from fastsched.sim import api
step = api.Cluster.step
def slow(self, seconds):
    time.sleep(0.05)
    return step(self, seconds)
api.Cluster.step = slow
from fastsched.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_removes_the_temporary_file(tmp_path, sig):
    if signal.getsignal(sig) == signal.SIG_IGN:  # e.g. under nohup: the run inherits it, and keeps it ignored
        pytest.skip(f"{sig.name} is ignored in this process, so in the run too")
    w = write(tmp_path, "w.csv", TINY)
    out = tmp_path / "o"
    out.mkdir()
    (out / "log.jsonl").write_text("precious\n")
    args = [*tiny_args(w), "--output", str(out / "log.jsonl"), "--force", "--max-time", "100000"]
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_RUN, *args], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while len(os.listdir(out)) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert len(os.listdir(out)) == 2, "the run never opened its temporary file"
        time.sleep(0.2)  # some rounds written into it
        proc.send_signal(sig)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -sig  # ended by the signal, as without the handler
    assert os.listdir(out) == ["log.jsonl"] and (out / "log.jsonl").read_text() == "precious\n"
