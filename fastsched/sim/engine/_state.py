"""The job state of one simulation as a struct of arrays, and the round kernel that steps it.

A :class:`StateTable` holds one row per job: the accounting every job has (:class:`JobState`)
and, for a job whose batch configuration is fixed, the inputs of the training kernel for its
current configuration (:class:`FixedInputs`), with the per-(application, batch size) epoch
tables of :func:`~fastsched.sim.engine._step.epoch_tables` concatenated into two arrays
(:class:`EpochTables`). A :class:`~fastsched.sim.engine.cluster.Cluster` owns one table for its jobs;
a job made alone has a one-row table of its own. :class:`~fastsched.sim.engine.job.Job` keeps its
public attributes (``progress``, ``current_time``, ``completion_time``, ...): they read and
write the job's row.

Integer columns keep Python's ``int`` values; a value of another type (a float clock after a
step of fractional seconds, ``None`` where a count is not yet known) is marked in its column
by a sentinel (:data:`ODD`, :data:`NONE`) and kept on the job, so the attribute gives back
exactly what was stored. :func:`advance_round` leaves a row holding :data:`ODD` to the
job's own (Python) step, as the per-job kernel does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fastsched._jit import jit
from fastsched.sim.engine._step import _slowed, _train, epoch_tables, slowed

__all__ = [
    "EpochTables",
    "FixedInputs",
    "JobState",
    "NONE",
    "ODD",
    "StateTable",
    "advance_round",
    "step_jobs",
    "TRAINED",
    "WHOLE_STEP",
    "LOOP",
]

#: Sentinels of the integer columns: a value that is not a plain ``int`` (kept on the job), and
#: ``None`` (``completion_time`` of a running job, ``num_restarts`` of one never allocated).
ODD = np.iinfo(np.int64).min
NONE = ODD + 1

#: Flags of :func:`advance_round` per stepped row: the job trained a configuration it has not
#: observed yet (``last`` holds the epoch of its last iteration); the row was not touched and
#: the job's whole step must run in Python; the re-scale delay was applied but the training
#: must run in the reference loop (``left`` seconds).
TRAINED, WHOLE_STEP, LOOP = 2, 4, 8


class JobState(NamedTuple):
    """One row per job: its progress and accounting (see :class:`~fastsched.sim.engine.job.Job`)."""

    progress: np.ndarray  # float64: statistical progress
    epoch: np.ndarray  # int64: epochs completed
    clock: np.ndarray  # int64: current_time
    attained: np.ndarray  # int64: GPU-seconds held (attained_service)
    modelled: np.ndarray  # int64: GPU-seconds at modelled points (modelled_service)
    rescale: np.ndarray  # int64: re-scale delay left (rescale_time)
    completion: np.ndarray  # int64: completion_time, NONE while running
    restarts: np.ndarray  # int64: num_restarts, NONE before the first allocation
    gpus: np.ndarray  # int64: GPUs held (sum of the placement)
    atomic: np.ndarray  # int64: per-GPU batch (atomic_bsz)
    accum: np.ndarray  # int64: accumulation steps (accum_steps)
    batch: np.ndarray  # int64: total batch size (batch_size)


class FixedInputs(NamedTuple):
    """One row per job: the training kernel's inputs for its current fixed configuration."""

    kind: np.ndarray  # int64: 1 where the job's batch is fixed and the round kernel steps it
    ready: np.ndarray  # int64: 0 not prepared, 1 prepared, -1 the reference loop must run
    total_time: np.ndarray  # float64: step time with accumulation
    modelled: np.ndarray  # int64: the configuration's throughput is modelled
    gain_at: np.ndarray  # int64: offset of the configuration's gain table in EpochTables.gain
    prog_at: np.ndarray  # int64: offset of its progress table in EpochTables.prog
    completion_epoch: np.ndarray  # int64
    max_epochs: np.ndarray  # int64
    slowdown: np.ndarray  # float64: the true goodput is divided by it (HeteroJob)
    observed: np.ndarray  # int64: the configuration's profile key was observed
    # int64, -1 or an epoch e: grad_params (best_metric) are the configuration's application's
    # grad_stats(batch, e) (best_metric(batch, e)), computed when read (see Job.grad_params).
    grad_epoch: np.ndarray
    metric_epoch: np.ndarray


