"""Scheduling policies as the simulator sees them: the base class and its stable interface.

A :class:`SimPolicy` is called once per scheduling round with the active jobs (in workload
order), the nodes (``{node id: GPUs}``) and the current allocations (``{job name: [node id
per replica]}``); it returns the new allocations in the same form. The Pollux adapter lives in
:mod:`fastsched.sim.policies.pollux`, the baselines in their own modules, the registry in
:mod:`fastsched.sim.policies.registry`.

What a policy may rely on
-------------------------
The simulator's job objects are internals (they are being rebuilt); a policy reads jobs
through :meth:`SimPolicy.view`, a read-only :class:`JobView` whose attributes are the stable
interface: ``name``, ``application``, ``submission_time``, ``requested_gpus``,
``requested_batch_size``, ``gpus``, ``gpu_type``, ``attained_service``, ``num_restarts``,
``epoch``, ``running``. None of them is ever ``None`` except ``gpu_type`` (before the job first
runs, or on a cluster without GPU types). On the cluster side: the ``nodes`` argument, and, on a
cluster of named GPU types (or for a policy with ``needs_gpu_types``), :attr:`SimPolicy.cluster`
with ``types``, ``node_types`` (type of each node id), ``nodes_by_type``, ``gpus_by_type``,
``gpus_per_node_by_type`` and ``total_gpus``. :func:`free_gpus` and :func:`pack` are the
placement helpers every simple policy needs.
"""

from __future__ import annotations

import functools

from fastsched.sim.policies._user_checks import CHECKED_METHODS, checked_job_kwargs

__all__ = ["SimPolicy", "JobView", "free_gpus", "pack"]


class JobView:
    """Read-only view of one simulated job: the job attributes a policy may rely on.

    Built by :meth:`SimPolicy.view`. Every attribute is an ``int``/``float``/``str``/``bool``,
    never ``None``, except :attr:`gpu_type`.

    Attributes
    ----------
    name : str
        Job name (the key of the allocation dicts).
    application : str
        Application name.
    submission_time : int
        Seconds from the simulation start at which the job arrived.
    requested_gpus : int
        GPU count of the job's workload row (what the user asked for), whatever the policy.
    requested_batch_size : int
        Total batch size of the job's workload row.
    gpus : int
        GPUs the job holds now (0: waiting or suspended).
    gpu_type : str or None
        GPU type the job runs (or last ran) on; ``None`` before it first ran or on a cluster
        without GPU types.
    attained_service : float
        GPU-seconds received so far.
    num_restarts : int
        Reallocations after the first allocation (0 before the job first ran).
    epoch : int
        Training epochs completed.
    running : bool
        ``gpus > 0``.
    job : object
        The simulator's own job object, for what the view does not cover. Not part of the
        stable interface: its attributes may change between versions.

    Examples
    --------
    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
    >>> job = Job("a", builtin_applications()["cifar10"], 30, target_num_replicas=2, target_batch_size=256)
    >>> v = JobView(job, 2, 256)
    >>> v.name, v.application, v.submission_time, v.requested_gpus, v.gpus, v.num_restarts, v.running
    ('a', 'cifar10', 30, 2, 0, 0, False)
    >>> v.gpus = 4
    Traceback (most recent call last):
    ...
    AttributeError: JobView is read-only
    """

    __slots__ = ("job", "requested_gpus", "requested_batch_size")

    def __init__(self, job, requested_gpus, requested_batch_size):
        object.__setattr__(self, "job", job)
        object.__setattr__(self, "requested_gpus", int(requested_gpus))
        object.__setattr__(self, "requested_batch_size", int(requested_batch_size))

    def __setattr__(self, key, value):
        raise AttributeError("JobView is read-only")

    @property
    def name(self) -> str:
        """Job name."""
        return self.job.name

    @property
    def application(self) -> str:
        """Application name."""
        return self.job.application.name

    @property
    def submission_time(self) -> int:
        """Arrival time in seconds."""
        return int(self.job.submission_time)

    @property
    def gpus(self) -> int:
        """GPUs held now."""
        return int(sum(self.job.placement))

    @property
    def gpu_type(self):
        """GPU type run on (``None`` before the first run or without GPU types)."""
        return getattr(self.job, "gpu_type", None)

    @property
    def attained_service(self) -> float:
        """GPU-seconds received so far."""
        return float(self.job.attained_service)

    @property
    def num_restarts(self) -> int:
        """Reallocations after the first allocation (the simulator keeps ``None`` until then)."""
        return int(self.job.num_restarts or 0)

    @property
    def epoch(self) -> int:
        """Epochs completed."""
        return int(self.job.epoch)

    @property
    def running(self) -> bool:
        """Whether the job holds GPUs now."""
        return self.gpus > 0

    def __repr__(self) -> str:
        return (
            f"JobView({self.name!r}, submitted {self.submission_time}, requested {self.requested_gpus} GPUs, "
            f"holds {self.gpus})"
        )


