"""Markdown for the Action: the sticky PR comment and the job summary.

Pure functions over the JSON results of :func:`laser_ci.estimate.estimate_files` (the
``{"predictor", "workflows": [...], "errors": [...]}`` dict); no I/O, no GitHub calls.

A pull request is reported as a diff of the estimate at its head against the estimate at its
base (:mod:`laser_ci.report.diff`); every workflow the PR does not change is listed once,
folded, as unchanged. The comment starts with its marker (:mod:`laser_ci.report.context`),
then a headline with the totals and the biggest changes; the tables
(:mod:`laser_ci.report.tables`) and the assumed runners, costs and advice
(:mod:`laser_ci.report.assumptions`) are folded in ``<details>``. When the comment would pass
GitHub's limit it is shortened step by step (:mod:`laser_ci.report.limits`).

Every job row says whether its prediction was **warm** (the job's ``history_runs`` earlier
runs were part of the model's input) or **cold** (the workflow file alone); the headline
counts the warm jobs. Notes about the history (``result["history"]["notes"]``, e.g. a token
without ``actions: read``) are shown under the headline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from laser_ci.predictors.learned import model_words
from laser_ci.report.assumptions import assumptions as _assumptions
from laser_ci.report.cells import all_free, failed_words
from laser_ci.report.cells import delta as _delta
from laser_ci.report.cells import dur as _dur
from laser_ci.report.cells import job_name as _job_name
from laser_ci.report.cells import num as _num
from laser_ci.report.cells import plural as _plural
from laser_ci.report.cells import usd as _usd
from laser_ci.report.context import MARKER, Context, marker_for
from laser_ci.report.diff import JobDiff, Totals, WorkflowDiff, diff_results, totals
from laser_ci.report.jobs import Evidence, evidence_counts, job_label, visible_workflows
from laser_ci.report.limits import COMMENT_LIMIT, SHORTENED, SUMMARY_LIMIT, Limit, is_shortened
from laser_ci.report.limits import fit_detail as _fit_detail
from laser_ci.report.markdown import code as _code
from laser_ci.report.markdown import prose as _prose
from laser_ci.report.markdown import text as _md
from laser_ci.report.tables import DEFAULT_TIMEOUT_MINUTES, over_timeout
from laser_ci.report.tables import diff_groups as _diff_groups
from laser_ci.report.tables import group_label as _group_label
from laser_ci.report.tables import unchanged_block as _unchanged_block
from laser_ci.report.tables import workflow_block as _workflow_block
from laser_ci.report.todo import worth_doing

# what callers import from here (the Action, the runner's log, the tests)
__all__ = [
    "BIGGEST_CHANGES", "COMMENT_LIMIT", "DEFAULT_TIMEOUT_MINUTES", "MARKER", "SUMMARY_LIMIT",
    "Context", "JobDiff", "Limit", "Totals", "WorkflowDiff", "diff_results", "failed_words",
    "is_shortened", "marker_for", "over_timeout", "render_pr_comment", "render_summary",
    "totals",
]

BIGGEST_CHANGES = 3


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

    # as the tables show them: a job written the same at both ends at its base prediction
    head_totals = Totals.of(d.head for d in diffs if d.head is not None)
    # The base of the whole repository = unchanged workflows (as at head) + changed at base.
    base_wfs = [d.head for d in unchanged if d.head is not None]
    base_wfs += [d.base for d in changed_diffs if d.base is not None]
    base_totals = Totals.of(base_wfs)

    def render(detail: int) -> str:
        parts = [ctx.marker + "\n" + _headline_pr(head_totals, base_totals, changed_diffs, ctx, head,
                                                       diffs)]
        if detail < 2:
            parts.append(limit.shortened_note(SHORTENED[detail]))
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
        f"runner time **{_dur(t.billable_s)}** · longest critical path "
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
            parts.append(limit.shortened_note(SHORTENED[detail]))
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


def _headline_pr(
    head: Totals, base: Totals, changed: Sequence[WorkflowDiff], ctx: Context,
    result: Mapping[str, Any] | None = None, all_workflows: Sequence[WorkflowDiff] = (),
) -> str:
    """The first screen: what the PR changes in time (and money), then what is worth doing;
    the tables come after."""
    n = len(changed)
    d = head.billable_s - base.billable_s
    if not n:
        what = "no workflow changed"
    elif abs(d) < 0.5:
        what = "no change in predicted runner time"
    else:
        what = f"this PR {'adds' if d > 0 else 'saves'} {_dur(abs(d))} of runner time per run"
    lines = [f"### ⏱️ laser-ci: {what}", ""]
    n_all = head.workflows + sum(1 for d in changed if d.status == "removed")
    scope = (
        f"**{n} of {_plural(n_all, 'workflow')} changed**"
        if n
        else f"**No workflow changed** ({_plural(head.workflows, 'workflow')})"
    )
    lines.append(
        f"{scope} · runner time **{_dur(head.billable_s)}** "
        f"({_delta(head.billable_s - base.billable_s)}) · longest critical path "
        f"**{_dur(head.critical_path_s)}** ({_delta(head.critical_path_s - base.critical_path_s)})"
    )
    money = _money_line(all_workflows)
    if money:
        lines += ["", money]
    biggest = _biggest_changes(changed)
    if biggest:
        lines.append("")
        lines.append("Biggest changes: " + " · ".join(biggest))
    elif n:
        lines.append("")
        lines.append("No predicted job runtime changed.")
    todo = worth_doing(changed)
    if todo:
        lines += ["", "**Worth doing**", ""]
        lines += [f"{i}. {line}" for i, line in enumerate(todo, 1)]
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


def _money_line(diffs: Sequence[WorkflowDiff]) -> str:
    """Cost per run at head (and its change) and the billed minutes; or one line saying that
    every job is free here, when no job costs anything."""
    heads = [d.head for d in diffs if d.head is not None]
    if all_free(heads):
        return ("Every job here runs free at list price (standard runners of a public "
                "repository): no costs are shown.")
    def cost(w: Mapping[str, Any] | None) -> float | None:
        return None if w is None else _num(w.get("cost_usd"))

    def billed(w: Mapping[str, Any] | None) -> float | None:
        c = None if w is None else w.get("cost")
        return _num(c.get("billable_minutes")) if isinstance(c, Mapping) else None

    at_head = [cost(w) for w in heads]
    if not heads or any(c is None for c in at_head):
        return ""
    at_base = [cost(d.base if d.status != "unchanged" else d.head) for d in diffs]
    usd = sum(c or 0.0 for c in at_head)
    out = f"Cost per run **{_usd(usd)}**"
    if all(c is not None for c in at_base):
        change = usd - sum(c or 0.0 for c in at_base)
        sign = "+" if change > 0 else "-"
        out += " (no change)" if abs(change) < 0.0005 else f" ({sign}{_usd(abs(change))})"
    minutes = [billed(w) for w in heads]
    if all(m is not None for m in minutes):
        total = int(sum(m or 0.0 for m in minutes))
        out += (f" · **{total} billed minutes** (each job rounded up to a whole minute, "
                "as GitHub bills it)")
    return out


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
    model = model_words(result.get("model"))
    by = f" (predictor `{predictor}`{f', model {_md(model)}' if model else ''})" if predictor else ""
    e = _evidence(result)
    source = ("workflow files alone" if e.cold == e.jobs else
              "workflow files and, for warm jobs, their earlier runs" if not e.siblings + e.lent
              else "workflow files and the repository's earlier runs")
    fallback = _model_fallback(result.get("model"))
    return (
        f"<sub>Predicted by laser-ci{by} from the {source}, before CI runs. "
        "Bands are p10–p90 predictions, not measurements.</sub>\n"
    ) + (f"\n<sub>{fallback}</sub>\n" if fallback else "")


def _model_fallback(model: Any) -> str:
    """The footer's line when the Action's ``model`` input was not used (the shipped model
    predicted): ``model["fallback"]``, the reason, written by :mod:`laser_ci.github.model`."""
    why = model.get("fallback") if isinstance(model, Mapping) else None
    if not why:
        return ""
    return f"The shipped model predicted, not the `model` input: {_prose(str(why))}."


def _evidence(result: Mapping[str, Any]) -> Evidence:
    """What the jobs of one estimate result were predicted from."""
    return evidence_counts([j for wf in visible_workflows(result) for j in wf.get("jobs") or ()])


def _warm_line(result: Mapping[str, Any]) -> str:
    """The history line, and the measured usage line when a job is measured (issue 51)."""
    from laser_ci.sizing.usage import usage_line

    usage = usage_line([j for wf in visible_workflows(result) for j in wf.get("jobs") or ()])
    line = _history_line(result)
    return line + ("\n\n" + usage if usage and line else "")


def _history_line(result: Mapping[str, Any]) -> str:
    e = _evidence(result)
    if not e.jobs:
        return ""
    if e.cold == e.jobs:
        return f"History: all {_plural(e.jobs, 'job')} **cold** (predicted from the workflow files alone)"
    history = result.get("history")
    branch = history.get("branch") if isinstance(history, Mapping) else None
    on = f" on {_code(str(branch))}" if branch else ""
    # issue 49: jobs without runs of their own, predicted from the rest of the repository's
    from_siblings = (f", {e.siblings} new, from their matrix siblings' runs{on}"
                     if e.siblings else "")
    from_others = (f", {e.lent} new, calibrated by the repository's other runs{on}"
                   if e.lent else "")
    renamed = (f"; {e.renamed} of them ran under another name, the same job run on its own "
               "or called" if e.renamed else "")
    return (
        f"History: **{e.own} of {_plural(e.jobs, 'job')} warm** (predicted with their earlier "
        f"runs{on}{renamed}){from_siblings}{from_others}, {e.cold} cold"
    )


def _history_notes(result: Mapping[str, Any]) -> str:
    history = result.get("history")
    notes = history.get("notes") if isinstance(history, Mapping) else None
    notes = [str(x) for x in notes or () if x]
    if not notes:
        return ""
    return "> [!NOTE]\n" + "\n".join(f"> {n}" if len(notes) == 1 else f"> - {n}" for n in notes) + "\n"
