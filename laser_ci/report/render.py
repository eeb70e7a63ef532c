"""Render an estimate result (see :mod:`laser_ci.estimate`) as a table, JSON or Markdown.

Rows follow :mod:`laser_ci.report.jobs`: no raw ``${{ }}``, what only the run knows said in
words, workflows that only run when called listed under their callers, and the instances
of a job with many of them grouped (count, summed median, slowest instance; in Markdown
the instances fold out).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from laser_ci.predictors.learned import model_words
from laser_ci.report.fold import advice_key, folded_advice
from laser_ci.report.jobs import (
    NEVER_RUNS_COST,
    Group,
    bills,
    events_words,
    every_trigger,
    evidence_counts,
    failed_runs,
    grouped,
    job_label,
    never_runs,
    run_time_words,
    runner_label,
    runs_as,
    visible_workflows,
)
from laser_ci.report.markdown import code as _code
from laser_ci.report.markdown import html as _html
from laser_ci.report.markdown import prose as _prose
from laser_ci.report.markdown import text as _md
from laser_ci.report.plain import encodes as _encodes
from laser_ci.report.plain import json_text as _json_text
from laser_ci.report.plain import line as _line


def _every_trigger(result: Mapping[str, Any], wf: Mapping[str, Any]) -> str:
    """What follows "totals" under a workflow whose jobs run on different triggers
    (:func:`laser_ci.report.jobs.every_trigger`); ``""`` for the others."""
    if not every_trigger(wf):
        return ""
    event = result.get("event")
    why = (f"it has no {_code(str(event))} trigger" if isinstance(event, str) and event
           else "`--event NAME` totals one trigger's run")
    return f"add the jobs of every trigger, which no one run has together ({why})"


def format_duration(seconds: float | None) -> str:
    """``45s``, ``4m 10s``, ``1h 02m``; ``?`` when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    hours, rem = divmod(s, 3600)
    return f"{hours}h {rem // 60:02d}m"


def format_band(runtime: dict[str, float]) -> str:
    return f"{format_duration(runtime['p10'])} – {format_duration(runtime['p90'])}"


def _job_note(job: Mapping[str, Any], triggers: Sequence[str] = ()) -> str:
    notes = []
    if "run_time" in job:
        words = run_time_words(job)
        if words:
            notes.append(words)
    elif job.get("dynamic_matrix"):
        notes.append("dynamic matrix: expanded at run time, shown as one job")
    taken = runs_as(job)
    if taken is not None:
        notes.append(f"its runs are those of {_code(taken[0])}, the same job {taken[1]}")
    failed = failed_runs(job)
    if failed is not None:
        n, known, median = failed
        notes.append(f"{n} of its last {known} runs with a known end failed, after "
                     f"{format_duration(median)} (median)")
    if job.get("history_source") == "siblings":
        notes.append("no runs of its own: predicted from the runs of the other instances "
                     "of its matrix")
    elif job.get("history_source") in ("workflow", "repository"):
        of = ("its workflow's other jobs" if job["history_source"] == "workflow"
              and not job.get("evidence_elsewhere") else "the repository's other workflows")
        notes.append(f"no runs of its own: its cold guess calibrated by the runs of {of}")
    events = events_words(job)
    if events:
        notes.append(events)
    if job.get("called_as") and job.get("called_workflow"):
        notes.append(f"read from this checkout's {_code(str(job['called_workflow']))}; GitHub "
                     f"reads it at the ref the call names ({_code(str(job['called_as']))})")
    if job.get("remote_workflow") and job.get("expanded"):
        notes.append("a job of a remote reusable workflow, named as in its latest runs")
    elif job.get("remote_workflow"):
        notes.append("remote reusable workflow: its jobs are not read")
    if job.get("if_inputs") and not never_runs(job):
        notes.append("may run (depends on input " + ", ".join(
            _code(str(x).split(".", 1)[-1]) for x in job["if_inputs"]) + ")")
    by_event = job.get("runs_on_by_event")
    if isinstance(by_event, Mapping) and by_event:
        shown = next((k for k, v in by_event.items() if v == job.get("runs_on")), None)
        runs_on = job.get("runs_on_events")
        unknown = [t for t in (runs_on if isinstance(runs_on, list) else triggers)
                   if t not in by_event]  # its value depends on more than the trigger
        notes.append("runner per trigger: " + ", ".join(
            [f"{_code(runner_label({'runs_on': v}))} on {_code(k)}" for k, v in by_event.items()]
            + [f"set at run time on {_code(t)}" for t in unknown])
            + (f" (shown: {_code(shown)}; --event picks one)" if shown else ""))
    runner = job.get("runner") or {}
    set_at_run_time = bool((job.get("run_time") or {}).get("runs-on"))  # said above
    reason = str(runner.get("reason") or "") if isinstance(runner, Mapping) else ""
    if reason.startswith("not priced") and runner.get("price_per_min_usd") is None \
            and not never_runs(job):
        notes.append(reason)
    elif (isinstance(runner, Mapping) and runner.get("kind") == "unknown" and reason
            and not runner.get("retired") and not never_runs(job) and not set_at_run_time
            and not job.get("remote_workflow")):  # said above: its jobs are not read
        notes.append(f"no price: {reason}")  # a retired label's advice says why
    return "; ".join(notes)


