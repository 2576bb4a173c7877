"""The engine: the job state and the loop that steps it under a policy.

:mod:`.job` (one adaptive job) and :mod:`.hetero_job` (a job on a cluster of several GPU
types) keep their state in the arrays of :mod:`._state`, stepped by the kernels of
:mod:`._step`; :mod:`.cluster` is the round loop. The engine reads the truth and the inputs,
never a policy's module: the policy is handed in. A new kind of job (rigid, event-driven) goes
here.
"""
