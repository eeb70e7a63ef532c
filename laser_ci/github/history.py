"""Past runs read from the GitHub API, for history-aware predictions in the Action.

:func:`fetch_history` builds the :class:`~laser_ci.text.history.HistoryIndex` that
:func:`laser_ci.estimate.estimate_files` reads. Per workflow path (token with ``actions: read``)::

    GET /repos/{o}/{r}/actions/workflows/{file}/runs?branch=B&status=completed&per_page=N
        the newest ``max_runs`` completed runs on branch B, but runs of a fork's code (a
        pull request from a fork's branch of the same name is listed under it too)
    GET /repos/{o}/{r}/actions/runs/{id}/jobs?filter=latest&per_page=100
        only for runs the cache has not seen: per job display name, completed_at - started_at,
        and the run's job list (names and runner labels, skipped jobs left out): where the
        instances of a matrix computed at run time come from (``HistoryIndex.runs``)
    GET /repos/{o}/{r}/actions/runs/{id}/artifacts (+ each laser-ci-usage-* zip)
        with the jobs, for the same runs: the usage records the measure step kept
        (:mod:`laser_ci.github.usage_records`), per job name (``HistoryIndex.usage``)
    the workflow files at the newest run's head_sha (git tree + contents, as the Action reads
    a PR's head and base) -> each job serialized without history = ``previous_text``, so
    the estimate can say what changed in a job's configuration since it last ran (run-time
    matrices expanded from the runs' job lists)

Job durations are measured as the training labels are (:func:`laser_ci.github.collect.job_seconds`);
skipped and cancelled jobs and jobs without both timestamps do not count. A workflow's
runtime is the sum of its jobs' (billable time), as in training.

**Cache.** One JSON file per repository and workflow under ``cache_dir`` (default
``$RUNNER_TEMP/laser-ci-history``, else ``~/.cache/laser-ci/history``; the Action keeps it
between runs with ``actions/cache``) maps run id -> attempt, job durations and the timed
jobs' conclusions and usage records, and keeps the serialized jobs of the newest run's
commit. Conclusions
(the run's from the run list, each job's from its jobs) give ``PastRuns.conclusions``: the
report says how many earlier runs failed and after how long, never the model's input. A
cache entry written before conclusions were kept leaves its jobs' ends unknown. A later
call lists the runs (one request per workflow) and fetches the jobs of new runs only. It
holds at most :data:`CACHE_MAX_RUNS` runs per workflow; an unreadable or foreign file is
ignored and rewritten.

**Never a failure.** A 403 (a token without ``actions: read``), a 404 (the workflow is not on
the branch), an empty history or any other API error leave those workflows without history
(cold start) and add a note for the report.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.parse
from collections.abc import Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from laser_ci import __version__
from laser_ci.github.errors import is_rate_limit
from laser_ci.measure.record import parse_record
from laser_ci.report import markdown
from laser_ci.text.history import UNTIMED_ENDS, HistoryIndex, PastRuns, RunJob

DEFAULT_MAX_RUNS = 20
CACHE_VERSION = 2
CACHE_MAX_RUNS = 200  # per workflow file; runs on other branches share the file
MAX_PAGES = 10  # of 100 jobs each, for one run

NO_PERMISSION = "history unavailable (the token lacks `actions: read`): cold-start predictions"


def default_cache_dir() -> Path:
    """``$RUNNER_TEMP/laser-ci-history`` on a runner, else ``~/.cache/laser-ci/history``."""
    temp = os.environ.get("RUNNER_TEMP", "").strip()
    if temp:
        return Path(temp) / "laser-ci-history"
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "laser-ci" / "history"


@dataclass
class _Run:
    id: int
    attempt: int
    created_at: str
    head_sha: str
    conclusion: str | None = None  # the run's, from the run list (never cached)
    jobs: dict[str, float] = field(default_factory=dict)
    listed: list[RunJob] = field(default_factory=list)  # every job the run listed, in order
    job_conclusions: dict[str, str] = field(default_factory=dict)  # of the timed jobs
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)  # job name -> usage record

    def to_json(self) -> dict[str, Any]:
        return {"attempt": self.attempt, "created_at": self.created_at,
                "head_sha": self.head_sha, "jobs": self.jobs,
                "listed": [[j.name, list(j.labels), j.seconds, j.conclusion]
                           for j in self.listed],
                "conclusions": self.job_conclusions, "usage": self.usage}


def _listed(raw: Any) -> list[RunJob]:
    """A cached job list (``[name, labels, seconds, conclusion]``; a cache written before
    conclusions were kept has no fourth item); empty when unreadable."""
    out: list[RunJob] = []
    for item in raw if isinstance(raw, list) else ():
        if isinstance(item, list) and len(item) in (3, 4) and isinstance(item[0], str):
            labels = tuple(str(x) for x in item[1]) if isinstance(item[1], list) else ()
            seconds = float(item[2]) if isinstance(item[2], (int, float)) else None
            end = item[3] if len(item) == 4 and isinstance(item[3], str) and item[3] else None
            out.append(RunJob(item[0], labels, seconds, end))
    return out


@dataclass(frozen=True)
class _Stop:
    """No further API calls are worth making (no permission, rate limit, server down)."""

    note: str


def fetch_history(
    repo: Any,
    workflow_paths: Sequence[str],
    *,
    branch: str,
    max_runs: int = DEFAULT_MAX_RUNS,
    cache_dir: str | Path | None = None,
    sources: MutableMapping[str, Any] | None = None,
) -> tuple[HistoryIndex, list[str]]:
    """Past runs of ``workflow_paths`` on ``branch`` through ``repo`` (a PyGithub
    ``Repository``): the history index and notes for the report (empty when all went well).

    ``sources`` maps commit SHAs to :class:`laser_ci.github.refs.RefFiles` already read (the
    PR's base, say), so the newest run's files are not fetched twice; new ones are added.
    """
    index = HistoryIndex(jobs={}, workflows={}, source=f"completed runs on {branch}")
    notes: list[str] = []
    if max_runs <= 0 or not workflow_paths:
        return index, notes
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    full_name = _full_name(repo)
    sources = {} if sources is None else sources
    none_found: list[str] = []
    for path in dict.fromkeys(workflow_paths):
        cache_file = folder / _cache_name(full_name, path)
        cached = _load_cache(cache_file, full_name, path)
        runs, stop = _runs(repo, full_name, path, branch, max_runs, cached["runs"])
        if runs:
            texts = (_previous_texts(repo, path, runs, cached, sources)
                     if stop is None else None)
            _add(index, path, runs, texts)
            for run in runs:
                cached["runs"][str(run.id)] = run.to_json()
            _save_cache(cache_file, cached)
        elif stop is None:
            none_found.append(path)
        if stop is not None:
            notes.append(stop.note)
            break
    if none_found:
        notes.append(no_runs_note(branch, none_found))
        index.without_runs = tuple(none_found)
    return index, notes


def no_runs_note(branch: str, paths: Sequence[str]) -> str:
    """The note for the workflows of ``paths`` that have no completed runs on ``branch``."""
    # the notes are Markdown in the comment; a path comes from the PR: verbatim spans
    names = ", ".join(markdown.code(p.rsplit("/", 1)[-1]) for p in sorted(paths))
    return (f"no completed runs on {markdown.code(branch)} for {names}: cold-start predictions "
            "for their jobs")


# --- the API ------------------------------------------------------------------------------


def _runs(repo: Any, full_name: str, path: str, branch: str, max_runs: int,
          cached: dict[str, Any]) -> tuple[list[_Run] | None, _Stop | None]:
    """The newest completed runs on ``branch`` of ``full_name``'s own code, newest first, each once
    (None when the workflow is unknown there: a 404), and why to stop calling the API, if
    so. Jobs come from ``cached`` when that run attempt was seen before; after a failure,
    only cached runs are kept."""
    from github import GithubException

    name = urllib.parse.quote(path.rsplit("/", 1)[-1], safe="")
    url = f"{repo.url}/actions/workflows/{name}/runs"
    params = {"branch": branch, "status": "completed", "per_page": min(max_runs, 100)}
    own = full_name.lower()
    listed: set[Any] = set()  # a run that completes while the pages are read shifts them

    def new(run: dict[str, Any]) -> bool:
        fresh = run.get("id") not in listed
        listed.add(run.get("id"))
        return fresh

    try:
        raw_runs = list(islice((r for r in _pages(repo, url, params, "workflow_runs")
                                if new(r) and _of_this_repository(r, own)), max_runs))
    except GithubException as exc:
        if exc.status == 404:
            return None, None
        return None, _Stop(_failure_note(exc))
    except Exception as exc:  # noqa: BLE001 - network: history is optional
        return None, _Stop(_failure_note(exc))

    out: list[_Run] = []
    stop: _Stop | None = None
    for raw in raw_runs:
        run = _Run(int(raw["id"]), int(raw.get("run_attempt") or 1),
                   str(raw.get("created_at") or ""), str(raw.get("head_sha") or ""),
                   str(raw["conclusion"]) if raw.get("conclusion") else None)
        if not _from_cache(run, cached.get(str(run.id))):
            if stop is not None:
                continue
            try:
                run.jobs, run.listed, run.job_conclusions, raw_jobs = _job_seconds(repo, run.id)
                run.usage = _usage(repo, run.id, raw_jobs)
            except GithubException as exc:
                if exc.status not in (404, 410):  # 404/410: deleted since it was listed
                    stop = _Stop(_failure_note(exc))
                continue
            except Exception as exc:  # noqa: BLE001
                stop = _Stop(_failure_note(exc))
                continue
        out.append(run)
    return out, stop


def _from_cache(run: _Run, seen: Any) -> bool:
    """Fills ``run``'s jobs from its cache entry when that entry is of this attempt and can
    be read; False (fetch it again) otherwise: a damaged entry is never a failure."""
    if not (isinstance(seen, dict) and seen.get("attempt") == run.attempt
            and isinstance(seen.get("jobs"), dict)):
        return False
    try:
        jobs = {str(k): float(v) for k, v in seen["jobs"].items()}
    except (TypeError, ValueError):
        return False
    run.jobs = jobs
    run.listed = _listed(seen.get("listed"))
    ends = seen.get("conclusions")  # absent in a cache written before they were kept
    run.job_conclusions = ({str(k): str(v) for k, v in ends.items() if v}
                           if isinstance(ends, dict) else {})
    usage = seen.get("usage")  # absent in a cache written before usage was read
    run.usage = {str(k): rec for k, v in usage.items()
                 if (rec := parse_record(v)) is not None} if isinstance(usage, dict) else {}
    return True


def _of_this_repository(run: Any, own: str) -> bool:
    """False for a run of a fork's code: ``?branch=main`` also lists the runs of pull
    requests opened from a fork's branch of that name (a contributor's ``main``), which ran
    code the branch never had. ``"head_repository": null`` is such a fork deleted since
    (the repository itself is there to be asked)."""
    if not isinstance(run, dict):
        return True
    head = run.get("head_repository")
    if head is None and "head_repository" in run:
        return False
    name = head.get("full_name") if isinstance(head, dict) else None
    return not isinstance(name, str) or name.lower() == own


def _usage(repo: Any, run_id: int, raw_jobs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per job display name, the usage record the measure step kept for that job run
    (:mod:`laser_ci.github.usage_records`); empty when there is none or it cannot be read
    (usage is optional: never a failure, never a stop)."""
    from laser_ci.github.usage_records import run_usage

    try:
        found = run_usage(repo.requester, repo.url, run_id, raw_jobs)
    except Exception:  # noqa: BLE001
        return {}
    out: dict[str, dict[str, Any]] = {}
    for i, rec in sorted(found.items()):
        out.setdefault(str(raw_jobs[i].get("name")), rec)  # duplicate names: the first
    return out