def _notes(jobs: Sequence[Mapping[str, Any]],
           triggers: Sequence[str] = ()) -> list[tuple[str, str, int]]:
    """(first job label, note, how many jobs) per distinct note, in order; ``triggers``:
    their workflow's."""
    seen: dict[str, list[Any]] = {}
    for job in jobs:
        note = _job_note(job, triggers)
        if note:
            seen.setdefault(note, [job_label(job), 0])[1] += 1
    return [(label, note, n) for note, (label, n) in seen.items()]


def _common_runner(group: Group) -> str:
    runners = list(dict.fromkeys(runner_label(j) for j in group.jobs))
    return runners[0] if len(runners) == 1 else f"{len(runners)} runners"


def _cost(job_or_wf: Mapping[str, Any]) -> str:
    cost = job_or_wf.get("cost_usd")
    return "" if cost is None else f"${cost:,.3f}"


def _job_cost(job: Mapping[str, Any]) -> str:
    """A job row's cost; ``—`` for a job that never runs (its note says so) or that asks
    for a runner GitHub retired (it fails without running; its advice says so): it costs
    nothing, and the totals leave it out; ``~`` before a price guessed from the runner's
    name."""
    if not bills(job):
        return NEVER_RUNS_COST
    runner = job.get("runner")
    guessed = isinstance(runner, Mapping) and runner.get("guessed") and job.get("cost_usd")
    return ("~" if guessed else "") + _cost(job)


def _cost_total(wf: Mapping[str, Any]) -> str:
    """`` · cost $X per run`` for a workflow's totals line, saying how many jobs it leaves
    out for want of a price (``?`` when no job has one: unknown, not $0)."""
    cost = wf.get("cost") if isinstance(wf.get("cost"), Mapping) else {}
    unknown = cost.get("unknown_jobs") if isinstance(cost.get("unknown_jobs"), int) else 0
    if wf.get("cost_usd") is None and not unknown:
        return ""
    shown = "?" if wf.get("cost_usd") is None else _cost(dict(wf))
    out = f" · cost {shown} per run"
    if unknown:
        out += (f" ({_plural(unknown, 'job')} without a price not counted)"
                if wf.get("cost_usd") is not None else " (no job has a known price)")
    return out + _monthly(cost)


def _monthly(cost: Mapping[str, Any]) -> str:
    """`` · $X per month (N runs)`` when the runs per month are given or known."""
    monthly, runs = cost.get("monthly_cost_usd"), cost.get("runs_per_month")
    if not isinstance(monthly, (int, float)) or not isinstance(runs, (int, float)):
        return ""
    at_least = "at least " if cost.get("runs_per_month_lower_bound") else ""
    n = round(runs, 2)
    return (f" · {at_least}${monthly:,.2f} per month "
            f"({at_least}{f'{n:,.0f}' if n >= 100 else f'{n:g}'} runs)")


def _advice_lines(jobs: list[dict[str, Any]]) -> list[str]:
    """One line per advice; the same advice on more than 2 jobs is folded into one line,
    true of all of them (:func:`laser_ci.report.fold.folded_advice`)."""
    by_kind: dict[str, list[tuple[str, str]]] = {}
    for job in jobs:
        for advice in job.get("advice") or []:
            # the same advice on several jobs: same kind, same opening words
            by_kind.setdefault(advice_key(advice), []).append(
                (job_label(job), advice["message"]))
    out = []
    for key, items in by_kind.items():
        kind = key.split(":", 1)[0]
        if len(items) > 2:
            # true of all of them: a number that varies is its range over the jobs
            name, message = folded_advice(items)
            out.append(f"  advice ({kind}, {len(items)} jobs, e.g. {name}): {message}")
        else:
            out.extend(f"  advice ({kind}): {name}: {message}" for name, message in items)
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _group_cells(group: Group) -> tuple[str, str, str, str, str]:
    slowest = group.slowest
    slow = format_duration((slowest or {}).get("runtime_s", {}).get("p50")) if slowest else "?"
    return (f"{group.label} · {_plural(group.count, 'instance')}", _common_runner(group),
            f"Σ {format_duration(group.total_s)}", f"slowest {slow}",
            group.cost_words(lambda x: f"${x:,.3f}"))


