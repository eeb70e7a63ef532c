"""Read GitHub Actions workflow files into :class:`~laser_ci.workflows.model.Workflow` objects.

The reader works over a *file source*: anything with ``get(path) -> str | bytes | None``
keyed by repo-relative paths (a dict of a run's files, or :class:`DiskFiles` over a
checkout). That lets the CLI, the Action (files fetched at a ref) and the training data
(files at a commit) share one code path.

What it does, following GitHub's documented behaviour:

- YAML 1.2 scalars, duplicate keys reported, bounded loading (see :mod:`yamlload`).
- Every job expanded to its matrix instances (:mod:`matrix`); ``${{ matrix.* }}`` and
  ``${{ inputs.* }}`` substituted where static (:mod:`expressions`); a matrix computed at
  run time is one instance, marked ``dynamic_matrix``.
- Local reusable workflows (``uses: ./.github/workflows/x.yml``) nested under the caller
  (ids ``caller/called``, names ``Caller / Called``); remote ones kept opaque.
- Local composite actions (``uses: ./path``) inlined into ``Step.composite``.
- Display names as GitHub's checks list shows them (:mod:`names`), with the parts only
  known at run time spelled out (``JobInstance.name_parts``).
- Every field GitHub evaluates before a run through the one evaluator
  (:mod:`expressions`): names, ``runs-on``, ``timeout-minutes`` and ``strategy`` over
  ``matrix``, ``inputs`` (the caller's ``with:``, then the called workflow's defaults),
  ``github.event_name`` (one of the triggers) and ``strategy``; ``if:`` per trigger
  (``JobInstance.events``). A value only the run knows keeps its expression as written, and
  ``JobInstance.run_time`` says what it depends on. The rest of a job's body, which the
  serialized text shows, has plain references substituted only, as it always had.

Nothing here raises on bad input: problems become :class:`ReadError` entries.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from laser_ci.workflows import names
from laser_ci.workflows.expressions import (
    FullContext,
    Unknown,
    as_written,
    condition,
    evaluate_value,
    has_expression,
    is_known,
    string_condition,
    to_text,
    unknown_refs,
)
from laser_ci.workflows.files import (
    DiskFiles,
    FileSource,
    as_dot_slash,
    is_local,
    local_target,
    normalize,
    origin_repository,
    own_repository_target,
    root_of,
    workflow_targets,
)
from laser_ci.workflows.graph import check_needs, skip_after
from laser_ci.workflows.matrix import expand_matrix
from laser_ci.workflows.model import JobInstance, ReadError, Step, Workflow
from laser_ci.workflows.names import MAX_NAME_LENGTH, display_name, matrix_suffix
from laser_ci.workflows.references import substitute
from laser_ci.workflows.run_context import (
    ASSUMED_PULL_REQUEST,
    INPUT_EVENTS,
    PULL_REQUEST_EVENTS,
    event_payload,
    github_context,
    input_defaults,
    input_refs,
    pick_event,
)
from laser_ci.workflows.schema import check_workflow
from laser_ci.workflows.yamlload import LoadResult, YDict, load_yaml

__all__ = ["MAX_CALL_DEPTH", "MAX_NAME_LENGTH", "PULL_REQUEST_EVENTS", "DiskFiles",
           "FileSource", "display_name", "matrix_suffix", "normalize",
           "origin_repository", "pick_event", "read_paths", "read_workflows", "root_of",
           "skip_after", "triggers_of", "workflow_targets"]

# "You can connect a maximum of four levels of workflows - that is, the top-level caller
# workflow and up to three levels of reusable workflows" (GitHub docs, Reuse workflows).
MAX_CALL_DEPTH = 4
MAX_ACTION_DEPTH = 8
# Work bound: values copied into job instances per workflow (job size x matrix instances,
# called workflows included). Past it a job is read as one instance and calls are not
# followed, so a 2 MB file cannot take minutes (a 20,000-value job x 256 instances would).
MAX_EXPANDED_NODES = 500_000
# "If a `default` parameter is not set, the default value of the input is `false` for a
# boolean, `0` for a number, and `""` for a string" (GitHub docs, on.workflow_call.inputs).
_TYPE_DEFAULTS: dict[str, Any] = {"boolean": False, "number": 0, "string": ""}


def triggers_of(on: Any) -> list[str]:
    if isinstance(on, str):
        return [on]
    if isinstance(on, list):
        return [str(x) for x in on if isinstance(x, (str, int, float))]
    if isinstance(on, dict):
        return [str(k) for k in on]
    return []


_UNSHOWN = object()  # by_trigger: no trigger's value is the one shown


def _of_event(refs: Sequence[str]) -> bool:
    """Whether unknown ``refs`` include the run's event (``github.event_name``,
    ``github.event.*``), which differs by trigger."""
    return any(r.lower() == "github.event_name" or r.lower().startswith("github.event.")
               for r in refs)


def _line(mapping: Any, key: Any) -> int | None:
    return mapping.line_of(key) if isinstance(mapping, YDict) else None


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _string_step_ifs(steps: Any) -> tuple[str, ...]:
    """The steps (by name, id, action or number, as written) whose `if:` GitHub reads as
    text, true whatever it spells (:func:`~laser_ci.workflows.expressions.string_condition`):
    ``if: contains(${{ matrix.os }}, 'ubuntu')``."""
    if not isinstance(steps, list):
        return ()
    out = []
    for n, step in enumerate(steps, 1):
        if isinstance(step, dict) and string_condition(step.get("if")) is not None:
            label = next((str(step[k]) for k in ("name", "id", "uses")
                          if isinstance(step.get(k), str) and step[k].strip()), f"step {n}")
            out.append(label)
    return tuple(out)


def _kind_of(value: Any) -> str:
    """A YAML value's kind in words."""
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else type(value).__name__


