"""Which estimated jobs are one job: a job of a reusable workflow, run on its own (its file
has other triggers, such as ``workflow_dispatch``) and called from other workflows.

GitHub names each run after the way it ran: ``build`` in the reusable file's own runs,
``call / build`` in a caller's (the calling job's name, then the called job's). The runs
are of the same steps, so a job with no runs under its own name has them under the
others' (on iree, the median of the successful standalone runs of seven reusable CI
workflows is 0.88 to 1.05 times that of the same jobs called from ``ci.yml``, of a Torch
test workflow's seven jobs 0.85 to 1.43 times; ``benchmarks/new_jobs_variants.py --same``,
docs/accuracy.md).

Jobs are matched through the file that defines them: a caller's job
(``called_workflow``) is the job of that file with the same id whose display name ends
its own, after ``" / "``, and it runs as that job does only with the same matrix values
(a caller with a matrix of its own runs each instance differently) and the same inputs
(no ``with:`` on the way, as the file run on its own; or the same ``with:`` as another
caller's). The file has to be among the estimated workflows (a reusable workflow in
``.github/workflows`` always is).
"""

from __future__ import annotations

from collections.abc import Sequence

from laser_ci.workflows.model import JobInstance, Workflow


def same_jobs(pairs: Sequence[tuple[JobInstance, Workflow]]) -> list[tuple[int, ...]]:
    """For each ``(job, workflow)`` of ``pairs``, the indices of the others that are the same
    job (module doc), in order; ``()`` for most."""
    defined: dict[tuple[str, str], list[int]] = {}  # (file, job id) -> its own jobs
    for k, (job, wf) in enumerate(pairs):
        if job.called_workflow is None:
            defined.setdefault((wf.path, job.id), []).append(k)
    groups: dict[tuple[int, tuple[str, ...]], list[int]] = {}  # (its file's job, call values)
    for k, (job, _wf) in enumerate(pairs):
        if job.called_workflow is None:
            continue
        inner = job.id.rsplit("/", 1)[-1]
        own = [s for s in defined.get((job.called_workflow, inner), ())
               if job.name.endswith(" / " + pairs[s][0].name)]
        if own:  # the longest name that ends it: the most of the name matched
            s = max(own, key=lambda s: len(pairs[s][0].name))
            # run as the file runs it on its own (no call values on the way): with it
            groups.setdefault((s, job.call_values), [] if job.call_values else [s]).append(k)
    out: list[tuple[int, ...]] = [()] * len(pairs)
    for members in groups.values():
        for k in members:
            out[k] = tuple(m for m in members if m != k)
    return out