# The integer columns of JobState and FixedInputs are rows of one int64 block each (the float
# ones of a float64 block), so the round kernel takes a few arrays, not one per column.
_STATE_INTS = JobState._fields[1:]
_INPUT_INTS = ("kind", "ready", "modelled", "gain_at", "prog_at", "completion_epoch", "max_epochs", "observed")
_INPUT_INTS += ("grad_epoch", "metric_epoch")
_INPUT_FLOATS = ("total_time", "slowdown")
# Where advance_round finds each column in the blocks (numba reads module integers as constants).
_EPOCH, _CLOCK, _ATTAINED, _MODELLED, _RESCALE, _COMPLETION, _GPUS = (
    _STATE_INTS.index(k) for k in ("epoch", "clock", "attained", "modelled", "rescale", "completion", "gpus")
)
_READY, _IS_MODELLED, _GAIN_AT, _PROG_AT, _COMPLETION_EPOCH, _MAX_EPOCHS, _OBSERVED, _GRAD_EPOCH, _METRIC_EPOCH = (
    _INPUT_INTS.index(k)
    for k in (
        "ready",
        "modelled",
        "gain_at",
        "prog_at",
        "completion_epoch",
        "max_epochs",
        "observed",
        "grad_epoch",
        "metric_epoch",
    )
)
_TOTAL_TIME, _SLOWDOWN = (_INPUT_FLOATS.index(k) for k in ("total_time", "slowdown"))


def _new_blocks(n) -> tuple:
    progress = np.zeros(n)
    ints = np.zeros((len(_STATE_INTS), n), dtype=np.int64)
    ints[_STATE_INTS.index("completion")] = NONE
    ints[_STATE_INTS.index("restarts")] = NONE
    iin = np.zeros((len(_INPUT_INTS), n), dtype=np.int64)
    iin[_INPUT_INTS.index("grad_epoch")] = -1
    iin[_INPUT_INTS.index("metric_epoch")] = -1
    fin = np.zeros((len(_INPUT_FLOATS), n))
    fin[_INPUT_FLOATS.index("slowdown")] = 1.0
    return (*_views(progress, ints, iin, fin), ints, iin, fin)


def _views(progress, ints, iin, fin) -> tuple:
    """Return the columns of a table's blocks: ``(JobState, FixedInputs)`` of views."""
    inputs = FixedInputs(
        **{k: iin[i] for i, k in enumerate(_INPUT_INTS)}, **{k: fin[i] for i, k in enumerate(_INPUT_FLOATS)}
    )
    return JobState(progress, *ints), inputs


_NO_TABLE = np.zeros(0)
_NO_TABLE.flags.writeable = False


class EpochTables:
    """The epoch tables of every (application, batch size) seen, concatenated, with their offsets.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> app = builtin_applications()["cifar10"]
    >>> tables = EpochTables()
    >>> tables.offsets(app, 128), tables.offsets(app, 256), tables.offsets(app, 128)
    ((0, 0), (100, 101), (0, 0))
    >>> len(tables.gain), len(tables.prog)
    (200, 202)
    """

    def __init__(self):
        self.gain = self.prog = _NO_TABLE  # never written: offsets() concatenates into new arrays
        # (id(app), batch) -> (gain offset, prog offset, app): the app is kept so its id stays its own.
        self._at: dict = {}

    def offsets(self, app, batch_size) -> tuple[int, int]:
        """Offsets of ``epoch_tables(app, batch_size)``, appended the first time they are asked for."""
        key = (id(app), batch_size)
        at = self._at.get(key)
        if at is None:
            gain, prog = epoch_tables(app, batch_size)
            at = self._at[key] = (len(self.gain), len(self.prog), app)
            self.gain = np.concatenate((self.gain, gain))
            self.prog = np.concatenate((self.prog, prog))
        return at[0], at[1]

    # Keyed by id(app): a copy's (or an unpickled table's) applications are other objects, so
    # the keys are rebuilt from the applications kept with them (an old id may be reused).
    def __getstate__(self):
        return self.gain, self.prog, [(app, batch, g, p) for (_, batch), (g, p, app) in self._at.items()]

    def __setstate__(self, st):
        self.gain, self.prog, entries = st
        self._at = {(id(app), batch): (g, p, app) for app, batch, g, p in entries}


