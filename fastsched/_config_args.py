"""``--config FILE``: a command's options from a TOML or JSON file, the flags of the command line winning.

A command whose parser has a ``--config`` option reads the file before it parses the command
line: each key is the name of one of the command's options (``max-time`` or ``max_time`` for
``--max-time``; the positional ``workload`` too), each value what the flag would take, typed
(``nodes = 4``, ``cap-replicas = true``, ``max-time = "12h"``, ``policy = ["sia", "gavel"]`` for
``--policy sia,gavel``). The values become the parser's defaults, so a flag given on the command
line overrides the file. Relative paths in the file are resolved against the file's folder (as a
sweep spec's are); the command names which of its options are paths (``parser.config_paths``).
Every key and value is checked as the flag's own value would be, and a refusal names the file
and the key.

It also holds the refusal helpers of argparse options that the command line's parser
(:mod:`fastsched.cli`) shares with it: :func:`did_you_mean`, :func:`invalid_choice`, :func:`flag_of`.

A base module: it imports nothing of fastsched but the settings-file reader.
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path

from fastsched._datafile import read_data_file

__all__ = ["config_path", "config_defaults", "did_you_mean", "invalid_choice", "flag_of"]


def did_you_mean(word, choices) -> str:
    """Return ``" (did you mean 'x'?)"`` for the choice closest to ``word`` (:mod:`difflib`), or ``""``.

    The one hint of the command line's refusals of a name: a flag, a choice, a config file's key.

    Examples
    --------
    >>> did_you_mean("siaa", ["sia", "pollux"]), did_you_mean("zzz", ["sia"])
    (" (did you mean 'sia'?)", '')
    """
    near = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def invalid_choice(value, choices) -> str:
    """Return the refusal of a value outside an option's ``choices``: the closest one, then all of them.

    Examples
    --------
    >>> invalid_choice("siaa", ["default", "sia"])
    "invalid choice 'siaa' (did you mean 'sia'?); choose from default, sia"
    """
    return f"invalid choice {value!r}{did_you_mean(value, choices)}; choose from {', '.join(map(str, choices))}"


def flag_of(action) -> str | None:
    """Return an argparse action's long flag (``--max-time``), or ``None`` (a positional, a short flag only).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser()
    >>> flag_of(p.add_argument("-q", "--quiet", action="store_true")), flag_of(p.add_argument("workload"))
    ('--quiet', None)
    """
    long = [o for o in action.option_strings if o.startswith("--")]
    return long[0] if long else None


def config_path(args) -> str | None:
    """Return the value of ``--config`` among raw arguments (``None``: not given).

    Examples
    --------
    >>> config_path(["w.csv", "--config", "c.toml", "--nodes", "2"]), config_path(["--config=c.json"])
    ('c.toml', 'c.json')
    >>> config_path(["--nodes", "2"]) is None
    True
    """
    args = list(args)
    for i, a in enumerate(args):
        if a == "--":
            break
        if a == "--config" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--config="):
            return a.split("=", 1)[1]
    return None


def _options(parser) -> dict:
    out = {}
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)) or action.dest in ("config",):
            continue
        if action.dest == argparse.SUPPRESS:
            continue
        names = [o.lstrip("-") for o in action.option_strings if o.startswith("--")] or [action.dest]
        for n in names:
            out[n.replace("-", "_")] = action
    return out


def _flag(action) -> str:
    return flag_of(action) or action.dest


def _value(action, key, value, base: Path, paths):
    """One value of the file, converted and checked as the flag's text would be."""
    flag = _flag(action)
    if action.nargs == 0:  # store_true / store_false
        if not isinstance(value, bool):
            raise ValueError(f"{key}: {flag} is a switch; give true or false, got {value!r}")
        return value if action.const is True else (not value if action.const is False else value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
        value = ",".join(value)  # policy = ["sia", "gavel"] is --policy sia,gavel
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"{key}: expected what {flag} takes (a text or a number), got {value!r}")
    kind = action.type
    if kind is int:
        if isinstance(value, float) or (isinstance(value, str) and not value.strip().lstrip("-").isdigit()):
            raise ValueError(f"{key}: {flag} takes an integer, got {value!r}")
        value = int(value)
    elif kind is float:
        try:
            value = float(value)
        except ValueError:
            raise ValueError(f"{key}: {flag} takes a number, got {value!r}") from None
    elif callable(kind):
        try:
            value = kind(str(value))
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            raise ValueError(f"{key}: {exc}") from None
    elif not isinstance(value, str):
        value = str(value)
    if action.choices is not None and value not in action.choices:
        raise ValueError(f"{key}: {invalid_choice(value, action.choices)}")
    if action.dest in paths and isinstance(value, str):
        p = Path(value).expanduser()
        looks_like_file = action.dest != "cluster" or p.suffix.lower() in (".toml", ".json")
        if looks_like_file and not p.is_absolute():
            value = str(base / p)
    return value


def config_defaults(parser, path) -> dict:
    r"""Read a config file for ``parser``: its values by destination, checked and converted.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser; ``parser.config_paths`` (optional) names the destinations that are
        paths, resolved against the file's folder.
    path : str or path
        The TOML (``.toml``) or JSON file.

    Returns
    -------
    dict
        Destination -> value, ready for ``parser.set_defaults``.

    Raises
    ------
    ValueError
        Naming the file and the key: an unknown key (with the closest option), a value the flag
        would refuse, a file that is not a table of options.

    Examples
    --------
    >>> import argparse, pathlib, tempfile
    >>> p = argparse.ArgumentParser()
    >>> _ = p.add_argument("workload", nargs="?"); _ = p.add_argument("--nodes", type=int)
    >>> _ = p.add_argument("--quiet", action="store_true")
    >>> p.config_paths = ("workload",)
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "c.toml"
    >>> _ = f.write_text("workload = 'w.csv'\nnodes = 4\nquiet = true\n")
    >>> d = config_defaults(p, f)
    >>> d["nodes"], d["quiet"], d["workload"] == str(f.parent / "w.csv")
    (4, True, True)
    >>> _ = f.write_text("node = 4\n")
    >>> config_defaults(p, f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...c.toml: unknown key 'node' (did you mean 'nodes'?)...
    """
    path = Path(path).expanduser()
    data = read_data_file(path, what="config file")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a config file holds a table of options (key = value), got {type(data).__name__}")
    options = _options(parser)
    paths = set(getattr(parser, "config_paths", ()))
    out = {}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        action = options.get(name)
        if action is None:
            hint = did_you_mean(name, options)
            known = ", ".join(sorted(k.replace("_", "-") for k in options))
            raise ValueError(f"{path}: unknown key {key!r}{hint}; the keys are the options' names: {known}")
        if action.dest in out:
            raise ValueError(f"{path}: {key!r} sets {_flag(action)} a second time")
        try:
            out[action.dest] = _value(action, key, value, path.resolve().parent, paths)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    return out
