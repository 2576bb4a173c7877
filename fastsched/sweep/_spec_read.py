"""Reading a sweep spec file (JSON, TOML or YAML) into a mapping, with size limits.

Imports no simulator code: the file is only parsed here; :mod:`._spec_check` validates it.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["MAX_SPEC_BYTES", "MAX_SPEC_NODES", "read_spec_file"]

#: Largest spec file read: a spec is a few hundred bytes; 10 MB leaves room for long lists.
MAX_SPEC_BYTES = 10_000_000
#: Most values a spec may hold once YAML aliases are expanded (a "billion laughs" spec of 600
#: bytes expands to 10**9): 100,000 is far above any grid :data:`MAX_RUNS` allows.
MAX_SPEC_NODES = 100_000


def _expanded_size(node, memo) -> int:
    """Values a composed YAML node stands for once its aliases are expanded (shared nodes counted each time)."""
    key = id(node)
    if key not in memo:
        memo[key] = 1  # a node that contains itself: counted once here, refused by the constructor
        value = node.value
        if isinstance(value, list):
            kids = [x for pair in value for x in (pair if isinstance(pair, tuple) else (pair,))]
            memo[key] = 1 + sum(_expanded_size(k, memo) for k in kids)
    return memo[key]


def _yaml_load(text: str, path: Path):
    """``yaml.safe_load`` that refuses a document expanding to more than :data:`MAX_SPEC_NODES` values."""
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node, {})
        if size > MAX_SPEC_NODES:
            raise ValueError(
                f"{path}: the spec expands to {size} values through YAML aliases (&/*), more than the limit "
                f"of {MAX_SPEC_NODES}"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_spec_file(path: Path) -> dict:
    """Return the mapping a spec file holds; ``ValueError`` naming the file for anything unreadable.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.json"
    >>> _ = p.write_text(json.dumps({"workloads": "builtin"}))
    >>> read_spec_file(p)
    {'workloads': 'builtin'}
    """
    if not path.is_file():
        raise FileNotFoundError(f"sweep spec not found: {path}")
    if path.stat().st_size > MAX_SPEC_BYTES:
        raise ValueError(f"{path}: {path.stat().st_size} bytes, more than a spec's limit of {MAX_SPEC_BYTES}")
    suffix = path.suffix.lower()
    if suffix == ".json":
        parse = json.loads
    elif suffix == ".toml":
        import tomllib

        parse = tomllib.loads
    elif suffix in (".yaml", ".yml"):
        try:
            import yaml  # noqa: F401 - only to say what is missing
        except ImportError:
            raise ValueError(f"{path}: YAML specs need PyYAML (pip install pyyaml); use JSON or TOML") from None

        def parse(text):
            return _yaml_load(text, path)
    else:
        raise ValueError(f"{path}: unknown spec format {suffix!r} (use .json, .toml, .yaml or .yml)")
    try:
        data = parse(path.read_text(encoding="utf-8-sig"))
    except RecursionError:
        raise ValueError(f"{path}: could not parse the spec: nested too deeply") from None
    except ValueError as exc:
        if str(exc).startswith(str(path)):  # ours, already naming the file
            raise
        raise ValueError(f"{path}: could not parse the spec: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - JSON / TOML / YAML parser errors
        raise ValueError(f"{path}: could not parse the spec: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the spec must be a mapping of keys to values")
    return data
