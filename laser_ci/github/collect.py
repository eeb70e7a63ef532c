"""``laser-ci collect``: build a training/eval folder from a repository's GitHub Actions history.

For each completed workflow run it records the run's jobs (start, end, runner labels,
conclusion) and every workflow file and local action (``.yml``/``.yaml`` under
``.github/workflows/`` and ``.github/actions/``) at the run's ``head_sha``, in the format of
the shared ``gha-runs`` data set, so ``eval`` and the training code read it as is::

    OUT/runs.jsonl.gz     one run per line: id, repo, workflow_path, sha, commit_date,
                          created_at (when the run was created), event,
                          branch, conclusion, attempts, run_time_s, files {path: blob id},
                          repo_profile, and jobs [{name, run_time_s, conclusion,
                          runner_labels, runner_name, started_at, completed_at}]
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

import base64
import gzip
import hashlib
import json
import math
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import click

from laser_ci import __version__
from laser_ci.report.progress import Progress

T = TypeVar("T")

# Tunables; tests monkeypatch them.
PER_PAGE = 100  # items per list request (GitHub's maximum)
RESULT_CAP = 1000  # GitHub lists at most this many runs for one filtered query
MAX_ATTEMPTS = 5  # tries of one request on 5xx / network / malformed answers
MAX_RATE_WAIT_S = 3900  # longest rate-limit wait; beyond it, stop (the data is saved)
MAX_RATE_WAITS = 5  # rate-limit waits for one request before giving up
MERGE_EVERY = 25  # fold staging into the .gz files every N runs
OVERLAP = timedelta(days=2)  # incremental calls re-list this far before the last newest run
TIMEOUT_S = 30

_sleep: Callable[[float], None] = time.sleep
_clock: Callable[[], float] = time.time

STATE_DIR = ".laser-ci-collect"
FILES = ("blobs", "corpus", "runs")  # merge order: what a run refers to comes first
CI_DIRS = (".github/workflows/", ".github/actions/")


class CollectError(click.ClickException):
    """A one-line failure: printed as ``Error: ...``, exit status 1, no traceback."""


class GitHubError(CollectError):
    def __init__(self, status: int, message: str, what: str = ""):
        self.status = status
        super().__init__(f"GitHub said {status} {message}" + (f" ({what})" if what else "")
                         + _hint(status, what))


def _hint(status: int, what: str) -> str:
    """What to do about a 401, 403 (not a rate limit) or a repository's 404."""
    if status == 401:
        return ": the token is wrong or expired (GITHUB_TOKEN or --token)"
    if status == 403:
        return (": the token needs read access to the repository's Actions and contents "
                "(a fine-grained token: Actions and Contents read; a workflow's GITHUB_TOKEN: "
                "permissions actions: read, contents: read)")
    if status == 404 and what.startswith("GET repos/"):
        return (": no such repository, or the token cannot see it (a private repository "
                "needs a token with access to it)")
    return ""


class _Skip(Exception):
    """This run cannot be labeled (its commit or workflow file is gone)."""


class _NotYet(Exception):
    """This run is being re-run: listed as done, its latest attempt's jobs are not."""


