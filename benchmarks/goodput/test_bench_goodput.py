"""pytest-benchmark suite of the goodput core, fastsched against AdaptDL (``pytest benchmarks/goodput``).

Every workload of :data:`benchmarks.harness.GOODPUT_WORKLOADS` runs on each implementation of
the axis: fastsched in this process, AdaptDL 0.2.11 in a persistent subprocess of its own
interpreter (``../refenv/adaptdl``, skipped with a reason when absent), timed inside that
process. Groups are per workload, so ``--benchmark-group-by=group`` (the default here) puts the
two implementations side by side::

    python -m pytest benchmarks/goodput --benchmark-columns=median,iqr,rounds
    python -m pytest benchmarks/goodput -k fastsched          # one axis value

Not part of the default test run. ``benchmarks/compare_adaptdl.py`` gives the same comparison as
a table of ratios, each measurement in a fresh process.
"""

from __future__ import annotations

import pytest

from benchmarks.harness import GOODPUT_WORKLOADS, impl_params, run_benchmark


@pytest.mark.parametrize("impl", impl_params("goodput"))
@pytest.mark.parametrize("workload", sorted(GOODPUT_WORKLOADS))
def test_goodput(benchmark, impl, workload):
    run_benchmark(benchmark, impl, "goodput", workload)
