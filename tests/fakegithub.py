"""A fake GitHub REST API for tests: a real local HTTP server, no internet.

``FakeGitHub`` starts a stdlib ``ThreadingHTTPServer`` on ``127.0.0.1`` (a free port) in a
background thread and answers the REST endpoints laser-ci uses, with JSON shaped like
GitHub's (same field names and nesting), ``Link``-header pagination, rate-limit headers,
and failures you inject. The state is a plain Python object the test fills; every request
is recorded so a test can assert on what the client asked for.

Quick start::

    from fakegithub import FakeGitHub          # tests/ is on sys.path under pytest

    with FakeGitHub() as gh:                   # or gh = FakeGitHub(); ...; gh.close()
        gh.add_repo("octo/app")
        sha = gh.add_commit("octo/app", {".github/workflows/ci.yml": "on: push\\n..."},
                            branch="main")
        run = gh.add_run("octo/app", workflow_path=".github/workflows/ci.yml", head_sha=sha,
                         created_at="2024-05-01T10:00:00Z",
                         jobs=[{"name": "test", "started_at": "2024-05-01T10:00:05Z",
                                "completed_at": "2024-05-01T10:03:05Z"}])
        g = Github(base_url=gh.url, auth=Auth.Token("x"), retry=None,
                   seconds_between_requests=None, seconds_between_writes=None)
        g.get_repo("octo/app").get_workflow_runs(status="completed")

PyGithub accepts any ``base_url`` (it keeps the path as a prefix); ``FakeGitHub()`` serves
at the root, ``FakeGitHub(prefix="/api/v3")`` serves like a GitHub Enterprise Server.
Pass ``retry=None`` and ``seconds_between_*=None`` to ``Github(...)`` in tests: PyGithub's
default retry sleeps on rate limits and retries 5xx itself, and it throttles requests.

State (fill it with the ``add_*`` methods; all return the JSON dict they stored, which
you may edit in place; ``repo`` is always ``"owner/name"``):

- ``add_repo(repo, default_branch="main", private=False, **fields)``
- ``add_commit(repo, {path: text|bytes|Symlink(target)}, sha=None, branch=None, date=None,
  parents=None)`` -> commit sha: the whole file tree at that commit (contents, git trees and
  PR diffs read it); ``parents`` (shas) give ``/compare`` its merge base. A ``Symlink`` is
  a link (tree mode ``120000``): the contents API answers with the file it points to when
  that is a file of the commit, else with ``"type": "symlink"`` and no content. A file over
  1 MB comes back from the contents API with ``"encoding": "none"`` and no content, as
  from GitHub; read it through ``/git/blobs/{sha}``.
  ``set_ref(repo, name, sha)`` points a branch/tag name at a commit.
- ``add_workflow(repo, path, name=None, id=None, state="active")`` (runs add one if missing)
- ``add_run(repo, workflow_path=, head_sha=, created_at=, event="push", head_branch="main",
  status="completed", conclusion="success", run_attempt=1, jobs=[...], id=None, **fields)``;
  each job is a dict of ``add_job`` keyword arguments.
- ``add_job(repo, run_id, name=, started_at=, completed_at=, conclusion="success",
  labels=["ubuntu-latest"], runner_name="GitHub Actions 2", run_attempt=None, **fields)``
- ``add_pull(repo, number, head_sha=, base_sha=, head_ref="feature", base_ref="main",
  files=None, **fields)``: ``files`` is a list of filenames or of ``/pulls/{n}/files``
  dicts; when ``None`` it is computed from the two commits (added/modified/removed).
- ``add_comment(repo, number, body, user=None)``; ``comments(repo, number)`` lists them.
- ``add_artifact(repo, run_id, name, data, expired=False)``: a run's artifact (``data``: the
  zip's bytes); its ``/zip`` answers ``302`` to ``/_artifact_blobs/{id}`` (storage: no token
  needed, and ``requests_to`` shows whether one was sent).
- ``user`` (the token's ``/user``), ``token`` (``None``: accept any; a string: other
  tokens get ``401 Bad credentials``), ``max_filtered_results`` (GitHub returns at most
  1000 runs when a run list is filtered by status/branch/created/...; lower it in tests),
  ``truncate_trees`` (git trees answer ``truncated: true`` with only the top level),
  ``carry_over_jobs`` (``filter=latest`` answers each job name's latest execution, as
  GitHub does after "re-run failed jobs": the jobs not re-run are listed from the attempt
  they ran in; default ``False``: only the run's latest attempt's jobs).

Endpoints (all ``GET`` unless noted; lists take ``per_page`` (default 30, max 100) and
``page``, and answer with a ``Link`` header holding ``next``/``last``/``prev``/``first``)::

    /repos/{o}/{r}                              /user         /rate_limit
    /repos/{o}/{r}/actions/workflows            /repos/{o}/{r}/actions/workflows/{id|file}
    /repos/{o}/{r}/actions/runs                 (status, branch, event, created, head_sha)
    /repos/{o}/{r}/actions/workflows/{id|file}/runs
    /repos/{o}/{r}/actions/runs/{id}            /repos/{o}/{r}/actions/runs/{id}/jobs
                                                (filter=latest|all)
    /repos/{o}/{r}/contents/{path}?ref=         (file: base64; directory: listing)
    /repos/{o}/{r}/git/trees/{sha|ref}?recursive=1
    /repos/{o}/{r}/git/blobs/{sha}
    /repos/{o}/{r}/pulls/{n}                    /repos/{o}/{r}/pulls/{n}/files
                                                (its three-dot diff, computed or given)
    /repos/{o}/{r}/compare/{base}...{head}      merge_base_commit, ahead_by, behind_by
    /repos/{o}/{r}/issues/{n}
    /repos/{o}/{r}/actions/runs/{id}/artifacts  /repos/{o}/{r}/actions/artifacts/{id}/zip
    /repos/{o}/{r}/issues/{n}/comments          GET, POST {"body"}
    /repos/{o}/{r}/issues/comments/{id}         GET, PATCH {"body"}

Failures: each ``inject*`` call queues a canned answer for requests whose ``METHOD`` matches
and whose path-plus-query (prefix removed, percent-decoded, e.g.
``/repos/o/r/actions/runs?status=completed&page=2``) matches ``pattern`` (``re.search``);
``times`` answers (``None``: forever), then the real endpoint answers again. Returns a
``Fault``; ``fault.hits`` counts the answers given.

- ``inject_rate_limit(pattern, reset_in=1.0, status=403)``: ``API rate limit exceeded``
  with ``X-RateLimit-Remaining: 0`` and ``X-RateLimit-Reset`` ``reset_in`` seconds ahead.
- ``inject_secondary_rate_limit(pattern, retry_after=1)``: 403 with ``Retry-After``.
- ``inject_server_error(pattern, status=500, after=False)``: ``{"message": "Server Error"}``.
- ``inject_forbidden(pattern, method=None)``: 403 ``Resource not accessible by
  integration`` (what a read-only ``GITHUB_TOKEN`` gets when it writes).
- ``inject(pattern, status, body, headers=None, method=None, times=1, after=False)``:
  anything else; ``body`` is a JSON-able object, or ``str``/``bytes`` sent as is
  (malformed answers). ``after=True``: the endpoint does its work first and its answer is
  lost (a 502 after a comment was stored).

Requests: ``gh.requests`` is the list of ``Request(method, path, query, headers, body,
status)`` answered so far (path without prefix or query; ``query`` a ``{name: value}``
dict; ``headers`` lower-cased; ``body`` the parsed JSON). ``gh.requests_to(pattern,
method=None)`` filters them with ``re.search`` on ``path``; ``gh.clear_requests()``.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DOCS = "https://docs.github.com/rest"
CONTENTS_LIMIT = 1024 * 1024  # larger files: "encoding": "none" from the contents API


@dataclass(frozen=True)
class Symlink:
    """A symbolic link in a commit; ``target`` as git stores it (relative to its folder)."""

    target: str
_RUN_FILTERS = ("actor", "branch", "check_suite_id", "created", "event", "head_sha", "status")
_RUN_STATUSES = {"queued", "in_progress", "completed", "waiting", "requested", "pending"}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    status: int = 0


@dataclass
class Fault:
    pattern: str
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    method: str | None = None
    times: int | None = 1
    hits: int = 0
    after: bool = False  # the endpoint runs first, then this answer replaces its own

    def matches(self, method: str, target: str) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.method and self.method.upper() != method:
            return False
        return re.search(self.pattern, target) is not None


class HTTPError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def git_blob_sha(data: bytes) -> str:
    """The git object id of a blob, as GitHub reports it in trees and contents."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _b64_lines(data: bytes) -> str:
    b64 = base64.b64encode(data).decode()
    return "".join(b64[i : i + 60] + "\n" for i in range(0, len(b64), 60))


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(value: str) -> datetime:
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _bound(text: str, upper: bool) -> datetime:
    """A ``created`` filter bound: a date covers its whole day."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        day = datetime.fromisoformat(text).replace(tzinfo=UTC)
        return day + timedelta(days=1) - timedelta(microseconds=1) if upper else day
    return _parse_time(text)


def created_matches(expr: str, value: str) -> bool:
    """GitHub's date qualifier syntax: ``>=D``, ``>D``, ``<=D``, ``<D``, ``A..B``, ``D``."""
    t = _parse_time(value)
    expr = expr.strip()
    for op in (">=", "<=", ">", "<"):
        if expr.startswith(op):
            rest = expr[len(op) :]
            if op == ">=":
                return t >= _bound(rest, upper=False)
            if op == ">":
                return t > _bound(rest, upper=True)
            if op == "<=":
                return t <= _bound(rest, upper=True)
            return t < _bound(rest, upper=False)
    if ".." in expr:
        lo, hi = expr.split("..", 1)
        return (lo == "*" or t >= _bound(lo, upper=False)) and (hi == "*" or t <= _bound(hi, upper=True))
    return _bound(expr, upper=False) <= t <= _bound(expr, upper=True)


