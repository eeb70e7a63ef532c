"""Markdown for the Action: the sticky PR comment and the job summary.

Pure functions over the JSON results of :func:`laser_ci.estimate.estimate_files` (the
``{"predictor", "workflows": [...], "errors": [...]}`` dict); no I/O, no GitHub calls.

A pull request is reported as a diff of the estimate at its head against the estimate at its
base. Jobs are matched by ``(workflow path, job display name)``; a renamed workflow file is
matched through ``renamed`` (base path -> head path). Only the workflows in ``changed`` are
compared; every other workflow at the head is listed once, folded, as unchanged.

The comment starts with its marker (:data:`MARKER`, or :func:`marker_for` the Action's
``workflows`` input), a hidden HTML comment by which the Action finds its own comment again
and edits it in place. It is compact: a headline with the totals and the
biggest changes, everything else folded in ``<details>``. Runner, cost and advice fields are
assumptions of the sizing model, so they only appear folded under "Assumptions".

Rows follow :mod:`laser_ci.report.jobs`: no raw ``${{ }}`` (a part of a name only known at
run time is ``…``), workflows that only run when called appear under their callers, and the
instances of a job with at least :data:`~laser_ci.report.jobs.GROUP_MIN` of them are one
row (count, summed median, slowest instance) with the instances folded out below the
table. When the comment would pass GitHub's limit it is shortened step by step: instance
rows without links and costs per job group, then every job with several instances as one
row, and only then cut.

Every job row says whether its prediction was **warm** (the job's ``history_runs`` earlier runs
were part of the model's input: "warm (12 runs)") or **cold** (the workflow file alone); the
headline counts the warm jobs. When some of those runs failed, the cell says how many and
how long they ran before they failed ("warm (12 runs; 3 failed, after ~4m 10s)", the median
of the failed runs, from ``history_failures``): the prediction covers every run, and a
failing run usually ends at another time. Notes about the history (``result["history"]["notes"]``, e.g. a
token without ``actions: read``) are shown under the headline.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from laser_ci.report.fold import advice_key, folded_advice
from laser_ci.report.jobs import (
    GROUP_MIN,
    NEVER_RUNS_COST,
    Group,
    bills,
    events_words,
    failed_runs,
    grouped,
    hide_expressions,
    job_label,
    never_runs,
    run_time_words,
    visible_workflows,
)
from laser_ci.report.markdown import code as _code
from laser_ci.report.markdown import html as _html
from laser_ci.report.markdown import prose as _prose
from laser_ci.report.markdown import text as _md
from laser_ci.report.markdown import url_path
from laser_ci.report.render import format_duration

MARKER = "<!-- laser-ci:sticky-comment -->"


def marker_for(workflows: str) -> str:
    """The marker of the comment for the Action's ``workflows`` input: each laser-ci step
    of a pull request with its own input keeps its own comment (the default's is
    :data:`MARKER`)."""
    if workflows.strip("/") in ("", ".github/workflows"):
        return MARKER
    key = hashlib.sha256(workflows.encode("utf-8")).hexdigest()[:12]
    return f"<!-- laser-ci:sticky-comment workflows={key} -->"


@dataclass(frozen=True)
class Limit:
    """How long a text may be: ``count`` characters, or ``count`` bytes of its UTF-8;
    ``label`` names it and ``rest`` says where the full report is, in the note of a text
    shortened to fit."""

    count: int
    unit: Literal["chars", "bytes"]
    label: str
    rest: str

    def size(self, text: str) -> int:
        return len(text) if self.unit == "chars" else len(text.encode("utf-8"))

    def prefix(self, text: str, n: int) -> str:
        """The longest start of ``text`` of at most ``n`` units (whole characters)."""
        if self.unit == "chars":
            return text[:n]
        return text.encode("utf-8")[:n].decode("utf-8", "ignore")

    def cut_note(self) -> str:
        return f"\n\n> [!NOTE]\n> This report was cut to fit {self.label}. {self.rest}\n"

    def shortened_note(self, what: str) -> str:
        return f"> [!NOTE]\n> Shortened to fit {self.label}: {what}. {self.rest}\n"


# GitHub rejects an issue comment of more than 65,536 characters; the runner drops a step's
# whole $GITHUB_STEP_SUMMARY when it passes 1 MiB (1,048,576 bytes; 1,000,000 leaves room)
COMMENT_LIMIT = Limit(65_536, "chars", "GitHub's 65,536-character limit",
                      "The full report is in the job summary and in the Action's `json` output.")
SUMMARY_LIMIT = Limit(1_000_000, "bytes", "the job summary's 1 MiB limit",
                      "The full report is in the Action's `json` output.")
DEFAULT_TIMEOUT_MINUTES = 360  # GitHub's timeout when a job sets no timeout-minutes
BIGGEST_CHANGES = 3

Status = Literal["new", "removed", "changed", "unchanged"]

_SHORTENED = {
    1: "instance rows without links, costs per job",
    0: "the instances of each job with several of them are one row",
}


def is_shortened(text: str) -> bool:
    """True when a comment was shortened or cut to fit its limit: the full report needs a
    larger one (the job summary)."""
    return f"to fit {COMMENT_LIMIT.label}" in text


# --- diff ---------------------------------------------------------------------------------


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
        out.append(WorkflowDiff(path, status, h, b, _diff_jobs(h, b)))
    for path, h in sorted(head_wfs.items()):
        if path not in changed_head:
            jobs = [JobDiff(_job_name(j), "unchanged", head=j) for j in h.get("jobs") or ()]
            out.append(WorkflowDiff(path, "unchanged", h, None, jobs))
    return out


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


# --- totals -------------------------------------------------------------------------------


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


# --- rendering ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Context:
    """Where the result comes from; only used for links and the comparison line."""

    repository: str | None = None
    server_url: str = "https://github.com"
    head_sha: str | None = None
    base_sha: str | None = None
    marker: str = MARKER  # the first line of a PR comment (marker_for)

    def blob_url(self, path: str, line: int | None = None) -> str | None:
        if not (self.repository and self.head_sha):
            return None
        url = (f"{self.server_url.rstrip('/')}/{url_path(self.repository)}/blob/"
               f"{url_path(self.head_sha)}/{url_path(path)}")
        return f"{url}#L{line}" if line else url


def render_pr_comment(
    head: Mapping[str, Any],
    base: Mapping[str, Any] | None,
    changed: Iterable[str],
    *,
    renamed: Mapping[str, str] | None = None,
    context: Context | None = None,
    limit: Limit = COMMENT_LIMIT,
) -> str:
    """The sticky comment (and job summary) for a pull request, within ``limit``."""
    ctx = context or Context()
    diffs = diff_results(head, base, changed, renamed)
    to_base = {h: b for b, h in (renamed or {}).items() if b != h}
    changed_diffs = [d for d in diffs if d.status != "unchanged"]
    unchanged = [d for d in diffs if d.status == "unchanged"]

    head_totals = totals(head)
    # The base of the whole repository = unchanged workflows (as at head) + changed at base.
    base_wfs = [d.head for d in unchanged if d.head is not None]
    base_wfs += [d.base for d in changed_diffs if d.base is not None]
    base_totals = Totals.of(base_wfs)

    def render(detail: int) -> str:
        parts = [ctx.marker + "\n" + _headline_pr(head_totals, base_totals, changed_diffs, ctx, head)]
        if detail < 2:
            parts.append(limit.shortened_note(_SHORTENED[detail]))
        parts.append(_errors(head, ctx))
        parts.append(_history_notes(head))
        parts.extend(_workflow_block(d, ctx, compare=True, detail=detail,
                                     unreadable=_unreadable(d, head, base, renamed),
                                     renamed_from=to_base.get(d.path)
                                     if d.status == "changed" else None)
                     for d in changed_diffs)
        if unchanged:
            parts.append(_unchanged_block(unchanged, ctx, detail=detail))
        parts.append(_assumptions([d.head for d in diffs if d.head is not None], detail=detail))
        parts.append(_footer(head))
        return "\n".join(p for p in parts if p)

    return _fit_detail(render, limit)


def _fit_detail(render: Any, limit: Limit) -> str:
    """The most detailed rendering that fits ``limit``; cut (with a note) as a last resort."""
    for detail in (2, 1, 0):
        text = render(detail)
        if limit.size(text) <= limit.count:
            return text
    return _fit([text], limit)


def render_summary(
    result: Mapping[str, Any],
    *,
    context: Context | None = None,
    limit: Limit = SUMMARY_LIMIT,
) -> str:
    """The job summary for events without a base to compare with (push, dispatch, ...)."""
    ctx = context or Context()
    wfs = visible_workflows(result)
    t = totals(result)
    head = (
        "### ⏱️ laser-ci: predicted CI runtime\n\n"
        f"**{_plural(t.workflows, 'workflow')}, {_plural(t.jobs, 'job')}:** "
        f"billable **{_dur(t.billable_s)}** · longest critical path "
        f"**{_dur(t.critical_path_s)}**"
    )
    if ctx.head_sha:
        head += f" · at `{ctx.head_sha[:7]}`"
    warm = _warm_line(result)
    if warm:
        head += "\n\n" + warm
    def render(detail: int) -> str:
        parts = [head + "\n"]
        if detail < 2:
            parts.append(limit.shortened_note(_SHORTENED[detail]))
        parts.append(_errors(result, ctx))
        parts.append(_history_notes(result))
        for wf in wfs:
            d = WorkflowDiff(
                str(wf.get("path")),
                "unchanged",
                wf,
                None,
                [JobDiff(_job_name(j), "unchanged", head=j) for j in wf.get("jobs") or ()],
            )
            parts.append(_workflow_block(d, ctx, compare=False, open_=True, detail=detail))
        parts.append(_assumptions(wfs, detail=detail))
        parts.append(_footer(result))
        return "\n".join(p for p in parts if p)

    return _fit_detail(render, limit)


def over_timeout(job: Mapping[str, Any]) -> tuple[float, float] | None:
    """``(p90 minutes, timeout minutes)`` when the job's p90 exceeds its timeout, else None.

    A job without ``timeout-minutes`` gets GitHub's default of 360. A timeout that is an
    expression (not a number) is not checked.
    """
    p90 = _num((job.get("runtime_s") or {}).get("p90"))
    if p90 is None:
        return None
    raw = job.get("timeout_minutes")
    timeout = DEFAULT_TIMEOUT_MINUTES if raw is None else _num(raw)
    if timeout is None or timeout <= 0:
        return None
    return (p90 / 60.0, timeout) if p90 > timeout * 60.0 else None


# --- pieces -------------------------------------------------------------------------------


def _headline_pr(
    head: Totals, base: Totals, changed: Sequence[WorkflowDiff], ctx: Context,
    result: Mapping[str, Any] | None = None,
) -> str:
    lines = ["### ⏱️ laser-ci: predicted CI runtime", ""]
    n = len(changed)
    n_all = head.workflows + sum(1 for d in changed if d.status == "removed")
    scope = (
        f"**{n} of {_plural(n_all, 'workflow')} changed**"
        if n
        else f"**No workflow changed** ({_plural(head.workflows, 'workflow')})"
    )
    lines.append(
        f"{scope} · billable **{_dur(head.billable_s)}** "
        f"({_delta(head.billable_s - base.billable_s)}) · longest critical path "
        f"**{_dur(head.critical_path_s)}** ({_delta(head.critical_path_s - base.critical_path_s)})"
    )
    biggest = _biggest_changes(changed)
    if biggest:
        lines.append("")
        lines.append("Biggest changes: " + " · ".join(biggest))
    elif n:
        lines.append("")
        lines.append("No predicted job runtime changed.")
    warm = _warm_line(result or {})
    if warm:
        lines.append("")
        lines.append(warm)
    if ctx.head_sha and ctx.base_sha:
        lines.append("")
        lines.append(
            f"<sub>Head `{ctx.head_sha[:7]}` compared with base `{ctx.base_sha[:7]}`. "
            "Medians; bands in the details are p10–p90.</sub>"
        )
    return "\n".join(lines) + "\n"


def _biggest_changes(changed: Sequence[WorkflowDiff]) -> list[str]:
    ranked: list[tuple[float, str]] = []
    for wf in changed:
        for job in _diff_groups(wf.jobs, 2):
            if isinstance(job, list):  # one row in the table: one change, its instances' sum
                ranked += _group_change(wf, job)
                continue
            d = job.delta_s
            if d is None or abs(d) < 0.5:  # no change, or a new or removed job that never runs
                continue
            j = job.head if job.head is not None else job.base or {}
            label = f"**{_md(wf.name)} / {_md(job_label(j) if j else job.name)}**"
            if job.status == "new":
                text = f"{label} new job ({_dur(d)})"
            elif job.status == "removed":
                text = f"{label} removed job (was {_dur(-d)})"
            else:
                text = f"{label} {_delta(d)}"
            ranked.append((abs(d), text))
    ranked.sort(key=lambda x: -x[0])
    return [text for _, text in ranked[:BIGGEST_CHANGES]]


def _group_change(wf: WorkflowDiff, members: Sequence[JobDiff]) -> list[tuple[float, str]]:
    """The change of a grouped job (:func:`_biggest_changes`), as its table row says it."""
    deltas = [d for m in members if (d := m.delta_s) is not None]
    if not deltas or abs(sum(deltas)) < 0.5:
        return []
    d, n = sum(deltas), _plural(len(members), "instance")
    label = f"**{_md(wf.name)} / {_md(_group_label(members))}**"
    if all(m.status == "new" for m in members):
        return [(abs(d), f"{label} new job, {n} (Σ {_dur(d)})")]
    if all(m.status == "removed" for m in members):
        return [(abs(d), f"{label} removed job, {n} (was Σ {_dur(-d)})")]
    at_head = _plural(sum(1 for m in members if m.head is not None), "instance")
    return [(abs(d), f"{label} ({at_head}) {_delta(d)}")]


def _diff_groups(jobs: Sequence[JobDiff], detail: int) -> list[JobDiff | list[JobDiff]]:
    """The jobs in order, the instances of a job with many of them as one list (with
    ``detail`` 0: every job with more than one instance)."""
    by_key = {id(j): (j.head if j.head is not None else j.base or {}) for j in jobs}
    keyed = {id(j): str(by_key[id(j)].get("id") or j.name) for j in jobs}
    groups = grouped([{"id": keyed[id(j)], "job": j} for j in jobs],
                     GROUP_MIN if detail > 0 else 2)
    return [[m["job"] for m in g.jobs] if isinstance(g, Group) else g["job"] for g in groups]


def _group_label(members: Sequence[JobDiff]) -> str:
    first = members[0].head if members[0].head is not None else members[0].base or {}
    return hide_expressions(str(first.get("group") or first.get("name") or "?"))


def _group_history(members: Sequence[JobDiff]) -> str:
    heads = [m.head for m in members if m.head is not None]
    warm = sum(1 for j in heads if _history_runs(j) is not None)
    if not heads:
        return "–"
    if warm == len(heads):
        return f"warm ({warm})"
    return "cold" if warm == 0 else f"{warm} warm, {len(heads) - warm} cold"


def _group_row(members: Sequence[JobDiff], *, compare: bool, folded: bool) -> list[str]:
    heads = [m.head for m in members if m.head is not None]
    running = [j for j in heads if bills(j)]  # as the billable time counts
    total = sum(x for j in running if (x := _p50(j)) is not None)
    slowest = max((_p50(j) or 0.0 for j in running), default=None)
    new = sum(1 for m in members if m.status == "new")
    removed = sum(1 for m in members if m.status == "removed")
    extra = ", ".join(x for x in (f"{new} new" if new else "", f"{removed} removed"
                                                              if removed else "") if x)
    # every instance gone: "32 instances removed", not "0 instances (32 removed)"
    count = (f"{_plural(removed, 'instance')} removed" if not heads
             else _plural(len(heads), "instance") + (f" ({extra})" if extra else ""))
    name = (f"**{_md(_group_label(members))}** · {count}" + (" (below)" if folded else ""))
    row = [name, f"Σ {_dur(total) if heads else '–'}",
           f"slowest {_dur(slowest)}" if heads else "–"]
    if compare:
        base = sum(x for m in members if m.base is not None and bills(m.base)
                   and (x := _p50(m.base)) is not None)
        row.append(_delta(total - base) if any(m.base is not None for m in members)
                   else "new job")
    row.append(_group_history(members))
    return row


def _job_row(job: JobDiff, ctx: Context, path: str, *, compare: bool, links: bool
             ) -> tuple[list[str], bool]:
    j = job.head if job.head is not None else job.base or {}
    name = _job_cell(job, ctx if links else Context(), path)
    flagged = job.head is not None and over_timeout(job.head) is not None
    if flagged:
        name += " ⚠️"
    if job.status == "removed":  # one that never ran took no time: no "was"
        was = "" if never_runs(j) else f" (was {_dur(_p50(j))})"
        return [f"~~{name}~~", "–", "–", f"removed job{was}", "–"], flagged
    rt = j.get("runtime_s") or {}
    row = [name, _dur(_num(rt.get("p50"))), _band(rt)]
    if compare:
        row.append("new job" if job.status == "new" else _delta(job.delta_s))
    row.append(_history_cell(j))
    return row, flagged


def _legend(jobs: Sequence[Mapping[str, Any]]) -> list[str]:
    """In words, what of the shown jobs only the run knows (new results only)."""
    seen: dict[str, str] = {}
    for job in jobs:
        words = "; ".join(w for w in (run_time_words(job), events_words(job)) if w)
        if words:
            seen.setdefault(words, job_label(job))
    # the words are ours; the references in them are code spans (see jobs.code)
    return [f"- **{_md(label)}**: {words}" for words, label in seen.items()]


def _unreadable(d: WorkflowDiff, head: Mapping[str, Any], base: Mapping[str, Any] | None,
                renamed: Mapping[str, str] | None) -> str | None:
    """``"base"`` or ``"head"`` when the workflow is missing at that end because its file
    could not be read there (an error names it), not because the PR adds or removes it."""
    if d.status == "new":
        path = {h: b for b, h in (renamed or {}).items()}.get(d.path, d.path)
        end, result = "base", base or {}
    elif d.status == "removed":
        path, end, result = d.path, "head", head
    else:
        return None
    paths = {str(e.get("path")) for e in result.get("errors") or () if isinstance(e, Mapping)}
    return end if path in paths else None


def _workflow_block(d: WorkflowDiff, ctx: Context, *, compare: bool, open_: bool = False,
                    detail: int = 2, unreadable: str | None = None,
                    renamed_from: str | None = None) -> str:
    wf = d.head if d.head is not None else d.base or {}
    title = f"<b>{_html(d.name)}</b> <code>{_html(d.path)}</code>"
    if renamed_from:
        title += f" (renamed from <code>{_html(renamed_from)}</code>)"
    if compare and unreadable:
        title += f" (unreadable at {unreadable})"
    elif compare and d.status == "new":
        title += " (new workflow)"
    elif compare and d.status == "removed":
        title += " (removed workflow)"
    cp, bill = _num(wf.get("critical_path_s")), _num(wf.get("billable_s"))
    was = " was" if d.status == "removed" else ""
    stats = f"critical path{was} {_dur(cp)}"
    if compare and d.status == "changed":
        stats += f" ({_delta(d.delta('critical_path_s'))})"
    stats += f", billable{was} {_dur(bill)}"
    if compare and d.status == "changed":
        stats += f" ({_delta(d.delta('billable_s'))})"
    out = [f"<details{' open' if open_ else ''}><summary>{title}: {stats}</summary>", ""]
    header = (["| Job | Median | p10–p90 | vs base | History |", "|---|--:|--:|--:|---|"]
              if compare else ["| Job | Median | p10–p90 | History |", "|---|--:|--:|---|"])
    out += header
    flagged = False
    folded: list[list[JobDiff]] = []
    for entry in _diff_groups(d.jobs, detail):
        if isinstance(entry, list):
            if detail > 0:
                folded.append(entry)
            out.append("| " + " | ".join(_group_row(entry, compare=compare,
                                                     folded=detail > 0)) + " |")
            flagged = flagged or any(m.head is not None and over_timeout(m.head) for m in entry)
            continue
        row, warn = _job_row(entry, ctx, d.path, compare=compare, links=True)
        flagged = flagged or warn
        out.append("| " + " | ".join(row) + " |")
    if not d.jobs:
        out.append("| *(no jobs)* | | | |" + (" |" if compare else ""))
    for members in folded:
        out += ["", f"<details><summary>{_html(_group_label(members))}: "
                    f"{_plural(len(members), 'instance')}</summary>", "", *header]
        for job in members:
            row, _warn = _job_row(job, ctx, d.path, compare=compare, links=detail > 1)
            out.append("| " + " | ".join(row) + " |")
        out += ["", "</details>"]
    legend = _legend([j.head for j in d.jobs if j.head is not None])
    if legend:
        out += ["", *legend]
    if flagged:
        out.append("")
        out.append("⚠️ the p90 runtime exceeds the job's `timeout-minutes` (default 360).")
    out += ["", "</details>"]
    return "\n".join(out) + "\n"


def _unchanged_block(diffs: Sequence[WorkflowDiff], ctx: Context, detail: int = 2) -> str:
    n_jobs = sum(len(d.jobs) for d in diffs)
    out = [
        f"<details><summary>Unchanged workflows: {_plural(len(diffs), 'workflow')}, "
        f"{_plural(n_jobs, 'job')}</summary>",
        "",
        "| Workflow | Job | Median | p10–p90 | History |",
        "|---|---|--:|--:|---|",
    ]
    folded: list[tuple[WorkflowDiff, list[JobDiff]]] = []
    for d in diffs:
        wf = d.head or {}
        first = (
            f"**{_md(d.name)}** · critical path {_dur(_num(wf.get('critical_path_s')))}, "
            f"billable {_dur(_num(wf.get('billable_s')))}"
        )
        if not d.jobs:
            out.append(f"| {first} | *(no jobs)* | | | |")
        for i, entry in enumerate(_diff_groups(d.jobs, detail)):
            lead = first if i == 0 else ""
            if isinstance(entry, list):
                if detail > 0:
                    folded.append((d, entry))
                name, total, slowest, history = _group_row(entry, compare=False,
                                                           folded=detail > 0)
                out.append(f"| {lead} | {name} | {total} | {slowest} | {history} |")
                continue
            row, _warn = _job_row(entry, ctx, d.path, compare=False, links=True)
            out.append(f"| {lead} | " + " | ".join(row) + " |")
    out.append("")
    for d, members in folded:
        out += [f"<details><summary>{_html(d.name)} / {_html(_group_label(members))}: "
                f"{_plural(len(members), 'instance')}</summary>", "",
                "| Job | Median | p10–p90 | History |", "|---|--:|--:|---|"]
        for job in members:
            row, _warn = _job_row(job, ctx, d.path, compare=False, links=detail > 1)
            out.append("| " + " | ".join(row) + " |")
        out += ["", "</details>", ""]
    out += ["</details>", ""]
    return "\n".join(out)


def _assumptions(workflows: Sequence[Mapping[str, Any]], detail: int = 2) -> str:
    rows: list[str] = []
    advice: list[str] = []
    costs: list[str] = []
    for wf in workflows:
        wname = _md(str(wf.get("name") or wf.get("path")))
        jobs = list(wf.get("jobs") or ())
        entries = grouped(jobs, 2) if detail < 2 else jobs
        for entry in entries:
            members = entry.jobs if isinstance(entry, Group) else [entry]
            first = members[0]
            if isinstance(entry, Group):
                label = f"{wname} / {_md(entry.label)} ({_plural(entry.count, 'instance')})"
                runners = {_runner_cell(j) for j in members}
                runner_cell = runners.pop() if len(runners) == 1 else f"{len(runners)} runners"
                rows.append(f"| {label} | {runner_cell} | {entry.cost_words(_usd) or '–'} |")
            else:
                label = f"{wname} / {_md(job_label(first))}"
                runner = first.get("runner")
                cost = _num(first.get("cost_usd"))
                if runner or cost is not None:
                    shown = NEVER_RUNS_COST if never_runs(first) else _usd(cost)
                    rows.append(f"| {label} | {_runner_cell(first)} | {shown} |")
        # the advice of a job with several instances is folded over them, whatever the rows
        for entry in grouped(jobs, 2):
            members = entry.jobs if isinstance(entry, Group) else [entry]
            if isinstance(entry, Group):
                label = f"{wname} / {_md(entry.label)} ({_plural(entry.count, 'instance')})"
            else:
                label = f"{wname} / {_md(job_label(entry))}"
            # the same advice on several instances: (kind, where it goes, jobs and messages)
            said: dict[str, tuple[str, int, list[tuple[str, str]]]] = {}
            for job in members:
                for a in job.get("advice") or ():
                    if not (isinstance(a, Mapping) and a.get("message")):
                        continue
                    kind = f"`{a['kind']}` " if a.get("kind") else ""
                    if isinstance(entry, Group):
                        key = advice_key(a)
                        if key not in said:
                            said[key] = (kind, len(advice), [])
                            advice.append("")  # filled in below
                        said[key][2].append((job_label(job), str(a["message"])))
                    else:
                        advice.append(f"- {label}: {kind}{_prose(str(a['message']))}")
            for kind, at, items in said.values():
                # true of all of them: a number that varies is its range over the jobs
                name, message = folded_advice(items)
                advice[at] = (f"- {label}: {kind}{len(items)} of them, e.g. {_md(name)}: "
                              f"{_prose(message)}")
        wcost = _num(wf.get("cost_usd"))
        if wcost is not None:
            costs.append(f"{wname} {_usd(wcost)}")
    if not (rows or advice or costs):
        return ""
    out = [
        "<details><summary>Assumptions: runners, cost and advice</summary>",
        "",
        "Runner sizes and prices are assumed from `runs-on` and public list prices; "
        "they are estimates, not billing data.",
        "",
    ]
    if rows:
        out += ["| Job | Assumed runner | Cost (median) |", "|---|---|--:|", *rows, ""]
    if costs:
        out += ["Per workflow run: " + " · ".join(costs), ""]
    if advice:
        out += ["**Advice**", "", *advice, ""]
    out += ["</details>", ""]
    return "\n".join(out)


def _errors(result: Mapping[str, Any], ctx: Context) -> str:
    errors = list(result.get("errors") or ())
    if not errors:
        return ""
    out = [f"> [!WARNING]\n> {_plural(len(errors), 'problem')} reading the workflows:"]
    for e in errors:
        where = str(e.get("path") or "?")
        if e.get("line"):
            where += f":{e['line']}"
        out.append(f"> - {_code(where)}: {_prose(str(e.get('message') or ''))}")
    return "\n".join(out) + "\n"


def _footer(result: Mapping[str, Any]) -> str:
    predictor = result.get("predictor")
    by = f" (predictor `{predictor}`)" if predictor else ""
    source = (
        "workflow files and, for warm jobs, their earlier runs"
        if _warm_count(result)[0]
        else "workflow files alone"
    )
    return (
        f"<sub>Predicted by laser-ci{by} from the {source}, before CI runs. "
        "Bands are p10–p90 predictions, not measurements.</sub>\n"
    )


def _history_runs(job: Mapping[str, Any]) -> int | None:
    n = job.get("history_runs")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def _history_cell(job: Mapping[str, Any]) -> str:
    """``warm (12 runs)`` when the prediction saw earlier runs of the job, else ``cold``."""
    n = _history_runs(job)
    if n is not None and job.get("history_source") == "siblings":
        return f"warm (its siblings' latest {_plural(n, 'run')})"  # new since its latest runs
    return "cold" if n is None else f"warm ({_plural(n, 'run')}{failed_words(job, n)})"


def failed_words(job: Mapping[str, Any], runs: int) -> str:
    """``; 3 failed, after ~4m 10s`` (``3 of 9 failed`` when only 9 of the ``runs`` earlier
    runs have a known end) when some of the job's earlier runs failed, else empty."""
    f = failed_runs(job)
    if f is None:
        return ""
    failed, known, median = f
    of = "" if known == runs else f" of {known}"
    return f"; {failed}{of} failed, after ~{_dur(median)}"


