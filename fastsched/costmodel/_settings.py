"""Estimate settings: validated once, cached, shared by :func:`.model.estimate` and the adapters."""

from __future__ import annotations

import functools
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fastsched._validate import check_choice, check_finite_scalar, check_int_scalar
from fastsched.costmodel.cluster import CommParams, comm_params
from fastsched.costmodel.graph import DEFAULT_BANDWIDTH
from fastsched.costmodel.schedules import SCHEDULES

__all__ = ["Settings", "bandwidth_of", "check_pipeline_config"]


def bandwidth_of(cluster) -> float:
    """Link bandwidth in the seed's unit (bytes / bandwidth = ms) from a ``cluster`` argument.

    Parameters
    ----------
    cluster : None, float, mapping or object with ``bandwidth``
        ``None`` gives the seed's constant 32.768 (which divides *bytes*, so it is
        32.768 bytes/ms: the seed meant MB/ms but applied it to bytes).

    Returns
    -------
    float

    Examples
    --------
    >>> bandwidth_of(None), bandwidth_of({"bandwidth": 2.0})
    (32.768, 2.0)
    """
    if cluster is None:
        return DEFAULT_BANDWIDTH
    if isinstance(cluster, numbers.Real) and not isinstance(cluster, bool):
        bw = cluster
    elif isinstance(cluster, Mapping) and "bandwidth" in cluster:
        bw = cluster["bandwidth"]
    elif hasattr(cluster, "bandwidth"):
        bw = cluster.bandwidth
    else:
        raise TypeError(
            f"cluster must be None, a bandwidth number, or have a 'bandwidth' (MB/ms), got {type(cluster).__name__}"
        )
    return check_finite_scalar("cluster.bandwidth", bw, low=0.0, low_open=True)


def check_pipeline_config(pipeline_config, n_ranks):
    """Validate ``pipeline_config`` (stage -> rank list) against ``n_ranks``; return a list copy.

    Examples
    --------
    >>> check_pipeline_config([[0], [1, 2]], 3)
    [[0], [1, 2]]
    """
    if pipeline_config is None:
        return None
    if not isinstance(pipeline_config, Sequence) or isinstance(pipeline_config, (str, bytes)):
        raise TypeError("pipeline_config must be a list of rank lists (stage -> ranks)")
    if len(pipeline_config) == 0:
        raise ValueError("pipeline_config must have at least one stage")
    out = []
    seen = set()
    for s, ranks in enumerate(pipeline_config):
        if not isinstance(ranks, Sequence) or isinstance(ranks, (str, bytes)) or not ranks:
            raise ValueError(f"pipeline_config[{s}] must be a non-empty list of ranks")
        st = []
        for r in ranks:
            r = check_int_scalar(f"pipeline_config[{s}] rank", r)
            if not 0 <= r < n_ranks:
                raise ValueError(f"pipeline_config[{s}] names rank {r}, but the program has {n_ranks} ranks")
            if r in seen:
                raise ValueError(f"pipeline_config: rank {r} appears in more than one stage")
            seen.add(r)
            st.append(r)
        out.append(st)
    return out


@dataclass(frozen=True)
class Settings:
    """Validated estimate settings (see :func:`estimate` for the meaning of each).

    Examples
    --------
    >>> Settings.make(schedule="1f1b").comm.seed_units
    True
    """

    comm: CommParams = CommParams(DEFAULT_BANDWIDTH, 0.0, DEFAULT_BANDWIDTH, 0.0, 1 << 62, True)
    batch_size: int | None = 1
    microbatch_num: int = 1
    opcall_overhead: float = 0.0
    mem_unit: str = "bytes"
    comm_cost: str = "model"
    merge_order: str = "serial-first"
    schedule: str = "seed"
    virtual_stages: int = 1

    @classmethod
    def make(
        cls,
        cluster=None,
        batch_size=1,
        microbatch_num=1,
        opcall_overhead=0.0,
        mem_unit="bytes",
        comm_cost="model",
        merge_order="serial-first",
        schedule="seed",
        virtual_stages=1,
    ) -> Settings:
        """Validate every argument (``ValueError``/``TypeError`` naming it).

        Examples
        --------
        >>> Settings.make(microbatch_num=4).microbatch_num
        4
        """
        args = (cluster, batch_size, microbatch_num, opcall_overhead, mem_unit, comm_cost, merge_order, schedule)
        try:
            return _settings_cached(*args, virtual_stages)
        except TypeError:  # an unhashable argument (a dict cluster): validate without the cache
            return _make_settings(*args, virtual_stages)


def _make_settings(
    cluster, batch_size, microbatch_num, opcall_overhead, mem_unit, comm_cost, merge_order, schedule, virtual_stages
):
    return Settings(
        comm=comm_params(cluster, bandwidth_of),
        batch_size=None if batch_size is None else check_int_scalar("batch_size", batch_size, low=1),
        microbatch_num=check_int_scalar("microbatch_num", microbatch_num, low=1),
        opcall_overhead=check_finite_scalar("opcall_overhead", opcall_overhead, low=0.0),
        mem_unit=check_choice("mem_unit", mem_unit, {"bytes", "elements"}),
        comm_cost=check_choice("comm_cost", comm_cost, {"model", "given"}),
        merge_order=check_choice("merge_order", merge_order, {"parallel-first", "serial-first"}),
        schedule=check_choice("schedule", schedule, set(SCHEDULES)),
        virtual_stages=check_int_scalar("virtual_stages", virtual_stages, low=1),
    )


# Settings are immutable and validation is pure: repeated estimates with the same arguments
# (the common case) skip it. Keys include the argument types (1 and 1.0 validate differently).
_settings_cached = functools.lru_cache(maxsize=256, typed=True)(_make_settings)
