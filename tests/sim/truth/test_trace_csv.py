"""The trace reader's numpy fast path gives what the row-by-row reader gives, bit for bit, or steps aside."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.sim.truth._trace_files import _read_csv, _read_csv_rows, _read_plain_csv

REQUIRED = ("a", "b")

# Fields as files hold them, and the odd ones a reader must refuse or read as Python does.
_NUMBER = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda x: f"{x:.9g}"),
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(
        [
            "1e5",
            " 3",
            "4 ",
            ".5",
            "-0",
            "+2",
            "1_0",
            "0x10",
            "inf",
            "nan",
            "",
            " ",
            "\t",
            "#1",
            '"7"',
            "\u0661",
            "1\r",
            "2\x0b",
            "\x0c",
            "3\x1e",
            "\x85",
            "4\u2028",
        ]
    ),
)
_ROW = st.lists(_NUMBER, min_size=1, max_size=4).map(",".join)
_HEADER = st.sampled_from(["a,b", "b,a,c", " a , b ", "a", '"a",b', "a,b,a"])
_NEWLINE = st.sampled_from(["\n", "\r\n"])


def _outcome(reader, path):
    try:
        return reader(path, REQUIRED)
    except ValueError as exc:
        return f"ValueError: {exc}"


@settings(deadline=None, max_examples=300)
@given(_HEADER, st.lists(st.one_of(_ROW, st.just("")), max_size=6), _NEWLINE)
def test_fast_path_is_the_row_reader(tmp_path_factory, header, rows, newline):
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_bytes(newline.join([header, *rows]).encode() + newline.encode())
    fast = _read_plain_csv(path, REQUIRED)
    expected = _outcome(_read_csv_rows, path)
    if fast is not None:
        assert not isinstance(expected, str), expected  # numpy never reads a file the checks refuse
        assert fast.keys() == expected.keys()
        for key in fast:
            assert np.array(fast[key]).tobytes() == np.array(expected[key]).tobytes(), key
    assert _outcome(_read_csv, path) == expected


def test_trace_files_take_the_fast_path(shared_dir):
    for name, required in (
        ("placements-aws.csv", ("placement", "local_bsz", "step_time", "sync_time")),
        ("validation-128.csv", ("progress", "iteration", "metric", "grad_sqr", "grad_var")),
    ):
        path = shared_dir / "sia-traces" / "traces" / "cifar10" / name
        if not path.is_file():
            pytest.skip(f"needs {path}")
        fast = _read_plain_csv(path, required)
        assert fast is not None and fast == _read_csv_rows(path, required)


@pytest.mark.parametrize("brk", ["\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"])
def test_line_numbers_follow_the_csv_module_on_odd_line_breaks(tmp_path, brk):
    # str.splitlines breaks lines where csv does not: the numbers named in errors must agree.
    path = tmp_path / "t.csv"
    path.write_text(f"a,b\n1,2{brk}\n\n3,4\n", encoding="utf-8")
    assert _read_plain_csv(path, REQUIRED) is None
    assert _outcome(_read_csv, path) == _outcome(_read_csv_rows, path)