def _warm_count(result: Mapping[str, Any]) -> tuple[int, int]:
    """(warm jobs, all jobs) over the workflows of one estimate result."""
    jobs = [j for wf in visible_workflows(result) for j in wf.get("jobs") or ()]
    return sum(1 for j in jobs if _history_runs(j) is not None), len(jobs)


def _warm_line(result: Mapping[str, Any]) -> str:
    warm, n = _warm_count(result)
    if not n:
        return ""
    history = result.get("history")
    branch = history.get("branch") if isinstance(history, Mapping) else None
    on = f" on {_code(str(branch))}" if branch else ""
    if warm == 0:
        return f"History: all {_plural(n, 'job')} **cold** (predicted from the workflow files alone)"
    return (
        f"History: **{warm} of {_plural(n, 'job')} warm** (predicted with their earlier "
        f"runs{on}), {n - warm} cold"
    )


def _history_notes(result: Mapping[str, Any]) -> str:
    history = result.get("history")
    notes = history.get("notes") if isinstance(history, Mapping) else None
    notes = [str(x) for x in notes or () if x]
    if not notes:
        return ""
    return "> [!NOTE]\n" + "\n".join(f"> {n}" if len(notes) == 1 else f"> - {n}" for n in notes) + "\n"


def _fit(parts: Sequence[str], limit: Limit) -> str:
    """Joins the parts; cuts at a line boundary with a note when over ``limit``."""
    text = "\n".join(parts)
    if limit.size(text) <= limit.count:
        return text
    note = limit.cut_note()
    budget = limit.count - limit.size(note) - 64  # room for closing tags
    cut = limit.prefix(text, budget)
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
    open_details = cut.count("<details") - cut.count("</details>")
    cut += "\n</details>\n" * max(open_details, 0)
    return cut + note


