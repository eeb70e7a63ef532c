"""Serialize a job instance (or a whole workflow) into the text the predictors read.

This is the model's input contract. ``tests/test_serialize.py`` pins it on a fixture:
change it only on purpose, together with a retrained model.

Format (one job, ``task: job``)::

    task: job
    workflow: <workflow name>
    file: <repo-relative path>
    on: <trigger>, <trigger>
    workflow-env: {K: v}            # only when set; also workflow-defaults/-concurrency
    job: <display name>
    history: none                   # or the block of laser_ci.text.history (earlier runs)
    runs-on: <value>
    matrix: {key: value}            # this instance's values; "dynamic" when unknown
    <job keys that exist: needs, if, environment, timeout-minutes, continue-on-error,
     container, services, env, defaults, concurrency, permissions, reusable-workflow, with>
    steps:
    - name: ...
      uses: owner/name@ref
      with: {k: v}
      run: |
        script lines
      steps:                        # inlined local composite action
      - ...
    repo: files=N size=S ext=.py:120,.md:30 top=pyproject.toml,src/,tests/

A whole workflow (``task: workflow``) has the same header, then per job definition a
``job:`` block with ``instances: N`` and the distinct runners and matrix values.

Every structured value is written as one-line YAML flow (file key order kept). Output is
deterministic: the same input gives the same bytes.

Truncation (``budget`` in tokens, counted by ``count_tokens``): first ``run:`` scripts
are shortened in the middle (head and tail kept, a ``# ... N lines cut ...`` marker in
between), longest first; then ``with``/``env`` values are shortened; the structure,
every ``uses:`` line and the job header are always kept. Only if that is still over
budget is the text cut at the end.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from laser_ci.text.history import History, history_lines
from laser_ci.workflows.expressions import to_text
from laser_ci.workflows.model import JobInstance, RepoProfile, Step, Workflow

DEFAULT_BUDGET = 2048
_TOKEN = re.compile(r"[0-9]|[A-Za-z]+|\n|[^\sA-Za-z0-9]")


def approx_tokens(text: str) -> int:
    """A tokenizer-free upper-bound estimate: digits, words and symbols count one each."""
    return len(_TOKEN.findall(text))


MAX_FLOW_ITEMS = 400  # scalars written per structured value before "..."
MAX_FLOW_STRING = 2000


def _flow(value: Any, limit: int | None = None) -> str:
    if isinstance(value, str):
        text = value if "\n" not in value else value.replace("\n", "\\n")
    elif value is None or isinstance(value, (bool, int, float)):
        text = to_text(value) if value is not None else "null"
    else:
        text = _dump(value)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 3, 0)] + "..."
    return text


_DUMPED: dict[int, tuple[Any, str]] = {}
_DUMPED_BY_REPR: dict[str, str] = {}
_MAX_REPR_KEY = 20_000  # longer values are not kept by content


def _dump(value: Any) -> str:
    """One-line YAML flow of a structure, bounded in size; cached while the value lives
    (a job is re-rendered several times while fitting the budget) and by content (``repr``
    tells apart every value that dumps differently: the matrix instances and callers of a
    reusable workflow repeat the same steps as distinct objects)."""
    hit = _DUMPED.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    key = repr(value)
    text = _DUMPED_BY_REPR.get(key) if len(key) <= _MAX_REPR_KEY else None
    if text is None:
        budget = [MAX_FLOW_ITEMS]
        try:
            text = yaml.safe_dump(_plain(value, 0, budget), default_flow_style=True,
                                  sort_keys=False, width=1 << 30, allow_unicode=True).strip()
        except yaml.YAMLError:
            text = str(value)[:MAX_FLOW_STRING]
        if text.endswith("\n..."):
            text = text[:-4].strip()
        if len(key) <= _MAX_REPR_KEY:
            if len(_DUMPED_BY_REPR) > 4096:
                _DUMPED_BY_REPR.clear()
            _DUMPED_BY_REPR[key] = text
    if len(_DUMPED) > 4096:
        _DUMPED.clear()
    _DUMPED[id(value)] = (value, text)
    return text


def _plain(value: Any, depth: int, budget: list[int]) -> Any:
    """A copy with only plain types, at most ``budget[0]`` scalars and short strings."""
    if depth > 32 or budget[0] <= 0:
        return "..."
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if budget[0] <= 0:
                out["..."] = "..."
                break
            out[str(k)[:MAX_FLOW_STRING]] = _plain(v, depth + 1, budget)
        return out
    if isinstance(value, list):
        items: list[Any] = []
        for v in value:
            if budget[0] <= 0:
                items.append("...")
                break
            items.append(_plain(v, depth + 1, budget))
        return items
    budget[0] -= 1
    if isinstance(value, str):
        return value[:MAX_FLOW_STRING]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)[:MAX_FLOW_STRING]


class _Limits:
    """Per-render truncation knobs, tightened until the text fits the budget."""

    def __init__(self) -> None:
        self.run_lines: int | None = None  # keep at most this many lines per script
        self.value_chars: int | None = None  # shorten with/env/... values


def _cut_middle(script: str, keep: int) -> str:
    lines = script.rstrip("\n").split("\n")
    if len(lines) <= keep:
        return "\n".join(lines)
    head = max(keep // 2, 1)
    tail = max(keep - head, 0)
    cut = len(lines) - head - tail
    kept = lines[:head] + [f"# ... {cut} lines cut ..."] + (lines[-tail:] if tail else [])
    return "\n".join(kept)


def _steps(steps: Sequence[Step], indent: str, lim: _Limits, out: list[str]) -> None:
    for step in steps:
        first = True

        def put(key: str, text: str) -> None:
            nonlocal first
            out.append(f"{indent}{'- ' if first else '  '}{key}:{' ' + text if text else ''}")
            first = False

        if step.name is not None:
            put("name", _flow(step.name, lim.value_chars))
        if step.id is not None:
            put("id", _flow(step.id))
        if step.if_ is not None:
            put("if", _flow(step.if_, lim.value_chars))
        if step.uses is not None:
            put("uses", step.uses)
        if step.with_:
            put("with", _flow(step.with_, lim.value_chars))
        if step.shell is not None:
            put("shell", step.shell)
        if step.working_directory is not None:
            put("working-directory", step.working_directory)
        if step.env:
            put("env", _flow(step.env, lim.value_chars))
        if step.timeout_minutes is not None:
            put("timeout-minutes", _flow(step.timeout_minutes))
        if step.continue_on_error is not None:
            put("continue-on-error", _flow(step.continue_on_error))
        if step.run is not None:
            script = step.run if lim.run_lines is None else _cut_middle(step.run, lim.run_lines)
            put("run", "|")
            out.extend(f"{indent}    {line}" if line else "" for line in
                       script.rstrip("\n").split("\n"))
        if step.composite is not None:
            put("steps", "(composite action)" if not step.composite else "")
            _steps(step.composite, indent + "  ", lim, out)
        if first:
            out.append(f"{indent}- {{}}")


def _profile_line(profile: RepoProfile) -> str:
    size = profile.total_bytes
    human = f"{size / 1e6:.1f}M" if size >= 1e6 else f"{size / 1e3:.0f}K"
    exts = sorted(profile.by_ext.items(), key=lambda kv: (-kv[1][0], kv[0]))[:8]
    ext = ",".join(f"{k}:{v[0]}" for k, v in exts)
    top = ",".join(profile.top_level[:30])
    return f"repo: files={profile.n_files} size={human} ext={ext} top={top}"


def _header(workflow: Workflow, task: str, lim: _Limits) -> list[str]:
    out = [f"task: {task}", f"workflow: {_flow(workflow.name, 200)}", f"file: {workflow.path}",
           f"on: {', '.join(workflow.triggers) if workflow.triggers else 'unknown'}"]
    for key, value in (("workflow-env", workflow.env), ("workflow-defaults", workflow.defaults),
                       ("workflow-concurrency", workflow.concurrency)):
        if value:
            out.append(f"{key}: {_flow(value, lim.value_chars)}")
    return out


_JOB_KEYS = (
    ("needs", "needs"), ("if", "if_"), ("environment", "environment"),
    ("timeout-minutes", "timeout_minutes"), ("continue-on-error", "continue_on_error"),
    ("container", "container"), ("services", "services"), ("env", "env"),
    ("defaults", "defaults"), ("concurrency", "concurrency"), ("permissions", "permissions"),
    ("fail-fast", "fail_fast"), ("max-parallel", "max_parallel"),
    ("reusable-workflow", "remote_workflow"), ("called-workflow", "called_workflow"),
    ("with", "with_"),
)


def _job_body(job: JobInstance, lim: _Limits, out: list[str]) -> None:
    for key, attr in _JOB_KEYS:
        value = getattr(job, attr)
        if value not in (None, "", [], {}):
            out.append(f"{key}: {_flow(value, lim.value_chars)}")
    if job.steps:
        out.append("steps:")
        _steps(job.steps, "", lim, out)


def _render_job(job: JobInstance, workflow: Workflow, profile: RepoProfile | None,
                lim: _Limits, history: History | None) -> str:
    out = _header(workflow, "job", lim)
    out.append(f"job: {_flow(job.name, 200)}")
    out.extend(history_lines(history))
    out.append(f"runs-on: {_flow(job.runs_on)}")
    if job.dynamic_matrix:
        out.append("matrix: dynamic")
    elif job.matrix:
        out.append(f"matrix: {_flow(job.matrix, lim.value_chars)}")
    _job_body(job, lim, out)
    if profile is not None:
        out.append(_profile_line(profile))
    return "\n".join(out) + "\n"


def _render_workflow(workflow: Workflow, profile: RepoProfile | None, lim: _Limits,
                     history: History | None) -> str:
    out = _header(workflow, "workflow", lim)
    out.extend(history_lines(history))
    groups: dict[str, list[JobInstance]] = {}
    for job in workflow.jobs:
        groups.setdefault(job.id, []).append(job)
    out.append(f"jobs: {len(groups)} definitions, {len(workflow.jobs)} instances")
    for job_id, instances in groups.items():
        first = instances[0]
        out.append(f"job: {_flow(job_id, 200)}")
        out.append(f"instances: {len(instances)}")
        runners = list(dict.fromkeys(_flow(j.runs_on) for j in instances))
        out.append(f"runs-on: {runners[0] if len(runners) == 1 else '; '.join(runners)}")
        if first.dynamic_matrix:
            out.append("matrix: dynamic")
        elif first.matrix:
            out.append(f"matrix: {_flow([j.matrix for j in instances], lim.value_chars)}")
        _job_body(first, lim, out)
    if profile is not None:
        out.append(_profile_line(profile))
    return "\n".join(out) + "\n"


def _fit(render: Callable[[_Limits], str], budget: int,
         count_tokens: Callable[[str], int]) -> str:
    lim = _Limits()
    text = render(lim)
    if count_tokens(text) <= budget:
        return text
    for keep in (60, 30, 16, 8, 4, 2):
        lim.run_lines = keep
        text = render(lim)
        if count_tokens(text) <= budget:
            return text
    for chars in (200, 80, 30):
        lim.value_chars = chars
        text = render(lim)
        if count_tokens(text) <= budget:
            return text
    return _hard_cut(text, budget, count_tokens)


def _hard_cut(text: str, budget: int, count_tokens: Callable[[str], int]) -> str:
    """Keep the longest prefix of lines that fits, and the ``repo:`` profile line."""
    marker = "\n# ... truncated ...\n"
    lines = text.rstrip("\n").split("\n")
    tail = ""
    if lines and lines[-1].startswith("repo: "):
        tail = lines.pop() + "\n"
    room = budget - count_tokens(marker) - count_tokens(tail)
    lo, hi = 0, len(lines)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens("\n".join(lines[:mid])) <= room:
            lo = mid
        else:
            hi = mid - 1
    return "\n".join(lines[:lo]) + marker + tail


def serialize_job(job: JobInstance, workflow: Workflow, profile: RepoProfile | None = None,
                  *, history: History | None = None, budget: int = DEFAULT_BUDGET,
                  count_tokens: Callable[[str], int] = approx_tokens) -> str:
    """The text of one job instance (see the module docstring)."""
    return _fit(lambda lim: _render_job(job, workflow, profile, lim, history), budget,
                count_tokens)


def serialize_workflow(workflow: Workflow, profile: RepoProfile | None = None,
                       *, history: History | None = None, budget: int = DEFAULT_BUDGET,
                       count_tokens: Callable[[str], int] = approx_tokens) -> str:
    """The text of a whole workflow, for predicting the sum over its jobs."""
    return _fit(lambda lim: _render_workflow(workflow, profile, lim, history), budget,
                count_tokens)


def serialize_raw(path: str, text: str, profile: RepoProfile | None = None, *,
                  history: History | None = None, budget: int = DEFAULT_BUDGET,
                  count_tokens: Callable[[str], int] = approx_tokens) -> str:
    """Fallback for a file the parser rejected: the header and the raw text (a text model
    can still read it)."""
    head = "task: workflow\nfile: " + path + "\n" + "\n".join(history_lines(history)) + "\nraw: |\n"
    body = "".join(f"  {line}\n" for line in text.split("\n"))
    tail = (_profile_line(profile) + "\n") if profile is not None else ""
    full = head + body + tail
    if count_tokens(full) <= budget:
        return full
    return _hard_cut(full, budget, count_tokens)
