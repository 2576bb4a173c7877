"""Reader of Alibaba PAI's GPU trace (Weng et al., NSDI'22; alibaba/clusterdata ``cluster-trace-gpu-v2020``).

Published schema (the CSVs have no header row; ``*.header`` files name the columns, and a
header row is accepted too):

* ``pai_job_table``: ``job_name, inst_id, user, status, start_time, end_time``; ``status`` is
  ``Running``, ``Terminated``, ``Failed`` or ``Waiting`` (only ``Terminated`` succeeded);
  ``start_time`` is the submission, ``end_time`` the completion;
* ``pai_task_table``: ``job_name, task_name, inst_num, status, start_time, end_time, plan_cpu,
  plan_mem, plan_gpu, gpu_type``; ``plan_gpu`` is in percent of one GPU per instance (50 = half
  a GPU); ``start_time`` is the task's launch.

Times are seconds, shifted by an undisclosed constant. A job's GPUs are the sum over its
tasks of ``inst_num * plan_gpu / 100``, rounded up to whole GPUs (the simulator does not share a
GPU between jobs; a blank ``plan_gpu`` is a CPU task); it starts at its earliest task launch
and ends at the job's ``end_time`` (its latest task's end when that is blank). ``gpu_type`` is
its GPU tasks' type (several joined by ``+``). The tables do not record machines: ``nodes``
is 0. A job with no task row is dropped as ``"no tasks"``; a task row naming no listed job as
``"orphan task"`` (counted in ``rows``).
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import numpy as np

from fastsched.sim.inputs.logs._finish import RawBuilder, RawLog
from fastsched.sim.inputs.logs._parse import (
    Problems,
    Strings,
    csv_chunks,
    locate,
    merge,
    open_text,
    parse_floats,
    required_text,
    states,
    where,
    whole,
)

__all__ = ["PAI_JOB_COLUMNS", "PAI_TASK_COLUMNS", "PAI_STATES", "read_pai_raw"]

PAI_JOB_COLUMNS = ("job_name", "inst_id", "user", "status", "start_time", "end_time")
PAI_TASK_COLUMNS = (
    "job_name",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
)
#: PAI status (upper case) -> canonical state.
PAI_STATES = {"TERMINATED": "completed", "FAILED": "failed", "RUNNING": "running", "WAITING": "pending"}


def _rows(path: Path, columns: tuple, wanted: dict, problems: Problems):
    """Chunks of a headerless (or headed) PAI table: ``(lines, {field: values})``."""
    with open_text(path) as f:
        first = next(csv.reader(f), None)
    if first is None:
        return
    has_header = [c.strip() for c in first] == list(columns)
    with open_text(path) as f:
        reader = csv.reader(f)
        if has_header:
            next(reader)
        index = {field: columns.index(name) for field, name in wanted.items()}
        yield from csv_chunks(path, reader, index, problems=problems, ncols=len(columns))


def _jobs(path: Path, problems: Problems, strings: Strings):
    wanted = {"name": "job_name", "user": "user", "state": "status", "submit": "start_time", "end": "end_time"}
    col = {f: PAI_JOB_COLUMNS.index(c) for f, c in wanted.items()}
    out = RawBuilder()
    for lines, c in _rows(path, PAI_JOB_COLUMNS, wanted, problems):
        n = lines.size
        bad = np.zeros(n, dtype=bool)

        def check(field, found, bad=bad, lines=lines):
            locate(path, lines, col[field], found, problems, bad)

        name, p = required_text(c["name"], "job_name")
        check("name", p)
        state, p = states(c["state"], "status", PAI_STATES, strings)
        check("state", p)
        submit, p = parse_floats(c["submit"], "start_time")
        p.update(
            {i: "start_time (the submission) must not be empty" for i in np.flatnonzero(np.isnan(submit)) if i not in p}
        )
        check("submit", p)
        end, p = parse_floats(c["end"], "end_time")
        check("end", p)
        blank = strings([""] * n)
        out.add(
            ~bad,
            name=name,
            submit=submit,
            start=np.full(n, np.nan),
            end=end,
            gpus=np.zeros(n, dtype=np.int64),
            nodes=np.zeros(n, dtype=np.int64),
            gpu_type=blank,
            state=state,
            vc=blank,
            user=strings(c["user"], strip=True),
            line=lines,
        )
    return out.build(), col


def read_pai_raw(job_path: Path, task_path: Path, problems: Problems):
    """Join PAI's job and task tables into raw columns: ``(RawLog, drops, end_at)``."""
    if not task_path.exists():
        raise FileNotFoundError(f"PAI task table not found: {task_path}")
    strings = Strings()
    raw, job_col = _jobs(job_path, problems, strings)
    n = raw.name.size
    index = {}
    for i, name in enumerate(raw.name):
        index.setdefault(name, i)  # a repeated id is reported by finish(); its tasks join the first
    gpu_total = np.zeros(n)
    start = np.full(n, np.nan)
    task_end = np.full(n, np.nan)
    ntasks = np.zeros(n, dtype=np.int64)
    gpu_type = [""] * n
    drops = Counter()
    wanted = {
        "job": "job_name",
        "inst": "inst_num",
        "start": "start_time",
        "end": "end_time",
        "gpu": "plan_gpu",
        "type": "gpu_type",
    }
    col = {f: PAI_TASK_COLUMNS.index(c) for f, c in wanted.items()}
    for lines, c in _rows(task_path, PAI_TASK_COLUMNS, wanted, problems):
        m = lines.size
        bad = np.zeros(m, dtype=bool)

        def check(field, found, bad=bad, lines=lines):
            locate(task_path, lines, col[field], found, problems, bad)

        job = np.array([index.get(v.strip(), -1) for v in c["job"]], dtype=np.int64)
        inst, p = parse_floats(c["inst"], "inst_num")
        merge(p, whole(inst, "inst_num", c["inst"]))
        check("inst", p)
        gpu, p = parse_floats(c["gpu"], "plan_gpu", blank=0.0)
        p.update({i: f"plan_gpu must be >= 0, got {c['gpu'][i]!r}" for i in np.flatnonzero(gpu < 0) if i not in p})
        check("gpu", p)
        t0, p = parse_floats(c["start"], "start_time")
        check("start", p)
        t1, p = parse_floats(c["end"], "end_time")
        p.update({i: "end_time is before the task's start_time" for i in np.flatnonzero(t1 < t0) if i not in p})
        check("end", p)
        orphan = (job < 0) & ~bad
        drops["orphan task"] += int(orphan.sum())
        ok = np.flatnonzero(~bad & ~orphan)
        j = job[ok]
        g = np.nan_to_num(inst[ok]) * gpu[ok] / 100.0
        np.add.at(gpu_total, j, g)
        np.add.at(ntasks, j, 1)
        np.fmin.at(start, j, t0[ok])
        np.fmax.at(task_end, j, t1[ok])
        types = c["type"]
        for k in np.flatnonzero(g > 0):
            t = types[ok[k]].strip()
            jj = j[k]
            if t and t != gpu_type[jj]:
                gpu_type[jj] = t if not gpu_type[jj] else "+".join(sorted(set(gpu_type[jj].split("+")) | {t}))
    has = ntasks > 0
    drops["no tasks"] += int((~has).sum())
    # Whole GPUs: a job asking for 50% of one GPU holds one in a simulator that does not share GPUs.
    gpus = np.ceil(gpu_total - 1e-9).astype(np.int64)
    end = np.where(np.isnan(raw.end), task_end, raw.end)
    raw = RawLog(
        name=raw.name[has],
        submit=raw.submit[has],
        start=start[has],
        end=end[has],
        gpus=gpus[has],
        nodes=raw.nodes[has],
        gpu_type=strings(gpu_type)[has],
        state=raw.state[has],
        vc=raw.vc[has],
        user=raw.user[has],
        line=raw.line[has],
    )

    def end_at(i):
        return f"{where(job_path, int(raw.line[i]), job_col['end'])}: end_time"

    return raw, drops, end_at
