"""Each reader on small logs written from its published schema: values, drops and malformed rows."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fastsched.sim.inputs.logs import FINISHED_STATES, read_log

from . import _write as w

T0 = "2020-06-09 18:41:01"


# --------------------------------------------------------------------------- Helios
def _helios_rows():
    return [
        # job_id, user, vc, gpu_num, node_num, state, submit, start, end
        ("1425511", "uXBbc", "vcJkd", 1, 1, "COMPLETED", T0, T0, "2020-06-10 04:55:09"),
        (
            "1425512",
            "uVMrF",
            "vchbv",
            4,
            1,
            "FAILED",
            "2020-06-09 18:41:27",
            "2020-06-09 18:41:27",
            "2020-06-09 18:45:36",
        ),
        (
            "1425513",
            "uzqls",
            "vcpDC",
            0,
            1,
            "CANCELLED",
            "2020-06-09 18:41:28",
            "2020-06-09 18:41:28",
            "2020-06-17 14:15:21",
        ),
        (
            "1425514",
            "uzqls",
            "vcpDC",
            16,
            2,
            "TIMEOUT",
            "2020-06-09 18:41:30",
            "2020-06-09 18:51:30",
            "2020-06-09 19:51:30",
        ),
        ("1425515", "uzqls", "vcpDC", 8, 1, "RUNNING", "2020-06-09 18:42:00", "2020-06-09 18:42:00", ""),
        ("1425516", "uzqls", "vcpDC", 8, 1, "CANCELLED", "2020-06-09 18:43:00", "", "2020-06-09 18:44:00"),
    ]


def test_helios_values_and_drops(tmp_path):
    r = read_log(w.helios(tmp_path, _helios_rows()))
    assert r.format == "helios"
    assert r.dropped == {"unfinished": 1, "never started": 1, "no GPUs": 1}
    assert r.rows == 6 == len(r.jobs) + sum(r.dropped.values())
    j = r.jobs
    assert j.name.tolist() == ["1425511", "1425512", "1425514"]
    # Durations from the README's example rows (36848 s, 249 s) and one hour for the third.
    assert j.duration.tolist() == [36848.0, 249.0, 3600.0]
    assert j.submit.tolist() == [0.0, 26.0, 29.0]
    assert j.queued.tolist() == [0.0, 0.0, 600.0]
    assert j.gpus.tolist() == [1, 4, 16] and j.nodes.tolist() == [1, 1, 2]
    assert j.state.tolist() == ["completed", "failed", "timeout"]
    assert j.vc.tolist() == ["vcJkd", "vchbv", "vcpDC"] and j.user[0] == "uXBbc"
    assert r.origin == float(np.datetime64("2020-06-09T18:41:01", "s").astype(np.int64))


def test_helios_extra_jobname_column_and_any_order(tmp_path):
    header = "submit_time,job_id,jobname,user,vc,gpu_num,cpu_num,node_num,state,start_time,end_time,duration,queue"
    p = tmp_path / "c.csv"
    p.write_text(header + f"\n{T0},7,train a,u,vc,2,8,1,COMPLETED,{T0},2020-06-09 18:42:01,60,0\n")
    r = read_log(p)
    assert (r.jobs[0].name, r.jobs[0].gpus, r.jobs[0].duration) == ("7", 2, 60.0)


@pytest.mark.parametrize(
    "row, col, pattern",
    [
        # a missing field: the job id
        (("", "u", "vc", 1, 1, "COMPLETED", T0, T0, T0), 1, "job_id must not be empty"),
        # a bad number
        (("9", "u", "vc", "two", 1, "COMPLETED", T0, T0, T0), 4, "gpu_num must be a number, got 'two'"),
        (("9", "u", "vc", 1.5, 1, "COMPLETED", T0, T0, T0), 4, "gpu_num must be a whole number"),
        (("9", "u", "vc", -1, 1, "COMPLETED", T0, T0, T0), 4, "gpu_num must be >= 0"),
        # a bad time
        (("9", "u", "vc", 1, 1, "COMPLETED", "2020-13-01 00:00:00", T0, T0), 8, "submit_time must be a date and time"),
        (("9", "u", "vc", 1, 1, "COMPLETED", "", T0, T0), 8, "submit_time must not be empty"),
        # an unknown state
        (("9", "u", "vc", 1, 1, "EXPLODED", T0, T0, T0), 7, "state must be one of .*got 'EXPLODED'"),
        # end before start
        (
            ("9", "u", "vc", 1, 1, "COMPLETED", T0, "2020-06-09 19:00:00", "2020-06-09 18:59:00"),
            10,
            "end_time ends before the job starts",
        ),
    ],
)
def test_helios_malformed_row_names_file_line_and_field(tmp_path, row, col, pattern):
    p = w.helios(tmp_path, _helios_rows()[:2] + [row])
    with pytest.raises(ValueError, match=re.escape(f"{p}:4:{col}: ") + pattern):
        read_log(p)
    # Dropping instead: the row is counted, the rest is read, the message kept.
    r = read_log(p, on_error="drop")
    assert r.dropped["malformed row"] == 1 and len(r.jobs) == 2
    assert re.match(re.escape(f"{p}:4:{col}: ") + pattern, r.errors[0])


def test_helios_duplicate_id_and_short_row(tmp_path):
    p = w.helios(tmp_path, _helios_rows()[:2] + [_helios_rows()[0]])
    with pytest.raises(ValueError, match=re.escape(f"{p}:4: duplicate job id '1425511' (first on line 2)")):
        read_log(p)
    p.write_text(w.HELIOS_HEADER + "\n1,u,vc,1\n")
    with pytest.raises(ValueError, match=re.escape(f"{p}:2: too few fields (4 of 12)")):
        read_log(p)


def test_helios_missing_column_and_empty_file(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("job_id,user,vc,gpu_num,state,submit_time,start_time\n")
    with pytest.raises(ValueError, match=r":1: missing column\(s\) \['end_time'\]"):
        read_log(p, format="helios")
    p.write_text("")
    with pytest.raises(ValueError, match="empty file"):
        read_log(p, format="helios")


def test_zero_gpu_jobs_dropped_only_with_gpu_only(tmp_path):
    p = w.helios(tmp_path, _helios_rows())
    assert "no GPUs" in read_log(p).dropped
    r = read_log(p, gpu_only=False)
    assert "no GPUs" not in r.dropped and 0 in r.jobs.gpus.tolist()


def test_chunk_boundaries_keep_line_numbers(tmp_path, monkeypatch):
    """A log read in chunks of 3 rows gives the same jobs, and an error's line is still right."""
    from fastsched.sim.inputs.logs import _parse

    rows = [
        (
            str(i),
            "u",
            "vc",
            1 + i % 3,
            1,
            "COMPLETED",
            f"2020-06-09 18:{i:02d}:00",
            f"2020-06-09 18:{i:02d}:00",
            f"2020-06-09 19:{i:02d}:00",
        )
        for i in range(20)
    ]
    p = w.helios(tmp_path, rows)
    whole = read_log(p)
    monkeypatch.setattr(_parse, "CHUNK", 3)
    assert read_log(p).jobs == whole.jobs
    rows[13] = rows[13][:5] + ("BOGUS",) + rows[13][6:]
    p = w.helios(tmp_path, rows)
    with pytest.raises(ValueError, match=re.escape(f"{p}:15:7: state")):
        read_log(p)


