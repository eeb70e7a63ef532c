"""Render an estimate result (see :mod:`laser_ci.estimate`) as a table, JSON or Markdown."""

from __future__ import annotations

import json
import math
import re
from typing import Any


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


def runner_label(job: dict[str, Any]) -> str:
    runs_on = job.get("runs_on")
    if job.get("remote_workflow"):
        return "(reusable: " + str(job["remote_workflow"]) + ")"
    if isinstance(runs_on, list):
        return ", ".join(str(x) for x in runs_on)
    if isinstance(runs_on, dict):
        return json.dumps(runs_on, separators=(",", ":"))
    return "?" if runs_on is None else str(runs_on)


def _job_note(job: dict[str, Any]) -> str:
    notes = []
    if job.get("dynamic_matrix"):
        notes.append("dynamic matrix: expanded at run time, shown as one job")
    if job.get("remote_workflow"):
        notes.append("remote reusable workflow: its jobs are not read")
    return "; ".join(notes)


def _cost(job_or_wf: dict[str, Any]) -> str:
    cost = job_or_wf.get("cost_usd")
    return "" if cost is None else f"${cost:,.3f}"


def _advice_lines(jobs: list[dict[str, Any]]) -> list[str]:
    """One line per advice; the same kind of advice on many jobs is folded into one line."""
    by_kind: dict[str, list[tuple[str, str]]] = {}
    for job in jobs:
        for advice in job.get("advice") or []:
            # the same advice on several jobs: same kind, same opening words
            opening = " ".join(re.sub(r"[\d.$]+", "#", advice["message"]).split()[:4])
            by_kind.setdefault(f"{advice['kind']}: {opening}", []).append(
                (job["name"], advice["message"]))
    out = []
    for key, items in by_kind.items():
        kind = key.split(":", 1)[0]
        if len(items) > 2:
            name, message = items[0]
            out.append(f"  advice ({kind}, {len(items)} jobs, e.g. {name}): {message}")
        else:
            out.extend(f"  advice ({kind}): {name}: {message}" for name, message in items)
    return out


def render_table(result: dict[str, Any]) -> str:
    lines: list[str] = []
    for wf in result["workflows"]:
        lines.append(f"{wf['path']}  ({wf['name']})")
        rows = [("job", "runner", "p50", "p10 – p90", "cost")]
        for job in wf["jobs"]:
            rows.append((job["name"], runner_label(job), format_duration(job["runtime_s"]["p50"]),
                         format_band(job["runtime_s"]), _cost(job)))
        widths = [min(max(len(r[c]) for r in rows), 60) for c in range(5)]
        for r in rows:
            cells = [(r[c][: widths[c] - 1] + "…") if len(r[c]) > widths[c] else r[c]
                     for c in range(5)]
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
        for job in wf["jobs"]:
            note = _job_note(job)
            if note:
                lines.append(f"  note: {job['name']}: {note}")
        lines.extend(_advice_lines(wf["jobs"]))
        total = (f"  critical path {format_duration(wf['critical_path_s'])}"
                 f" · billable {format_duration(wf['billable_s'])}")
        if wf.get("cost_usd") is not None:
            total += f" · cost {_cost(wf)} per run"
        lines.append(total)
        lines.append("")
    if not result["workflows"]:
        lines.append("no workflows estimated")
        lines.append("")
    if result.get("assumptions") and result["workflows"]:
        lines.append("assumptions: " + " ".join(result["assumptions"]))
    lines.append(f"predictor: {result['predictor']}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: dict[str, Any]) -> str:
    out: list[str] = []
    for wf in result["workflows"]:
        out.append(f"### {_md(wf['name'])} (`{wf['path']}`)")
        out.append("")
        out.append(f"Critical path **{format_duration(wf['critical_path_s'])}**, "
                   f"billable **{format_duration(wf['billable_s'])}**.")
        out.append("")
        out.append("| job | runner | p50 | p10 – p90 | cost |")
        out.append("|---|---|---:|---|---:|")
        for job in wf["jobs"]:
            name = _md(job["name"]) + (" ⚠️ dynamic matrix" if job.get("dynamic_matrix") else "")
            out.append(f"| {name} | `{_md(runner_label(job))}` | "
                       f"{format_duration(job['runtime_s']['p50'])} | {format_band(job['runtime_s'])} | "
                       f"{_cost(job) or '–'} |")
        out.append("")
        advice = [(job["name"], a["message"]) for job in wf["jobs"] for a in job.get("advice") or []]
        if advice:
            out.append(f"<details><summary>Advice ({len(advice)})</summary>")
            out.append("")
            out.extend(f"- **{_md(name)}**: {_md(msg)}" for name, msg in advice)
            out.append("")
            out.append("</details>")
            out.append("")
    if result["errors"]:
        out.append("**Files that could not be read**")
        out.append("")
        for err in result["errors"]:
            where = f"{err['path']}:{err['line']}" if err["line"] else err["path"]
            out.append(f"- `{_md(where)}`: {_md(err['message'])}")
        out.append("")
    if result.get("assumptions") and result["workflows"]:
        out.append("<details><summary>Assumptions behind the costs</summary>")
        out.append("")
        out.extend(f"- {_md(a)}" for a in result["assumptions"])
        out.append("")
        out.append("</details>")
        out.append("")
    out.append(f"<sub>predictor: {_md(result['predictor'])}</sub>")
    return "\n".join(out) + "\n"


def render(result: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return render_markdown(result)
    return render_table(result)