def _billed(wf: Mapping[str, Any]) -> str:
    """`` · N billed minutes``: what GitHub bills, each job rounded up to a whole minute
    (the runner time above is the summed runtime), when the costing counted them."""
    cost = wf.get("cost") if isinstance(wf.get("cost"), Mapping) else {}
    n = cost.get("billable_minutes")
    if not isinstance(n, int) or isinstance(n, bool):
        return ""
    return f" · {n:,} billed minute{'' if n == 1 else 's'}"


def _assumption_lines(assumptions: Sequence[str], verbose: bool) -> list[str]:
    """One short line (the first assumption's first sentence, and how many more there are);
    every one of them with ``verbose`` (``--verbose``; ``--format json`` has them too)."""
    if verbose:
        return ["assumptions:", *(f"  - {a}" for a in assumptions)]
    first = str(assumptions[0]).split(". ")[0].split(" (")[0].rstrip(".")
    if len(first) > 90:
        first = first[:89].rstrip() + "…"
    more = len(assumptions) - 1
    rest = f" (+{more} more: --verbose)" if more else " (--verbose)"
    return [f"assumptions: {first}{rest}"]


def render_table(result: dict[str, Any], verbose: bool = False) -> str:
    lines: list[str] = []
    workflows = visible_workflows(result)
    erred = {e.get("path") for e in result.get("errors") or ()}
    for wf in workflows:
        lines.append(f"{wf['path']}  ({wf['name']})" + (
            "  (see its error line)"  # on stderr, which may not be where this goes
            if wf["path"] in erred else ""))
        rows = [("job", "runner", "p50", "p10 – p90", "cost")]
        for entry in grouped(wf["jobs"]):
            jobs = entry.jobs if isinstance(entry, Group) else [entry]
            if isinstance(entry, Group):
                rows.append(_group_cells(entry))
            for job in jobs:
                indent = "  " if isinstance(entry, Group) else ""
                rows.append((indent + job_label(job), runner_label(job),
                             format_duration(job["runtime_s"]["p50"]),
                             format_band(job["runtime_s"]), _job_cost(job)))
        widths = [min(max(len(r[c]) for r in rows), 60) for c in range(5)]
        for r in rows:
            cells = [_cut(r[c], widths[c]) for c in range(5)]
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
        for label, note, n in _notes(wf["jobs"], wf.get("triggers") or ()):
            more = f" (and {n - 1} more)" if n > 1 else ""
            lines.append(f"  note: {label}{more}: {note}")
        lines.extend(_advice_lines(wf["jobs"]))
        cycle = " (its `needs` form a cycle)" if wf.get("critical_path_s") is None else ""
        total = (f"  critical path {format_duration(wf['critical_path_s'])}{cycle}"
                 f" · runner time {format_duration(wf['billable_s'])}")
        lines.append(total + _billed(wf) + _cost_total(wf))
        if totals_note := _every_trigger(result, wf):
            lines.append(f"  totals {totals_note}")
        lines.append("")
    if not workflows:
        lines.append("no workflows estimated")
        lines.append("")
    if result.get("assumptions") and workflows:
        lines.extend(_assumption_lines(result["assumptions"], verbose))
    history = history_words(result)
    if history:
        lines.append(f"history: {history}")
    lines.append(f"predictor: {result['predictor']}")
    model = model_words(result.get("model"))
    if model:
        lines.append(f"model: {model}")
    return "\n".join(_line(x) for x in lines) + "\n"


def _cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters: its start and its end, ``…`` between, as
    the instances of one job differ at the end of their names (``test (ubuntu-22.04,
    cgroupfs)`` against ``test (ubuntu-22.04, systemd)``)."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 3
    return text[: width - 1 - tail] + "…" + (text[-tail:] if tail else "")


def history_words(result: Mapping[str, Any]) -> str:
    """What the estimated jobs' predictions came from, in words (issue 49): their own
    earlier runs, the runs of their matrix siblings or of alike jobs, or none (a cold
    guess, and how to give it the repository's runs); ``""`` without jobs."""
    e = evidence_counts([j for wf in visible_workflows(result) for j in wf["jobs"]])
    if not e.jobs:
        return ""
    if e.cold == e.jobs:
        return "none: cold guesses from the workflow files alone (laser-ci collect, then --history DIR)"
    renamed = f" ({e.renamed} under another name: the same job run on its own or called)"
    parts = [f"{e.own} of {e.jobs} jobs from their own earlier runs"
             + (renamed if e.renamed else "")]
    if e.siblings:
        parts.append(f"{e.siblings} new from their matrix siblings' runs")
    if e.lent:
        parts.append(f"{e.lent} new from alike jobs' runs")
    return ", ".join(parts) + f", {e.cold} cold"