class StateTable:
    """The state of ``n`` jobs as arrays: :attr:`state`, :attr:`inputs`, :attr:`tables`.

    Examples
    --------
    >>> table = StateTable(2)
    >>> table.state.clock.tolist(), bool(table.state.completion[0] == NONE), table.inputs.slowdown.tolist()
    ([0, 0], True, [1.0, 1.0])
    """

    __slots__ = ("state", "inputs", "tables", "blocks", "owner")

    def __init__(self, n):
        self.state, self.inputs, *self.blocks = _new_blocks(n)
        self.tables = EpochTables()
        # A weak reference to the cluster owning the table (see Cluster), None for a lone job's.
        self.owner = None

    # state and inputs are views of progress and the blocks: a copy or pickle keeps those and
    # rebuilds the views (copied views would be arrays of their own, the kernel writing others).
    # The owner is not kept: a copied cluster sets itself (a weak reference cannot be pickled).
    def __getstate__(self):
        return self.state.progress, self.blocks, self.tables

    def __setstate__(self, st):
        progress, blocks, self.tables = st
        self.owner = None
        self.blocks = list(blocks)
        self.state, self.inputs = _views(progress, *blocks)


@jit
def advance_round(rows, seconds, interference, progress, ints, iin, fin, gain, prog, out):
    """Step the fixed-configuration jobs of ``rows`` by ``seconds``: :meth:`Job.step`'s arithmetic.

    ``progress``, ``ints``, ``iin`` and ``fin`` are a :class:`StateTable`'s blocks (the rows of
    ``ints`` are :class:`JobState`'s integer columns, those of ``iin`` and ``fin``
    :class:`FixedInputs`' integer and float columns, in their orders); ``gain`` and ``prog`` its
    :class:`EpochTables`. Per row: the re-scale delay, then (for a prepared configuration) the
    training loop of :func:`~fastsched.sim.engine._step.advance_fixed` on the row's slices of
    ``gain`` and ``prog``, the goodput multiplied by ``1 - interference[k]`` (with the row's
    slowdown folded in as :class:`~fastsched.sim.engine.hetero_job.HeteroJob` does). A case the per-job
    kernel hands to the reference (an epoch past ``max_epochs``, a crossing that is not a
    finite time within the interval) leaves the training part of the row untouched and flags
    :data:`LOOP`; a row holding :data:`ODD` is not touched at all (:data:`WHOLE_STEP`).

    ``out[0, k]`` (flags), ``out[1, k]`` (the epoch of the last iteration, -1 if none) and
    ``out[2, k]`` (seconds after the delay) are written for every ``k``. :data:`TRAINED` is
    flagged where the job's configuration is not yet observed (its profile gains a key: done
    in Python); otherwise the epochs of its gradient statistics and of its logged metric are
    marked in ``grad_epoch`` and ``metric_epoch`` (the job computes them when they are read).
    """
    epoch, clock, attained, msvc_ = ints[_EPOCH], ints[_CLOCK], ints[_ATTAINED], ints[_MODELLED]
    rescale, completion, gpus = ints[_RESCALE], ints[_COMPLETION], ints[_GPUS]
    ready, modelled, gain_at, prog_at = iin[_READY], iin[_IS_MODELLED], iin[_GAIN_AT], iin[_PROG_AT]
    completion_epoch, max_epochs, observed = iin[_COMPLETION_EPOCH], iin[_MAX_EPOCHS], iin[_OBSERVED]
    grad_epoch, metric_epoch = iin[_GRAD_EPOCH], iin[_METRIC_EPOCH]
    total_time, slowdown = fin[_TOTAL_TIME], fin[_SLOWDOWN]
    for k in range(len(rows)):
        r = rows[k]
        out[0, k] = 0
        out[1, k] = -1
        out[2, k] = 0
        if clock[r] == ODD or attained[r] == ODD or msvc_[r] == ODD or rescale[r] == ODD or epoch[r] == ODD:
            out[0, k] = WHOLE_STEP
            continue
        if completion[r] != NONE:
            out[0, k] = WHOLE_STEP
            continue
        g = gpus[r]
        delay = min(rescale[r], seconds)
        clock[r] += delay
        attained[r] += delay * g
        rescale[r] -= delay
        sec = seconds - delay
        out[2, k] = sec
        if sec <= 0:
            continue
        if ready[r] != 1:
            out[0, k] = LOOP
            continue
        slow = interference[k]
        if slowdown[r] != 1.0:
            slow = _slowed(slow, slowdown[r])
        e0 = epoch[r]
        p, e, now, att, msvc, done, lst, status = _train(
            sec,
            progress[r],
            e0,
            clock[r],
            attained[r],
            msvc_[r],
            g,
            modelled[r] != 0,
            total_time[r],
            slow,
            gain,
            prog,
            gain_at[r],
            prog_at[r],
            completion_epoch[r],
            max_epochs[r],
        )
        if status != 0:
            out[0, k] = LOOP
            continue
        if lst >= 0:
            if observed[r] == 0:
                out[0, k] = TRAINED  # the configuration's first observation
            else:
                grad_epoch[r] = lst
        if e != e0:
            metric_epoch[r] = e
        out[1, k] = lst
        progress[r], epoch[r], clock[r], attained[r], msvc_[r] = p, e, now, att, msvc
        if done >= 0:
            completion[r] = done


