"""Strategy search over a program with per-op costs (instead of an analytic transformer).

:class:`ProgramModel` reads one rank of a program (a case, a :class:`~.program.Program`,
or the dicts of the case format) whose computation ops carry costs measured on one
device for ``batch_size`` samples, and keeps, per forward op in program order: its cost,
the bytes of the activations it writes, and the parameters it is the first forward op to
read. :func:`fastsched.costmodel.search` then enumerates, for ``gpus`` GPUs, pipeline
degree ``p`` (dividing the GPUs, at most the forward ops), data degree ``d = gpus / p``,
microbatch size ``b`` (dividing a replica's batch), schedule (GPipe, 1F1B, ZB-H1),
recomputation (none, full) and ZeRO stage (0-3, with data parallelism), prices every
configuration with one kernel (:mod:`._program_search`) and ranks those that fit memory.

The model, and what it leaves out (stated, not hidden):

* **Stages.** The forward ops are split into ``p`` contiguous, non-empty stages whose
  largest forward time is minimal. A stage's backward time is the program's backward
  total in proportion to its forward time (backward ops are not traced back to the
  forward ops they differentiate); its optimizer time is the optimizer total in
  proportion to its parameters.
* **Microbatches.** Op costs and activation bytes scale linearly with the microbatch size
  ``b / batch_size``.
* **Schedules.** GPipe and 1F1B: ``sum(x) + (m - 1) max(x)`` over stage times ``x = f + b``
  (plus ``f`` with full recomputation); ZB-H1 saves ``(p - 1) min(W, f)`` of the slowest
  stage with ``W`` half its backward. The interleaved schedule is not offered: it would
  need the program split into ``p v`` chunks with per-chunk boundaries.
* **Communication.** ``2 (p - 1)`` point-to-point transfers of the largest stage boundary
  (the outputs of a stage's last forward op); one ring all-reduce of the largest stage's
  gradients (``grad_bytes`` per parameter; ZeRO-3 1.5x), on the inter-node link when the
  group spans nodes. Communication ops already in the program are ignored (they belong
  to the parallelisation the search replaces).
* **Tensor parallelism is excluded** (``tp = 1`` in every row): splitting an op needs
  per-op sharding rules (which matmul is column- or row-parallel, which tensors are
  replicated) that a generic program does not carry; the transformer model of
  :class:`~.search.Transformer` has them.
* **Memory.** Mixed-precision Adam states, 16 bytes per parameter (ZeRO-1
  ``4 + 12/d``, ZeRO-2 ``2 + 14/d``, ZeRO-3 ``16/d``), plus activations: the bytes written
  by a stage's forward ops per microbatch times the microbatches in flight (GPipe ``m``,
  1F1B/ZB-H1 ``min(p - s, m)`` on stage ``s``); with full recomputation only stage inputs
  are kept, plus one microbatch's activations being recomputed. The worst stage counts.
"""

from __future__ import annotations

import numpy as np

from fastsched._validate import check_int_scalar
from fastsched.costmodel.case import Case
from fastsched.costmodel.encode import EncodedProgram, encode
from fastsched.costmodel.graph import BWD, FWD, OPTIM
from fastsched.costmodel.program import DTYPE_SIZES, Program

__all__ = ["ProgramModel", "PROGRAM_SCHEDULES", "PROGRAM_RECOMPUTE"]

#: Schedules the program search offers (see the module notes).
PROGRAM_SCHEDULES = ("gpipe", "1f1b", "zb-h1")
#: Recomputation modes the program search offers.
PROGRAM_RECOMPUTE = ("none", "full")


