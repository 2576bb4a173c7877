"""Reader of Slurm accounting: ``sacct --parsable2`` output with its header row.

``--parsable2`` separates fields with ``|`` (no trailing one). Columns are found by name, in any
order and case: ``JobID`` (or ``JobIDRaw``), ``State``, ``Submit``, ``Start``, ``End`` and one
of ``AllocTRES``/``ReqTRES``/``AllocGRES``/``ReqGRES`` are required; ``User``, ``Partition``
(else ``Account``: the job's virtual cluster) and ``NNodes`` are read when present. Times are
``YYYY-MM-DDTHH:MM:SS``; ``Unknown``/``None`` mean absent (a job cancelled while pending never
started). ``State`` may read ``CANCELLED by 1234``. Rows of job steps (``123.batch``,
``123.extern``, ``123.0``) are counted as ``"job step"`` and left out: the job's own row holds
its submission, run time and allocation.

GPUs: ``gres/gpu=N`` in ``AllocTRES`` (what the job ran on), else in ``ReqTRES`` (a job that
never started); typed entries ``gres/gpu:a100=N`` give the GPU type (and the count when the
untyped total is absent). Older Slurm reports ``AllocGRES`` such as ``gpu:tesla:2``.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import numpy as np

from fastsched.sim.inputs.logs._finish import RawBuilder
from fastsched.sim.inputs.logs._parse import (
    SLURM_STATES,
    Problems,
    Strings,
    csv_chunks,
    header_index,
    locate,
    merge,
    open_text,
    parse_floats,
    parse_times,
    required_text,
    states,
    where,
    whole,
)

__all__ = ["SLURM_COLUMNS", "read_slurm_raw", "parse_tres", "parse_gres"]

#: Field -> (column names, lower case, first found wins; required).
SLURM_COLUMNS = {
    "name": (("jobid", "jobidraw"), True),
    "user": (("user",), False),
    "vc": (("partition", "account"), False),
    "state": (("state",), True),
    "submit": (("submit",), True),
    "start": (("start",), True),
    "end": (("end",), True),
    "nodes": (("nnodes",), False),
    "alloc_tres": (("alloctres",), False),
    "req_tres": (("reqtres",), False),
    "alloc_gres": (("allocgres",), False),
    "req_gres": (("reqgres",), False),
}
_GPU_SOURCES = ("alloc_tres", "req_tres", "alloc_gres", "req_gres")
_COLUMN_NAMES = {"alloc_tres": "AllocTRES", "req_tres": "ReqTRES", "alloc_gres": "AllocGRES", "req_gres": "ReqGRES"}


def parse_tres(text: str):
    """``(gpus, gpu_type)`` of a TRES string, ``(None, "")`` when it names no GPU.

    Examples
    --------
    >>> parse_tres("billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64G,node=1")
    (2, 'a100')
    >>> parse_tres("cpu=4,gres/gpu:v100=1,gres/gpu:t4=2,mem=8G")
    (3, 't4+v100')
    >>> parse_tres("cpu=4,mem=8G,node=1")
    (None, '')
    """
    total, typed = None, {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("gres/gpu"):
            continue
        n = int(value)  # ValueError: the caller names the column
        if key == "gres/gpu":
            total = n
        elif key.startswith("gres/gpu:"):
            typed[key[len("gres/gpu:") :]] = typed.get(key[len("gres/gpu:") :], 0) + n
    if total is None and typed:
        total = sum(typed.values())
    return total, "+".join(sorted(typed))


def parse_gres(text: str):
    """``(gpus, gpu_type)`` of an old-style GRES string (``gpu:tesla:2(IDX:0-1)``).

    Examples
    --------
    >>> parse_gres("gpu:tesla:2(IDX:0-1)"), parse_gres("gpu:4"), parse_gres("")
    ((2, 'tesla'), (4, ''), (None, ''))
    """
    total, types = None, set()
    for item in text.split(","):
        parts = item.split("(", 1)[0].strip().split(":")
        if parts[0] != "gpu" or len(parts) < 2:
            continue
        total = (total or 0) + int(parts[-1])
        if len(parts) == 3:
            types.add(parts[1])
    return total, "+".join(sorted(types))


def _gpus(c: dict, n: int):
    """GPU count and type per row, from the first GPU column that names one; (gpus, types, problems)."""
    gpus = np.zeros(n)
    types = [""] * n
    problems = {}
    sources = [s for s in _GPU_SOURCES if s in c]
    for i in range(n):
        for s in sources:
            text = c[s][i].strip()
            if not text:
                continue
            try:
                g, t = (parse_tres if s.endswith("tres") else parse_gres)(text)
            except ValueError:
                problems[i] = (s, f"{_COLUMN_NAMES[s]} has a GPU count that is not a whole number: {text!r}")
                break
            if g is not None and g < 0:
                problems[i] = (s, f"{_COLUMN_NAMES[s]} has a negative GPU count: {text!r}")
                break
            if g is not None:
                gpus[i], types[i] = g, t
                break
            if s == "alloc_tres" and text:
                break  # the job ran and its allocation names no GPU: a CPU job, whatever it asked for
    return gpus, types, problems


def read_slurm_raw(path: Path, problems: Problems):
    """Parse ``sacct --parsable2`` output into raw columns: ``(RawLog, drops, end_at)``."""
    strings = Strings()
    out = RawBuilder()
    drops = Counter()
    with open_text(path) as f:
        reader = csv.reader(f, delimiter="|", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: empty file; sacct --parsable2 output starts with a header (JobID|...)")
        index = header_index(path, header, SLURM_COLUMNS, fold_case=True)
        if not any(s in index for s in _GPU_SOURCES):
            raise ValueError(
                f"{path}:1: missing column AllocTRES (or ReqTRES, AllocGRES, ReqGRES): the GPU count; "
                f"found {[h.strip() for h in header]}"
            )
        col = dict(index)
        for lines, c in csv_chunks(path, reader, index, problems=problems, ncols=len(header)):
            step = np.array(["." in v for v in c["name"]], dtype=bool)
            if step.any():
                drops["job step"] += int(step.sum())
                jobs = np.flatnonzero(~step)
                c = {k: [v[i] for i in jobs] for k, v in c.items()}
                lines = lines[jobs]
            n = lines.size
            if n == 0:
                continue
            bad = np.zeros(n, dtype=bool)

            def check(field, found, bad=bad, lines=lines):
                locate(path, lines, col[field], found, problems, bad)

            name, p = required_text(c["name"], "JobID")
            check("name", p)
            submit, p = parse_times(c["submit"], "Submit")
            p.update({i: "Submit must not be empty" for i in np.flatnonzero(np.isnan(submit)) if i not in p})
            check("submit", p)
            start, p = parse_times(c["start"], "Start")
            check("start", p)
            end, p = parse_times(c["end"], "End")
            check("end", p)
            state, p = states(c["state"], "State", SLURM_STATES, strings)
            check("state", p)
            if "nodes" in c:
                nodes, p = parse_floats(c["nodes"], "NNodes", blank=0.0)
                merge(p, whole(nodes, "NNodes", c["nodes"]))
                check("nodes", p)
            else:
                nodes = np.zeros(n)
            gpus, types, p = _gpus(c, n)
            for s in _GPU_SOURCES:
                check_s = {i: m for i, (src, m) in p.items() if src == s}
                if check_s:
                    check(s, check_s)
            blank = strings([""] * n)
            user = strings(c["user"], strip=True) if "user" in c else blank
            vc = strings(c["vc"], strip=True) if "vc" in c else blank
            out.add(
                ~bad,
                name=name,
                submit=submit,
                start=start,
                end=end,
                gpus=gpus.astype(np.int64),
                nodes=np.nan_to_num(nodes).astype(np.int64),
                gpu_type=strings(types),
                state=state,
                vc=vc,
                user=user,
                line=lines,
            )
    raw = out.build()

    def end_at(i):
        return f"{where(path, int(raw.line[i]), col['end'])}: End"

    return raw, drops, end_at
