"""The GitHub Action's entry point: ``laser-ci action``.

Flow (see ``action.yml``; inputs arrive only as ``LASER_CI_*`` environment variables)::

    Settings.from_env()                        read once: event, repository, paths, inputs
    pull_request / pull_request_target:
        PR files (REST)                        which workflow files the PR changes, also
                                               through local reusable workflows and actions
        contents at head and base (REST)       the workflow files and their local deps
        fetch_history(base branch)             earlier runs' job durations (actions: read),
                                               cached between runs; missing: cold start
        estimate_files(head), estimate_files(base)   both with that history
        render_pr_comment -> sticky comment    found by its hidden marker, edited in place;
                                               a 403 (fork PR, read-only token) is a notice
    any other event:
        fetch_history(current branch), estimate_paths(workspace workflows) -> render_summary
    always: annotations (p90 over timeout-minutes, read errors), $GITHUB_STEP_SUMMARY,
            the JSON result file and $GITHUB_OUTPUT (json, total-billable-minutes,
            critical-path-minutes)

PR content is only fetched as text through the contents API and parsed as YAML: nothing from
the PR is checked out or executed, so the Action is safe under ``pull_request_target``.

Exit status: 0 unless ``fail-on-error`` is true and something went wrong (a workflow that
could not be read, a GitHub API failure other than a 403 on commenting; missing run history
is only a note). Invalid input values always fail.
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
from laser_ci.comment import (
    COMMENT_LIMIT,
    MARKER,
    SUMMARY_LIMIT,
    Context,
    over_timeout,
    render_pr_comment,
    render_summary,
    totals,
)
from laser_ci.workflow import RepoProfile

PR_EVENTS = ("pull_request", "pull_request_target")
BOT_LOGIN = "github-actions[bot]"  # who GITHUB_TOKEN comments as; /user is 403 for it
_YAML = (".yml", ".yaml")
_LOCAL_USES = re.compile(r"""^[\s-]*uses\s*:\s*['"]?\./([^\s'"#@]*)""", re.MULTILINE)


class SettingsError(ValueError):
    """An input or environment variable has a value the Action cannot use."""


