"""asv suite of the goodput core (``asv run``; configuration in ../asv.conf.json)."""

import numpy as np

from fastsched import GoodputFunction, GradParams, PerfParams, SpeedupFunction, fit_perf_params

PERF = PerfParams(0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14)
GRAD = GradParams(0.00136, 0.000502)


class GoodputSuite:
    params = [10**3, 10**5]
    param_names = ["configs"]

    def setup(self, n):
        self.fn = GoodputFunction(PERF, GRAD, 128)
        rng = np.random.RandomState(0)
        self.replicas = rng.randint(1, 65, n)
        self.nodes = np.minimum(rng.randint(1, 9, n), self.replicas)
        self.atomic = rng.randint(128, 512, n)
        self.accum = rng.randint(0, 4, n)
        self.fn.optimize(self.nodes, self.replicas, 1280, (64, 256), True)  # compile/load outside timing

    def time_optimize(self, n):
        self.fn.optimize(self.nodes, self.replicas, 1280, (64, 256), True)

    def time_evaluate(self, n):
        self.fn.evaluate(self.nodes, self.replicas, self.atomic, self.accum)


class ScalarSuite:
    def setup(self):
        self.fn = GoodputFunction(PERF, GRAD, 128)
        self.fn.optimize(1, 4, 1280, (64, 256), True)

    def time_optimize_scalar(self):
        self.fn._scalar_memo.clear()
        self.fn.optimize(1, 4, 1280, (64, 256), True)


class FitSuite:
    def setup(self):
        rng = np.random.RandomState(3)
        self.nodes = rng.randint(1, 5, 20)
        self.replicas = self.nodes * rng.randint(1, 5, 20)
        self.atomic = rng.randint(32, 512, 20)
        self.t_accum = (PERF.alpha_c + PERF.beta_c * self.atomic) * rng.uniform(0.95, 1.05, 20)
        self.t_optim = self.t_accum * (1 + 0.2 * self.replicas)
        fit_perf_params(self.nodes, self.replicas, self.atomic, self.t_accum, self.t_optim)

    def time_fit_20(self):
        fit_perf_params(self.nodes, self.replicas, self.atomic, self.t_accum, self.t_optim)


class SpeedupSuite:
    def setup(self):
        rng = np.random.RandomState(4)
        self.replicas = rng.randint(1, 65, 1000)
        self.nodes = np.minimum(rng.randint(1, 9, 1000), self.replicas)
        self.sp = SpeedupFunction(GoodputFunction(PERF, GRAD, 128), 1280, (64, 256))
        self.sp(self.nodes, self.replicas)

    def time_speedup_1000_warm(self):
        self.sp(self.nodes, self.replicas)
