"""Static cost model of distributed training programs on array-encoded graphs.

A re-implementation of the behaviour of Paddle's static auto-parallel cost model
(``paddle/distributed/auto_parallel/static/cost_model.py``): build each rank's op graph
through its variables, cost communication ops from ring sizes and a bandwidth, merge the
graph to a fixed point (chains sum, parallel branches take the max), sum forward,
backward and optimizer time per rank, simulate memory and the pipeline over
microbatches. Every phase is a numba kernel over arrays (:mod:`._edges`,
:mod:`._merge`, :mod:`._memory`, :mod:`._pipeline`); names are resolved once in
:mod:`.graph`. The reference's merge loop is quadratic; ours is near-linear.

Deviations from the reference (bugs B1-B14 of ``paddle-cases/README.md``)
-------------------------------------------------------------------------
::

    B1  Memory is a liveness simulation: a non-persistable variable lives from its first
        write (or the start, for feeds) to its last use and is then freed; persistable
        variables are static. ``peak_mem`` is a real peak, not the reference's sum of the
        variables its incomplete traversal happened to reach.
    B2  No bounded queues anywhere: any number of source nodes and microbatches works.
    B3  Communication ops moving a gradient (``@GRAD`` in the tensor name) or with the
        backward role are backward.
    B4  ``@GRAD`` is matched as a substring of input names, as intended. (The loss-gradient
        ``fill_constant``, role 257, stays forward, as in the reference: our pre-merge sums
        equal the reference's.)
    B5  (harmless in the reference) nothing to change.
    B6  Branch merging requires every branch to have the branch point as its only
        predecessor, one common successor and one phase (optimizer ops never merge); the
        merged node is wired ``branch point -> node -> end`` and the end keeps its other
        predecessors. Nothing is counted twice and no edge dangles. Linear merging also
        requires the predecessor to be of the same phase, so merging conserves per-phase
        sums.
    B7  Stage ``s`` of the pipeline uses the times of the ranks of stage ``s`` (the slowest
        of them). Without a pipeline the runtime is the slowest rank's fwd + bwd + optim.
    B8  ``batch_size`` fills ``-1`` dimensions (``batch_size=None`` makes them an error).
    B9  Memory is in bytes from dtype sizes; ``mem_unit="elements"`` gives element counts.
        Communication volume uses the dtype size too (the reference assumed 4 bytes).
    B10 Every variable of every slot is connected (``sum``/``concat``/``split`` keep edges).
    B11 Paddle 3.x collectives (``all_reduce``, ``all_gather``, ``reduce_scatter``,
        ``broadcast``, ...) are communication ops; ``recv`` is costed from the tensor it
        receives; a one-rank ring costs 0 instead of dividing by zero.
    B12 Call overhead is added once per original op and carried through merges.
    B13 The caller's program is never modified (no variable is added), every call starts
        from scratch, and no result depends on hash order.
    B14 ``standalone_cost_data`` keys may be ``desc_id``, op id or op type.

Other choices
-------------
* Variables are versioned in program order: a reader depends on the latest earlier writer
  (the reference connects every writer to every reader and renames only persistable
  read-and-write variables). On the shared cases without in-place non-persistable ops
  the graphs are the same; reading a non-persistable variable before the op that writes
  it is reported as a cycle (``ValueError``).
* Merge order is explicit (``merge_order``): "serial-first" (default) serialises a node
  that depends on one node before recognising branches, which is what the seed's
  one-merge-per-pass scan does on almost every graph and reproduces its runtimes;
  "parallel-first" is a series-parallel reduction (a diamond costs
  ``A + max(B, C) + D``). The reference itself mixes both depending on dict order (it
  takes the max of a silu/sigmoid diamond in ``par_fwd_L1`` but sums the same pattern in
  ``tfm_fwd_L4``). The seed's one-hop transitive-edge removal is not performed; it
  changes node counts, not runtimes.
* Units of communication: the seed's bandwidth constant (32.768) divides *bytes*, so its
  communication costs are in bytes / 32.768 = "ms": it meant 32.768 MB/ms and is 10**6 too
  slow (an 8 KiB send costs 250 "ms"; with communication counted, B3/B11,
  ``ut_dist_dp_mp_pp`` gives 147,095 ms against Paddle's 1,251.7 ms, in which Paddle costs
  only its ``send_v2``). The default keeps that constant so runtimes reproduce the
  reference's on cases without re-costed communication; pass ``cluster=Cluster(...)``
  (GB/s, µs, intra/inter node by rank placement) for real units.
  ``fastsched cost`` prints which deviations apply to the case at hand.

Layers
------
:func:`encode` turns a program (dicts or :class:`Program`) into an immutable
:class:`EncodedProgram` once; :func:`estimate` runs kernels only and returns an immutable
:class:`Cost`; :class:`CostModel` is an adapter with Paddle's method names.
:mod:`.schedules` prices pipeline schedules (seed, GPipe, 1F1B, interleaved, ZB-H1) and
:func:`search` ranks parallel configurations of a :class:`Transformer` (or of a program
with per-op costs, :class:`ProgramModel`) on a :class:`Cluster`, and :func:`price` prices one;
on a cluster of a catalogued GPU type each matrix multiply is priced by its shape
(:mod:`.roofline`: :func:`gemm_time`, :func:`gemm_efficiency`, the software :class:`Stack`).
"""

