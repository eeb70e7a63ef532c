"""A job's (or workflow's) own past runs, summarized for the model's input.

The serializer writes one block per text (see :mod:`laser_ci.text.serialize`)::

    history: n=12 median=4.73e+02 p10=3.10e+02 p90=6.00e+02 latest=5.01e+02 recent=4.90e+02
    history-config: unchanged

or, when the configuration changed since the latest earlier run, a compact diff of the
serialized job (at most a few lines)::

    history-config: changed +2 -1
    + run: pytest -n 4
    - run: pytest

and ``history: none`` when there are no earlier runs. ``median``, ``p10`` and ``p90`` are
over the last :data:`MAX_RUNS` runs; ``recent`` is the median of the last
:data:`RECENT_RUNS`. Runtimes drift: on the shared set's workflow runs with history, the
median of the last 2 or 3 runs has log-MAE 0.369 against 0.409 for the last 20. Picked on
the training folds of each of five folds, the window is 2 on four and 3 on one, the two
within 0.005 of each other on every fold; 3 is kept, since a median of 3 ignores one
outlying run where a median of 2 averages it in. Held out, each fold with its own pick:
warm 0.373 against 0.409 (−0.036 [−0.083, −0.001]); where the workflow changed, a tie
(+0.003 [−0.041, +0.049]) (``benchmarks/history_window.py``). Times use the same scientific
notation as the targets (:mod:`laser_ci.text.numbers`), so the model reads and writes one scale.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from laser_ci.text.numbers import NumberCodec

MAX_RUNS = 20  # the most recent earlier runs that count
RECENT_RUNS = 3  # the runs the ``recent=`` median is over
MAX_DIFF_LINES = 6
_CODEC = NumberCodec()


def seconds_of(value: Any) -> float | None:
    """A recorded duration as seconds; None where it is missing, not a number, not finite
    or not positive (an untimed run or job). A JSON boolean is not a number (Python reads
    ``true`` as 1)."""
    if isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return x if math.isfinite(x) and x > 0 else None


@dataclass(frozen=True)
class History:
    """Earlier runtimes (oldest first, seconds) and what changed in the configuration since
    the latest of them: None when unknown, ``()`` when unchanged, else diff lines."""

    runtimes: tuple[float, ...]
    diff: tuple[str, ...] | None = None

    @classmethod
    def of(cls, runtimes: Sequence[float], diff: Sequence[str] | None = None) -> History | None:
        kept = tuple(t for t in map(seconds_of, runtimes) if t is not None)[-MAX_RUNS:]
        if not kept:
            return None
        return cls(kept, None if diff is None else tuple(diff))

    @property
    def n(self) -> int:
        return len(self.runtimes)

    def quantile(self, q: float) -> float:
        return float(np.quantile(np.asarray(self.runtimes), q))

    @property
    def median(self) -> float:
        return float(np.median(np.asarray(self.runtimes)))

    @property
    def latest(self) -> float:
        return self.runtimes[-1]

    @property
    def recent(self) -> float:
        """The median of the last :data:`RECENT_RUNS` runs."""
        return float(np.median(np.asarray(self.runtimes[-RECENT_RUNS:])))


def _num(x: float) -> str:
    return _CODEC.to_string(max(x, _CODEC.min_value))


def history_lines(history: History | None) -> list[str]:
    """The serialized history block (always present: absence is stated)."""
    if history is None:
        return ["history: none"]
    out = [f"history: n={history.n} median={_num(history.median)} p10={_num(history.quantile(0.1))} "
           f"p90={_num(history.quantile(0.9))} latest={_num(history.latest)} "
           f"recent={_num(history.recent)}"]
    if history.diff is None:
        out.append("history-config: unknown")
    elif not history.diff:
        out.append("history-config: unchanged")
    else:
        added = sum(1 for d in history.diff if d.startswith("+"))
        removed = sum(1 for d in history.diff if d.startswith("-"))
        out.append(f"history-config: changed +{added} -{removed}")
        out.extend(d[:100] for d in history.diff[:MAX_DIFF_LINES])
    return out


HISTORY_FIELDS = ("n", "median", "p10", "p90", "latest", "recent")
_HISTORY_FIELD = re.compile(r"\b(" + "|".join(HISTORY_FIELDS) + r")=([0-9.eE+-]+)")


def anchor_field(fields: Mapping[str, float], key: str) -> str:
    """``key`` when a parsed history line has it, else ``median`` (a line from before the
    field existed): the figure a reader anchored on ``key`` uses."""
    return key if key in fields else "median"


def parse_history(text: str) -> dict[str, float] | None:
    """The numbers of a text's ``history:`` line (``n``, ``median``, ``p10``, ``p90``,
    ``latest``, ``recent``: the fields it has), or None for ``history: none``, no such
    line, or no readable median."""
    for line in text.split("\n"):
        if line.startswith("history:"):
            fields: dict[str, float] = {}
            for key, value in _HISTORY_FIELD.findall(line):
                try:
                    x = float(value)
                except ValueError:
                    continue
                if math.isfinite(x):
                    fields[key] = x
            if "median" not in fields:
                return None
            return fields
        if line.startswith(("runs-on:", "steps:", "jobs:", "raw:")):
            break  # the block comes right after the header
    return None


def config_changed(text: str) -> bool:
    """Whether a text's history block says its configuration changed since the latest
    earlier run (``history-config: changed ...``); False without a block."""
    _, block = split_history_block(text)
    return bool(block) and block[0].startswith("history-config: changed")


def split_history_block(text: str, last: str = "median") -> tuple[str, list[str]]:
    """``text`` without its history block, and the block's lines in the order the language
    model reads them at the end of its prompt (:class:`laser_ci.text.tokenize.PromptCodec`): the
    ``history-config`` line and its diff first, then the ``history:`` line with its ``last``
    field (the median, or the ``recent`` median; the median for a line without that field)
    moved last, so its digits sit a fixed number of tokens before the digits the model
    writes. A text without a block comes back unchanged with ``[]``."""
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("history: ")), None)
    if at is None:
        return text, []
    end = at + 1
    config: list[str] = []
    if end < len(lines) and lines[end].startswith("history-config: "):
        config.append(lines[end])
        changed = lines[end].startswith("history-config: changed")
        end += 1
        while changed and end < len(lines) and lines[end].startswith(("+ ", "- ")):
            config.append(lines[end])
            end += 1
    fields = lines[at].split(" ")
    if not any(f.startswith(last + "=") for f in fields):
        last = "median"
    moved = [f for f in fields if f.startswith(last + "=")]
    numbers = " ".join([f for f in fields if not f.startswith(last + "=")] + moved)
    return "\n".join(lines[:at] + lines[end:]), [*config, numbers]


def without_history_field(line: str, key: str) -> str:
    """A ``history:`` numbers line without its ``key=`` field (the layout of a model
    trained before the field existed)."""
    return " ".join(f for f in line.split(" ") if not f.startswith(key + "="))


def relative_history_line(line: str, fmt: Callable[[float], str], center: float = 1.0,
                          anchor: str = "median") -> str:
    """A ``history:`` numbers line with its runtimes other than ``anchor`` (``p10``,
    ``p90``, ``latest``, and ``median`` or ``recent``) written as ``center * value /
    anchor`` (with ``fmt``); ``n`` and the anchor itself unchanged (the median is the anchor
    of a line without the ``anchor`` field, :func:`anchor_field`). The layout of a model
    that writes its warm output relative to the anchor
    (:class:`laser_ci.text.tokenize.PromptCodec`, ``warm_target="ratio"``). A line without a
    readable positive anchor comes back unchanged."""
    fields = parse_history(line)
    if fields is None:
        return line
    anchor = anchor_field(fields, anchor)
    base = fields[anchor]
    if base <= 0:
        return line
    out = []
    for f in line.split(" "):
        key, eq, _value = f.partition("=")
        if eq and key in fields and key not in ("n", anchor) and key in HISTORY_FIELDS:
            f = f"{key}={fmt(center * fields[key] / base)}"
        out.append(f)
    return " ".join(out)


def _config_lines(text: str) -> list[str]:
    """The configuration part of a serialized text: without history and profile lines."""
    out: list[str] = []
    in_diff = False
    for line in text.split("\n"):
        if line.startswith("history-config: changed"):
            in_diff = True
            continue
        if in_diff and line.startswith(("+ ", "- ")):
            continue
        in_diff = False
        if line and not line.startswith(("history", "repo: ")):
            out.append(line)
    return out


def config_diff(old_text: str, new_text: str) -> tuple[str, ...]:
    """Changed lines between two serialized texts of the same job, ``+``/``-`` prefixed,
    stripped of indentation; ``()`` when the configurations are the same."""
    old, new = _config_lines(old_text), _config_lines(new_text)
    if old == new:
        return ()
    out: list[str] = []
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith(("+++", "---", "@@")):
            continue
        out.append(line[0] + " " + line[1:].strip())
    # Report additions and removals even when the diff is long: interleave them.
    plus = [d for d in out if d.startswith("+")]
    minus = [d for d in out if d.startswith("-")]
    merged: list[str] = []
    for a, b in zip(plus, minus, strict=False):
        merged += [a, b]
    longer = plus if len(plus) > len(minus) else minus
    merged += longer[min(len(plus), len(minus)):]
    return tuple(merged)


FAILED = ("failure", "timed_out")  # conclusions that count as a failed run


@dataclass(frozen=True)
class Failures:
    """How a job's earlier runs ended, for the report (never the model's input): of the
    ``known`` runs among the last :data:`MAX_RUNS` whose conclusion is known, the runtimes
    of those that failed (:data:`FAILED`), oldest first."""

    known: int
    failed_s: tuple[float, ...]

    @property
    def median_s(self) -> float | None:
        """The median time a failed run took before it ended; None when none failed."""
        return float(np.median(np.asarray(self.failed_s))) if self.failed_s else None

    def to_json(self) -> dict[str, Any]:
        median = self.median_s
        return {"runs": self.known, "failed": len(self.failed_s),
                "failed_median_s": None if median is None else round(median, 1)}


@dataclass(frozen=True)
class PastRuns:
    """Earlier runtimes of one job (or workflow), oldest first, and the serialized text of
    the configuration the latest of them ran (None when unknown). ``conclusions``: how each
    of those runs ended, in the same order (``None`` for a run whose conclusion is unknown;
    empty when none is known)."""

    runtimes: tuple[float, ...]
    previous_text: str | None = None
    span_days: float | None = None  # from the first to the last of these runs
    conclusions: tuple[str | None, ...] = ()

    def history_for(self, current_text: str) -> History | None:
        diff = None if self.previous_text is None else config_diff(self.previous_text, current_text)
        return History.of(self.runtimes, diff)

    def failures(self) -> Failures | None:
        """How the runs :meth:`history_for` keeps ended; None when no conclusion is known
        (or ``conclusions`` does not match ``runtimes``)."""
        if len(self.conclusions) != len(self.runtimes):
            return None
        kept = [(t, c) for t, c in zip(self.runtimes, self.conclusions, strict=True)
                if t is not None and t > 0][-MAX_RUNS:]
        known = [(t, c) for t, c in kept if c]
        if not known:
            return None
        return Failures(len(known), tuple(float(t) for t, c in known if c in FAILED))


# Job ends whose duration is not a runtime: a skipped job never ran, a cancelled one's
# duration is where it was cut. Both readers of job lists (collected folders here, the API
# in laser_ci.github.history) leave them untimed.
UNTIMED_ENDS = ("skipped", "cancelled")


@dataclass(frozen=True)
class RunJob:
    """One job of an earlier run as GitHub listed it: its display name, the runner labels it
    asked for (when known), its seconds (None: it did not run to the end) and how it ended
    (``success``, ``failure``, ...; None when unknown)."""

    name: str
    labels: tuple[str, ...] = ()
    seconds: float | None = None
    conclusion: str | None = None

    @classmethod
    def from_collected(cls, job: Any) -> RunJob | None:
        """A job of a run ``laser-ci collect`` wrote (``{"name", "run_time_s", "conclusion",
        "runner_labels", ...}``); None for a skipped job (it never got its matrix) or one
        without a name. A cancelled job is listed without seconds (its duration is where it
        was cut), as the API's jobs are (:mod:`laser_ci.github.history`)."""
        if not isinstance(job, dict) or not job.get("name") or job.get("conclusion") == "skipped":
            return None
        labels = job.get("runner_labels")
        seconds = seconds_of(job.get("run_time_s"))
        end = job.get("conclusion")
        timed = seconds is not None and end not in UNTIMED_ENDS
        return cls(str(job["name"]),
                   tuple(str(x) for x in labels) if isinstance(labels, list) else (),
                   seconds if timed else None,
                   str(end) if end else None)