# --------------------------------------------------------------------------- Slurm
def _slurm_rows():
    return [
        (
            "100",
            "alice",
            "gpu",
            "COMPLETED",
            "2023-05-01T10:00:00",
            "2023-05-01T10:00:10",
            "2023-05-01T11:00:10",
            1,
            "billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1",
            "billing=8,cpu=8,gres/gpu=2,mem=64G,node=1",
        ),
        (
            "100.batch",
            "",
            "gpu",
            "COMPLETED",
            "2023-05-01T10:00:10",
            "2023-05-01T10:00:10",
            "2023-05-01T11:00:10",
            1,
            "cpu=8,gres/gpu=2,mem=64G,node=1",
            "",
        ),
        (
            "100.extern",
            "",
            "gpu",
            "COMPLETED",
            "2023-05-01T10:00:10",
            "2023-05-01T10:00:10",
            "2023-05-01T11:00:10",
            1,
            "cpu=8,gres/gpu=2,mem=64G,node=1",
            "",
        ),
        (
            "101",
            "bob",
            "gpu",
            "CANCELLED by 1000",
            "2023-05-01T10:05:00",
            "None",
            "2023-05-01T10:06:00",
            1,
            "",
            "cpu=4,gres/gpu=4,node=1",
        ),
        (
            "102",
            "bob",
            "cpu",
            "COMPLETED",
            "2023-05-01T10:07:00",
            "2023-05-01T10:07:00",
            "2023-05-01T10:09:00",
            1,
            "cpu=2,mem=1G,node=1",
            "cpu=2,mem=1G,node=1",
        ),
        (
            "103",
            "bob",
            "gpu",
            "RUNNING",
            "2023-05-01T10:08:00",
            "2023-05-01T10:08:00",
            "Unknown",
            2,
            "cpu=16,gres/gpu=16,node=2",
            "",
        ),
        (
            "104_3",
            "carol",
            "long",
            "TIMEOUT",
            "2023-05-01T10:09:00",
            "2023-05-01T10:19:00",
            "2023-05-02T10:19:00",
            2,
            "cpu=32,gres/gpu:v100=8,gres/gpu:t4=8,node=2",
            "",
        ),
        (
            "105",
            "carol",
            "gpu",
            "OUT_OF_MEMORY",
            "2023-05-01T10:10:00",
            "2023-05-01T10:10:00",
            "2023-05-01T10:11:00",
            1,
            "cpu=1,gres/gpu=1,node=1",
            "",
        ),
    ]