# ---- small helpers ----------------------------------------------------------------------------
def blob_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def row_id(run_id: int) -> str:
    """The stable row id of a GitHub run (run ids are unique across GitHub)."""
    return hashlib.sha256(f"gha-run/{run_id}".encode()).hexdigest()[:16]


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def iso_z(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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


def _attempt(value: Any) -> int:
    """A run's attempt number (``attempts``, ``run_attempt``); 1 when not a number."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def _later(a: str, b: str) -> bool:
    ta, tb = parse_time(a), parse_time(b)
    return ta is not None and (tb is None or ta > tb)


def is_ci_file(path: str) -> bool:
    return path.startswith(CI_DIRS) and path.lower().endswith((".yml", ".yaml"))


def _raw(obj: Any) -> dict[str, Any]:
    """The JSON GitHub sent for a PyGithub object, without triggering a completion request."""
    data = getattr(obj, "_rawData", None)
    if not isinstance(data, dict):
        raise ValueError("a list item is not a JSON object")
    return data


def _as_list(obj: Any) -> list[dict[str, Any]]:
    return [_raw(o) for o in (obj if isinstance(obj, list) else [obj])]


def _run_item(run: Any) -> tuple[dict[str, Any], Any]:
    raw = _raw(run)
    if not isinstance(raw.get("id"), int) or not isinstance(raw.get("created_at"), str):
        raise ValueError("a workflow run without id or created_at")
    parse_time(raw["created_at"])  # raises ValueError when it is not a time
    if not isinstance(raw.get("head_sha"), str):
        raise ValueError("a workflow run without head_sha")
    return raw, run


def _message(e: Any) -> str:
    data = getattr(e, "data", None)
    if isinstance(data, dict):
        msg = data.get("message") or data.get("data")
        if msg:
            return " ".join(str(msg).split())[:200]
    return " ".join(str(getattr(e, "message", None) or data or "error").split())[:200]


def job_seconds(job: dict[str, Any]) -> float:
    start, end = parse_time(job.get("started_at")), parse_time(job.get("completed_at"))
    if start is None or end is None:
        return 0.0
    return max(0.0, (end - start).total_seconds())


def repo_profile(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``repo_profile`` of a git tree, computed as at inference (``laser_ci.workflows.repo_profile``)."""
    from laser_ci.workflows.repo_profile import profile_from_files

    blobs = [(str(e.get("path", "")), int(e.get("size") or 0)) for e in entries if e.get("type") == "blob"]
    return profile_from_files(blobs).to_json()


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


def _lock(path: Path, out: Path) -> Any:
    """Hold an exclusive lock on the folder for this process's lifetime (POSIX only)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    fh = open(path, "a")  # noqa: SIM115 - kept open: the lock lives as long as the Store
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise CollectError(f"another laser-ci collect is writing to {out}") from None
    return fh


# ---- the output folder --------------------------------------------------------------------
class Store:
    """The output folder: known keys, append-only staging, atomic merges, the state file."""

    def __init__(self, out: Path):
        self.out = out
        self.stage = out / STATE_DIR
        try:
            self.stage.mkdir(parents=True, exist_ok=True)
            self._lock = _lock(self.stage / "lock", out)
        except OSError as e:  # read-only, under a file, ...: name the folder given
            raise CollectError(f"cannot write to {out}: {e.strerror or e}") from None
        self.run_ids: set[str] = set()
        self.attempts: dict[str, int] = {}  # row id -> the attempt the folder holds
        self.replaced: set[str] = set()  # row ids whose older row the next merge drops
        self.repos: set[str] = set()  # the repositories the runs are of
        self.blob_ids: set[str] = set()
        self.corpus: set[tuple[str, str, str]] = set()
        for row in self._read_gz("runs"):
            if str(row.get("id")) in self.run_ids:  # a re-run appended by a merge before a
                self.replaced.add(str(row.get("id")))  # kill: the next final merge keeps one
            self.run_ids.add(str(row.get("id")))
            self.attempts[str(row.get("id"))] = _attempt(row.get("attempts"))
            self.repos.add(str(row.get("repo")))
        for row in self._read_gz("blobs"):
            self.blob_ids.add(str(row.get("id")))
        for row in self._read_gz("corpus"):
            self.corpus.add((str(row.get("repo")), str(row.get("path")), str(row.get("blob"))))
        self.state = self._load_state()
        self._handles: dict[str, Any] = {}
        self.recovered = self._recover()
        cache = self.state.setdefault("git_blobs", {})
        self.git_blobs: dict[str, str] = {k: v for k, v in cache.items() if v in self.blob_ids}
        self.state["git_blobs"] = self.git_blobs
        self.pending = 0

    def _gz(self, name: str) -> Path:
        return self.out / f"{name}.jsonl.gz"

    def _part(self, name: str) -> Path:
        return self.stage / f"{name}.jsonl"

    def _read_gz(self, name: str) -> Iterator[dict[str, Any]]:
        path = self._gz(name)
        if not path.exists():
            return
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        yield json.loads(line)
        except (OSError, EOFError, ValueError) as e:
            raise CollectError(f"cannot read {path}: {e}") from None

    def _load_state(self) -> dict[str, Any]:
        path = self.stage / "state.json"
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(data, dict):
                    data.setdefault("repos", {})
                    return data
            except ValueError:
                pass
        return {"version": 1, "repos": {}, "git_blobs": {}}

    def save_state(self) -> None:
        path = self.stage / "state.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)

    def _key(self, name: str, row: dict[str, Any]) -> Any:
        if name == "corpus":
            return (str(row.get("repo")), str(row.get("path")), str(row.get("blob")))
        return str(row.get("id"))

    def _known(self, name: str) -> set[Any]:
        return {"runs": self.run_ids, "blobs": self.blob_ids, "corpus": self.corpus}[name]

    def _recover(self) -> int:
        """Fold staging left by a killed call into the .gz files (complete lines only)."""
        found = 0
        for name in FILES:
            part = self._part(name)
            if not part.exists():
                continue
            text = part.read_bytes().decode("utf-8", "replace")
            lines = []
            known = self._known(name)
            for line in text.split("\n")[:-1]:  # the last piece has no newline: incomplete
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(row, dict):
                    continue
                key = self._key(name, row)
                if name == "runs" and key in known and self.later_attempt(key, row):
                    self.replaced.add(key)  # a re-run staged before the kill
                elif key in known:
                    continue
                known.add(key)
                if name == "runs":
                    self.attempts[key] = _attempt(row.get("attempts"))
                    self.repos.add(str(row.get("repo")))
                lines.append(json.dumps(row, ensure_ascii=False) + "\n")
            if name == "runs":
                found = len(lines)
            self._fold(name, lines)
            part.unlink()
        return found

    def later_attempt(self, key: str, row: dict[str, Any]) -> bool:
        """Whether ``row`` is a later attempt of a run the folder holds (a re-run)."""
        return key in self.attempts and _attempt(row.get("attempts")) > self.attempts[key]

    def _fold(self, name: str, lines: list[str], final: bool = True) -> None:
        """Add ``lines`` to the .gz file. For runs, a ``final`` fold also drops the rows
        re-runs replace (of each such id the last row: its newest attempt); the merges
        during a call only append, so the file is rewritten once a call, not once a merge."""
        if name != "runs" or not self.replaced or not final:
            self._append_gz(name, lines)
            return
        path = self._gz(name)
        new = [json.loads(ln) for ln in lines if ln.strip()]
        # the row each replaced id keeps: its last, in the file then the new lines
        last: dict[str, int] = {}
        for i, row in enumerate(self._read_gz(name)):
            if str(row.get("id")) in self.replaced:
                last[str(row.get("id"))] = i
        for row in new:
            last.pop(str(row.get("id")), None)  # a new line is later than the file's rows
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
            new_ids = {str(row.get("id")) for row in new}
            for i, row in enumerate(self._read_gz(name)):
                key = str(row.get("id"))
                if key in self.replaced and (key in new_ids or last.get(key) != i):
                    continue
                out.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
            for row in new:
                out.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
            out.close()
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
        self.replaced.clear()

    def _append_gz(self, name: str, lines: list[str]) -> None:
        path = self._gz(name)
        if not lines or (path.exists() and not any(lines)):
            return
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "wb") as out:
            if path.exists():
                with open(path, "rb") as old:
                    shutil.copyfileobj(old, out)
            out.write(gzip.compress("".join(lines).encode("utf-8"), compresslevel=6, mtime=0))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)

    def _write(self, name: str, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        fh = self._handles.get(name)
        if fh is None:
            fh = self._handles[name] = open(self._part(name), "a", encoding="utf-8")
        fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        fh.flush()
        os.fsync(fh.fileno())

    def add_run(self, row: dict[str, Any], texts: dict[str, str]) -> int:
        """Stage one run with its new blobs and corpus rows; returns the new blob count."""
        blobs = [{"id": b, "text": t} for b, t in texts.items() if b not in self.blob_ids]
        corpus = [
            {"repo": row["repo"], "path": p, "blob": b}
            for p, b in row["files"].items()
            if (row["repo"], p, b) not in self.corpus
        ]
        self._write("blobs", blobs)
        self._write("corpus", corpus)
        self._write("runs", [row])
        self.blob_ids.update(b["id"] for b in blobs)
        self.corpus.update((c["repo"], c["path"], c["blob"]) for c in corpus)
        if row["id"] in self.run_ids:
            self.replaced.add(row["id"])  # a re-run: its final attempt replaces the row
        self.run_ids.add(row["id"])
        self.attempts[row["id"]] = _attempt(row.get("attempts"))
        self.repos.add(str(row["repo"]))
        self.pending += 1
        if self.pending >= MERGE_EVERY:
            self.merge(final=False)
        return len(blobs)

    def close(self) -> None:
        """Close staging files and release the folder lock (staging stays for recovery)."""
        for fh in self._handles.values():
            fh.close()
        self._handles.clear()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def merge(self, final: bool = True) -> None:
        """Fold staging into the .gz files, then save the state; ``final`` (the end of a
        call) also drops the rows that re-runs replaced."""
        for fh in self._handles.values():
            fh.close()
        self._handles.clear()
        for name in FILES:
            part = self._part(name)
            if part.exists():
                text = part.read_text(encoding="utf-8")
                self._fold(name, [ln + "\n" for ln in text.split("\n") if ln.strip()], final)
                part.unlink()
            elif name == "runs" and final and self.replaced:  # re-runs merged, not yet dropped
                self._fold(name, [], final)
        for name in FILES:  # a call that found no runs still leaves a folder readers take
            if not self._gz(name).exists():
                self._append_gz(name, [""])
        self.pending = 0
        self.save_state()


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


class Collector:
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
                 "later": len(rs.get("later") or ())}
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

    def files_at(
        self, repo: Any, full: str, sha: str
    ) -> tuple[dict[str, str], dict[str, str], dict[str, Any] | None]:
        """``({path: blob id}, {blob id: text} of new blobs, repo_profile)`` at a commit."""
        try:
            tree = self.api.call(
                lambda: _raw(repo.get_git_tree(sha, recursive=True)),
                f"git tree of {full}@{sha[:7]}",
            )
        except GitHubError as e:
            if e.status in (404, 409, 422):
                raise _Skip("commit not found") from None
            raise
        entries = [e for e in tree.get("tree") or [] if isinstance(e, dict)]
        profile: dict[str, Any] | None = None
        if tree.get("truncated"):
            wanted = self.list_ci_dirs(repo, full, sha)
        else:
            profile = repo_profile(entries)
            wanted = [
                (str(e["path"]), str(e["sha"]))
                for e in entries
                if e.get("type") == "blob" and is_ci_file(str(e.get("path", "")))
            ]
        files: dict[str, str] = {}
        texts: dict[str, str] = {}
        for path, git_sha in sorted(wanted):
            bid = self.store.git_blobs.get(git_sha)
            if bid is None:
                text = self.read_file(repo, full, path, sha)
                if text is None:
                    continue
                bid = blob_id(text)
                texts[bid] = text
                self.store.git_blobs[git_sha] = bid
            files[path] = bid
        return files, texts, profile

    def list_ci_dirs(self, repo: Any, full: str, sha: str) -> list[tuple[str, str]]:
        """The CI files through directory listings (for trees too big to list at once)."""
        out: list[tuple[str, str]] = []
        todo = [d.rstrip("/") for d in CI_DIRS]
        while todo:
            d = todo.pop()
            try:
                listing = self.api.call(
                    lambda d=d: _as_list(repo.get_contents(d, ref=sha)),
                    f"contents of {full}/{d}@{sha[:7]}",
                )
            except GitHubError as e:
                if e.status == 404:
                    continue
                raise
            for raw in listing:
                if raw.get("type") == "dir":
                    todo.append(str(raw["path"]))
                elif raw.get("type") == "file" and is_ci_file(str(raw.get("path", ""))):
                    out.append((str(raw["path"]), str(raw["sha"])))
        return out

    def read_file(self, repo: Any, full: str, path: str, sha: str) -> str | None:
        def fetch() -> str | None:
            items = _as_list(repo.get_contents(path, ref=sha))
            raw = items[0] if len(items) == 1 else {}
            if raw.get("encoding") != "base64" or not isinstance(raw.get("content"), str):
                return None
            return base64.b64decode(raw["content"]).decode("utf-8", errors="replace")

        try:
            text = self.api.call(fetch, f"{full}/{path}@{sha[:7]}")
        except GitHubError as e:
            if e.status == 404:
                return None
            raise
        if text is None:
            self.echo(f"{full}: {path}@{sha[:7]}: no inline content (too large?), left out")
        return text


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
