"""The domain model every pipeline stage shares: workflows, job instances, steps, errors.

Data flows one way::

    parse (YAML -> Workflow with JobInstances) -> serialize (JobInstance -> text)
    -> predict (text -> Runtime) -> size (runner, cost, advice) -> report (table/json/markdown)

These classes are plain data; the logic lives in the stage modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ReadError:
    """A problem with one input file. ``line`` is 1-based when known."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "message": self.message}


@dataclass
class Step:
    """One step of a job. ``composite`` holds the inlined steps of a local composite action."""

    name: str | None = None
    id: str | None = None
    uses: str | None = None
    run: str | None = None
    with_: dict[str, Any] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)
    shell: str | None = None
    working_directory: str | None = None
    if_: Any = None
    timeout_minutes: Any = None
    continue_on_error: Any = None
    composite: list[Step] | None = None


@dataclass(frozen=True)
class NameHole:
    """A part of a job's display name only known at run time. ``refs``: what it depends on;
    ``suffix``: the `` (v1, v2)`` GitHub appends for the values of a matrix computed at run
    time (absent when the matrix has no values to show)."""

    refs: tuple[str, ...] = ()
    suffix: bool = False


@dataclass
class JobInstance:
    """One job as GitHub runs it: a single matrix combination of one job definition.

    ``id`` is the job id in its workflow; for jobs of a called reusable workflow it is the
    chain ``caller/called``. ``name`` is the display name GitHub shows in the checks list.
    ``needs`` holds ids of jobs in the same workflow (already prefixed for nested jobs).

    Values only known at run time: ``name`` keeps their expressions as written and
    ``name_parts`` spells the name out (literal text and :class:`NameHole` parts; empty when
    the name is known); ``run_time`` maps a field (``name``, ``runs-on``, ``matrix``,
    ``timeout-minutes``) to the run-time references it depends on. ``group`` is the name
    of the job definition, shared by all its instances (``test (…)``). ``events``: the
    triggers on which ``if:`` lets the job run, when not all of them (``()``: never);
    ``skipped_after``: the job it needs that does not run, when that is why it never does.
    ``expanded``: an instance of a run-time matrix taken from the job's latest runs.
    """

    id: str
    name: str
    runs_on: Any = None
    matrix: dict[str, Any] = field(default_factory=dict)
    dynamic_matrix: bool = False
    needs: list[str] = field(default_factory=list)
    if_: Any = None
    timeout_minutes: Any = None
    continue_on_error: Any = None
    container: Any = None
    services: dict[str, Any] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    env: dict[str, Any] = field(default_factory=dict)
    defaults: Any = None
    environment: Any = None
    concurrency: Any = None
    permissions: Any = None
    outputs: Any = None
    fail_fast: Any = None
    max_parallel: Any = None
    line: int | None = None
    remote_workflow: str | None = None  # `uses: owner/repo/.github/workflows/x.yml@ref`, opaque
    called_workflow: str | None = None  # local reusable workflow path this job came from
    called_via: tuple[str, ...] = ()  # every local reusable workflow on the way, outermost first
    called_as: str | None = None  # `uses: OWNER/REPO/...@ref` of this repository, read locally
    call_values: tuple[str, ...] = ()  # each call's matrix values and `with:` on the way
    # that has them, as written (laser_ci.workflows.same_job)
    with_: dict[str, Any] = field(default_factory=dict)  # inputs given to a reusable workflow
    name_parts: tuple[str | NameHole, ...] = ()
    group: str = ""
    run_time: dict[str, tuple[str, ...]] = field(default_factory=dict)
    events: tuple[str, ...] | None = None
    skipped_after: str | None = None  # events == () as it needs this job, which does not run
    raw_if: Any = None  # the job's `if:` as written (``if_``: as the job text substitutes it)
    string_step_ifs: tuple[str, ...] = ()  # steps whose `if:` GitHub reads as text: always true
    if_inputs: tuple[str, ...] = ()  # dispatch inputs (`inputs.x`) that decide its `if:`
    runs_on_by_event: dict[str, Any] = field(default_factory=dict)  # trigger -> runs-on, where
    # `runs-on` depends on `github.event_name` and differs between the workflow's triggers
    expanded: bool = False
    runs_on_source: str | None = None  # "history": the runner labels of its latest run


@dataclass
class Workflow:
    """One workflow file after reading: its context and every job instance, in file order."""

    path: str
    name: str
    on: Any = None
    triggers: list[str] = field(default_factory=list)
    env: dict[str, Any] = field(default_factory=dict)
    defaults: Any = None
    concurrency: Any = None
    permissions: Any = None
    jobs: list[JobInstance] = field(default_factory=list)
    warnings: list[ReadError] = field(default_factory=list)


@dataclass(frozen=True)
class RepoProfile:
    """A one-line profile of the repository: file count, size, main languages."""

    n_files: int
    total_bytes: int
    by_ext: dict[str, tuple[int, int]] = field(default_factory=dict)
    top_level: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> RepoProfile | None:
        if not isinstance(data, dict):
            return None
        by_ext = {
            str(k): (int(v[0]), int(v[1]))
            for k, v in (data.get("by_ext") or {}).items()
            if isinstance(v, (list, tuple)) and len(v) == 2
        }
        return cls(
            n_files=int(data.get("n_files") or 0),
            total_bytes=int(data.get("total_bytes") or 0),
            by_ext=by_ext,
            top_level=tuple(str(x) for x in data.get("top_level") or ()),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "n_files": self.n_files,
            "total_bytes": self.total_bytes,
            "by_ext": {k: list(v) for k, v in self.by_ext.items()},
            "top_level": list(self.top_level),
        }
