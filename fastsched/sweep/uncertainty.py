"""Uncertainty bands: a study of modelled jobs rerun over seeded draws of its stated ranges.

A profile folder written by ``fastsched profile`` (:func:`fastsched.catalog.profile.write_profile`)
records in each application's ``profile.json`` how every GPU type was priced: ``datasheet``,
``calibrated`` or ``bootstrap``. Its answers carry two stated uncertainties:

* the **step time**: per (application, type), a multiplicative error ``exp(x)``, ``x`` drawn from
  a Laplace law of scale ``b = m / ln 2`` (default; or a normal of ``sigma = m / 0.6745``), ``m``
  the held-out median absolute log error of the profile's mode (:data:`STEP_LOG_ERROR`,
  ``benchmarks/results/uncertainty.md``): the held-out errors' p90 is 3.5 times their median, as a
  Laplace law's (3.3), not a normal's (2.4);
* the **gradient-noise scale**: its family's prior (:mod:`fastsched.catalog.noise_prior`, low and
  high the 10th and 90th percentiles), moved by one standard-normal ``z`` for start and end
  together, around the profile's own values. One ``z`` per prior group
  (:data:`fastsched.catalog.noise_prior.DRAW_GROUPS`, default), shared by the group's
  applications, or one per application (``noise_by="application"``).

:func:`uncertainty_bands` writes one profile folder per draw (draw ``k`` takes its normals from
``numpy.random.default_rng([seed, k])``, the groups' from ``[seed, k, 1]``: any machine, any
order, the same draws), plus the central one (every ``z`` = 0), and runs the workload on each,
for each policy, as one ordinary sweep (:func:`fastsched.sweep.run_serial`, or
:func:`fastsched.sweep.run_sweep` on dask): ``N`` draws cost about ``N + 1`` runs per policy. It
reports per policy the average JCT of the central run, and the median and the 10-90 % interval
over the draws, and how often the policies' order by average JCT is the central run's. An
application folder without ``profile.json`` (measured traces) is used as it is in every draw.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["STEP_LOG_ERROR", "STEP_SCALE", "STEP_SIGMA", "PolicyBand", "UncertaintyResult", "draw_profiles",
           "uncertainty_bands"]  # fmt: skip

#: Held-out median absolute log error of a (model, type) step time, per profile mode
#: (``benchmarks/uncertainty_coverage.py --step-error``: bootstrap 0.104 over the 20,027 held-out
#: rows of ``benchmarks/oracle.py --bootstrap``, p90 0.368; datasheet, uncalibrated, 0.199 over
#: all 20,512 measured rows, p90 0.858; a calibrated efficiency is counted as the datasheet's,
#: having no validation of its own here).
STEP_LOG_ERROR = {"bootstrap": 0.104, "calibrated": 0.199, "datasheet": 0.199}
#: The Laplace scale ``b`` whose median absolute value is :data:`STEP_LOG_ERROR` (``m / ln 2``).
STEP_SCALE = {mode: round(m / math.log(2.0), 4) for mode, m in STEP_LOG_ERROR.items()}
#: The normal's sigma with the same median absolute value (``m / 0.6745``; ``step_dist="normal"``).
STEP_SIGMA = {mode: round(m / 0.6744897501960817, 4) for mode, m in STEP_LOG_ERROR.items()}
#: The laws a step-time error is drawn from; how an application's noise draws are grouped.
STEP_DISTS = ("laplace", "normal")
NOISE_BY = ("group", "application")
#: The most draws one call makes (each is a profile folder and a run per policy).
MAX_DRAWS = 10_000


class PolicyBand(NamedTuple):
    """One policy's average JCT (seconds): the central run and the draws' median and 10-90 % interval.

    Examples
    --------
    >>> b = PolicyBand("sia", 3600.0, 3700.0, 3000.0, 4500.0, 20)
    >>> b.p90 - b.p10
    1500.0
    """

    policy: str
    central: float
    median: float
    p10: float
    p90: float
    draws: int


class UncertaintyResult(NamedTuple):
    """What :func:`uncertainty_bands` returns.

    Attributes
    ----------
    bands : dict
        ``{policy: PolicyBand}``.
    order : tuple
        The policies by the central run's average JCT, best first.
    order_holds : float
        Share of the draws whose order is ``order``.
    rows : list of dict
        The sweep's rows (one per run; ``draw`` -1 is the central run).
    folders : list of Path
        The profile folders, central first.

    Examples
    --------
    >>> UncertaintyResult({}, ("sia",), 1.0, [], []).order_holds
    1.0
    """

    bands: dict
    order: tuple
    order_holds: float
    rows: list
    folders: list


def _model_of(info: dict):
    from fastsched.catalog.models import ModelSpec, check_model, model_spec

    spec = info.get("spec")
    if isinstance(spec, dict):
        data = {k: tuple(v) if isinstance(v, list) else v for k, v in spec.items()}
        return check_model(ModelSpec(**data))
    return model_spec(info["model"])


def _normals(seed: int, k: int, apps: dict, groups) -> tuple:
    """``(noise z per app, step z per (app, type))`` of draw ``k`` (sorted names: order-free).

    ``groups`` (``{app: group}``, or ``None`` for one ``z`` per application): the applications of
    a group share its ``z``, drawn from its own stream so that the step normals stay the same.
    """
    rng = np.random.default_rng([int(seed), int(k)])
    noise, step = {}, {}
    for app in sorted(apps):
        noise[app] = float(rng.standard_normal())
        for t in sorted(apps[app]["types"]):
            step[app, t] = float(rng.standard_normal())
    if groups is not None:
        grng = np.random.default_rng([int(seed), int(k), 1])
        shared = {g: float(grng.standard_normal()) for g in sorted(set(groups.values()))}
        noise = {app: shared[groups[app]] for app in noise}
    return noise, step


def _step_log(z: float, scale: float, dist: str) -> float:
    """Return the log step-time factor at the standard-normal quantile ``z``: ``scale z``, or Laplace's.

    Laplace's quantile at ``Phi(z)`` is ``sign(z) b (-ln(1 - 2 |Phi(z) - 1/2|))``, and
    ``1 - 2 |Phi(z) - 1/2| = erfc(|z| / sqrt 2)``: the same normal maps to either law, so the two
    give paired draws (``z`` at the median absolute value 0.6745 gives ``b ln 2`` in both).
    """
    if dist == "normal":
        return scale * z
    tail = max(math.erfc(abs(z) / math.sqrt(2.0)), 1e-300)
    return math.copysign(scale * -math.log(tail), z) if z else 0.0


def _write_draw(src: Path, dst: Path, apps: dict, noise_z: dict, step_x: dict, noise: bool):
    from fastsched.catalog import gpus as gcat
    from fastsched.catalog.noise_prior import draw_noise_scale, noise_prior
    from fastsched.catalog.oracle import StepAdjust
    from fastsched.catalog.profile import write_profile

    dst.mkdir(parents=True, exist_ok=True)
    for sub in sorted(src.iterdir()):
        if sub.is_dir() and sub.name not in apps and not (dst / sub.name).exists():
            shutil.copytree(sub, dst / sub.name)  # measured traces: the same in every draw
    for app, info in sorted(apps.items()):
        m = _model_of(info)
        if noise:
            prior = noise_prior(m)
            drawn = draw_noise_scale(prior, noise_z[app])
            m = m._replace(noise_scale=tuple(v * d / c for v, d, c in zip(m.noise_scale, drawn, prior.central,
                                                                           strict=True)))  # fmt: skip
        effs, floors, boots, types = {}, {}, {}, []
        for name, t in sorted(info["types"].items()):
            f = float(np.exp(step_x[app, name]))
            a = StepAdjust(**t["adjust"]) if isinstance(t.get("adjust"), dict) else StepAdjust()
            # every time of the step's model moves with the draw: GPU, host, shared path, ring latency
            adjust = a._replace(gpu_scale=a.gpu_scale * f, host_scale=a.host_scale * f,
                                node_sync_s=a.node_sync_s * f, hop_latency_s=a.hop_latency_s * f)  # fmt: skip
            g = gcat.gpu_type(t.get("gpu", name))
            types.append(g.name)
            if t.get("efficiency"):
                effs[g.name] = float(t["efficiency"])
            floors[g.name] = float(t.get("floor_s") or 0.0) * f
            boots[g.name] = _as_bootstrap(adjust, floors[g.name], effs.get(g.name))
        write_profile(m, types, dst, efficiencies=effs, floors=floors, force=True, bootstraps=boots)


def _as_bootstrap(adjust, floor, efficiency):
    from fastsched.catalog.bootstrap import Bootstrap

    # efficiency None (profile.json's null): the oracle's default pricing, the GEMM model of a searched decoder
    return Bootstrap(adjust, floor, 0, None, float("nan"), float("nan"), False, efficiency)


def _profiled_apps(profiles: Path, apps) -> dict:
    from fastsched.catalog.profile import read_profile_info

    out = {}
    for sub in sorted(profiles.iterdir()):
        if not sub.is_dir() or (apps is not None and sub.name not in apps):
            continue
        info = read_profile_info(sub)
        if info is not None and info.get("types"):
            out[sub.name] = info
    return out


def draw_profiles(profiles, out_dir, draws, *, seed=0, noise=True, step_sigma=None, apps=None, step_dist="laplace",
                  noise_by="group") -> list:  # fmt: skip
    """Write the central profile folder and ``draws`` drawn ones under ``out_dir``; return them, central first.

    Parameters
    ----------
    profiles : str or path
        A folder of application profiles (``profile.json`` in each modelled application's folder).
    out_dir : str or path
        Where ``central/`` and ``draw-<k>/`` go (created).
    draws : int
    seed : int
    noise : bool
        Draw the gradient-noise scale (default), or keep the profiles' statistics.
    step_sigma : dict, optional
        ``{mode: scale}`` overriding the scale of the step-time law (default :data:`STEP_SCALE` for
        Laplace, :data:`STEP_SIGMA` for the normal; 0: no step-time draws).
    apps : iterable of str, optional
        The applications to write (default: every one in ``profiles``).
    step_dist : {"laplace", "normal"}
        The law of a step time's log error (see the module's docstring).
    noise_by : {"group", "application"}
        One noise draw per prior group (default) or per application.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fastsched.catalog.profile import write_profile
    >>> src, out = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_profile("bert", ["t4"], src)
    >>> folders = draw_profiles(src, out, 2, seed=1)
    >>> [f.name for f in folders], (folders[1] / "bert" / "placements-aws.csv").is_file()
    (['central', 'draw-0', 'draw-1'], True)
    """
    from fastsched.catalog.noise_prior import draw_group

    profiles, out_dir = Path(profiles), Path(out_dir)
    if not profiles.is_dir():
        raise FileNotFoundError(f"profiles folder not found: {profiles}")
    if isinstance(draws, bool) or not isinstance(draws, int) or not 0 <= draws <= MAX_DRAWS:
        raise ValueError(f"draws must be an integer in [0, {MAX_DRAWS}], got {draws!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if step_dist not in STEP_DISTS:
        raise ValueError(f"step_dist must be one of {list(STEP_DISTS)}, got {step_dist!r}")
    if noise_by not in NOISE_BY:
        raise ValueError(f"noise_by must be one of {list(NOISE_BY)}, got {noise_by!r}")
    default = STEP_SCALE if step_dist == "laplace" else STEP_SIGMA
    sigma = dict(default if step_sigma is None else step_sigma)
    for mode, v in sigma.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 5.0:
            raise ValueError(f"step_sigma[{mode!r}] must be in [0, 5], got {v!r}")
    found = _profiled_apps(profiles, None if apps is None else set(apps))
    if not found:
        raise ValueError(f"{profiles}: no application folder with a profile.json (write one with fastsched profile)")
    groups = {a: draw_group(_model_of(i)) for a, i in found.items()} if noise_by == "group" else None
    folders = []
    for k in range(-1, draws):
        dst = out_dir / ("central" if k < 0 else f"draw-{k}")
        if k < 0:
            nz = dict.fromkeys(found, 0.0)
            sz = {(a, t): 0.0 for a, i in found.items() for t in i["types"]}
        else:
            nz, sz = _normals(seed, k, found, groups)
        sx = {(a, t): _step_log(z, sigma.get(found[a]["types"][t].get("mode"), default["datasheet"]), step_dist)
              for (a, t), z in sz.items()}  # fmt: skip
        _write_draw(profiles, dst, found, nz, sx, noise)
        folders.append(dst)
    return folders


def uncertainty_bands(workload, profiles, *, policies=("sia",), draws=20, seed=0, out_dir=None, noise=True,
                      step_sigma=None, step_dist="laplace", noise_by="group", client=None, workers=None, run_seed=0,
                      resume=False, progress=False, simulate_fn=None,
                      **simulate_options) -> UncertaintyResult:  # fmt: skip
    r"""Run ``workload`` on the central profiles and ``draws`` draws of their stated ranges; return the bands.

    Parameters
    ----------
    workload : str or path
        A workload CSV (or ``"builtin"``).
    profiles : str or path
        The profile folder (see :func:`draw_profiles`).
    policies : sequence of str
    draws : int
        Seeded draws (the central run comes on top).
    seed : int
        Seed of the draws (the runs' own seed is ``run_seed``, the same for every draw: the bands
        show the profiles' uncertainty, not the simulator's).
    out_dir : str or path, optional
        Where the drawn profile folders (``profiles/``) and the sweep's tables (``runs/``) go
        (default: a temporary folder, removed at the end).
    resume : bool
        With ``out_dir``: keep the runs an interrupted call finished there (the draws are
        seeded, so their folders and run ids come out the same).
    noise, step_sigma, step_dist, noise_by :
        As :func:`draw_profiles`.
    client : optional
        A dask client or scheduler address: the runs go to :func:`fastsched.sweep.run_sweep`;
        default :func:`fastsched.sweep.run_serial` in this process.
    workers : int, optional
        Without ``client``: the runs go to :func:`fastsched.sweep.run_sweep` on a local dask
        cluster of this many worker processes.
    progress : bool
        A progress bar on stderr (a terminal only).
    simulate_fn : callable, optional
        Replaces :func:`fastsched.sim.simulate` in the runs (see :func:`fastsched.sweep.run_sweep`).
    **simulate_options
        More options of every run (``preset``, ``cluster``, ``max_time`` ...), as a sweep spec
        takes them.

    Examples
    --------
    >>> import tempfile
    >>> from fastsched.catalog.profile import write_profile
    >>> src = tempfile.mkdtemp()
    >>> _ = write_profile("cifar10", ["t4"], src)
    >>> wl = tempfile.mktemp(suffix=".csv")
    >>> _ = open(wl, "w").write("name,time,application,num_replicas,batch_size\nj0,0,cifar10,1,128\n")
    >>> r = uncertainty_bands(wl, src, policies=["tiresias"], draws=2, cluster="1xt4", max_time=36000)
    >>> b = r.bands["tiresias"]
    >>> b.draws, b.p10 <= b.median <= b.p90, r.order
    (2, True, ('tiresias',))
    """
    import tempfile

    from fastsched.sweep.runner import run_serial, run_sweep

    policies = [policies] if isinstance(policies, str) else list(policies)
    if not policies:
        raise ValueError("policies: name at least one policy")
    tmp = None
    if out_dir is None:
        tmp = tempfile.mkdtemp(prefix="fastsched-draws-")
        out_dir = tmp
    try:
        folders = draw_profiles(profiles, Path(out_dir) / "profiles", draws, seed=seed, noise=noise,
                                step_sigma=step_sigma, apps=_workload_apps(workload), step_dist=step_dist,
                                noise_by=noise_by)  # fmt: skip
        spec = {"workloads": str(workload), "traces": [str(f) for f in folders], "policy": policies,
                "seeds": [int(run_seed)], **simulate_options}  # fmt: skip
        runs = None if tmp is not None else Path(out_dir) / "runs"
        common = {"output_dir": runs, "resume": resume, "force": not resume, "progress": progress,
                  "simulate_fn": simulate_fn}  # fmt: skip
        if client is None and workers is None:
            result = run_serial(spec, **common)
        else:
            result = run_sweep(spec, client, workers=workers, **common)
        rows = []
        index = {str(f): k - 1 for k, f in enumerate(folders)}
        for r in result.rows:
            if r.get("error"):
                raise RuntimeError(f"a draw's run failed: {r['error']}")
            rows.append({**r, "draw": index[str(Path(r["traces"]))]})
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return _bands(rows, policies, draws)._replace(folders=folders)


def _workload_apps(workload):
    """Return the applications a workload CSV names (``None``: all, for ``"builtin"`` or an unreadable file)."""
    import csv

    if str(workload) == "builtin" or not Path(workload).is_file():
        return None
    try:
        with open(workload, newline="", encoding="utf-8") as f:
            return {r["application"] for r in csv.DictReader(f) if r.get("application")} or None
    except (OSError, KeyError, UnicodeDecodeError, csv.Error):
        return None  # the run names the problem


def _bands(rows, policies, draws) -> UncertaintyResult:
    jct = {p: {} for p in policies}
    for r in rows:
        jct[r["policy"]][r["draw"]] = float("nan") if r["avg_jct_s"] is None else float(r["avg_jct_s"])
    bands = {}
    for p in policies:
        d = np.array([jct[p][k] for k in range(draws)], dtype=np.float64)
        q = np.nanpercentile(d, [50, 10, 90]) if draws and np.isfinite(d).any() else [float("nan")] * 3
        bands[p] = PolicyBand(p, jct[p][-1], float(q[0]), float(q[1]), float(q[2]), draws)
    order = tuple(sorted(policies, key=lambda p: jct[p][-1]))
    holds = [tuple(sorted(policies, key=lambda p, k=k: jct[p][k])) == order for k in range(draws)]
    return UncertaintyResult(bands, order, float(np.mean(holds)) if holds else 1.0, rows, [])


def result_json(res: UncertaintyResult) -> str:
    """One JSON line of the bands (hours), the central order and how often it holds."""
    return json.dumps({"bands_h": {p: {k: round(v / 3600, 4) if isinstance(v, float) else v
                                       for k, v in b._asdict().items()} for p, b in res.bands.items()},
                       "order": list(res.order), "order_holds": res.order_holds})  # fmt: skip
