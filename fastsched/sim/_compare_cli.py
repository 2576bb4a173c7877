"""``fastsched simulate W --policy a,b,c``: a comparison that streams and keeps every finished run.

* Every check of every policy's run is made before the first run starts
  (:func:`fastsched.sim._compare.check_policies`).
* Each policy's row (or JSON line, with ``--json``) is printed as its run finishes, in finishing
  order, under a header printed when the runs start; ``--jobs`` files are written as each
  finishes too.
* A run that fails is reported on stderr (``fastsched simulate: gavel failed: ...``) and the
  others go on; the exit status is then 1.
* Ctrl-C stops the runs still going: the rows printed stay printed, and the message says how
  many finished (exit status 130).
* ``--plot`` draws the finished runs at the end (not after Ctrl-C).
"""

from __future__ import annotations

import json
import sys

from fastsched._interrupt import Interrupted

__all__ = ["run_many", "EXIT_FAILED_POLICY"]

#: Exit status of a comparison in which a policy's run failed (the others printed).
EXIT_FAILED_POLICY = 1


def _names(policies) -> list:
    """Every name a row may carry: as given, and as the policy class names itself."""
    from fastsched.sim.policies.registry import load_policy

    out = list(policies)
    for p in policies:
        name = getattr(load_policy(p), "name", None)
        if isinstance(name, str):
            out.append(name)
    return out


def run_many(args, policies, *, simulate_kwargs, clean, report_incomplete, write_jobs_of, progress_every) -> int:
    """Run a comparison for parsed ``args``; return the exit status (0, 1 a run failed, 3 incomplete)."""
    from fastsched import _provenance
    from fastsched._atomic import atomic_path
    from fastsched._interrupt import is_interrupt
    from fastsched.sim._compare import check_policies, iter_policies
    from fastsched.sim.results.compare import ComparisonTable, plot_comparison

    if args.output:
        raise ValueError("--output writes one policy's log: give one --policy, or leave --output out")
    kwargs = {"workload": args.workload, **simulate_kwargs}
    check_policies(policies, **kwargs)  # every policy's every check, before the first run
    table = ComparisonTable(_names(policies))
    if not args.json:
        print(table.header(), flush=True)
    results, failed = {}, []
    try:
        for policy, outcome in iter_policies(policies, workers=args.workers, progress_every=progress_every, **kwargs):
            if isinstance(outcome, BaseException):
                failed.append(policy)
                what = f"{type(outcome).__name__}: {' '.join(str(outcome).split())}"
                print(f"fastsched simulate: {policy} failed: {what}", file=sys.stderr, flush=True)
                continue
            if outcome.provenance is not None:  # run in another process: the command is this one's
                outcome.provenance["command"] = _provenance.command()
            results[policy] = outcome
            summary = {k: clean(v) for k, v in outcome.summary().items()}
            print(json.dumps(summary) if args.json else table.row(summary), flush=True)
            if args.jobs:
                write_jobs_of(outcome, policy)
            if not args.quiet:
                done = len(results) + len(failed)
                print(f"fastsched simulate: {policy} done ({done}/{len(policies)})", file=sys.stderr, flush=True)
    except (KeyboardInterrupt, SystemError) as exc:
        if not is_interrupt(exc):  # Ctrl-C inside a compiled kernel arrives as a SystemError
            raise
        kept = ", ".join(results) or "none"
        raise Interrupted(
            f"{len(results)} of {len(policies)} policies finished, printed above ({kept}); rerun the same command "
            "for the others (the runs are deterministic)"
        ) from None
    finished = [results[p] for p in policies if p in results]
    if args.plot and finished:
        with atomic_path(args.plot) as tmp:
            plot_comparison(finished, tmp)
    status = report_incomplete(finished, args)
    if failed:
        print(
            f"fastsched simulate: {len(failed)} of {len(policies)} policies failed ({', '.join(failed)}); "
            "the others' results are above",
            file=sys.stderr,
        )
        return EXIT_FAILED_POLICY
    return status
