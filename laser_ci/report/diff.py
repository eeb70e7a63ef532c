"""A pull request's estimate at its head against the one at its base: the workflows and jobs
that are new, removed, changed or unchanged (:func:`diff_results`), and the totals of a
result (:func:`totals`).

Jobs are matched by ``(workflow path, job display name)``; a renamed workflow file is matched
through ``renamed`` (base path -> head path). Only the workflows in ``changed`` are compared;
every other workflow at the head is unchanged."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from laser_ci.report.cells import billed_p50 as _billed_p50
from laser_ci.report.cells import job_name as _job_name
from laser_ci.report.cells import num as _num
from laser_ci.report.jobs import visible_workflows

Status = Literal["new", "removed", "changed", "unchanged"]


@dataclass(frozen=True)
class JobDiff:
    """One job of a workflow at head and/or base. ``delta_s`` is the change of the median."""

    name: str
    status: Status
    head: Mapping[str, Any] | None = None
    base: Mapping[str, Any] | None = None

    @property
    def delta_s(self) -> float | None:
        """As the billable time counts: a job that never runs (or fails before it starts)
        adds nothing."""
        h, b = _billed_p50(self.head), _billed_p50(self.base)
        if self.status == "new":
            return h
        if self.status == "removed":
            return -b if b is not None else None
        if h is None or b is None:
            return None
        return h - b


@dataclass(frozen=True)
class WorkflowDiff:
    """One workflow file. ``path`` is the head path (the base path when it was removed)."""

    path: str
    status: Status
    head: Mapping[str, Any] | None = None
    base: Mapping[str, Any] | None = None
    jobs: list[JobDiff] = field(default_factory=list)

    @property
    def name(self) -> str:
        wf = self.head or self.base or {}
        return str(wf.get("name") or self.path)

    def delta(self, key: str) -> float | None:
        h = _num((self.head or {}).get(key)) if self.head is not None else 0.0
        b = _num((self.base or {}).get(key)) if self.base is not None else 0.0
        if h is None or b is None:
            return None
        return h - b


def diff_results(
    head: Mapping[str, Any],
    base: Mapping[str, Any] | None,
    changed: Iterable[str],
    renamed: Mapping[str, str] | None = None,
) -> list[WorkflowDiff]:
    """Compares the workflows in ``changed`` (head or base paths) between two results.

    Returns one :class:`WorkflowDiff` per changed workflow (sorted by path), then one per
    unchanged workflow of ``head`` (status ``unchanged``, jobs listed without a base).
    """
    renamed = dict(renamed or {})
    head_wfs = {str(w.get("path")): w for w in visible_workflows(head)}
    base_wfs = {str(w.get("path")): w for w in visible_workflows(base or {})}
    to_head = {b: h for b, h in renamed.items()}
    to_base = {h: b for b, h in renamed.items()}
    changed_head: set[str] = set()
    for p in changed:
        changed_head.add(to_head.get(p, p))

    out: list[WorkflowDiff] = []
    for path in sorted(changed_head):
        h = head_wfs.get(path)
        b = base_wfs.get(to_base.get(path, path))
        if h is None and b is None:
            continue  # a changed path that is no workflow (or could not be read at either end)
        status: Status = "changed" if h is not None and b is not None else "new" if b is None else "removed"
        jobs = _diff_jobs(h, b)
        if h is not None and b is not None:
            h, jobs = _as_written(h, jobs)
        out.append(WorkflowDiff(path, status, h, b, jobs))
    for path, h in sorted(head_wfs.items()):
        if path not in changed_head:
            jobs = [JobDiff(_job_name(j), "unchanged", head=j) for j in h.get("jobs") or ()]
            out.append(WorkflowDiff(path, "unchanged", h, None, jobs))
    return out


def _as_written(wf: Mapping[str, Any], jobs: list[JobDiff]
                ) -> tuple[Mapping[str, Any], list[JobDiff]]:
    """A job written the same at head and base (the same ``definition``) keeps its base
    prediction, and the head workflow's billable time and cost follow: what a PR changes
    elsewhere (a matrix instance added, another job edited) moves the predictions of its
    neighbours by seconds, and that is noise, not a change of theirs."""
    out: list[JobDiff] = []
    shift_s = shift_usd = 0.0
    for j in jobs:
        h, b = j.head, j.base
        if (j.status == "changed" and h is not None and b is not None and h.get("definition")
                and h.get("definition") == b.get("definition")
                and h.get("runtime_s") != b.get("runtime_s")):
            kept = {**h, **{k: b[k] for k in ("runtime_s", "cost_usd", "cost") if k in b}}
            shift_s += (_billed_p50(kept) or 0.0) - (_billed_p50(h) or 0.0)
            shift_usd += (_num(kept.get("cost_usd")) or 0.0) - (_num(h.get("cost_usd")) or 0.0)
            j = JobDiff(j.name, "changed", kept, b)
        out.append(j)
    if out == jobs:
        return wf, jobs
    wf = {**wf, "jobs": [j.head for j in out if j.head is not None]}
    if (bill := _num(wf.get("billable_s"))) is not None:
        wf["billable_s"] = round(bill + shift_s, 1)
    if (usd := _num(wf.get("cost_usd"))) is not None:
        wf["cost_usd"] = round(usd + shift_usd, 6)
    return wf, out


def _diff_jobs(head: Mapping[str, Any] | None, base: Mapping[str, Any] | None) -> list[JobDiff]:
    def keyed(wf: Mapping[str, Any] | None) -> dict[tuple[str, int], Mapping[str, Any]]:
        seen: dict[str, int] = {}
        out: dict[tuple[str, int], Mapping[str, Any]] = {}
        for job in (wf or {}).get("jobs") or ():
            name = _job_name(job)
            n = seen.get(name, 0)
            seen[name] = n + 1
            out[(name, n)] = job  # duplicate display names pair up in file order
        return out

    h, b = keyed(head), keyed(base)
    jobs: list[JobDiff] = []
    for key, job in h.items():
        if key in b:
            jobs.append(JobDiff(key[0], "changed", job, b[key]))
        else:
            jobs.append(JobDiff(key[0], "new", job, None))
    jobs.extend(JobDiff(key[0], "removed", None, job) for key, job in b.items() if key not in h)
    return jobs


@dataclass(frozen=True)
class Totals:
    """Sums over all workflows: billable time and the longest critical path, in seconds."""

    workflows: int
    jobs: int
    billable_s: float
    critical_path_s: float

    @classmethod
    def of(cls, workflows: Iterable[Mapping[str, Any]]) -> Totals:
        wfs = list(workflows)
        return cls(
            workflows=len(wfs),
            jobs=sum(len(w.get("jobs") or ()) for w in wfs),
            billable_s=sum(_num(w.get("billable_s")) or 0.0 for w in wfs),
            critical_path_s=max((_num(w.get("critical_path_s")) or 0.0 for w in wfs), default=0.0),
        )


def totals(result: Mapping[str, Any]) -> Totals:
    """The totals of one estimate result (what the Action writes as its outputs); a
    workflow that only runs when called counts as part of its callers."""
    return Totals.of(visible_workflows(result))
