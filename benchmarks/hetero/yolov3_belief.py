"""Issue 38, item 5: Sia's belief against the simulated truth for one yolov3 job, per configuration.

Usage::

    python benchmarks/hetero/yolov3_belief.py

One yolov3 job of the philly study (``6xaws,3xrtx,2xdgx-ext``, the Sia traces) runs 300 s on
4, then 2, then 1 GPU of one aws node (the history a job has after Sia's doubling start and a
shrink). For every GPU type and GPU count (packed on whole nodes) it prints the throughput at
per-GPU batch 8 that the policy believes (its own aws fit, or Sia's bootstrap for the other
types, :func:`fastsched.sim.policies._belief.goodput_source`, times the bootstrap ratio) and
the truth's (:meth:`TraceApplication.throughput`, measured rows, interpolated or modelled), and
each one's scaling over one GPU. Needs ../shared/sia-traces. Results: benchmarks/results/hetero.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from fastsched.goodput.model import GoodputFunction
from fastsched.sim.engine.hetero_job import HeteroJob, load_hetero_applications
from fastsched.sim.inputs.cluster_spec import parse_cluster
from fastsched.sim.policies._belief import goodput_source

SIA = Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[3] / "shared")) / "sia-traces"


def main(bsz=8):
    spec = parse_cluster("6xaws,3xrtx,2xdgx-ext")
    app = load_hetero_applications(SIA / "traces", spec.types, ["yolov3"])["yolov3"]
    job = HeteroJob("y", app, 0)
    for t, alloc in [("aws", [4]), ("aws", [2]), ("aws", [1])]:
        job.set_gpu_type(t)
        job.reallocate(alloc)
        job.step(300)
    gpn = spec.gpus_per_node_by_type
    for t in spec.types:
        src = goodput_source(job, t)
        p = src.params
        fn = GoodputFunction(p.perf, (p.grad_sqr, p.grad_var), p.init_bsz)
        print(f"type {t} (belief from the {src.gpu_type} fit, bootstrap ratio {src.ratio:.3f})")
        print("| GPUs | placement | belief | truth | belief/truth | scaling: belief | truth |")
        base = None
        for g in (1, 2, 4, 8, 12, 16, 24):
            n = max(1, -(-g // gpn[t]))
            full, rest = divmod(g, gpn[t])
            placement = (g,) if g < gpn[t] else tuple([gpn[t]] * full + ([rest] if rest else []))
            bel = src.ratio * float(
                np.asarray(fn.throughput(np.array([n]), np.array([g]), np.array([bsz]), np.array([0]))).ravel()[0]
            )
            tru = g * bsz / app.apps[t].throughput(placement, bsz)[0]
            tag = " (modelled)" if app.apps[t].is_modelled(placement, bsz) else ""
            base = base or (bel, tru)
            print(
                f"| {g} | {placement} | {bel:.1f} | {tru:.1f}{tag} | {bel / tru:.2f} | "
                f"{bel / base[0]:.2f} | {tru / base[1]:.2f} |"
            )


if __name__ == "__main__":
    main()