def free_gpus(nodes, allocations) -> dict:
    """Free GPUs per node: ``nodes`` minus what ``allocations`` hold.

    Examples
    --------
    >>> free_gpus({0: 4, 1: 4}, {"a": [0, 0, 1]})
    {0: 2, 1: 3}
    """
    free = dict(nodes)
    for alloc in allocations.values():
        for n in alloc:
            free[n] -= 1
    return free


def pack(num_gpus, free, node_ids=None):
    """Take ``num_gpus`` GPUs from ``free`` on as few nodes as possible, or ``None`` if they do not fit.

    Nodes are filled fullest-fit first: the node with the fewest free GPUs that still holds the
    rest of the job, else the node with the most free GPUs (then the next). ``free`` is updated
    in place only when the job fits. ``node_ids`` restricts the candidates (e.g. one GPU type).

    Returns
    -------
    list of int or None
        Node id per GPU (sorted), as the allocation dicts hold it.

    Examples
    --------
    >>> free = {0: 1, 1: 4, 2: 2}
    >>> pack(2, free), free
    ([2, 2], {0: 1, 1: 4, 2: 0})
    >>> pack(5, free), free
    ([0, 1, 1, 1, 1], {0: 0, 1: 0, 2: 0})
    >>> pack(1, free) is None
    True
    """
    ids = list(free) if node_ids is None else list(node_ids)
    if num_gpus < 1 or sum(free[n] for n in ids) < num_gpus:
        return None
    left = dict(free)
    alloc: list = []
    need = int(num_gpus)
    while need:
        fits = [n for n in ids if left[n] >= need]
        # Why fullest fit: it keeps whole nodes free for the large jobs that need them.
        node = min(fits, key=lambda n: (left[n], ids.index(n))) if fits else max(ids, key=lambda n: left[n])
        take = min(left[node], need)
        alloc += [node] * take
        left[node] -= take
        need -= take
    free.update(left)
    return sorted(alloc)


def _records_requests(job_kwargs):
    """Wrap a policy's ``job_kwargs`` so the workload row's request is recorded first (see SimPolicy)."""

    @functools.wraps(job_kwargs)
    def wrapper(self, wjob, app):
        self._note_request(wjob)
        return job_kwargs(self, wjob, app)

    wrapper._records_requests = True
    return wrapper