def step_jobs(jobs, table, held, seconds, start, slow=None) -> list:
    """Step the jobs ``held`` (rows of ``table``, sorted) by ``seconds`` from ``start``: one round.

    ``jobs[i]`` is the job of row ``i``; ``slow`` maps a job's name to its interference
    (``None``: none); ``seconds`` and ``start`` are ints. Returns the rows whose jobs completed.

    The jobs of a fixed batch configuration go through :func:`advance_round` in one call,
    the others (adaptive jobs: their batch choice between epochs asks the goodput model)
    through their own :meth:`Job.step`. What the kernel leaves to Python (a job's first
    observation of a configuration, its gradient statistics at a new epoch, the epoch's
    logged metric, the reference loop's cases) is done per flagged job afterwards.
    """
    rows = np.array(held, dtype=np.int64)
    state, inputs = table.state, table.inputs
    state.clock[rows] = start  # every held job's clock is the cluster's (see fastsched.sim.engine.cluster)
    fixed = inputs.kind[rows] == 1
    for i in rows[~fixed].tolist():
        job = jobs[i]
        job.step(seconds, slow.get(job.name, 0.0) if slow else 0.0)
    f = rows[fixed]
    if len(f):
        for i in f[(inputs.ready[f] == 0) & (state.rescale[f] < seconds)].tolist():
            jobs[i]._prepare_fixed()  # a new configuration, about to train
        if slow:
            interference = np.array([slow.get(jobs[i].name, 0.0) for i in f.tolist()])
        else:
            interference = np.zeros(len(f))
        out = np.empty((3, len(f)), dtype=np.int64)
        tables = table.tables
        advance_round(f, seconds, interference, state.progress, *table.blocks, tables.gain, tables.prog, out)
        flags, last, left = out
        for k in np.flatnonzero(flags).tolist():
            job, flag = jobs[f[k]], int(flags[k])
            if flag & WHOLE_STEP:
                job.step(seconds, float(interference[k]))
                continue
            if flag & LOOP:
                interf = float(interference[k])
                if job.slowdown != 1.0:
                    interf = slowed(interf, job.slowdown)
                job._loop(job.application, int(left[k]), sum(job.placement), interf)
                continue
            if flag & TRAINED:
                job._trained(int(last[k]))
    return rows[state.completion[rows] != NONE].tolist()