def _may_add_files(step: Step) -> bool:
    """Whether a step may leave files in the workspace that the repository does not hold:
    any script or action, except a checkout of the repository itself as it is."""
    if step.run is not None:
        return True
    if not step.uses:
        return False
    if is_local(step.uses):  # a composite action by its steps; any other runs code
        return step.composite is None or any(_may_add_files(s) for s in step.composite)
    if step.uses.split("@", 1)[0].lower() == "actions/checkout":
        return any(k in step.with_ for k in ("repository", "ref", "path", "sparse-checkout",
                                             "submodules", "lfs"))
    return True


def _count_nodes(value: Any, limit: int) -> int:
    """Nodes of a value (aliases counted each time they appear), counting stops past ``limit``."""
    count, stack = 0, [value]
    while stack and count <= limit:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


@dataclass
class _Call:
    """Where a job list is being expanded: the caller chain of a reusable workflow.

    ``inputs``: the ``inputs`` context of its jobs (values only known at run time are
    :class:`Unknown`); ``group_inputs`` the same with the caller's matrix unknown, for the
    name shared by all instances of a job definition. ``github``: the ``github`` context
    (the top-level workflow's), ``triggers`` its events, ``events`` those the caller runs on.
    """

    path: str
    id_prefix: str = ""
    written_prefix: str = ""
    name_prefix: names.Parts = ()
    group_prefix: names.Parts = ()
    inputs: dict[str, Any] | None = None
    group_inputs: dict[str, Any] | None = None
    github: dict[str, Any] = field(default_factory=dict)
    triggers: tuple[str, ...] = ()
    events: tuple[str, ...] | None = None
    chain: tuple[str, ...] = ()


def _settle(evaluated: Any, written: Any) -> Any:
    """The value to keep for a field: the evaluated one when known, else as written (plain
    references substituted), as the serialized text has always shown it."""
    return evaluated if is_known(evaluated) else written


_KEPT_BYTES = 256 * 1024  # files up to this size are loaded once per process (_loaded)


@functools.lru_cache(maxsize=128)
def _loaded(raw: str | bytes) -> LoadResult:
    """:func:`load_yaml` of a file text, once per process for the last 128 texts: the
    readers treat what it loads as read-only (one reader already shares a called workflow's
    document among its callers), and a repository's history reads the same files at every
    commit that left them alone (a busy repository's collected runs, ``estimate
    --history``)."""
    return load_yaml(raw)


