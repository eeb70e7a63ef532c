"""The GitHub Action's entry point: ``laser-ci action``.

Flow (see ``action.yml``; inputs arrive only as ``LASER_CI_*`` environment variables)::

    Settings.from_env()                        read once: event, repository, paths, inputs
    pull_request / pull_request_target:
        merge base (REST compare)              the base side: where the PR branched
        PR files (REST)                        which workflow files the PR changes, also
                                               through local reusable workflows and actions
        contents at head and merge base (REST) the workflow files and their local deps
        fetch_history(base branch)             earlier runs' job durations (actions: read),
                                               cached between runs; missing: cold start
        estimate_files(head), estimate_files(base)   both with that history
        render_pr_comment -> sticky comment    found by its hidden marker, edited in place;
                                               a 403 (fork PR, read-only token) is a notice
    any other event:
        fetch_history(current branch; merge_group: the queue's base branch),
        estimate_paths(workspace workflows) -> render_summary
    always: annotations (p90 over timeout-minutes, read errors), $GITHUB_STEP_SUMMARY,
            the JSON result file and $GITHUB_OUTPUT (json, total-billable-minutes,
            critical-path-minutes)

PR content is only fetched as text through the contents API and parsed as YAML: nothing from
the PR is checked out or executed, so the Action is safe under ``pull_request_target``.

The ``model`` input (a folder, or ``learned``: restored from the Actions cache by
``action.yml``) is used unless the PR comes from a fork, or the folder is missing, learned
another repository or cannot be loaded: then the shipped model predicts, with a notice
(:mod:`laser_ci.github.model_input`).

Exit status: 0 unless ``fail-on-error`` is true and something went wrong (a workflow that
could not be read, a GitHub API failure other than a fork's 403 on commenting; missing run
history and a model input not used are only notes). Invalid input values always fail.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from laser_ci import __version__
from laser_ci.github.comments import post_comment
from laser_ci.github.errors import describe
from laser_ci.github.model_input import LEARNED, LEARNED_DIR, choose_model
from laser_ci.github.refs import RefFiles, is_workflow, list_workflows
from laser_ci.github.runner_io import annotate, append_summary, command, emit, write_json, write_outputs
from laser_ci.report.comment import (
    COMMENT_LIMIT,
    SUMMARY_LIMIT,
    Context,
    is_shortened,
    marker_for,
    render_pr_comment,
    render_summary,
    totals,
)

PR_EVENTS = ("pull_request", "pull_request_target")
PR_FILES_LIMIT = 3000  # GitHub lists at most this many files of a pull request


class SettingsError(ValueError):
    """An input or environment variable has a value the Action cannot use."""


# --- settings -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything the Action reads from its environment, read once by :meth:`from_env`."""

    event_name: str
    event: Mapping[str, Any] = field(default_factory=dict, repr=False)  # GITHUB_EVENT_PATH
    repository: str | None = None  # GITHUB_REPOSITORY (else the event's), owner/name
    api_url: str = "https://api.github.com"  # GITHUB_API_URL (GHES: https://host/api/v3)
    server_url: str = "https://github.com"  # GITHUB_SERVER_URL, for links
    token: str | None = field(default=None, repr=False)  # input github-token
    sha: str | None = None  # GITHUB_SHA
    workspace: Path = Path(".")  # GITHUB_WORKSPACE, for events without a PR
    step_summary: Path | None = None  # GITHUB_STEP_SUMMARY
    output: Path | None = None  # GITHUB_OUTPUT
    json_path: Path = Path("laser-ci.json")  # where the full result goes ($RUNNER_TEMP)
    workflows: str = ".github/workflows"  # input workflows: a folder or one file
    comment: bool = True  # input comment
    fail_on_error: bool = False  # input fail-on-error
    # input model: the folder; for `learned`, where action.yml restored the repository's
    # learned model from the Actions cache (LASER_CI_LEARNED_MODEL_DIR, else
    # $RUNNER_TEMP/laser-ci-model), and model_from_cache is true
    model: Path | None = None
    model_from_cache: bool = False
    history_runs: int = 20  # input history-runs: earlier runs per workflow; 0 disables
    # LASER_CI_HISTORY_CACHE: the folder action.yml caches for this step
    # ($RUNNER_TEMP/laser-ci-history-<step>); else $RUNNER_TEMP/laser-ci-history, or None:
    # ~/.cache/...
    history_cache: Path | None = None
    # the branch whose runs are the history of events without a PR: GITHUB_REF_NAME (push,
    # dispatch, ...), or a merge queue's base branch (merge_group.base_ref): the queue's own
    # gh-readonly-queue/<base>/pr-... branch is new for each group and has no runs
    ref_name: str | None = None
    runner_prices: str | None = None  # input runner-prices: a file, or label: price lines

    @property
    def visibility(self) -> str | None:
        """``public``/``private``/``internal`` from the event's repository, for costs."""
        repo = self.event.get("repository")
        if not isinstance(repo, Mapping):
            return None
        vis = repo.get("visibility")
        if vis in ("public", "private", "internal"):
            return str(vis)
        if isinstance(repo.get("private"), bool):
            return "private" if repo["private"] else "public"
        return None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        event: Mapping[str, Any] = {}
        event_path = get("GITHUB_EVENT_PATH")
        if event_path:
            try:
                event = json.loads(Path(event_path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise SettingsError(f"cannot read GITHUB_EVENT_PATH {event_path}: {exc}") from exc
        workspace = Path(get("GITHUB_WORKSPACE") or ".")
        temp = Path(get("RUNNER_TEMP") or tempfile.gettempdir())
        workflows = _workflows_input(get("LASER_CI_WORKFLOWS"))
        model = get("LASER_CI_MODEL")
        from_cache = (model or "").lower() == LEARNED  # as action.yml's `==`: any case
        if from_cache:
            model = get("LASER_CI_LEARNED_MODEL_DIR") or str(temp / LEARNED_DIR)
        return cls(
            event_name=get("GITHUB_EVENT_NAME") or "",
            event=event if isinstance(event, Mapping) else {},
            repository=get("GITHUB_REPOSITORY") or _repository_of(event),
            api_url=(get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            server_url=(get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            token=get("LASER_CI_GITHUB_TOKEN") or get("GITHUB_TOKEN"),
            sha=get("GITHUB_SHA"),
            workspace=workspace,
            step_summary=_opt_path(get("GITHUB_STEP_SUMMARY")),
            output=_opt_path(get("GITHUB_OUTPUT")),
            json_path=temp / "laser-ci" / "laser-ci.json",
            workflows=workflows,
            comment=_bool("comment", get("LASER_CI_COMMENT"), True),
            fail_on_error=_bool("fail-on-error", get("LASER_CI_FAIL_ON_ERROR"), False),
            model=Path(model) if model else None,
            model_from_cache=from_cache,
            history_runs=_count("history-runs", get("LASER_CI_HISTORY_RUNS"), 20),
            history_cache=_opt_path(get("LASER_CI_HISTORY_CACHE"))
            or (temp / "laser-ci-history" if get("RUNNER_TEMP") else None),
            ref_name=(_queue_base(get("GITHUB_EVENT_NAME"), event) or get("GITHUB_REF_NAME")
                      or _branch_of(event)),
            runner_prices=get("LASER_CI_RUNNER_PRICES"),
        )

    @property
    def pull_request(self) -> Mapping[str, Any] | None:
        pr = self.event.get("pull_request")
        if self.event_name in PR_EVENTS and isinstance(pr, Mapping) and pr.get("number"):
            return pr
        return None


def _opt_path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _count(name: str, value: str | None, default: int) -> int:
    if value is None:
        return default
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise SettingsError(f"input {name} must be a whole number, 0 or more, not {value!r}")
    return n


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _branch_of(event: Any) -> str | None:
    ref = event.get("ref") if isinstance(event, Mapping) else None
    if isinstance(ref, str) and ref.startswith("refs/heads/"):
        return ref[len("refs/heads/"):]
    return None


def _repository_of(event: Any) -> str | None:
    """The event payload's ``repository.full_name`` (owner/name)."""
    repo = event.get("repository") if isinstance(event, Mapping) else None
    name = repo.get("full_name") if isinstance(repo, Mapping) else None
    return name if isinstance(name, str) and re.fullmatch(r"[^/\s]+/[^/\s]+", name) else None


def _queue_base(event_name: str | None, event: Any) -> str | None:
    """The base branch of a ``merge_group`` event (its ``merge_group.base_ref``)."""
    if event_name != "merge_group" or not isinstance(event, Mapping):
        return None
    group = event.get("merge_group")
    return _branch_of({"ref": group.get("base_ref")}) if isinstance(group, Mapping) else None


def _bool(name: str, value: str | None, default: bool) -> bool:
    if value is None:
        return default
    v = value.lower()
    if v in ("true", "1", "yes", "on"):
        return True
    if v in ("false", "0", "no", "off"):
        return False
    raise SettingsError(f"input {name} must be true or false, not {value!r}")


# --- workflow commands --------------------------------------------------------------------


# --- the run ------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one run produced; ``problems`` decide the exit status under fail-on-error."""

    result: dict[str, Any]
    markdown: str
    problems: list[str] = field(default_factory=list)
    comment: dict[str, Any] = field(default_factory=lambda: {"status": "skipped"})


def run(settings: Settings, *, predictor: Any = None) -> int:
    """Runs the Action once; returns the exit status."""
    problems: list[str] = []
    try:
        model: dict[str, Any] | None = None
        if predictor is None:  # the model input, else LASER_CI_MODEL_DIR or the shipped model
            predictor, model = choose_model(
                settings.model, from_cache=settings.model_from_cache,
                repository=settings.repository, pull_request=settings.pull_request, load=_load)
        if settings.pull_request is not None:
            outcome = _run_pull_request(settings, predictor, model)
        else:
            outcome = _run_workspace(settings, predictor, model)
    except Exception as exc:  # noqa: BLE001 - advisory tool: report, never crash the job
        message = f"laser-ci could not estimate the workflows: {describe(exc)}"
        emit("error" if settings.fail_on_error else "warning", message)
        _write("the job summary", append_summary, settings.step_summary,
               f"### ⏱️ laser-ci\n\n{message}\n", problems=problems)
        return 1 if settings.fail_on_error else 0

    problems += outcome.problems
    annotate(outcome.result)
    result = outcome.result
    result["comment"] = outcome.comment
    _write("the JSON result", write_json, settings.json_path, result, problems=problems)
    t = totals(result)
    _write("the step outputs", write_outputs, settings.output,
        {
            "json": str(settings.json_path),
            "total-billable-minutes": f"{t.billable_s / 60:.1f}",
            "critical-path-minutes": f"{t.critical_path_s / 60:.1f}",
        },
        problems=problems,
    )
    _write("the job summary", append_summary, settings.step_summary, outcome.markdown,
           problems=problems)
    for e in result.get("errors") or ():
        problems.append(f"{e.get('path')}: {e.get('message')}")
    if problems and settings.fail_on_error:
        emit("error", f"laser-ci: {len(problems)} problem(s); fail-on-error is true")
        return 1
    return 0


def _write(what: str, write: Any, *args: Any, problems: list[str]) -> None:
    """``write(*args)``; a file the runner named that cannot be written (its folder gone,
    a full disk) is one warning and a problem, not a traceback: the rest is still written."""
    try:
        write(*args)
    except OSError as exc:
        problems.append(f"could not write {what}: {exc}")
        emit("warning", f"laser-ci could not write {what}: {exc}")


def _workflows_input(value: str | None) -> str:
    """The ``workflows`` input, repo-relative without ``./`` or trailing ``/``; the
    repository root (``.``, ``./``) means its ``.github/workflows``, as for ``laser-ci
    estimate .``: GitHub runs no other workflows."""
    from laser_ci.workflows.parse import normalize

    return normalize(value or "") or ".github/workflows"


def _load(model: Path | None) -> Any:
    from laser_ci.predictors.choice import load_predictor

    return load_predictor(model)


def _run_workspace(settings: Settings, predictor: Any, model: dict[str, Any] | None) -> Outcome:
    """push, workflow_dispatch, schedule, ...: estimate the checked-out workflows."""
    from laser_ci.estimate import estimate_paths
    from laser_ci.workflows.parse import workflow_targets

    root = settings.workspace
    target = root / settings.workflows
    if not target.exists():
        raise FileNotFoundError(
            f"no workflow files at {settings.workflows} (is the repository checked out?)"
        )
    targets, _errors = workflow_targets([str(target)], root.resolve())
    from laser_ci.workflows.parse import DiskFiles

    history, info = _history(settings, None, settings.ref_name,
                             _with_runs([DiskFiles(root.resolve())], targets))
    result = dict(estimate_paths(
        [str(target)], repo_root=str(root), predictor=predictor,
        sizing=_sizing(settings), history=history,
    ))
    result["history"] = _borrowed(info, result, history, {})
    if model is not None:
        result["model"] = model
    ctx = Context(
        repository=settings.repository, server_url=settings.server_url, head_sha=settings.sha
    )
    return Outcome(result=result, markdown=render_summary(result, context=ctx))


def _run_pull_request(settings: Settings, predictor: Any,
                      model: dict[str, Any] | None) -> Outcome:
    from laser_ci.estimate import estimate_files

    pr = settings.pull_request or {}
    number = int(pr["number"])
    head_sha = str((pr.get("head") or {}).get("sha") or "")
    base_sha = str((pr.get("base") or {}).get("sha") or "")
    if not settings.repository:
        raise SettingsError("GITHUB_REPOSITORY is not set (and the event payload has no "
                            "repository.full_name)")
    missing = [side for side, sha in (("head", head_sha), ("base", base_sha)) if not sha]
    if missing:
        raise SettingsError(f"the event payload lacks the pull request's {'/'.join(missing)} SHA")

    gh = _github(settings)
    repo = gh.get_repo(settings.repository)
    # The PR is what it changes since it branched: its file list is that three-dot diff,
    # so its base side is the merge base, not the base branch's newest commit (a job the
    # base branch gained since is not one the PR removes).
    base_sha = merge_base(repo, base_sha, head_sha)
    changed_files: set[str] = set()
    added: set[str] = set()  # not at the base: no need to look there
    renamed: dict[str, str] = {}  # base path -> head path
    listed = 0
    for f in repo.get_pull(number).get_files():
        listed += 1
        changed_files.add(f.filename)
        if f.status == "added":
            added.add(f.filename)
        prev = getattr(f, "previous_filename", None)
        if prev:
            changed_files.add(prev)
            if f.status == "renamed":
                renamed[prev] = f.filename

    head_src = RefFiles(repo, head_sha)
    head_src.load_tree()
    base_src = RefFiles(repo, base_sha)
    base_src.load_tree()
    if listed >= PR_FILES_LIMIT or _int(pr.get("changed_files")) > listed:
        # the file list stopped short: the two trees say what differs past it
        changed_files |= head_src.changed_since(base_src) or set()
    head_wfs = list_workflows(head_src, settings.workflows)
    for path in head_wfs:
        head_src.with_deps(path)
    changed_head = [p for p in head_wfs if head_src.touches(p, changed_files)]

    to_base = {h: b for b, h in renamed.items()}
    base_targets = [to_base.get(p, p) for p in changed_head if p not in added]
    # workflow files the PR deletes (or renames away) exist only at the base
    base_targets += [
        p
        for p in sorted(changed_files)
        if is_workflow(p, settings.workflows) and p not in head_wfs and p not in base_targets
    ]
    base_targets = [p for p in base_targets if base_src.with_deps(p)]

    # Earlier runs on the base branch, of the workflows that exist there (by base path).
    base_ref = str((pr.get("base") or {}).get("ref") or "") or None
    on_base = [to_base.get(p, p) for p in head_wfs if p not in added] + base_targets
    history, history_info = _history(
        settings, repo, base_ref,
        _with_runs([base_src.files, head_src.files], list(dict.fromkeys(on_base))),
        sources={base_sha: base_src, head_sha: head_src},
    )
    vis = {"sizing": _sizing(settings)}
    head = estimate_files(
        head_src.files, head_wfs, predictor=predictor, profile=head_src.profile(),
        history=_renamed_history(history, renamed), **vis
    )
    head["history"] = _borrowed(history_info, head, history, renamed)
    if model is not None:
        head["model"] = model
    base = (
        estimate_files(
            base_src.files, base_targets, predictor=predictor, profile=base_src.profile(),
            history=history, **vis
        )
        if base_targets
        else {"predictor": head.get("predictor"), "workflows": [], "errors": []}
    )
    changed = sorted(set(changed_head) | set(base_targets))
    ctx = Context(
        repository=settings.repository,
        server_url=settings.server_url,
        head_sha=head_sha,
        base_sha=base_sha,
        marker=marker_for(settings.workflows),
    )
    body = render_pr_comment(head, base, changed, renamed=renamed, context=ctx, limit=COMMENT_LIMIT)
    summary = body
    if is_shortened(body):  # the summary has room for all of it
        summary = render_pr_comment(
            head, base, changed, renamed=renamed, context=ctx, limit=SUMMARY_LIMIT
        )

    problems: list[str] = []
    comment: dict[str, Any] = {"status": "skipped"}
    if settings.comment:
        comment = post_comment(gh, repo, number, body, problems, marker=ctx.marker)
    result = dict(head)
    result["pull_request"] = {
        "number": number,
        "head_sha": head_sha,
        "base_sha": base_sha,
        "changed_workflows": changed,
        "renamed": renamed,
        "base": base,
    }
    return Outcome(result=result, markdown=summary, problems=problems, comment=comment)


def merge_base(repo: Any, base_sha: str, head_sha: str) -> str:
    """Where ``head_sha`` branched from ``base_sha`` (``GET /compare``); ``base_sha`` when
    GitHub cannot say (no common ancestor, an API failure)."""
    try:
        _headers, data = repo.requester.requestJsonAndCheck(
            "GET", f"{repo.url}/compare/{base_sha}...{head_sha}", parameters={"per_page": 1}
        )
        sha = (data.get("merge_base_commit") or {}).get("sha") if isinstance(data, dict) else None
    except Exception:  # noqa: BLE001 - the base branch's tip is the next best base
        return base_sha
    return sha if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{40}", sha) else base_sha


def _with_runs(sources: list[Any], paths: list[str]) -> list[str]:
    """``paths`` without the workflows that only run when called: their jobs run (and are
    listed) in their callers' runs, which is where their history comes from. ``sources``:
    where to read the files, first hit wins."""
    from laser_ci.workflows.parse import triggers_of
    from laser_ci.workflows.yamlload import load_yaml

    out = []
    for path in paths:
        raw = next((r for src in sources if (r := src.get(path)) is not None), None)
        doc = load_yaml(raw).data if raw is not None else None
        on = doc.get("on") if isinstance(doc, dict) else None
        if triggers_of(on) != ["workflow_call"]:
            out.append(path)
    return out


def _history(settings: Settings, repo: Any, branch: str | None, paths: list[str], *,
             sources: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """Earlier runs of ``paths`` on ``branch`` (None: cold start) and what to record of it:
    ``{"branch", "max_runs", "workflows": how many had history, "notes": [...]}``."""
    info: dict[str, Any] = {"branch": branch, "max_runs": settings.history_runs,
                            "workflows": 0, "notes": []}
    if settings.history_runs <= 0:
        info["notes"].append("history disabled (`history-runs: 0`): cold-start predictions")
        return None, info
    if not paths:
        return None, info
    why = (
        "no branch" if not branch
        else "no repository" if repo is None and not settings.repository
        else "no `github-token`" if repo is None and not settings.token
        else None
    )
    if why or not branch:
        info["notes"].append(f"history unavailable ({why}): cold-start predictions")
        return None, info
    if repo is None:
        repo = _github(settings).get_repo(settings.repository)
    from laser_ci.github.history import fetch_history

    try:
        history, notes = fetch_history(repo, paths, branch=branch,
                                       max_runs=settings.history_runs,
                                       cache_dir=settings.history_cache, sources=sources)
    except Exception as exc:  # noqa: BLE001 - history is optional: never fail the run
        return None, dict(info, notes=[f"history unavailable ({describe(exc)}): cold-start "
                                       "predictions"])
    info["workflows"] = len(history.workflows)
    info["measured_jobs"] = len(history.usage)  # jobs with usage records (docs/sizing.md)
    info["notes"] = notes
    if notes:
        click.echo("laser-ci: " + "; ".join(notes))
    return history, info


def _borrowed(info: dict[str, Any], result: Mapping[str, Any], history: Any,
              renamed: Mapping[str, str]) -> dict[str, Any]:
    """``info`` without the workflows of its "no completed runs" note whose every job has
    the runs of the same job under another name (:mod:`laser_ci.workflows.same_job`): they
    are not cold starts. ``renamed``: base path -> head path."""
    from laser_ci.github.history import no_runs_note
    from laser_ci.report.jobs import runs_as

    missing = tuple(getattr(history, "without_runs", ()) or ())
    branch = info.get("branch")
    if not missing or not isinstance(branch, str):
        return info
    warm = {wf["path"] for wf in result.get("workflows") or ()
            if wf.get("jobs") and all(runs_as(j) is not None for j in wf["jobs"])}
    left = [p for p in missing if renamed.get(p, p) not in warm]
    if len(left) == len(missing):
        return info
    note = no_runs_note(branch, missing)
    notes = [n for n in info.get("notes") or () if n != note]
    return {**info, "notes": notes + ([no_runs_note(branch, left)] if left else [])}


def _renamed_history(history: Any, renamed: Mapping[str, str]) -> Any:
    """The base branch's history keyed by head paths: a renamed workflow keeps its past."""
    if history is None or not renamed:
        return history
    from laser_ci.text.history import HistoryIndex

    jobs = dict(history.jobs)
    workflows = dict(history.workflows)
    runs = dict(history.runs)
    usage = dict(history.usage)
    for old, new in renamed.items():
        for (path, name), past in history.jobs.items():
            if path == old:
                jobs[(new, name)] = past
        for (path, name), recs in history.usage.items():
            if path == old:
                usage[(new, name)] = recs
        if old in history.workflows:
            workflows[new] = history.workflows[old]
        if old in history.runs:
            runs[new] = history.runs[old]
    return HistoryIndex(jobs=jobs, workflows=workflows, source=history.source, runs=runs,
                        repo=history.repo, usage=usage)


def _sizing(settings: Settings) -> Any:
    """Cost settings for the estimate: the repository's visibility from the event; the
    repository (``github.repository``); the run a pull request's event starts (a value
    that differs by trigger is read for it); the prices of runners GitHub does not sell
    (input runner-prices: a file in the workspace, or the ``label: price`` lines)."""
    from laser_ci.estimate import SizingOptions
    from laser_ci.sizing.cost import load_runner_prices, parse_runner_prices

    prices, given = None, settings.runner_prices
    if given:
        inline = any(c in given for c in ":{\n")
        try:
            prices = (parse_runner_prices(given, "input runner-prices") if inline
                      else load_runner_prices(settings.workspace / given))
        except ValueError as exc:
            raise SettingsError(str(exc)) from exc
    event = "pull_request" if settings.event_name in PR_EVENTS else settings.event_name or None
    return SizingOptions(visibility=settings.visibility, repository=settings.repository,
                         event=event, runner_prices=prices,
                         event_payload=settings.event if event == settings.event_name else None)


# --- GitHub I/O ---------------------------------------------------------------------------


RATE_LIMIT_WAIT_S = 60  # the longest the Action waits out rate limits, all together: it is advisory


def _github(settings: Settings) -> Any:
    from github import Auth, Github

    auth = Auth.Token(settings.token) if settings.token else None
    # PyGithub's default retries POST too: a comment GitHub stored before a 502 was posted
    # again. Reads and the edit (PATCH, the same body) are retried; the create is not.
    # Rate limits are waited out for at most RATE_LIMIT_WAIT_S in all (the default waits for
    # the reset, up to an hour), then it is a cold start or a warning.
    retry = _retry(RATE_LIMIT_WAIT_S)
    return Github(
        auth=auth,
        base_url=settings.api_url,
        user_agent=f"laser-ci/{__version__}",
        seconds_between_requests=None,  # a few dozen reads; the one write keeps the default
        timeout=30,
        lazy=True,  # no GET for the repo, PR or issue objects: only the calls we use
        retry=retry,
    )


def _retry(budget_s: float) -> Any:
    """PyGithub's retry, whose waits for rate limits take at most ``budget_s`` in all, over
    every request of the client. GithubRetry sleeps what a ``Retry-After`` asks (a secondary
    rate limit's 403 or 429, a 503), uncapped, and 60 s for one without it, each time, for
    up to 10 retries: hours, or 10 minutes, where a job's ``timeout-minutes`` is 10. A 429
    without ``Retry-After`` (a primary rate limit) was not retried at all."""
    from github import GithubException, GithubRetry, RateLimitExceededException
    from urllib3.util.retry import Retry

    class _Retry(GithubRetry):
        def __init__(self, *, budget: list[float], **kwargs: Any) -> None:
            self.budget = budget  # seconds left, shared by the copies urllib3 makes
            super().__init__(**kwargs)

        def new(self, **kw: Any) -> Any:
            return super().new(budget=self.budget, **kw)

        def increment(self, method: Any = None, url: Any = None, response: Any = None,
                      error: Any = None, _pool: Any = None, _stacktrace: Any = None) -> Any:
            retry = super().increment(method, url, response, error, _pool, _stacktrace)
            if response is None:
                return retry
            try:
                after = retry.get_retry_after(response)
            except Exception:  # noqa: BLE001 - a malformed Retry-After: as if absent
                after = None
            wait = after if after else retry.get_backoff_time()
            if response.status == 429 and not after:  # retried as usual: no backoff at all
                wait = _reset_wait(response.headers, self.secondary_rate_wait)
                retry.get_backoff_time = lambda: wait
            if wait > self.budget[0]:
                cls = (RateLimitExceededException if response.status in (403, 429)
                       else GithubException)
                raise cls(response.status, _content(response, url), dict(response.headers))
            self.budget[0] -= wait
            return retry

    def _content(response: Any, url: Any) -> Any:
        try:
            return json.loads(GithubRetry.get_content(response, url))
        except Exception:  # noqa: BLE001 - the status is the message then
            return {"message": str(response.reason or "")}

    return _Retry(
        budget=[float(budget_s)],
        total=10,
        status_forcelist=[*range(500, 600), 429],  # and 403, which GithubRetry adds
        allowed_methods=Retry.DEFAULT_ALLOWED_METHODS | {"GET", "PATCH"},
        secondary_rate_wait=budget_s,
        max_rate_limit_wait=budget_s,
    )


def _reset_wait(headers: Mapping[str, str], default: float) -> float:
    """Seconds to a primary rate limit's ``X-RateLimit-Reset`` (and one more), else
    ``default``: GitHub asks for a minute when it gives no time."""
    import time

    reset = str(headers.get("X-RateLimit-Reset") or "")
    if headers.get("X-RateLimit-Remaining") == "0" and reset.isdigit():
        return max(int(reset) - time.time(), 0) + 1
    return default


# --- outputs ------------------------------------------------------------------------------


# --- click --------------------------------------------------------------------------------


@click.command("action")
def action_command() -> None:
    """Run as the GitHub Action: estimate, comment on the PR, write the job summary.

    Reads everything from the environment (GITHUB_* and the LASER_CI_* inputs of action.yml).
    """
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        click.echo(command("error", f"laser-ci: {exc}"))
        sys.exit(1)
    sys.exit(run(settings))
