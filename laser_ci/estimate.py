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

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from laser_ci.graph import critical_path
from laser_ci.parse import DiskFiles, FileSource, find_repo_root, read_workflows, workflow_targets
from laser_ci.predict import Predictor, Runtime
from laser_ci.repo_profile import profile_dir
from laser_ci.serialize import serialize_job
from laser_ci.workflow import JobInstance, ReadError, RepoProfile, Workflow


def _json_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


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
    }


def estimate_workflows(workflows: Sequence[Workflow], errors: Sequence[ReadError],
                       predictor: Predictor, profile: RepoProfile | None = None) -> dict[str, Any]:
    """Predict every job instance of ``workflows`` in one batch and assemble the result."""
    texts = [serialize_job(job, wf, profile) for wf in workflows for job in wf.jobs]
    runtimes = predictor.predict(texts) if texts else []
    out: list[dict[str, Any]] = []
    i = 0
    for wf in workflows:
        mine = runtimes[i: i + len(wf.jobs)]
        i += len(wf.jobs)
        out.append({
            "path": wf.path,
            "name": wf.name,
            "triggers": wf.triggers,
            "jobs": [_job_json(j, r) for j, r in zip(wf.jobs, mine, strict=True)],
            "critical_path_s": round(critical_path(wf.jobs, [r.p50 for r in mine]), 1),
            "billable_s": round(sum(r.p50 for r in mine), 1),
        })
    return {
        "predictor": predictor.name,
        "workflows": out,
        "errors": [e.to_json() for e in errors],
    }


def _default_predictor(model_dir: str | None) -> Predictor:
    from laser_ci.predictors import load_predictor

    return load_predictor(model_dir)


def estimate_files(files: FileSource, targets: Sequence[str], *,
                   predictor: Predictor | None = None, profile: RepoProfile | None = None,
                   model_dir: str | None = None) -> dict[str, Any]:
    """Estimate ``targets`` (repo-relative workflow paths) from an in-memory or disk repo."""
    workflows, errors = read_workflows(files, targets)
    return estimate_workflows(workflows, errors, predictor or _default_predictor(model_dir),
                              profile)


def estimate_paths(paths: Sequence[str], *, repo_root: str | None = None,
                   predictor: Predictor | None = None, model_dir: str | None = None,
                   profile: RepoProfile | None = None) -> dict[str, Any]:
    """Estimate workflow files or folders on disk (default ``.github/workflows``)."""
    paths = list(paths) or [".github/workflows"]
    root = Path(repo_root).resolve() if repo_root else find_repo_root(Path(paths[0]))
    targets, errors = workflow_targets(paths, root)
    if profile is None:
        profile = profile_dir(root)
    result = estimate_files(DiskFiles(root), targets, predictor=predictor, profile=profile,
                            model_dir=model_dir)
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
def estimate(paths: tuple[str, ...], fmt: str, model_dir: str | None,
             repo_root: str | None) -> None:
    """Predict each job's runtime in workflow files or folders (default .github/workflows)."""
    from laser_ci.report import render

    try:
        result = estimate_paths(paths, repo_root=repo_root, model_dir=model_dir)
    except (OSError, ValueError) as exc:
        click.echo(f"laser-ci: {exc}", err=True)
        sys.exit(2)
    click.echo(render(result, fmt), nl=False)
    for err in result["errors"]:
        where = f"{err['path']}:{err['line']}" if err["line"] else err["path"]
        click.echo(f"error: {where}: {err['message']}", err=True)
    sys.exit(1 if result["errors"] else 0)