class ProgramModel:
    """One rank's program as per-forward-op arrays for :func:`fastsched.costmodel.search`.

    Parameters
    ----------
    program : Case, Program, dict or list of rank dicts
        The program (costs are each op's ``cost``, or the case's after its settings).
    global_batch : int
        Samples per optimizer step over all data-parallel replicas.
    batch_size : int, optional
        Samples the op costs were measured for (default: the case's ``batch_size``, else 1);
        also fills ``-1`` dimensions.
    rank : int
        Which rank's program to read (default 0).

    Attributes
    ----------
    fwd_cost, act_bytes, param_elems : float64[F]
        Per forward computation op, in program order.
    bwd_total, optim_total : float
        ms of the backward and optimizer computation ops (for ``batch_size`` samples).
    grad_bytes : float
        Bytes per parameter element in the gradient all-reduce (the parameters' dtype).

    Raises
    ------
    ValueError
        No forward computation op, a non-positive batch, a rank the program lacks.

    Examples
    --------
    >>> from fastsched.costmodel.synthetic import transformer_stack
    >>> pm = ProgramModel(transformer_stack(4), global_batch=16)
    >>> pm.n_forward, round(pm.param_elems.sum()) == round(pm.parameters)
    (79, True)
    """

    def __init__(self, program, global_batch, *, batch_size=None, rank=0):
        if isinstance(program, Case):
            if batch_size is None:
                batch_size = program.batch_size
            enc = program.encoded
            source = program.program
        else:
            source = program if isinstance(program, Program) else Program.from_dict(program)
            enc = encode(source)
        self.global_batch = check_int_scalar("model.global_batch", global_batch, low=1)
        self.batch_size = check_int_scalar("model.batch_size", 1 if batch_size is None else batch_size, low=1)
        rank = check_int_scalar("rank", rank, low=0)
        if rank >= enc.n_ranks:
            raise ValueError(f"rank={rank}: the program has {enc.n_ranks} ranks")
        self._build(enc, source.ranks[rank], rank)

    def _build(self, enc: EncodedProgram, r, rank):
        o0, o1 = int(enc.op_ptr[rank]), int(enc.op_ptr[rank + 1])
        v0, v1 = int(enc.var_ptr[rank]), int(enc.var_ptr[rank + 1])
        phase = enc.phase[o0:o1]
        comm = enc.comm[o0:o1]
        cost = enc.base_cost[o0:o1]
        elems = enc.var_fixed[v0:v1] * float(self.batch_size) ** enc.var_ndyn[v0:v1]
        nbytes = elems * enc.var_dsize[v0:v1]
        pers = enc.persistable[v0:v1]
        index = {name: j for j, name in enumerate(enc.var_names[v0:v1])}
        seen = np.zeros(v1 - v0, np.bool_)
        fw, act, par = [], [], []
        for i, op in enumerate(r.ops):
            if comm[i] or phase[i] != FWD:
                continue
            fw.append(float(cost[i]))
            a = 0.0
            for name in op.output_names():
                j = index[name]
                if not pers[j]:
                    a += nbytes[j]
            act.append(a)
            p = 0.0
            for name in op.input_names():
                j = index[name]
                if pers[j] and not seen[j]:
                    seen[j] = True
                    p += elems[j]
            par.append(p)
        if not fw:
            raise ValueError("model: the program has no forward computation op to split into stages")
        self.fwd_cost = np.array(fw, np.float64)
        self.act_bytes = np.array(act, np.float64)
        self.param_elems = np.array(par, np.float64)
        comp = comm == 0
        self.bwd_total = float(cost[comp & (phase == BWD)].sum())
        self.optim_total = float(cost[comp & (phase == OPTIM)].sum())
        sizes = enc.var_dsize[v0:v1][pers & seen]
        self.grad_bytes = float(sizes.mean()) if sizes.size else float(DTYPE_SIZES["float32"])
        self.parameters = float(self.param_elems.sum())

    @property
    def n_forward(self) -> int:
        """Number of forward computation ops (the most pipeline stages)."""
        return int(self.fwd_cost.shape[0])

    def scalars(self) -> tuple:
        """Kernel form ``(batch_size, bwd_total, fwd_total, optim_total, param_total, grad_bytes)``.

        Examples
        --------
        >>> from fastsched.costmodel.synthetic import transformer_stack
        >>> ProgramModel(transformer_stack(1), global_batch=2).scalars()[0]
        1.0
        """
        return (
            float(self.batch_size),
            self.bwd_total,
            float(self.fwd_cost.sum()),
            self.optim_total,
            self.parameters,
            self.grad_bytes,
        )
