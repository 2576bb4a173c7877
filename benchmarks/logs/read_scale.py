"""Time and memory of reading a full-size log: fastsched's Helios reader beside pandas.read_csv.

Usage::

    python benchmarks/logs/read_scale.py --jobs 1000000 --repeats 3 [--log /tmp/helios_1m.csv]

Writes the synthetic Helios log once (:func:`fastsched.sim.inputs.logs.synthetic_log`, seed 0,
timed), then reads it ``--repeats`` times with each reader, each read in a fresh process (its
peak resident memory is that process's own ``ru_maxrss``), the readers alternating within each
repeat so both see the same machine load. Prints one JSON line per run, then the medians and
the ratios. pandas (optional) is the yardstick: ``read_csv`` with the three time columns
parsed, which is what the Helios artifact's own scripts do.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CHILD = {
    "fastsched": """
from fastsched.sim.inputs.logs import read_log
r = read_log(PATH)
n, kept = r.rows, len(r.jobs)
""",
    "pandas": """
import pandas as pd
df = pd.read_csv(PATH, parse_dates=["submit_time", "start_time", "end_time"])
df = df[df.gpu_num > 0]
n, kept = len(df), len(df)
""",
}


def run(reader: str, path: Path) -> dict:
    code = (
        "import json, resource, time, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        f"PATH = {str(path)!r}\n"
        "t0 = time.perf_counter(); c0 = time.process_time()\n"
        + _CHILD[reader]
        + "print(json.dumps({'wall_s': time.perf_counter() - t0, 'cpu_s': time.process_time() - c0,"
        " 'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 'rows': n, 'kept': kept}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--log", type=Path, default=Path("/tmp/helios_synthetic.csv"))
    ap.add_argument("--readers", nargs="+", default=list(_CHILD), choices=list(_CHILD))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from fastsched.sim.inputs.logs import synthetic_log

    t0 = time.perf_counter()
    log = synthetic_log(args.log, num_jobs=args.jobs, seed=0)
    gen = time.perf_counter() - t0
    size = args.log.stat().st_size / 2**20
    print(json.dumps({"generate_s": gen, "jobs": log.jobs, "file_mb": size}), flush=True)
    runs = {r: [] for r in args.readers}
    for rep in range(args.repeats):
        for reader in args.readers if rep % 2 == 0 else args.readers[::-1]:
            out = run(reader, args.log)
            print(json.dumps({"reader": reader, **out}), flush=True)
            if "error" not in out:
                runs[reader].append(out)
    med = {
        r: {k: statistics.median(x[k] for x in rs) for k in ("wall_s", "cpu_s", "rss_mb")}
        for r, rs in runs.items()
        if rs
    }
    print(f"\n{args.jobs:,} jobs, {size:.0f} MiB; generated in {gen:.1f} s")
    print("| reader | wall s | CPU s | peak RSS MiB |\n|---|---|---|---|")
    for r, m in med.items():
        print(f"| {r} | {m['wall_s']:.2f} | {m['cpu_s']:.2f} | {m['rss_mb']:.0f} |")
    if "fastsched" in med and "pandas" in med:
        a, b = med["pandas"], med["fastsched"]
        print(f"pandas / fastsched: wall x{a['wall_s'] / b['wall_s']:.2f}, peak RSS x{a['rss_mb'] / b['rss_mb']:.2f}")


if __name__ == "__main__":
    main()
