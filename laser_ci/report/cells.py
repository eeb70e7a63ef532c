"""What one cell of the comment shows: numbers read from a result (:func:`num`, :func:`p50`),
durations, deltas, costs and counts in words, the runner a job is assumed on, and whether a
prediction was warm (:func:`history_cell`). Used by :mod:`laser_ci.report.comment` and the
modules it renders with."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from laser_ci.report.jobs import bills, failed_runs, history_runs, runs_as
from laser_ci.report.markdown import code as _code
from laser_ci.report.markdown import text as _md
from laser_ci.report.render import format_duration


def num(x: Any) -> float | None:
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


def p50(job: Mapping[str, Any] | None) -> float | None:
    if job is None:
        return None
    return num((job.get("runtime_s") or {}).get("p50"))


def billed_p50(job: Mapping[str, Any] | None) -> float | None:
    """The job's median as the billable time counts it: 0 for one that never runs."""
    if job is not None and not bills(job):
        return 0.0
    return p50(job)


def job_name(job: Mapping[str, Any]) -> str:
    return str(job.get("name") or job.get("id") or "?")


def band(rt: Mapping[str, Any]) -> str:
    lo, hi = num(rt.get("p10")), num(rt.get("p90"))
    if lo is None or hi is None:
        return "–"
    return f"{dur(lo)} – {dur(hi)}"


def dur(seconds: float | None) -> str:
    return "–" if seconds is None else format_duration(seconds)


def delta(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if abs(seconds) < 0.5:
        return "no change"
    return ("+" if seconds > 0 else "-") + format_duration(abs(seconds))


def usd(x: float | None) -> str:
    return "–" if x is None else f"${x:,.3f}" if x < 1 else f"${x:,.2f}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def runner_cell(job: Mapping[str, Any]) -> str:
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


def evidence_cell(job: Mapping[str, Any]) -> str | None:
    """``new: from 12 runs of its matrix siblings`` (or its workflow's other jobs, the
    alike jobs of the repository's other workflows) for a job predicted from the rest of
    the repository's runs (issue 49); None for the others."""
    source = job.get("history_source")
    m = job.get("evidence_runs")
    if source not in ("siblings", "workflow", "repository") or not isinstance(m, int) \
            or isinstance(m, bool) or m <= 0:
        return None
    of = {"siblings": "its matrix siblings", "workflow": "its workflow's other jobs",
          "repository": "alike jobs of other workflows"}[source]
    if source == "workflow" and job.get("evidence_elsewhere"):  # none of its own workflow
        of = "alike jobs of other workflows"
    return f"new: from {plural(m, 'run')} of {of}"


def history_cell(job: Mapping[str, Any]) -> str:
    """``warm (12 runs)`` when the prediction saw earlier runs of the job itself, what it
    was predicted from when it was the rest of the repository's runs
    (:func:`evidence_cell`), else ``cold``."""
    lent = evidence_cell(job)
    if lent is not None:
        return lent
    n = history_runs(job)
    if n is None:
        return "cold"
    taken = runs_as(job)
    how = f", as {taken[1]}" if taken else ""
    return f"warm ({plural(n, 'run')}{how}{failed_words(job, n)})"


def failed_words(job: Mapping[str, Any], runs: int) -> str:
    """``; 3 failed, after ~4m 10s`` (``3 of 9 failed`` when only 9 of the ``runs`` earlier
    runs have a known end) when some of the job's earlier runs failed, else empty."""
    f = failed_runs(job)
    if f is None:
        return ""
    failed, known, median = f
    of = "" if known == runs else f" of {known}"
    return f"; {failed}{of} failed, after ~{dur(median)}"


def all_free(workflows: Iterable[Mapping[str, Any] | None]) -> bool:
    """Every job of these workflows that has a cost costs nothing (standard runners of a
    public repository), and some job has one: a cost column would read $0.000 throughout."""
    costs = [num(j.get("cost_usd")) for w in workflows if w is not None
             for j in w.get("jobs") or ()]
    known = [c for c in costs if c is not None]
    return bool(known) and all(c == 0 for c in known)
