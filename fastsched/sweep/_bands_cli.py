"""``fastsched sweep bands``: uncertainty bands of a study on modelled jobs, from the command line.

The face of :func:`fastsched.sweep.uncertainty_bands`. It is a ``sweep`` command because the
draws are an ordinary sweep (one run per draw and policy, resumable, serial or on dask); it is
typed ``fastsched sweep bands WORKLOAD ...`` and parsed as its own command
(:func:`fastsched.cli.route_argv`; :func:`fastsched.sweep._cli.register_bands` adds its parser
beside ``sweep``'s, so that the parser loads no module more), since ``fastsched sweep SPEC``
takes a spec file where ``bands`` stands. This module is imported only to run it.
"""

from __future__ import annotations

import csv
import json
import math
import shlex
import sys
from pathlib import Path

from fastsched._interrupt import Interrupted

__all__ = ["run", "bands_record", "default_out", "table", "EXIT_FAILED_RUNS", "EXIT_INCOMPLETE"]

#: Exit status when a draw's run failed; when runs stopped with jobs unfinished (as ``fastsched sweep``).
EXIT_FAILED_RUNS = 1
EXIT_INCOMPLETE = 3
#: What ``--vary`` can name.
VARY = ("noise", "step")
#: The files a bands folder holds (a folder with any of them is one, for ``--resume``).
OWN = ("bands.json", "bands.csv", "profiles", "runs")


def default_out(workload) -> Path:
    """Return the default ``--out``: ``<workload's stem>-bands`` here (the workload's folder may be read-only).

    Examples
    --------
    >>> default_out("traces/workload-1.csv").as_posix()
    'workload-1-bands'
    """
    return Path(f"{Path(str(workload)).stem}-bands")


def _check(args) -> dict:
    """Every flag checked before a run; return :func:`uncertainty_bands`'s keyword arguments."""
    from fastsched.sim._cli import _policies
    from fastsched.sim.presets import PRESETS, preset_shape
    from fastsched.sweep.client import check_dask, check_workers
    from fastsched.sweep.uncertainty import MAX_DRAWS, STEP_LOG_ERROR, _profiled_apps

    if not 1 <= args.draws <= MAX_DRAWS:
        raise ValueError(f"--draws must be in [1, {MAX_DRAWS}], got {args.draws}")
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    if args.run_seed < 0:
        raise ValueError(f"--run-seed must be >= 0, got {args.run_seed}")
    vary = [w.strip() for w in args.vary.split(",")]
    if any(w not in VARY for w in vary) or len(set(vary)) != len(vary):
        raise ValueError(f"--vary must name noise, step or both (comma-separated), got {args.vary!r}")
    check_workers(args.workers, args.scheduler)
    if not Path(args.profiles).is_dir():
        raise ValueError(f"--profiles: no such folder: {args.profiles}")
    if args.workload != "builtin" and not Path(args.workload).is_file():
        raise ValueError(f"WORKLOAD: no such file: {args.workload}")
    untyped = preset_shape(args.preset, cluster=args.cluster)[0] is None
    if untyped and _profiled_apps(Path(args.profiles), None):  # (none: draw_profiles names the folder's lack)
        # profiles are per GPU type: every run would fail, after the draws were written
        raise ValueError(f"--cluster: the profiles price GPU types (placements-<type>.csv) and --preset {args.preset} "
                         "gives a cluster without types: give --cluster (e.g. 4xt4) or a --preset with one (sia)")  # fmt: skip
    if not untyped:
        _check_profiles(args)
    if args.workers is not None or args.scheduler:
        check_dask("--workers/--scheduler run the draws", "leave them out to run in this process")
    policies = _policies(args.policy)
    if policies == [None]:
        policies = [PRESETS[args.preset]["policy"]]
    options = {k: v for k, v in (("preset", args.preset), ("cluster", args.cluster), ("max_time", args.max_time))
               if v is not None}  # fmt: skip
    return {"policies": policies, "draws": args.draws, "seed": args.seed, "run_seed": args.run_seed,
            "noise": "noise" in vary, "step_sigma": None if "step" in vary else dict.fromkeys(STEP_LOG_ERROR, 0.0),
            "step_dist": args.step_dist, "noise_by": args.noise_by, **options}  # fmt: skip


