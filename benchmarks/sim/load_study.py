"""The osdi21 preset on many drawn workloads per load level: mean +- spread vs the paper.

Runs every ``workload-*.csv`` under ``ROOT/workloads-<s>[-d<i>]/`` (made by
``make_scaled_workloads.py``) with a preset, appending one JSON line per run to ``--out``
(resumable: runs already there are skipped), then summarises per load: the mean average
JCT over all workloads, its standard error, the standard deviation of a mean of 8 workloads
(what one published figure is), the means of each set of 8, and a composition-adjusted mean
(each application's mean JCT weighted by the generator's expected application shares,
which removes most of the noise from how many imagenet/yolov3 jobs a draw happens to hold).

Usage::

    python benchmarks/sim/load_study.py ../shared/pollux-traces ROOT --out runs.jsonl [--workers 1]
    python benchmarks/sim/load_study.py ../shared/pollux-traces ROOT --out runs.jsonl --summary
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

#: Published means of the Pollux paper's simulator study (osdi21 artifact), seconds.
PUBLISHED = {1.0: 2751.0, 0.5: 1534.0, 1.5: 3685.0}
#: The generator's expected application shares (make_scaled_workloads.py): S, M, L, XL
#: category shares of the 1280 shared rows, S and M split by fair coins.
SHARES_FROM_SHARED = {"S": 998 / 1280, "M": 197 / 1280, "L": 59 / 1280, "XL": 26 / 1280}
APP_SHARE = {
    "cifar10": SHARES_FROM_SHARED["S"] / 2,
    "ncf": SHARES_FROM_SHARED["S"] / 2,
    "deepspeech2": SHARES_FROM_SHARED["M"] / 2,
    "bert": SHARES_FROM_SHARED["M"] / 2,
    "yolov3": SHARES_FROM_SHARED["L"],
    "imagenet": SHARES_FROM_SHARED["XL"],
}


def run_one(args):
    traces, workload, preset, seed, policy = args
    from fastsched.sim import simulate

    t0 = time.process_time()
    r = simulate(workload, traces=traces, preset=preset, seed=seed, policy=policy)
    by_app: dict[str, list] = {}
    for j in r.jobs:
        s = by_app.setdefault(j.application, [0, 0.0])
        s[0] += 1
        s[1] += j.jct if j.jct is not None else math.nan
    return {
        "workload": workload,
        "preset": preset,
        "policy": policy or "pollux",
        "seed": seed,
        "avg_jct": r.avg_jct,
        "completed": r.completed,
        "jobs": len(r.jobs),
        "by_app": by_app,
        "cpu_s": time.process_time() - t0,
    }


def folders(root: Path):
    for d in sorted(root.iterdir()):
        m = re.fullmatch(r"workloads-([0-9.]+)(?:-d(\d+))?", d.name)
        if m and d.is_dir():
            yield float(m.group(1)), int(m.group(2) or 0), d


def _adjusted(rs: list[dict]) -> float:
    """Each application's mean JCT over ``rs``, weighted by the generator's expected shares."""
    apps: dict[str, list] = {}
    for r in rs:
        for app, (cnt, tot) in r["by_app"].items():
            a = apps.setdefault(app, [0, 0.0])
            a[0] += cnt
            a[1] += tot
    have = [a for a in APP_SHARE if a in apps]
    return sum(APP_SHARE[a] * apps[a][1] / apps[a][0] for a in have) / sum(APP_SHARE[a] for a in have)


def _rel(v: float, pub: float | None) -> str:
    return f" ({(v / pub - 1) * 100:+.1f} %)" if pub else ""


def summarise(rows: list[dict]) -> None:
    """Print per load: mean, spreads, set means, composition-adjusted mean, per-app JCTs."""
    by_load: dict[float, list[dict]] = {}
    for r in rows:
        by_load.setdefault(r["load"], []).append(r)
    rng = np.random.default_rng(0)
    for load in sorted(by_load):
        rs = by_load[load]
        x = np.array([r["avg_jct"] for r in rs])
        n = x.size
        sd = x.std(ddof=1) if n > 1 else math.nan
        pub = PUBLISHED.get(load)
        sets: dict[int, list] = {}
        for r in rs:
            sets.setdefault(r["draw"], []).append(r["avg_jct"])
        set_means = [sum(v) / len(v) for _, v in sorted(sets.items()) if len(v) == 8]
        adj = _adjusted(rs)
        boot = [_adjusted([rs[i] for i in rng.integers(0, n, n)]) for _ in range(400)]
        print(
            f"load {load:g}: {n} workloads, mean {x.mean():.1f}{_rel(x.mean(), pub)} +- {sd / math.sqrt(n):.1f} "
            f"(s.e.); sd of one workload {sd:.1f}, of a mean of 8 {sd / math.sqrt(8):.1f} "
            f"({sd / math.sqrt(8) / x.mean() * 100:.1f} %); composition-adjusted {adj:.1f}{_rel(adj, pub)} "
            f"+- {np.std(boot, ddof=1):.1f} (bootstrap s.e.)"
        )
        print(f"   means of the sets of 8: {', '.join(f'{m:.1f}' for m in set_means)}")
        tot = {}
        for r in rs:
            for app, (cnt, jct) in r["by_app"].items():
                t = tot.setdefault(app, [0, 0.0])
                t[0] += cnt
                t[1] += jct
        jobs = sum(c for c, _ in tot.values())
        print(
            "   per-app mean JCT (share): "
            + ", ".join(f"{a} {t / c:.0f} ({c / jobs * 100:.1f} %)" for a, (c, t) in sorted(tot.items()))
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pollux", type=Path, help="folder with traces/")
    ap.add_argument("root", type=Path, help="folder with workloads-<s>[-d<i>]/")
    ap.add_argument("--out", type=Path, required=True, help="JSON lines, appended")
    ap.add_argument("--preset", default="osdi21")
    ap.add_argument("--policy", help="another policy than the preset's (tiresias, optimus)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--loads", nargs="*", type=float)
    ap.add_argument("--draws", type=int, help="use only draw sets 0 .. N-1")
    ap.add_argument("--summary", action="store_true", help="only summarise --out")
    args = ap.parse_args(argv)
    done = []
    if args.out.exists():
        done = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()]
    if not args.summary:
        seen = {(r["workload"], r["preset"], r.get("policy", "pollux"), r["seed"]) for r in done}
        tasks = []
        for load, draw, folder in folders(args.root):
            if (args.loads and load not in args.loads) or (args.draws is not None and draw >= args.draws):
                continue
            for k in range(1, 9):
                w = str(folder / f"workload-{k}.csv")
                if (w, args.preset, args.policy or "pollux", args.seed) not in seen:
                    tasks.append(((load, draw), (str(args.pollux / "traces"), w, args.preset, args.seed, args.policy)))
        # interleave loads so partial results cover every level
        tasks.sort(key=lambda t: (t[0][1], int(Path(t[1][1]).stem.split("-")[1]), t[0][0]))
        with ProcessPoolExecutor(args.workers) as pool, open(args.out, "a") as f:
            for (load, draw), res in zip((t[0] for t in tasks), pool.map(run_one, [t[1] for t in tasks]), strict=True):
                res.update(load=load, draw=draw)
                f.write(json.dumps(res) + "\n")
                f.flush()
                done.append(res)
                print(
                    f"{load:g} d{draw} {Path(res['workload']).name}: {res['avg_jct']:.1f} s, cpu {res['cpu_s']:.1f} s"
                )
    mine = lambda r: (r["preset"], r.get("policy", "pollux"), r["seed"])  # noqa: E731
    summarise([r for r in done if mine(r) == (args.preset, args.policy or "pollux", args.seed)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
