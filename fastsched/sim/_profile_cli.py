"""``fastsched profile MODEL --gpu TYPE[,TYPE...] --output DIR``: oracle profiles as a trace folder."""

from __future__ import annotations

__all__ = ["register", "run"]


def register(subparsers) -> None:
    """Add the ``profile`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "profile",
        help="write throughput/efficiency profiles of a model on GPU types from the cost-model oracle",
        description="Predict a model's step and sync times on catalogued GPU types and write them as a trace "
        "folder in the Sia layout (DIR/MODEL/placements-<type>.csv, scalability-<type>.csv, validation-<B>.csv) "
        "that `fastsched simulate --traces DIR` reads. MODEL is a catalogued name (cifar10, imagenet, bert, "
        "deepspeech2, yolov3, ncf, gpt-125m ... gpt-175b, llama-70b) or a model JSON (plan's format).",
    )
    p.add_argument("model", help="catalogued model name or model JSON")
    p.add_argument("--gpu", required=True, help="comma-separated GPU types (catalogue names or aliases)")
    p.add_argument("--output", required=True, help="folder to write MODEL/ into")
    p.add_argument(
        "--calibrate",
        metavar="APP_TRACE_DIR",
        default=None,
        help="fit one efficiency per GPU type from this application's measured placements-<type>.csv",
    )
    p.add_argument(
        "--bootstrap",
        metavar="APP_TRACE_DIR",
        default=None,
        help="fit each type from this application's short measurement in placements-<type>.csv: its one-GPU rows "
        "and the full-node row at the median batch (other rows are not read); the oracle prices the rest",
    )
    p.add_argument("--efficiency", type=float, default=None, help="efficiency of every uncalibrated type (0, 1]")
    p.add_argument("--gpu-types", metavar="FILE", default=None, help="TOML/JSON of added or overridden GPU types")
    p.add_argument(
        "--noise-scale",
        metavar="START,END",
        default=None,
        help="gradient-noise scale (samples) at the start and end of training (default: the model family's)",
    )
    p.add_argument(
        "--batch",
        choices=("adaptive", "fixed"),
        default=None,
        help="fixed: keep the initial batch (scale GPUs, not batch; default for decoders); adaptive: allow larger",
    )
    p.add_argument("--force", action="store_true", help="replace profile files that already exist in DIR/MODEL")
    p.add_argument(
        "--types-only",
        action="store_true",
        help="write the GPU types' files only, keeping DIR/MODEL's validation-<B>.csv (e.g. add a GPU type of "
        "your own to an application's measured traces, whose statistics it then shares)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    p.set_defaults(func=run)


def run(args) -> int:
    """Execute ``fastsched profile`` for parsed ``args``; return the exit status."""
    import json
    import os

    from fastsched.costmodel._bounds import check_plan_request

    if args.model.endswith(".json") and os.path.isfile(args.model):
        # A transformer file's stated bounds first, before the oracle and numpy load.
        with open(args.model, encoding="utf-8") as fh:
            try:
                data = json.load(fh)
            except ValueError:
                data = None  # the model reader names the file and the error
        if isinstance(data, dict):
            check_plan_request(1, data)

    from fastsched.catalog import gpus as gcat
    from fastsched.catalog.models import check_model, load_model_spec, model_spec

    # The catalogue's profile writer needs numpy only: no simulator, no numba.
    from fastsched.catalog.oracle import flat_efficiency
    from fastsched.catalog.profile import (
        _type_settings,
        calibrate_from_traces,
        min_gpus,
        oracle_type,
        priced,
        read_profile_info,
        write_profile,
    )

    catalog = gcat.with_types(args.gpu_types) if args.gpu_types else None
    model = load_model_spec(args.model) if args.model.endswith(".json") or os.sep in args.model else None
    model = model or model_spec(args.model)
    if args.noise_scale is not None:
        try:
            start, end = (float(x) for x in args.noise_scale.split(","))
        except ValueError:
            raise ValueError(f"--noise-scale: expected START,END (samples), got {args.noise_scale!r}") from None
        model = model._replace(noise_scale=(start, end))
    if args.batch is not None:
        model = model._replace(fixed_batch=args.batch == "fixed")
    model = check_model(model)
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise ValueError(f"--output {args.output} is a file; give the folder to write {model.name}/ into")
    types = [t.strip() for t in args.gpu.split(",") if t.strip()]
    if not types:
        raise ValueError("--gpu: give at least one GPU type")
    types, names = _distinct_types(types, catalog, quiet=args.quiet)  # validates every name first
    effs = {}
    if args.efficiency is not None:
        if not 0.0 < args.efficiency <= 1.0:
            raise ValueError(f"--efficiency must be in (0, 1], got {args.efficiency}")
        effs = dict.fromkeys(names, args.efficiency)
    if args.calibrate:
        effs.update(calibrate_from_traces(args.calibrate, types, catalog=catalog))
    boots = {}
    if args.bootstrap:
        if args.calibrate:
            raise ValueError("--bootstrap and --calibrate are two ways to price a type: give one")
        from fastsched.catalog.bootstrap import bootstrap_from_traces

        boots = bootstrap_from_traces(args.bootstrap, types, model=model, catalog=catalog)
    # The calibration traces, the GPU-types file and the model file are inputs: never written over.
    inputs = [args.calibrate, args.bootstrap, args.gpu_types, args.model if os.path.exists(args.model) else None]
    files = write_profile(
        model, types, args.output, efficiencies=effs, catalog=catalog, force=args.force, inputs=inputs,
        statistics=not args.types_only, bootstraps=boots,
    )  # fmt: skip
    if not args.quiet:
        samples = model.samples_per_epoch * model.max_epochs
        print(f"{model.name}: {len(files)} files in {os.path.join(args.output, model.name)}")
        low = (read_profile_info(os.path.join(args.output, model.name)) or {}).get("low_confidence", [])
        print(
            f"a job trains {samples:,} samples ({model.max_epochs} epochs of {model.samples_per_epoch:,}); "
            "GPU-hours at one GPU's rate (ideal scaling: more GPUs take as many GPU-hours, or more)"
        )
        print(
            f"{'type':>16} {'trace name':>12} {'efficiency':>10} {'max local bsz':>13} {'samples/s per GPU':>18} "
            f"{'GPU-h to train':>14}"
        )
        gpu_hours = []
        for t, n in zip(types, names, strict=True):
            g = gcat.gpu_type(t, catalog)
            _, eff, floor, adjust, bs = _type_settings(n, g, effs, {}, boots)  # as write_profile priced it
            app = oracle_type(model, g, efficiency=eff, floor=floor, adjust=adjust)
            try:  # one GPU at its largest batch; a model too large for one GPU: one node, one sample each
                step, _ = priced(app, (1,), app.max_local_bsz)
                rate = app.max_local_bsz / step
            except ValueError:
                try:
                    step, _ = priced(app, (g.gpus_per_node,), 1)
                except ValueError:  # too large for one node: the fewest whole nodes that hold it
                    need = -(-min_gpus(app, app.model.init_batch_size) // g.gpus_per_node)
                    step, _ = priced(app, (g.gpus_per_node,) * need, 1)
                rate = 1.0 / step
            src = " (fit)" if args.calibrate and n in effs else (" (bootstrap)" if bs else "")
            src += " low confidence" if n in low else ""
            gpu_hours.append((samples / rate / 3600.0, gcat.canonical_name(t, catalog)))
            flat = flat_efficiency(app.model, app.gpu, app.efficiency)  # None: each GEMM priced by its shape
            print(
                f"{gcat.canonical_name(t, catalog):>16} {n:>12} {'gemm' if flat is None else f'{flat:.3f}':>10}{src} "
                f"{app.max_local_bsz:>13d} {rate:>18.1f} {gpu_hours[-1][0]:>14,.1f}"
            )
        _warn_long(model, gpu_hours)
    return 0


#: GPU-hours per job above which ``profile`` warns (the Sia study's jobs train for about 0.1 to 100).
LONG_GPU_HOURS = 100.0


def _warn_long(model, gpu_hours) -> None:
    """Warn when even the fastest type trains a job of ``model`` for hundreds of GPU-hours."""
    import sys

    hours, fastest = min(gpu_hours)
    if hours < LONG_GPU_HOURS:
        return
    print(
        f"fastsched profile: warning: a {model.name} job trains for about {hours:,.0f} GPU-hours even on {fastest} "
        f"({hours / 8:,.0f} h on 8 GPUs at best): a workload of such jobs runs for hundreds of hours of simulated "
        "time (and rounds). Fewer samples shorten it: a model JSON with fewer tokens, or fewer epochs.",
        file=sys.stderr,
    )


def _distinct_types(types, catalog, quiet=False):
    """Return ``(types, trace names)`` with each profile once: two names of one type write the same files.

    ``h100,h100-sxm`` names one catalogue type twice: it is profiled once, with a note on stderr.
    Two different types that would write the same trace files are refused.
    """
    import sys

    from fastsched.catalog import gpus as gcat

    first: dict = {}  # trace name -> the first name given for it
    kept, names, notes = [], [], []
    for t in types:
        n = gcat.trace_name(t, catalog)
        if n not in first:
            first[n] = t
            kept.append(t)
            names.append(n)
        elif gcat.gpu_type(t, catalog) == gcat.gpu_type(first[n], catalog):
            notes.append(f"{t!r} is {first[n]!r} ({gcat.canonical_name(t, catalog)})")
        else:
            raise ValueError(
                f"--gpu: {first[n]!r} and {t!r} are different GPU types with the same trace name {n!r}: "
                "their profiles would overwrite each other"
            )
    if notes and not quiet:
        print(f"fastsched profile: note: {'; '.join(notes)}: profiled once", file=sys.stderr)
    return kept, names