def _job_seconds(repo: Any, run_id: int
                 ) -> tuple[dict[str, float], list[RunJob], dict[str, str], list[dict[str, Any]]]:
    """Per job display name, its duration in seconds, for the latest attempt of a run;
    every job the run listed but skipped ones (a skipped job never got its matrix); per
    timed job, its conclusion; and the listed jobs as the API gave them."""
    from laser_ci.github.collect import job_seconds

    url = f"{repo.url}/actions/runs/{run_id}/jobs"
    params = {"filter": "latest", "per_page": 100}
    out: dict[str, float] = {}
    listed: list[RunJob] = []
    ends: dict[str, str] = {}
    raw: list[dict[str, Any]] = []
    for job in islice(_pages(repo, url, params, "jobs"), 100 * MAX_PAGES):
        name = job.get("name")
        if not name or job.get("conclusion") == "skipped":
            continue
        raw.append(job)
        seconds = job_seconds(job)
        timed = seconds > 0 and job.get("conclusion") not in UNTIMED_ENDS
        labels = job.get("labels")
        end = str(job["conclusion"]) if job.get("conclusion") else None
        listed.append(RunJob(str(name), tuple(str(x) for x in labels)
                             if isinstance(labels, list) else (), seconds if timed else None,
                             end))
        if timed and str(name) not in out:  # duplicate display names: the first
            out[str(name)] = seconds
            if end:
                ends[str(name)] = end
    return out, listed, ends, raw


