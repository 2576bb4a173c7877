"""What a study starts from: workloads (CSV, LLM draws, scaled copies), cluster descriptions and the checks of both.

Nothing here knows the truth, the job state or a policy. Modules: :mod:`.workload`,
:mod:`.llm_workload`, :mod:`.scale`, :mod:`.cluster_spec`, :mod:`.preflight` (the checks run
before the engine is imported). A new workload format goes here, next to :mod:`.workload`.
"""
