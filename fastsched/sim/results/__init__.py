"""What a run gives, as data first: per-job records and summaries, metrics, baselines, plots, comparisons.

:mod:`.result` (the records and the summary), :mod:`.metrics` (the field's figures: JCTs,
contention, finish-time fairness), :mod:`.isolated` (each job's run time alone on its share,
the fairness baselines), :mod:`.plot` (needs matplotlib) and :mod:`._compare` (several
policies side by side). A new figure of merit goes in :mod:`.metrics`.
"""
