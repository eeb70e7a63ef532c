"""The instances of a matrix computed at run time, taken from the job's latest runs.

A job whose matrix only exists at run time (``matrix: ${{ fromJSON(needs.plan.outputs.x) }}``,
test shards a script computes) is read as one instance whose display name has parts only
the run knows (:mod:`laser_ci.workflows.names`). Given the jobs earlier runs of the
workflow listed (names as GitHub showed them, ``Caller / Called / Leaf`` for reusable
workflows), :func:`expand` replaces it with the instances of the newest run that ran it,
each under the exact name GitHub gave it, so each can be predicted from its own history.

How a listed job finds its job definition: a name the workflow gives one of its jobs
statically is that job; any other name belongs to the job whose name pattern it matches
with the most literal text (``Unit Test / …`` before ``…``), earlier jobs first on a tie.
A matrix computed at run time takes every name of the newest run that has any of its
names (a run where it was skipped does not count); a job without such a matrix whose name
is only known in part takes the one name of that run, when there is exactly one. A
run-time matrix job whose name is fully known (``Tests${{ matrix.x && '' }}``: every
instance named ``Tests``) becomes as many instances as the newest run listed.

When the job's ``runs-on`` is only known at run time, an instance takes the runner labels
its run asked for, when the history has them.

A job that calls a remote reusable workflow (its jobs are not read) is recorded as one job
per job of the called workflow, ``Caller / Called``: it takes the names of the newest run
that ran it, as a run-time matrix does, each with the runner labels its run asked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from laser_ci.workflows import names
from laser_ci.workflows.model import JobInstance, NameHole, Workflow


class PastJob(Protocol):
    """One job of an earlier run (:class:`laser_ci.text.history.RunJob`)."""

    @property
    def name(self) -> str: ...

    @property
    def labels(self) -> tuple[str, ...]: ...


def _natural(name: str) -> list[tuple[int, int | str]]:
    """Sort key: numbers by value (``pkg 2/7`` before ``pkg 10/12``)."""
    return [(0, int(t)) if t.isdigit() else (1, t) for t in re.findall(r"\d+|\D+", name)]


def expand(workflow: Workflow, runs: Sequence[Sequence[PastJob]]) -> Workflow:
    """``workflow`` with each job whose name or matrix is only known at run time replaced by
    the instances of its newest run in ``runs`` (oldest run first), where there are any."""
    if not runs:
        return workflow
    static = {j.name for j in workflow.jobs if not j.name_parts}
    templates = {i: names.pattern(_parts(j)) for i, j in enumerate(workflow.jobs)
                 if _parts(j)}
    counted = {i: j.name for i, j in enumerate(workflow.jobs)
               if not j.name_parts and j.dynamic_matrix}
    if not templates and not counted:
        return workflow
    rank = {i: names.specificity(_parts(workflow.jobs[i])) for i in templates}
    found: dict[int, list[PastJob]] = {}
    for run in reversed(runs):
        mine: dict[int, list[PastJob]] = {}
        for past in run:
            if past.name in static:
                for i, name in counted.items():
                    if name == past.name:
                        mine.setdefault(i, []).append(past)
                        break
                continue
            matches = [i for i, p in templates.items() if p.fullmatch(past.name)]
            if matches:
                best = max(matches, key=lambda i: (rank[i], -i))
                mine.setdefault(best, []).append(past)
        for i, pasts in mine.items():
            found.setdefault(i, pasts)
        if len(found) == len(templates) + len(counted):
            break
    jobs: list[JobInstance] = []
    for i, job in enumerate(workflow.jobs):
        pasts = found.get(i)
        if not pasts:
            jobs.append(job)
        elif job.dynamic_matrix or _remote(job):
            ordered = sorted(pasts, key=lambda p: _natural(p.name))
            jobs.extend(_instance(job, p) for p in ordered)
        elif len({p.name for p in pasts}) == 1:
            jobs.append(_instance(job, pasts[0]))
        else:
            jobs.append(job)
    return replace(workflow, jobs=jobs)


def _remote(job: JobInstance) -> bool:
    """A call of a remote reusable workflow that runs: its jobs are named after it."""
    return bool(job.remote_workflow) and job.events != ()


def _parts(job: JobInstance) -> names.Parts:
    """The name parts the job's runs are matched on: a remote call's, ``Caller / …``."""
    if _remote(job):
        return names.join(job.name_parts or (job.name,), (NameHole(),))
    return job.name_parts


def _instance(job: JobInstance, past: PastJob) -> JobInstance:
    run_time = {k: v for k, v in job.run_time.items() if k != "name"}
    runs_on, source = job.runs_on, job.runs_on_source
    if ("runs-on" in run_time or _remote(job)) and past.labels:
        labels = list(past.labels)
        runs_on = labels[0] if len(labels) == 1 else labels
        source = "history"
        run_time.pop("runs-on", None)
    return replace(job, name=past.name, name_parts=(), run_time=run_time, runs_on=runs_on,
                   runs_on_source=source, expanded=job.dynamic_matrix or _remote(job))