# --- settings -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything the Action reads from its environment, read once by :meth:`from_env`."""

    event_name: str
    event: Mapping[str, Any] = field(default_factory=dict, repr=False)  # GITHUB_EVENT_PATH
    repository: str | None = None  # GITHUB_REPOSITORY, owner/name
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
    model: Path | None = None  # input model
    history_runs: int = 20  # input history-runs: earlier runs per workflow; 0 disables
    history_cache: Path | None = None  # $RUNNER_TEMP/laser-ci-history (None: ~/.cache/...)
    ref_name: str | None = None  # GITHUB_REF_NAME: the branch of push/dispatch events

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
        workflows = (get("LASER_CI_WORKFLOWS") or ".github/workflows").strip("/") or "."
        model = get("LASER_CI_MODEL")
        return cls(
            event_name=get("GITHUB_EVENT_NAME") or "",
            event=event if isinstance(event, Mapping) else {},
            repository=get("GITHUB_REPOSITORY"),
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
            history_runs=_count("history-runs", get("LASER_CI_HISTORY_RUNS"), 20),
            history_cache=temp / "laser-ci-history" if get("RUNNER_TEMP") else None,
            ref_name=get("GITHUB_REF_NAME") or _branch_of(event),
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


def _branch_of(event: Any) -> str | None:
    ref = event.get("ref") if isinstance(event, Mapping) else None
    if isinstance(ref, str) and ref.startswith("refs/heads/"):
        return ref[len("refs/heads/"):]
    return None


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


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **props: Any) -> str:
    """One workflow command line, e.g. ``::notice file=a.yml,line=3::text``."""
    ps = ",".join(f"{k}={_escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{kind}{' ' + ps if ps else ''}::{_escape_data(message)}"


def _emit(kind: str, message: str, **props: Any) -> None:
    click.echo(command(kind, message, **props))


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
        if predictor is None:
            from laser_ci.predictors import load_predictor

            predictor = load_predictor(settings.model)  # None: LASER_CI_MODEL_DIR or shipped
        if settings.pull_request is not None:
            outcome = _run_pull_request(settings, predictor)
        else:
            outcome = _run_workspace(settings, predictor)
    except Exception as exc:  # noqa: BLE001 - advisory tool: report, never crash the job
        message = f"laser-ci could not estimate the workflows: {_describe(exc)}"
        _emit("error" if settings.fail_on_error else "warning", message)
        _append_summary(settings, f"### ⏱️ laser-ci\n\n{message}\n")
        return 1 if settings.fail_on_error else 0

    problems += outcome.problems
    _annotate(outcome.result)
    result = outcome.result
    result["comment"] = outcome.comment
    _write_json(settings.json_path, result)
    t = totals(result)
    _write_outputs(
        settings,
        {
            "json": str(settings.json_path),
            "total-billable-minutes": f"{t.billable_s / 60:.1f}",
            "critical-path-minutes": f"{t.critical_path_s / 60:.1f}",
        },
    )
    _append_summary(settings, outcome.markdown)
    for e in result.get("errors") or ():
        problems.append(f"{e.get('path')}: {e.get('message')}")
    if problems and settings.fail_on_error:
        _emit("error", f"laser-ci: {len(problems)} problem(s); fail-on-error is true")
        return 1
    return 0


def _run_workspace(settings: Settings, predictor: Any) -> Outcome:
    """push, workflow_dispatch, schedule, ...: estimate the checked-out workflows."""
    from laser_ci.estimate import estimate_paths
    from laser_ci.parse import workflow_targets

    root = settings.workspace
    target = root / settings.workflows
    if not target.exists():
        raise FileNotFoundError(
            f"no workflow files at {settings.workflows} (is the repository checked out?)"
        )
    targets, _errors = workflow_targets([str(target)], root.resolve())
    history, info = _history(settings, None, settings.ref_name, targets)
    result = dict(estimate_paths(
        [str(target)], repo_root=str(root), predictor=predictor,
        sizing=_sizing(settings), history=history,
    ))
    result["history"] = info
    ctx = Context(
        repository=settings.repository, server_url=settings.server_url, head_sha=settings.sha
    )
    return Outcome(result=result, markdown=render_summary(result, context=ctx))


def _run_pull_request(settings: Settings, predictor: Any) -> Outcome:
    from laser_ci.estimate import estimate_files

    pr = settings.pull_request or {}
    number = int(pr["number"])
    head_sha = str((pr.get("head") or {}).get("sha") or "")
    base_sha = str((pr.get("base") or {}).get("sha") or "")
    if not (settings.repository and head_sha and base_sha):
        raise SettingsError("the event payload lacks the repository or the head/base SHAs")

    gh = _github(settings)
    repo = gh.get_repo(settings.repository)
    changed_files: set[str] = set()
    added: set[str] = set()  # not at the base: no need to look there
    renamed: dict[str, str] = {}  # base path -> head path
    for f in repo.get_pull(number).get_files():
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
    head_wfs = _list_workflows(head_src, settings.workflows)
    for path in head_wfs:
        head_src.with_deps(path)
    changed_head = [p for p in head_wfs if head_src.touches(p, changed_files)]

    base_src = RefFiles(repo, base_sha)
    base_src.load_tree()
    to_base = {h: b for b, h in renamed.items()}
    base_targets = [to_base.get(p, p) for p in changed_head if p not in added]
    # workflow files the PR deletes (or renames away) exist only at the base
    base_targets += [
        p
        for p in sorted(changed_files)
        if _is_workflow(p, settings.workflows) and p not in head_wfs and p not in base_targets
    ]
    base_targets = [p for p in base_targets if base_src.with_deps(p)]

    # Earlier runs on the base branch, of the workflows that exist there (by base path).
    base_ref = str((pr.get("base") or {}).get("ref") or "") or None
    on_base = [to_base.get(p, p) for p in head_wfs if p not in added] + base_targets
    history, history_info = _history(
        settings, repo, base_ref, list(dict.fromkeys(on_base)),
        sources={base_sha: base_src, head_sha: head_src},
    )
    vis = {"sizing": _sizing(settings)}
    head = estimate_files(
        head_src.files, head_wfs, predictor=predictor, profile=head_src.profile(),
        history=_renamed_history(history, renamed), **vis
    )
    head["history"] = history_info
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
    )
    body = render_pr_comment(head, base, changed, renamed=renamed, context=ctx, limit=COMMENT_LIMIT)
    summary = body
    if len(body) >= COMMENT_LIMIT - 1000:  # the comment was cut: the summary has room for all
        summary = render_pr_comment(
            head, base, changed, renamed=renamed, context=ctx, limit=SUMMARY_LIMIT
        )

    problems: list[str] = []
    comment: dict[str, Any] = {"status": "skipped"}
    if settings.comment:
        comment = _post_comment(gh, repo, number, body, problems)
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
    from laser_ci.github_history import fetch_history

    try:
        history, notes = fetch_history(repo, paths, branch=branch,
                                       max_runs=settings.history_runs,
                                       cache_dir=settings.history_cache, sources=sources)
    except Exception as exc:  # noqa: BLE001 - history is optional: never fail the run
        return None, dict(info, notes=[f"history unavailable ({_describe(exc)}): cold-start "
                                       "predictions"])
    info["workflows"] = len(history.workflows)
    info["notes"] = notes
    if notes:
        click.echo("laser-ci: " + "; ".join(notes))
    return history, info


