"""asv suite of the simulator and sweeps (``asv run``; configuration in ../asv.conf.json).

The workloads are :data:`harness.SIM_WORKLOADS`; those that read the published traces are
skipped (``NotImplementedError`` in ``setup``, asv's convention) when ``../shared`` is absent.
"""

try:  # asv imports suites with the benchmarks folder on sys.path; pytest from the repository root
    from harness import SIM_WORKLOADS, make
except ImportError:  # pragma: no cover
    from benchmarks.harness import SIM_WORKLOADS, make


class SimulateSuite:
    params = sorted(SIM_WORKLOADS)
    param_names = ["workload"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, workload):
        try:
            self.call = make("sim", workload)
        except FileNotFoundError as exc:
            raise NotImplementedError(str(exc)) from None

    def time_workload(self, workload):
        self.call()