class FakeGitHub:
    """A local GitHub REST API; see the module docstring."""

    def __init__(self, prefix: str = "", token: str | None = None):
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self.token = token
        self.max_filtered_results = 1000
        self.truncate_trees = False
        self.carry_over_jobs = False
        self.user: dict[str, Any] = {
            "login": "github-actions[bot]",
            "id": 41898282,
            "node_id": "MDM6Qm90NDE4OTgyODI=",
            "type": "Bot",
            "site_admin": False,
        }
        self.rate_limit = 5000
        self.repos: dict[str, dict[str, Any]] = {}
        self.workflows: dict[str, list[dict[str, Any]]] = {}
        self.runs: dict[str, list[dict[str, Any]]] = {}
        self.jobs: dict[int, list[dict[str, Any]]] = {}
        self.commits: dict[tuple[str, str], dict[str, bytes]] = {}
        self.symlinks: dict[tuple[str, str], set[str]] = {}
        self.commit_dates: dict[tuple[str, str], str] = {}
        self.parents: dict[tuple[str, str], list[str]] = {}
        self.refs: dict[tuple[str, str], str] = {}
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.pull_files: dict[tuple[str, int], list[dict[str, Any]] | None] = {}
        self.issue_comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.faults: list[Fault] = []
        self.artifacts: dict[int, list[dict[str, Any]]] = {}  # run id -> its artifacts
        self.artifact_blobs: dict[int, bytes] = {}
        self.requests: list[Request] = []
        self.lock = threading.RLock()
        self._ids = itertools.count(1000)

        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_GET(self) -> None:  # noqa: N802
                fake._handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                fake._handle(self, "POST")

            def do_PATCH(self) -> None:  # noqa: N802
                fake._handle(self, "PATCH")

            def do_DELETE(self) -> None:  # noqa: N802
                fake._handle(self, "DELETE")

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}{self.prefix}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    # ---- lifecycle ------------------------------------------------------------------------
    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- state ----------------------------------------------------------------------------
    def _next_id(self) -> int:
        return next(self._ids)

    def _repo(self, repo: str) -> dict[str, Any]:
        if repo not in self.repos:
            self.add_repo(repo)
        return self.repos[repo]

    def add_repo(
        self, repo: str, default_branch: str = "main", private: bool = False, **fields: Any
    ) -> dict[str, Any]:
        owner, name = repo.split("/", 1)
        rid = self._next_id()
        api = f"{self.url}/repos/{repo}"
        data: dict[str, Any] = {
            "id": rid,
            "node_id": base64.b64encode(f"010:Repository{rid}".encode()).decode(),
            "name": name,
            "full_name": repo,
            "private": private,
            "owner": self._user_json(owner, 9000 + rid, "Organization"),
            "html_url": f"https://github.com/{repo}",
            "description": f"{name} description",
            "fork": False,
            "url": api,
            "forks_url": f"{api}/forks",
            "hooks_url": f"{api}/hooks",
            "issue_comment_url": f"{api}/issues/comments{{/number}}",
            "contents_url": f"{api}/contents/{{+path}}",
            "pulls_url": f"{api}/pulls{{/number}}",
            "issues_url": f"{api}/issues{{/number}}",
            "trees_url": f"{api}/git/trees{{/sha}}",
            "created_at": "2020-01-01T00:00:00Z",
            "updated_at": "2024-01-01T00:00:00Z",
            "pushed_at": "2024-01-01T00:00:00Z",
            "git_url": f"git://github.com/{repo}.git",
            "ssh_url": f"git@github.com:{repo}.git",
            "clone_url": f"https://github.com/{repo}.git",
            "homepage": None,
            "size": 1024,
            "stargazers_count": 10,
            "watchers_count": 10,
            "language": "Python",
            "has_issues": True,
            "has_projects": True,
            "has_downloads": True,
            "has_wiki": True,
            "has_pages": False,
            "has_discussions": False,
            "forks_count": 1,
            "archived": False,
            "disabled": False,
            "open_issues_count": 0,
            "license": None,
            "allow_forking": True,
            "is_template": False,
            "topics": [],
            "visibility": "private" if private else "public",
            "forks": 1,
            "open_issues": 0,
            "watchers": 10,
            "default_branch": default_branch,
            "permissions": {
                "admin": False,
                "maintain": False,
                "push": False,
                "triage": False,
                "pull": True,
            },
            "network_count": 1,
            "subscribers_count": 1,
        }
        data.update(fields)
        with self.lock:
            self.repos[repo] = data
            self.workflows.setdefault(repo, [])
            self.runs.setdefault(repo, [])
        return data

    def add_commit(
        self,
        repo: str,
        files: dict[str, str | bytes],
        sha: str | None = None,
        branch: str | None = None,
        date: str | None = None,
        parents: list[str] | None = None,
    ) -> str:
        self._repo(repo)
        links = {p for p, v in files.items() if isinstance(v, Symlink)}
        blobs = {
            p: v.target.encode() if isinstance(v, Symlink) else v.encode() if isinstance(v, str) else v
            for p, v in files.items()
        }
        if sha is None:
            h = hashlib.sha1(repo.encode())
            for p in sorted(blobs):
                h.update(p.encode() + b"\0" + blobs[p] + b"\0")
            h.update(str(self._next_id()).encode())
            sha = h.hexdigest()
        with self.lock:
            self.commits[(repo, sha)] = blobs
            self.symlinks[(repo, sha)] = links
            self.commit_dates[(repo, sha)] = date or _now()
            self.parents[(repo, sha)] = list(parents or ())
            if branch:
                self.refs[(repo, branch)] = sha
        return sha

    def set_ref(self, repo: str, name: str, sha: str) -> None:
        with self.lock:
            self.refs[(repo, name)] = sha

    def add_workflow(
        self,
        repo: str,
        path: str,
        name: str | None = None,
        id: int | None = None,  # noqa: A002
        state: str = "active",
    ) -> dict[str, Any]:
        self._repo(repo)
        wid = id or self._next_id()
        data = {
            "id": wid,
            "node_id": base64.b64encode(f"002:Workflow{wid}".encode()).decode(),
            "name": name or path.rsplit("/", 1)[-1].rsplit(".", 1)[0],
            "path": path,
            "state": state,
            "created_at": "2020-01-01T00:00:00.000Z",
            "updated_at": "2024-01-01T00:00:00.000Z",
            "url": f"{self.url}/repos/{repo}/actions/workflows/{wid}",
            "html_url": f"https://github.com/{repo}/blob/main/{path}",
            "badge_url": f"https://github.com/{repo}/workflows/{name or path}/badge.svg",
        }
        with self.lock:
            self.workflows[repo].append(data)
        return data

    def add_run(
        self,
        repo: str,
        *,
        workflow_path: str,
        head_sha: str,
        created_at: str,
        event: str = "push",
        head_branch: str | None = "main",
        status: str = "completed",
        conclusion: str | None = "success",
        run_attempt: int = 1,
        jobs: list[dict[str, Any]] | None = None,
        id: int | None = None,  # noqa: A002
        **fields: Any,
    ) -> dict[str, Any]:
        repo_json = self._repo(repo)
        wf = next((w for w in self.workflows[repo] if w["path"] == workflow_path), None)
        if wf is None:
            wf = self.add_workflow(repo, workflow_path)
        rid = id or self._next_id()
        api = f"{self.url}/repos/{repo}/actions/runs/{rid}"
        updated = created_at
        stamp = self.commit_dates.get((repo, head_sha), created_at)
        actor = self._user_json("octocat", 583231, "User")
        data: dict[str, Any] = {
            "id": rid,
            "name": wf["name"],
            "node_id": base64.b64encode(f"WFR_{rid}".encode()).decode(),
            "head_branch": head_branch,
            "head_sha": head_sha,
            "path": workflow_path,
            "display_title": f"Commit {head_sha[:7]}",
            "run_number": len(self.runs[repo]) + 1,
            "event": event,
            "status": status,
            "conclusion": conclusion if status == "completed" else None,
            "workflow_id": wf["id"],
            "check_suite_id": rid + 7,
            "check_suite_node_id": f"CS_{rid + 7}",
            "url": api,
            "html_url": f"https://github.com/{repo}/actions/runs/{rid}",
            "pull_requests": [],
            "created_at": created_at,
            "updated_at": updated,
            "actor": actor,
            "run_attempt": run_attempt,
            "referenced_workflows": [],
            "run_started_at": created_at,
            "triggering_actor": actor,
            "jobs_url": f"{api}/jobs",
            "logs_url": f"{api}/logs",
            "check_suite_url": f"{self.url}/repos/{repo}/check-suites/{rid + 7}",
            "artifacts_url": f"{api}/artifacts",
            "cancel_url": f"{api}/cancel",
            "rerun_url": f"{api}/rerun",
            "previous_attempt_url": (f"{api}/attempts/{run_attempt - 1}" if run_attempt > 1 else None),
            "workflow_url": wf["url"],
            "head_commit": {
                "id": head_sha,
                "tree_id": hashlib.sha1(head_sha.encode()).hexdigest(),
                "message": "a commit",
                "timestamp": stamp,
                "author": {"name": "Octo Cat", "email": "octocat@example.com"},
                "committer": {"name": "GitHub", "email": "noreply@github.com"},
            },
            "repository": self._mini_repo(repo_json),
            "head_repository": self._mini_repo(repo_json),
        }
        data.update(fields)
        with self.lock:
            self.runs[repo].append(data)
            self.jobs.setdefault(rid, [])
        for job in jobs or []:
            self.add_job(repo, rid, **job)
        return data

    def add_job(
        self,
        repo: str,
        run_id: int,
        *,
        name: str,
        started_at: str | None,
        completed_at: str | None,
        conclusion: str | None = "success",
        status: str = "completed",
        labels: list[str] | None = None,
        runner_name: str | None = "GitHub Actions 2",
        run_attempt: int | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        run = next(r for r in self.runs[repo] if r["id"] == run_id)
        jid = self._next_id()
        attempt = run_attempt or run["run_attempt"]
        step_start = started_at
        data: dict[str, Any] = {
            "id": jid,
            "run_id": run_id,
            "workflow_name": run["name"],
            "head_branch": run["head_branch"],
            "run_url": run["url"],
            "run_attempt": attempt,
            "node_id": f"CR_{jid}",
            "head_sha": run["head_sha"],
            "url": f"{self.url}/repos/{repo}/actions/jobs/{jid}",
            "html_url": f"https://github.com/{repo}/actions/runs/{run_id}/job/{jid}",
            "status": status,
            "conclusion": conclusion,
            "created_at": started_at or run["created_at"],
            "started_at": started_at,
            "completed_at": completed_at,
            "name": name,
            "steps": [
                {
                    "name": "Set up job",
                    "status": status,
                    "conclusion": conclusion,
                    "number": 1,
                    "started_at": step_start,
                    "completed_at": completed_at,
                }
            ]
            if started_at
            else [],
            "check_run_url": f"{self.url}/repos/{repo}/check-runs/{jid}",
            "labels": list(labels if labels is not None else ["ubuntu-latest"]),
            "runner_id": 2 if runner_name else None,
            "runner_name": runner_name,
            "runner_group_id": 2 if runner_name else None,
            "runner_group_name": "GitHub Actions" if runner_name else None,
        }
        data.update(fields)
        with self.lock:
            self.jobs.setdefault(run_id, []).append(data)
        return data

    def add_artifact(self, repo: str, run_id: int, name: str, data: bytes,
                     expired: bool = False) -> dict[str, Any]:
        aid = self._next_id()
        run = next(r for r in self.runs[repo] if r["id"] == run_id)
        item = {
            "id": aid, "node_id": f"MDg6QXJ0aWZhY3Q{aid}", "name": name,
            "size_in_bytes": len(data), "expired": expired,
            "url": f"{self.url}/repos/{repo}/actions/artifacts/{aid}",
            "archive_download_url": f"{self.url}/repos/{repo}/actions/artifacts/{aid}/zip",
            "created_at": run["created_at"], "updated_at": run["created_at"],
            "expires_at": run["created_at"],
            "workflow_run": {"id": run_id, "head_sha": run["head_sha"],
                             "head_branch": run["head_branch"]},
        }
        with self.lock:
            self.artifacts.setdefault(run_id, []).append(item)
            self.artifact_blobs[aid] = data
        return item

    def add_pull(
        self,
        repo: str,
        number: int,
        *,
        head_sha: str,
        base_sha: str,
        head_ref: str = "feature",
        base_ref: str = "main",
        files: list[str] | list[dict[str, Any]] | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        repo_json = self._repo(repo)
        api = f"{self.url}/repos/{repo}"
        pid = self._next_id()
        owner = repo.split("/")[0]
        data: dict[str, Any] = {
            "url": f"{api}/pulls/{number}",
            "id": pid,
            "node_id": f"PR_{pid}",
            "html_url": f"https://github.com/{repo}/pull/{number}",
            "diff_url": f"https://github.com/{repo}/pull/{number}.diff",
            "patch_url": f"https://github.com/{repo}/pull/{number}.patch",
            "issue_url": f"{api}/issues/{number}",
            "commits_url": f"{api}/pulls/{number}/commits",
            "review_comments_url": f"{api}/pulls/{number}/comments",
            "comments_url": f"{api}/issues/{number}/comments",
            "statuses_url": f"{api}/statuses/{head_sha}",
            "number": number,
            "state": "open",
            "locked": False,
            "title": f"Pull request {number}",
            "user": self._user_json("octocat", 583231, "User"),
            "body": "",
            "labels": [],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": "2024-01-01T00:00:00Z",
            "updated_at": "2024-01-01T00:00:00Z",
            "closed_at": None,
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": {
                "label": f"{owner}:{head_ref}",
                "ref": head_ref,
                "sha": head_sha,
                "user": repo_json["owner"],
                "repo": repo_json,
            },
            "base": {
                "label": f"{owner}:{base_ref}",
                "ref": base_ref,
                "sha": base_sha,
                "user": repo_json["owner"],
                "repo": repo_json,
            },
            "author_association": "CONTRIBUTOR",
            "draft": False,
            "merged": False,
            "mergeable": True,
            "rebaseable": True,
            "mergeable_state": "clean",
            "comments": 0,
            "review_comments": 0,
            "commits": 1,
            "additions": 0,
            "deletions": 0,
            "changed_files": 0,
        }
        data.update(fields)
        norm: list[dict[str, Any]] | None = None
        if files is not None:
            norm = [f if isinstance(f, dict) else self._pr_file(repo, head_sha, f, "modified") for f in files]
        with self.lock:
            self.pulls[(repo, number)] = data
            self.pull_files[(repo, number)] = norm
            self.issue_comments.setdefault((repo, number), [])
        return data

    def add_comment(
        self, repo: str, number: int, body: str, user: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        cid = self._next_id()
        api = f"{self.url}/repos/{repo}"
        now = _now()
        data = {
            "id": cid,
            "node_id": f"IC_{cid}",
            "url": f"{api}/issues/comments/{cid}",
            "html_url": f"https://github.com/{repo}/pull/{number}#issuecomment-{cid}",
            "body": body,
            "user": dict(user or self.user),
            "created_at": now,
            "updated_at": now,
            "issue_url": f"{api}/issues/{number}",
            "author_association": "NONE",
            "performed_via_github_app": None,
        }
        with self.lock:
            self.issue_comments.setdefault((repo, number), []).append(data)
        return data

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.issue_comments.get((repo, number), []))

    # ---- failures and the request log ---------------------------------------------------
    def inject(
        self,
        pattern: str,
        status: int,
        body: Any,
        headers: dict[str, str] | None = None,
        method: str | None = None,
        times: int | None = 1,
        after: bool = False,
    ) -> Fault:
        fault = Fault(pattern, status, body, dict(headers or {}), method, times, after=after)
        with self.lock:
            self.faults.append(fault)
        return fault

    def inject_rate_limit(
        self,
        pattern: str,
        reset_in: float = 1.0,
        status: int = 403,
        method: str | None = None,
        times: int | None = 1,
    ) -> Fault:
        reset = int(time.time() + reset_in + 0.999)
        headers = {
            "X-RateLimit-Limit": str(self.rate_limit),
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(reset),
            "X-RateLimit-Used": str(self.rate_limit),
            "X-RateLimit-Resource": "core",
        }
        body = {
            "message": "API rate limit exceeded for installation ID 1234567.",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            "status": str(status),
        }
        return self.inject(pattern, status, body, headers, method, times)

    def inject_secondary_rate_limit(
        self, pattern: str, retry_after: int = 1, method: str | None = None, times: int | None = 1
    ) -> Fault:
        body = {
            "message": "You have exceeded a secondary rate limit. Please wait a few minutes "
            "before you try again.",
            "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
            "status": "403",
        }
        return self.inject(pattern, 403, body, {"Retry-After": str(retry_after)}, method, times)

    def inject_server_error(
        self, pattern: str, status: int = 500, method: str | None = None, times: int | None = 1,
        after: bool = False,
    ) -> Fault:
        return self.inject(pattern, status, {"message": "Server Error"}, None, method, times,
                           after=after)

    def inject_forbidden(self, pattern: str, method: str | None = None, times: int | None = 1) -> Fault:
        body = {
            "message": "Resource not accessible by integration",
            "documentation_url": f"{DOCS}/issues/comments#create-an-issue-comment",
            "status": "403",
        }
        return self.inject(pattern, 403, body, None, method, times)

    def requests_to(self, pattern: str, method: str | None = None) -> list[Request]:
        with self.lock:
            return [
                r
                for r in self.requests
                if re.search(pattern, r.path) and (method is None or r.method == method.upper())
            ]

    def clear_requests(self) -> None:
        with self.lock:
            self.requests.clear()

    # ---- JSON shapes ----------------------------------------------------------------------
    def _user_json(self, login: str, uid: int, kind: str) -> dict[str, Any]:
        return {
            "login": login,
            "id": uid,
            "node_id": f"U_{uid}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
            "gravatar_id": "",
            "url": f"{self.url}/users/{login}",
            "html_url": f"https://github.com/{login}",
            "type": kind,
            "site_admin": False,
        }

    def _mini_repo(self, repo_json: dict[str, Any]) -> dict[str, Any]:
        keys = ("id", "node_id", "name", "full_name", "private", "owner", "html_url")
        mini = {k: repo_json[k] for k in keys}
        mini.update(description=repo_json["description"], fork=False, url=repo_json["url"])
        return mini

    def _resolve(self, repo: str, ref: str | None) -> str:
        ref = ref or self.repos[repo]["default_branch"]
        for name in (ref, ref.removeprefix("refs/heads/"), ref.removeprefix("refs/tags/")):
            if (repo, name) in self.commits:
                return name
            if (repo, name) in self.refs:
                return self.refs[(repo, name)]
        raise HTTPError(404, f"No commit found for the ref {ref}")

    def _content_entry(self, repo: str, ref: str, path: str, data: bytes | None) -> dict[str, Any]:
        api = f"{self.url}/repos/{repo}"
        quoted = urllib.parse.quote(path)
        if data is None:
            sha = hashlib.sha1(f"tree:{repo}:{ref}:{path}".encode()).hexdigest()
            git_url = f"{api}/git/trees/{sha}"
            html = f"https://github.com/{repo}/tree/{ref}/{path}"
            download = None
            kind, size = "dir", 0
        else:
            sha = git_blob_sha(data)
            git_url = f"{api}/git/blobs/{sha}"
            html = f"https://github.com/{repo}/blob/{ref}/{path}"
            download = f"{self.url}/_raw/{repo}/{ref}/{quoted}"
            kind, size = "file", len(data)
        url = f"{api}/contents/{quoted}?ref={ref}"
        return {
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "size": size,
            "url": url,
            "html_url": html,
            "git_url": git_url,
            "download_url": download,
            "type": kind,
            "_links": {"self": url, "git": git_url, "html": html},
        }

    def _pr_file(self, repo: str, sha: str, filename: str, status: str) -> dict[str, Any]:
        data = self.commits.get((repo, sha), {}).get(filename, b"")
        lines = data.decode("utf-8", "replace").count("\n")
        return {
            "sha": git_blob_sha(data),
            "filename": filename,
            "status": status,
            "additions": 0 if status == "removed" else lines,
            "deletions": lines if status == "removed" else 0,
            "changes": lines,
            "blob_url": f"https://github.com/{repo}/blob/{sha}/{filename}",
            "raw_url": f"https://github.com/{repo}/raw/{sha}/{filename}",
            "contents_url": f"{self.url}/repos/{repo}/contents/{filename}?ref={sha}",
            "patch": "@@ -0,0 +1 @@",
        }

    def _issue_json(self, repo: str, number: int) -> dict[str, Any]:
        pr = self.pulls.get((repo, number))
        if pr is None:
            raise HTTPError(404, "Not Found")
        keys = ("id", "node_id", "number", "title", "user", "labels", "state", "locked")
        data = {k: pr[k] for k in keys}
        data.update(
            url=pr["issue_url"],
            repository_url=self.repos[repo]["url"],
            comments_url=pr["comments_url"],
            html_url=pr["html_url"],
            assignee=None,
            assignees=[],
            comments=len(self.issue_comments.get((repo, number), [])),
            created_at=pr["created_at"],
            updated_at=pr["updated_at"],
            closed_at=None,
            body=pr["body"],
            author_association=pr["author_association"],
            pull_request={
                "url": pr["url"],
                "html_url": pr["html_url"],
                "diff_url": pr["diff_url"],
                "patch_url": pr["patch_url"],
                "merged_at": None,
            },
        )
        return data

    # ---- HTTP -----------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parsed = urllib.parse.urlsplit(h.path)
        path = urllib.parse.unquote(parsed.path)
        query = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        if self.prefix:
            if path == self.prefix or path.startswith(self.prefix + "/"):
                path = path[len(self.prefix) :] or "/"
            else:
                path = "/__outside_prefix__" + path
        req = Request(method, path, query, {k.lower(): v for k, v in h.headers.items()}, body)
        target = path + ("?" + urllib.parse.unquote(parsed.query) if parsed.query else "")
        headers: dict[str, str] = {}
        with self.lock:
            self.requests.append(req)
            fault = next((f for f in self.faults if f.matches(method, target)), None)
            if fault is not None:
                fault.hits += 1
            if fault is None or fault.after:
                try:
                    self._check_auth(req)
                    status, payload, headers = self._route(req)
                except HTTPError as e:
                    status, headers = e.status, e.headers
                    payload = {"message": e.message, "documentation_url": DOCS, "status": str(e.status)}
                except Exception as e:  # a bug in the fake: answer 500, keep serving
                    status, payload = 500, {"message": f"fakegithub: {type(e).__name__}: {e}"}
            if fault is not None:
                status, payload, headers = fault.status, fault.body, dict(fault.headers)
            req.status = status
            used = len(self.requests)
        if isinstance(payload, bytes):
            data, ctype = payload, "text/html; charset=utf-8"
        elif isinstance(payload, str):
            data, ctype = payload.encode(), "text/html; charset=utf-8"
        else:
            data, ctype = json.dumps(payload).encode(), "application/json; charset=utf-8"
        base = {
            "Content-Type": ctype,
            "X-GitHub-Media-Type": "github.v3; format=json",
            "X-GitHub-Request-Id": f"FAKE:{used}",
            "X-RateLimit-Limit": str(self.rate_limit),
            "X-RateLimit-Remaining": str(max(self.rate_limit - used, 1)),
            "X-RateLimit-Reset": str(int(time.time()) + 3600),
            "X-RateLimit-Used": str(used),
            "X-RateLimit-Resource": "core",
        }
        base.update(headers)
        h.send_response(status)
        for k, v in base.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _check_auth(self, req: Request) -> None:
        if self.token is None or req.path.startswith(("/_raw/", "/_artifact_blobs/")):
            return
        auth = req.headers.get("authorization", "")
        scheme, _, tok = auth.partition(" ")
        if scheme.lower() not in ("token", "bearer") or tok != self.token:
            raise HTTPError(401, "Bad credentials")

    def _page(
        self, req: Request, items: list[Any], key: str | None = None, total: int | None = None
    ) -> tuple[int, Any, dict[str, str]]:
        try:
            per_page = max(1, min(int(req.query.get("per_page", 30)), 100))
            page = max(1, int(req.query.get("page", 1)))
        except ValueError as e:
            raise HTTPError(422, "Invalid request: per_page and page must be integers") from e
        chunk = items[(page - 1) * per_page : page * per_page]
        last = max(1, -(-len(items) // per_page))
        links = []

        def link(p: int, rel: str) -> None:
            q = dict(req.query, page=str(p), per_page=str(per_page))
            url = f"{self.url}{req.path}?{urllib.parse.urlencode(q)}"
            links.append(f'<{url}>; rel="{rel}"')

        if page > 1:
            link(page - 1, "prev")
        if page < last:
            link(page + 1, "next")
            link(last, "last")
        if page > 1:
            link(1, "first")
        headers = {"Link": ", ".join(links)} if links else {}
        payload = {"total_count": len(items) if total is None else total, key: chunk} if key else chunk
        return 200, payload, headers

    def _route(self, req: Request) -> tuple[int, Any, dict[str, str]]:
        p, m = req.path.rstrip("/") or "/", req.method
        if p == "/user" and m == "GET":
            return 200, dict(self.user, url=f"{self.url}/users/{self.user['login']}"), {}
        if p == "/rate_limit" and m == "GET":
            used = len(self.requests)
            core = {
                "limit": self.rate_limit,
                "used": used,
                "remaining": max(self.rate_limit - used, 0),
                "reset": int(time.time()) + 3600,
            }
            res = {"core": core, "search": dict(core, limit=30), "graphql": dict(core)}
            return 200, {"resources": res, "rate": core}, {}
        if p.startswith("/_artifact_blobs/"):
            aid = int(p.rsplit("/", 1)[-1])
            if aid not in self.artifact_blobs:
                raise HTTPError(404, "BlobNotFound")
            return 200, self.artifact_blobs[aid], {"Content-Type": "application/zip"}
        if p.startswith("/_raw/"):
            owner, name, ref, path = p[len("/_raw/") :].split("/", 3)
            repo = f"{owner}/{name}"
            sha = self._resolve(repo, ref)
            if path not in self.commits[(repo, sha)]:
                raise HTTPError(404, "Not Found")
            return 200, self.commits[(repo, sha)][path], {"Content-Type": "text/plain"}
        mt = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", p)
        if not mt:
            raise HTTPError(404, "Not Found")
        repo, rest = f"{mt.group(1)}/{mt.group(2)}", mt.group(3) or ""
        if repo not in self.repos:
            raise HTTPError(404, "Not Found")
        return self._route_repo(req, repo, rest, m)

    def _route_repo(self, req: Request, repo: str, rest: str, m: str) -> tuple[int, Any, dict[str, str]]:
        q = req.query
        if rest == "" and m == "GET":
            return 200, self.repos[repo], {}
        if rest == "/actions/workflows" and m == "GET":
            return self._page(req, self.workflows[repo], "workflows")
        mt = re.fullmatch(r"/actions/workflows/([^/]+)(/runs)?", rest)
        if mt and m == "GET":
            key = mt.group(1)
            wf = next(
                (
                    w
                    for w in self.workflows[repo]
                    if str(w["id"]) == key or w["path"].rsplit("/", 1)[-1] == key
                ),
                None,
            )
            if wf is None:
                raise HTTPError(404, "Not Found")
            if not mt.group(2):
                return 200, wf, {}
            return self._list_runs(req, repo, wf["id"])
        if rest == "/actions/runs" and m == "GET":
            return self._list_runs(req, repo, None)
        mt = re.fullmatch(r"/actions/runs/(\d+)/artifacts", rest)
        if mt and m == "GET":
            if not any(r["id"] == int(mt.group(1)) for r in self.runs[repo]):
                raise HTTPError(404, "Not Found")
            return self._page(req, self.artifacts.get(int(mt.group(1)), []), "artifacts")
        mt = re.fullmatch(r"/actions/artifacts/(\d+)/zip", rest)
        if mt and m == "GET":
            aid = int(mt.group(1))
            item = next((a for arts in self.artifacts.values() for a in arts if a["id"] == aid),
                        None)
            if item is None:
                raise HTTPError(404, "Not Found")
            if item["expired"]:
                raise HTTPError(410, "Artifact has expired")
            return 302, b"", {"Location": f"{self.url}/_artifact_blobs/{aid}"}
        mt = re.fullmatch(r"/actions/runs/(\d+)(/jobs)?", rest)
        if mt and m == "GET":
            run = next((r for r in self.runs[repo] if r["id"] == int(mt.group(1))), None)
            if run is None:
                raise HTTPError(404, "Not Found")
            if not mt.group(2):
                return 200, run, {}
            jobs = self.jobs.get(run["id"], [])
            if q.get("filter", "latest") == "latest" and self.carry_over_jobs:
                latest: dict[str, int] = {}
                for j in jobs:
                    if j["run_attempt"] <= run["run_attempt"]:
                        latest[j["name"]] = max(latest.get(j["name"], 0), j["run_attempt"])
                jobs = [j for j in jobs if latest.get(j["name"]) == j["run_attempt"]]
            elif q.get("filter", "latest") == "latest":
                jobs = [j for j in jobs if j["run_attempt"] == run["run_attempt"]]
            elif q.get("filter") != "all":
                raise HTTPError(422, "Invalid filter")
            return self._page(req, jobs, "jobs")
        if rest.startswith("/contents") and m == "GET":
            path = rest[len("/contents") :].strip("/")
            return self._contents(repo, path, q.get("ref"))
        mt = re.fullmatch(r"/git/blobs/([0-9a-f]{40})", rest)
        if mt and m == "GET":
            return self._blob(repo, mt.group(1))
        mt = re.fullmatch(r"/git/trees/(.+)", rest)
        if mt and m == "GET":
            return self._tree(repo, mt.group(1), q.get("recursive") not in (None, "", "0", "false"))
        mt = re.fullmatch(r"/compare/([^.]+)\.\.\.([^.]+)", rest)
        if mt and m == "GET":
            return self._compare(repo, mt.group(1), mt.group(2))
        mt = re.fullmatch(r"/pulls/(\d+)(/files)?", rest)
        if mt and m == "GET":
            key = (repo, int(mt.group(1)))
            if key not in self.pulls:
                raise HTTPError(404, "Not Found")
            if not mt.group(2):
                return 200, self.pulls[key], {}
            return self._page(req, self._files_of(repo, key))
        mt = re.fullmatch(r"/issues/(\d+)", rest)
        if mt and m == "GET":
            return 200, self._issue_json(repo, int(mt.group(1))), {}
        mt = re.fullmatch(r"/issues/(\d+)/comments", rest)
        if mt:
            number = int(mt.group(1))
            if (repo, number) not in self.pulls and (repo, number) not in self.issue_comments:
                raise HTTPError(404, "Not Found")
            if m == "GET":
                return self._page(req, self.issue_comments.get((repo, number), []))
            if m == "POST":
                text = (req.body or {}).get("body") if isinstance(req.body, dict) else None
                if not isinstance(text, str):
                    raise HTTPError(422, 'Invalid request.\n\n"body" wasn\'t supplied.')
                return 201, self.add_comment(repo, number, text), {}
        mt = re.fullmatch(r"/issues/comments/(\d+)", rest)
        if mt and m in ("GET", "PATCH"):
            cid = int(mt.group(1))
            for (r, _), comments in self.issue_comments.items():
                for c in comments:
                    if r == repo and c["id"] == cid:
                        if m == "PATCH":
                            text = req.body.get("body") if isinstance(req.body, dict) else None
                            if not isinstance(text, str):
                                raise HTTPError(422, "Invalid request.")
                            c["body"] = text
                            c["updated_at"] = _now()
                        return 200, c, {}
            raise HTTPError(404, "Not Found")
        raise HTTPError(404, "Not Found")

    def _list_runs(self, req: Request, repo: str, workflow_id: int | None) -> tuple[int, Any, dict[str, str]]:
        q = req.query
        runs = [r for r in self.runs[repo] if workflow_id is None or r["workflow_id"] == workflow_id]
        if "status" in q:
            st = q["status"]
            field_ = "status" if st in _RUN_STATUSES else "conclusion"
            runs = [r for r in runs if r[field_] == st]
        for name in ("branch", "event", "head_sha"):
            if name in q:
                attr = "head_branch" if name == "branch" else name
                runs = [r for r in runs if r[attr] == q[name]]
        if "created" in q:
            try:
                runs = [r for r in runs if created_matches(q["created"], r["created_at"])]
            except ValueError as e:
                raise HTTPError(422, f"Invalid created filter: {q['created']}") from e
        runs.sort(key=lambda r: (_parse_time(r["created_at"]), r["id"]), reverse=True)
        total = len(runs)
        if any(k in q for k in _RUN_FILTERS):
            runs = runs[: self.max_filtered_results]
        return self._page(req, runs, "workflow_runs", total=total)

    def _contents(self, repo: str, path: str, ref: str | None) -> tuple[int, Any, dict[str, str]]:
        sha = self._resolve(repo, ref)
        files = self.commits[(repo, sha)]
        ref_shown = ref or self.repos[repo]["default_branch"]
        links = self.symlinks.get((repo, sha), set())
        if path in links:
            target = self._link_target(path, files[path].decode())
            if target in files and target not in links:
                path = target  # GitHub answers with the file the link points to
            else:
                entry = self._content_entry(repo, ref_shown, path, files[path])
                entry["type"], entry["target"], entry["download_url"] = "symlink", files[path].decode(), None
                return 200, entry, {}
        if path in files:
            data = files[path]
            entry = self._content_entry(repo, ref_shown, path, data)
            if len(data) > CONTENTS_LIMIT:
                entry["content"], entry["encoding"] = "", "none"
                return 200, entry, {}
            entry["content"] = _b64_lines(data)
            entry["encoding"] = "base64"
            return 200, entry, {}
        prefix = path + "/" if path else ""
        children: dict[str, bytes | None] = {}
        for f in files:
            if f.startswith(prefix):
                head, sep, _ = f[len(prefix) :].partition("/")
                children[head] = None if sep else files[f]
        if not children:
            raise HTTPError(404, "Not Found")
        listing = [self._content_entry(repo, ref_shown, prefix + n, children[n]) for n in sorted(children)]
        for e in listing:
            if e["path"] in links:
                e["type"] = "symlink"
        listing.sort(key=lambda e: (e["type"] != "dir", e["name"]))
        return 200, listing, {}

    @staticmethod
    def _link_target(path: str, target: str) -> str:
        if target.startswith("/"):
            return "\0outside"  # an absolute target is out of the repository
        parts = path.split("/")[:-1]
        for part in target.split("/"):
            if part == "..":
                if not parts:
                    return "\0outside"  # above the repository's root
                parts.pop()
            elif part not in ("", "."):
                parts.append(part)
        return "/".join(parts)

    def _blob(self, repo: str, bsha: str) -> tuple[int, Any, dict[str, str]]:
        for (r, _c), files in self.commits.items():
            for data in files.values():
                if r == repo and git_blob_sha(data) == bsha:
                    return 200, {
                        "sha": bsha, "node_id": "B_" + bsha[:12], "size": len(data),
                        "url": f"{self.url}/repos/{repo}/git/blobs/{bsha}",
                        "content": _b64_lines(data), "encoding": "base64",
                    }, {}
        raise HTTPError(404, "Not Found")

    def _tree(self, repo: str, treeish: str, recursive: bool) -> tuple[int, Any, dict[str, str]]:
        sha = None
        try:
            sha = self._resolve(repo, treeish)
        except HTTPError:
            for (r, c), _files in self.commits.items():
                if r == repo and self._tree_sha(repo, c, "") == treeish:
                    sha = c
        if sha is None:
            raise HTTPError(404, "Not Found")
        files = self.commits[(repo, sha)]
        dirs: set[str] = set()
        for f in files:
            parts = f.split("/")[:-1]
            dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        api = f"{self.url}/repos/{repo}/git"
        entries = []
        for d in dirs:
            tsha = self._tree_sha(repo, sha, d)
            entries.append(
                {"path": d, "mode": "040000", "type": "tree", "sha": tsha, "url": f"{api}/trees/{tsha}"}
            )
        links = self.symlinks.get((repo, sha), set())
        for f, data in files.items():
            bsha = git_blob_sha(data)
            entries.append(
                {
                    "path": f,
                    "mode": "120000" if f in links else "100644",
                    "type": "blob",
                    "sha": bsha,
                    "size": len(data),
                    "url": f"{api}/blobs/{bsha}",
                }
            )
        truncated = False
        if not recursive or self.truncate_trees:
            truncated = recursive and self.truncate_trees
            entries = [e for e in entries if "/" not in e["path"]]
        entries.sort(key=lambda e: e["path"] + ("/" if e["type"] == "tree" else ""))
        root = self._tree_sha(repo, sha, "")
        return 200, {"sha": root, "url": f"{api}/trees/{root}", "tree": entries, "truncated": truncated}, {}

    def _tree_sha(self, repo: str, commit: str, path: str) -> str:
        return hashlib.sha1(f"tree:{repo}:{commit}:{path}".encode()).hexdigest()

    def merge_base(self, repo: str, a: str, b: str) -> str | None:
        """The newest commit both ``a`` and ``b`` descend from (``add_commit(parents=)``)."""
        of_a = set(self._ancestors(repo, a))
        return next((c for c in self._ancestors(repo, b) if c in of_a), None)

    def _ancestors(self, repo: str, sha: str, stop: str | None = None) -> list[str]:
        """``sha`` and the commits it descends from, nearest first, not past ``stop``."""
        seen: list[str] = []
        queue = [sha]
        while queue:
            c = queue.pop(0)
            if c != stop and c not in seen:
                seen.append(c)
                queue += self.parents.get((repo, c), [])
        return seen

    def _compare(self, repo: str, base: str, head: str) -> tuple[int, Any, dict[str, str]]:
        a, b = self._resolve(repo, base), self._resolve(repo, head)
        since = self.merge_base(repo, a, b)
        if since is None:
            raise HTTPError(404, f"No common ancestor between {base} and {head}.")

        def commit(sha: str) -> dict[str, Any]:
            return {"sha": sha, "url": f"{self.url}/repos/{repo}/commits/{sha}",
                    "commit": {"message": "a commit"},
                    "parents": [{"sha": p} for p in self.parents.get((repo, sha), [])]}

        ahead = len(self._ancestors(repo, b, since))
        behind = len(self._ancestors(repo, a, since))
        status = ("identical" if a == b else "ahead" if behind == 0 else
                  "behind" if ahead == 0 else "diverged")
        return 200, {"url": f"{self.url}/repos/{repo}/compare/{base}...{head}",
                     "status": status, "ahead_by": ahead, "behind_by": behind,
                     "total_commits": ahead, "base_commit": commit(a),
                     "merge_base_commit": commit(since), "commits": [], "files": []}, {}

    def _files_of(self, repo: str, key: tuple[str, int]) -> list[dict[str, Any]]:
        given = self.pull_files.get(key)
        if given is not None:
            return given
        pr = self.pulls[key]
        head = self.commits.get((repo, pr["head"]["sha"]), {})
        # a pull request's files are its three-dot diff: against where it branched
        since = self.merge_base(repo, pr["base"]["sha"], pr["head"]["sha"]) or pr["base"]["sha"]
        base = self.commits.get((repo, since), {})
        out = []
        for f in sorted(set(head) | set(base)):
            if f not in base:
                out.append(self._pr_file(repo, pr["head"]["sha"], f, "added"))
            elif f not in head:
                out.append(self._pr_file(repo, pr["base"]["sha"], f, "removed"))
            elif head[f] != base[f]:
                out.append(self._pr_file(repo, pr["head"]["sha"], f, "modified"))
        return out
