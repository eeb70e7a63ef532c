"""What is worth doing, first in the comment: at most :data:`MOST` lines, each one change to
make in a workflow (a timeout to add, a runner to change), taken from the sizing advice of
the jobs the pull request touches.

The jobs the PR adds or changes come first, then the other jobs of the workflows it changes;
timeouts before runners before the rest. The advice of a job's several instances is one
line (GitHub sets ``timeout-minutes`` and ``runs-on`` once per job definition).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from laser_ci.report.cells import plural as _plural
from laser_ci.report.diff import JobDiff, WorkflowDiff
from laser_ci.report.jobs import job_label, shared_label
from laser_ci.report.markdown import code as _code
from laser_ci.report.markdown import prose as _prose
from laser_ci.report.markdown import text as _md

MOST = 3
_KIND_ORDER = {"timeout": 0, "runner": 1}


def _first_sentence(message: str) -> str:
    head, dot, _rest = message.partition(". ")
    return head + ("." if dot or not head.endswith(".") else "")


def _touched(job: JobDiff) -> bool:
    """The PR adds the job or changes how it is written."""
    if job.status == "new":
        return True
    h, b = job.head or {}, job.base or {}
    return job.status == "changed" and (not h.get("definition")
                                        or h.get("definition") != b.get("definition"))


def _numbers(items: Sequence[Mapping[str, Any]], key: str) -> list[float]:
    return sorted({float(v) for a in items if isinstance(v := (a.get("suggested") or {}).get(key),
                                                         (int, float)) and not isinstance(v, bool)})


def _labels(items: Sequence[Mapping[str, Any]], key: str) -> list[str]:
    return sorted({str(v) for a in items if (v := (a.get("suggested") or {}).get(key))})


def _line(kind: str, where: str, jobs: Sequence[Mapping[str, Any]],
          advice: Sequence[Mapping[str, Any]], new: bool) -> str:
    first = advice[0]
    notes = [_plural(len(jobs), "instance")] if len(jobs) > 1 else []
    notes += ["new in this PR"] if new else []
    timeouts = _numbers(advice, "timeout-minutes")
    if kind == "timeout" and timeouts:
        most, least = timeouts[-1], timeouts[0]
        value = _code(f"timeout-minutes: {most:g}")
        notes += [f"{least:g} would do for the fastest"] if least < most else []
        on = f"**{where}**" + (f" ({'; '.join(notes)})" if notes else "")
        if all(j.get("timeout_minutes") is None for j in jobs):
            return (f"Add {value} to {on}: without one, a hung run holds its runner for "
                    "up to 6 hours (GitHub's default of 360 minutes).")
        why = _prose(_first_sentence(str(first.get("message") or "")))
        return f"Set {value} on {on}: {why}"
    on = f"**{where}**" + (f" ({'; '.join(notes)})" if notes else "")
    runners = _labels(advice, "runs-on")
    if kind == "runner" and len(runners) == 1:
        why = _prose(_first_sentence(str(first.get("message") or "")))
        return f"Set {_code('runs-on: ' + runners[0])} on {on}: {why}"
    return f"{on}: {_prose(str(first.get('message') or ''))}"


def worth_doing(changed: Sequence[WorkflowDiff], most: int = MOST) -> list[str]:
    """The lines to show, best first (empty when no job of a changed workflow has advice)."""
    # (touched first, kind order, -p90, order seen) -> line; one entry per job definition
    ranked: list[tuple[tuple[int, int, float, int], str]] = []
    for wf in changed:
        if wf.head is None:
            continue
        by_group: dict[tuple[str, str], list[tuple[JobDiff, Mapping[str, Any]]]] = {}
        for jd in wf.jobs:
            if jd.head is None:
                continue
            group = str(jd.head.get("id") or jd.head.get("group") or jd.name)
            for a in jd.head.get("advice") or ():
                if isinstance(a, Mapping) and a.get("message"):
                    by_group.setdefault((group, str(a.get("kind") or "")), []).append((jd, a))
        for (_group, kind), pairs in by_group.items():
            jobs = list({id(jd.head): jd.head for jd, _a in pairs if jd.head is not None}.values())
            touched = any(_touched(jd) for jd, _a in pairs)
            new = all(jd.status == "new" for jd, _a in pairs)
            label = job_label(jobs[0]) if len(jobs) == 1 else shared_label(jobs[0])
            where = f"{_md(wf.name)} / {_md(label)}"
            p90 = max((float((j.get("runtime_s") or {}).get("p90") or 0.0) for j in jobs),
                      default=0.0)
            key = (0 if touched else 1, _KIND_ORDER.get(kind, 2), -p90, len(ranked))
            ranked.append((key, _line(kind, where, jobs, [a for _jd, a in pairs], new)))
    ranked.sort(key=lambda x: x[0])
    return [line for _key, line in ranked[:most]]
