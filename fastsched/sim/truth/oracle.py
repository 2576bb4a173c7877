"""Applications whose truth is the cost model's oracle: jobs and GPU types without traces.

:class:`OracleApplication` answers the simulator's questions (:class:`~fastsched.sim.truth.traces.Application`)
from a :class:`~fastsched.catalog.ModelSpec` and a :class:`~fastsched.catalog.GpuType`: step and
sync times from :func:`fastsched.catalog.step_time`, the per-GPU batch range from the GPU's
memory, and statistical efficiency from a gradient-noise model (McCandlish et al. 2018): the
noise scale ``B_noise`` grows geometrically from the model's start to its end value over the
epochs, reported as ``grad_sqr = 1`` and ``grad_var = B_noise / init_batch_size`` (so the
simulator's gain at total batch ``B`` is ``(1 + B_noise/B0) / (1 + B_noise/B)``). Every
policy uses it unchanged; :func:`oracle_applications` builds the per-GPU-type form the typed
clusters use, and :func:`write_profile` writes the same numbers as a trace folder in the Sia
layout (``placements-<type>.csv``, ``scalability-<type>.csv``, ``validation-<B>.csv``) that
``--traces`` reads.
"""

from __future__ import annotations

from fastsched.catalog import gpus as gcat
from fastsched.catalog import profile as prof
from fastsched.catalog.models import ModelSpec, model_spec
from fastsched.catalog.oracle import HOST_BOUND_RATIO, host_share
from fastsched.catalog.profile import calibrate_floors_from_traces, calibrate_from_traces, write_profile
from fastsched.goodput import GradParams
from fastsched.sim.truth.per_type import HeteroApplication
from fastsched.sim.truth.traces import Application, normalize_placement

__all__ = [
    "OracleApplication",
    "oracle_applications",
    "catalogue_covers",
    "write_profile",
    "calibrate_from_traces",
    "calibrate_floors_from_traces",
]