def _check_profiles(args) -> None:
    """Refuse, before any run, a workload application without a profile, or a GPU type its profile lacks."""
    from fastsched.sim.inputs.cluster_spec import parse_cluster
    from fastsched.sim.inputs.workload import read_workload
    from fastsched.sim.presets import preset_shape
    from fastsched.sim.truth.builtin import builtin_workload
    from fastsched.sweep.uncertainty import _profiled_apps

    types = parse_cluster(preset_shape(args.preset, cluster=args.cluster)[0]).types
    rows = builtin_workload() if args.workload == "builtin" else read_workload(args.workload)
    flag = "--cluster" if args.cluster is not None else f"--preset {args.preset}"  # where the cluster came from
    used = {w.application for w in rows}
    found = _profiled_apps(Path(args.profiles), used)
    if used - set(found):  # the drawn folders hold the profiled applications only
        raise ValueError(
            f"--profiles: {args.profiles} has no profile of {sorted(used - set(found))}, which the workload runs: "
            f"write them there (fastsched profile NAME --gpu ... --output {args.profiles})"
        )
    for name, info in found.items():
        missing = [t for t in types if t not in info["types"]]
        if missing:
            have = sorted(str(v.get("gpu", t)) for t, v in info["types"].items())
            want = [_gpu_name(t) for t in missing]
            model = info.get("model", name)
            raise ValueError(
                f"{flag}: {name} in --profiles {args.profiles} is profiled on {have} only, and the cluster also "
                f"has {want}: profile it there too (fastsched profile {model} --gpu {','.join(want)} ...) or give a "
                "--cluster of its types"
            )


def _gpu_name(trace_type) -> str:
    """Return a cluster type's catalogue name (``azure`` -> ``v100``), or the type if the catalogue lacks it."""
    from fastsched.catalog.gpus import canonical_name

    try:
        return canonical_name(trace_type)
    except ValueError:  # a type of the user's own table: its name is the one they know
        return str(trace_type)


