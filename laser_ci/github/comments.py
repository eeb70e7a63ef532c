"""The one sticky pull-request comment: found by its hidden marker, created or edited; a
read-only token is a notice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from laser_ci.github.runner_io import emit
from laser_ci.report.comment import (
    MARKER,
)

BOT_LOGIN = "github-actions[bot]"  # who GITHUB_TOKEN comments as; /user is 403 for it


def post_comment(gh: Any, repo: Any, number: int, body: str, problems: list[str]) -> dict:
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
            emit(
                "notice",
                "laser-ci could not comment on the pull request (403: "
                f"{_gh_message(exc)}). This is expected for pull requests from forks and for "
                "tokens without pull-requests: write; the prediction is in the job summary.",
                title="laser-ci: no PR comment",
            )
            return {"status": "forbidden"}
        problems.append(f"commenting failed: {describe(exc)}")
        emit("warning", f"laser-ci could not comment on the pull request: {describe(exc)}")
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


def describe(exc: Exception) -> str:
    status = getattr(exc, "status", None)
    if status is not None:
        return f"GitHub API {status}: {_gh_message(exc)}"
    return f"{type(exc).__name__}: {exc}"


