"""The filters and drop counts against a plain-Python reference reader, on random Helios logs."""

from __future__ import annotations

import csv
import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.inputs.logs import FINISHED_STATES, UNFINISHED_STATES, read_log

from . import _write as w

EPOCH = dt.datetime(2020, 4, 1)
STATES = ["COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "RUNNING", "PENDING"]


def _stamp(seconds):
    return "" if seconds is None else (EPOCH + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S")


def reference(path, window=None, vcs=None, states="finished", gpu_only=True):
    """Read a Helios log as documented, one row at a time: (kept rows, drop counts)."""
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):

            def t(s):
                return (
                    None
                    if not s
                    else dt.datetime.strptime(s, "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.timezone.utc).timestamp()
                )

            rows.append(
                dict(
                    name=r["job_id"],
                    vc=r["vc"],
                    gpus=int(r["gpu_num"]),
                    state=r["state"].lower(),
                    submit=t(r["submit_time"]),
                    start=t(r["start_time"]),
                    end=t(r["end_time"]),
                )
            )
    origin = min(r["submit"] for r in rows)
    if isinstance(states, str):
        kept_states = set(FINISHED_STATES) if states == "finished" else {"completed"}
    else:
        kept_states = set(states)
    drops, kept = {}, []
    for r in rows:
        if r["state"] in UNFINISHED_STATES or (r["end"] is None and r["start"] is not None):
            reason = "unfinished"
        elif r["start"] is None:
            reason = "never started"
        elif window is not None and not (window[0] <= r["submit"] - origin < window[1]):
            reason = "outside window"
        elif r["state"] not in kept_states:
            reason = "state not kept"
        elif vcs is not None and r["vc"] not in vcs:
            reason = "other virtual cluster"
        elif gpu_only and r["gpus"] == 0:
            reason = "no GPUs"
        else:
            kept.append(r)
            continue
        drops[reason] = drops.get(reason, 0) + 1
    kept.sort(key=lambda r: r["submit"])  # stable: ties stay in file order
    first = kept[0]["submit"] if kept else None
    return [
        (r["name"], r["submit"] - first, r["end"] - r["start"], r["start"] - r["submit"], r["gpus"], r["state"])
        for r in kept
    ], drops


row = st.tuples(
    st.integers(0, 8),  # gpus
    st.sampled_from(STATES),
    st.integers(0, 5000),  # submit offset
    st.one_of(st.none(), st.integers(0, 600)),  # wait (None: never started)
    st.one_of(st.none(), st.integers(0, 7200)),  # run time (None: no end)
    st.sampled_from(["vcA", "vcB", "vcC"]),
)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(row, min_size=1, max_size=25),
    window=st.one_of(st.none(), st.tuples(st.integers(0, 3000), st.integers(1, 3000)).filter(lambda w: w[0] < w[1])),
    vcs=st.one_of(st.none(), st.sets(st.sampled_from(["vcA", "vcB", "vcC"]))),
    states=st.one_of(
        st.sampled_from(["finished", "completed"]), st.sets(st.sampled_from(FINISHED_STATES[:4]), min_size=1)
    ),
    gpu_only=st.booleans(),
)
def test_filters_match_the_reference(tmp_path_factory, rows, window, vcs, states, gpu_only):
    folder = tmp_path_factory.mktemp("h")
    log = []
    for k, (gpus, state, submit, wait, run, vc) in enumerate(rows):
        start = None if wait is None else submit + wait
        end = (
            None if (run is None or start is None and k % 2) else (start if start is not None else submit) + (run or 0)
        )
        log.append((f"j{k}", "u", vc, gpus, 1, state, _stamp(submit), _stamp(start), _stamp(end)))
    p = w.helios(folder, log)
    want, drops = reference(p, window, vcs, states, gpu_only)
    r = read_log(p, window=window, vcs=vcs, states=states, gpu_only=gpu_only)
    got = [(j.name, j.submit, j.duration, j.queued, j.gpus, j.state) for j in r.jobs]
    assert got == want
    assert r.dropped == drops
    assert r.rows == len(rows) == len(r.jobs) + sum(r.dropped.values())


def test_filter_arguments_are_checked(tmp_path):
    p = w.helios(tmp_path, [("1", "u", "vc", 1, 1, "COMPLETED", _stamp(0), _stamp(0), _stamp(60))])
    with pytest.raises(TypeError, match="window must be a \\(start, end\\) pair"):
        read_log(p, window=5)
    with pytest.raises(ValueError, match="window must have start < end"):
        read_log(p, window=(10, 10))
    with pytest.raises(ValueError, match="states: \\['running'\\] are not final states"):
        read_log(p, states=["running"])
    with pytest.raises(TypeError, match="gpu_only must be True or False"):
        read_log(p, gpu_only="yes")
    with pytest.raises(TypeError, match="vcs must be virtual-cluster names"):
        read_log(p, vcs=[1])
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'drop'"):
        read_log(p, on_error="ignore")
    with pytest.raises(ValueError, match="format must be one of"):
        read_log(p, format="csv")
    with pytest.raises(ValueError, match="tasks= is for PAI logs only"):
        read_log(p, tasks=p)
    assert len(read_log(p, vcs="vc").jobs) == 1  # one name alone is one virtual cluster


def test_window_is_counted_from_the_first_submission_and_output_from_the_first_kept(tmp_path):
    rows = [
        (str(k), "u", "vc", 1, 1, "COMPLETED", _stamp(100 * k), _stamp(100 * k), _stamp(100 * k + 50))
        for k in range(10)
    ]
    r = read_log(w.helios(tmp_path, rows), window=(250, 600))
    assert r.jobs.name.tolist() == ["3", "4", "5"]
    assert r.jobs.submit.tolist() == [0.0, 100.0, 200.0]
    assert r.dropped == {"outside window": 7}
    assert r.origin == (EPOCH + dt.timedelta(seconds=300)).replace(tzinfo=dt.timezone.utc).timestamp()
