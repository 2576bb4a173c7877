"""asv suite for fastsched.costmodel."""

import os
from pathlib import Path

import numpy as np

from fastsched.costmodel import (
    Cluster,
    CostModel,
    Transformer,
    encode,
    estimate,
    estimate_cost,
    load_case,
    pipeline_time,
    search,
    transformer_stack,
)

_CASES = (
    Path(os.environ.get("FASTSCHED_SHARED", Path(__file__).resolve().parents[1].parent / "shared")) / "paddle-cases"
)


class TransformerStack:
    """estimate_cost and its phases on synthetic stacks (~51 ops per layer)."""

    params = [2, 32, 512, 2000]
    param_names = ["layers"]
    timeout = 300

    def setup(self, layers):
        self.prog = transformer_stack(layers)
        estimate_cost(self.prog)
        self.cm = CostModel().init(self.prog)

    def time_estimate_cost(self, layers):
        estimate_cost(self.prog)

    def time_merge(self, layers):
        self.cm.merge()

    def time_get_mem(self, layers):
        self.cm.get_mem()

    def track_n_ops(self, layers):
        return self.prog.n_ops


class SharedCase:
    """The shared Paddle case mlp_L64 (skipped when ../shared is absent)."""

    timeout = 120

    def setup(self):
        path = _CASES / "mlp_L64.json"
        if not path.is_file():
            raise NotImplementedError("shared cases absent")
        self.case = load_case(path)
        self.case.estimate()

    def time_mlp_l64_estimate(self):
        self.case.estimate()


class Pipeline:
    """Pipeline simulation alone."""

    params = [4, 64, 4096]
    param_names = ["microbatches"]

    def setup(self, m):
        self.cm = CostModel(pipeline_config=[[0], [1], [2], [3]]).init(transformer_stack(2, ranks=4))
        self.cm.get_cost()

    def time_pipeline(self, m):
        self.cm.get_pipeline_time(m)


class Encoded:
    """encode once, estimate many times (the floors of issue 15)."""

    params = [2, 32, 512]
    param_names = ["layers"]
    timeout = 300

    def setup(self, layers):
        self.d = transformer_stack(layers).to_dict()
        self.enc = encode(self.d)

    def time_encode(self, layers):
        encode(self.d)

    def time_estimate(self, layers):
        estimate(self.enc)


class Schedules:
    """Pipeline schedules on 8 stages."""

    params = (["seed", "1f1b", "zb-h1", "interleaved"], [1000, 100000])
    param_names = ["schedule", "microbatches"]

    def setup(self, schedule, m):
        self.f = np.linspace(0.5, 1.5, 8)

    def time_pipeline(self, schedule, m):
        v = 2 if schedule == "interleaved" else 1
        pipeline_time(self.f, 2 * self.f, 0 * self.f, m, schedule=schedule, virtual_stages=v)


class StrategySearch:
    """175B GPT on 1,024 GPUs (about 17k configurations)."""

    def setup(self):
        self.m = Transformer(layers=96, hidden=12288, heads=96, seq=2048, vocab=51200, global_batch=1536)
        self.c = Cluster(gpus=1024)
        search(self.m, self.c)

    def time_search(self):
        search(self.m, self.c)