def _pages(repo: Any, url: str, params: dict[str, Any], key: str) -> Iterator[dict[str, Any]]:
    """Items of a paginated list endpoint, page by page, while pages come back full."""
    per_page = int(params.get("per_page") or 30)
    for page in range(1, MAX_PAGES + 1):
        _headers, data = repo.requester.requestJsonAndCheck(
            "GET", url, parameters={**params, "page": page}
        )
        items = data.get(key) if isinstance(data, dict) else None
        if not isinstance(items, list):
            return
        yield from (i for i in items if isinstance(i, dict))
        if len(items) < per_page:
            return


def _failure_note(exc: Exception) -> str:
    from github import GithubException

    if is_rate_limit(exc):
        return "history unavailable (GitHub API rate limit): cold-start predictions"
    if isinstance(exc, GithubException):
        if exc.status == 403:
            return NO_PERMISSION
        data = exc.data if isinstance(exc.data, dict) else {}
        # the note is Markdown in the comment: the API's text (a proxy's page, say) as text
        message = markdown.text(str(data.get("message") or exc))
        return f"history unavailable (GitHub API {exc.status}: {message}): cold-start predictions"
    return f"history unavailable ({type(exc).__name__}): cold-start predictions"


def _full_name(repo: Any) -> str:
    try:
        return str(repo.full_name)
    except Exception:  # noqa: BLE001 - only names the cache file
        return str(getattr(repo, "url", "repo")).rsplit("/repos/", 1)[-1]


