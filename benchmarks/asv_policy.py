"""asv suite of the scheduling policy (``asv run``; configuration in ../asv.conf.json)."""

from fastsched.policy import PolluxPolicy

try:  # asv imports suites from the benchmarks directory
    from benchmarks.policy.scale import scale_instance
except ImportError:  # pragma: no cover
    from policy.scale import scale_instance


class PolluxSuite:
    params = [(16, 4), (64, 16), (256, 64), (1000, 512)]
    param_names = ["jobs_nodes"]
    timeout = 600

    def setup(self, size):
        jobs, nodes, template = scale_instance(*size)
        self.args = (jobs, nodes, template)
        self.policy = PolluxPolicy(seed=0)
        self.base, _ = self.policy.optimize(jobs, nodes, {}, template)

    def time_warm_round(self, size):
        jobs, nodes, template = self.args
        self.policy.optimize(jobs, nodes, self.base, template)

    def time_cold_round(self, size):
        jobs, nodes, template = self.args
        PolluxPolicy(seed=1).optimize(jobs, nodes, {}, template)

    def peakmem_warm_round(self, size):
        jobs, nodes, template = self.args
        self.policy.optimize(jobs, nodes, self.base, template)

    def track_objective(self, size):
        return self.policy.last_stats["objective_real"]
