"""The ``needs`` graph of a workflow: validation, critical path and billable total.

Nodes are job ids (a job with a matrix is one node whose instances run in parallel, so
the node lasts as long as its slowest instance). A ``needs`` on the id of a job that
calls a reusable workflow waits for every job nested under it (ids ``caller/...``).

GitHub rejects a workflow whose ``needs`` names a job that does not exist or whose
``needs`` form a cycle (a job needing itself included); both are reported with the line
of the job, in the file that defines it (the called workflow, for a nested job).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from laser_ci.workflows.expressions import condition
from laser_ci.workflows.model import JobInstance, ReadError, Workflow


def _resolve(need: str, ids: Sequence[str]) -> list[str]:
    prefix = need + "/"
    return [i for i in ids if i == need or i.startswith(prefix)]


def dependencies(jobs: Sequence[JobInstance]) -> dict[str, set[str]]:
    """Job id -> ids it waits for (missing targets dropped)."""
    ids = list(dict.fromkeys(j.id for j in jobs))
    deps: dict[str, set[str]] = {i: set() for i in ids}
    for job in jobs:
        for need in job.needs:
            deps[job.id].update(d for d in _resolve(need, ids) if d != job.id)
    return deps


def _find_cycle(deps: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    for start in deps:
        if state.get(start):
            continue
        stack: list[tuple[str, list[str]]] = [(start, sorted(deps[start]))]
        path = [start]
        state[start] = 1
        while stack:
            node, todo = stack[-1]
            if not todo:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            nxt = todo.pop()
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, sorted(deps.get(nxt, ()))))
    return None


def check_needs(workflow: Workflow) -> list[ReadError]:
    """Report ``needs`` that name a missing job, and dependency cycles."""
    errors: list[ReadError] = []
    ids = [j.id for j in workflow.jobs]
    seen: set[tuple[str, str]] = set()
    cycle: list[str] | None = None
    for job in workflow.jobs:
        for need in job.needs:
            if (job.id, need) in seen:
                continue
            seen.add((job.id, need))
            if need == job.id and cycle is None:
                cycle = [job.id, job.id]
            elif not _resolve(need, ids):
                errors.append(ReadError(_path(workflow, job), job.line,
                                        f"job '{job.id}' needs '{need}', which does not exist"))
    cycle = cycle or _find_cycle(dependencies(workflow.jobs))
    if cycle:
        first = next((j for j in workflow.jobs if j.id == cycle[0]), None)
        errors.append(ReadError(_path(workflow, first) if first else workflow.path,
                                first.line if first else None,
                                "`needs` cycle: " + " -> ".join(cycle)))
    return errors


def _path(workflow: Workflow, job: JobInstance) -> str:
    """The file that defines ``job`` (its line is a line of that file)."""
    return job.called_workflow or workflow.path


def has_cycle(jobs: Sequence[JobInstance]) -> bool:
    """Whether the jobs' ``needs`` form a cycle (a job needing itself included)."""
    return (any(job.id in job.needs for job in jobs)
            or _find_cycle(dependencies(jobs)) is not None)


def critical_path(jobs: Sequence[JobInstance], seconds: Sequence[float]) -> float | None:
    """Longest chain of job durations through the ``needs`` graph (the wall-clock estimate).

    ``seconds[i]`` is the duration of ``jobs[i]``. None when the ``needs`` form a cycle:
    no job of the cycle can start, so GitHub rejects the workflow and the chain has no
    length (:func:`check_needs` reports the cycle).
    """
    if has_cycle(jobs):
        return None
    duration: dict[str, float] = {}
    for job, s in zip(jobs, seconds, strict=True):
        duration[job.id] = max(duration.get(job.id, 0.0), float(s))
    deps = dependencies(jobs)
    finish: dict[str, float] = {}
    visiting: set[str] = set()
    # Depth-first, with an explicit stack: a long chain must not exhaust Python's stack.
    for root in duration:
        stack = [root]
        while stack:
            node = stack[-1]
            if node in finish:
                stack.pop()
                continue
            if node not in visiting:
                visiting.add(node)
                # Edges back into nodes being visited close a cycle and are ignored.
                stack.extend(d for d in sorted(deps.get(node, ()))
                             if d not in finish and d not in visiting)
                continue
            start = max((finish.get(d, 0.0) for d in deps.get(node, ())), default=0.0)
            finish[node] = start + duration.get(node, 0.0)
            visiting.discard(node)
            stack.pop()
    return max(finish.values(), default=0.0)


def skip_after(jobs: Sequence[JobInstance], failing: Collection[str] = ()) -> None:
    """A job that needs one that never runs, or one that fails before it starts
    (``failing``: ids of jobs on a runner label GitHub retired), never runs either, unless
    its ``if:`` asks for it with a status function (``always()``, ``!cancelled()``, or
    ``failure()`` after a job that fails): GitHub skips it, as the implicit ``success()`` is
    false. Such a job gets ``events = ()`` and ``skipped_after``, the need that stopped it;
    followed down the chain."""
    by_id: dict[str, list[JobInstance]] = {}
    for job in jobs:
        by_id.setdefault(job.id, []).append(job)
    failed = set(failing)
    # the jobs after a failing one, however far down (``failure()`` is true in them): a walk
    # down the `needs` edges, not a recursion, as a chain may be hundreds of jobs long
    needed_by: dict[str, set[str]] = {}
    for job in jobs:
        for n in job.needs:
            needed_by.setdefault(n, set()).add(job.id)
    after_failure: set[str] = set()
    stack = sorted(failed)
    while stack:
        for dependent in needed_by.get(stack.pop(), ()):
            if dependent not in after_failure:
                after_failure.add(dependent)
                stack.append(dependent)

    changed = True
    while changed:
        never = {i for i, same in by_id.items() if all(j.events == () for j in same)}
        stopped = never | failed
        changed = False
        for job in jobs:
            after = next((n for n in job.needs if n in stopped), None)
            if job.events == () or after is None:
                continue
            status = {"success": False, "failure": job.id in after_failure, "cancelled": False}
            if job.raw_if is None or condition(job.raw_if, {}, status=status) is False:
                job.events, job.skipped_after = (), after
                changed = True
