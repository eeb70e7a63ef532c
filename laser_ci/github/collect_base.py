"""The parts of ``laser-ci collect`` its other modules share: its errors, row ids and times,
and reading GitHub's JSON (:mod:`laser_ci.github.collect`)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import click

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
