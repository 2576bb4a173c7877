"""Sweeps on a real dask LocalCluster: same table as serial, worker death, resume, evaluate_grid.

Skipped when dask.distributed is not installed (``pip install -e .[dask]``).
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

pytest.importorskip("dask", reason="dask is not installed (pip install -e .[dask])")
distributed = pytest.importorskip("distributed", reason="distributed is not installed (pip install -e .[dask])")

from fastsched.goodput import GoodputFunction  # noqa: E402
from fastsched.sweep import evaluate_grid, run_serial, run_sweep  # noqa: E402
from tests.sweep._helpers import comparable, slow_simulate, small_spec  # noqa: E402


def _cluster():
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=50
    )


@pytest.fixture(scope="module")
def client():
    with _cluster() as cluster, distributed.Client(cluster) as c:
        yield c


def test_distributed_table_equals_serial(client, tmp_path):
    spec = small_spec(tmp_path)
    serial = run_serial(spec)
    dist = run_sweep(spec, client=client, output_dir=tmp_path / "out", progress=False)
    assert len(dist.rows) == 8 and not dist.errors
    assert comparable(dist.rows) == comparable(serial.rows)
    assert [s["avg_jct_s_mean"] for s in dist.summary] == [s["avg_jct_s_mean"] for s in serial.summary]
    # both workers took part, and each warmed its kernels once (plugin), not per task
    warm = client.run(lambda dask_worker: getattr(dask_worker, "fastsched_warmup_s", None))
    assert len(warm) == 2 and all(v is not None for v in warm.values())


def test_bad_spec_raises_before_submission(client, tmp_path, monkeypatch):
    submitted = []
    monkeypatch.setattr(client, "submit", lambda *a, **k: submitted.append(a))
    for extra in ({"bogus": 1}, {"workloads": [str(tmp_path / "missing.csv")]}, {"interval": []}):
        with pytest.raises(ValueError):
            run_sweep(small_spec(tmp_path, **extra), client=client, output_dir=tmp_path / "o", progress=False)
    assert submitted == []
    assert not (tmp_path / "o").exists()


def test_resume_skips_done_runs(client, tmp_path):
    spec = small_spec(tmp_path, interval=60)
    out = tmp_path / "out"
    first = run_sweep(spec, client=client, output_dir=out, progress=False)
    lines = (out / "runs.jsonl").read_text().splitlines()
    # drop two finished runs from the log: only those are run again
    (out / "runs.jsonl").write_text("\n".join(lines[2:]) + "\n")
    (out / "runs.json").unlink()
    second = run_sweep(spec, client=client, output_dir=out, progress=False)
    assert second.skipped == len(lines) - 2
    assert comparable(second.rows) == comparable(first.rows)
    third = run_sweep(spec, client=client, output_dir=out, progress=False)
    assert third.skipped == len(first.rows)


def test_evaluate_grid_matches_single_process(client):
    fn = GoodputFunction((0.1, 0.01, 0.5, 0.02, 1.0, 0.05, 1.2), (0.01, 0.1), 128)
    replicas = np.arange(1, 201)
    nodes = np.minimum(np.arange(1, 9)[:, None], replicas[None, :])
    want = fn.optimize(nodes, replicas, max_batch_size=4096, atomic_bsz_range=(16, 512))
    got = evaluate_grid(
        fn, nodes, replicas, max_batch_size=4096, atomic_bsz_range=(16, 512), client=client, chunk_size=300
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    atomic = np.full(nodes.shape, 32)
    ev = evaluate_grid(fn, nodes, replicas, atomic, 3, client=client, chunk_size=500)
    np.testing.assert_array_equal(ev, fn.evaluate(nodes, replicas, atomic, 3))
    with pytest.raises(ValueError):
        evaluate_grid(fn, np.array([3]), np.array([2]), client=client)


def test_worker_killed_mid_sweep_loses_no_row(tmp_path):
    spec = small_spec(tmp_path, interval=60, seeds=4)  # 8 runs of >= 0.6 s
    with _cluster() as cluster, distributed.Client(cluster) as c:
        pids = c.run(os.getpid)
        box = {}

        def sweep():
            try:
                box["result"] = run_sweep(
                    spec, client=c, output_dir=tmp_path / "out", progress=False, warm=False, simulate_fn=slow_simulate
                )
            except BaseException as exc:  # pragma: no cover - reported below
                box["error"] = exc

        t = threading.Thread(target=sweep)
        t.start()
        victim = None
        deadline = time.monotonic() + 60
        while victim is None and time.monotonic() < deadline:
            busy = [w for w, keys in c.processing().items() if keys]
            if busy:
                victim = busy[0]
            else:
                time.sleep(0.05)
        assert victim is not None, "no task started"
        time.sleep(0.2)  # the task is now inside its sleep
        os.kill(pids[victim], signal.SIGKILL)
        t.join(120)
        assert not t.is_alive()
        assert "error" not in box, box.get("error")
        result = box["result"]
        assert len(result.rows) == 8
        assert not result.errors
        assert victim not in c.run(os.getpid)  # the worker really died (the nanny started a new one)
    assert comparable(result.rows) == comparable(run_serial(spec).rows)
