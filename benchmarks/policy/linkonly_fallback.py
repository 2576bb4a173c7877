"""Link-only helpers vs the plain ``@jit`` fallback (``FASTSCHED_LINK_ONLY=0``): the same allocations.

Runs two policy rounds (the first from an empty numba cache, the second warm from the first's
allocations) of ``scale_instance`` 16/4, 40/16, 256/64, 1000/512 (instance seed 1) x policy
seeds 0-1 in a fresh process per mode, each with its own empty ``NUMBA_CACHE_DIR``, and
compares the pickled allocations and desired sizes. Also prints the CPU seconds of each
process (the fallback compiles every helper on its own, so it is the slower cold start).

Usage: ``python benchmarks/policy/linkonly_fallback.py`` (about a minute and a half on 2 cores).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SNIPPET = """
import pickle, resource, sys
from benchmarks.policy.scale import scale_instance
from fastsched.policy import PolluxPolicy
from fastsched.policy._ga.linkonly import LINK_ONLY
out = []
for jobs_n, nodes_n in ((16, 4), (40, 16), (256, 64), (1000, 512)):
    jobs, nodes, template = scale_instance(jobs_n, nodes_n, seed=1)
    for seed in (0, 1):
        pol = PolluxPolicy(seed=seed)
        first = pol.optimize(jobs, nodes, {}, template)
        second = pol.optimize(jobs, nodes, first[0], template)
        out.append((jobs_n, nodes_n, seed, first, second))
ru = resource.getrusage(resource.RUSAGE_SELF)
sys.stdout.buffer.write(pickle.dumps((LINK_ONLY, ru.ru_utime + ru.ru_stime, out)))
"""


def run(link_only: bool) -> tuple[bool, float, list]:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(
            os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=cache, FASTSCHED_LINK_ONLY="1" if link_only else "0"
        )
        out = subprocess.run([sys.executable, "-c", SNIPPET], check=True, capture_output=True, env=env, cwd=ROOT)
    return pickle.loads(out.stdout)


def main() -> int:
    mode_a, cpu_a, rounds_a = run(True)
    mode_b, cpu_b, rounds_b = run(False)
    print(f"link-only: LINK_ONLY={mode_a}, {cpu_a:.1f} CPU s; fallback: LINK_ONLY={mode_b}, {cpu_b:.1f} CPU s")
    same = True
    for a, b in zip(rounds_a, rounds_b, strict=True):
        equal = pickle.dumps(a) == pickle.dumps(b)
        same &= equal
        print(f"{a[0]:5d} jobs / {a[1]:4d} nodes, policy seed {a[2]}: {'identical' if equal else 'DIFFERENT'}")
    print("all identical" if same else "allocations differ")
    return 0 if same and mode_a and not mode_b else 1


if __name__ == "__main__":
    sys.exit(main())
