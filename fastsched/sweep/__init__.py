"""Sweeps: many simulations (and large goodput grids) on dask.distributed.

Public: :func:`run_sweep` (one dask task per run, tables in an output folder, resumable),
:func:`run_serial` (the same in one process), :func:`load_spec` / :class:`SweepSpec`
(validation and grid expansion), :class:`SweepResult`, :func:`derive_seed` and
:func:`evaluate_grid`. The modules: ``spec`` (load, validate, expand), ``task`` (one run),
``warm`` (worker warm-up), ``table`` (rows and summary), ``store`` (output folder, resume),
``client`` (dask client), ``runner`` (the drivers). dask and distributed come with the ``dask`` extra
(``pip install 'fastsched[dask]'``); only running on a cluster needs them.
"""

from fastsched.sweep.grid import evaluate_grid
from fastsched.sweep.runner import SweepInterrupted, run_serial, run_sweep
from fastsched.sweep.spec import RunConfig, SweepSpec, derive_seed, load_spec
from fastsched.sweep.table import SweepResult

__all__ = [
    "run_sweep",
    "run_serial",
    "SweepResult",
    "SweepInterrupted",
    "load_spec",
    "SweepSpec",
    "RunConfig",
    "derive_seed",
    "evaluate_grid",
]
