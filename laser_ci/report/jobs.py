"""What every report shows of a job: its label, its runner, what only the run knows, and
how the instances of one job are grouped. Pure functions over the JSON result of
:func:`laser_ci.estimate.estimate_workflows`.

- A row never shows a raw ``${{ }}``: a part known only at run time is ``…`` and the row
  says in words what it depends on.
- A workflow that only runs when called (``called_only``) is shown under the jobs that call
  it; it is listed on its own only when no estimated workflow calls it.
- The instances of one job (same ``id``) are grouped when there are at least
  :data:`GROUP_MIN` of them: the count, the summed median and the slowest instance.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from laser_ci.report import markdown
from laser_ci.workflows.expressions import segments

GROUP_MIN = 8  # instances of one job from which reports fold them into a group
HOLE = "…"
_HOLES = re.compile(f"{HOLE}{{2,}}")
_FIELDS = {"name": "name", "runs-on": "runner", "matrix": "matrix",
           "timeout-minutes": "timeout"}


def hide_expressions(text: str) -> str:
    """``text`` on one line with each ``${{ ... }}`` (and an unclosed ``${{``) as ``…``;
    holes side by side (``${{ a }}${{ b }}``) are one."""
    text = " ".join(text.splitlines()) if "\n" in text or "\r" in text else text
    if "${{" in text:
        text = "".join(HOLE if is_expr else source for is_expr, source, _ in segments(text))
        text = text[: text.index("${{")] + HOLE if "${{" in text else text
    return _HOLES.sub(HOLE, text) if HOLE + HOLE in text else text


def job_label(job: Mapping[str, Any]) -> str:
    """The name to show: GitHub's display name, parts known only at run time as ``…``."""
    return hide_expressions(str(job.get("label") or job.get("name") or job.get("id") or "?"))


def _ref(ref: str) -> str:
    """A reference as words show it: an expression without its ``${{ }}``."""
    ref = ref.strip()
    if ref.startswith("${{") and ref.endswith("}}"):
        ref = ref[3:-2].strip()
    return ref


def runner_label(job: Mapping[str, Any]) -> str:
    """The ``runs-on`` to show; ``set at run time`` when only the run knows it."""
    runs_on = job.get("runs_on")
    if job.get("remote_workflow") and runs_on is None:  # else its runs' labels
        return "(reusable: " + str(job["remote_workflow"]) + ")"
    if isinstance(runs_on, list):
        text = ", ".join(str(x) for x in runs_on)
    elif isinstance(runs_on, dict):  # {group, labels}: as the sizing names it
        text = "; ".join(f"{k}: " + (", ".join(str(x) for x in v) if isinstance(v, list)
                                     else str(v)) for k, v in runs_on.items())
    else:
        text = "?" if runs_on is None else str(runs_on)
    shown = hide_expressions(text)
    return "set at run time" if shown.strip() == HOLE else shown


def code(text: str) -> str:
    """A code span that text from a workflow cannot break out of (:func:`markdown.code`)."""
    return markdown.code(str(text))


def run_time_words(job: Mapping[str, Any]) -> str:
    """What of the job only the run knows, in words (references as code spans); ``""`` when
    everything is known."""
    run_time = job.get("run_time")
    if not isinstance(run_time, Mapping):
        return ""

    def refs(values: Any) -> str:
        return ", ".join(code(_ref(r)) for r in values if isinstance(r, str))

    parts = []
    matrix = run_time.get("matrix")
    if matrix and not job.get("expanded"):
        parts.append(f"its matrix is computed at run time (from {refs(matrix)}), so all its "
                     "instances are one row here")
    known = [f"{_FIELDS.get(k, k)} ({refs(v)})" for k, v in run_time.items()
             if k != "matrix" and v and isinstance(v, list | tuple)]
    if known:
        parts.append("known only at run time: " + "; ".join(known))
    return "; ".join(parts)


def failed_runs(job: Mapping[str, Any]) -> tuple[int, int, float] | None:
    """``(failed, known, median seconds)`` of the job's earlier runs when some of them
    failed (``history_failures``: of ``known`` runs with a known end, ``failed`` failed, after
    that median); None when none did or nothing is known."""
    f = job.get("history_failures")
    if not isinstance(f, Mapping):
        return None
    failed, known, median = f.get("failed"), f.get("runs"), f.get("failed_median_s")
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (failed, known)) \
            or not 0 < failed <= known:
        return None
    if isinstance(median, bool) or not isinstance(median, int | float) \
            or not math.isfinite(median) or median < 0:
        return None
    return failed, known, float(median)


@dataclass(frozen=True)
class Evidence:
    """How many jobs were predicted from what (issue 49): their own earlier runs
    (``own``), their matrix siblings' (``siblings``), the repository's other jobs
    (``lent``: ``history_source`` ``workflow`` or ``repository``), or nothing of the
    repository (``cold``)."""

    own: int = 0
    siblings: int = 0
    lent: int = 0
    cold: int = 0
    renamed: int = 0  # of ``own``: runs of the same job under another name (runs_as)

    @property
    def jobs(self) -> int:
        return self.own + self.siblings + self.lent + self.cold


def evidence_counts(jobs: Sequence[Mapping[str, Any]]) -> Evidence:
    """:class:`Evidence` of ``jobs``. A job is ``own`` only with runs of its own counted
    (:func:`history_runs`)."""
    own = siblings = lent = renamed = 0
    for job in jobs:
        source = job.get("history_source")
        if source == "siblings":
            siblings += 1
        elif source in ("workflow", "repository"):
            lent += 1
        elif history_runs(job) is not None:
            own += 1
            renamed += runs_as(job) is not None
    return Evidence(own, siblings, lent, len(jobs) - own - siblings - lent, renamed)


def history_runs(job: Mapping[str, Any]) -> int | None:
    """The job's own earlier runs its prediction saw (None: none): only a job predicted
    from runs of its own is warm (``history_source`` ``own``, or a result from before the
    field), not one predicted from its siblings' or its workflow's runs."""
    n = job.get("history_runs")
    if job.get("history_source", "own") != "own":
        return None
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def runs_as(job: Mapping[str, Any]) -> tuple[str, str] | None:
    """Where the job's own runs were taken from when they are not under its own name
    (``history_as``, :mod:`laser_ci.workflows.same_job`): the run's name, and ``called
    from PATH`` or ``run on its own``; None otherwise."""
    taken = job.get("history_as")
    if not isinstance(taken, Mapping) or history_runs(job) is None:
        return None
    path, name = str(taken.get("path") or ""), str(taken.get("name") or "")
    defined = job.get("called_workflow")
    how = "run on its own" if defined and path == defined else f"called from {code(path)}"
    return name, how


NEVER_RUNS_COST = "—"  # the cost cell of a job that never runs


def never_runs(job: Mapping[str, Any]) -> bool:
    """Whether the job's ``if:`` is false on every trigger: it is shown, never run."""
    return job.get("runs_on_events") == []


def bills(job: Mapping[str, Any]) -> bool:
    """Whether the job takes time and costs when the workflow runs: not one that never runs,
    nor one on a runner label GitHub retired (it fails without running), as the totals."""
    runner = job.get("runner")
    return not never_runs(job) and not (isinstance(runner, Mapping) and runner.get("retired"))


def every_trigger(wf: Mapping[str, Any]) -> bool:
    """Whether the workflow's totals add jobs that no one run has together: no trigger
    runs every job that runs at all (their ``if:``; a push-only job beside a pull-request
    one). Read as the run of one trigger (``--event``, the Action's event), a job lists no
    events: it runs in that run or never."""
    common = set(wf.get("triggers") or ())
    for job in wf.get("jobs") or ():
        events = job.get("runs_on_events")
        if isinstance(events, list) and events:
            common &= set(events)
    return bool(wf.get("triggers")) and not common


def events_words(job: Mapping[str, Any]) -> str:
    events = job.get("runs_on_events")
    if events is None:
        return ""
    if not events:
        after = job.get("skipped_after")
        if isinstance(after, str) and after:
            return (f"it needs {code(after)}, which does not run, so GitHub skips it too "
                    "(not counted in the totals)")
        if isinstance(job.get("event"), str):  # read as the run of one trigger (--event)
            return (f"its `if:` is false on {code(job['event'])}, the trigger estimated: it "
                    "does not run (not counted in the totals)")
        return "its `if:` is false on every trigger: it never runs (not counted in the totals)"
    return "runs only on " + ", ".join(code(e) for e in events) + " (its `if:`)"


def visible_workflows(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The workflows to list: all but those only run when called by a listed workflow."""
    wfs = list(result.get("workflows") or ())
    paths = {str(w.get("path")) for w in wfs}
    return [w for w in wfs
            if not (w.get("called_only") and set(w.get("called_by") or ()) & paths)]


def shared_label(job: Mapping[str, Any]) -> str:
    """The name a job's instances share, their matrix values hidden (``test (…)``); the
    job id where nothing else is left of it (deno's ``build``: ``… … …-…``)."""
    shared = hide_expressions(str(job.get("group") or job.get("name") or "?"))
    return shared if any(c.isalnum() for c in shared) else str(job.get("id") or shared)


@dataclass
class Group:
    """The instances of one job (same ``id``), in their order."""

    jobs: list[Mapping[str, Any]]

    @property
    def label(self) -> str:
        return shared_label(self.jobs[0])

    @property
    def count(self) -> int:
        return len(self.jobs)

    def p50s(self) -> list[float]:
        """The medians of the instances that run (as the workflow's billable time counts)."""
        return [x for j in self.jobs if bills(j) and (x := _p50(j)) is not None]

    @property
    def total_s(self) -> float:
        return sum(self.p50s())

    @property
    def slowest(self) -> Mapping[str, Any] | None:
        timed = [j for j in self.jobs if bills(j) and _p50(j) is not None]
        return max(timed, key=lambda j: _p50(j) or 0.0) if timed else None

    @property
    def cost_usd(self) -> float | None:
        """The summed cost of the priced instances that run (the totals leave out those
        that never run); None when none has a price."""
        costs = [c for j in self.jobs if bills(j)
                 and isinstance(c := j.get("cost_usd"), (int, float))]
        return sum(costs) if costs else None

    @property
    def unpriced(self) -> int:
        """How many instances that run have no price (left out of :attr:`cost_usd`)."""
        return sum(1 for j in self.jobs if bills(j)
                   and not isinstance(j.get("cost_usd"), (int, float)))

    def cost_words(self, usd: Callable[[float], str]) -> str:
        """The group's cost cell: ``$0.012``, ``$0.012 + 6 unpriced`` when some instances
        have no price (the sum leaves them out), ``""`` when none has one."""
        cost = self.cost_usd
        if cost is None:
            return ""
        return usd(cost) + (f" + {self.unpriced} unpriced" if self.unpriced else "")

    @property
    def warm(self) -> int:
        return sum(1 for j in self.jobs if history_runs(j) is not None)


def _p50(job: Mapping[str, Any]) -> float | None:
    rt = job.get("runtime_s") or {}
    x = rt.get("p50") if isinstance(rt, Mapping) else None
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def grouped(jobs: Sequence[Mapping[str, Any]], min_size: int = GROUP_MIN
            ) -> list[Mapping[str, Any] | Group]:
    """``jobs`` in order, the instances of a job with at least ``min_size`` of them folded
    into one :class:`Group` where its first instance was."""
    by_id: dict[str, list[Mapping[str, Any]]] = {}
    for job in jobs:
        by_id.setdefault(str(job.get("id") or job.get("name")), []).append(job)
    out: list[Mapping[str, Any] | Group] = []
    done: set[str] = set()
    for job in jobs:
        key = str(job.get("id") or job.get("name"))
        members = by_id[key]
        if len(members) < min_size:
            out.append(job)
        elif key not in done:
            done.add(key)
            out.append(Group(members))
    return out
