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
