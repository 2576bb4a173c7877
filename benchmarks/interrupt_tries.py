"""Ctrl-C at random moments of ``fastsched simulate`` and ``fastsched sweep --serial`` (issue 26, item 2).

Each try starts the command in its own process group, sends SIGINT to the group (what Ctrl-C in
a terminal does) after a random delay, and checks:

* the exit status is 130 (never 1 with "internal error", never a traceback); a signal that lands
  while Python is still importing fastsched, before any of its code runs, kills the process by
  SIGINT (status -2 here, 130 in the shell, with Python's own traceback): counted apart;
* no partial file: the ``--output`` log of ``simulate`` does not exist, and no temporary file
  (``.NAME.*``) is left in the output folder;
* ``sweep``: the message says how to resume, ``runs.jsonl`` holds only successful runs (an
  interrupted run is not recorded as failed), and the resume command finishes the sweep.

A try whose command finished before the signal is counted apart (and does not count as one of
the tries). Usage::

    .venv/bin/python benchmarks/interrupt_tries.py --tries 20 --seed 0            # both commands
    .venv/bin/python benchmarks/interrupt_tries.py --only simulate --max-delay 8
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("FASTSCHED_SHARED", ROOT.parent / "shared"))
# The console script, as a user runs it (its entry point handles Ctrl-C during the imports).
_SCRIPT = Path(sys.executable).parent / "fastsched"
FASTSCHED = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "fastsched"]


def _simulate_argv(out: Path) -> list:
    wl = SHARED / "pollux-traces" / "workloads" / "workload-6.csv"
    if wl.is_file():
        args = [str(wl), "--traces", str(SHARED / "pollux-traces" / "traces"), "--preset", "osdi21"]
    else:  # no shared traces: the builtin workload, Pollux
        args = []
    return [*FASTSCHED, "simulate", *args, "--output", str(out / "rounds.jsonl"), "-q"]


def _sweep_spec(folder: Path) -> Path:
    spec = {"workloads": "builtin", "policy": ["pollux", "tiresias", "optimus"], "nodes": 4, "gpus": 4}
    spec["max_time"] = 6 * 3600
    p = folder / "spec.json"
    p.write_text(json.dumps(spec))
    return p


def _temporaries(folder: Path) -> list:
    return sorted(str(p) for p in folder.rglob(".*") if p.is_file())


def one_try(kind: str, delay: float, folder: Path) -> dict:
    out = folder / "out"
    if kind == "simulate":
        out.mkdir()
        argv = _simulate_argv(out)
    else:
        argv = [*FASTSCHED, "sweep", str(_sweep_spec(folder)), "--serial", "-q", "--output", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        proc.wait(timeout=delay)
        finished = True
    except subprocess.TimeoutExpired:
        finished = False
        os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=600)
    rc = proc.returncode
    problems = []
    if finished:
        return {"kind": kind, "delay": delay, "rc": rc, "finished": True, "problems": problems}
    startup = rc == -signal.SIGINT  # Python's own death by SIGINT: the shell reports 130 too
    if rc != 130 and not startup:
        problems.append(f"exit status {rc}")
    if "internal error" in stderr or ("Traceback" in stderr and not startup):
        problems.append("internal error or traceback: " + stderr.strip().splitlines()[-1][:200])
    if startup and "Traceback" in stderr:
        where = [x.strip() for x in stderr.splitlines() if x.strip().startswith("File ")]
        # past the import, fastsched's own code should have caught it
        if any("fastsched/cli.py" in x and x.endswith("in main") for x in where):
            problems.append("killed by SIGINT after fastsched's code started")
    if out.exists() and _temporaries(out):
        problems.append(f"temporary files left: {_temporaries(out)}")
    if kind == "simulate" and (out / "rounds.jsonl").exists():
        problems.append("partial --output log")
    if kind == "sweep" and rc == 130:
        log = out / "runs.jsonl"
        if log.exists() and "resume with:" not in stderr:
            problems.append("runs kept but no resume command")
        rows = [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []
        if any(r.get("error") for r in rows):
            problems.append("an interrupted run was recorded as failed")
    return {
        "kind": kind,
        "delay": round(delay, 2),
        "rc": rc,
        "finished": False,
        "problems": problems,
        "startup": startup,
    }


def check_resume(folder: Path) -> str:
    """Resume the last interrupted sweep folder to the end; return "" or the problem."""
    spec, out = folder / "spec.json", folder / "out"
    proc = subprocess.run(
        [*FASTSCHED, "sweep", str(spec), "--serial", "-q", "--allow-incomplete", "--output", str(out)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return f"resume exit status {proc.returncode}: {proc.stderr.strip()[-300:]}"
    return "" if (out / "runs.csv").is_file() else "resume wrote no runs.csv"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tries", type=int, default=20, help="interrupted tries per command (default 20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-delay", type=float, default=0.3, help="seconds (default 0.3)")
    ap.add_argument("--max-delay", type=float, default=10.0, help="seconds (default 10)")
    ap.add_argument("--only", choices=("simulate", "sweep"), default=None)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    kinds = [args.only] if args.only else ["simulate", "sweep"]
    failed = 0
    for kind in kinds:
        done = finished = startups = 0
        bad = []
        last = None
        t0 = time.perf_counter()
        while done < args.tries:
            delay = rng.uniform(args.min_delay, args.max_delay)
            folder = Path(tempfile.mkdtemp(prefix=f"fastsched-int-{kind}-"))
            r = one_try(kind, delay, folder)
            if r["finished"]:
                finished += 1
                if finished > 3 * args.tries:
                    print(f"{kind}: the command keeps finishing before the signal; lower --max-delay")
                    return 2
                continue
            done += 1
            startups += r["startup"]
            if kind == "sweep" and (folder / "out" / "runs.jsonl").exists():
                last = folder
            if r["problems"]:
                bad.append(r)
            print(
                f"  {kind} try {done:2d}: SIGINT after {r['delay']:5.2f} s -> exit {r['rc']} {'; '.join(r['problems'])}"
            )
        resume = check_resume(last) if kind == "sweep" and last is not None else ""
        print(
            f"{kind}: {done} interrupted tries, {done - len(bad)} clean (exit 130, no partial file), of which "
            f"{startups} during Python's start-up (killed by SIGINT before fastsched's code ran: the shell's "
            f"status 130, Python's KeyboardInterrupt traceback); {len(bad)} with problems; "
            f"{finished} finished before the signal; "
            f"{'resume: ' + (resume or 'ok') if kind == 'sweep' else ''} ({time.perf_counter() - t0:.0f} s)"
        )
        failed += len(bad) + bool(resume)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
