"""The tables of the comment and job summary: one folded block per workflow
(:func:`workflow_block`, with "vs base" when comparing) and one for the unchanged workflows
(:func:`unchanged_block`). The instances of a job with at least
:data:`~laser_ci.report.jobs.GROUP_MIN` of them are one row (count, summed median, slowest
instance) with the instances folded out below the table; a job whose p90 passes its timeout
is flagged (:func:`over_timeout`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from laser_ci.report.cells import band as _band
from laser_ci.report.cells import delta as _delta
from laser_ci.report.cells import dur as _dur
from laser_ci.report.cells import evidence_cell as _evidence_cell
from laser_ci.report.cells import history_cell as _history_cell
from laser_ci.report.cells import num as _num
from laser_ci.report.cells import p50 as _p50
from laser_ci.report.cells import plural as _plural
from laser_ci.report.context import Context
from laser_ci.report.diff import JobDiff, WorkflowDiff
from laser_ci.report.jobs import (
    GROUP_MIN,
    Group,
    bills,
    events_words,
    grouped,
    job_label,
    never_runs,
    run_time_words,
    shared_label,
)
from laser_ci.report.jobs import history_runs as _history_runs
from laser_ci.report.markdown import html as _html
from laser_ci.report.markdown import text as _md

DEFAULT_TIMEOUT_MINUTES = 360  # GitHub's timeout when a job sets no timeout-minutes


def over_timeout(job: Mapping[str, Any]) -> tuple[float, float] | None:
    """``(p90 minutes, timeout minutes)`` when the job's p90 exceeds its timeout, else None.

    A job without ``timeout-minutes`` gets GitHub's default of 360. A timeout that is an
    expression (not a number) is not checked, nor is a cold guess (``history_source`` null:
    its advice says it cannot tell yet, :func:`laser_ci.sizing.advice.advise`).
    """
    if "history_source" in job and job["history_source"] is None:
        return None
    p90 = _num((job.get("runtime_s") or {}).get("p90"))
    if p90 is None:
        return None
    raw = job.get("timeout_minutes")
    timeout = DEFAULT_TIMEOUT_MINUTES if raw is None else _num(raw)
    if timeout is None or timeout <= 0:
        return None
    return (p90 / 60.0, timeout) if p90 > timeout * 60.0 else None


def timeout_footnote(flagged: Sequence[Mapping[str, Any]]) -> str:
    """The ⚠️ footnote, in the words of the flagged jobs: their own ``timeout-minutes``, or
    GitHub's default where they set none."""
    own = [j for j in flagged if j.get("timeout_minutes") is not None]
    if own and len(own) == len(flagged):
        return "⚠️ the p90 runtime exceeds the job's `timeout-minutes`."
    if not own:
        return (f"⚠️ the p90 runtime exceeds GitHub's default timeout ({DEFAULT_TIMEOUT_MINUTES} "
                "minutes; the job sets no `timeout-minutes`).")
    return (f"⚠️ the p90 runtime exceeds the job's `timeout-minutes` (GitHub's default of "
            f"{DEFAULT_TIMEOUT_MINUTES} where it sets none).")


def diff_groups(jobs: Sequence[JobDiff], detail: int) -> list[JobDiff | list[JobDiff]]:
    """The jobs in order, the instances of a job with many of them as one list (with
    ``detail`` 0: every job with more than one instance)."""
    by_key = {id(j): (j.head if j.head is not None else j.base or {}) for j in jobs}
    keyed = {id(j): str(by_key[id(j)].get("id") or j.name) for j in jobs}
    groups = grouped([{"id": keyed[id(j)], "job": j} for j in jobs],
                     GROUP_MIN if detail > 0 else 2)
    return [[m["job"] for m in g.jobs] if isinstance(g, Group) else g["job"] for g in groups]


def group_label(members: Sequence[JobDiff]) -> str:
    first = members[0].head if members[0].head is not None else members[0].base or {}
    return shared_label(first)


def _group_history(members: Sequence[JobDiff]) -> str:
    """``warm (7)``, ``cold``, or how many are warm, new (predicted from the rest of the
    repository's runs: siblings, workflow, repository) and cold."""
    heads = [m.head for m in members if m.head is not None]
    if not heads:
        return "–"
    warm = sum(1 for j in heads if _history_runs(j) is not None)
    new = sum(1 for j in heads if _evidence_cell(j) is not None)
    if warm == len(heads):
        return f"warm ({warm})"
    if warm == 0 and new == 0:
        return "cold"
    cold = len(heads) - warm - new
    return ", ".join(x for x in (f"{warm} warm" if warm else "",
                                 f"{new} new from other runs" if new else "",
                                 f"{cold} cold" if cold else "") if x)


