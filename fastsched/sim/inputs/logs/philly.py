"""Reader of Microsoft Philly's ``cluster_job_log`` (Jeon et al., ATC'19; msr-fiddle/philly-traces).

Published schema: a JSON list of jobs, each ``{"status", "vc", "jobid", "attempts",
"submitted_time", "user"}``; ``status`` is ``Pass``, ``Killed`` or ``Failed``; each attempt is
``{"start_time", "end_time", "detail": [{"ip": machine, "gpus": ["gpu0", ...]}, ...]}``. Times
are ``YYYY-MM-DD HH:MM:SS``. The README notes that a job may have no attempt, that an attempt
may lack a start or end time (``None``), and that a last attempt without an end time was still
running when the log was taken.

Definitions follow the trace's own analysis notebook: GPUs and machines are those of the
first attempt; the run time spans the first attempt's start to the last attempt's end (the
retries and the waits between them included). ``Pass`` reads as ``completed``, ``Killed`` as
``cancelled``, ``Failed`` as ``failed``. The file is parsed one job at a time, so memory
holds one chunk of text, not the whole log; JSON Lines (one job per line) reads the same.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from fastsched.sim.inputs.logs._finish import RawBuilder
from fastsched.sim.inputs.logs._parse import MISSING, Problems, Strings, open_text, parse_times, where

__all__ = ["PHILLY_STATES", "read_philly_raw", "iter_json_objects"]

#: Philly's job status -> canonical final state.
PHILLY_STATES = {"Pass": "completed", "Killed": "cancelled", "Failed": "failed"}
_READ = 1 << 20
# No single job is this long: a value still undecodable with this much text is malformed, not cut.
_MAX_JOB = 1 << 24


def iter_json_objects(path: Path):
    """Yield ``(line, value)`` for each element of a top-level JSON list (or each JSON Lines value).

    Reads ``1 MiB`` at a time; a value cut by a chunk boundary is decoded again once more
    text is in. A syntax error raises ``ValueError`` at ``path:line``.
    """
    decoder = json.JSONDecoder()
    with open_text(path) as f:
        buf, pos, line, eof = "", 0, 1, False
        started = in_list = closed = False
        expect_value = True

        def more():
            nonlocal buf, pos, eof
            chunk = f.read(_READ)
            if not chunk:
                eof = True
            buf = buf[pos:] + chunk
            pos = 0

        try:
            more()
            while True:
                # skip blanks, counting lines
                while True:
                    while pos < len(buf) and buf[pos] in " \t\r\n":
                        if buf[pos] == "\n":
                            line += 1
                        pos += 1
                    if pos < len(buf) or eof:
                        break
                    more()
                if pos >= len(buf):
                    if in_list and not closed:
                        raise ValueError(
                            f"{where(path, line)}: malformed JSON: the list of jobs is not closed with ']'"
                        )
                    return
                ch = buf[pos]
                if closed:
                    raise ValueError(f"{where(path, line)}: malformed JSON: text after the closing ']'")
                if not started and ch == "[":
                    started = in_list = True
                    pos += 1
                    continue
                started = True
                if in_list and ch == "]":
                    closed = True
                    pos += 1
                    continue
                if in_list and ch == "," and not expect_value:
                    expect_value = True
                    pos += 1
                    continue
                if in_list and not expect_value:
                    raise ValueError(
                        f"{where(path, line)}: malformed JSON: expected ',' or ']' between jobs, got {ch!r}"
                    )
                try:
                    value, end = decoder.raw_decode(buf, pos)
                except json.JSONDecodeError as exc:
                    if not eof and len(buf) - pos < _MAX_JOB:
                        more()
                        continue
                    at = line + buf.count("\n", pos, exc.pos)
                    raise ValueError(f"{where(path, at)}: malformed JSON: {exc.msg}") from None
                if end == len(buf) and not eof:
                    more()  # a number or the like may continue in the next chunk: decode it whole
                    continue
                yield line, value
                line += buf.count("\n", pos, end)
                pos = end
                expect_value = not in_list
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start})") from None


class _Bad(Exception):
    pass


def _text(job, key, *, required):
    v = job.get(key)
    if v is None or (isinstance(v, str) and v.strip() in MISSING):
        if required:
            raise _Bad(f"{key} must not be empty")
        return ""
    if not isinstance(v, str):
        raise _Bad(f"{key} must be a string, got {v!r}")
    return v.strip()


def _job(job):
    """(name, status, vc, user, submitted, first start, last end, gpus, nodes) of one JSON job."""
    if not isinstance(job, dict):
        raise _Bad(f"a job must be a JSON object, got {type(job).__name__}")
    name = job.get("jobid")
    if not isinstance(name, (str, int)) or not str(name).strip():
        raise _Bad(f"jobid must be a non-empty string, got {name!r}")
    name = str(name).strip()
    try:
        status = _text(job, "status", required=True)
        state = PHILLY_STATES.get(status)
        if state is None:
            raise _Bad(f"status must be one of {sorted(PHILLY_STATES)}, got {status!r}")
        submitted = _text(job, "submitted_time", required=True)
        attempts = job.get("attempts")
        if not isinstance(attempts, list):
            raise _Bad(f"attempts must be a list, got {attempts!r}")
        start = end = ""
        gpus = nodes = 0
        for k, a in enumerate(attempts):
            if not isinstance(a, dict):
                raise _Bad(f"attempts[{k}] must be an object, got {a!r}")
            s = _text(a, "start_time", required=False)
            e = _text(a, "end_time", required=False)
            detail = a.get("detail", [])
            if not isinstance(detail, list):
                raise _Bad(f"attempts[{k}].detail must be a list, got {detail!r}")
            g = 0
            for m, d in enumerate(detail):
                if not isinstance(d, dict) or not isinstance(d.get("gpus", []), list):
                    raise _Bad(f"attempts[{k}].detail[{m}] must be an object with a list of gpus, got {d!r}")
                g += len(d.get("gpus", []))
            if k == 0:
                start, gpus, nodes = s, g, len(detail)
            end = e
        return (
            name,
            state,
            _text(job, "vc", required=False),
            _text(job, "user", required=False),
            submitted,
            start,
            end,
            gpus,
            nodes,
        )
    except _Bad as exc:
        raise _Bad(f"job {name!r}: {exc}") from None


def read_philly_raw(path: Path, problems: Problems):
    """Parse a Philly ``cluster_job_log`` into raw columns: ``(RawLog, drops, end_at)``."""
    strings = Strings()
    out = RawBuilder()
    rows, lines = [], []

    def flush():
        if not rows:
            return
        name, state, vc, user, submitted, start, end, gpus, nodes = (list(c) for c in zip(*rows, strict=True))
        n = len(rows)
        bad = np.zeros(n, dtype=bool)
        times = {}
        for key, values, label in (
            ("submit", submitted, "submitted_time"),
            ("start", start, "attempts[0].start_time"),
            ("end", end, "attempts[-1].end_time"),
        ):
            t, found = parse_times(values, label)
            for i in sorted(found):
                if not bad[i]:
                    problems.report(f"{where(path, lines[i])}: job {name[i]!r}: {found[i]}")
                bad[i] = True
            times[key] = t
        names = np.empty(n, dtype=object)
        names[:] = name
        out.add(
            ~bad,
            name=names,
            submit=times["submit"],
            start=times["start"],
            end=times["end"],
            gpus=np.asarray(gpus, dtype=np.int64),
            nodes=np.asarray(nodes, dtype=np.int64),
            gpu_type=strings([""] * n),
            state=strings(state),
            vc=strings(vc),
            user=strings(user),
            line=np.asarray(lines, dtype=np.int64),
        )
        rows.clear()
        lines.clear()

    for line, job in iter_json_objects(path):
        try:
            rows.append(_job(job))
            lines.append(line)
        except _Bad as exc:
            problems.report(f"{where(path, line)}: {exc}")
        if len(rows) >= 1 << 16:
            flush()
    flush()
    raw = out.build()

    def end_at(i):
        return f"{where(path, int(raw.line[i]))}: job {raw.name[i]!r}: attempts[-1].end_time"

    return raw, Counter(), end_at
