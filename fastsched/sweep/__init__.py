"""Sweeps: many simulations (and large goodput grids) on dask.distributed.

Public: :func:`run_sweep` (one dask task per run, tables in an output folder, resumable),
:func:`run_serial` (the same in one process), :func:`load_spec` / :class:`SweepSpec`
(validation and grid expansion), :class:`SweepResult`, :func:`derive_seed`,
:func:`evaluate_grid` and :func:`uncertainty_bands` (a study rerun over seeded draws of its
profiles' stated ranges). The modules: ``spec`` (load, validate, expand), ``task`` (one run),
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
        "uncertainty_bands": "fastsched.sweep.uncertainty",
        "UncertaintyResult": "fastsched.sweep.uncertainty",
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
    "uncertainty_bands",
    "UncertaintyResult",
]