class _Reader:
    def __init__(self, files: FileSource, repository: str | None = None,
                 event: str | None = None, payload: Mapping[str, Any] | None = None,
                 schema: bool = True) -> None:
        self.files = files
        self.schema = schema
        self.repository, self.event, self.payload = repository, event, payload
        self.cache: dict[str, LoadResult] = {}
        self.actions: dict[str, bool] = {}  # local action folder -> has an action file
        self.checked: set[str] = set()  # files checked against the schema (once each)
        self.errors: list[ReadError] = []
        self.budget = MAX_EXPANDED_NODES  # reset for each workflow read

    # -- loading -------------------------------------------------------------------------
    def load(self, path: str) -> LoadResult | None:
        if path not in self.cache:
            raw = self.files.get(path)
            if raw is None:
                return None
            self.cache[path] = _loaded(raw) if len(raw) <= _KEPT_BYTES else load_yaml(raw)
        return self.cache[path]

    def error(self, path: str, line: int | None, message: str) -> None:
        err = ReadError(path, line, message)
        if err not in self.errors:
            self.errors.append(err)

    def document(self, path: str, *, display: str | None = None) -> YDict | None:
        """Load a workflow file and check its top-level shape; report problems."""
        shown = display or path
        result = self.load(path)
        if result is None:
            why = getattr(self.files, "why_missing", None)
            self.error(shown, None, (why(path) if why else None) or "no such file")
            return None
        if result.error:
            self.error(shown, result.error_line, result.error)
            return None
        for line, message in result.duplicates:
            self.error(shown, line, message)
        doc = result.data
        if not isinstance(doc, dict):
            kind = type(doc).__name__ if doc is not None else "empty"
            self.error(shown, 1, f"top level is a {kind}, expected a mapping with `jobs:`")
            return None
        jobs = doc.get("jobs")
        if not isinstance(jobs, dict) or not jobs:
            if "jobs" not in doc:
                why = "no `jobs:`: a workflow needs at least one job"
            elif isinstance(jobs, dict) or jobs is None:
                why = "`jobs:` is empty: a workflow needs at least one job"
            else:
                why = f"`jobs:` is a {_kind_of(jobs)}, not a mapping of job ids to jobs"
            self.error(shown, _line(doc, "jobs") or 1, why)
            return None
        assert isinstance(doc, YDict)
        if self.schema and shown not in self.checked:  # called by every instance: once
            self.checked.add(shown)
            for err in check_workflow(shown, doc):  # what GitHub refuses: said, still read
                self.error(err.path, err.line, err.message)
        return doc

    # -- workflows -----------------------------------------------------------------------
    def read(self, path: str) -> Workflow | None:
        doc = self.document(path)
        if doc is None:
            return None
        self.budget = MAX_EXPANDED_NODES
        on = doc.get("on")
        wf = Workflow(
            path=path,
            name=to_text(doc.get("name")) if doc.get("name") not in (None, "") else path,
            on=on,
            triggers=triggers_of(on),
            env=_as_dict(doc.get("env")),
            defaults=doc.get("defaults"),
            concurrency=doc.get("concurrency"),
            permissions=doc.get("permissions"),
        )
        # Read on its own, a callable workflow sees its inputs' defaults, a dispatched one
        # what the user types; a run of another event has no inputs.
        triggers = tuple(wf.triggers)
        inputs: dict[str, Any] = input_defaults(on)
        if self.event in triggers and self.event not in INPUT_EVENTS:
            inputs = FullContext({})
        wf.jobs = self.expand_jobs(doc, _Call(path=path, chain=(path,), inputs=inputs,
                                              group_inputs=inputs, triggers=triggers,
                                              github=github_context(
                                                  triggers, self.repository, self.event,
                                                  self.payload)))
        for err in check_needs(wf):
            self.error(err.path, err.line, err.message)
        return wf

    def expand_jobs(self, doc: YDict, call: _Call) -> list[JobInstance]:
        out: list[JobInstance] = []
        jobs = doc["jobs"]
        for job_id, job in jobs.items():
            line = _line(jobs, job_id)
            if not isinstance(job, dict):
                self.error(call.path, line, f"job '{job_id}' is not a mapping")
                continue
            out.extend(self.expand_job(str(job_id), job, line, call))
        return out

    def expand_job(self, job_id: str, job: dict[str, Any], line: int | None,
                   call: _Call) -> list[JobInstance]:
        inputs = call.inputs or {}
        # Known before the strategy is evaluated: inputs and github; matrix.* are not.
        before = {"inputs": inputs, "github": call.github}
        strategy = _as_dict(job.get("strategy"))
        written_strategy = substitute({k: v for k, v in strategy.items() if k != "matrix"},
                                      {"inputs": inputs})
        strategy_values = {k: _settle(evaluate_value(strategy[k], before), v)
                           for k, v in written_strategy.items()}
        needs_raw = job.get("needs")
        needs = [needs_raw] if isinstance(needs_raw, str) else (
            [str(n) for n in needs_raw if isinstance(n, (str, int))]
            if isinstance(needs_raw, list) else [])
        events = self.job_events(job.get("if"), call, bool(needs))  # `if:` reads no matrix
        raw_matrix = strategy.get("matrix")
        shown: list[tuple[str, ...]] = []
        matrix_refs: tuple[str, ...] = ()
        if raw_matrix is not None:
            evaluated = evaluate_value(raw_matrix, before)
            matrix_refs = unknown_refs(evaluated)
            if _of_event(matrix_refs) and events != ():  # as per_event shows a runs-on
                on_shown = self.on_shown_event(raw_matrix, before, call, events)
                if on_shown is not None:
                    evaluated = on_shown
                    matrix_refs = unknown_refs(evaluated)
            raw_matrix = as_written(evaluated)
            expansion = expand_matrix(raw_matrix)
            if expansion.error:
                self.error(call.path, _line(strategy, "matrix") or line,
                           f"job '{job_id}': {expansion.error}")
            combos, dynamic = expansion.combos or [{}], expansion.dynamic
            # A static matrix is the whole matrix context: a key it lacks is null.
            known = not dynamic and not expansion.error
            shown = expansion.shown if known else []
        else:
            # No strategy: GitHub sets the matrix context to null.
            combos, dynamic, known = [{}], False, True

        size = _count_nodes(job, self.budget)
        if len(combos) > 1 and size * len(combos) > self.budget:
            self.error(call.path, line, f"job '{job_id}': {len(combos)} matrix instances of "
                       f"{size:,} values each are too many to expand (at most "
                       f"{MAX_EXPANDED_NODES:,} per workflow); read as one job")
            combos, known, shown = [{}], False, []
        self.budget -= size * len(combos)

        if_inputs = self.if_inputs(job.get("if"), call) if events != () else ()
        # A job whose `if:` is false on every trigger is skipped before its matrix is
        # expanded: GitHub shows one check, its name as written (actions/runner#952;
        # `test (${{ matrix.os }})`, or the plain name without a suffix).
        unexpanded = events == () and raw_matrix is not None and not dynamic
        if unexpanded:
            combos, known, shown = [{}], False, []
        # The name all instances share: the matrix unknown, inputs as for any instance.
        group_ctx = {"inputs": call.group_inputs or {}, "github": call.github}
        group_parts = names.name_parts(job_id, job.get("name"), group_ctx,
                                       dynamic=raw_matrix is not None, matrix_refs=matrix_refs)
        group = names.label(names.join(call.group_prefix, group_parts) if call.group_prefix
                            else group_parts)

        out: list[JobInstance] = []
        for index, combo in enumerate(combos):
            matrix_ctx: dict[str, Any] = FullContext(combo) if known else dict(combo)
            ctx: dict[str, Any] = {"matrix": matrix_ctx, "inputs": inputs, "github": call.github}
            if known and raw_matrix is not None:
                ctx["strategy"] = {"job-index": index, "job-total": len(combos)}
            written = substitute({k: v for k, v in job.items() if k != "strategy"},
                                 {"matrix": matrix_ctx, "inputs": inputs})
            keys = shown[index] if index < len(shown) else None
            name = display_name(job_id, job.get("name"), matrix_ctx, inputs, suffix_keys=keys,
                                contexts=ctx)
            parts = names.name_parts(job_id, job.get("name"), ctx, suffix_keys=keys,
                                     dynamic=dynamic, matrix_refs=matrix_refs)
            runs_on = evaluate_value(job.get("runs-on"), ctx)
            runs_on, by_event = self.per_event(job.get("runs-on"), runs_on, ctx, call, events)
            timeout = evaluate_value(job.get("timeout-minutes"), ctx)
            if unexpanded:  # the name as GitHub shows it: never evaluated, nothing to learn
                parts = (name,)
            full = names.join(call.name_prefix, parts) if call.name_prefix else parts
            run_time = {"name": names.refs(full), "runs-on": unknown_refs(runs_on),
                        "matrix": matrix_refs if dynamic else (),
                        "timeout-minutes": unknown_refs(timeout)}
            instance = JobInstance(
                id=call.id_prefix + job_id,
                name=call.written_prefix + name,
                runs_on=_settle(runs_on, written.get("runs-on")),
                matrix=dict(combo),
                dynamic_matrix=dynamic,
                needs=[call.id_prefix + n for n in needs],
                if_=written.get("if"),
                timeout_minutes=_settle(timeout, written.get("timeout-minutes")),
                continue_on_error=written.get("continue-on-error"),
                container=written.get("container"),
                services=_as_dict(written.get("services")),
                env=_as_dict(written.get("env")),
                defaults=written.get("defaults"),
                environment=written.get("environment"),
                concurrency=written.get("concurrency"),
                permissions=written.get("permissions"),
                outputs=written.get("outputs"),
                fail_fast=strategy_values.get("fail-fast"),
                max_parallel=strategy_values.get("max-parallel"),
                line=line,
                with_=_as_dict(written.get("with")),
                group=group,
                run_time={} if unexpanded else {k: v for k, v in run_time.items() if v},
                events=events,
                raw_if=job.get("if"),
                string_step_ifs=_string_step_ifs(job.get("steps")),
                if_inputs=if_inputs,
                runs_on_by_event=by_event,
            )
            instance.name_parts = () if names.is_known(full) else full
            uses = written.get("uses")
            if isinstance(uses, str) and uses.strip():
                out.extend(self.call_workflow(instance, uses.strip(), job, ctx, group_ctx, call,
                                              full))
                continue
            instance.steps = self.read_steps(written.get("steps"), call.path,
                                             _line(job, "steps"), depth=0)
            out.append(instance)
        return out

    def job_events(self, if_: Any, call: _Call, has_needs: bool) -> tuple[str, ...] | None:
        """The triggers on which a job's ``if:`` may let it run (None: all of them)."""
        if if_ is None:
            return call.events
        # Before the run, the jobs a job needs are taken to succeed or fail: unknown.
        status = None if has_needs else {"success": True, "failure": False}
        ctx = {"inputs": call.inputs or {}, "github": call.github}
        event = call.github.get("event_name")
        if len(call.chain) == 1 and isinstance(event, str) and event not in INPUT_EVENTS:
            ctx["inputs"] = FullContext({})  # a run of this event has no inputs
        if not call.triggers or "workflow_call" in call.triggers or "event_name" not in call.github:
            runs = condition(if_, ctx, status=status) is not False
            mine: tuple[str, ...] | None = None if runs else ()
        else:
            # Only a dispatched (or called) run has inputs: on any other event a top-level
            # workflow's ``inputs`` context is empty, whatever defaults the dispatch form
            # declares. A called workflow has its caller's `with:` on every caller event.
            called = len(call.chain) > 1
            runs_of = (event,) if isinstance(event, str) else tuple(call.triggers)  # --event
            mine = tuple(t for t in runs_of
                         if condition(if_, {"inputs": ctx["inputs"] if called
                                            or t in INPUT_EVENTS else FullContext({}),
                                            "github": {"event": event_payload(t), **call.github,
                                                       "event_name": t}},
                                      status=status) is not False)
            if len(mine) == len(runs_of):
                mine = None
        if call.events is None:
            return mine
        return call.events if mine is None else tuple(t for t in call.events if t in mine)

    def per_event(self, written: Any, value: Any, ctx: dict[str, Any], call: _Call,
                  events: tuple[str, ...] | None) -> tuple[Any, dict[str, Any]]:
        """A value that depends on the event (``github.event_name``, ``github.event``)
        evaluated for each trigger the job runs on, a pull request's as it runs without
        labels unless its payload is known: one value when they agree; else the pull
        request run's (:func:`pick_event`) and every trigger's, by trigger."""
        if not _of_event(unknown_refs(value) if not is_known(value) else ()) \
                or call.github.get("event_name") is None:
            return value, {}
        shown, per = self.by_trigger(written, ctx, call, events, is_known)
        return (value if shown is _UNSHOWN else shown), per

    def by_trigger(self, written: Any, ctx: dict[str, Any], call: _Call,
                   events: tuple[str, ...] | None,
                   known: Callable[[Any], bool]) -> tuple[Any, dict[str, Any]]:
        """``written`` evaluated for each trigger the job runs on (``events``; --event's
        alone), kept where ``known``: the value shown (the one they agree on, else the
        pull request run's, :func:`pick_event`; :data:`_UNSHOWN` where there is none) and,
        where they differ, each trigger's."""
        name = call.github.get("event_name")
        triggers = [name] if isinstance(name, str) else list(
            events if events is not None else call.triggers)
        per = {t: one for t in triggers
               if known(one := evaluate_value(written, self.event_context(t, ctx, call)))}
        if isinstance(name, str):
            return per.get(name, _UNSHOWN), {}
        distinct = list({repr(v): v for v in per.values()}.values())
        if len(distinct) == 1 and len(per) == len(triggers):
            return distinct[0], {}
        pick = pick_event(tuple(per))
        return (per[pick] if pick is not None else _UNSHOWN), per

    @staticmethod
    def event_context(trigger: str, ctx: dict[str, Any], call: _Call) -> dict[str, Any]:
        """``ctx`` as in a run of ``trigger``: its ``github.event_name`` and ``github.event``
        (a pull request's without labels unless the payload is known), and no ``inputs``
        but where the trigger has them (or the workflow is called)."""
        called = len(call.chain) > 1
        inputs = ctx["inputs"] if called or trigger in INPUT_EVENTS else FullContext({})
        github = {**call.github, "event_name": trigger}
        if trigger in PULL_REQUEST_EVENTS and not call.github.get("event"):
            github["event"] = ASSUMED_PULL_REQUEST
        elif "event" not in call.github:
            github["event"] = event_payload(trigger)
        return {**ctx, "inputs": inputs, "github": github}

    def on_shown_event(self, written: Any, ctx: dict[str, Any], call: _Call,
                       events: tuple[str, ...] | None) -> Any:
        """A value that depends on the event (a matrix) as :meth:`per_event` shows a
        ``runs-on``; None where the event is not known. What it depends on besides the
        event may stay unknown (``github.ref`` in one entry)."""
        if call.github.get("event_name") is None:
            return None
        shown, _per = self.by_trigger(written, ctx, call, events,
                                      lambda v: not _of_event(unknown_refs(v)))
        return None if shown is _UNSHOWN else shown

    def if_inputs(self, if_: Any, call: _Call) -> tuple[str, ...]:
        """The inputs a user types (``workflow_dispatch``) that decide whether the job's
        ``if:`` lets it run: it may run, depending on them."""
        event = call.github.get("event_name")
        if if_ is None or len(call.chain) == 1 and (
                "workflow_dispatch" not in call.triggers
                or isinstance(event, str) and event != "workflow_dispatch"):
            return ()
        github = call.github if len(call.chain) > 1 else {**call.github,
                                                          "event_name": "workflow_dispatch"}
        result = condition(if_, {"inputs": call.inputs or {}, "github": github},
                           status={"success": True, "failure": False})
        return tuple(dict.fromkeys(input_refs(result))) if isinstance(result, Unknown) else ()

    # -- reusable workflows --------------------------------------------------------------
    def call_workflow(self, caller: JobInstance, uses: str, job: dict[str, Any],
                      ctx: dict[str, Any], group_ctx: dict[str, Any], call: _Call,
                      parts: names.Parts) -> list[JobInstance]:
        target = local_target(uses)
        by_name = target is None
        if by_name:  # OWNER/REPO/...@ref: this repository's file, read from the checkout
            target = own_repository_target(uses, call.github.get("repository"))
            if target is not None and self.load(target) is None:
                target = None  # not in the checkout (renamed since `ref`?): as GitHub reads it
        if target is None:
            caller.remote_workflow = uses
            return [caller]
        if caller.events == ():  # a call GitHub skips: one check, the caller's name alone
            return [caller]
        if target in call.chain:
            self.error(call.path, caller.line,
                       f"reusable workflow cycle: {' -> '.join(call.chain + (target,))}")
            return [caller]
        if self.budget <= 0:
            self.error(call.path, caller.line, f"reusable workflow {target} not read: the workflow "
                       f"expands to more than {MAX_EXPANDED_NODES:,} values")
            return [caller]
        if len(call.chain) >= MAX_CALL_DEPTH:
            self.error(call.path, caller.line,
                       f"reusable workflows nest deeper than {MAX_CALL_DEPTH} levels "
                       f"({' -> '.join(call.chain + (target,))})")
            return [caller]
        doc = self.document(target)
        if doc is None:
            self.error(call.path, caller.line, f"cannot read called workflow {target}")
            return [caller]
        with_ = _as_dict(job.get("with"))
        inputs = self.call_inputs(caller, target, doc, call.path, evaluate_value(with_, ctx))
        group_inputs = self.call_inputs(caller, target, doc, None,
                                        evaluate_value(with_, group_ctx))
        nested = _Call(
            path=target,
            id_prefix=caller.id + "/",
            name_prefix=parts,
            written_prefix=caller.name + " / ",
            group_prefix=(caller.group,),
            inputs=inputs,
            group_inputs=group_inputs,
            github=call.github,
            triggers=call.triggers,
            events=caller.events,
            chain=call.chain + (target,),
        )
        jobs = self.expand_jobs(doc, nested)
        for job_ in jobs:
            if job_.called_workflow is None:  # the file the job is defined in (innermost)
                job_.called_workflow = target
            if by_name and job_.called_as is None:
                job_.called_as = uses
            if with_ or caller.matrix:  # how this call runs it (laser_ci.workflows.same_job)
                job_.call_values = (repr([sorted(d.items(), key=lambda kv: str(kv[0]))
                                          for d in (caller.matrix, with_)]),
                                    *job_.call_values)
            job_.called_via = (target, *job_.called_via)
            job_.matrix = {**caller.matrix, **job_.matrix}
            job_.needs = list(dict.fromkeys(caller.needs + job_.needs))
            job_.dynamic_matrix = job_.dynamic_matrix or caller.dynamic_matrix
            job_.line = caller.line if job_.line is None else job_.line
            if caller.dynamic_matrix and "matrix" in caller.run_time:
                job_.run_time = {**job_.run_time, "matrix": tuple(dict.fromkeys(
                    caller.run_time["matrix"] + job_.run_time.get("matrix", ())))}
        return jobs or [caller]

    def call_inputs(self, caller: JobInstance, target: str, doc: YDict, path: str | None,
                    given_values: dict[str, Any]) -> dict[str, Any]:
        """The ``inputs`` context of a called workflow: the caller's ``with:`` (values only
        known at run time are :class:`Unknown`), then the declared defaults. Reports what
        GitHub rejects when ``path`` is given."""
        on = doc.get("on")
        if path is not None and "workflow_call" not in triggers_of(on):
            self.error(path, caller.line, f"job '{caller.id}' calls {target}, which is not "
                                          "reusable: its `on` has no `workflow_call`")
        declared = _as_dict(_as_dict(_as_dict(on).get("workflow_call")).get("inputs"))
        given = {str(k).lower(): (str(k), v) for k, v in given_values.items()}
        inputs: dict[str, Any] = {}
        for name, spec in declared.items():
            spec = _as_dict(spec)
            if "default" in spec:
                inputs[str(name)] = spec["default"]
            elif str(spec.get("type")) in _TYPE_DEFAULTS:
                inputs[str(name)] = _TYPE_DEFAULTS[str(spec.get("type"))]
            if path is not None and spec.get("required") is True \
                    and str(name).lower() not in given:
                self.error(path, caller.line, f"job '{caller.id}' does not pass input "
                                              f"'{name}', which {target} requires")
        declared_names = {str(k).lower(): str(k) for k in declared}
        for lower, (name, value) in given.items():
            if lower not in declared_names:
                if path is not None:
                    self.error(path, caller.line, f"job '{caller.id}' passes input '{name}', "
                                                  f"which {target} does not declare")
                continue
            # A value known only at run time stays an Unknown: expressions over it are
            # unknown too, and say what they depend on.
            inputs[declared_names[lower]] = value
        return inputs

    # -- steps and composite actions -----------------------------------------------------
    def read_steps(self, steps: Any, path: str, line: int | None, depth: int,
                   made: bool = False) -> list[Step]:
        """The steps; ``made``: whether an earlier step (of the job calling this composite
        action) may have added files to the workspace (:func:`_may_add_files`)."""
        if steps is None:
            return []
        if not isinstance(steps, list):
            if not any(e.path == path and e.line == line and "steps:" in e.message
                       for e in self.errors):  # the schema said it already
                self.error(path, line, "`steps` is not a list")
            return []
        out: list[Step] = []
        for raw in steps:
            if not isinstance(raw, dict):
                self.error(path, line, "a step is not a mapping")
                continue
            uses = to_text(raw["uses"]).strip() if raw.get("uses") is not None else None
            # `$/x` is read at the running commit, whatever earlier steps did; the step
            # keeps it as `./x`, the form the job text has always shown
            pinned = uses is not None and uses.startswith("$/")
            step = Step(
                name=to_text(raw["name"]) if raw.get("name") is not None else None,
                id=to_text(raw["id"]) if raw.get("id") is not None else None,
                uses=as_dot_slash(uses) if uses is not None else None,
                run=to_text(raw["run"]) if raw.get("run") is not None else None,
                with_=_as_dict(raw.get("with")),
                env=_as_dict(raw.get("env")),
                shell=to_text(raw["shell"]) if raw.get("shell") is not None else None,
                working_directory=(to_text(raw["working-directory"])
                                   if raw.get("working-directory") is not None else None),
                if_=raw.get("if"),
                timeout_minutes=raw.get("timeout-minutes"),
                continue_on_error=raw.get("continue-on-error"),
            )
            if step.uses and step.uses.startswith("./") and depth < MAX_ACTION_DEPTH:
                step.composite = self.read_action(step, depth, made and not pinned)
                if ((pinned or not made) and getattr(self.files, "known_root", True)
                        and not has_expression(step.uses) and not self.has_action(step.uses)):
                    self.error(path, _line(raw, "uses") or line,
                               f"local action {uses} not found: no action.yml, "
                               "action.yaml or Dockerfile there (GitHub fails the job at "
                               "this step)")
            made = made or _may_add_files(step)
            out.append(step)
        return out

    def has_action(self, uses: str) -> bool:
        base = normalize(uses)
        if base not in self.actions:  # once per folder: a matrix repeats its steps
            self.actions[base] = any(
                self.files.get(f"{base}/{name}" if base else name) is not None
                for name in ("action.yml", "action.yaml", "Dockerfile"))
        return self.actions[base]

    def read_action(self, step: Step, depth: int, made: bool = False) -> list[Step] | None:
        base = normalize(step.uses or "")
        for name in ("action.yml", "action.yaml"):
            path = f"{base}/{name}" if base else name
            result = self.load(path)
            if result is None:
                continue
            doc = result.data
            if result.error or not isinstance(doc, dict):
                self.error(path, result.error_line, result.error or "action file is not a mapping")
                return None
            runs = _as_dict(doc.get("runs"))
            if str(runs.get("using", "")).lower() != "composite":
                return None
            inputs = {str(k): v.get("default") for k, v in _as_dict(doc.get("inputs")).items()
                      if isinstance(v, dict) and "default" in v}
            inputs.update({str(k): v for k, v in step.with_.items() if not has_expression(v)})
            size = _count_nodes(runs.get("steps"), max(self.budget, 0))
            if size > self.budget:
                self.error(path, _line(runs, "steps"), "composite action not inlined: the "
                           f"workflow expands to more than {MAX_EXPANDED_NODES:,} values")
                return None
            self.budget -= size
            steps = substitute(runs.get("steps"), {"inputs": inputs})
            return self.read_steps(steps, path, _line(runs, "steps"), depth + 1, made)
        return None