def _renamed_history(history: Any, renamed: Mapping[str, str]) -> Any:
    """The base branch's history keyed by head paths: a renamed workflow keeps its past."""
    if history is None or not renamed:
        return history
    from laser_ci.history import HistoryIndex

    jobs = dict(history.jobs)
    workflows = dict(history.workflows)
    for old, new in renamed.items():
        for (path, name), past in history.jobs.items():
            if path == old:
                jobs[(new, name)] = past
        if old in history.workflows:
            workflows[new] = history.workflows[old]
    return HistoryIndex(jobs=jobs, workflows=workflows, source=history.source)


def _sizing(settings: Settings) -> Any:
    """Cost settings for the estimate: the repository's visibility from the event."""
    from laser_ci.estimate import SizingOptions

    return SizingOptions(visibility=settings.visibility)


# --- GitHub I/O ---------------------------------------------------------------------------


def _github(settings: Settings) -> Any:
    from github import Auth, Github

    auth = Auth.Token(settings.token) if settings.token else None
    return Github(
        auth=auth,
        base_url=settings.api_url,
        user_agent=f"laser-ci/{__version__}",
        seconds_between_requests=None,  # a few dozen reads; the one write keeps the default
        timeout=30,
        lazy=True,  # no GET for the repo, PR or issue objects: only the calls we use
    )


class RefFiles:
    """The repository at one commit, read through the REST API and never checked out.

    One git-trees call lists every path (for the repository profile the predictor reads, and
    to know which files exist); the contents API then reads only the workflow files and the
    local reusable workflows and actions they use.
    """

    def __init__(self, repo: Any, ref: str) -> None:
        self.repo, self.ref = repo, ref
        self.files: dict[str, bytes] = {}
        self.tree: dict[str, int] | None = None  # path -> size; None: unknown (listing failed)
        self._missing: set[str] = set()
        self._deps: dict[str, set[str]] = {}

    def load_tree(self) -> None:
        from github import GithubException

        try:
            tree = self.repo.get_git_tree(self.ref, recursive=True)
        except GithubException as exc:
            if exc.status in (404, 409, 422):  # unknown or empty: fall back to contents
                return
            raise
        self.tree = {e.path: int(e.size or 0) for e in tree.tree if e.type == "blob"}
        if getattr(tree, "raw_data", {}).get("truncated"):
            self.tree = None  # a huge repository: the listing is partial, do not trust it

    def profile(self) -> RepoProfile | None:
        if not self.tree:
            return None
        from laser_ci.repo_profile import MAX_FILES, profile_from_files

        return profile_from_files(list(self.tree.items())[:MAX_FILES])

    def get(self, path: str) -> bytes | None:
        if path in self.files:
            return self.files[path]
        if path in self._missing or (self.tree is not None and path not in self.tree):
            return None
        from github import GithubException

        try:
            content = self.repo.get_contents(path, ref=self.ref)
        except GithubException as exc:
            if exc.status == 404:
                self._missing.add(path)
                return None
            raise
        if isinstance(content, list):  # a folder
            self._missing.add(path)
            return None
        self.files[path] = content.decoded_content
        return self.files[path]

    def listdir(self, folder: str) -> list[str]:
        if self.tree is not None:
            prefix = folder.rstrip("/") + "/"
            return sorted(p for p in self.tree if p.startswith(prefix) and "/" not in p[len(prefix) :])
        from github import GithubException

        try:
            entries = self.repo.get_contents(folder, ref=self.ref)
        except GithubException as exc:
            if exc.status == 404:
                return []
            raise
        if not isinstance(entries, list):
            return [entries.path]
        return sorted(e.path for e in entries if e.type == "file")

    def with_deps(self, path: str) -> bool:
        """Reads ``path`` and, transitively, the local files it ``uses:``; False if absent."""
        if self.get(path) is None:
            return False
        todo = [path]
        while todo:
            p = todo.pop()
            if p in self._deps:
                continue
            deps: set[str] = set()
            for dep in _local_uses(self.files.get(p, b"")):
                if dep.endswith(_YAML):
                    found = dep if self.get(dep) is not None else None
                else:
                    prefix = f"{dep}/" if dep else ""
                    found = next(
                        (
                            c
                            for c in (f"{prefix}action.yml", f"{prefix}action.yaml")
                            if self.get(c) is not None
                        ),
                        None,
                    )
                if found:
                    deps.add(found)
                    todo.append(found)
            self._deps[p] = deps
        return True

    def touches(self, path: str, changed: set[str]) -> bool:
        """Whether ``path`` or any local file it uses (transitively) is in ``changed``."""
        seen: set[str] = set()
        todo = [path]
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            if p in changed:
                return True
            todo.extend(self._deps.get(p, ()))
        return False


