"""Signal tries of issue 28: SIGINT, SIGTERM and SIGHUP at random moments of three commands.

For each command (``simulate --output``, a serial ``sweep``, a dask ``sweep``) and each signal,
``--tries`` runs are started as subprocesses in a fresh folder and sent the signal at a moment
drawn uniformly (seeded) over the length of an uninterrupted run, measured first. The signal goes
where it would come from: SIGINT to the process group (Ctrl-C in a terminal), SIGTERM to the
main process only (``kill PID``), SIGHUP to the process group (the terminal went away).

After each try:

* the exit status is the run's own (0 when it finished first) or the documented one: 130 after
  SIGINT; death by the signal for SIGTERM and SIGHUP (a shell shows 143 and 129), or 128 +
  the signal number. A SIGINT while CPython itself starts (importing its ``site`` module, before
  any code of the command) aborts with status 1 and "Fatal Python error: init_import_site": that
  is counted apart, as nothing of the command ran;
* no temporary file is left, no output is partial, and every file there before the run (a user's
  file, the spec, the workload, the ``--output`` file replaced under ``--force``) is byte for
  byte what it was unless it was replaced by a whole new output;
* no process of the run is left (dask's scheduler and workers included), checked for a few
  seconds after the main process ended;
* an interrupted sweep (serial or dask) resumes: the same command again completes every run.

Not a timed test (it takes many minutes on a loaded machine); run it by hand::

    nice -n 10 python benchmarks/signals.py --tries 20 --seed 0

and record the table it prints in ``results/signals.md``.
"""

from __future__ import annotations

import argparse
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from safety_signals import FASTSCHED, _check_simulate, _check_sweep, _digest, _temporaries  # noqa: E402

# Four long jobs on one GPU: a run of a few seconds after start-up, with the output open late.
WORKLOAD = "name,time,application,num_replicas,batch_size\n" + "".join(
    f"yolov3-{i},{30 * i},yolov3,1,64\n" for i in range(4)
)
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GROUP = {signal.SIGINT: True, signal.SIGTERM: False, signal.SIGHUP: True}
SWEEP_RUNS = 2


def _simulate(root: Path):
    (root / "w.csv").write_text(WORKLOAD)
    (root / "keep.txt").write_text("a file of the user's\n")
    (root / "log.jsonl").write_text("the previous log\n")
    args = [*FASTSCHED, "simulate", "w.csv", "--policy", "tiresias", "--nodes", "1", "--gpus", "1"]
    return [*args, "-q", "--output", "log.jsonl", "--force"]


def _sweep(root: Path, dask: bool):
    # Two runs of half the workload: a sweep pays start-up (and dask its cluster) once more on resume.
    (root / "w.csv").write_text(WORKLOAD.rsplit("\n", 3)[0] + "\n")
    (root / "keep.txt").write_text("a file of the user's\n")
    spec = {"workloads": "w.csv", "policy": "tiresias", "nodes": 1, "gpus": 1, "interval": [60, 120], "seeds": 1}
    (root / "sweep.json").write_text(json.dumps(spec))
    mode = ["--workers", "1"] if dask else ["--serial"]
    return [*FASTSCHED, "sweep", "sweep.json", *mode, "-q", "--output", "out"]


COMMANDS = {
    "simulate --output": (_simulate, _check_simulate, False),
    "sweep --serial": (lambda r: _sweep(r, False), _check_sweep, True),
    "sweep (dask, 1 worker)": (lambda r: _sweep(r, True), _check_sweep, True),
}


def _alive(pgid: int) -> list:
    """Return the processes still in process group ``pgid`` (read from /proc: no extra tools)."""
    left = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            left.append(int(d.name))
    return left


def _default_signals():
    """Give the command the default handling of the three signals, as a terminal's shell does.

    A script started in the background (``&``, ``nohup``) passes on SIGINT and SIGHUP ignored,
    and every try would then be a run that the signal cannot stop.
    """
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_DFL)


def _run(args, cwd: Path, delay=None, sig=None):
    """Run ``args`` in its own session; after ``delay`` s send ``sig``. Return (status, seconds, processes left)."""
    t0 = time.perf_counter()
    with open(cwd / ".stderr.log", "w") as err:
        proc = subprocess.Popen(
            args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True, preexec_fn=_default_signals
        )
        if delay is not None:
            try:
                proc.wait(delay)
            except subprocess.TimeoutExpired:
                if GROUP[sig]:
                    os.killpg(proc.pid, sig)
                else:
                    proc.send_signal(sig)
        try:
            rc = proc.wait(600)
        except subprocess.TimeoutExpired:
            rc = "hung"
        seconds = time.perf_counter() - t0
        deadline = time.monotonic() + 10.0
        left = _alive(proc.pid)
        while left and time.monotonic() < deadline:
            time.sleep(0.25)
            left = _alive(proc.pid)
        if left or rc == "hung":
            os.killpg(proc.pid, signal.SIGKILL)
    return rc, seconds, left


