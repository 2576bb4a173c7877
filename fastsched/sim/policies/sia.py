"""Sia (SOSP'23): heterogeneity-aware, goodput-optimised allocation by an integer program.

Each round, for every GPU type, a set of configurations: 1, 2, 4, ... GPUs within one node,
then 1, 2, ... whole nodes. For each job and configuration its goodput on that type (its own
fit there, or Sia's bootstrap from another type, see
:func:`~fastsched.sim.policies._belief.goodput_source`); a job that has never run is offered only
single-GPU configurations, valued 1. Each job's row is divided by its smallest entry;
configurations other than the job's current one are multiplied by its restart factor
``max(age - restarts * penalty, 0) / (age + penalty)`` (1 while ``age < penalty``); entries
are raised to the power ``p`` (-0.5) and rounded to two decimals. The integer program picks
at most one configuration per job under each type's GPU count, minimising (``p < 0``; else
maximising) the sum of chosen entries plus ``lambda_n`` per job left without GPUs. Jobs in
the middle of a restart keep their allocation. Whole-node configurations take whole free
nodes; smaller ones are packed best-fit; jobs whose configuration is unchanged keep their
nodes when the packing allows.

Rigid jobs (category ``rigid``) keep their GPU count and batch size: one configuration per
type, valued by their true throughput there (slowest type = their GPU count). ``scale-gpus``
jobs keep their batch size.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from fastsched._memo import remember
from fastsched.goodput import GoodputParams
from fastsched.sim.policies._assign import AssignProblem, solve_assignment_report
from fastsched.sim.policies._belief import bootstrap_nodes, goodput_source, requested_batch
from fastsched.sim.policies._placement import packed_placement, place_type
from fastsched.sim.policies._sia_kernels import _ZERO_GAIN, _rounded_powers, goodput_rows
from fastsched.sim.policies.base import SimPolicy
from fastsched.sim.truth.per_type import ONE_GPU_RULES, fixed_batch_throughput

__all__ = ["SiaPolicy", "RESTART_PENALTIES", "sia_configurations"]

#: Seconds of checkpoint-restore per restart measured by the Sia authors (default 30): the
#: policy's belief, which its restart factor uses. The simulator's truth is
#: :data:`fastsched.sim.truth.per_type.SIA_RESTART_DELAYS` (cifar10 50 s, yolov3 80 s); the two
#: differ as in the study's code, and a policy is not told the truth.
RESTART_PENALTIES = {"deepspeech2": 25, "imagenet": 250, "cifar10": 30, "bert": 120, "yolov3": 45}


def sia_configurations(gpus_per_node, num_nodes) -> list[tuple[int, int]]:
    """``(nodes, GPUs)`` configurations of one GPU type: powers of two within a node, then whole nodes.

    Examples
    --------
    >>> sia_configurations(4, 3)
    [(1, 1), (1, 2), (1, 4), (2, 8), (3, 12)]
    >>> sia_configurations(8, 2)
    [(1, 1), (1, 2), (1, 4), (1, 8), (2, 16)]
    """
    out = []
    g = 1
    while g < gpus_per_node:
        out.append((1, g))
        g *= 2
    out.extend((n, n * gpus_per_node) for n in range(1, num_nodes + 1))
    return out


class SiaPolicy(SimPolicy):
    """Sia's policy on the simulator (see the module docstring).

    A job it cannot resize (workload category ``rigid``) keeps its GPU count and batch size and
    competes with one configuration per GPU type; adaptive and ``scale-gpus`` jobs are resized.

    Parameters
    ----------
    p : float
        Power of the normalised goodputs (-0.5); ``p < 0`` minimises.
    lambda_n : float
        Penalty per job left unallocated (1.1).
    restart_penalties : dict of str -> float, optional
        Seconds lost per restart, per application (:data:`RESTART_PENALTIES`; others 30).
    max_replicas_cap : int
        Most GPUs one job may use (64).
    method : {"auto", "dp", "reduced", "classes", "milp"}
        Solver of the integer program (see :func:`~fastsched.sim.policies._assign.solve_assignment`).
    time_limit : float or None
        Wall-clock seconds for a round's integer-program solves (default ``None``: solve exactly).
        Off by default because a wall-clock limit makes a binding round's answer depend on the
        machine's load, and every other result here is the same on any machine; large studies
        pass one, such as 1.5 (the LP relaxation, the rows and the placement are not limited).
        A round stopped by it keeps the best choice found, or the last round's choice where that
        is still feasible and better; :attr:`solver_stats` counts such rounds and their worst
        gap, and the run's summary reports them (:meth:`run_summary`). Rounds solved by the
        dynamic program (small clusters) never reach it.
    estimate_batch : {"application", "requested"}
        Largest total batch size the goodput estimate of an adaptive job may choose: the
        application's (default), or its workload row's batch, within the application's range
        (as the study's code estimates; the job itself still trains at any batch up to the
        application's). See ``benchmarks/results/hetero.md``, issue 38 item 5.
    bootstrap_rate : {"largest-batch", "independent-maxima"}
        One-GPU throughput behind the bootstrap ratio between types
        (:func:`~fastsched.sim.truth.per_type.one_gpu_throughput`); ``"independent-maxima"``
        is the study's code's.

    Examples
    --------
    >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
    >>> pol = SiaPolicy()
    >>> pol.bind_cluster(parse_cluster("1xaws,1xrtx"), 60)
    >>> [(t, g) for t, _, g in pol.configs]
    [('aws', 1), ('aws', 2), ('aws', 4), ('rtx', 1), ('rtx', 2), ('rtx', 4), ('rtx', 8)]

    One round for two new jobs (adaptive: Sia starts each on one GPU):

    >>> from fastsched.sim.truth.builtin import builtin_applications
    >>> from fastsched.sim.engine.hetero_job import HeteroApplication, make_hetero_jobs
    >>> from fastsched.sim.inputs.workload import WorkloadJob
    >>> app = builtin_applications()["cifar10"]
    >>> apps = {"cifar10": HeteroApplication({"aws": app, "rtx": app})}
    >>> wjobs = [WorkloadJob("a", 0, "cifar10", 2, 128), WorkloadJob("b", 0, "cifar10", 1, 128)]
    >>> jobs = make_hetero_jobs(wjobs, apps, pol, pol.cluster)
    >>> pol.optimize(0, jobs, pol.cluster.nodes(), {})
    {'a': [0], 'b': [0]}
    """

    name = "sia"
    needs_gpu_types = True

    def __init__(
        self,
        p=-0.5,
        lambda_n=1.1,
        restart_penalties=None,
        max_replicas_cap=64,
        method="auto",
        time_limit=None,
        estimate_batch="application",
        bootstrap_rate="largest-batch",
    ):
        if p == 0:
            raise ValueError("p must be non-zero")
        if estimate_batch not in ("application", "requested"):
            raise ValueError(f"estimate_batch must be 'application' or 'requested', got {estimate_batch!r}")
        if bootstrap_rate not in ONE_GPU_RULES:
            raise ValueError(f"bootstrap_rate must be one of {list(ONE_GPU_RULES)}, got {bootstrap_rate!r}")
        self.estimate_batch, self.bootstrap_rate = estimate_batch, bootstrap_rate
        if time_limit is not None and not (isinstance(time_limit, (int, float)) and time_limit > 0):
            raise ValueError(f"time_limit must be positive seconds or None, got {time_limit!r}")
        self.time_limit = None if time_limit is None else float(time_limit)
        #: Rounds solved, rounds the time limit stopped, and the worst relative gap of those.
        self.solver_stats = {"rounds": 0, "limited": 0, "worst_gap": 0.0}
        self.p, self.lambda_n = float(p), float(lambda_n)
        self.restart_penalties = dict(RESTART_PENALTIES if restart_penalties is None else restart_penalties)
        self.max_replicas_cap = int(max_replicas_cap)
        self.method = method
        self.configs: list[tuple[str, int, int]] = []
        self._plans: dict = {}
        self._plans_seen: set = set()
        # (plan's bits, gradient statistics' bits) -> row: see _adaptive_rows.
        self._rows: dict = {}
        # The last round's program and its solution: see _solve.
        self._last_solve = None
        self._last_want = {}  # job name -> configuration chosen last round (the limit's fallback)

    def job_kwargs(self, wjob, app):
        """Extra :class:`~fastsched.sim.engine.job.Job` arguments for a workload row and its app (see :class:`SimPolicy`)."""
        category = getattr(wjob, "category", None)
        if category == "rigid":
            return {"target_num_replicas": wjob.num_replicas, "target_batch_size": wjob.batch_size}
        if category == "scale-gpus":
            return {"target_batch_size": wjob.batch_size}
        return {"target_batch_size": app.fixed_batch_size}

    def uses_requested_gpus(self, wjob) -> bool:
        """Tell whether the job runs on exactly its workload-requested GPU count (see :class:`SimPolicy`)."""
        return getattr(wjob, "category", None) == "rigid"

    def bind_cluster(self, spec, interval):
        """Receive the cluster and the round length (see :class:`SimPolicy`)."""
        super().bind_cluster(spec, interval)
        self.types = spec.types
        self.gpn = dict(spec.gpus_per_node_by_type)
        self.capacity = np.array([spec.gpus_by_type[t] for t in self.types], dtype=np.int64)
        self.configs = []
        self._cols_of_type = {}
        for t in self.types:
            first = len(self.configs)
            for n, g in sia_configurations(self.gpn[t], len(spec.nodes_by_type[t])):
                self.configs.append((t, n, g))
            self._cols_of_type[t] = (first, len(self.configs))
        self._col_nodes = np.array([n for _, n, _ in self.configs], dtype=np.int64)
        self._col_gpus = np.array([g for _, _, g in self.configs], dtype=np.int64)
        # Per type: its columns and their GPU counts; per (type, source type): whether each
        # configuration spans nodes when laid out on the source type (bootstrap estimates).
        self._type_cols = {t: np.arange(*self._cols_of_type[t]) for t in self.types}
        self._type_gpus = {t: self._col_gpus[self._type_cols[t]] for t in self.types}
        self._type_gpu_list = {t: g.tolist() for t, g in self._type_gpus.items()}
        self._layouts = {}  # see _plan_arrays
        self._multi_from = {}
        for t in self.types:
            cols = self._type_cols[t]
            for src in (*self.types, None):
                if src in (t, None):
                    self._multi_from[(t, src)] = self._col_nodes[cols] > 1
                else:
                    self._multi_from[(t, src)] = bootstrap_nodes(self._col_gpus[cols], self.gpn[src]) > 1
        self.node_types = spec.node_types

    # -- the goodput matrix ----------------------------------------------------------------
    def _max_replicas(self, job) -> int:
        app = job.hetero_application
        if job.target_num_replicas is not None:
            return int(job.target_num_replicas)
        if app.max_replicas is not None:
            return max(int(app.max_replicas), app.min_replicas)
        best = max(1, app.min_replicas)
        for t in self.types:  # Sia shares the largest bound across types
            a = app.apps[t]
            bound = min(
                max(2 * job.max_profiled_replicas_on(t), 1), self.max_replicas_cap, a.max_batch_size // a.min_local_bsz
            )
            best = max(best, bound)
        return best

    def _rigid_row(self, job):
        """Columns and values of a rigid job: its GPU count on each type, by true throughput."""
        happ = job.hetero_application
        n = int(job.target_num_replicas)
        vals, extra = [], []
        for t in self.types:
            if n > self.cluster.gpus_by_type[t]:
                continue
            xput = fixed_batch_throughput(
                happ.apps[t],
                packed_placement(n, self.gpn[t]),
                job.target_batch_size,
                happ.max_local_bsz_at(t, packed_placement(n, self.gpn[t])),
            )
            if xput <= 0:
                continue
            extra.append((t, math.ceil(n / self.gpn[t]), n))
            vals.append(xput)
        if vals:
            scale = n / min(vals)
            vals = [v * scale for v in vals]
        return extra, vals

    def _job_plan(self, job):
        """Return what a job's goodput row needs besides its gradient statistics, and its bits; cached per job.

        ``(None, None)`` if the job has no usable fit; else ``(plan, content)``: the plan
        ``(models, cols, multi, reps, ratio, model)`` holds the distinct fits ``(perf, init
        batch, bounds)`` it draws on and, per candidate configuration, its column, whether it
        spans nodes on the fit's type, its GPU count, its bootstrap ratio and its fit's index
        in ``models``; ``content`` is all of it as a pair of byte strings (a row's key). Depends only on the
        job's observations (:attr:`~fastsched.sim.engine.hetero_job.HeteroJob.observation_version`), so
        a round rebuilds only the plans of jobs that observed something new.
        """
        key = (job.observation_version, job.target_batch_size, job.target_num_replicas)
        hit = self._plans.get(job.name)
        if hit is not None and hit[0] is job and hit[1] == key:
            return hit[2]
        plan = content = None
        if job.has_run():
            max_r = self._max_replicas(job)
            fits: dict = {}
            models: dict = {}
            fit_list, parts = [], []
            cap = requested_batch(self, job) if self.estimate_batch == "requested" else None
            for t in self.types:
                src = goodput_source(job, t, fits, max_batch_size=cap, rate_rule=self.bootstrap_rate)
                if src is None:
                    continue
                m = models.get(src.gpu_type)
                if m is None:
                    m = models[src.gpu_type] = len(fit_list)
                    p = src.params
                    fit_list.append((tuple(p.perf), p.init_bsz, (p.max_bsz, p.min_atomic, p.max_atomic)))
                # Configurations of a type are sorted by GPUs: those from the fewest the job
                # runs on (its memory may need several) up to max_r are a slice.
                gpus = self._type_gpu_list[t]
                lo = bisect.bisect_left(gpus, job.hetero_application.apps[t].min_replicas)
                count = bisect.bisect_right(gpus, max_r)
                if count > lo:
                    parts.append((m, t, src.gpu_type, lo, count, src.ratio))
            if parts:
                *arrays, layout = self._plan_arrays(tuple(parts))
                plan = (fit_list, *arrays)
                # Everything the row is computed from, bit for bit: jobs with the same
                # observations (often: same application, same allocations) share their rows.
                fits = np.array([(*p_, i_, *b_) for p_, i_, b_ in fit_list], dtype=np.float64)
                content = (fits.tobytes(), layout)  # a pair: no two splits of one byte string meet
        if len(self._plans) > 4 * len(self._plans_seen) + 256:  # drop finished jobs' plans
            self._plans = {k: v for k, v in self._plans.items() if k in self._plans_seen}
        entry = (plan, content)
        self._plans[job.name] = (job, key, entry)
        return entry

    def _plan_arrays(self, parts) -> tuple:
        """Return a plan's per-configuration arrays and their bytes, for ``(model, type, source, lo, count, ratio)`` parts.

        A function of the parts and the cluster alone, and few distinct parts occur (jobs of
        one application run on the same types), so the arrays are kept by their parts.
        """
        return remember(self._layouts, parts, lambda: self._build_plan_arrays(parts), 4096)

    def _build_plan_arrays(self, parts) -> tuple:
        sizes = [count - lo for _, _, _, lo, count, _ in parts]
        arrays = (
            np.concatenate([self._type_cols[t][lo:count] for _, t, _, lo, count, _ in parts]),
            np.concatenate([self._multi_from[(t, src)][lo:count] for _, t, src, lo, count, _ in parts]),
            np.concatenate([self._type_gpus[t][lo:count] for _, t, _, lo, count, _ in parts]),
            np.repeat(np.array([b[5] for b in parts], dtype=np.float64), sizes),
            np.repeat(np.array([b[0] for b in parts], dtype=np.int64), sizes),
        )
        for a in arrays:  # shared by the plans of many jobs
            a.flags.writeable = False
        return (*arrays, b"".join(a.tobytes() for a in arrays))

    def _adaptive_rows(self, jobs) -> dict:
        """``{job index: (columns, normalised goodputs)}`` of adaptive / scale-gpus jobs.

        A job's row depends only on its plan (:meth:`_job_plan`) and its gradient statistics,
        which change at epoch crossings, not every round: rows are kept by the bits of both,
        so a row is reused while they are unchanged, and shared by jobs with the same inputs.
        One batched kernel call evaluates the round's other rows.
        """
        out = {}
        single = [self._cols_of_type[t][0] for t in self.types]  # each type's 1-GPU configuration
        self._plans_seen = {job.name for job in jobs}
        todo: dict = {}  # row key -> (plan, grad_sqr, grad_var, [job indices])
        used = set()
        for j, job in enumerate(jobs):
            plan, content = self._job_plan(job)
            if plan is None:
                continue
            sq, va = job.grad_params
            key = (content, float(sq).hex(), float(va).hex())  # the exact bits of the row's inputs
            used.add(key)
            if key in self._rows:
                if self._rows[key] is not None:
                    out[j] = self._rows[key]
            elif key in todo:
                todo[key][3].append(j)
            else:
                todo[key] = (plan, float(sq), float(va), [j])
        rows = self.normalised_rows([item[:3] for item in todo.values()])
        for (key, (_, _, _, idx)), row in zip(todo.items(), rows, strict=True):
            self._rows[key] = row
            if row is not None:
                out.update(dict.fromkeys(idx, row))
        if len(self._rows) > 8 * len(jobs) + 4096:  # keep the rows of the jobs in play
            self._rows = {k: v for k, v in self._rows.items() if k in used}
        for j, job in enumerate(jobs):
            if j not in out:  # never ran, or no usable estimate: the fewest GPUs it runs on
                cols = single if job.hetero_application.min_replicas <= 1 else self._fewest(job)
                out[j] = (cols, [1.0] * len(cols))
        return out

    def _fewest(self, job) -> list:
        """Each type's smallest configuration with at least the job's ``min_replicas`` GPUs."""
        cols = []
        for t in self.types:
            need = job.hetero_application.apps[t].min_replicas
            k = int(np.searchsorted(self._type_gpus[t], need, side="left"))
            if k < self._type_gpus[t].size:
                cols.append(int(self._type_cols[t][k]))
        return cols

    @staticmethod
    def normalised_rows(items) -> list:
        """Normalised goodput rows ``(columns, values)`` (or ``None``) of ``(plan, grad_sqr, grad_var)`` items.

        Each row holds the configurations whose goodput exceeds Sia's zero gain, divided by
        the smallest of them (``None`` if none does). One batched kernel call evaluates them all.

        Examples
        --------
        A plan whose two configurations share one model, the second worth twice the first:

        >>> import numpy as np
        >>> from fastsched import PerfParams
        >>> perf = tuple(PerfParams(0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.0))
        >>> plan = ([(perf, 128.0, (1024.0, 32.0, 256.0))], np.array([0, 1]), np.array([False, False]),
        ...         np.array([1, 2]), np.array([1.0, 1.0]), np.array([0, 0]))
        >>> (cols, vals), = SiaPolicy.normalised_rows([(plan, 1.0, 1.0)])
        >>> cols, vals[0], 1.0 < vals[1] < 2.0
        ([0, 1], 1.0, True)
        """
        out = [None] * len(items)
        if not items:
            return out
        perf, sqr, var, init, bounds = [], [], [], [], []
        plans = []  # (item index, first model, plan)
        for j, (plan, sq, va) in enumerate(items):
            plans.append((j, len(perf), plan))
            for p_, i_, b_ in plan[0]:
                perf.append(p_)
                sqr.append(sq)
                var.append(va)
                init.append(i_)
                bounds.append(b_)
        cols = np.concatenate([pl[1] for _, _, pl in plans])
        multi = np.concatenate([pl[2] for _, _, pl in plans])
        reps = np.concatenate([pl[3] for _, _, pl in plans])
        ratio = np.concatenate([pl[4] for _, _, pl in plans])
        model = np.concatenate([pl[5] + base for _, base, pl in plans])
        jobidx = np.repeat(np.array([j for j, _, _ in plans], dtype=np.int64), [pl[1].size for _, _, pl in plans])
        # A model is often asked the same (multi-node, GPUs) key for several types (the
        # bootstrap reuses one fit): evaluate each distinct key once.
        span = 2 * (int(reps.max()) + 1)
        keys = model * span + multi * (span // 2) + reps
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        good_u = np.empty(uniq.shape[0])
        bounds = np.array(bounds, dtype=np.float64).reshape(-1, 3)
        params = GoodputParams(
            perf=np.array(perf, dtype=np.float64).reshape(-1, 7),
            grad_sqr=np.array(sqr, dtype=np.float64),
            grad_var=np.array(var, dtype=np.float64),
            init_bsz=np.array(init, dtype=np.float64),
            max_bsz=bounds[:, 0].copy(),
            min_atomic=bounds[:, 1].copy(),
            max_atomic=bounds[:, 2].copy(),
            accumulation=np.ones(bounds.shape[0], dtype=np.bool_),
        )
        goodput_rows(params, model[first], multi[first], reps[first], good_u)
        good = good_u[inverse] * ratio
        keep = good > _ZERO_GAIN
        cols, good, jobidx = cols[keep], good[keep], jobidx[keep]
        if jobidx.size:
            starts = np.flatnonzero(np.r_[True, jobidx[1:] != jobidx[:-1]])
            low = np.minimum.reduceat(good, starts)
            norm = good / np.repeat(low, np.diff(np.r_[starts, jobidx.size]))
            bounds_ = np.r_[starts, jobidx.size]
            for a, b in zip(bounds_[:-1], bounds_[1:], strict=True):
                out[int(jobidx[a])] = (cols[a:b].tolist(), norm[a:b].tolist())
        return out

    def restart_factor(self, now, job) -> float:
        """Fraction of value kept by a job whose configuration changes this round."""
        penalty = self.restart_penalties.get(job.hetero_application.name, 30)
        age = now - job.submission_time
        if age < penalty:
            return 1.0
        return max(age - (job.num_restarts or 0) * penalty, 0.0) / (age + penalty)

    # -- one round -------------------------------------------------------------------------
    def optimize(self, now, jobs, nodes, allocations):
        """Return ``{job name: [node id per replica]}`` for the active ``jobs`` (see :class:`SimPolicy`)."""
        if self.cluster is None:
            raise RuntimeError("SiaPolicy needs bind_cluster(spec, interval) before the first round")
        columns, column, problem = self.round_program(now, jobs, allocations)
        chosen = self._solve(problem, jobs, columns, column)
        want = {}
        for k in np.flatnonzero(chosen):
            want[jobs[problem.job[k]].name] = columns[column[k]]
        return self._place(want, allocations)

    def _solve(self, problem, jobs, columns, column):
        """:func:`solve_assignment_report`, reusing the last round's solution when the program is the same.

        Costs are rounded to two decimals and restart factors change slowly, so a round often
        poses exactly the previous round's program (about a quarter of the rounds of a
        400-job trace); the solver is deterministic, so its answer is the same (a round the
        time limit stopped is not reused: the next one may solve it). The last round's choice,
        mapped onto this round's candidates by job name and configuration, breaks ties between
        optima towards keeping jobs where they are, and is the fallback when the limit stops a solve.
        """
        last = self._last_solve
        if last is not None and all(np.array_equal(a, b) for a, b in zip(last[0], problem, strict=True)):
            return last[1]
        last_want = self._last_want

        def warm():
            col_of = {c: i for i, c in enumerate(columns)}
            last = np.array([col_of.get(last_want.get(job.name), -1) for job in jobs], dtype=np.int64)
            return column == last[problem.job]

        report = solve_assignment_report(problem, self.method, self.time_limit, warm if last_want else None)
        chosen = report.chosen
        stats = self.solver_stats
        stats["rounds"] += 1
        if report.limited:
            stats["limited"] += 1
            stats["worst_gap"] = max(stats["worst_gap"], report.gap)
        self._last_solve = None if report.limited else (problem, chosen)
        self._last_want = {jobs[problem.job[k]].name: columns[column[k]] for k in np.flatnonzero(chosen)}
        return chosen

    def run_summary(self) -> dict:
        """With a ``time_limit``: :attr:`solver_stats` as ``solver_rounds``, ``solver_limited``, ``solver_worst_gap``.

        Examples
        --------
        >>> SiaPolicy(time_limit=1.0).run_summary()
        {'solver_rounds': 0, 'solver_limited': 0, 'solver_worst_gap': 0.0}
        """
        return {} if self.time_limit is None else {f"solver_{k}": v for k, v in self.solver_stats.items()}

    def round_program(self, now, jobs, allocations):
        """Build the round's configurations and its integer program (see the module docstring).

        Returns ``(columns, column, problem)``: the ``(type, nodes, GPUs)`` configurations (this
        policy's, then any current or rigid one outside them), each candidate's index in
        ``columns``, and the :class:`~fastsched.sim.policies._assign.AssignProblem` whose
        candidates are sorted by job, each job's in its row's order. Rows are gathered per
        job; the restart factor, the power and the rounding apply to all candidates at once.

        Examples
        --------
        >>> from fastsched.sim.inputs.cluster_spec import parse_cluster
        >>> from fastsched.sim.truth.builtin import builtin_applications
        >>> from fastsched.sim.engine.hetero_job import HeteroApplication, make_hetero_jobs
        >>> from fastsched.sim.inputs.workload import WorkloadJob
        >>> pol = SiaPolicy()
        >>> pol.bind_cluster(parse_cluster("1xaws,1xrtx"), 60)
        >>> app = builtin_applications()["cifar10"]
        >>> apps = {"cifar10": HeteroApplication({"aws": app, "rtx": app})}
        >>> jobs = make_hetero_jobs([WorkloadJob("a", 0, "cifar10", 1, 128)], apps, pol, pol.cluster)
        >>> columns, column, problem = pol.round_program(0, jobs, {})
        >>> [columns[c] for c in column], problem.cost.round(2).tolist()  # each type's 1-GPU configuration
        ([('aws', 1, 1), ('rtx', 1, 1)], [-0.1, -0.1])
        """
        types = self.node_types
        columns = list(self.configs)  # may grow with rigid jobs' own configurations
        col_of = {c: i for i, c in enumerate(columns)}
        adaptive = self._adaptive_rows([job for job in jobs if job.category != "rigid"])
        adaptive_of = [j for j, job in enumerate(jobs) if job.category != "rigid"]
        row_of = {j: adaptive[i] for i, j in enumerate(adaptive_of)}
        # Per job: its row's columns and values, its current column (-1: none), the factor
        # of its other columns, and whether its one candidate is forced (mid-restart).
        all_cols, all_vals, counts, current_of, factor_of, forced_of = [], [], [], [], [], []
        for j, job in enumerate(jobs):
            alloc = allocations.get(job.name, [])
            current = None
            if alloc:
                key = (types[alloc[0]], len(set(alloc)), len(alloc))
                current = col_of.get(key)
                if current is None:
                    col_of[key] = current = len(columns)
                    columns.append(key)
            if job.category == "rigid":
                extra, vals = self._rigid_row(job)
                cols = []
                for cfg in extra:
                    c = col_of.get(cfg)
                    if c is None:
                        col_of[cfg] = c = len(columns)
                        columns.append(cfg)
                    cols.append(c)
            else:
                cols, vals = row_of[j]
            keep = bool(alloc) and job.rescale_time > 0  # mid-restart: keep the allocation
            if keep:
                cols, vals = [current], [vals[cols.index(current)] if current in cols else 1.0]
            all_cols += cols
            all_vals += vals
            counts.append(len(cols))
            current_of.append(-1 if current is None else current)
            factor_of.append(1.0 if current is None or keep else self.restart_factor(now, job))
            forced_of.append(keep)
        job = np.repeat(np.arange(len(jobs), dtype=np.int64), counts)
        cols = np.array(all_cols, dtype=np.int64)
        vals = np.array(all_vals, dtype=np.float64)
        vals = np.where(cols == np.array(current_of, dtype=np.int64)[job], vals, vals * np.array(factor_of)[job])
        a = _rounded_powers(vals, self.p)
        cost = a - self.lambda_n if self.p < 0 else self.lambda_n - a
        forced = np.array(forced_of, dtype=bool)[job]
        take = ~(cost >= 0) | forced  # a non-negative cost is never chosen unless forced
        type_index = {t: i for i, t in enumerate(self.types)}
        col_type = np.array([type_index[c[0]] for c in columns], dtype=np.int64)
        col_gpus = np.array([c[2] for c in columns], dtype=np.int64)
        cols = cols[take]
        problem = AssignProblem(
            job=job[take],
            gtype=col_type[cols],
            gpus=col_gpus[cols],
            cost=cost[take],
            forced=forced[take],
            capacity=self.capacity,
            num_jobs=len(jobs),
        )
        return columns, cols, problem

    def _place(self, want, allocations):
        """Node lists for ``{job: (type, nodes, GPUs)}``, keeping unchanged jobs where they are."""
        out = {}
        types = self.node_types
        for t in self.types:
            mine = {k: cfg for k, cfg in want.items() if cfg[0] == t}
            if not mine:
                continue
            current = {k: allocations[k] for k in mine if allocations.get(k) and types[allocations[k][0]] == t}
            out.update(
                place_type(
                    {k: cfg[2] for k, cfg in mine.items()},
                    self.cluster.nodes_by_type[t],
                    self.gpn[t],
                    current,
                )
            )
        return out