class OracleApplication(Application):
    """An application modelled by the throughput oracle and a gradient-noise model.

    Parameters
    ----------
    model : str or ModelSpec
        A catalogued name (:func:`fastsched.catalog.model_spec`) or a spec.
    gpu : str or GpuType
        GPU type (name or alias).
    efficiency : float, optional
        The type's efficiency (default :data:`fastsched.catalog.DEFAULT_EFFICIENCY`; a decoder
        the strategy search prices: the GEMM model, :func:`fastsched.catalog.oracle.flat_efficiency`).
        The attribute ``efficiency`` keeps what was given (``None``: the default).
    noise_scale : (float, float), optional
        Gradient-noise scale at the start and end of training (default: the model's).
    max_epochs : int, optional
    fixed_batch : bool, optional
        Keep the total batch at ``init_batch_size`` (scale GPUs, not batch; default: the
        model's).
    overlap : float, optional
        Share of the backward pass that hides the all-reduce (default
        :data:`fastsched.catalog.oracle.OVERLAP`: 1, PyTorch DDP's bucketed overlap, as in
        the measured stack of the Sia traces; 0 for a stack that reduces after the backward
        pass).
    floor : float, optional
        The machine's fixed seconds per step, which gates it (``floor_s`` of
        :func:`fastsched.catalog.step_time`; default 0).
    adjust : StepAdjust, optional
        A bootstrap profile's corrections (:class:`fastsched.catalog.oracle.StepAdjust`).
    catalog : dict, optional
        GPU catalogue (see :func:`fastsched.catalog.with_types`).

    Examples
    --------
    >>> app = OracleApplication("cifar10", "h100")
    >>> app.name, app.init_batch_size, app.min_local_bsz <= 128 <= app.max_local_bsz
    ('cifar10', 128, True)
    >>> one, eight = app.throughput((1,), 128), app.throughput((8,), 128)
    >>> one[1], eight[0] > one[0]
    (0.0, True)
    >>> app.grad_stats(128, 0)[1] < app.grad_stats(128, 99)[1]  # the noise scale grows
    True
    """

    def __init__(self, model, gpu, *, efficiency=None, noise_scale=None, max_epochs=None, fixed_batch=None,
                 overlap=None, floor=None, adjust=None, catalog=None):  # fmt: skip
        m = model if isinstance(model, ModelSpec) else model_spec(model)
        if noise_scale is not None:
            m = m._replace(noise_scale=tuple(noise_scale))
        if max_epochs is not None:
            m = m._replace(max_epochs=max_epochs)
        if fixed_batch is not None:
            m = m._replace(fixed_batch=bool(fixed_batch))
        self._type = t = prof.oracle_type(m, gpu, efficiency=efficiency, overlap=overlap, floor=floor, adjust=adjust,
                                          catalog=catalog)  # fmt: skip
        self.model, self.gpu, self.efficiency, self.overlap, self.floor = t.model, t.gpu, t.efficiency, overlap, floor
        self.name = m.name
        self.gpu_type = self.gpu.trace_name
        self.init_batch_size = m.init_batch_size
        self.max_batch_size = m.max_batch_size
        self.max_epochs = m.max_epochs
        self.fixed_batch_size = m.init_batch_size if m.fixed_batch else None
        self.min_local_bsz, self.max_local_bsz = t.min_local_bsz, t.max_local_bsz
        self._memo: dict = {}
        self._min_replicas = None

    def throughput(self, placement, local_bsz):
        """Return ``(step_time, sync_time)`` seconds of ``placement`` at ``local_bsz`` per GPU.

        Every non-empty placement is priced. One with fewer GPUs than :attr:`min_replicas`
        (a decoder that does not fit there) is priced run time-sliced, as the smallest
        multiple of it that holds the model at the same total batch
        (:func:`fastsched.catalog.profile.priced`): never faster per GPU than a placement the
        job can really run on, and policies that choose GPU counts do not choose it.

        Examples
        --------
        >>> app = OracleApplication("gpt-6.7b", "h100")
        >>> one, two = app.throughput((1,), 1), app.throughput((2,), 1)
        >>> app.min_replicas, one[0] > two[0] / 2
        (2, True)
        """
        key = (tuple(placement), local_bsz)
        out = self._memo.get(key)
        if out is None:
            p = normalize_placement(placement)
            if not p:
                raise ValueError("throughput of an empty placement")
            out = self._memo[key] = prof.priced(self._type, p, local_bsz)
        return out

    @property
    def low_confidence(self) -> bool:
        """Whether the host rivals the GPU at the largest batch one GPU holds (the price rests on host costs).

        Examples
        --------
        >>> OracleApplication("ncf", "v100").low_confidence, OracleApplication("bert", "v100").low_confidence
        (True, False)
        """
        t = self._type
        share = host_share(t.model, t.gpu, efficiency=t.efficiency, floor_s=t.floor, adjust=t.adjust)
        return share >= HOST_BOUND_RATIO

    @property
    def min_replicas(self) -> int:
        """Fewest GPUs of this type that hold the model at its initial total batch.

        1 for a model that trains data-parallel. Smaller placements are still priced (run
        time-sliced, as on this many GPUs), but a job cannot really run on them, so policies
        that choose GPU counts give the job none or at least this many.

        Examples
        --------
        >>> OracleApplication("cifar10", "h100").min_replicas
        1
        >>> OracleApplication("gpt-6.7b", "a100-80gb").min_replicas > 1
        True
        """
        if self._min_replicas is None:
            self._min_replicas = prof.min_gpus(self._type, self.init_batch_size)
        return self._min_replicas

    def noise_scale(self, epoch) -> float:
        """Gradient-noise scale (samples) during ``epoch``: geometric from start to end.

        Examples
        --------
        >>> app = OracleApplication("imagenet", "v100")
        >>> app.noise_scale(0), round(app.noise_scale(89))
        (1000.0, 10000)
        """
        return prof.noise_scale(self.model, epoch)

    def grad_params(self, epoch) -> GradParams:
        """Return the gradient-noise model's :class:`~fastsched.goodput.GradParams` during ``epoch``.

        ``sqr = 1`` (the scale is arbitrary) and ``var = noise_scale(epoch) / init_batch_size``:
        the variance of a gradient estimate at the initial batch relative to its squared norm.

        Examples
        --------
        >>> OracleApplication("cifar10", "t4").grad_params(0)
        GradParams(sqr=1.0, var=7.8125)
        """
        return GradParams(*prof.grad_stats(self.model, epoch))

    def grad_stats(self, batch_size, epoch):
        """``(grad_sqr, grad_var)`` of :meth:`grad_params` (independent of the batch size)."""
        return tuple(self.grad_params(epoch))

    def progress(self, epoch):
        """Progress (steps at the initial batch size) to finish ``epoch`` epochs."""
        return prof.progress(self.model, epoch)

    def iteration(self, batch_size, epoch):
        """Optimizer steps after epoch ``epoch`` (0-based) at ``batch_size``."""
        return prof.iteration(self.model, batch_size, epoch)


