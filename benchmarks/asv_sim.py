"""asv suite of the simulator (builtin run; workload-6 baselines when ../shared exists)."""

from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "pollux-traces"


class TimeSimulate:
    timeout = 600

    def time_builtin_tiresias(self):
        from fastsched.sim import simulate

        simulate(policy="tiresias")

    def time_builtin_pollux(self):
        from fastsched.sim import simulate

        simulate(seed=0)

    def time_workload6_optimus(self):
        from fastsched.sim import simulate

        if (SHARED / "traces").is_dir():
            simulate(SHARED / "workloads" / "workload-6.csv", traces=SHARED / "traces", policy="optimus")
