"""Check runs of the homogeneous Sia setting against the paper's Table 4 (``benchmarks/data/sia_table4.toml``).

Usage: python benchmarks/hetero/table4_check.py RUNS.jsonl [...] [--data FILE]

``RUNS`` are the JSON lines of ``benchmarks/hetero/fidelity.py philly POLICY... --preset
sia-homogeneous``. Prints, per policy, the mean of the workloads' average JCT (workloads of
the data file only), the paper's value where known, and the two checks: the paper's order
and the tolerance. Exit status 0 when every check that can be made passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fastsched._datafile import read_data_file

DATA = Path(__file__).resolve().parents[1] / "data" / "sia_table4.toml"


def load_facts(path=DATA) -> dict:
    """Read the paper's values and the check's settings (see the data file)."""
    facts = read_data_file(path, what="Table-4 data file")
    for key in ("source", "preset", "trace", "workloads", "order", "approx", "checked", "tolerance"):
        if key not in facts:
            raise ValueError(f"{path}: missing field {key!r}")
    facts.setdefault("avg_jct_hours", {})
    return facts


def mean_jct_hours(records, facts) -> dict:
    """Mean over the data file's workloads of each policy's average JCT, in hours (complete policies only)."""
    want = {f"workload-{w}" for w in facts["workloads"]}
    seen: dict = {}
    for r in records:
        if r.get("preset") == facts["preset"] and r.get("trace") == facts["trace"] and r["workload"] in want:
            seen.setdefault(r["policy"], {})[r["workload"]] = r["avg_jct"] / 3600
    return {p: sum(v.values()) / len(v) for p, v in seen.items() if set(v) == want}


def check(means, facts) -> list:
    """Return ``(check, ok, detail)`` triples; ``ok`` is ``None`` where the check cannot be made."""
    out = []
    groups = [[p for p in g if p in means] for g in facts["order"]]
    missing = [p for g in facts["order"] for p in g if p not in means]
    for g in groups:
        if len(g) > 1:
            lo, hi = min(means[p] for p in g), max(means[p] for p in g)
            out.append((f"{' ~ '.join(g)}", hi <= lo * (1 + facts["approx"]), f"{lo:.3f} .. {hi:.3f} h"))
    for a, b in zip(groups, groups[1:], strict=False):
        if a and b:
            worst, best = max(means[p] for p in a), min(means[p] for p in b)
            out.append((f"{'/'.join(a)} < {'/'.join(b)}", worst < best, f"{worst:.3f} < {best:.3f} h"))
    if missing:
        out.append(("order: policies run", None, f"missing {missing}"))
    paper = facts["avg_jct_hours"]
    for p in facts["checked"]:
        if p not in means:
            out.append((f"{p} within {facts['tolerance']:.0%}", None, "not run"))
        elif p not in paper:
            out.append(
                (
                    f"{p} within {facts['tolerance']:.0%}",
                    None,
                    f"ours {means[p]:.3f} h; paper's value not in the data file",
                )
            )
        else:
            rel = means[p] / paper[p] - 1
            out.append(
                (
                    f"{p} within {facts['tolerance']:.0%}",
                    abs(rel) <= facts["tolerance"],
                    f"{means[p]:.3f} vs {paper[p]:.3f} h ({rel:+.0%})",
                )
            )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--data", default=str(DATA))
    args = ap.parse_args(argv)
    facts = load_facts(args.data)
    records = [json.loads(line) for f in args.runs for line in open(f) if line.strip()]
    means = mean_jct_hours(records, facts)
    print(f"# {facts['source']}; {facts['preset']}, {facts['trace']} workloads {facts['workloads']}")
    print("| policy | ours (h) | paper (h) |\n|---|---|---|")
    for p, v in sorted(means.items(), key=lambda kv: kv[1]):
        print(f"| {p} | {v:.3f} | {facts['avg_jct_hours'].get(p, 'n/a')} |")
    results = check(means, facts)
    print("\n| check | result | detail |\n|---|---|---|")
    for name, ok, detail in results:
        print(f"| {name} | {'n/a' if ok is None else ('pass' if ok else 'FAIL')} | {detail} |")
    return 1 if any(ok is False for _, ok, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
