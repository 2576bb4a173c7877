"""numba kernels of the Pollux genetic search (NSGA-II) on a sparse allocation encoding.

Sections, one module each: :mod:`.rng` (counter-based random streams), :mod:`.types`
(namedtuples of arrays passed to the kernels), :mod:`.fitness` (job values, fairness
aggregates, population scoring; shared with the CUDA backend), :mod:`.select`
(non-dominated sort, crowding, survival, tournaments), :mod:`.variation` (crossover,
mutation, hashes), :mod:`.repair`, :mod:`.offspring` (a generation's children),
:mod:`.rowstate` (one row unpacked for edits), :mod:`.seeding` (first fit, greedy fills),
:mod:`.local` (local-search polish), :mod:`.relax` (the seed from the round's separable relaxation), :mod:`.evolve` (the generation loop), :mod:`.search`
(a whole serial round in one kernel),
:mod:`.utility` (cluster utilities), :mod:`.population` (population buffers on the Python
side: selection, concatenation, the previous round adapted to this one) and :mod:`.linkonly`
(how helpers that only kernels call are compiled: once, into their callers; numba's private
parts it relies on are in :mod:`fastsched._numba_private`).

Compile cost: kernels allocate with ``np.empty`` and a fill, and sort, take minima and
maxima with the package's own loops (``select._argsort``, ...), not ``np.zeros``, ``np.full``,
``np.arange``, ``np.argsort`` or ``.min()``: each such numba overload compiles kernels of its
own (optimised and emitted apart, once per caller kind), which was seconds of a first round.
"""

from fastsched.policy._ga.evolve import evolve_parallel, evolve_serial, gather
from fastsched.policy._ga.fitness import (
    FAIR_EPS,
    GEOMETRIC,
    POWER,
    POWER_SHIFTED,
    SUM,
    evaluate_population,
    fair_term,
    fair_total,
    job_value,
)
from fastsched.policy._ga.local import polish_row
from fastsched.policy._ga.offspring import CHUNKS, offspring_parallel, offspring_serial
from fastsched.policy._ga.relax import relax_row
from fastsched.policy._ga.repair import repair_parallel, repair_serial
from fastsched.policy._ga.rng import stream_key
from fastsched.policy._ga.search import Plan, search_serial
from fastsched.policy._ga.seeding import first_fit_rows, greedy_fill
from fastsched.policy._ga.select import crowding_distance, nondominated_rank, survive, survive_ranked, tournament
from fastsched.policy._ga.types import Arrays, Pop, Work, new_pop, new_work
from fastsched.policy._ga.utility import cluster_utilities

__all__ = [
    "CHUNKS",
    "FAIR_EPS",
    "GEOMETRIC",
    "POWER",
    "POWER_SHIFTED",
    "SUM",
    "Arrays",
    "Plan",
    "Pop",
    "Work",
    "search_serial",
    "cluster_utilities",
    "crowding_distance",
    "evaluate_population",
    "evolve_parallel",
    "evolve_serial",
    "fair_term",
    "fair_total",
    "first_fit_rows",
    "gather",
    "greedy_fill",
    "job_value",
    "new_pop",
    "new_work",
    "nondominated_rank",
    "offspring_parallel",
    "offspring_serial",
    "polish_row",
    "relax_row",
    "repair_parallel",
    "repair_serial",
    "stream_key",
    "survive",
    "survive_ranked",
    "tournament",
]