def catalogue_covers(app_names, gpu_types, catalog=None) -> bool:
    """Whether every application is a catalogued model and every GPU type a catalogued GPU.

    Then :func:`~fastsched.sim.simulate` runs the workload on :func:`oracle_applications` when
    no traces are given (catalogue jobs in one step); ``traces=`` keeps the measured truth.

    Examples
    --------
    >>> catalogue_covers(["gpt-350m", "cifar10"], ["h100", "a100-80gb"]), catalogue_covers(["toy"], ["h100"])
    (True, False)
    >>> catalogue_covers(["gpt-350m"], ["h100", "slow"])
    False
    """
    from fastsched.catalog.models import known_models

    names = set(known_models())
    if not all(a in names for a in app_names):
        return False
    try:
        for t in gpu_types:
            gcat.gpu_type(t, catalog)
    except (ValueError, TypeError):
        return False
    return bool(gpu_types)


def oracle_applications(models, gpu_types, *, efficiencies=None, overlap=None, floors=None, bootstraps=None,
                        catalog=None) -> dict:  # fmt: skip
    """Per-GPU-type oracle applications for a typed cluster: ``{name: HeteroApplication}``.

    Parameters
    ----------
    models : iterable of str or ModelSpec
    gpu_types : iterable of str
        The cluster's types, keyed as given: catalogue names, aliases or trace names
        (:func:`~fastsched.sim.simulate` matches ``t4`` with a cluster's ``aws``).
    efficiencies : dict, optional
        ``{type: efficiency}`` (e.g. from :func:`calibrate_from_traces`).
    overlap : float, optional
        As :class:`OracleApplication`'s.
    floors : dict, optional
        ``{type: floor seconds}`` (e.g. from :func:`calibrate_floors_from_traces`).
    bootstraps : dict, optional
        ``{type: Bootstrap}`` (:func:`fastsched.catalog.bootstrap.bootstrap_from_traces`): the
        type's floor and :class:`~fastsched.catalog.oracle.StepAdjust`, for every model given.

    Examples
    --------
    >>> apps = oracle_applications(["cifar10"], ["aws", "h100"])
    >>> h = apps["cifar10"]
    >>> h.types, h.throughput_ratio("h100", "aws") > 1
    (('aws', 'h100'), True)
    """
    # A bare string is one name, not a list of one-letter names: refused by its argument's name.
    for what, v in (("models", models), ("gpu_types", gpu_types)):
        if isinstance(v, (str, ModelSpec)) or not hasattr(v, "__iter__"):
            raise TypeError(f"{what} must be a list of names, got {type(v).__name__} {v!r}")
    gpu_types = list(gpu_types)
    if not gpu_types:
        raise ValueError("gpu_types must name at least one GPU type, got none")
    for what, v in (("efficiencies", efficiencies), ("floors", floors), ("bootstraps", bootstraps)):
        if v is not None and not isinstance(v, dict):  # a list would be ignored: every type at the default
            raise TypeError(f"{what} must be a dict of GPU type -> number, got {type(v).__name__}")
    efficiencies, floors, bootstraps = efficiencies or {}, floors or {}, bootstraps or {}
    out = {}
    for model in models:
        m = model if isinstance(model, ModelSpec) else model_spec(model)
        apps = {}
        for t in gpu_types:
            g = gcat.gpu_type(t, catalog)
            keys = (t, g.trace_name, g.name)  # as given, then as a calibration or a catalogue names it
            eff = next((efficiencies[k] for k in keys if k in efficiencies), None)
            floor = next((floors[k] for k in keys if k in floors), None)
            bs = next((bootstraps[k] for k in keys if k in bootstraps), None)
            if bs is not None:
                floor = bs.floor_s
            apps[t] = OracleApplication(m, g, efficiency=eff, overlap=overlap, floor=floor,
                                        adjust=None if bs is None else bs.adjust)  # fmt: skip
        out[m.name] = HeteroApplication(apps)
    return out
