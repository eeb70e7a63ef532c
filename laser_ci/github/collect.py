"""``laser-ci collect``: build a training/eval folder from a repository's GitHub Actions history.

For each completed workflow run it records the run's jobs (start, end, runner labels,
conclusion) and every workflow file and local action (``.yml``/``.yaml`` under
``.github/workflows/`` and ``.github/actions/``) at the run's ``head_sha``, in the format of
the shared ``gha-runs`` data set, so ``eval`` and the training code read it as is::

    OUT/runs.jsonl.gz     one run per line: id, repo, workflow_path, sha, commit_date,
                          created_at (when the run was created), event,
                          branch, conclusion, attempts, run_time_s, files {path: blob id},
                          repo_profile, and jobs [{name, run_time_s, conclusion,
                          runner_labels, runner_name, started_at, completed_at,
                          usage (when the measure step kept a record: docs/sizing.md)}]
    OUT/blobs.jsonl.gz    {"id", "text"}; id = first 24 hex digits of sha256(text)
    OUT/corpus.jsonl.gz   {"repo", "path", "blob"}: each distinct file version seen
    OUT/.laser-ci-collect/  state.json and the staging files of a run in progress

Safety: every run is appended (and fsynced) to a plain staging file as soon as it is
complete; staging is folded into the ``.gz`` files by an atomic rename (copy the old
members + one new gzip member, then ``os.replace``), every few runs, at the end, on errors
and on Ctrl-C, and at the start of the next call if the process was killed. The ``.gz``
files are therefore always readable, and nothing written is lost.

Incremental: runs are deduplicated by GitHub run id (a row's ``id`` is derived from it).
A call remembers the newest run it has seen; the next call lists only runs created since
then (minus a safety overlap), so it fetches only new runs. A run re-run since it was
collected (a higher ``run_attempt`` in that window, or since ``--since``) is collected
again: its final attempt replaces the row (the runs file is rewritten, atomically). A run
re-run between being listed and being read (its latest attempt's jobs are not done) is left
out and remembered (``later`` in the state); later calls ask for it by id until it ends. An
interrupted call, or one cut short by ``--max-runs``, leaves its window pending and the next
call finishes it.
"""

from __future__ import annotations

import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import click

from laser_ci import __version__
from laser_ci.github.collect_base import (  # noqa: F401 - re-exported: collect's names
    CollectError,
    GitHubError,
    _attempt,
    _later,
    _message,
    _NotYet,
    _raw,
    _run_item,
    _Skip,
    iso_z,
    job_seconds,
    parse_time,
    repo_profile,
    row_id,
)
from laser_ci.github.collect_files import FileReader
from laser_ci.github.collect_store import STATE_DIR, Store  # noqa: F401 - STATE_DIR: tests
from laser_ci.report.progress import Progress

T = TypeVar("T")

# Tunables; tests monkeypatch them (MERGE_EVERY: in laser_ci.github.collect_store).
PER_PAGE = 100  # items per list request (GitHub's maximum)
RESULT_CAP = 1000  # GitHub lists at most this many runs for one filtered query
MAX_ATTEMPTS = 5  # tries of one request on 5xx / network / malformed answers
MAX_RATE_WAIT_S = 3900  # longest rate-limit wait; beyond it, stop (the data is saved)
MAX_RATE_WAITS = 5  # rate-limit waits for one request before giving up
OVERLAP = timedelta(days=2)  # incremental calls re-list this far before the last newest run
TIMEOUT_S = 30

_sleep: Callable[[float], None] = time.sleep
_clock: Callable[[], float] = time.time


def parse_since(text: str) -> datetime:
    """``2024-05-01``, an ISO 8601 time, or an age: ``30d``, ``12h``, ``2w``."""
    m = re.fullmatch(r"\s*(\d+)\s*([hdw])\s*", text)
    if m:
        unit = {"h": "hours", "d": "days", "w": "weeks"}[m.group(2)]
        return datetime.fromtimestamp(_clock(), UTC) - timedelta(**{unit: int(m.group(1))})
    dt = parse_time(text.strip())
    if dt is None:
        raise ValueError(text)
    return dt



