"""Which estimated jobs are one job: a job of a reusable workflow, run on its own (its file
has other triggers, such as ``workflow_dispatch``) and called from other workflows.

GitHub names each run after the way it ran: ``build`` in the reusable file's own runs,
``call / build`` in a caller's (the calling job's name, then the called job's). The runs
are of the same steps, so a job with no runs under its own name has them under the
others' (on iree, the standalone runs of seven reusable CI workflows take within 2% to
13% of the median of the same jobs called from ``ci.yml``, docs/accuracy.md).

Jobs are matched through the file that defines them: a caller's job
(``called_workflow``) is the job of that file with the same id whose display name ends
its own, after ``" / "``; two callers' jobs are one job when both are one job with the
same job of that file. The file has to be among the estimated workflows (a reusable
workflow in ``.github/workflows`` always is).
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
    groups: dict[int, list[int]] = {}  # a file's own job -> itself and its callers' jobs
    for k, (job, _wf) in enumerate(pairs):
        if job.called_workflow is None:
            continue
        inner = job.id.rsplit("/", 1)[-1]
        own = [s for s in defined.get((job.called_workflow, inner), ())
               if job.name.endswith(" / " + pairs[s][0].name)]
        if own:  # the longest name that ends it: the most of the name matched
            s = max(own, key=lambda s: len(pairs[s][0].name))
            groups.setdefault(s, [s]).append(k)
    out: list[tuple[int, ...]] = [()] * len(pairs)
    for members in groups.values():
        for k in members:
            out[k] = tuple(m for m in members if m != k)
    return out
