"""Stage 4, size: a job's runtime and ``runs-on`` in; runner, cost and advice out.

Everything is a pure function of its arguments plus the packaged runner catalog
(``runners.json``, loaded once). Per job::

    runner = resolve_runner(job.runs_on, job.matrix, visibility=vis)   # runners
    cost = cost_job(runtime, runner, visibility=vis)                  # cost
    advice = advise(runtime, runner, job.timeout_minutes, ...)        # advice

and per workflow ``summarize(costs, runs=estimate_monthly_runs(...))`` (cost, schedule).
Every number that rests on an assumption carries the assumption as text. ``visibility=None``
means "not known": costs are then computed as for a private repository and every message
says so.
"""