def _local_uses(content: bytes) -> list[str]:
    text = content.decode("utf-8", errors="replace")
    out = []
    for m in _LOCAL_USES.finditer(text):
        dep = m.group(1).strip().rstrip("/")
        if dep.startswith("./"):
            dep = dep[2:]
        if ".." not in dep.split("/"):
            out.append(dep)
    return out


def _is_workflow(path: str, workflows: str) -> bool:
    if workflows.endswith(_YAML):
        return path == workflows
    return path.endswith(_YAML) and path.rsplit("/", 1)[0] == workflows


def _list_workflows(src: RefFiles, workflows: str) -> list[str]:
    if workflows.endswith(_YAML):
        return [workflows] if src.get(workflows) is not None else []
    return [p for p in src.listdir(workflows) if _is_workflow(p, workflows)]


def _post_comment(gh: Any, repo: Any, number: int, body: str, problems: list[str]) -> dict:
    """Creates or edits the one sticky comment; a 403 becomes a notice, not a failure."""
    from github import GithubException

    issue = repo.get_issue(number)
    try:
        marked = [c for c in issue.get_comments() if MARKER in (c.body or "")]
        mine = _own_comments(gh, marked)
        if mine:
            existing = mine[0]
            if existing.body == body:
                return {"status": "unchanged", "id": existing.id, "url": existing.html_url}
            existing.edit(body)
            click.echo(f"laser-ci: updated comment {existing.html_url}")
            return {"status": "updated", "id": existing.id, "url": existing.html_url}
        created = issue.create_comment(body)
        click.echo(f"laser-ci: created comment {created.html_url}")
        return {"status": "created", "id": created.id, "url": created.html_url}
    except GithubException as exc:
        if exc.status == 403:
            _emit(
                "notice",
                "laser-ci could not comment on the pull request (403: "
                f"{_gh_message(exc)}). This is expected for pull requests from forks and for "
                "tokens without pull-requests: write; the prediction is in the job summary.",
                title="laser-ci: no PR comment",
            )
            return {"status": "forbidden"}
        problems.append(f"commenting failed: {_describe(exc)}")
        _emit("warning", f"laser-ci could not comment on the pull request: {_describe(exc)}")
        return {"status": "failed"}


def _own_comments(gh: Any, marked: list[Any]) -> list[Any]:
    """The marked comments written by this token's user (GITHUB_TOKEN: github-actions[bot])."""
    if not marked:
        return []
    from github import GithubException

    try:
        me = gh.get_user().login
    except GithubException:  # installation tokens may not call GET /user
        me = None
    if me:
        return [c for c in marked if c.user and c.user.login == me]
    return [c for c in marked if c.user and (c.user.login == BOT_LOGIN or c.user.type == "Bot")]


def _gh_message(exc: Exception) -> str:
    data = getattr(exc, "data", None)
    if isinstance(data, Mapping) and data.get("message"):
        return str(data["message"])
    return str(exc)


def _describe(exc: Exception) -> str:
    status = getattr(exc, "status", None)
    if status is not None:
        return f"GitHub API {status}: {_gh_message(exc)}"
    return f"{type(exc).__name__}: {exc}"


# --- outputs ------------------------------------------------------------------------------


def _annotate(result: Mapping[str, Any]) -> None:
    pr = result.get("pull_request")
    only = set(pr.get("changed_workflows") or ()) if isinstance(pr, Mapping) else None
    for wf in result.get("workflows") or ():
        if only is not None and wf.get("path") not in only:
            continue  # on a PR, annotate what the PR touches, not every workflow every time
        for job in wf.get("jobs") or ():
            hit = over_timeout(job)
            if hit is None:
                continue
            p90_min, timeout = hit
            limit = (
                f"its timeout-minutes: {timeout:g}"
                if job.get("timeout_minutes") is not None
                else f"GitHub's default timeout of {timeout:g} min"
            )
            _emit(
                "notice",
                f"Job '{job.get('name')}' has a predicted p90 runtime of {p90_min:.0f} min, "
                f"above {limit}.",
                file=wf.get("path"),
                line=job.get("line"),
                title="laser-ci: may hit its timeout",
            )
    for e in result.get("errors") or ():
        _emit("warning", str(e.get("message")), file=e.get("path"), line=e.get("line"),
              title="laser-ci: cannot read")


def _write_json(path: Path, result: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _write_outputs(settings: Settings, outputs: Mapping[str, str]) -> None:
    lines = "".join(f"{k}={v}\n" for k, v in outputs.items())
    if settings.output is None:
        click.echo(lines, nl=False)
        return
    with settings.output.open("a", encoding="utf-8") as fh:
        fh.write(lines)


def _append_summary(settings: Settings, markdown: str) -> None:
    if settings.step_summary is None:
        click.echo(markdown)
        return
    with settings.step_summary.open("a", encoding="utf-8") as fh:
        fh.write(markdown.rstrip("\n") + "\n")


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