def _md_row(job: Mapping[str, Any]) -> str:
    marker = " ⚠️ dynamic matrix" if job.get("dynamic_matrix") and not job.get("expanded") else ""
    return (f"| {_md(job_label(job))}{marker} | {_code(runner_label(job), table=True)} | "
            f"{format_duration(job['runtime_s']['p50'])} | {format_band(job['runtime_s'])} | "
            f"{_job_cost(job) or '–'} |")


def render_markdown(result: dict[str, Any]) -> str:
    out: list[str] = []
    if result["errors"]:  # first, not under every workflow's table
        out.append("**Files that could not be read**")
        out.append("")
        for err in result["errors"]:
            where = f"{err['path']}:{err['line']}" if err["line"] else err["path"]
            out.append(f"- {_code(where)}: {_prose(err['message'])}")
        out.append("")
    workflows = visible_workflows(result)
    erred = {e.get("path") for e in result.get("errors") or ()}
    for wf in workflows:
        out.append(f"### {_md(wf['name'])} ({_code(wf['path'])})" + (
            " (see its error above)"
            if wf["path"] in erred else ""))
        out.append("")
        totals_note = _every_trigger(result, wf)
        out.append(f"Critical path **{format_duration(wf['critical_path_s'])}**, "
                   f"runner time **{format_duration(wf['billable_s'])}**{_billed(wf)}"
                   f"{_cost_total(wf)}." + (f" The totals {totals_note}." if totals_note else ""))
        out.append("")
        out.append("| job | runner | p50 | p10 – p90 | cost |")
        out.append("|---|---|---:|---|---:|")
        groups: list[Group] = []
        for entry in grouped(wf["jobs"]):
            if isinstance(entry, Group):
                groups.append(entry)
                name, runner, total, slowest, cost = _group_cells(entry)
                out.append(f"| **{_md(name)}** (details below) | {_code(runner, table=True)} | {total} | "
                           f"{slowest} | {cost or '–'} |")
            else:
                out.append(_md_row(entry))
        out.append("")
        for group in groups:
            out.append(f"<details><summary>{_html(group.label)}: "
                       f"{_plural(group.count, 'instance')}</summary>")
            out.append("")
            out.append("| job | runner | p50 | p10 – p90 | cost |")
            out.append("|---|---|---:|---|---:|")
            out.extend(_md_row(job) for job in group.jobs)
            out.append("")
            out.append("</details>")
            out.append("")
        notes = _notes(wf["jobs"], wf.get("triggers") or ())
        if notes:
            # the notes are ours; the references in them are code spans (jobs.code)
            out.extend(f"- **{_md(label)}**{f' (and {n - 1} more)' if n > 1 else ''}: "
                       f"{note}" for label, note, n in notes)
            out.append("")
        advice = [(job_label(job), a["message"]) for job in wf["jobs"]
                  for a in job.get("advice") or []]
        if advice:
            out.append(f"<details><summary>Advice ({len(advice)})</summary>")
            out.append("")
            out.extend(f"- **{_md(name)}**: {_prose(msg)}" for name, msg in advice)
            out.append("")
            out.append("</details>")
            out.append("")
    if result.get("assumptions") and workflows:
        out.append("<details><summary>Assumptions behind the costs</summary>")
        out.append("")
        out.extend(f"- {_prose(a)}" for a in result["assumptions"])
        out.append("")
        out.append("</details>")
        out.append("")
    history = history_words(result)
    if history:
        out.append(f"History: {_prose(history)}")
        out.append("")
    model = model_words(result.get("model"))
    by = f" · model {_md(model)}" if model else ""
    out.append(f"<sub>predictor: {_md(result['predictor'])}{by}</sub>")
    return "\n".join(out) + "\n"


def render(result: dict[str, Any], fmt: str, encoding: str | None = None,
           verbose: bool = False) -> str:
    """``result`` as ``fmt`` text. JSON that ``encoding`` (the output's) cannot write as
    it is has its other characters as ``\\uXXXX`` escapes: the same JSON value."""
    if fmt == "json":
        text = _json_text(json.dumps(result, indent=2, ensure_ascii=False)) + "\n"
        return text if _encodes(text, encoding) else json.dumps(result, indent=2) + "\n"
    if fmt == "markdown":
        return render_markdown(result)
    return render_table(result, verbose)
