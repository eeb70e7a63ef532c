"""The Action's sticky comment against the fake GitHub API: what a user hits when the
comment changes under it, or when other comments look like it."""

from __future__ import annotations

import json
from pathlib import Path

from github.IssueComment import IssueComment
from test_action import MARKER, NUMBER, REPO, _env, _invoke, _outputs
from test_action import github as github  # noqa: PLC0414 - the fixture, re-exported

BOT = {"login": "github-actions[bot]", "id": 41898282, "type": "Bot"}


def _comment_status(tmp_path: Path) -> dict:
    return json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))["comment"]


def test_a_comment_deleted_before_its_edit_is_posted_again(tmp_path, github, monkeypatch):
    # the comment is listed, then deleted (by hand, or by a run beside this one) before the
    # edit: the PATCH answers 404, and the PR was left with no report at all
    github.add_comment(REPO, NUMBER, f"{MARKER}\nan older report", user=BOT)
    edit = IssueComment.edit

    def deleted_first(self, body):
        github.issue_comments[(REPO, NUMBER)].clear()
        return edit(self, body)

    monkeypatch.setattr(IssueComment, "edit", deleted_first)
    result = _invoke(_env(tmp_path, github, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)

    assert result.exit_code == 0, result.output
    assert "could not comment" not in result.output
    (comment,) = github.comments(REPO, NUMBER)
    assert comment["body"].startswith(MARKER) and "an older report" not in comment["body"]
    assert _comment_status(tmp_path) == {"status": "created", "id": comment["id"],
                                         "url": comment["html_url"]}
    assert len(github.requests_to(r"/issues/comments/\d+$", method="PATCH")) == 1


def test_a_comment_that_quotes_the_marker_is_not_the_sticky_one(tmp_path, github,
                                                                   monkeypatch):
    # every workflow's GITHUB_TOKEN comments as github-actions[bot]: another workflow's
    # comment that quotes the PR's description (which holds the marker, pasted or planted)
    # was taken for laser-ci's own and overwritten
    quoting = "Thanks for the PR! You wrote:\n\n> see the timings below\n> " + MARKER + "\n"
    github.add_comment(REPO, NUMBER, quoting, user=BOT)
    github.inject_forbidden(r"^/user$", times=None)  # as GitHub answers a GITHUB_TOKEN
    result = _invoke(_env(tmp_path, github), monkeypatch)

    assert result.exit_code == 0, result.output
    other, mine = github.comments(REPO, NUMBER)
    assert other["body"] == quoting
    assert mine["body"].startswith(MARKER) and mine["user"]["login"] == BOT["login"]
    assert _comment_status(tmp_path)["status"] == "created"
    assert github.requests_to(r"/issues/comments/\d+$", method="PATCH") == []

    # and the next run edits its own comment, not the quoting one
    mine_id = mine["id"]
    github.issue_comments[(REPO, NUMBER)][1]["body"] += "\nan older report"
    assert _invoke(_env(tmp_path, github), monkeypatch).exit_code == 0
    assert [c["body"] == quoting for c in github.comments(REPO, NUMBER)] == [True, False]
    assert [r.path.rsplit("/", 1)[-1] for r in
            github.requests_to(r"/issues/comments/\d+$", method="PATCH")] == [str(mine_id)]