@dataclass
class HistoryIndex:
    """Past runs available at prediction time, keyed the way users see jobs: by workflow
    path and job display name (per job), and by workflow path (whole workflow).

    ``runs``: per workflow path, the jobs each earlier run listed, oldest run first; it is
    where the instances of a matrix computed at run time come from
    (:mod:`laser_ci.workflows.runtime_matrix`).
    """

    jobs: dict[tuple[str, str], PastRuns]
    workflows: dict[str, PastRuns]
    source: str = ""
    runs: dict[str, tuple[tuple[RunJob, ...], ...]] = field(default_factory=dict)
    repo: str = ""
    """The repository the runs are of (``owner/name``), when known."""
    usage: dict[tuple[str, str], tuple[dict[str, Any], ...]] = field(default_factory=dict)
    """Per workflow path and job name, the usage records of its measured runs, oldest first
    (:mod:`laser_ci.measure.record`; for the sizing advice, never the model's input)."""
    without_runs: tuple[str, ...] = ()
    """The workflow paths whose runs were looked for and none found (the Action's history)."""

    def for_job(self, workflow_path: str, job_name: str) -> PastRuns | None:
        return self.jobs.get((workflow_path, job_name))

    def for_workflow(self, workflow_path: str) -> PastRuns | None:
        return self.workflows.get(workflow_path)

    def runs_of(self, workflow_path: str) -> tuple[tuple[RunJob, ...], ...]:
        return self.runs.get(workflow_path, ())

    def add_listed(self, workflow_path: str, runs: Sequence[Sequence[RunJob]],
                   previous_texts: Mapping[str, str] | None = None) -> None:
        """Sets the job lists of a workflow's runs (oldest first) and adds the past runs of
        every listed name the index lacks: its timed runs, oldest first, one per run (where a
        run lists a name twice, its first timed job, as the API's reader keeps), with how
        each ended; its ``previous_text`` from ``previous_texts`` by name."""
        self.runs[workflow_path] = tuple(tuple(r) for r in runs)
        timed: dict[str, list[RunJob]] = {}
        for run in runs:
            seen: set[str] = set()
            for job in run:
                if job.seconds is not None and job.name not in seen:
                    seen.add(job.name)
                    timed.setdefault(job.name, []).append(job)
        texts = previous_texts or {}
        for name, jobs in timed.items():
            if (workflow_path, name) not in self.jobs:
                ends = tuple(j.conclusion for j in jobs)
                self.jobs[(workflow_path, name)] = PastRuns(
                    tuple(j.seconds for j in jobs if j.seconds is not None), texts.get(name),
                    conclusions=ends if any(ends) else ())
