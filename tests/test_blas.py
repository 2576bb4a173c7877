"""The single-threaded-BLAS context restores what it changed and is re-entrant."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from fastsched import _blas


def _global_threads():
    return [get() for _local, _set, get in (_blas._libs or []) if get is not None]


def test_context_restores_settings_and_nests():
    np.linalg.inv(np.eye(3))  # make sure numpy's BLAS is loaded
    with _blas.single_threaded_blas():
        pass
    before = _global_threads()
    with _blas.single_threaded_blas():
        with _blas.single_threaded_blas():
            assert np.allclose(np.linalg.inv(np.eye(4) * 2.0), np.eye(4) / 2.0)
    assert _global_threads() == before


def test_concurrent_use_from_threads():
    def work(k):
        with _blas.single_threaded_blas():
            m = np.eye(5) * (k + 1)
            return float(np.linalg.inv(m)[0, 0])

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(work, range(40)))
    assert results == [1.0 / (k + 1) for k in range(40)]
