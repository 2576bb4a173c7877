"""Fuzzing the readers of user files: a workload CSV and a sweep spec (JSON / TOML).

Whatever the bytes, a reader returns a valid result or raises ``ValueError`` (or
``FileNotFoundError``) naming the file; nothing else escapes (no ``OverflowError``,
``KeyError``, ``UnicodeDecodeError``, ``IndexError`` ...). A long session:
``HYPOTHESIS_PROFILE=fuzz pytest tests/cli/test_fuzz_readers.py``.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fastsched.sim.inputs.workload import WORKLOAD_COLUMNS, read_workload
from fastsched.sweep.spec import load_spec

_DIR = Path(tempfile.mkdtemp(prefix="fastsched-fuzz-"))

# Cells that are close to valid: numbers of every shape, names, junk.
_cell = st.one_of(
    st.sampled_from(["0", "1", "-1", "1.5", "1e3", "1e400", "-inf", "inf", "nan", "NaN", "", " ", "0x10", "1_000"]),
    st.sampled_from(["cifar10", "ncf", "bert", "a", "b", "\ufeff", '"', "a,b", "\n"]),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6),
)
_header = st.one_of(
    st.just(list(WORKLOAD_COLUMNS)),
    st.permutations(list(WORKLOAD_COLUMNS)),
    st.lists(st.sampled_from([*WORKLOAD_COLUMNS, "extra", ""]), max_size=7),
)


def _write(name: str, data: bytes) -> Path:
    p = _DIR / name
    p.write_bytes(data)
    return p


@given(header=_header, rows=st.lists(st.lists(_cell, max_size=7), max_size=6), bom=st.booleans())
def test_workload_csv_structured(header, rows, bom):
    text = "\n".join(",".join(r) for r in [header, *rows]) + "\n"
    p = _write("w.csv", (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"))
    _check_workload(p)


@given(data=st.binary(max_size=300))
def test_workload_csv_bytes(data):
    _check_workload(_write("raw.csv", b"name,time,application,num_replicas,batch_size\n" + data))


def _check_workload(p: Path) -> None:
    try:
        jobs = read_workload(p)
    except ValueError as exc:
        assert str(p) in str(exc)
        return
    assert jobs and len({j.name for j in jobs}) == len(jobs)
    for j in jobs:
        assert math.isfinite(j.time) and j.time >= 0 and j.num_replicas >= 1 and j.batch_size >= 1


_json_value = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from(["builtin", "pollux", "tiresias", "osdi21", "", "x.csv"]),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_spec_key = st.sampled_from(
    [
        "workloads",
        "seeds",
        "seed",
        "policy",
        "preset",
        "nodes",
        "gpus",
        "interval",
        "interference",
        "max_nodes",
        "max_time",
        "policy_options",
        "traces",
        "output",
        "name",
        "bogus",
    ]
)


@given(spec=st.dictionaries(_spec_key, _json_value, max_size=6), fmt=st.sampled_from(["json", "raw"]))
def test_sweep_spec_structured(spec, fmt):
    spec.setdefault("workloads", "builtin")
    if fmt == "json":
        p = _write("spec.json", json.dumps(spec).encode())
        _check_spec(p, p)
    else:
        _check_spec(spec, "sweep spec")


@given(data=st.binary(max_size=200), suffix=st.sampled_from([".json", ".toml"]))
def test_sweep_spec_bytes(data, suffix):
    p = _write("raw" + suffix, data)
    _check_spec(p, p)


def _check_spec(spec, name) -> None:
    try:
        s = load_spec(spec, base_dir=_DIR)
    except (ValueError, FileNotFoundError) as exc:
        assert str(name) in str(exc)
        return
    runs = s.runs()
    assert runs and len({r.run_id for r in runs}) == len(runs)