def _outcome(rc, sig, stderr="") -> str | None:
    """Name the outcome of exit status ``rc`` after ``sig``; ``None`` for an undocumented one."""
    if rc == 0:
        return "finished first"
    if rc == 1 and "Fatal Python error: init_import_site" in stderr:
        # CPython itself, importing its site module before any code of the command runs: it
        # cannot raise KeyboardInterrupt there and aborts with status 1; nothing is written.
        return "interpreter start-up (1)"
    if rc == 130 and sig == signal.SIGINT:
        return "stopped (130)"
    if rc in (-sig, 128 + sig):
        return f"stopped ({128 + sig})"
    return None


def _stopped(counts, sig) -> int:
    return sum(n for (s, o), n in counts.items() if s == sig.name and o.startswith(("stopped", "interpreter")))


def _tries(name, tries, rng, until_stopped=False):
    make, check, resume = COMMANDS[name]
    root = Path(tempfile.mkdtemp(prefix="signals-"))
    try:
        durations = []
        for k in range(2):  # the shorter of two uninterrupted runs: the box is shared
            case = root / f"base{k}"
            case.mkdir()
            rc, seconds, _ = _run(make(case), case)
            if rc != 0:
                raise SystemExit(f"{name}: the uninterrupted run failed ({rc}): {(case / '.stderr.log').read_text()}")
            durations.append(seconds)
        duration = min(durations)
        counts, failures = Counter(), []
        for sig in SIGNALS:
            i = -1
            # With until_stopped, a try whose run finished before its signal does not count: more
            # tries are drawn (at most 4x) until ``tries`` of them were stopped by the signal.
            while (i := i + 1) < tries or (until_stopped and _stopped(counts, sig) < tries and i < 4 * tries):
                folder = root / f"{sig.name}-{i}"
                folder.mkdir()
                args = make(folder)
                before = {p.name: _digest(p) for p in folder.iterdir() if p.is_file() and p.name != ".stderr.log"}
                delay = rng.uniform(0.0, duration)
                rc, _, left = _run(args, folder, delay, sig)
                outcome = _outcome(rc, sig, (folder / ".stderr.log").read_text())
                problems = check(folder, before)
                if outcome is None:
                    lines = (folder / ".stderr.log").read_text().strip().splitlines()
                    problems.append(f"exit {rc}: {lines[-1] if lines else ''}")
                    outcome = "other exit"
                if left:
                    problems.append(f"{len(left)} process(es) left running")
                if _temporaries(folder):
                    problems.append(f"temporary files left: {_temporaries(folder)}")
                counts[sig.name, outcome] += 1
                if resume and outcome.startswith("stopped"):
                    rc2, _, left2 = _run(args, folder)
                    rows = json.loads((folder / "out" / "runs.json").read_text()) if rc2 == 0 else []
                    if rc2 != 0 or len(rows) != SWEEP_RUNS or any(r.get("error") for r in rows) or left2:
                        problems.append(f"resume: exit {rc2}, {len(rows)} rows, {len(left2)} processes left")
                    counts[sig.name, "resumed"] += rc2 == 0 and len(rows) == SWEEP_RUNS
                if problems:
                    failures.append((sig.name, i, round(delay, 2), problems))
                counts[sig.name, "failures"] += bool(problems)
        return duration, counts, failures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None) -> int:
    """Run the tries, print one table per command; exit 1 on any failure."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tries", type=int, default=20, help="tries per signal and command")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=sorted(COMMANDS), action="append", help="run only these commands")
    ap.add_argument(
        "--until-stopped",
        action="store_true",
        help="draw more tries (at most 4x) until --tries of them were stopped by the signal, not finished first",
    )
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    bad = 0
    for name in COMMANDS:
        if args.only and name not in args.only:
            continue
        t0 = time.perf_counter()
        duration, counts, failures = _tries(name, args.tries, rng, args.until_stopped)
        what = f"until {args.tries} stopped" if args.until_stopped else str(args.tries)
        print(f"## {name}: {what} tries per signal, each at a uniform moment of a {duration:.1f} s run")
        print(f"({time.perf_counter() - t0:.0f} s in all)")
        print("| signal | finished first | stopped | stopped in interpreter start-up | resumed | failures |")
        print("|---|---:|---:|---:|---:|---:|")
        for sig in SIGNALS:
            stopped = sum(n for (s, o), n in counts.items() if s == sig.name and o.startswith("stopped"))
            how = ", ".join(sorted({o for (s, o) in counts if s == sig.name and o.startswith("stopped")}))
            print(
                f"| {sig.name} | {counts[sig.name, 'finished first']} | {stopped} {how.replace('stopped ', '')} | "
                f"{counts[sig.name, 'interpreter start-up (1)']} | {counts[sig.name, 'resumed']} | "
                f"{counts[sig.name, 'failures']} |"
            )
        for f in failures:
            print(f"  {f[0]} try {f[1]} at {f[2]} s: {'; '.join(f[3])}")
        sys.stdout.flush()
        bad += len(failures)
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
