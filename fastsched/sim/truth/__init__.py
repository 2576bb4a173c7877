"""The truth: an application's throughput and statistical efficiency on a GPU type, as the simulator plays it.

Measured traces (:mod:`.traces`, read by :mod:`._trace_files`, filled in by :mod:`._interp`
and :mod:`._throughput_model`), per-GPU-type applications (:mod:`.per_type`), the built-in
profiles (:mod:`.builtin`), applications derived from measured rows (:mod:`.derive`) and the
cost model's oracle (:mod:`.oracle`); :mod:`._rules` holds the rules they share (batch split,
placement ids). A new kind of truth goes here and answers the :class:`.traces.Application`
interface. Nothing here knows the job state or a policy.
"""
