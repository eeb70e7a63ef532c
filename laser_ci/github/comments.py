"""The one sticky pull-request comment: found by its hidden marker, created or edited; a
read-only token is a notice."""

from __future__ import annotations

from typing import Any

import click

from laser_ci.github.errors import describe, is_rate_limit, message_of
from laser_ci.github.runner_io import emit
from laser_ci.report.comment import MARKER

BOT_LOGIN = "github-actions[bot]"  # who GITHUB_TOKEN comments as; /user is 403 for it


def post_comment(gh: Any, repo: Any, number: int, body: str, problems: list[str], *,
                 marker: str = MARKER) -> dict:
    """Creates or edits the one sticky comment. A 403 that is not a rate limit (a fork's
    read-only token) is a notice; any other failure, HTTP or network, is a problem and a
    warning, never an exception: the estimate is reported in the job summary either way."""
    from github import GithubException

    issue = repo.get_issue(number)
    creating = False
    try:
        mine = _own_comments(gh, issue, marker)
        if mine and mine[0].body == body:
            existing = mine[0]
            return {"status": "unchanged", "id": existing.id, "url": existing.html_url}
        for existing in mine:
            try:
                existing.edit(body)
            except GithubException as exc:
                if exc.status != 404:
                    raise
                continue  # deleted since it was listed (by hand, or by a run beside this one)
            click.echo(f"laser-ci: updated comment {existing.html_url}")
            return {"status": "updated", "id": existing.id, "url": existing.html_url}
        creating = True
        created = issue.create_comment(body)
        click.echo(f"laser-ci: created comment {created.html_url}")
        return {"status": "created", "id": created.id, "url": created.html_url}
    except Exception as exc:  # noqa: BLE001 - a comment is advisory: report, never crash
        status = getattr(exc, "status", None)
        if status == 403 and not is_rate_limit(exc):
            emit(
                "notice",
                "laser-ci could not comment on the pull request (403: "
                f"{message_of(exc)}). This is expected for pull requests from forks and for "
                "tokens without pull-requests: write; the prediction is in the job summary.",
                title="laser-ci: no PR comment",
            )
            return {"status": "forbidden"}
        if creating and not (isinstance(status, int) and 400 <= status < 500):
            # a 5xx or a lost connection after GitHub stored the comment: never post twice
            found = _look_again(gh, issue, body, marker)
            if found is not None:
                click.echo(f"laser-ci: created comment {found.html_url}")
                return {"status": "created", "id": found.id, "url": found.html_url}
        problems.append(f"commenting failed: {describe(exc)}")
        emit("warning", f"laser-ci could not comment on the pull request: {describe(exc)}")
        return {"status": "failed"}


def _look_again(gh: Any, issue: Any, body: str, marker: str) -> Any:
    """Our comment with ``body``, if a create that seemed to fail stored it after all."""
    try:
        return next((c for c in _own_comments(gh, issue, marker) if c.body == body), None)
    except Exception:  # noqa: BLE001 - the failure that sent us here is what gets reported
        return None


def _own_comments(gh: Any, issue: Any, marker: str) -> list[Any]:
    """The marked comments written by this token's user (GITHUB_TOKEN: github-actions[bot]).
    The marker is their first line: another comment of that user (any workflow's
    ``GITHUB_TOKEN`` is github-actions[bot]) may quote it further down."""
    marked = [c for c in issue.get_comments() if (c.body or "").lstrip().startswith(marker)]
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
