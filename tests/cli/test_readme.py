"""The README's set-up and command-line sections work from a fresh clone (issue 26, item 7)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from fastsched.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _bash_blocks(text):
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def _commands(block):
    """Command lines of a bash block: continuations joined, comments dropped."""
    joined = block.replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            out.append(words)
    return out


def _section(title):
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else None]


def test_readme_starts_with_the_two_setup_commands():
    first = _commands(_bash_blocks(README)[0])
    assert [w[0] for w in first] == ["python3", ".venv/bin/python"]
    assert first[0][-1] == "simulate" and first[0][-2] == ".venv/bin/fastsched"


def _cli_lines():
    return [c for block in _bash_blocks(_section("Command line")) for c in _commands(block)]


def test_command_line_section_never_relies_on_an_activated_venv():
    lines = _cli_lines()
    assert lines
    for words in lines:
        assert words[0] == ".venv/bin/fastsched", words  # bare `fastsched`: command not found


@pytest.mark.parametrize("words", _cli_lines(), ids=lambda w: " ".join(w[1:3]))
def test_command_line_examples_parse_and_their_repo_files_exist(words):
    args = words[1:]
    if args == ["--help"]:
        return
    parsed = build_parser().parse_args(args)  # every option spelled as the parser knows it
    assert parsed.func is not None
    for w in args:
        if w.startswith("examples/"):
            assert (ROOT / w).is_file(), w  # shipped with the clone
        elif "/" in w and not w.startswith("../shared/"):
            assert not w.endswith((".json", ".csv", ".toml")), f"{w}: not in a fresh clone"