_TOP = 2**63


def _int_column(field, nullable=False):
    """Return a property keeping an integer attribute in the job's row of ``field`` (see the module's notes)."""
    i = JobState._fields.index(field)

    def get(self):
        v = self._s[i].item(self._r)
        if v > NONE:
            return v
        return None if v == NONE else self._odd[field]

    def set_(self, v):
        if type(v) is int and NONE < v < _TOP:
            self._s[i][self._r] = v
        elif v is None and nullable:
            self._s[i][self._r] = NONE
        else:  # another type (a float clock, a numpy integer, None): kept as it is, on the job
            if self._odd is None:
                self._odd = {}
            self._odd[field] = v
            self._s[i][self._r] = ODD

    return property(get, set_)


class Stateful:
    """A job's state attributes as views of its row in a :class:`StateTable`.

    Mixed into :class:`~fastsched.sim.engine.job.Job`: ``progress``, ``epoch``, ``current_time``,
    ``attained_service``, ``modelled_service``, ``rescale_time``, ``completion_time``,
    ``num_restarts``, ``placement`` (with the GPUs held), ``atomic_bsz``, ``accum_steps``,
    ``batch_size`` and ``slowdown`` read and write the row, with the
    Python values and types they were given.

    Examples
    --------
    >>> job = Stateful()
    >>> job.current_time, job.completion_time, job.num_restarts, job.progress
    (0, None, None, 0.0)
    >>> job.current_time = 2.5  # not an int: kept as given, the row marked
    >>> job.current_time, bool(job._s.clock[0] == ODD)
    (2.5, True)
    >>> job.placement, job.atomic_bsz = (2, 1), 64
    >>> job.batch_size, int(job._s.gpus[0]), int(job._s.batch[0])
    (192, 3, 192)
    """

    _odd = None
    #: Whether a cluster may step the job's fixed configuration with :func:`advance_round`
    #: (a subclass that changes how it trains sets ``False``).
    _round_kernel = True

    def __init__(self):
        self._t = StateTable(1)
        self._s, self._r = self._t.state, 0
        self._placement = ()
        self._cfg = None
        self._fast = None

    # _s is the table's column views: a copy or pickle takes it from the (copied) table.
    def __getstate__(self):
        d = dict(self.__dict__)
        del d["_s"]
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        self._s = self._t.state

    def __copy__(self):
        """Return a shallow copy with a row of its own (a one-row table holding the same values)."""
        self._settle()  # what a round kernel marked, resolved on the original (the copy would lose it)
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        if self._odd is not None:
            new._odd = dict(self._odd)
        new._bind(StateTable(1), 0)
        return new

    def _cluster(self):
        """Return the cluster whose table holds the job's row, or ``None`` (a lone job, or its cluster gone)."""
        owner = self._t.owner
        cluster = None if owner is None else owner()
        if cluster is None or not (self._r < len(cluster.jobs) and cluster.jobs[self._r] is self):
            return None  # a copy of a cluster's job keeps a copy of its table, no cluster's
        return cluster

    progress = property(
        lambda self: self._s.progress.item(self._r),
        lambda self, v: self._s.progress.__setitem__(self._r, v),
        doc="Statistical progress (a float).",
    )
    epoch = _int_column("epoch")
    current_time = _int_column("clock")
    attained_service = _int_column("attained")
    modelled_service = _int_column("modelled")
    rescale_time = _int_column("rescale")
    completion_time = _int_column("completion", nullable=True)
    num_restarts = _int_column("restarts", nullable=True)
    _atomic = _int_column("atomic")
    _accum = _int_column("accum")

    @property
    def atomic_bsz(self):
        """Per-GPU batch size."""
        return self._atomic

    @atomic_bsz.setter
    def atomic_bsz(self, v):
        self._atomic = v
        self._sync_batch()

    @property
    def accum_steps(self):
        """Gradient accumulation steps."""
        return self._accum

    @accum_steps.setter
    def accum_steps(self, v):
        self._accum = v
        self._sync_batch()

    def _set_batch_config(self, atomic, accum):
        """Set the per-GPU batch and accumulation steps at once (a new configuration to prepare)."""
        cfg = (atomic, accum)
        if cfg == self._cfg and type(atomic) is int and type(accum) is int:
            return  # as set last (an adaptive job re-chooses after every iteration, mostly the same)
        if type(atomic) is int and type(accum) is int and 0 <= atomic < _TOP and 0 <= accum < _TOP:
            s, r = self._s, self._r  # the common case, written at once
            s.atomic[r], s.accum[r] = atomic, accum
            s.batch[r] = atomic * (accum + 1) * s.gpus.item(r)
            self._t.inputs.ready[r] = 0
            self._cfg = cfg
            return
        self._atomic = atomic
        self._accum = accum
        self._sync_batch()

    def _sync_batch(self):
        s, r = self._s, self._r
        a, c = s.atomic.item(r), s.accum.item(r)
        odd = a == ODD or c == ODD
        s.batch[r] = ODD if odd else a * (c + 1) * s.gpus.item(r)
        self._t.inputs.ready[r] = 0
        self._cfg = None if odd else (a, c)

    def _settle(self):
        """Resolve what the round kernel marked to compute when read, with the configuration it trained."""
        inputs, r = self._t.inputs, self._r
        g, m = inputs.grad_epoch.item(r), inputs.metric_epoch.item(r)
        if g >= 0 or m >= 0:
            app, batch = self._fast[0][0], self._fast[1]
            if g >= 0:
                self._grad_params = app.grad_stats(batch, g)
                inputs.grad_epoch[r] = -1
            if m >= 0:
                self._best_metric_at = (app, batch, m)  # logging only: computed when read
                inputs.metric_epoch[r] = -1

    @property
    def placement(self) -> tuple:
        """GPUs per node held (a tuple; empty without GPUs)."""
        return self._placement

    @placement.setter
    def placement(self, value):
        self._placement = value
        s, r, cfg = self._s, self._r, self._cfg
        gpus = sum(value)
        s.gpus[r] = gpus
        if cfg is not None and type(gpus) is int:  # the batch configuration's plain ints, as last set
            s.batch[r] = cfg[0] * (cfg[1] + 1) * gpus
            self._t.inputs.ready[r] = 0
        else:
            self._sync_batch()

    @property
    def batch_size(self) -> int:
        """Current total batch size (0 without placement)."""
        b = self._s.batch.item(self._r)
        if b != ODD:
            return b
        return self.atomic_bsz * (self.accum_steps + 1) * sum(self.placement)

    @property
    def slowdown(self) -> float:
        """The true goodput is divided by this (1.0 but for a :class:`~fastsched.sim.engine.hetero_job.HeteroJob`)."""
        return self._t.inputs.slowdown.item(self._r)

    @slowdown.setter
    def slowdown(self, v):
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 1.0):
            raise ValueError(f"job {getattr(self, 'name', '?')}: slowdown must be a number >= 1, got {v!r}")
        self._t.inputs.slowdown[self._r] = v

    def _set_kind(self):
        """Mark the row for the round kernel if the job's batch is fixed (at binding and every allocation)."""
        self._t.inputs.kind[self._r] = self.target_batch_size is not None and self._round_kernel
        self._t.inputs.ready[self._r] = 0

    def _bind(self, table, row):
        """Move the job's state into ``row`` of ``table`` (a cluster's); the job then reads and writes it there."""
        self._settle()
        for src, dst in zip(self._s, table.state, strict=True):
            dst[row] = src[self._r]
        old, new = self._t.inputs, table.inputs
        for name in ("slowdown", "observed"):
            getattr(new, name)[row] = getattr(old, name)[self._r]
        new.ready[row] = 0  # the epoch tables' offsets are the new table's
        new.grad_epoch[row] = new.metric_epoch[row] = -1
        self._t, self._s, self._r = table, table.state, row
        self._set_kind()
