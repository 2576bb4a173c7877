"""One goodput parameter bundle: every face hands the kernels a ``GoodputParams`` of fixed types.

The faces build the bundle (one model: a read-only float64[7] ``perf``, six floats and a
bool; J models: read-only arrays), so each kernel compiles once whatever the caller passed
(ints, numpy scalars, lists). Checked on the bundles themselves and, in a fresh interpreter, on
the kernels' compiled signatures after the faces ran on mixed input types.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fastsched.goodput import GoodputFunction, GoodputParams, ModelBatch, SpeedupFunction

ROOT = Path(__file__).resolve().parents[2]
PERF = [0.121, 0.00568, 0.0236, 0.00634, 0.0118, 0.00317, 1.14]


def assert_one_model(p):
    assert isinstance(p, GoodputParams)
    assert p.perf.dtype == np.float64 and p.perf.shape == (7,) and not p.perf.flags.writeable
    assert [type(v) for v in p[1:7]] == [float] * 6 and type(p.accumulation) is bool


numbers = st.sampled_from([int, float, np.float32, np.int64])


@settings(max_examples=20, deadline=None)
@given(numbers, numbers, st.booleans(), st.sampled_from([None, (None, 256), (32, None), (16, 512)]))
def test_one_model_bundle_has_fixed_types(as_init, as_max, accumulation, atomic):
    g = GoodputFunction(PERF, (as_max(1), 0.5), as_init(64))
    assert_one_model(g.kernel_params)
    p = g.kernel_params_for(as_max(1024), atomic, np.bool_(accumulation))
    assert_one_model(p)
    assert p[:4] == g.kernel_params[:4] and p.accumulation is accumulation
    assert (p.max_bsz, p.min_atomic, p.max_atomic) == (
        1024.0,
        float((atomic or (None,))[0] or 1),
        float((atomic or (None, None))[1] or 1024),
    )
    s = SpeedupFunction(g, as_max(1024), atomic, accumulation, backend="cpu")
    assert s.kernel_params == p


def test_batch_bundle_is_read_only_arrays():
    b = ModelBatch([PERF] * 3, [[0.5, 4.0]] * 3, [32, 64, 16], 512, (4, 0), [True, False, True])
    p = b.kernel_params
    assert isinstance(p, GoodputParams)
    assert p.perf.shape == (3, 7) and all(not a.flags.writeable for a in p)
    assert [a.dtype for a in p] == [np.float64] * 7 + [np.bool_]
    g = GoodputFunction(PERF, (0.5, 4.0), 64)
    one = ModelBatch.from_speedup_functions([SpeedupFunction(g, 512, (None, 128), True, backend="cpu")]).kernel_params
    want = g.kernel_params_for(512, (None, 128), True)
    assert np.array_equal(one.perf[0], want.perf) and [float(a[0]) for a in one[1:]] == list(want[1:])


_SCRIPT = """
import json
import numpy as np
from fastsched.goodput import GoodputFunction, ModelBatch, SpeedupFunction
from fastsched.goodput import _batch_kernels as bk
from fastsched.goodput import _kernels as gk
for init, mb, acc in ((32, 512, True), (np.float32(16.0), np.int64(300), False)):
    g = GoodputFunction([0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0], (0.5, 4), init)
    big = np.arange(1, 400)
    g.optimize(np.ones_like(big), big, mb, (None, 64), acc)
    g.efficiency(np.arange(1, 3000))
    SpeedupFunction(g, mb, accumulation=acc, backend="cpu").table(300)
    b = ModelBatch([[0.1, 0.01, 0.2, 0.01, 0.05, 0.001, 2.0]] * 2, [[0.5, 4.0]] * 2, init, mb, accumulation=acc)
    b.speedup_tables(300, backend="cpu")
    b.optimize(np.zeros(300, int), 1, np.arange(1, 301), backend="cpu")
    b.optimize_matrix(np.ones(300, int), np.arange(1, 301), backend="cpu")
    b.throughput(np.zeros(2000, int), 1, 2, 64, 0, backend="cpu")
    b.base_goodput()
names = ["efficiency_kernel", "optimize_keys_kernel", "fill_table_kernel"]
kernels = [getattr(gk, n) for n in names] + [getattr(bk, n) for n in
           ("base_kernel", "optimize_kernel", "matrix_kernel", "tables_kernel", "elementwise_kernel")]
out = {k.py_func.__name__: len(k.signatures) for k in kernels}
out.update({t.py_func.__name__: len(t.signatures) for t in gk._SERIAL.values() if "_elementwise" not in t.py_func.__name__})
print(json.dumps(out))
"""


def test_each_kernel_compiles_once_for_mixed_caller_types():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, check=True)
    counts = json.loads(res.stdout.strip().splitlines()[-1])
    ran = {name: n for name, n in counts.items() if n}
    assert len(ran) >= 8, counts  # the parallel kernels and their serial twins were reached
    assert set(ran.values()) == {1}, ran
