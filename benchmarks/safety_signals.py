"""Floor check of issue 28: signals at random moments leave no temporary file and no partial output.

Runs ``fastsched simulate --output`` and a serial ``fastsched sweep`` as subprocesses, sends
SIGINT, SIGTERM or SIGHUP at a random moment of each (uniform over the length of an
uninterrupted run, measured first), and checks after each try:

* no temporary file (``.NAME.XXXX.suffix``) is left in the output folder;
* no partial output: the ``--output`` log is either the file that was there before, untouched,
  or a whole log ending with its summary line; the sweep's tables are absent or whole, and
  every line of ``runs.jsonl`` is a whole row;
* a file that existed before the run (beside the outputs, and the replaced output itself when
  the run was interrupted) is byte for byte what it was;
* an interrupted sweep resumes: the same command again completes every run.

Not a timed test (it takes minutes): run it by hand, and report the counts::

    python benchmarks/safety_signals.py --tries 20 --seed 0
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

FASTSCHED = [sys.executable, "-m", "fastsched"]
WORKLOAD = "name,time,application,num_replicas,batch_size\n" + "".join(
    f"ncf-{i},{60 * i},ncf,1,32768\n" for i in range(6)
)
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _temporaries(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and p.is_file())


def _run(args, delay=None, sig=None, cwd=None) -> tuple[int, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if delay is not None:
        try:
            proc.wait(delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
    rc = proc.wait(600)
    return rc, time.perf_counter() - t0


def _simulate_case(root: Path):
    """Fill a folder with a workload, a file beside the output and an output to replace (--force)."""
    (root / "w.csv").write_text(WORKLOAD)
    (root / "keep.txt").write_text("a file of the user's\n")
    (root / "log.jsonl").write_text("the previous log\n")
    args = [*FASTSCHED, "simulate", "w.csv", "--policy", "tiresias", "--nodes", "1", "--gpus", "1"]
    return [*args, "-q", "--output", "log.jsonl", "--force"]


def _check_simulate(root: Path, before: dict) -> list:
    problems = []
    if _temporaries(root):
        problems.append(f"temporary files left: {_temporaries(root)}")
    if _digest(root / "keep.txt") != before["keep.txt"]:
        problems.append("keep.txt changed")
    log = root / "log.jsonl"
    if _digest(log) != before["log.jsonl"]:
        lines = log.read_text().splitlines()
        try:
            whole = bool(lines) and "summary" in json.loads(lines[-1]) and all(json.loads(x) for x in lines)
        except ValueError:
            whole = False
        if not whole:
            problems.append("log.jsonl replaced by a partial log")
    return problems


def _sweep_case(root: Path):
    (root / "w.csv").write_text(WORKLOAD)
    (root / "keep.txt").write_text("a file of the user's\n")
    spec = {"workloads": "w.csv", "policy": "tiresias", "nodes": 1, "gpus": 1, "interval": [30, 60, 120], "seeds": 2}
    (root / "sweep.json").write_text(json.dumps(spec))
    return [*FASTSCHED, "sweep", "sweep.json", "--serial", "-q", "--output", "out"]


def _check_sweep(root: Path, before: dict) -> list:
    problems = []
    for name in ("keep.txt", "sweep.json", "w.csv"):
        if _digest(root / name) != before[name]:
            problems.append(f"{name} changed")
    out = root / "out"
    if not out.is_dir():
        return problems
    if _temporaries(out):
        problems.append(f"temporary files left: {_temporaries(out)}")
    for name in ("runs.json", "spec.json"):
        if (out / name).exists():
            try:
                json.loads((out / name).read_text())
            except ValueError:
                problems.append(f"partial {name}")
    for name in ("runs.csv", "summary.csv"):
        if (out / name).exists() and not (out / name).read_text().endswith("\n"):
            problems.append(f"partial {name}")
    if (out / "runs.jsonl").exists():
        for line in (out / "runs.jsonl").read_text().splitlines():
            try:
                json.loads(line)
            except ValueError:
                problems.append("a torn line in runs.jsonl")
    return problems


def _tries(name, make, check, tries, rng, resume):
    root = Path(tempfile.mkdtemp(prefix=f"safety-{name}-"))
    try:
        case = root / "base"
        case.mkdir()
        args = make(case)
        _, duration = _run(args, cwd=case)  # an uninterrupted run: how long a try may last
        counts = Counter()
        failures = []
        for i in range(tries):
            folder = root / f"try{i}"
            folder.mkdir()
            args = make(folder)
            before = {p.name: _digest(p) for p in folder.iterdir() if p.is_file()}
            sig = rng.choice(SIGNALS)
            delay = rng.uniform(0.0, duration)
            rc, _ = _run(args, delay, sig, cwd=folder)
            expected = {signal.SIGINT: 130}.get(sig, -sig)
            if rc in (0, 3):
                outcome = "finished first"
            elif rc == expected:
                outcome = "stopped"
            elif sig == signal.SIGINT and rc == -sig:  # before fastsched's main() was entered (imports)
                outcome = "stopped early"
            else:
                outcome = f"exit {rc}"
            counts[(sig.name, outcome)] += 1
            problems = check(folder, before)
            if resume and outcome.startswith("stopped"):
                rc2, _ = _run(args, cwd=folder)
                rows = json.loads((folder / "out" / "runs.json").read_text()) if rc2 == 0 else []
                if rc2 != 0 or len(rows) != 6:
                    problems.append(f"resume: exit {rc2}, {len(rows)} rows")
            if problems:
                failures.append((i, sig.name, round(delay, 2), problems))
        return duration, counts, failures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None) -> int:
    """Run the tries; print the counts; exit 1 on any failure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tries", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    bad = 0
    for name, make, check, resume in (
        ("simulate --output", _simulate_case, _check_simulate, False),
        ("sweep --serial", _sweep_case, _check_sweep, True),
    ):
        duration, counts, failures = _tries(name, make, check, args.tries, rng, resume)
        print(f"## {name}: {args.tries} tries, signal at a uniform moment of a {duration:.1f} s run")
        for (sig, outcome), n in sorted(counts.items()):
            print(f"  {sig:8s} {outcome:15s} {n}")
        print(f"  failures: {len(failures)}")
        for f in failures:
            print(f"    try {f[0]} {f[1]} at {f[2]} s: {'; '.join(f[3])}")
        bad += len(failures)
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
