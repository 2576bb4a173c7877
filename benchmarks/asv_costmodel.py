"""asv suite for fastsched.costmodel."""

from pathlib import Path

from fastsched.costmodel import CostModel, estimate_cost, load_case, transformer_stack

_CASES = Path(__file__).resolve().parents[1].parent / "shared" / "paddle-cases"


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
