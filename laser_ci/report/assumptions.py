"""The folded "Assumptions" section of the comment: the runner each job is assumed on, its
cost, and the sizing advice (the same advice on several instances of a job said once)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from laser_ci.report.cells import all_free
from laser_ci.report.cells import num as _num
from laser_ci.report.cells import plural as _plural
from laser_ci.report.cells import runner_cell as _runner_cell
from laser_ci.report.cells import usd as _usd
from laser_ci.report.fold import advice_key, folded_advice
from laser_ci.report.jobs import NEVER_RUNS_COST, Group, grouped, job_label, never_runs
from laser_ci.report.markdown import prose as _prose
from laser_ci.report.markdown import text as _md


def assumptions(workflows: Sequence[Mapping[str, Any]], detail: int = 2) -> str:
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
    if all_free(workflows):  # no column of $0.000: one line says so
        out += ["Every job here runs free at list price: no costs are shown.", ""]
        if rows:
            out += ["| Job | Assumed runner |", "|---|---|",
                    *(row.rsplit(" | ", 1)[0] + " |" for row in rows), ""]
    else:
        if rows:
            out += ["| Job | Assumed runner | Cost (median) |", "|---|---|--:|", *rows, ""]
        if costs:
            out += ["Per workflow run: " + " · ".join(costs), ""]
    if advice:
        out += ["**Advice**", "", *advice, ""]
    out += ["</details>", ""]
    return "\n".join(out)
