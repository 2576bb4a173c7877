"""Format detection by the first bytes, and the format= override."""

from __future__ import annotations

import pytest

from fastsched.sim.inputs.logs import detect_format, read_log

from . import _write as w


def test_each_format_is_recognised(tmp_path):
    t = "2020-06-09 18:41:01"
    assert detect_format(w.helios(tmp_path, [("1", "u", "v", 1, 1, "COMPLETED", t, t, t)])) == "helios"
    assert detect_format(w.slurm(tmp_path, [])) == "slurm"
    assert detect_format(w.philly(tmp_path, [])) == "philly"
    (tmp_path / "lines").write_text('{"jobid": "a"}\n')
    assert detect_format(tmp_path / "lines") == "philly"
    folder = w.pai(tmp_path / "pai", [("j", "i", "u", "Terminated", 1.0, 2.0)], [])
    assert detect_format(folder) == "pai"
    assert detect_format(folder / "pai_job_table.csv") == "pai"
    renamed = tmp_path / "jobs.csv"  # no telling name: the first row's six PAI columns decide
    renamed.write_text((folder / "pai_job_table.csv").read_text())
    assert detect_format(renamed) == "pai"
    headed = w.pai(tmp_path / "pai2", [("j", "i", "u", "Terminated", 1.0, 2.0)], [], header=True)
    assert detect_format(headed / "pai_job_table.csv") == "pai"


def test_bom_and_leading_blanks(tmp_path):
    p = tmp_path / "log.csv"
    p.write_bytes("\ufeff".encode() + w.HELIOS_HEADER.encode() + b"\n")
    assert detect_format(p) == "helios"
    p.write_text("\n\n  [\n]")
    assert detect_format(p) == "philly"
    assert len(read_log(p).jobs) == 0


def test_unknown_format_asks_for_format(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(ValueError, match="cannot tell the log format.*pass format="):
        detect_format(p)
    with pytest.raises(FileNotFoundError):
        detect_format(tmp_path / "missing")
    with pytest.raises(ValueError, match="a folder is read only as a PAI log"):
        detect_format(tmp_path)


def test_format_override_reads_a_file_detection_would_refuse(tmp_path):
    """A renamed PAI job table with lower-case statuses: no telling sign, but it reads when named."""
    folder = w.pai(
        tmp_path / "pai", [("j", "i", "u", "terminated", 1.0, 9.0)], [("j", "w", 1.0, "x", 2.0, 9.0, 1, 1, 100, "T4")]
    )
    jobs = tmp_path / "jobs.csv"
    jobs.write_text((folder / "pai_job_table.csv").read_text())
    with pytest.raises(ValueError, match="cannot tell the log format"):
        detect_format(jobs)
    r = read_log(jobs, format="pai", tasks=folder / "pai_task_table.csv")
    assert (r.jobs.name.tolist(), r.jobs.gpus.tolist(), r.jobs.duration.tolist()) == (["j"], [1], [7.0])
    with pytest.raises(ValueError, match=":1: missing column"):
        read_log(jobs, format="helios")