def read_workflows(files: FileSource, targets: Sequence[str], *, repository: str | None = None,
                   event: str | None = None, payload: Mapping[str, Any] | None = None,
                   schema: bool = True) -> tuple[list[Workflow], list[ReadError]]:
    """Read each target workflow (repo-relative path) from ``files``. ``repository``
    (``owner/name``) is ``github.repository``; ``event``: read each workflow that has this
    trigger as a run of it (``github.event_name``; ``payload``: its ``github.event``),
    else over all its triggers. ``schema=False`` skips checking the files against what
    GitHub accepts, which only adds errors (for a reader of past runs that drops them)."""
    reader = _Reader(files, repository, event, payload, schema)
    workflows = [wf for t in targets if (wf := reader.read(normalize(t))) is not None]
    return workflows, reader.errors


def read_paths(paths: Sequence[str], repo_root: str | None = None
               ) -> tuple[list[Workflow], list[ReadError]]:
    """Read workflow files or folders from disk (default ``.github/workflows``)."""
    paths = list(paths) or [".github/workflows"]
    root = root_of(paths, repo_root)
    targets, errors = workflow_targets(paths, root)
    workflows, read_errors = read_workflows(DiskFiles(root, known_root=bool(repo_root) or None),
                                            targets)
    return workflows, errors + read_errors