# ---- GitHub calls with retries --------------------------------------------------------------
class Api:
    """Runs one PyGithub call: waits out rate limits, retries transient failures."""

    def __init__(self, echo: Callable[[str], None]):
        self.echo = echo
        self.rate_waits = 0
        self.retries = 0

    def call(self, fn: Callable[[], T], what: str) -> T:
        from github import GithubException, RateLimitExceededException
        from requests.exceptions import RequestException

        attempt = waits = 0
        while True:
            try:
                return fn()
            except GithubException as e:
                status, headers = e.status, {k.lower(): v for k, v in (e.headers or {}).items()}
                wait = self._rate_wait(status, headers, _message(e),
                                       isinstance(e, RateLimitExceededException))
                if wait is not None:
                    waits += 1
                    if waits > MAX_RATE_WAITS or wait > MAX_RATE_WAIT_S:
                        raise CollectError(
                            f"GitHub rate limit exhausted ({what}); it resets in {wait}s: "
                            "run the same command again then (what was collected is saved)"
                        ) from None
                    self.rate_waits += 1
                    self.echo(f"rate limited, waiting {wait}s")
                    _sleep(wait)
                    continue
                if status < 500:
                    raise GitHubError(status, _message(e), what) from None
                problem = f"GitHub said {status} {_message(e)}"
            except RequestException as e:
                problem = f"cannot reach GitHub: {type(e).__name__}"
            except (ValueError, TypeError, KeyError, AttributeError) as e:
                problem = f"GitHub sent a malformed answer: {type(e).__name__}: {e}"[:200]
            attempt += 1
            if attempt >= MAX_ATTEMPTS:
                raise CollectError(f"{problem} ({what}); gave up after {attempt} tries")
            delay = min(2 ** (attempt - 1), 30)
            self.retries += 1
            self.echo(f"{problem} ({what}); retrying in {delay}s ({attempt}/{MAX_ATTEMPTS - 1})")
            _sleep(delay)

    @staticmethod
    def _rate_wait(status: int, headers: dict[str, str], message: str,
                   known: bool = False) -> int | None:
        """Seconds to wait out a rate limit; None when the answer is not one. ``known``: PyGithub
        read it as one (its words for secondary limits: '... wait a few minutes before you try
        again.', '... retry your request again later.')."""
        if status not in (403, 429):
            return None
        if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            try:
                reset = float(headers["x-ratelimit-reset"])
            except ValueError:
                reset = _clock() + 60
            return max(1, math.ceil(reset - _clock()))
        if "retry-after" in headers:
            try:
                return max(1, int(float(headers["retry-after"])))
            except ValueError:
                return 60
        lower = message.lower()
        if status == 429 or known or "rate limit" in lower:
            return 60
        return None


# ---- collecting one repository --------------------------------------------------------------
def resolve_repo(gh: Any, api: Api, name: str, api_url: str = "") -> tuple[Any, str]:
    """The PyGithub repository ``name`` and its full name as GitHub spells it."""

    def get_repo() -> tuple[Any, str]:
        repo = gh.get_repo(name)
        raw = _raw(repo)
        if "full_name" not in raw and isinstance(raw.get("data"), str):  # a non-JSON body
            raise CollectError(
                f"--api-url {api_url} is not GitHub's REST API (GET repos/{name} answered with "
                "a web page, not JSON): use https://api.github.com, or https://HOST/api/v3 for "
                "GitHub Enterprise Server")
        full = raw.get("full_name")
        if not isinstance(full, str) or "/" not in full:
            raise ValueError("the answer is not a repository")
        return repo, full

    return api.call(get_repo, f"GET repos/{name}")