# --- the configuration the newest run ran -------------------------------------------------


def _previous_texts(repo: Any, path: str, runs: Sequence[_Run], cached: dict[str, Any],
                    sources: MutableMapping[str, Any]) -> tuple[dict[str, str], str] | None:
    """Each job of ``path`` at the newest run's commit serialized without history (its
    run-time matrices expanded from ``runs``, newest first), and the whole workflow; from
    the cache when this laser-ci version serialized that commit and those job lists before.
    None when the files cannot be read (the diff is then unknown, never a failure)."""
    sha = runs[0].head_sha
    listed = [r.listed for r in reversed(runs)]  # oldest first
    names = hashlib.sha256(json.dumps([[j.name for j in r] for r in listed]).encode())
    key = names.hexdigest()[:16]
    seen = cached.get("texts")
    if isinstance(seen, dict) and seen.get("sha") == sha and seen.get("laser_ci") == __version__ \
            and seen.get("names") == key \
            and isinstance(seen.get("jobs"), dict) and isinstance(seen.get("workflow"), str):
        return {str(k): str(v) for k, v in seen["jobs"].items()}, seen["workflow"]
    if not sha:
        return None
    try:
        texts = _serialize_at(repo, path, sha, sources, listed)
    except Exception:  # noqa: BLE001 - an unreadable old commit only loses the diff
        return None
    if texts is not None:
        cached["texts"] = {"sha": sha, "laser_ci": __version__, "names": key,
                           "jobs": texts[0], "workflow": texts[1]}
    return texts