def test_slurm_values_steps_and_gpus(tmp_path):
    r = read_log(w.slurm(tmp_path, _slurm_rows()))
    assert r.format == "slurm"
    assert r.dropped == {"job step": 2, "unfinished": 1, "never started": 1, "no GPUs": 1}
    assert r.rows == 8
    j = r.jobs
    assert j.name.tolist() == ["100", "104_3", "105"]
    assert j.gpus.tolist() == [2, 16, 1] and j.nodes.tolist() == [1, 2, 1]
    assert j.gpu_type.tolist() == ["a100", "t4+v100", ""]
    assert j.duration.tolist() == [3600.0, 86400.0, 60.0]
    assert j.queued.tolist() == [10.0, 600.0, 0.0]
    assert j.state.tolist() == ["completed", "timeout", "out_of_memory"]
    assert j.vc.tolist() == ["gpu", "long", "gpu"]


def test_slurm_old_gres_column_and_errors(tmp_path):
    p = tmp_path / "s.txt"
    p.write_text(
        "JobID|State|Submit|Start|End|AllocGRES\n1|COMPLETED|2023-05-01T10:00:00|2023-05-01T10:00:00|2023-05-01T10:01:00|gpu:tesla:2(IDX:0-1)\n"
    )
    assert (read_log(p).jobs[0].gpus, read_log(p).jobs[0].gpu_type) == (2, "tesla")
    p.write_text("JobID|State|Submit|Start|End\n")
    with pytest.raises(ValueError, match=r":1: missing column AllocTRES"):
        read_log(p)
    p.write_text(
        "JobID|State|Submit|Start|End|AllocTRES\n1|COMPLETED|2023-05-01T10:00:00|2023-05-01T10:00:00|2023-05-01T10:01:00|gres/gpu=x\n"
    )
    with pytest.raises(ValueError, match=re.escape(f"{p}:2:6: AllocTRES has a GPU count that is not a whole number")):
        read_log(p)
    p.write_text(
        "JobID|State|Submit|Start|End|AllocTRES\n1|WEIRD|2023-05-01T10:00:00|2023-05-01T10:00:00|2023-05-01T10:01:00|gres/gpu=1\n"
    )
    with pytest.raises(ValueError, match=re.escape(f"{p}:2:2: State must be one of")):
        read_log(p)


