"""What a run gives, as data first: per-job records and summaries, metrics, baselines, plots.

:mod:`.result` (the records and the summary), :mod:`.metrics` (the field's figures: JCTs,
contention, finish-time fairness), :mod:`.isolated` (each job's run time alone on its share,
the fairness baselines) and :mod:`.plot` (needs matplotlib). A new figure of merit goes in
:mod:`.metrics`. Several policies side by side is a face (:mod:`fastsched.sim._compare`): it
runs :func:`fastsched.sim.simulate`.
"""