def _serialize_at(repo: Any, path: str, sha: str, sources: MutableMapping[str, Any],
                  listed: Sequence[Sequence[RunJob]] = ()) -> tuple[dict[str, str], str] | None:
    from laser_ci.github.refs import RefFiles
    from laser_ci.text.serialize import serialize_job, serialize_workflow
    from laser_ci.workflows.parse import read_workflows
    from laser_ci.workflows.runtime_matrix import expand

    src = sources.get(sha)
    if src is None:
        src = RefFiles(repo, sha)
        src.load_tree()
        sources[sha] = src
    if not src.with_deps(path):
        return None
    workflows, _errors = read_workflows(src.files, [path], schema=False)
    wf = next((w for w in workflows if w.path == path), None)
    if wf is None:
        return None
    profile = src.profile()
    jobs: dict[str, str] = {}
    for job in expand(wf, listed).jobs:
        jobs.setdefault(job.name, serialize_job(job, wf, profile))
    return jobs, serialize_workflow(wf, profile)


def _add(index: HistoryIndex, path: str, runs: Sequence[_Run],
         texts: tuple[dict[str, str], str] | None) -> None:
    """Adds one workflow's runs (newest first) to ``index``, runtimes oldest first."""
    oldest_first = list(reversed(runs))
    job_texts, wf_text = texts if texts is not None else ({}, None)
    names = dict.fromkeys(name for run in oldest_first for name in run.jobs)
    for name in names:
        mine = [run for run in oldest_first if name in run.jobs]
        index.jobs[(path, name)] = PastRuns(
            tuple(run.jobs[name] for run in mine), job_texts.get(name),
            conclusions=tuple(run.job_conclusions.get(name) for run in mine))
    for name in dict.fromkeys(n for run in oldest_first for n in run.usage):
        index.usage[(path, name)] = tuple(run.usage[name] for run in oldest_first
                                          if name in run.usage)
    timed = [run for run in oldest_first if run.jobs]
    if timed:
        index.workflows[path] = PastRuns(tuple(sum(run.jobs.values()) for run in timed), wf_text,
                                         conclusions=tuple(run.conclusion for run in timed))
    index.runs[path] = tuple(tuple(run.listed) if run.listed else
                             tuple(RunJob(n, (), t, run.job_conclusions.get(n))
                                   for n, t in run.jobs.items())
                             for run in oldest_first)


# --- the cache ----------------------------------------------------------------------------


def _cache_name(full_name: str, path: str) -> str:
    key = f"{full_name}/{path}"
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", key)[-80:]
    return f"{readable}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.json"


def _load_cache(file: Path, full_name: str, path: str) -> dict[str, Any]:
    fresh: dict[str, Any] = {"version": CACHE_VERSION, "repository": full_name,
                             "workflow": path, "runs": {}}
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return fresh
    if not (isinstance(data, dict) and data.get("version") == CACHE_VERSION
            and data.get("repository") == full_name and data.get("workflow") == path
            and isinstance(data.get("runs"), dict)):
        return fresh
    return data


def _save_cache(file: Path, data: dict[str, Any]) -> None:
    """Writes the cache, newest :data:`CACHE_MAX_RUNS` runs only; a failure is ignored."""
    runs = data.get("runs") or {}

    def order(item: tuple[str, Any]) -> tuple[str, int]:
        rid, run = item
        created = run.get("created_at") if isinstance(run, dict) else ""
        return (str(created or ""), int(rid) if rid.isdigit() else 0)

    data["runs"] = dict(sorted(runs.items(), key=order, reverse=True)[:CACHE_MAX_RUNS])
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_name(file.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, file)
    except OSError:
        pass
