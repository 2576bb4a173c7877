"""Start-up of the ``fastsched`` command and its refusals of 10**12, two source trees side by side.

Issue 25 asks a command to load only what it uses; issue 28 asks a count of 10**12 to be
refused in <= 1 s. Both are dominated by what a fresh process imports. Each case runs as a
fresh ``python -m fastsched`` process against each tree (``PYTHONPATH``), the trees alternating
within every repetition of a case so that both see the same load; per case and tree it reports the exit
status, the fastsched modules loaded (one extra run that lists ``sys.modules``), and the medians
of wall time, CPU time (user + system of the process) and peak memory (``ru_maxrss``), with the
ratio branch / base. Each process may use 4 GiB of address space (:data:`MEMORY_LIMIT`) and
``--timeout`` seconds: a count that is not refused is stopped there. Not a timed test; run it by hand::

    python benchmarks/startup.py --base-ref main --repeat 5

(``--base-ref`` is extracted with ``git archive`` into a temporary folder; the branch is this
checkout). The refusal cases are those of ``benchmarks/safety_bounds.py`` plus the options it
does not cover.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from safety_bounds import BIG, _files  # noqa: E402 - the shared refusal cases

_LIST_MODULES = (
    "import json, sys\nfrom fastsched.cli import main\n"
    "try:\n    rc = main(json.loads(sys.argv[1]))\nexcept SystemExit as exc:\n    rc = exc.code\n"
    "mods = [m for m in sys.modules if m == 'fastsched' or m.startswith('fastsched.')]\n"
    "heavy = [m for m in ('numpy', 'numba', 'scipy') if m in sys.modules]\n"
    "print(json.dumps([len(mods), heavy]), file=sys.stderr)"
)


def _cases(d: Path) -> dict:
    cases = {"--version": ["--version"], "simulate --help": ["simulate", "--help"]}
    cases.update(_files(d))
    cases.update(
        {
            "simulate --gpus 10**12": ["simulate", "w.csv", "--gpus", str(BIG), "-q"],
            "simulate --scale 10**12": ["simulate", "w.csv", "--scale", str(BIG), "-q"],
            "simulate --seed 10**30": ["simulate", "w.csv", "--seed", str(10**30), "-q"],
        }
    )
    return cases


#: Address-space limit of each case (a count that is not refused may allocate without end).
MEMORY_LIMIT = 4 << 30


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _one(argv, cwd, tree, timeout) -> tuple:
    env = dict(os.environ, PYTHONPATH=str(tree))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fastsched", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_limit_memory,
    )
    deadline = t0 + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            return None, timeout, None, None
        time.sleep(0.005)
    wall = time.perf_counter() - t0
    return os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _modules(argv, cwd, tree, timeout) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    try:
        out = subprocess.run(
            [sys.executable, "-c", _LIST_MODULES, json.dumps(argv)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        return "-"
    try:
        n, heavy = json.loads(out.stderr.strip().splitlines()[-1])
    except (IndexError, ValueError):  # ended without its report (out of memory)
        return "-"
    return f"{n}" + (f" ({', '.join(heavy)})" if heavy else "")


def main(argv=None) -> int:
    """Run every case ``--repeat`` times on both trees, interleaved; print a markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-ref", default="main", help="git ref of the base tree (default main)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a case counts as a hang")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = tmp / "base"
        base.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.base_ref, "fastsched"], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        trees = {"base": base, "branch": ROOT}
        work = tmp / "files"
        work.mkdir()
        cases = _cases(work)
        print(f"Medians of {args.repeat} runs per case and tree, alternating; CPU = user + system of the process.\n")
        print("| case | tree | exit | fastsched modules (heavy) | wall s | CPU s | peak MiB |")
        print("|---|---|---|---|---|---|---|", flush=True)
        ratios = []
        for name, command in cases.items():
            runs = {t: [] for t in trees}
            for _ in range(args.repeat):
                for tree, path in trees.items():
                    runs[tree].append(_one(command, work, path, args.timeout))
            cpu = {}
            for tree, path in trees.items():
                rs = runs[tree]
                codes = ",".join(sorted({"hang" if r[0] is None else str(r[0]) for r in rs}))
                done = [r for r in rs if r[0] is not None]
                wall = statistics.median(r[1] for r in rs)
                cpu[tree] = statistics.median(r[2] for r in done) if done else float("nan")
                mem = max((r[3] for r in done), default=float("nan"))
                mods = _modules(command, work, path, args.timeout)
                print(f"| {name} | {tree} | {codes} | {mods} | {wall:.2f} | {cpu[tree]:.2f} | {mem:.0f} |", flush=True)
            ratios.append((name, cpu["branch"] / cpu["base"]))
        print("\n| case | CPU ratio branch / base |")
        print("|---|---|")
        for name, r in ratios:
            print(f"| {name} | {r:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
