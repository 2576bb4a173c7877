"""asv suite of the goodput core (``asv run``; configuration in ../asv.conf.json).

The workloads are :data:`harness.GOODPUT_WORKLOADS`, the same the pytest-benchmark suite and
``compare_adaptdl.py`` time; asv tracks fastsched's own history, so only that axis value runs.
"""

try:  # asv imports suites with the benchmarks folder on sys.path; pytest from the repository root
    from harness import GOODPUT_WORKLOADS, make
except ImportError:  # pragma: no cover
    from benchmarks.harness import GOODPUT_WORKLOADS, make


class GoodputSuite:
    params = sorted(GOODPUT_WORKLOADS)
    param_names = ["workload"]

    def setup(self, workload):
        self.call = make("goodput", workload)
        self.call()  # compile or load the kernels outside the timing

    def time_workload(self, workload):
        self.call()