def _check_out(args) -> Path:
    out = Path(args.out) if args.out else default_out(args.workload)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out: {out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (args.resume or args.force):
        ours = any((out / name).exists() for name in OWN)
        what = "holds the results of an earlier call" if ours else "is a folder of other files"
        raise ValueError(f"--out: {out} {what}: pass --resume to finish that call, or --force to replace them"
                         if ours else f"--out: {out} {what}: pass --force to write into it anyway")  # fmt: skip
    return out


def bands_record(res, settings: dict) -> dict:
    """Return the JSON object of a result: settings, per policy the central run and the band (seconds), the order.

    Examples
    --------
    >>> from fastsched.sweep.uncertainty import PolicyBand, UncertaintyResult
    >>> r = UncertaintyResult({"sia": PolicyBand("sia", 10.0, 12.0, 9.0, 15.0, 2)}, ("sia",), 1.0, [], [])
    >>> bands_record(r, {"draws": 2})["policies"]["sia"]["p90_s"]
    15.0
    """

    def num(v):
        return None if isinstance(v, float) and not math.isfinite(v) else v

    from fastsched.sweep.table import unfinished

    incomplete = sum(map(unfinished, res.rows))
    return {**settings,
            "policies": {p: {"central_s": num(b.central), "median_s": num(b.median), "p10_s": num(b.p10),
                             "p90_s": num(b.p90), "draws": b.draws} for p, b in res.bands.items()},
            "order": list(res.order), "order_holds": res.order_holds, "incomplete_runs": incomplete}  # fmt: skip


def _write(out: Path, record: dict) -> None:
    from fastsched._atomic import atomic_path

    with atomic_path(out / "bands.json") as tmp:
        Path(tmp).write_text(json.dumps(record, indent=1) + "\n")
    with atomic_path(out / "bands.csv") as tmp, open(tmp, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["policy", "central_s", "median_s", "p10_s", "p90_s", "draws", "order_rank", "order_holds"])
        for p, b in record["policies"].items():
            w.writerow([p, b["central_s"], b["median_s"], b["p10_s"], b["p90_s"], b["draws"],
                        record["order"].index(p) + 1, record["order_holds"]])  # fmt: skip


def table(record: dict) -> str:
    """Return the bands as aligned text: per policy the central run, the median, the 10-90 % band, its width.

    Examples
    --------
    >>> rec = {"policies": {"sia": {"central_s": 2300.0, "median_s": 2600.0, "p10_s": 2200.0, "p90_s": 3500.0,
    ...        "draws": 20}}, "order": ["sia"], "order_holds": 1.0}
    >>> print(table(rec).splitlines()[1])
    sia         2300      2600    2200-3500   50%
    """
    lines = [f"{'policy':<8} {'central_s':>9} {'median_s':>9} {'p10-p90_s':>12} {'width':>5}"]
    for p, b in record["policies"].items():
        if b["median_s"] is None:
            lines.append(f"{p:<8} {'-':>9} {'-':>9} {'-':>12} {'-':>5}")
            continue
        band = f"{b['p10_s']:.0f}-{b['p90_s']:.0f}"
        width = f"{(b['p90_s'] - b['p10_s']) / b['median_s']:.0%}"
        central = "-" if b["central_s"] is None else f"{b['central_s']:.0f}"
        lines.append(f"{p:<8} {central:>9} {b['median_s']:>9.0f} {band:>12} {width:>5}")
    order, holds = record["order"], record["order_holds"]
    n = next(iter(record["policies"].values()))["draws"] if record["policies"] else 0
    if len(order) > 1:
        lines.append(f"\norder of the central run: {' < '.join(order)}; holds in {round(holds * n)} of {n} draws "
                     f"({holds:.0%})")  # fmt: skip
    return "\n".join(lines)


def _resume_command(args, out) -> str:
    words = ["fastsched", "sweep", "bands", args.workload, "--profiles", args.profiles, "--out", str(out), "--resume"]
    return shlex.join(words) + " (with the same other options)"


def run(args) -> int:
    """Run ``fastsched sweep bands``; returns 0, 1 when a run failed, 3 when runs were incomplete."""
    kwargs = _check(args)
    out = _check_out(args)
    from fastsched import _firstrun
    from fastsched.sweep.runner import SweepInterrupted, _simulate_serial
    from fastsched.sweep.uncertainty import uncertainty_bands

    if not args.quiet:
        _firstrun.compile_notice("sweep bands")
    dask = args.workers is not None or bool(args.scheduler)
    try:
        res = uncertainty_bands(args.workload, args.profiles, out_dir=out, resume=args.resume, client=args.scheduler,
                                workers=args.workers, progress=not args.quiet,
                                simulate_fn=None if dask else _simulate_serial, **kwargs)  # fmt: skip
    except SweepInterrupted as exc:
        raise Interrupted(f"{exc}; resume with: {_resume_command(args, out)}") from None
    except RuntimeError as exc:  # a draw's run raised: named, as fastsched sweep names a failed run
        print(f"fastsched sweep bands: {exc}", file=sys.stderr)
        return EXIT_FAILED_RUNS
    settings = {"workload": str(args.workload), "profiles": str(args.profiles), "draws": args.draws,
                "seed": args.seed, "run_seed": args.run_seed, "vary": args.vary, "step_dist": args.step_dist,
                "noise_by": args.noise_by}  # fmt: skip
    record = bands_record(res, settings)
    _write(out, record)
    print(json.dumps(record) if args.json else table(record))
    print(f"\n{len(res.rows)} runs; bands.json, bands.csv, profiles/ and runs/ in {out}", file=sys.stderr)
    if record["incomplete_runs"] and not args.allow_incomplete:
        print(f"fastsched sweep bands: {record['incomplete_runs']} run(s) stopped with jobs unfinished; their "
              "figures cover completed jobs only. Raise --max-time, or pass --allow-incomplete to accept this.",
              file=sys.stderr)  # fmt: skip
        return EXIT_INCOMPLETE
    return 0
