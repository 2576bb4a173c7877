"""``fastsched simulate``: the command-line face of :func:`fastsched.sim.simulate`."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

__all__ = ["register", "run"]


class ProgressBar:
    """A throttled one-line progress bar (jobs completed, simulated time) on a stream."""

    def __init__(self, stream=None, min_interval=0.1):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.min_interval = min_interval if self.tty else 2.0
        self._last = 0.0
        self._start = time.perf_counter()
        self._shown = False

    def __call__(self, done, total, sim_time):
        now = time.perf_counter()
        if done < total and now - self._last < self.min_interval:
            return
        self._last = now
        width = 30
        fill = int(width * done / total) if total else width
        bar = "#" * fill + "-" * (width - fill)
        line = f"simulate [{bar}] {done}/{total} jobs  t={sim_time / 3600:6.2f} h  wall {now - self._start:5.1f} s"
        if self.tty:
            self.stream.write("\r" + line)
        else:
            self.stream.write(line + "\n")
        self._shown = True
        self.stream.flush()

    def close(self):
        if self._shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def register(subparsers) -> None:
    """Add the ``simulate`` subcommand to an argparse subparsers object."""
    from fastsched.sim.api import PRESETS
    from fastsched.sim.policies import POLICY_NAMES

    p = subparsers.add_parser(
        "simulate",
        help="simulate a workload on a GPU cluster (default: builtin 16x4 Pollux run)",
        description=(
            "Replay a workload on N nodes x G GPUs under a scheduling policy and report job "
            "completion times. With no arguments, runs the builtin synthetic workload on the "
            "builtin application profiles."
        ),
    )
    p.add_argument("workload", nargs="?", help="workload CSV (name,time,application,num_replicas,batch_size)")
    p.add_argument(
        "--traces",
        metavar="DIR",
        default=os.environ.get("FASTSCHED_TRACES"),
        help="folder of application trace folders (default: $FASTSCHED_TRACES, else builtin profiles)",
    )
    p.add_argument("--policy", choices=POLICY_NAMES, help="scheduler (default: pollux)")
    p.add_argument("--preset", default="default", choices=sorted(PRESETS), help="named configuration")
    p.add_argument(
        "--cluster",
        metavar="SPEC",
        help="nodes of GPU types, e.g. 6xaws,3xrtx,2xdgx-ext, or a TOML/JSON file of node groups "
        "(needs per-type --traces; exclusive with --nodes/--gpus)",
    )
    p.add_argument("--nodes", type=int, help="nodes in the cluster, one GPU type (default 16)")
    p.add_argument("--gpus", type=int, help="GPUs per node (default 4)")
    p.add_argument(
        "--cap-replicas",
        action="store_true",
        help="lower GPU requests above the largest GPU type's size instead of failing",
    )
    p.add_argument("--interval", type=int, help="scheduling interval in seconds (default 60)")
    p.add_argument("--interference", type=float, help="slowdown of co-located distributed jobs (default 0)")
    p.add_argument("--max-nodes", type=int, help="autoscaling: grow up to this many nodes")
    p.add_argument("--seed", type=int, help="seed of the policy's random search (default 0)")
    p.add_argument("--output", metavar="LOG", help="write a JSON-lines log, one object per round")
    p.add_argument("--plot", metavar="PNG", help="save a figure (allocation over time, JCT distribution)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def run(args) -> int:
    """Run the ``simulate`` subcommand for parsed ``args``; returns the exit status."""
    from fastsched.sim.api import simulate

    if args.plot:
        import importlib.util

        if importlib.util.find_spec("matplotlib") is None:
            raise ValueError("--plot needs matplotlib: pip install 'fastsched[plot]'")
    bar = None if args.quiet else ProgressBar(sys.stderr)
    try:
        result = simulate(
            args.workload,
            traces=args.traces,
            policy=args.policy,
            preset=args.preset,
            nodes=args.nodes,
            gpus=args.gpus,
            cluster=args.cluster,
            cap_replicas=args.cap_replicas,
            interval=args.interval,
            interference=args.interference,
            max_nodes=args.max_nodes,
            seed=args.seed,
            output=args.output,
            progress=bar,
        )
    finally:
        if bar is not None:
            bar.close()
    if args.plot:
        from fastsched.sim.plot import plot_result

        plot_result(result, args.plot)
    if args.json:
        print(json.dumps({k: _clean(v) for k, v in result.summary().items()}))
    else:
        print(result.table())
    return 0


def main(argv=None) -> int:
    """Run ``simulate`` alone (``python -m fastsched.sim._cli``), for when the shared CLI lacks it."""
    parser = argparse.ArgumentParser(prog="fastsched")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    args = parser.parse_args(["simulate", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.func(args)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"fastsched simulate: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
