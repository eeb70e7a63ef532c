"""``laser-ci estimate``: read workflows, predict every job, size it, and report.

The pipeline: parse -> (with history) the instances of matrices computed at run time
(:mod:`laser_ci.workflows.runtime_matrix`) -> serialize, with each job's own history ->
predict -> size -> report dict.

The result is a plain JSON-able dict (documented in the README, stable)::

    {"predictor": name,
     "workflows": [{"path", "name", "triggers", "called_only", "called_by",
                    "jobs": [{"id", "name", "label", "group", "line", "runs_on", "matrix",
                              "dynamic_matrix", "expanded", "run_time", "runs_on_events",
                              "runs_on_by_event", "if_inputs", "skipped_after", "needs",
                              "timeout_minutes", "remote_workflow", "called_workflow",
                              "called_as",
                              "runtime_s": {"p10", "p50", "p90"}, "history_runs",
                              "history_source", ...sizing fields}],
                    "critical_path_s", "billable_s", ...}],
     "errors": [{"path", "line", "message"}],
     "event": the trigger whose run each workflow that has it is read as (--event), or null}

History for a job is matched by its exact display name (``history_source: "own"``); a job
with none under its own name has the runs of the same job run another way, if any
(:mod:`laser_ci.workflows.same_job`: a reusable workflow's job run on its own or called
from another workflow; ``history_as``: the ``path`` and ``name`` its runs are under, else
null). With successful runs of its own it is predicted from them (:mod:`laser_ci.predictors.own_runs`;
the predictor is not asked about it), else by the predictor from its history block. A job
without runs of its own is predicted from the closest evidence the repository has
(:mod:`laser_ci.predictors.evidence`): the other instances of its matrix (``siblings``,
static matrices and those computed at run time), the other jobs of its workflow
(``workflow``; the repository's jobs alike to it, in its workflow or another, where any
is) or the repository's other workflows (``repository``), with the band calibrated for
that evidence; ``history_source`` null: a cold guess. ``evidence_runs``: how many earlier
runs that evidence rests on, ``evidence_elsewhere``: whether every one of them is of other
workflows' jobs (both null for ``own`` and cold);
``history_runs``: the job's own runs in its history block (null but for ``own``). A job
without measured usage gets ``usage.predicted`` from a model that writes usage after the
runtime (one ``laser-ci finetune`` learned from measured runs).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from laser_ci.predictors.base import Predictor, Runtime, predicts_runner_sizes
from laser_ci.report import plain
from laser_ci.sizing.advice import (
    SIZES_NOT_PREDICTED,
    Needs,
    PredictOn,
    advise,
    condition_advice,
    step_condition_advice,
)
from laser_ci.sizing.cost import (
    MAX_RATE,
    MAX_RUNS_PER_MONTH,
    combine,
    cost_assumptions,
    cost_job,
    load_runner_prices,
    summarize,
)
from laser_ci.sizing.runners import resolve_runner
from laser_ci.sizing.schedule import estimate_monthly_runs
from laser_ci.sizing.usage import (
    predicted_advice,
    usage_advice,
    usage_from_rows,
    usage_summary,
    with_usage,
)
from laser_ci.text.history import Failures, HistoryIndex, PastRuns, RunJob
from laser_ci.text.serialize import serialize_job
from laser_ci.workflows import names, runtime_matrix
from laser_ci.workflows.graph import critical_path
from laser_ci.workflows.model import JobInstance, ReadError, RepoProfile, Workflow
from laser_ci.workflows.parse import (
    DiskFiles,
    FileSource,
    origin_repository,
    read_workflows,
    root_of,
    skip_after,
    workflow_targets,
)
from laser_ci.workflows.repo_profile import profile_dir

if TYPE_CHECKING:
    from laser_ci.predictors.evidence import Resolved


def _json_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no Infinity/NaN
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


@dataclass(frozen=True)
class SizingOptions:
    """What cost figures depend on: ``visibility`` None means unknown (priced as private)."""

    visibility: str | None = None
    runs_per_month: float | None = None
    self_hosted_rate: float = 0.0
    # what the run is (issue 50): ``github.repository`` (owner/name), the trigger whose run
    # is estimated (None: all the workflow's), prices of runners not in GitHub's catalog
    repository: str | None = None
    event: str | None = None
    runner_prices: Mapping[str, float] | None = None
    event_payload: Mapping[str, Any] | None = None  # github.event of a run of `event`


def _needs_docker(job: JobInstance) -> bool:
    runs = " ".join(s.run or "" for s in job.steps)
    return bool(job.container or job.services) or "docker " in runs


def _job_json(job: JobInstance, runtime: Runtime) -> dict[str, Any]:
    return {
        "id": job.id,
        "name": job.name,
        "label": names.label(job.name_parts) if job.name_parts else job.name,
        "group": job.group or job.name,
        "line": job.line,
        "runs_on": _json_value(job.runs_on),
        "matrix": _json_value(job.matrix),
        "dynamic_matrix": job.dynamic_matrix,
        "expanded": job.expanded,
        "run_time": {k: list(v) for k, v in job.run_time.items()},
        "runs_on_events": None if job.events is None else list(job.events),
        "runs_on_by_event": {k: _json_value(v) for k, v in job.runs_on_by_event.items()} or None,
        "if_inputs": list(job.if_inputs),
        "skipped_after": job.skipped_after,
        "needs": list(job.needs),
        "timeout_minutes": _json_value(job.timeout_minutes),
        "remote_workflow": job.remote_workflow,
        "called_workflow": job.called_workflow,
        "called_as": job.called_as,
        "runtime_s": runtime.to_json(),
        "definition": _definition(job),
    }  # + "history_runs": earlier runs the prediction saw (None: cold start), "history_source"
    # and "history_failures": how its own earlier runs ended (Failures.to_json; None: unknown)
    # and "usage": its measured runs' p50/p90 per measure (laser_ci.sizing.usage.usage_summary),
    # with "predicted" where none is measured and the model writes usage (_predicted_usage)


def _definition(job: JobInstance) -> str:
    """A fingerprint of the job as written (steps, runner, matrix values, ...), not of where
    it sits in its file: the PR comment shows a job whose fingerprint is the same at head and
    base as unchanged, whatever its neighbours did to its prediction."""
    def strip(x: Any) -> Any:  # dataclasses.asdict, less its copies, without "line"
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            return {f.name: strip(getattr(x, f.name)) for f in dataclasses.fields(x)
                    if f.name != "line"}
        if isinstance(x, dict):
            return {str(k): strip(v) for k, v in x.items() if k != "line"}
        if isinstance(x, (list, tuple)):
            return [strip(v) for v in x]
        return x

    data = json.dumps(strip(job), sort_keys=True, default=repr)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]


class _OtherRunners:
    """Predictions of jobs as if they ran on another runner, asked for by the sizing advice.

    ``advise`` asks for them one label at a time; a predictor pays a fixed cost per call
    (and a model with cross-job batching decodes a batch faster than its texts one by
    one), so :meth:`gather` first runs the advice with placeholders to learn which
    (job, label) pairs it wants and predicts them all in one call. A label asked only
    in the real pass (the advice took another branch) is predicted on its own."""

    def __init__(self, predictor: Predictor, profile: RepoProfile | None,
                 history: HistoryIndex | None) -> None:
        self.predictor, self.profile, self.history = predictor, profile, history
        self.cache: dict[tuple[int, str], Runtime] = {}
        self.asked: dict[tuple[int, str], str] = {}

    def text(self, job: JobInstance, wf: Workflow, label: str) -> str:
        return _job_text(replace(job, runs_on=label), wf, self.profile, self.history)[0]

    def predict_on(self, key: int, job: JobInstance, wf: Workflow, placeholder: Runtime | None,
                   ) -> PredictOn:
        def predict(label: str) -> Runtime | None:
            if job.remote_workflow:
                return None
            if (key, label) in self.cache:
                return self.cache[(key, label)]
            if placeholder is not None:  # the dry pass: note the question
                self.asked[(key, label)] = self.text(job, wf, label)
                return placeholder
            rt = self.predictor.predict([self.text(job, wf, label)])[0]
            self.cache[(key, label)] = rt
            return rt

        return predict

    def gather(self) -> None:
        keys = [k for k in self.asked if k not in self.cache]
        if keys:
            got = self.predictor.predict([self.asked[k] for k in keys])
            self.cache.update(zip(keys, got, strict=True))
        self.asked.clear()


def _retired_jobs(wf: Workflow, opts: SizingOptions) -> set[str]:
    """The ids of the jobs with an instance that asks for a runner label GitHub retired:
    that instance fails, so the job (its matrix as a whole) fails for the jobs after it."""
    return {job.id for job in wf.jobs
            if resolve_runner(job.runs_on, job.matrix, visibility=opts.visibility,
                              self_hosted_rate=opts.self_hosted_rate,
                              runner_prices=opts.runner_prices).retired}


def _size_job(job: JobInstance, runtime: Runtime, predict_on: PredictOn,
              opts: SizingOptions, evidence: str | None = "own",
              usage: dict[str, Any] | None = None,
              monthly: Any = None) -> tuple[dict[str, Any], Any]:
    """Runner, cost and advice for one job (``evidence``: its ``history_source``; None, a
    cold guess, gives no timeout alarm, :func:`laser_ci.sizing.advice.advise`); with
    ``usage`` (its measured runs' :func:`laser_ci.sizing.usage.usage_summary`), the advice
    from measurements too."""
    runner = resolve_runner(job.runs_on, job.matrix, visibility=opts.visibility,
                            self_hosted_rate=opts.self_hosted_rate,
                            runner_prices=opts.runner_prices)
    cost = cost_job(runtime, runner, visibility=opts.visibility)
    # A job whose `if:` is false on every trigger never runs: nothing to advise on. A job
    # that calls a remote reusable workflow has no runner or `timeout-minutes` of its own
    # (GitHub refuses them there): its called jobs, unread, would get that advice.
    if job.events == ():
        advice = []
    elif job.remote_workflow:
        advice = condition_advice(job.raw_if)
    else:
        advice = condition_advice(job.raw_if) + step_condition_advice(job.string_step_ifs) + advise(
            runtime, runner, job.timeout_minutes, visibility=opts.visibility,
            predict_on=predict_on, needs=Needs(docker=_needs_docker(job)), evidence=evidence)
    if usage is not None and job.events != () and not job.remote_workflow:
        advice = with_usage(advice, usage) + usage_advice(
            usage, runner, runtime, visibility=opts.visibility, monthly=monthly,
            docker=_needs_docker(job)) + predicted_advice(usage, runner)
    fields = {"runner": runner.to_json(), **cost.to_json(), "advice": [a.to_json() for a in advice]}
    if usage is not None:
        fields["usage"] = usage
    return fields, cost


def _job_text(job: JobInstance, wf: Workflow, profile: RepoProfile | None,
              history: HistoryIndex | None) -> tuple[str, int | None]:
    """The serialized job, with its history block when past runs are known; and their count."""
    text, _cold, n, _source, _failures = _job_text_from(job, wf, profile, history)
    return text, n


def _job_text_from(job: JobInstance, wf: Workflow, profile: RepoProfile | None,
                   history: HistoryIndex | None,
                   ) -> tuple[str, str, int | None, str | None, Failures | None]:
    """The serialized job (with its history block when it has past runs of its own), the
    job serialized without it, their count, ``own`` when it has them (else None: the
    evidence of the rest of the repository is looked at after the batch,
    :func:`_with_evidence`) and how its own earlier runs ended."""
    cold = serialize_job(job, wf, profile)
    past = _past_of(job, wf, history)
    hist = past.history_for(cold) if past is not None else None
    if past is None or hist is None:
        return cold, cold, None, None, None
    return (serialize_job(job, wf, profile, history=hist), cold, hist.n, "own",
            past.failures())


def _past_of(job: JobInstance, wf: Workflow, history: HistoryIndex | None) -> PastRuns | None:
    """The job's own past runs (by exact display name), when it has timed ones."""
    if history is None:
        return None
    past = history.for_job(wf.path, job.name)
    return past if past is not None and past.runtimes else None


def _same_job_history(pairs: Sequence[tuple[JobInstance, Workflow]],
                      history: HistoryIndex | None,
                      ) -> tuple[HistoryIndex | None, list[tuple[str, str] | None]]:
    """``history`` where each job with no timed runs under its own name has those of the
    same job run another way (:func:`laser_ci.workflows.same_job.same_jobs`; of the one
    with the most timed runs); and for each job, the (path, name) its runs were taken from
    (None: its own, or none)."""
    from laser_ci.workflows.same_job import same_jobs

    if history is None:
        return history, [None] * len(pairs)
    taken: dict[tuple[str, str], tuple[str, str]] = {}  # (path, name) -> whose runs
    jobs: dict[tuple[str, str], PastRuns] | None = None
    for (job, wf), others in zip(pairs, same_jobs(pairs), strict=True):
        if not others or _past_of(job, wf, history) is not None:
            continue
        timed = [(len(past.runtimes), -m, (pairs[m][1].path, pairs[m][0].name), past)
                 for m in others if (past := _past_of(*pairs[m], history)) is not None]
        if timed:
            *_, key, past = max(timed, key=lambda t: t[:2])
            jobs = dict(history.jobs) if jobs is None else jobs
            jobs[(wf.path, job.name)] = past
            taken[(wf.path, job.name)] = key
    if jobs is None:
        return history, [None] * len(pairs)
    return (dataclasses.replace(history, jobs=jobs),
            [taken.get((wf.path, job.name)) for job, wf in pairs])


def _with_evidence(pairs: Sequence[tuple[JobInstance, Workflow]], cold: Sequence[str],
                   runtimes: list[Runtime], warm: list[tuple[int | None, str | None,
                                                             Failures | None]],
                   predictor: Predictor, history: HistoryIndex | None,
                   offsets: dict[str, tuple[float, float]] | None) -> list[Resolved | None]:
    """Predicts every job without runs of its own from the closest evidence the repository
    has (:mod:`laser_ci.predictors.evidence`; ``cold``: each job's text without history,
    what it does): ``runtimes`` and ``warm`` are updated in place; returns each one's
    evidence (None for the others). ``offsets``: the bands per source (None: the shipped
    model's)."""
    from laser_ci.predictors.evidence import Item, resolve, runtime_of, traits_of, typical_runs, words_of

    evidence: list[Resolved | None] = [None] * len(pairs)
    if history is None or all(source == "own" for _n, source, _f in warm):
        return evidence
    offsets = _bands(offsets)
    own = [k for k, (_n, source, _f) in enumerate(warm) if source == "own"]
    # the cold prediction of each job with runs of its own (its residual's other half) and
    # of the last configuration each job of a workflow not estimated here ran
    estimated = {wf.path for _job, wf in pairs}
    elsewhere = [(path, past) for (path, _name), past in sorted(history.jobs.items())
                 if path not in estimated and past.previous_text and typical_runs(past)]
    asked = [cold[k] for k in own] + [str(past.previous_text) for _path, past in elsewhere]
    got = predictor.predict(asked) if asked else []
    cold_log = [math.log(max(rt.p50, 1.0)) for rt in runtimes]  # the others' texts are cold
    for k, rt in zip(own, got, strict=False):
        cold_log[k] = math.log(max(rt.p50, 1.0))
    has_own = set(own)
    items = [Item(wf.path, job.id, cold_log[k],
                  typical_runs(_past_of(job, wf, history)) if k in has_own else (),
                  own=k in has_own, traits=traits_of(job.name, job.matrix, job.runs_on),
                  words=words_of(cold[k]))
             for k, (job, wf) in enumerate(pairs)]
    items += [Item(path, "", math.log(max(rt.p50, 1.0)), typical_runs(past), own=True,
                   words=words_of(str(past.previous_text)))
              for (path, past), rt in zip(elsewhere, got[len(own):], strict=True)]
    for k, res in enumerate(resolve(items)[:len(pairs)]):
        if res is None or res.source is None:
            continue
        runtimes[k] = runtime_of(res, runtimes[k], offsets)
        evidence[k] = res
        warm[k] = (None, res.source, None)  # their runs are counted in evidence_runs
    return evidence


def _predicted_usage(pairs: Sequence[tuple[JobInstance, Workflow]], texts: Sequence[str],
                     runtimes: Sequence[Runtime], predictor: Predictor,
                     history: HistoryIndex | None) -> list[dict[str, Any] | None]:
    """What each job without measured runs will use, from a model that writes usage after
    the runtime (a model ``laser-ci finetune`` learned from measured runs,
    :meth:`laser_ci.predictors.lm.LaserModel.predict_usage`), read after its runtime;
    None for the others and from any other predictor."""
    out: list[dict[str, Any] | None] = [None] * len(pairs)
    predict = getattr(predictor, "predict_usage", None)
    if predict is None or not getattr(getattr(predictor, "prompt", None), "targets", ()):
        return out
    ask = [k for k, (job, wf) in enumerate(pairs)
           if history is None or not history.usage.get((wf.path, job.name))]
    for k, got in zip(ask, predict([texts[k] for k in ask], [runtimes[k] for k in ask])
                      if ask else [], strict=True):
        out[k] = {key: {q: round(v, 3) for q, v in band.items()} for key, band in got.items()}
    return out


def _own_rule(pairs: Sequence[tuple[JobInstance, Workflow]],
              warm: Sequence[tuple[int | None, str | None, Failures | None]],
              history: HistoryIndex | None, offsets: dict[str, tuple[float, float]],
              runs_as: Sequence[tuple[str, str] | None],
              runtimes: Sequence[Runtime] | None = None) -> dict[int, Runtime]:
    """The runtime of each job with successful runs of its own predicted from them
    (:func:`laser_ci.predictors.own_runs.own_runtime`: the median of the latest half of
    them, at least 3 and at most 100, with the band calibrated for its history size; for
    the runs of the same job under another name, ``runs_as``, the band calibrated for
    those, ``same``), by index. Without ``runtimes`` (the predictor's, not computed yet:
    for these jobs it would be replaced) only the jobs whose history size has a calibrated
    band; with them, every one, the others keeping their predicted band's width."""
    from laser_ci.predictors.own_runs import own_runtime

    same = {"own": offsets["same"]} if "same" in offsets else offsets
    ruled: dict[int, Runtime] = {}
    for k, ((job, wf), (_n, source, _f)) in enumerate(zip(pairs, warm, strict=True)):
        if source == "own":
            got = own_runtime(_past_of(job, wf, history),
                              offsets if runs_as[k] is None else same,
                              runtimes[k] if runtimes is not None else None)
            if got is not None:
                ruled[k] = got[0]
    return ruled


def _bands(offsets: dict[str, tuple[float, float]] | None) -> dict[str, tuple[float, float]]:
    """``offsets``, or the shipped bands when None (read only when a job needs them)."""
    if offsets is not None:
        return offsets
    from laser_ci.predictors.evidence_bands import load_offsets

    return load_offsets()


def _callers(workflows: Sequence[Workflow]) -> dict[str, list[str]]:
    """Per workflow path, the estimated workflows that call it (through any chain)."""
    out: dict[str, set[str]] = {}
    for wf in workflows:
        for job in wf.jobs:
            for path in job.called_via:
                if path != wf.path:
                    out.setdefault(path, set()).add(wf.path)
    return {path: sorted(paths) for path, paths in out.items()}


def estimate_workflows(workflows: Sequence[Workflow], errors: Sequence[ReadError],
                       predictor: Predictor, profile: RepoProfile | None = None,
                       sizing: SizingOptions | None = None,
                       history: HistoryIndex | None = None,
                       offsets: dict[str, tuple[float, float]] | None = None,
                       own_runs: bool = True) -> dict[str, Any]:
    """Predict every job instance of ``workflows`` in one batch and assemble the result.

    With ``history``, a job whose matrix is computed at run time is first expanded into
    the instances of its latest runs, a job with successful runs of its own is predicted
    from them (``own_runs``; False: the predictor's warm prediction) and a job without
    runs of its own from the closest evidence the repository has (``offsets``: the
    calibrated bands per source, default the shipped ones,
    :mod:`laser_ci.predictors.evidence_bands`)."""
    opts = sizing or SizingOptions()
    if history is not None:
        workflows = [runtime_matrix.expand(wf, history.runs_of(wf.path)) for wf in workflows]
    for wf in workflows:  # a job on a runner GitHub retired fails before it starts: so
        skip_after(wf.jobs, _retired_jobs(wf, opts))  # do the jobs that need it
    pairs = [(job, wf) for wf in workflows for job in wf.jobs]
    history, runs_as = _same_job_history(pairs, history)
    prepared = [_job_text_from(job, wf, profile, history) for job, wf in pairs]
    texts = [t for t, *_ in prepared]
    warm = [(n, source, failures) for _t, _c, n, source, failures in prepared]
    ruled: dict[int, Runtime] = {}  # the jobs their own runs predict: the model is not asked
    if own_runs and any(source == "own" for _n, source, _f in warm):
        offsets = _bands(offsets)
        ruled = _own_rule(pairs, warm, history, offsets, runs_as)
    asked = [k for k in range(len(texts)) if k not in ruled]
    got = iter(predictor.predict([texts[k] for k in asked]) if asked else [])
    runtimes = [ruled[k] if k in ruled else next(got) for k in range(len(texts))]
    if own_runs and len(ruled) < sum(source == "own" for _n, source, _f in warm):
        for k, rt in _own_rule(pairs, warm, history, _bands(offsets), runs_as,
                               runtimes).items():
            runtimes[k] = rt
    evidence = _with_evidence(pairs, [c for _t, c, *_ in prepared], runtimes, warm,
                                   predictor, history, offsets)
    predicted = _predicted_usage(pairs, texts, runtimes, predictor, history)
    # Other-runner runtimes for the sizing advice, only from a predictor that knows sizes.
    others = (_OtherRunners(predictor, profile, history)
              if predicts_runner_sizes(predictor) else None)
    if others is not None:
        for k, ((job, wf), rt) in enumerate(zip(pairs, runtimes, strict=True)):  # dry pass
            _size_job(job, rt, others.predict_on(k, job, wf, rt), opts, warm[k][1])
        others.gather()
    callers = _callers(workflows)
    out: list[dict[str, Any]] = []
    all_totals = []
    i = k = 0
    for wf in workflows:
        mine = runtimes[i: i + len(wf.jobs)]
        i += len(wf.jobs)
        jobs, costs, running = [], [], []
        past = history.for_workflow(wf.path) if history is not None else None
        counted = ((len(past.runtimes), past.span_days)
                   if past is not None and past.span_days else None)
        monthly = estimate_monthly_runs(wf.triggers, wf.on, given=opts.runs_per_month,
                                        history=counted)
        run_event = {"event": opts.event} if opts.event in wf.triggers else {}  # --event
        for job, runtime, (n, source, failures) in zip(wf.jobs, mine,
                                                       warm[i - len(wf.jobs): i], strict=True):
            usage = usage_summary(history.usage.get((wf.path, job.name), ())
                                  if history is not None else ())
            if predicted[k] and not usage["measured_runs"]:
                usage["predicted"] = {"model": predictor.name, **predicted[k]}
            # other runners' runtimes are predicted from the job's own text: comparable with
            # its p50 only where that p50 came from the same text (its own runs, or cold)
            lent = source not in ("own", None)
            fields, cost = _size_job(job, runtime, None if others is None or lent
                                     else others.predict_on(k, job, wf, None), opts,
                                     source, usage, monthly)
            jobs.append({**_job_json(job, runtime), "history_runs": n, "history_source": source,
                         "history_as": (None if runs_as[k] is None or source != "own" else
                                        {"path": runs_as[k][0], "name": runs_as[k][1]}),
                         "evidence_runs": None if evidence[k] is None else evidence[k].runs,
                         "evidence_elsewhere": (None if evidence[k] is None
                                                else evidence[k].elsewhere),
                         "history_failures": None if failures is None else failures.to_json(),
                         **run_event, **fields})
            k += 1
            # A job whose `if:` is false on every trigger never runs, and one on a runner
            # GitHub retired fails without running: neither bills nor takes time.
            running.append(job.events != () and not fields["runner"].get("retired"))
            if running[-1]:
                costs.append(cost)
        totals = summarize(costs, runs=monthly)
        # A workflow only ever called by others runs as part of its callers: shown, not
        # added to the totals a second time.
        called_only = wf.triggers == ["workflow_call"]
        if not called_only:
            all_totals.append(totals)
        p50 = [r.p50 if runs else 0.0 for runs, r in zip(running, mine, strict=True)]
        out.append({
            "path": wf.path,
            "name": wf.name,
            "triggers": wf.triggers,
            "called_only": called_only,
            "called_by": callers.get(wf.path, []),
            "jobs": jobs,
            "critical_path_s": None if (cp := critical_path(wf.jobs, p50)) is None  # a cycle
            else round(cp, 1),
            "billable_s": round(sum(p50), 1),
            **totals.to_json(),
        })
    return {
        "predictor": predictor.name,
        "workflows": out,
        "totals": {
            "critical_path_s": round(max((w["critical_path_s"] for w in out
                                          if not w["called_only"]
                                          and w["critical_path_s"] is not None), default=0.0), 1),
            "billable_s": round(sum(w["billable_s"] for w in out if not w["called_only"]), 1),
            **combine(all_totals).to_json(),
        },
        "assumptions": cost_assumptions(opts.visibility, opts.self_hosted_rate)
        + ([] if others is not None else [SIZES_NOT_PREDICTED]),
        "errors": [e.to_json() for e in errors],
        "event": opts.event,
    }


def load_history(data_dir: str | os.PathLike[str], repo: str | None = None) -> HistoryIndex:
    """The past runs of a folder ``laser-ci collect`` wrote, for ``estimate --history``.

    :func:`laser_ci.training.collected.load_history_index` gives the jobs whose names the
    workflow file gives statically. Added here: each run's job list as GitHub listed it
    (``HistoryIndex.runs``: where the instances of a matrix computed at run time come
    from) and the past runs of every listed name - such instances under the names GitHub
    showed (``Unit Test / pkg 3/7 on ubuntu-latest/current``), with the configuration they
    last ran: the job serialized from the latest run's files, its matrix expanded from the
    runs up to then.
    """
    from laser_ci.training.collected import read_collected
    from laser_ci.training.examples import load_blobs
    from laser_ci.training.history import run_time

    index, every = read_collected(data_dir, repo)
    rows = [r for r in every if repo is None or r.get("repo") == repo]
    # a row an id repeats (a re-run left twice by a collect call that was killed): the last
    # one, the newest attempt, as load_history_index reads it; a row without an id: its own
    last = {str(r.get("id")) if r.get("id") is not None else f"#{i}": i
            for i, r in enumerate(rows)}
    order = sorted(last.values(), key=lambda i: (
        run_time(rows[i].get("created_at"), rows[i].get("commit_date")) or float("-inf"), i))
    by_path: dict[str, list[dict[str, Any]]] = {}
    for i in order:
        if isinstance(rows[i].get("jobs"), list):
            by_path.setdefault(str(rows[i].get("workflow_path") or ""), []).append(rows[i])
    wanted = {b for runs in by_path.values() for b in (runs[-1].get("files") or {}).values()}
    blobs = load_blobs(data_dir, wanted) if wanted else {}
    for path, runs in by_path.items():
        listed = [tuple(j for j in map(RunJob.from_collected, r["jobs"]) if j is not None)
                  for r in runs]
        index.add_listed(path, listed, _texts_at(path, runs[-1], blobs, listed))
        index.usage.update({(path, name): recs for name, recs in usage_from_rows(runs).items()})
    return index


def _texts_at(path: str, row: dict[str, Any], blobs: dict[str, str],
              runs: Sequence[Sequence[RunJob]]) -> dict[str, str]:
    """Each job of the workflow at ``row``'s files, run-time matrices expanded from
    ``runs``, serialized without history, by display name; empty when unreadable."""
    files = {p: blobs[b] for p, b in (row.get("files") or {}).items() if b in blobs}
    try:
        workflows, _errors = read_workflows(files, [path], schema=False)
    except Exception:  # noqa: BLE001 - an unreadable old commit only loses the diff
        return {}
    wf = next((w for w in workflows if w.path == path), None)
    if wf is None:
        return {}
    profile = RepoProfile.from_json(row.get("repo_profile"))
    out: dict[str, str] = {}
    for job in runtime_matrix.expand(wf, runs).jobs:
        out.setdefault(job.name, serialize_job(job, wf, profile))
    return out


def _default_predictor(model_dir: str | None) -> Predictor:
    from laser_ci.predictors.choice import load_predictor

    return load_predictor(model_dir)


def estimate_files(files: FileSource, targets: Sequence[str], *,
                   predictor: Predictor | None = None, profile: RepoProfile | None = None,
                   model_dir: str | None = None,
                   sizing: SizingOptions | None = None,
                   history: HistoryIndex | None = None) -> dict[str, Any]:
    """Estimate ``targets`` (repo-relative workflow paths) from an in-memory or disk repo."""
    opts = sizing or SizingOptions()
    workflows, errors = read_workflows(files, targets, repository=opts.repository,
                                       event=opts.event, payload=opts.event_payload)
    offsets = None  # the shipped bands per evidence source; a --model folder's own
    own_runs = True  # a --model folder without bands for its jobs' own runs keeps its warm
    if model_dir is not None:  # predictions (a fine-tuned language model, say)
        from laser_ci.predictors.evidence_bands import default_file, load_offsets
        from laser_ci.predictors.own_runs import has_bands

        offsets = load_offsets(default_file(model_dir))
        own_runs = has_bands(offsets)
    return estimate_workflows(workflows, errors, predictor or _default_predictor(model_dir),
                              profile, sizing, history, offsets, own_runs)


def _workflows_of(arg: str) -> str:
    """A path as a workflow target: a repository root (a folder holding
    ``.github/workflows``, e.g. ``.`` at a checkout) stands for its ``.github/workflows``,
    as GitHub only runs the workflows there (a root's own ``.yml`` files, such as an
    ``action.yml``, are not workflows); any other path as given."""
    folder = Path(arg) / ".github" / "workflows"
    try:
        return str(folder) if Path(arg).is_dir() and folder.is_dir() else arg
    except (OSError, ValueError):  # a folder it may not enter, a NUL: reported as given
        return arg


def estimate_paths(paths: Sequence[str], *, repo_root: str | None = None,
                   predictor: Predictor | None = None, model_dir: str | None = None,
                   profile: RepoProfile | None = None,
                   sizing: SizingOptions | None = None,
                   history: HistoryIndex | None = None) -> dict[str, Any]:
    """Estimate workflow files or folders on disk (default ``.github/workflows``); a
    repository root stands for its ``.github/workflows``."""
    paths = [_workflows_of(p) for p in paths] or [".github/workflows"]
    root = root_of(paths, repo_root)
    targets, errors = workflow_targets(paths, root)
    if profile is None:
        profile = profile_dir(root)
    files = DiskFiles(root, known_root=bool(repo_root) or None)
    sizing = sizing or SizingOptions()
    if sizing.repository is None:  # else the checkout's origin
        sizing = replace(sizing, repository=origin_repository(root))
    result = estimate_files(files, targets, predictor=predictor, profile=profile,
                            model_dir=model_dir, sizing=sizing, history=history)
    # A file can be both a target and read by another (a called workflow): one line each.
    both = [e.to_json() for e in errors] + result["errors"]
    result["errors"] = list({(e["path"], e["line"], e["message"]): e for e in both}.values())
    return result


def _model_json(model_dir: str | None, paths: Sequence[str], repo_root: str | None,
                repository: str | None) -> dict[str, Any]:
    """The result's ``model`` object (:func:`laser_ci.predictors.learned.model_json`), with a
    ``warning`` when the model learned another repository than the one estimated: ``--repo``,
    else the checkout's origin (as ``github.repository``), else ``$GITHUB_REPOSITORY``. The
    model is used all the same: the user asked for it."""
    from laser_ci.predictors.learned import info_of, model_json, other_repository

    model = model_json(model_dir)
    info = info_of(model)
    if info is None:
        return model
    warning = other_repository(info, _estimated_repository(paths, repo_root, repository))
    return {**model, "warning": warning} if warning else model


def _estimated_repository(paths: Sequence[str], repo_root: str | None,
                          repository: str | None) -> str | None:
    """The repository estimated: ``--repo``, else the checkout's origin (as
    ``github.repository``), else ``$GITHUB_REPOSITORY``; None when none says."""
    return (repository
            or origin_repository(root_of([_workflows_of(p) for p in paths]
                                         or [".github/workflows"], repo_root))
            or os.environ.get("GITHUB_REPOSITORY") or None)


def _history_of_another(history: HistoryIndex, estimated: str | None) -> str | None:
    """Why ``--history`` is not used (one line's end), when its runs are of a repository
    other than the one ``estimated``; None when they are of it or either is unknown."""
    if not history.repo or not estimated or history.repo.lower() == estimated.lower():
        return None
    return (f"it holds runs of {history.repo}, not of {estimated} (the repository "
            f"estimated); estimated without it (--repo {history.repo} if they are its runs, "
            "as for a fork)")


def _history_unused(history: HistoryIndex, result: dict[str, Any],
                    estimated: str | None) -> str | None:
    """Why ``--history`` is dropped or worth a word when it gave no estimated job a run of
    its own (one line's end); None when some job had one.

    Where the repository estimated is not known, that is most likely the runs of another
    repository (or of workflows since renamed): the caller estimates again without them
    (another repository's runs would calibrate this one's new jobs and its monthly
    runs). Where it is known and the runs are its own, they stay (a new workflow borrows
    from the repository's others); the line says so only when no job borrowed either."""
    jobs = [j for wf in result["workflows"] for j in wf["jobs"]]
    if not jobs or any(j.get("history_runs") for j in jobs):
        return None
    of = f"it holds runs of {history.repo}" if history.repo else "it holds no runs"
    paths = sorted(history.workflows)
    where = f" of {', '.join(paths[:3])}{', ...' if len(paths) > 3 else ''}" if paths else ""
    if estimated is None:
        return f"no job estimated here has a run there ({of}{where}); estimated without history"
    if any(j.get("history_source") for j in jobs):
        return None
    return (f"no job estimated here has a run there or an alike one ({of}{where}); every "
            "job's runtime is estimated cold")


def _finite(_ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """An option's callback: ``value``, or a usage error for NaN (which every range lets
    through)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a number.", param=param)
    return value


@click.command("estimate")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]),
              default="table", show_default=True, help="Output format.")
@click.option("--model", "model_dir", type=click.Path(file_okay=False),
              help="Model folder (default: the one shipped with laser-ci).")
@click.option("--repo-root", type=click.Path(file_okay=False, exists=True),
              help="Repository root for resolving ./ references (default: nearest folder "
                   "with .github).")
@click.option("--visibility", type=click.Choice(["public", "private", "internal"]),
              help="Repository visibility for runner sizes and prices (default: unknown, "
                   "priced as private and said so).")
@click.option("--runs-per-month", type=click.FloatRange(min=0, max=MAX_RUNS_PER_MONTH),
              callback=_finite,
              help="Runs per month for the monthly cost projection.")
@click.option("--self-hosted-rate", type=click.FloatRange(min=0, max=MAX_RATE), default=0.0,
              callback=_finite,
              show_default=True, help="USD per minute charged for self-hosted runners.")
@click.option("--repo", "repository", metavar="OWNER/NAME",
              help="The repository, for `github.repository` in the workflows (default: the "
                   "checkout's `origin` remote, read from .git/config).")
@click.option("--event", metavar="NAME",
              help="Estimate the run of this trigger (push, pull_request, schedule, ...) "
                   "of each workflow that has it; the others are still shown, for the "
                   "triggers they have (default: every trigger; a value that differs by "
                   "trigger is shown for the pull request's run).")
@click.option("--runner-prices", "runner_prices_file", type=click.Path(dir_okay=False),
              help="JSON or YAML file mapping runner labels not in GitHub's catalog "
                   "(self-hosted, third-party) to a price in USD per minute.")
@click.option("--history", "history_dir", type=click.Path(),
              help="A folder written by `laser-ci collect` for this repository: each job's "
                   "earlier runs go into its prediction, a job without them borrows from "
                   "alike ones, and a matrix computed at run time is shown as the "
                   "instances of its latest runs. Runs of another repository than --repo "
                   "(else the checkout's origin, else $GITHUB_REPOSITORY) are not used.")
@click.option("--verbose", "-v", is_flag=True,
              help="Every assumption behind the costs in full (the table shows one line).")
def estimate(paths: tuple[str, ...], fmt: str, model_dir: str | None, repo_root: str | None,
             visibility: str | None, runs_per_month: float | None,
             self_hosted_rate: float, repository: str | None, event: str | None,
             runner_prices_file: str | None, history_dir: str | None,
             verbose: bool = False) -> None:
    """Predict each job's runtime in workflow files or folders (default .github/workflows;
    a repository root, such as ., means its .github/workflows)."""
    from laser_ci.report.render import render

    sizing = SizingOptions(visibility, runs_per_month, self_hosted_rate, repository, event)
    try:
        if repository is not None and not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
            raise ValueError(f"--repo {repository!r}: expected OWNER/NAME")
        if runner_prices_file is not None:
            sizing = replace(sizing, runner_prices=load_runner_prices(runner_prices_file))
        model = _model_json(model_dir, paths, repo_root, repository)
        history, unused = None, None
        if history_dir is not None:
            history = load_history(history_dir)
            estimated = _estimated_repository(paths, repo_root, repository)
            unused = _history_of_another(history, estimated)
        result = estimate_paths(paths, repo_root=repo_root, model_dir=model_dir, sizing=sizing,
                                history=None if unused else history)
        if history is not None and unused is None:
            unused = _history_unused(history, result, estimated)
            if unused is not None and estimated is None:  # most likely another's: not used
                result = estimate_paths(paths, repo_root=repo_root, model_dir=model_dir,
                                        sizing=sizing)
        result["model"] = model
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        if os.environ.get("LASER_CI_DEBUG"):
            raise
        click.echo(plain.line(f"laser-ci: error: {exc}"), err=True)
        sys.exit(2)
    if model.get("warning"):
        click.echo(plain.line(f"warning: --model {model_dir}: {model['warning']}"), err=True)
    # the errors first (on stderr), not after a table of hundreds of rows
    for err in result["errors"]:
        where = f"{err['path']}:{err['line']}" if err["line"] else err["path"]
        click.echo(plain.line(f"error: {where}: {err['message']}"), err=True)
    click.echo(render(result, fmt, getattr(sys.stdout, "encoding", None), verbose), nl=False)
    if unused is not None:
        click.echo(plain.line(f"warning: --history {history_dir}: {unused}"), err=True)
    if event is not None and result["workflows"] and not any(
            event in (wf.get("triggers") or ()) for wf in result["workflows"]):
        click.echo(plain.line(f"warning: --event {event}: no workflow estimated here has this "
                              "trigger; each is estimated for every trigger it has"), err=True)
    sys.exit(1 if result["errors"] else 0)
