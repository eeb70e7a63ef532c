"""``laser-ci estimate``: read workflows, predict every job, size it, and report.

The result is a plain JSON-able dict (documented in the README, stable)::

    {"predictor": name,
     "workflows": [{"path", "name", "triggers",
                    "jobs": [{"id", "name", "line", "runs_on", "matrix", "dynamic_matrix",
                              "needs", "timeout_minutes", "remote_workflow",
                              "runtime_s": {"p10", "p50", "p90"}, ...sizing fields}],
                    "critical_path_s", "billable_s", ...}],
     "errors": [{"path", "line", "message"}]}
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from laser_ci.predictors.base import Predictor, Runtime
from laser_ci.sizing.advice import Needs, PredictOn, advise
from laser_ci.sizing.cost import combine, cost_assumptions, cost_job, summarize
from laser_ci.sizing.runners import resolve_runner
from laser_ci.sizing.schedule import estimate_monthly_runs
from laser_ci.text.history import HistoryIndex
from laser_ci.text.serialize import serialize_job
from laser_ci.workflows.graph import critical_path
from laser_ci.workflows.model import JobInstance, ReadError, RepoProfile, Workflow
from laser_ci.workflows.parse import DiskFiles, FileSource, find_repo_root, read_workflows, workflow_targets
from laser_ci.workflows.repo_profile import profile_dir


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


def _needs_docker(job: JobInstance) -> bool:
    runs = " ".join(s.run or "" for s in job.steps)
    return bool(job.container or job.services) or "docker " in runs


def _job_json(job: JobInstance, runtime: Runtime) -> dict[str, Any]:
    return {
        "id": job.id,
        "name": job.name,
        "line": job.line,
        "runs_on": _json_value(job.runs_on),
        "matrix": _json_value(job.matrix),
        "dynamic_matrix": job.dynamic_matrix,
        "needs": list(job.needs),
        "timeout_minutes": _json_value(job.timeout_minutes),
        "remote_workflow": job.remote_workflow,
        "runtime_s": runtime.to_json(),
    }  # + "history_runs": earlier runs the prediction saw (None: cold start)


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


def _size_job(job: JobInstance, runtime: Runtime, predict_on: PredictOn,
              opts: SizingOptions) -> tuple[dict[str, Any], Any]:
    """Runner, cost and advice for one job."""
    runner = resolve_runner(job.runs_on, job.matrix, visibility=opts.visibility,
                            self_hosted_rate=opts.self_hosted_rate)
    cost = cost_job(runtime, runner, visibility=opts.visibility)
    advice = advise(runtime, runner, job.timeout_minutes, visibility=opts.visibility,
                    predict_on=predict_on, needs=Needs(docker=_needs_docker(job)))
    fields = {"runner": runner.to_json(), **cost.to_json(), "advice": [a.to_json() for a in advice]}
    return fields, cost


def _job_text(job: JobInstance, wf: Workflow, profile: RepoProfile | None,
              history: HistoryIndex | None) -> tuple[str, int | None]:
    """The serialized job, with its history block when past runs are known; and their count."""
    cold = serialize_job(job, wf, profile)
    past = history.for_job(wf.path, job.name) if history is not None else None
    hist = past.history_for(cold) if past is not None else None
    if hist is None:
        return cold, None
    return serialize_job(job, wf, profile, history=hist), hist.n


def estimate_workflows(workflows: Sequence[Workflow], errors: Sequence[ReadError],
                       predictor: Predictor, profile: RepoProfile | None = None,
                       sizing: SizingOptions | None = None,
                       history: HistoryIndex | None = None) -> dict[str, Any]:
    """Predict every job instance of ``workflows`` in one batch and assemble the result."""
    opts = sizing or SizingOptions()
    prepared = [_job_text(job, wf, profile, history) for wf in workflows for job in wf.jobs]
    texts = [t for t, _ in prepared]
    warm = [n for _, n in prepared]
    runtimes = predictor.predict(texts) if texts else []
    others = _OtherRunners(predictor, profile, history)
    pairs = [(job, wf) for wf in workflows for job in wf.jobs]
    for k, ((job, wf), rt) in enumerate(zip(pairs, runtimes, strict=True)):  # dry pass
        _size_job(job, rt, others.predict_on(k, job, wf, rt), opts)
    others.gather()
    out: list[dict[str, Any]] = []
    all_totals = []
    i = k = 0
    for wf in workflows:
        mine = runtimes[i: i + len(wf.jobs)]
        i += len(wf.jobs)
        jobs, costs = [], []
        for job, runtime, n in zip(wf.jobs, mine, warm[i - len(wf.jobs): i], strict=True):
            fields, cost = _size_job(job, runtime, others.predict_on(k, job, wf, None), opts)
            k += 1
            jobs.append({**_job_json(job, runtime), "history_runs": n, **fields})
            costs.append(cost)
        past = history.for_workflow(wf.path) if history is not None else None
        counted = ((len(past.runtimes), past.span_days)
                   if past is not None and past.span_days else None)
        totals = summarize(costs, runs=estimate_monthly_runs(
            wf.triggers, wf.on, given=opts.runs_per_month, history=counted))
        # A workflow only ever called by others runs as part of its callers: shown, not
        # added to the totals a second time.
        called_only = wf.triggers == ["workflow_call"]
        if not called_only:
            all_totals.append(totals)
        out.append({
            "path": wf.path,
            "name": wf.name,
            "triggers": wf.triggers,
            "called_only": called_only,
            "jobs": jobs,
            "critical_path_s": round(critical_path(wf.jobs, [r.p50 for r in mine]), 1),
            "billable_s": round(sum(r.p50 for r in mine), 1),
            **totals.to_json(),
        })
    return {
        "predictor": predictor.name,
        "workflows": out,
        "totals": {
            "critical_path_s": round(max((w["critical_path_s"] for w in out
                                          if not w["called_only"]), default=0.0), 1),
            "billable_s": round(sum(w["billable_s"] for w in out if not w["called_only"]), 1),
            **combine(all_totals).to_json(),
        },
        "assumptions": cost_assumptions(opts.visibility, opts.self_hosted_rate),
        "errors": [e.to_json() for e in errors],
    }


def _default_predictor(model_dir: str | None) -> Predictor:
    from laser_ci.predictors.choice import load_predictor

    return load_predictor(model_dir)


def estimate_files(files: FileSource, targets: Sequence[str], *,
                   predictor: Predictor | None = None, profile: RepoProfile | None = None,
                   model_dir: str | None = None,
                   sizing: SizingOptions | None = None,
                   history: HistoryIndex | None = None) -> dict[str, Any]:
    """Estimate ``targets`` (repo-relative workflow paths) from an in-memory or disk repo."""
    workflows, errors = read_workflows(files, targets)
    return estimate_workflows(workflows, errors, predictor or _default_predictor(model_dir),
                              profile, sizing, history)


def estimate_paths(paths: Sequence[str], *, repo_root: str | None = None,
                   predictor: Predictor | None = None, model_dir: str | None = None,
                   profile: RepoProfile | None = None,
                   sizing: SizingOptions | None = None,
                   history: HistoryIndex | None = None) -> dict[str, Any]:
    """Estimate workflow files or folders on disk (default ``.github/workflows``)."""
    paths = list(paths) or [".github/workflows"]
    root = Path(repo_root).resolve() if repo_root else find_repo_root(Path(paths[0]))
    targets, errors = workflow_targets(paths, root)
    if profile is None:
        profile = profile_dir(root)
    result = estimate_files(DiskFiles(root), targets, predictor=predictor, profile=profile,
                            model_dir=model_dir, sizing=sizing, history=history)
    result["errors"] = [e.to_json() for e in errors] + result["errors"]
    return result


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
@click.option("--runs-per-month", type=click.FloatRange(min=0),
              help="Runs per month for the monthly cost projection.")
@click.option("--self-hosted-rate", type=click.FloatRange(min=0), default=0.0,
              show_default=True, help="USD per minute charged for self-hosted runners.")
@click.option("--history", "history_dir", type=click.Path(),
              help="A folder written by `laser-ci collect` for this repository: each job's "
                   "earlier runs go into its prediction.")
def estimate(paths: tuple[str, ...], fmt: str, model_dir: str | None, repo_root: str | None,
             visibility: str | None, runs_per_month: float | None,
             self_hosted_rate: float, history_dir: str | None) -> None:
    """Predict each job's runtime in workflow files or folders (default .github/workflows)."""
    from laser_ci.report.render import render

    sizing = SizingOptions(visibility, runs_per_month, self_hosted_rate)
    try:
        history = None
        if history_dir is not None:
            from laser_ci.training.collected import load_history_index

            history = load_history_index(history_dir)
        result = estimate_paths(paths, repo_root=repo_root, model_dir=model_dir, sizing=sizing,
                                history=history)
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        if os.environ.get("LASER_CI_DEBUG"):
            raise
        click.echo(f"laser-ci: error: {exc}", err=True)
        sys.exit(2)
    click.echo(render(result, fmt), nl=False)
    for err in result["errors"]:
        where = f"{err['path']}:{err['line']}" if err["line"] else err["path"]
        click.echo(f"error: {where}: {err['message']}", err=True)
    sys.exit(1 if result["errors"] else 0)
