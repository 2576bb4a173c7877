"""Reader of SenseTime Helios' ``cluster_log.csv`` (Hu et al., SC'21; S-Lab-System-Group/HeliosData).

Published schema (one row per job submitted to Slurm): ``job_id, user, vc, gpu_num, cpu_num,
node_num, state, submit_time, start_time, end_time, duration, queue`` (the released files may
add ``jobname``). Times are ``YYYY-MM-DD HH:MM:SS``; ``duration`` is ``end_time - start_time``
and ``queue`` is ``start_time - submit_time``, both in seconds, so the reader takes the three
times and checks nothing against the two derived columns. States are Slurm's
(``COMPLETED``, ``CANCELLED``, ``FAILED``, ``TIMEOUT``, ``NODE_FAIL``; the README notes one
``SUSPENDED``, read as unfinished). A row with ``gpu_num`` 0 is a CPU job.
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

__all__ = ["HELIOS_COLUMNS", "read_helios_raw"]

#: Field -> (column names, required). Other columns are ignored.
HELIOS_COLUMNS = {
    "name": (("job_id",), True),
    "user": (("user",), False),
    "vc": (("vc",), False),
    "gpus": (("gpu_num",), True),
    "nodes": (("node_num",), False),
    "state": (("state",), True),
    "submit": (("submit_time",), True),
    "start": (("start_time",), True),
    "end": (("end_time",), True),
}


def read_helios_raw(path: Path, problems: Problems):
    """Parse a Helios ``cluster_log.csv`` into raw columns: ``(RawLog, drops, end_at)``."""
    strings = Strings()
    out = RawBuilder()
    with open_text(path) as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: empty file; a Helios log needs the header job_id,...,submit_time,...")
        index = header_index(path, header, HELIOS_COLUMNS)
        col = dict(index)
        for lines, c in csv_chunks(path, reader, index, problems=problems, ncols=len(header)):
            n = lines.size
            bad = np.zeros(n, dtype=bool)

            def check(field, found, bad=bad, lines=lines):
                locate(path, lines, col[field], found, problems, bad)

            name, p = required_text(c["name"], "job_id")
            check("name", p)
            submit, p = parse_times(c["submit"], "submit_time")
            p.update({i: "submit_time must not be empty" for i in np.flatnonzero(np.isnan(submit)) if i not in p})
            check("submit", p)
            start, p = parse_times(c["start"], "start_time")
            check("start", p)
            end, p = parse_times(c["end"], "end_time")
            check("end", p)
            gpus, p = parse_floats(c["gpus"], "gpu_num")
            merge(p, whole(gpus, "gpu_num", c["gpus"]))
            check("gpus", p)
            if "nodes" in c:
                nodes, p = parse_floats(c["nodes"], "node_num", blank=0.0)
                merge(p, whole(nodes, "node_num", c["nodes"]))
                check("nodes", p)
            else:
                nodes = np.zeros(n)
            state, p = states(c["state"], "state", SLURM_STATES, strings)
            check("state", p)
            blank = strings([""] * n)
            user = strings(c["user"], strip=True) if "user" in c else blank
            vc = strings(c["vc"], strip=True) if "vc" in c else blank
            keep = ~bad
            out.add(
                keep,
                name=name,
                submit=submit,
                start=start,
                end=end,
                gpus=np.nan_to_num(gpus).astype(np.int64),
                nodes=np.nan_to_num(nodes).astype(np.int64),
                gpu_type=blank,
                state=state,
                vc=vc,
                user=user,
                line=lines,
            )
    raw = out.build()

    def end_at(i):
        return f"{where(path, int(raw.line[i]), col['end'])}: end_time"

    return raw, Counter(), end_at