# --------------------------------------------------------------------------- Philly
def _philly_jobs():
    return [
        # The README's example entry: two attempts of 8 GPUs on one machine.
        w.philly_job(
            "application_1506638472019_14199",
            "Pass",
            "2017-10-07 01:11:39",
            [
                ("2017-10-07 01:12:09", "2017-10-07 01:13:23", [("m47", 8)]),
                ("2017-10-07 01:13:30", "2017-10-09 06:53:12", [("m412", 8)]),
            ],
            vc="ee9e8c",
            user="ce2f4c",
        ),
        w.philly_job(
            "app_2",
            "Killed",
            "2017-10-07 01:20:00",
            [("2017-10-07 01:21:00", "2017-10-07 02:21:00", [("m1", 8), ("m2", 8)])],
        ),
        w.philly_job("app_3", "Failed", "2017-10-07 01:30:00", []),  # no attempt: never ran
        w.philly_job(
            "app_4", "Pass", "2017-10-07 01:40:00", [("2017-10-07 01:41:00", None, [("m3", 1)])]
        ),  # still running
        w.philly_job("app_5", "Failed", "2017-10-07 01:50:00", [("None", "2017-10-07 01:55:00", [("m3", 1)])]),
    ]


def test_philly_values_follow_the_notebook_definitions(tmp_path):
    r = read_log(w.philly(tmp_path, _philly_jobs()))
    assert r.format == "philly"
    assert r.dropped == {"unfinished": 1, "never started": 2}
    j = r.jobs
    assert j.name.tolist() == ["application_1506638472019_14199", "app_2"]
    # first attempt's start to last attempt's end: 2017-10-07 01:12:09 -> 2017-10-09 06:53:12
    assert j.duration.tolist() == [2 * 86400 + 5 * 3600 + 41 * 60 + 3, 3600.0]
    assert j.gpus.tolist() == [8, 16] and j.nodes.tolist() == [1, 2]
    assert j.queued.tolist() == [30.0, 60.0]
    assert j.state.tolist() == ["completed", "cancelled"] and j.vc[0] == "ee9e8c"


def test_philly_json_lines_and_chunk_boundaries(tmp_path, monkeypatch):
    from fastsched.sim.inputs.logs import philly as mod

    jobs = _philly_jobs() * 1
    for k, job in enumerate(jobs):
        job["jobid"] = f"a{k}"
    whole = read_log(w.philly(tmp_path, jobs))
    monkeypatch.setattr(mod, "_READ", 7)  # jobs cut mid-value many times over
    assert read_log(w.philly(tmp_path, jobs)).jobs == whole.jobs
    p = tmp_path / "lines.json"
    p.write_text("\n".join(__import__("json").dumps(j) for j in jobs))
    assert read_log(p).jobs == whole.jobs


@pytest.mark.parametrize(
    "mutate, pattern",
    [
        (lambda j: j.update(status="Lost"), "status must be one of \\['Failed', 'Killed', 'Pass'\\], got 'Lost'"),
        (lambda j: j.pop("submitted_time"), "submitted_time must not be empty"),
        (
            lambda j: j["attempts"][0].update(start_time="yesterday"),
            "attempts\\[0\\].start_time must be a date and time",
        ),
        (
            lambda j: j["attempts"][0].update(end_time="2017-10-07 00:00:00"),
            "attempts\\[-1\\].end_time ends before the job starts",
        ),
        (lambda j: j.update(attempts="none"), "attempts must be a list"),
    ],
)
def test_philly_malformed_job(tmp_path, mutate, pattern):
    jobs = _philly_jobs()[1:3]
    mutate(jobs[0])
    p = w.philly(tmp_path, jobs)
    with pytest.raises(ValueError, match=re.escape(f"{p}:2: job 'app_2': ") + pattern):
        read_log(p)
    assert read_log(p, on_error="drop").dropped["malformed row"] == 1


def test_philly_broken_json(tmp_path):
    p = tmp_path / "cluster_job_log"
    p.write_text('[\n{"jobid": "a", "status": "Pass",\n "attempts": [}\n]')
    with pytest.raises(ValueError, match=re.escape(f"{p}:3: malformed JSON")):
        read_log(p)


