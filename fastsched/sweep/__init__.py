"""Sweeps: many simulations (and large goodput grids) on dask.distributed.

Public: :func:`run_sweep` (one dask task per run, tables in an output folder, resumable),
:func:`run_serial` (the same in one process), :func:`load_spec` / :class:`SweepSpec`
(validation and grid expansion), :class:`SweepResult`, :func:`derive_seed` and
:func:`evaluate_grid`. The modules: ``spec`` (load, validate, expand), ``task`` (one run),
``warm`` (worker warm-up), ``table`` (rows and summary), ``store`` (output folder, resume),
``client`` (dask client), ``runner`` (the drivers). dask and distributed come with the ``dask`` extra
(``pip install 'fastsched[dask]'``); only running on a cluster needs them.
"""

from fastsched._lazy import lazy_exports

# Public name -> defining module, imported on first use: importing this package (or a module
# inside it) loads nothing else.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "evaluate_grid": "fastsched.sweep.grid",
        "SweepInterrupted": "fastsched.sweep.runner",
        "run_serial": "fastsched.sweep.runner",
        "run_sweep": "fastsched.sweep.runner",
        "RunConfig": "fastsched.sweep.spec",
        "SweepSpec": "fastsched.sweep.spec",
        "derive_seed": "fastsched.sweep.spec",
        "load_spec": "fastsched.sweep.spec",
        "SweepResult": "fastsched.sweep.table",
    },
)

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