# --- small helpers ------------------------------------------------------------------------


def _job_cell(job: JobDiff, ctx: Context, path: str) -> str:
    j = job.head if job.head is not None else job.base or {}
    name = _md(job_label(j) if j else job.name)
    line = j.get("line") if job.head is not None else None
    # the line is in the file that defines the job: a reusable workflow's for its jobs
    where = str(j.get("called_workflow") or path)
    url = ctx.blob_url(where, line if isinstance(line, int) else None)
    if url and job.head is not None:
        name = f"[{name}]({url})"
    if j.get("dynamic_matrix") and not j.get("expanded"):
        name += " *(dynamic matrix)*"
    return name


def _job_name(job: Mapping[str, Any]) -> str:
    return str(job.get("name") or job.get("id") or "?")


def _runner_cell(job: Mapping[str, Any]) -> str:
    """The runner a job is assumed on; for a job that calls a remote reusable workflow,
    that workflow (its jobs, unread, pick their runners)."""
    if job.get("remote_workflow") and job.get("runs_on") is None:  # else its runs' labels
        return "reusable " + _code(str(job["remote_workflow"]), table=True)
    return _runner_text(job.get("runner"))


def _runner_text(runner: Any) -> str:
    if not runner:
        return "–"
    if not isinstance(runner, Mapping):
        return _md(str(runner))
    label = next(
        (str(runner[k]) for k in ("label", "name", "sku", "size", "os") if runner.get(k)), ""
    )
    specs = []
    for keys, unit in ((("vcpus", "cpus", "cpu"), "vCPU"), (("ram_gb", "memory_gb"), "GB RAM")):
        val = next((runner[k] for k in keys if runner.get(k) is not None), None)
        if val is not None:
            specs.append(f"{val:g} {unit}" if isinstance(val, (int, float)) else f"{val} {unit}")
    text = _md(label)
    if specs:
        text += (" " if text else "") + f"({', '.join(specs)})"
    if runner.get("guessed"):
        text += " *(guessed)*"
    return text or "–"


def _p50(job: Mapping[str, Any] | None) -> float | None:
    if job is None:
        return None
    return _num((job.get("runtime_s") or {}).get("p50"))


def _billed_p50(job: Mapping[str, Any] | None) -> float | None:
    """The job's median as the billable time counts it: 0 for one that never runs."""
    if job is not None and not bills(job):
        return 0.0
    return _p50(job)


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, str):
        try:
            v = float(x)
        except ValueError:
            return None
        return v if math.isfinite(v) else None
    return None


def _band(rt: Mapping[str, Any]) -> str:
    lo, hi = _num(rt.get("p10")), _num(rt.get("p90"))
    if lo is None or hi is None:
        return "–"
    return f"{_dur(lo)} – {_dur(hi)}"


def _dur(seconds: float | None) -> str:
    return "–" if seconds is None else format_duration(seconds)


def _delta(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if abs(seconds) < 0.5:
        return "no change"
    return ("+" if seconds > 0 else "-") + format_duration(abs(seconds))


def _usd(x: float | None) -> str:
    return "–" if x is None else f"${x:,.3f}" if x < 1 else f"${x:,.2f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"