class Collector(FileReader):
    def __init__(self, gh: Any, store: Store, api: Api, echo: Callable[[str], None]):
        self.gh = gh
        self.store = store
        self.api = api
        self.echo = echo

    def run(self, repo: Any, full: str, since: datetime | None,
            max_runs: int | None) -> dict[str, int]:
        """Collect the runs of ``repo`` (from :func:`resolve_repo`), named ``full``."""
        rs = self.store.state["repos"].setdefault(full, {})
        pending = rs.get("pass") or None
        if since is not None:
            lower = since
        elif pending is not None:
            lower = parse_time(pending.get("lower"))
        elif rs.get("watermark"):
            lower = parse_time(rs["watermark"]) - OVERLAP  # type: ignore[operator]
        else:
            lower = None
        rs["pass"] = {
            "lower": iso_z(lower) if lower else None,
            "newest": (pending or {}).get("newest"),
        }
        self.store.save_state()
        skipped_ids = set(rs.get("skipped") or [])

        def known(raw: dict[str, Any]) -> bool:
            """Skipped before, or in the folder at this attempt (a re-run is collected again)."""
            if int(raw["id"]) in skipped_ids:
                return True
            held = self.store.attempts.get(row_id(int(raw["id"])))
            return held is not None and held >= _attempt(raw.get("run_attempt"))

        candidates, newest, complete = self.list_runs(repo, full, lower, known, max_runs)
        later = self.runs_ended(repo, full, rs, known, {int(_raw(r)["id"]) for r in candidates})
        candidates += later
        if newest is None:
            self.echo(f"{full}: no completed workflow runs"
                      + (f" created since {iso_z(lower)}" if lower else
                         ": GitHub Actions has not run here (or its runs were deleted)"))
        if newest and (not rs["pass"]["newest"] or _later(newest, rs["pass"]["newest"])):
            rs["pass"]["newest"] = newest
        stats = {"new": 0, "updated": 0, "skipped": 0, "blobs": 0,
                 "later": len(rs.get("later") or ()), "measured": 0}
        reasons: dict[str, int] = {}
        finished = False
        try:
            with click.progressbar(
                length=len(candidates),
                label=f"{full}: {len(candidates)} runs",
                show_pos=True,
                file=sys.stderr,
            ) as bar:
                for run in candidates:
                    run_raw = _raw(run)  # checked by _run_item
                    try:
                        row, texts = self.label_run(repo, full, run, run_raw)
                    except _Skip as why:
                        stats["skipped"] += 1
                        reasons[str(why)] = reasons.get(str(why), 0) + 1
                        rs.setdefault("skipped", []).append(int(run_raw["id"]))
                    except _NotYet:  # asked for again by id next time, wherever it was created
                        if int(run_raw["id"]) not in rs.setdefault("later", []):
                            rs["later"].append(int(run_raw["id"]))
                            stats["later"] += 1
                    else:
                        if int(run_raw["id"]) in (rs.get("later") or ()):
                            rs["later"].remove(int(run_raw["id"]))
                            stats["later"] -= 1
                        rerun = row["id"] in self.store.run_ids
                        stats["blobs"] += self.store.add_run(row, texts)
                        stats["measured"] += sum(1 for j in row["jobs"] if "usage" in j)
                        stats["updated" if rerun else "new"] += 1
                    bar.update(1)
            if complete:
                marks = [m for m in (rs.get("watermark"), rs["pass"]["newest"]) if m]
                rs["watermark"] = max(marks, key=lambda m: parse_time(m)) if marks else None
                rs["pass"] = None
            finished = True
        finally:
            rs["updated_at"] = iso_z(datetime.fromtimestamp(_clock(), UTC))
            self.store.merge()
            if not finished:  # an error or Ctrl-C: say what is kept before it is printed
                self.echo(f"{full}: stopped after {stats['new']} new runs"
                          + (f", {stats['updated']} re-run updated" if stats["updated"] else "")
                          + ", saved: run the same command again to continue")
        why = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        self.echo(
            f"{full}: {stats['new']} new runs, "
            + (f"{stats['updated']} re-run updated, " if stats["updated"] else "")
            + f"{stats['blobs']} new files"
            + (f", {stats['measured']} job runs with usage records" if stats["measured"] else "")
            + (f", {stats['skipped']} skipped ({why})" if stats["skipped"] else "")
            + (f", {stats['later']} being re-run (collected when it ends)"
               if stats["later"] else "")
            + ("" if complete else "; more runs left: run again to continue")
        )
        return stats

    def runs_ended(self, repo: Any, full: str, rs: dict[str, Any],
                   known: Callable[[dict[str, Any]], bool], listed: set[int]) -> list[Any]:
        """The runs an earlier call found being re-run that have ended since (asked for by
        id: they may be older than the window listed); those gone are forgotten."""
        out: list[Any] = []
        for rid in list(rs.get("later") or ()):
            if rid in listed:
                continue
            try:
                raw, run = self.api.call(lambda rid=rid: _run_item(repo.get_workflow_run(rid)),
                                         f"run {rid} of {full}")
            except GitHubError as e:
                if e.status not in (404, 410):
                    raise
                rs["later"].remove(rid)  # deleted since
                continue
            if raw.get("status") == "completed" and known(raw):
                rs["later"].remove(rid)
            elif raw.get("status") == "completed":
                out.append(run)
        return out

    def list_runs(
        self,
        repo: Any,
        full: str,
        lower: datetime | None,
        known: Callable[[dict[str, Any]], bool],
        max_runs: int | None,
    ) -> tuple[list[Any], str | None, bool]:
        """Completed runs not yet in the folder, newest first; ``(runs, newest, complete)``.

        GitHub lists at most ``RESULT_CAP`` runs per filtered query, so past the cap the
        window is narrowed to runs created up to the oldest one seen, and listing goes on.
        """
        out: list[Any] = []
        seen: set[int] = set()
        newest: str | None = None
        upper: datetime | None = None
        self.echo(f"{full}: listing completed runs" + (f" since {iso_z(lower)}" if lower else ""))
        while True:
            if lower and upper:
                created = f"{iso_z(lower)}..{iso_z(upper)}"
            elif lower:
                created = f">={iso_z(lower)}"
            elif upper:
                created = f"<={iso_z(upper)}"
            else:
                created = None
            kwargs: dict[str, Any] = {"status": "completed"}
            if created:
                kwargs["created"] = created
            runs = repo.get_workflow_runs(**kwargs)
            page = fetched = fresh = 0
            oldest: datetime | None = None
            while True:
                items = self.api.call(
                    lambda runs=runs, page=page: [_run_item(r) for r in runs.get_page(page)],
                    f"listing runs of {full}, page {page + 1}",
                )
                total = runs.totalCount or 0
                for raw, run in items:
                    rid, created_at = int(raw["id"]), str(raw["created_at"])
                    t = parse_time(created_at)
                    if oldest is None or (t is not None and t < oldest):
                        oldest = t
                    if newest is None or _later(created_at, newest):
                        newest = created_at
                    if rid in seen:
                        continue
                    seen.add(rid)
                    fresh += 1
                    if raw.get("status") != "completed" or known(raw):
                        continue
                    out.append(run)
                    if max_runs and len(out) >= max_runs:
                        return out, newest, False
                fetched += len(items)
                page += 1
                if fetched >= total and fetched < RESULT_CAP:
                    return out, newest, True
                if not items or len(items) < PER_PAGE or page * PER_PAGE >= RESULT_CAP:
                    break  # the end, or GitHub's cap on one query: narrow the window
            if oldest is None or fresh == 0:
                return out, newest, True
            if upper is not None and oldest >= upper:
                self.echo(f"{full}: too many runs created at {iso_z(upper)} to list them all")
                return out, newest, False
            upper = oldest

    def label_run(
        self, repo: Any, full: str, run: Any, raw: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        run_id, sha = int(raw["id"]), str(raw["head_sha"])
        path = str(raw.get("path") or "").split("@", 1)[0]
        if not path.startswith(".github/workflows/"):
            raise _Skip("not a workflow file of the repo")
        files, texts, profile = self.files_at(repo, full, sha)
        if path not in files:
            raise _Skip("workflow file not at the commit")
        try:
            jobs = self.list_all(lambda: run.jobs(_filter="latest"), f"jobs of run {run_id}")
        except GitHubError as e:
            if e.status in (404, 410):
                raise _Skip("run deleted") from None
            raise
        # filter=latest: the final attempt's jobs (after "re-run failed jobs" it also lists
        # the jobs carried over from earlier attempts, which did run for this result)
        listed_attempt = _attempt(raw.get("run_attempt"))
        if any(j.get("status") not in (None, "completed")
               or _attempt(j.get("run_attempt")) > listed_attempt for j in jobs):
            raise _NotYet  # re-run since it was listed: not the attempt listed, not done
        job_rows = [
            {
                "name": j.get("name"),
                "run_time_s": job_seconds(j),
                "conclusion": j.get("conclusion"),
                "runner_labels": list(j.get("labels") or []),
                "runner_name": j.get("runner_name"),
                "started_at": j.get("started_at"),
                "completed_at": j.get("completed_at"),
            }
            for j in jobs
        ]
        for i, rec in self.usage_of(repo, full, run_id, jobs).items():
            job_rows[i]["usage"] = rec  # what the measure step measured (laser_ci.measure)
        head = raw.get("head_commit") or {}
        stamp = parse_time(head.get("timestamp")) if isinstance(head, dict) else None
        row = {
            "id": row_id(run_id),
            "repo": full,
            "workflow_path": path,
            "sha": sha,
            "commit_date": stamp.isoformat() if stamp else None,
            "created_at": raw.get("created_at"),  # when the run began: the runs' order
            "event": raw.get("event"),
            "branch": raw.get("head_branch"),
            "conclusion": raw.get("conclusion"),
            "attempts": _attempt(raw.get("run_attempt")),
            "run_time_s": float(sum(j["run_time_s"] for j in job_rows)),
            "files": files,
            "repo_profile": profile,
            "jobs": job_rows,
        }
        return row, texts

    def usage_of(self, repo: Any, full: str, run_id: int,
                 jobs: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
        """Per index of ``jobs``, the usage record the measure step kept for that job run
        (:mod:`laser_ci.github.usage_records`); none when the run's artifacts cannot be read."""
        from laser_ci.github.usage_records import run_usage

        try:
            return self.api.call(lambda: run_usage(repo.requester, repo.url, run_id, jobs),
                                 f"usage records of run {run_id}")
        except GitHubError as e:
            if e.status in (403, 404, 410):
                return {}
            raise

    def list_all(self, make: Callable[[], Any], what: str) -> list[dict[str, Any]]:
        plist = make()
        out: list[dict[str, Any]] = []
        page = 0
        while True:
            items = self.api.call(
                lambda page=page: [_raw(i) for i in plist.get_page(page)],
                f"{what}, page {page + 1}",
            )
            out.extend(items)
            page += 1
            if not items or len(out) >= (plist.totalCount or 0) or len(items) < PER_PAGE:
                return out

# ---- the command ----------------------------------------------------------------------------
_PROGRESS = Progress("collect")


def _echo(msg: str) -> None:
    _PROGRESS.echo(msg)  # on a terminal, clears the ticking progress line first


def _connect(token: str, api_url: str) -> Any:
    from github import Auth, Github

    if not re.match(r"https?://[^/]", api_url):
        raise CollectError(f"--api-url must be an http(s) URL, got {api_url!r}")
    return Github(
        base_url=api_url.rstrip("/"),
        auth=Auth.Token(token),
        per_page=PER_PAGE,
        retry=None,
        timeout=TIMEOUT_S,
        user_agent=f"laser-ci/{__version__}",
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


@contextmanager
def _one_line_errors() -> Iterator[None]:
    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise
    except KeyboardInterrupt:
        _echo("interrupted: everything collected so far is saved; run again to resume")
        raise click.exceptions.Exit(130) from None
    except OSError as e:
        raise CollectError(f"{e.strerror or e}: {e.filename or ''}".rstrip(": ")) from None
    except Exception as e:  # never a traceback; LASER_CI_DEBUG=1 shows it
        if os.environ.get("LASER_CI_DEBUG"):
            raise
        raise CollectError(f"unexpected {type(e).__name__}: {e}") from None


@click.command("collect")
@click.argument("repos", nargs=-1, required=True, metavar="OWNER/REPO...")
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("gha-runs"),
    show_default=True,
    help="Folder to write (created, or added to).",
)
@click.option(
    "--since",
    metavar="WHEN",
    help="Only runs created since WHEN: 2024-05-01, an ISO 8601 time, or an age (30d, 12h, 2w). "
    "Default: everything on the first call, then the runs created since the newest run "
    "the last call saw, less two days (runs that finished late, re-runs).",
)
@click.option(
    "--max-runs",
    type=click.IntRange(min=1),
    default=None,
    help="Collect at most N new runs per repository (newest first); run again for more.",
)
@click.option(
    "--token",
    envvar="GITHUB_TOKEN",
    show_envvar=True,
    help="GitHub token (read access to Actions and contents).",
)
@click.option(
    "--api-url",
    envvar="GITHUB_API_URL",
    default="https://api.github.com",
    show_default=True,
    show_envvar=True,
    help="GitHub REST API base URL (GitHub Enterprise: https://HOST/api/v3).",
)
def collect(
    repos: tuple[str, ...],
    out: Path,
    since: str | None,
    max_runs: int | None,
    token: str | None,
    api_url: str,
) -> None:
    """Collect the completed workflow runs of OWNER/REPO from GitHub into a data folder.

    Writes runs.jsonl.gz (each run with its jobs' times and runners), blobs.jsonl.gz and
    corpus.jsonl.gz (the workflow files and local actions at each run's commit) in the
    shared gha-runs format: `laser-ci eval` and training read it, and so does
    `laser-ci estimate --history DIR`, which wants one repository per folder.

    Runs that cannot be labeled are skipped and counted: a dynamic workflow (CodeQL,
    Dependabot), a commit that is gone, a workflow file not at the run's commit. Runs of
    pull requests from forks are kept. A run re-run since an earlier call is collected
    again, its final attempt replacing it, when it was created at most two days before
    that call's newest run (or after --since); one found being re-run is left out and
    collected by the first call after it ends.

    Safe to interrupt and to re-run: what was collected is kept (also on an error or
    Ctrl-C), a second call adds only runs not already in the folder, and a call cut short
    (an error, Ctrl-C, --max-runs) is continued by the next. A rate limit is waited out
    (up to 65 minutes; longer: it stops, run it again later); 5xx and network errors are
    retried.

    The token needs read access to the repository's Actions and contents (a workflow's
    GITHUB_TOKEN: permissions actions: read, contents: read).

    Exit status: 0 done (also when there were no runs), 1 GitHub, the token or the folder
    failed (what was collected is kept), 2 bad usage, 130 interrupted.
    """
    for name in repos:
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", name):
            raise click.BadParameter(f"{name!r} is not OWNER/REPO", param_hint="OWNER/REPO")
    try:
        since_dt = parse_since(since) if since else None
    except ValueError:
        raise click.BadParameter(
            f"{since!r}: use a date (2024-05-01), an ISO 8601 time or an age (30d)",
            param_hint="--since",
        ) from None
    if not token:
        raise CollectError("no GitHub token: set GITHUB_TOKEN or pass --token")
    with _one_line_errors():
        gh = _connect(token, api_url)
        api = Api(_echo)
        # every name and the token are checked before the folder is made: a typo writes nothing
        resolved = [resolve_repo(gh, api, name, api_url) for name in repos]
        store = Store(out)
        try:
            if store.recovered:
                _echo(f"recovered {store.recovered} runs from an interrupted call")
            collector = Collector(gh, store, api, _echo)
            for i, (repo, full) in enumerate(resolved, 1):
                with _PROGRESS.stage(f"collecting {full}", i, len(resolved)):
                    collector.run(repo, full, since_dt, max_runs)
            if len(store.repos) > 1:
                names = sorted(store.repos)
                _echo(f"note: {out} holds the runs of {len(names)} repositories "
                      f"({', '.join(names[:3])}{', ...' if len(names) > 3 else ''}): eval and "
                      "training read it, estimate --history reads one repository per folder (-o)")
        finally:
            store.close()