def group_count(members: Sequence[JobDiff]) -> str:
    """``7 instances (2 new, 1 removed)``: the instances at head, and what the PR added and
    removed; the row and its folded list say the same."""
    heads = [m for m in members if m.head is not None]
    new = sum(1 for m in members if m.status == "new")
    removed = sum(1 for m in members if m.status == "removed")
    extra = ", ".join(x for x in (f"{new} new" if new else "", f"{removed} removed"
                                                              if removed else "") if x)
    # every instance gone: "32 instances removed", not "0 instances (32 removed)"
    if not heads:
        return f"{_plural(removed, 'instance')} removed"
    return _plural(len(heads), "instance") + (f" ({extra})" if extra else "")


def group_row(members: Sequence[JobDiff], *, compare: bool, folded: bool) -> list[str]:
    heads = [m.head for m in members if m.head is not None]
    running = [j for j in heads if bills(j)]  # as the billable time counts
    total = sum(x for j in running if (x := _p50(j)) is not None)
    slowest = max((_p50(j) or 0.0 for j in running), default=None)
    count = group_count(members)
    name = (f"**{_md(group_label(members))}** · {count}" + (" (below)" if folded else ""))
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


def _legend(jobs: Sequence[Mapping[str, Any]]) -> list[str]:
    """In words, what of the shown jobs only the run knows (new results only)."""
    seen: dict[str, str] = {}
    for job in jobs:
        words = "; ".join(w for w in (run_time_words(job), events_words(job)) if w)
        if words:
            seen.setdefault(words, job_label(job))
    # the words are ours; the references in them are code spans (see jobs.code)
    return [f"- **{_md(label)}**: {words}" for words, label in seen.items()]


def workflow_block(d: WorkflowDiff, ctx: Context, *, compare: bool, open_: bool = False,
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
    stats += f", runner time{was} {_dur(bill)}"
    if compare and d.status == "changed":
        stats += f" ({_delta(d.delta('billable_s'))})"
    out = [f"<details{' open' if open_ else ''}><summary>{title}: {stats}</summary>", ""]
    header = (["| Job | Median | p10–p90 | vs base | History |", "|---|--:|--:|--:|---|"]
              if compare else ["| Job | Median | p10–p90 | History |", "|---|--:|--:|---|"])
    out += header
    flagged = False
    folded: list[list[JobDiff]] = []
    for entry in diff_groups(d.jobs, detail):
        if isinstance(entry, list):
            if detail > 0:
                folded.append(entry)
            out.append("| " + " | ".join(group_row(entry, compare=compare,
                                                     folded=detail > 0)) + " |")
            flagged = flagged or any(m.head is not None and over_timeout(m.head) for m in entry)
            continue
        row, warn = _job_row(entry, ctx, d.path, compare=compare, links=True)
        flagged = flagged or warn
        out.append("| " + " | ".join(row) + " |")
    if not d.jobs:
        out.append("| *(no jobs)* | | | |" + (" |" if compare else ""))
    for members in folded:
        out += ["", f"<details><summary>{_html(group_label(members))}: "
                    f"{group_count(members)}</summary>", "", *header]
        for job in members:
            row, _warn = _job_row(job, ctx, d.path, compare=compare, links=detail > 1)
            out.append("| " + " | ".join(row) + " |")
        out += ["", "</details>"]
    legend = _legend([j.head for j in d.jobs if j.head is not None])
    if legend:
        out += ["", *legend]
    if flagged:
        out.append("")
        out.append(timeout_footnote([j.head for j in d.jobs if j.head is not None
                                     and over_timeout(j.head) is not None]))
    out += ["", "</details>"]
    return "\n".join(out) + "\n"


def unchanged_block(diffs: Sequence[WorkflowDiff], ctx: Context, detail: int = 2) -> str:
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
            f"runner time {_dur(_num(wf.get('billable_s')))}"
        )
        if not d.jobs:
            out.append(f"| {first} | *(no jobs)* | | | |")
        for i, entry in enumerate(diff_groups(d.jobs, detail)):
            lead = first if i == 0 else ""
            if isinstance(entry, list):
                if detail > 0:
                    folded.append((d, entry))
                name, total, slowest, history = group_row(entry, compare=False,
                                                           folded=detail > 0)
                out.append(f"| {lead} | {name} | {total} | {slowest} | {history} |")
                continue
            row, _warn = _job_row(entry, ctx, d.path, compare=False, links=True)
            out.append(f"| {lead} | " + " | ".join(row) + " |")
    out.append("")
    for d, members in folded:
        out += [f"<details><summary>{_html(d.name)} / {_html(group_label(members))}: "
                f"{group_count(members)}</summary>", "",
                "| Job | Median | p10–p90 | History |", "|---|--:|--:|---|"]
        for job in members:
            row, _warn = _job_row(job, ctx, d.path, compare=False, links=detail > 1)
            out.append("| " + " | ".join(row) + " |")
        out += ["", "</details>", ""]
    out += ["</details>", ""]
    return "\n".join(out)