from fastsched._lazy import lazy_exports

# Public name -> defining module, imported on first use: importing this package (or a module
# inside it) loads nothing else. ``deviations``, ``encode`` and ``search`` are also submodules;
# the package attribute stays the function (see fastsched._lazy).
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Case": "fastsched.costmodel.case",
        "load_case": "fastsched.costmodel.case",
        "Cluster": "fastsched.costmodel.cluster",
        "Cost": "fastsched.costmodel.cost",
        "CostModel": "fastsched.costmodel.cost_model",
        "CostModelMode": "fastsched.costmodel.cost_model",
        "deviations": "fastsched.costmodel.deviations",
        "EncodedProgram": "fastsched.costmodel.encode",
        "encode": "fastsched.costmodel.encode",
        "estimate": "fastsched.costmodel.model",
        "estimate_cost": "fastsched.costmodel.model",
        "Op": "fastsched.costmodel.program",
        "Program": "fastsched.costmodel.program",
        "Rank": "fastsched.costmodel.program",
        "Var": "fastsched.costmodel.program",
        "ProgramModel": "fastsched.costmodel.program_search",
        "SCHEDULES": "fastsched.costmodel.schedules",
        "PipelineResult": "fastsched.costmodel.schedules",
        "PipelineSchedule": "fastsched.costmodel.schedules",
        "pipeline_schedule": "fastsched.costmodel.schedules",
        "pipeline_time": "fastsched.costmodel.schedules",
        "SearchResult": "fastsched.costmodel.search",
        "Transformer": "fastsched.costmodel.search",
        "search": "fastsched.costmodel.search",
        "transformer_stack": "fastsched.costmodel.synthetic",
        "price": "fastsched.costmodel.price",
        "Stack": "fastsched.costmodel.roofline",
        "DEFAULT_STACK": "fastsched.costmodel.roofline",
        "gemm_time": "fastsched.costmodel.roofline",
        "gemm_efficiency": "fastsched.costmodel.roofline",
    },
)

__all__ = [
    "Cluster",
    "SearchResult",
    "Transformer",
    "deviations",
    "search",
    "SCHEDULES",
    "EncodedProgram",
    "PipelineResult",
    "encode",
    "estimate",
    "pipeline_schedule",
    "pipeline_time",
    "Case",
    "Cost",
    "CostModel",
    "CostModelMode",
    "Op",
    "PipelineSchedule",
    "Program",
    "ProgramModel",
    "Rank",
    "Var",
    "estimate_cost",
    "load_case",
    "transformer_stack",
    "price",
    "Stack",
    "DEFAULT_STACK",
    "gemm_time",
    "gemm_efficiency",
]
