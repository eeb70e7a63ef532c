"""What a GitHub API failure was, in words: for notes, warnings and the choice between
them (a rate limit is not a missing permission)."""

from __future__ import annotations

from collections.abc import Mapping


def message_of(exc: Exception) -> str:
    """The API's own message, else the exception's text."""
    data = getattr(exc, "data", None)
    if isinstance(data, Mapping) and data.get("message"):
        return str(data["message"])
    return str(exc)


def describe(exc: Exception) -> str:
    """One line: ``GitHub API 502: Server Error``, or the exception's type and text."""
    status = getattr(exc, "status", None)
    if status is not None:
        return f"GitHub API {status}: {message_of(exc)}"
    return f"{type(exc).__name__}: {exc}"


def is_rate_limit(exc: Exception) -> bool:
    """A primary or secondary rate limit (GitHub answers both with 403 or 429)."""
    from github import RateLimitExceededException

    if isinstance(exc, RateLimitExceededException):
        return True
    headers = {str(k).lower(): str(v) for k, v in (getattr(exc, "headers", None) or {}).items()}
    if "retry-after" in headers or headers.get("x-ratelimit-remaining") == "0":
        return True
    return getattr(exc, "status", None) == 429 or "rate limit" in message_of(exc).lower()