class SimPolicy:
    """Base class of simulator policies.

    The simulator calls, in this order: :meth:`bind_cluster` (on a cluster of GPU types, or
    when :attr:`needs_gpu_types`), :meth:`job_kwargs` once per workload row, then
    :meth:`optimize` once per round and :meth:`desired_nodes` after it. A policy overrides
    :meth:`optimize`, reads jobs through :meth:`view` (see :class:`JobView` and the module
    docstring for the stable interface), and may override the others.

    A subclass defined outside this package has its :meth:`optimize`, :meth:`job_kwargs`,
    :meth:`desired_nodes` and :meth:`bind_cluster` checked on every call: an answer that is not ``{active job: [node id per GPU]}`` within
    the nodes' GPUs (or not valid ``Job`` arguments), and any exception they raise, become a
    ``PolicyError`` (a ``ValueError``) naming the policy, the round and the job or field.

    Attributes
    ----------
    name : str
        Registry name (default: the class's name).
    heterogeneity_unaware : bool
        Jobs keep one merged throughput model for all GPU types (Pollux in Sia's study).
    needs_gpu_types : bool
        The policy works on GPU types (Sia, Gavel): on a plain ``nodes x gpus`` cluster the
        simulator gives it one type.
    default_interval : int or None
        Scheduling interval the policy is defined with (Gavel: 360 s), used when the caller
        gives none; ``None``: the preset's.
    cluster : ClusterSpec or None
        Set by :meth:`bind_cluster` before the first round (``None`` on a plain cluster unless
        :attr:`needs_gpu_types`).
    interval : int
        Round length in seconds (set by :meth:`bind_cluster`).

    Examples
    --------
    A policy overrides :meth:`optimize` (and whatever else it needs):

    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.job import Job
    >>> class NodeZero(SimPolicy):
    ...     name = "node0"
    ...     def optimize(self, now, jobs, nodes, allocations):
    ...         return {job.name: [0] for job in jobs}
    >>> job = Job("a", builtin_applications()["cifar10"], 0)
    >>> NodeZero().optimize(0, [job], {0: 4}, {})
    {'a': [0]}
    >>> NodeZero().desired_nodes() is None
    True
    """

    name = "policy"
    heterogeneity_unaware = False
    needs_gpu_types = False
    default_interval = None
    cluster = None
    interval = 60

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Every policy learns each job's requested GPUs and batch size from its workload row,
        # even one that overrides job_kwargs without calling super(): the simulator's job
        # objects only carry them when job_kwargs passes them on (a trap users fell into).
        own = cls.__dict__.get("job_kwargs")
        # A policy written outside this package is new code: its answers are checked each
        # time, and its errors name it (see _user_checks). The built-in ones are tested instead.
        user = not cls.__module__.startswith("fastsched.")
        if own is not None and not getattr(own, "_records_requests", False):
            cls.job_kwargs = _records_requests(checked_job_kwargs(own) if user else own)
        for method, wrap in CHECKED_METHODS.items() if user else ():
            own = cls.__dict__.get(method)
            if own is not None and not getattr(own, "_checked", False):
                setattr(cls, method, wrap(own))
        inherited_auto = cls.name == getattr(cls, "_auto_name", None)
        if "name" not in cls.__dict__ and (cls.name == SimPolicy.name or inherited_auto):
            # A policy without a name of its own is known by its class's name, not "policy",
            # nor the name its unnamed parent got from its own class.
            cls.name = cls._auto_name = cls.__name__

    def _note_request(self, wjob) -> None:
        # Bookkeeping only: a row-like object without these fields (tests' stand-ins) is skipped.
        name, gpus, batch = (getattr(wjob, k, None) for k in ("name", "num_replicas", "batch_size"))
        if name is not None and gpus is not None and batch is not None:
            self.__dict__.setdefault("_requests", {})[name] = (int(gpus), int(batch))

    def bind_cluster(self, spec, interval) -> None:
        """Receive the cluster (a :class:`~fastsched.sim.inputs.cluster_spec.ClusterSpec`) and the round length."""
        self.cluster = spec
        self.interval = interval

    def uses_requested_gpus(self, wjob) -> bool:
        """Tell whether the job runs on exactly its workload-requested GPU count under this policy."""
        return False

    def job_kwargs(self, wjob, app) -> dict:
        """Extra :class:`~fastsched.sim.engine.job.Job` arguments for a workload row and its app.

        The default passes nothing: the job's batch size is then left to the simulator's
        goodput model (adaptive jobs). Rigid policies return ``{"target_num_replicas": ...,
        "target_batch_size": ...}``. Either way :meth:`view` knows the row's request.
        """
        self._note_request(wjob)
        return {}

    def view(self, job) -> JobView:
        """Read-only :class:`JobView` of a simulator job (the stable interface).

        Raises
        ------
        ValueError
            If the job's request is unknown: it was not built through this policy's
            :meth:`job_kwargs` (:func:`~fastsched.sim.simulate` always does) and carries no
            ``target_num_replicas``.

        Examples
        --------
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> from fastsched.sim.inputs.workload import WorkloadJob
        >>> from fastsched.sim.engine.job import Job
        >>> pol = SimPolicy()
        >>> row = WorkloadJob("a", 0, "cifar10", 4, 512)
        >>> app = builtin_applications()["cifar10"]
        >>> job = Job("a", app, 0, **pol.job_kwargs(row, app))  # adaptive: no target_num_replicas
        >>> job.target_num_replicas is None, pol.view(job).requested_gpus
        (True, 4)
        """
        request = self.__dict__.get("_requests", {}).get(job.name)
        if request is None:
            if job.target_num_replicas is None:
                raise ValueError(
                    f"job {job.name!r}: requested_gpus unknown (the job was not built through this policy's "
                    "job_kwargs, as simulate() does, and has no target_num_replicas)"
                )
            batch = job.target_batch_size
            request = (job.target_num_replicas, job.application.init_batch_size if batch is None else batch)
        return JobView(job, *request)

    def views(self, jobs) -> list:
        """:meth:`view` of each job, in order."""
        return [self.view(job) for job in jobs]

    def optimize(self, now, jobs, nodes, allocations) -> dict:  # pragma: no cover - interface
        """Return ``{job name: [node id per replica]}`` for the active ``jobs``.

        Parameters
        ----------
        now : int
            Simulated time of the round, seconds.
        jobs : list
            Active jobs (arrived, not completed), in workload order; read them through
            :meth:`view`.
        nodes : dict of int -> int
            GPUs per node id.
        allocations : dict of str -> list of int
            Current node id per GPU of each job holding GPUs (a copy: the policy may change
            it). A job left out of the result loses its GPUs.
        """
        raise NotImplementedError(f"{type(self).__qualname__} does not define optimize(now, jobs, nodes, allocations)")

    def desired_nodes(self):
        """Cluster size the policy asks for (autoscaling), or ``None``."""
        return None

    def run_summary(self) -> dict:
        """Figures of the policy's own about the run, added to the result's summary (default: none).

        The simulator calls it once, after the last round. A policy returns figures only where
        an option it was given makes them meaningful, so that the summaries of default runs
        stay as they were; the keys must not be the summary's own.

        Examples
        --------
        >>> SimPolicy().run_summary()
        {}
        """
        return {}