# --------------------------------------------------------------------------- PAI
def _pai():
    jobs = [
        ("j1", "i1", "u1", "Terminated", 4550879.0, 4551416.0),
        ("j2", "i2", "u2", "Failed", 4550900.0, 4551000.0),
        ("j3", "i3", "u1", "Running", 4550950.0, ""),
        ("j4", "i4", "u3", "Terminated", 4551000.0, 4551100.0),  # no task row
        ("j5", "i5", "u3", "Terminated", 4551010.0, 4551200.0),  # a CPU job
    ]
    tasks = [
        # the README's example: ps (6 CPUs, no GPU) + 2 workers of 50% GPU = 1 GPU
        ("j1", "ps", 1.0, "Terminated", 4550889.0, 4551416.0, 600.0, 29.3, "", ""),
        ("j1", "worker", 2.0, "Terminated", 4550890.0, 4551400.0, 400.0, 29.3, 50.0, "V100"),
        ("j2", "tensorflow", 1.0, "Failed", 4550950.0, 4551000.0, 600.0, 10.0, 150.0, "T4"),
        ("j2", "evaluator", 1.0, "Failed", 4550960.0, 4551000.0, 600.0, 10.0, 100.0, "P100"),
        ("j3", "worker", 1.0, "Running", 4550960.0, "", 600.0, 10.0, 100.0, "MISC"),
        ("j5", "worker", 1.0, "Terminated", 4551020.0, 4551200.0, 600.0, 10.0, 0.0, ""),
        ("jX", "worker", 1.0, "Terminated", 1.0, 2.0, 600.0, 10.0, 100.0, "T4"),  # no such job
    ]
    return jobs, tasks


@pytest.mark.parametrize("header", [False, True])
def test_pai_join_of_jobs_and_tasks(tmp_path, header):
    folder = w.pai(tmp_path / "pai", *_pai(), header=header)
    for path in (folder, folder / "pai_job_table.csv"):
        r = read_log(path)
        assert r.format == "pai"
        assert r.dropped == {"no tasks": 1, "orphan task": 1, "unfinished": 1, "no GPUs": 1}
        assert r.rows == 6
        j = r.jobs
        assert j.name.tolist() == ["j1", "j2"]
        assert j.gpus.tolist() == [1, 3]  # 2 x 50% ; 150% + 100% = 2.5 -> 3 whole GPUs
        assert j.gpu_type.tolist() == ["V100", "P100+T4"]
        assert j.queued.tolist() == [10.0, 50.0]  # earliest task launch - submission
        assert j.duration.tolist() == [4551416.0 - 4550889.0, 50.0]
        assert j.state.tolist() == ["completed", "failed"] and j.nodes.tolist() == [0, 0]


def test_pai_errors(tmp_path):
    jobs, tasks = _pai()
    folder = w.pai(tmp_path / "a", jobs, tasks[:2] + [("j2", "w", "x", "Failed", 1.0, 2.0, 1, 1, 100, "T4")])
    with pytest.raises(
        ValueError, match=re.escape(f"{folder / 'pai_task_table.csv'}:3:3: inst_num must be a number, got 'x'")
    ):
        read_log(folder)
    folder = w.pai(tmp_path / "b", [("j1", "i1", "u1", "Finished", 1.0, 2.0)], tasks[:1])
    with pytest.raises(ValueError, match=re.escape(f"{folder / 'pai_job_table.csv'}:1:4: status must be one of")):
        read_log(folder)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "pai_job_table.csv").write_text("j1,i1,u1,Terminated,1.0,2.0\n")
    with pytest.raises(FileNotFoundError, match="pai_task_table"):
        read_log(tmp_path / "c")
    with pytest.raises(FileNotFoundError, match="needs pai_task_table.csv"):
        read_log(tmp_path / "c" / "pai_job_table.csv")


def test_states_vocabulary_is_shared(tmp_path):
    """Every reader's final state is one of FINISHED_STATES."""
    logs = [
        w.helios(tmp_path, _helios_rows()),
        w.slurm(tmp_path, _slurm_rows()),
        w.philly(tmp_path, _philly_jobs()),
        w.pai(tmp_path / "pai", *_pai()),
    ]
    for p in logs:
        assert set(read_log(p, gpu_only=False).jobs.state.tolist()) <= set(FINISHED_STATES)
