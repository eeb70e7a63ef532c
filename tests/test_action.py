"""The Action end to end: ``laser-ci action`` against a local fake GitHub REST API.

No test talks to the internet: the API is ``tests/fakegithub.py`` on 127.0.0.1, the event
is a payload file, and the predictor is a small deterministic stand-in so that a changed job
text changes its prediction.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from fakegithub import CONTENTS_LIMIT, FakeGitHub, Symlink

import laser_ci
import laser_ci.predictors.choice
from laser_ci.github.action import Settings, SettingsError, action_command, command, run
from laser_ci.predictors.base import Runtime
from laser_ci.predictors.evidence_bands import load_offsets
from laser_ci.report.comment import MARKER
from laser_ci.report.render import format_duration

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "action"
REPO = "octo/app"
NUMBER = 7
EVENT = json.loads((FIXTURES / "pull_request_event.json").read_text(encoding="utf-8"))
HEAD_SHA = EVENT["pull_request"]["head"]["sha"]
BASE_SHA = EVENT["pull_request"]["base"]["sha"]
HEAD2_SHA = "b" * 40

CI_BASE = """\
name: CI
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ruff check .
  test:
    needs: lint
    runs-on: ubuntu-latest
    timeout-minutes: 30
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - run: pip install -e . && pytest
  build:
    needs: test
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: python -m build
"""
CI_HEAD = """\
name: CI
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    strategy:
      matrix:
        python: ["3.12", "3.13"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - run: pip install -e .[test] && pytest -n 4 --run-slow --cov --cov-report=xml
  build:
    needs: test
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: python -m build
  e2e:
    needs: build
    runs-on: ubuntu-latest
    timeout-minutes: 1
    steps:
      - uses: actions/checkout@v4
      - run: ./scripts/e2e.sh
"""
DOCS = """\
name: Docs
on: push
jobs:
  docs:
    name: build docs
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: mkdocs build --strict
"""
LINT = """\
name: Lint
on: pull_request
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./.github/actions/setup
      - run: pre-commit run --all-files
"""
SETUP_BASE = """\
name: setup
runs:
  using: composite
  steps:
    - run: pip install pre-commit
      shell: bash
"""
SETUP_HEAD = SETUP_BASE + """\
    - run: pre-commit install-hooks && pre-commit gc && pip install mypy types-PyYAML
      shell: bash
"""
DEPLOY = """\
name: Deploy
on:
  push:
    branches: [main]
jobs:
  deploy:
    runs-on: ubuntu-latest
    steps:
      - run: ./deploy.sh
"""
RELEASE = """\
name: Release
on:
  push:
    tags: ["v*"]
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: python -m build && twine upload dist/*
"""
WF = ".github/workflows/"
BASE_TREE = {
    WF + "ci.yml": CI_BASE,
    WF + "docs.yml": DOCS,
    WF + "lint.yml": LINT,
    WF + "deploy.yml": DEPLOY,
    ".github/actions/setup/action.yml": SETUP_BASE,
    "README.md": "# app\n",
}
HEAD_TREE = {
    WF + "ci.yml": CI_HEAD,
    WF + "docs.yml": DOCS,
    WF + "lint.yml": LINT,
    WF + "release.yml": RELEASE,
    ".github/actions/setup/action.yml": SETUP_HEAD,
    "README.md": "# app\n\nNow with e2e tests.\n",
}


_MEDIAN = re.compile(r"^history: n=\d+ median=(\S+)", re.MULTILINE)


class LengthPredictor:
    """Deterministic: p50 is the history block's median when there is one (warm), else the
    longer the job text, the longer the runtime (cold); p10 = p50 / 2, p90 = 2 p50."""

    name = "length-test"

    def __init__(self) -> None:
        self.calls = 0
        self.texts: list[str] = []

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        self.calls += 1
        self.texts += texts
        out = []
        for t in texts:
            m = _MEDIAN.search(t)
            p50 = float(m.group(1)) if m else 30.0 + len(t)
            out.append(Runtime(0.5 * p50, p50, 2 * p50))
        return out


@pytest.fixture
def github():
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_commit(REPO, BASE_TREE, sha=BASE_SHA, branch="main")
        gh.add_commit(REPO, HEAD_TREE, sha=HEAD_SHA)
        gh.add_pull(REPO, NUMBER, head_sha=HEAD_SHA, base_sha=BASE_SHA)
        yield gh


def _env(tmp_path: Path, gh: FakeGitHub, event: dict | None = None, **extra: str) -> dict:
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event or EVENT), encoding="utf-8")
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": gh.url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_SHA": "c" * 40,
        "GITHUB_WORKSPACE": str(tmp_path / "workspace"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "RUNNER_TEMP": str(tmp_path / "temp"),
        "LASER_CI_GITHUB_TOKEN": "ghs_fake_token",
        "LASER_CI_WORKFLOWS": ".github/workflows",
        "LASER_CI_COMMENT": "true",
        "LASER_CI_FAIL_ON_ERROR": "false",
        "LASER_CI_MODEL": "",
    }
    env.update(extra)
    return env


def _invoke(env: dict, monkeypatch: pytest.MonkeyPatch, predictor=None):
    """Runs the ``laser-ci action`` command as the composite step does (env only)."""
    predictor = predictor or LengthPredictor()
    seen: list = []

    def fake_load(model_dir=None):
        seen.append(model_dir)
        return predictor

    monkeypatch.setattr(laser_ci.predictors.choice, "load_predictor", fake_load)
    for key in list(env):
        monkeypatch.setenv(key, env[key])
    result = CliRunner().invoke(action_command, [], catch_exceptions=False)
    return result


def _outputs(tmp_path: Path) -> dict[str, str]:
    lines = (tmp_path / "output.txt").read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines)


# --- pull requests ------------------------------------------------------------------------


def test_pr_creates_the_comment_then_edits_it(tmp_path, github, monkeypatch):
    env = _env(tmp_path, github)
    first = _invoke(env, monkeypatch)
    assert first.exit_code == 0, first.output

    comments = github.comments(REPO, NUMBER)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert body.startswith(MARKER)
    assert len(github.requests_to(rf"/issues/{NUMBER}/comments$", method="POST")) == 1
    assert github.requests_to(r"/issues/comments/\d+$", method="PATCH") == []
    # every request was authenticated with the input token and stayed on the fake server
    assert all(r.headers.get("authorization") == "token ghs_fake_token" for r in github.requests)

    # what changed: ci.yml and deploy.yml (removed) and release.yml (added) directly, and
    # lint.yml through its local composite action; docs.yml is unchanged
    result = json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))
    pr = result["pull_request"]
    assert pr["changed_workflows"] == [
        WF + "ci.yml",
        WF + "deploy.yml",
        WF + "lint.yml",
        WF + "release.yml",
    ]
    assert (pr["head_sha"], pr["base_sha"]) == (HEAD_SHA, BASE_SHA)
    assert result["comment"]["status"] == "created"
    assert [w["path"] for w in result["workflows"]] == sorted(
        p for p in HEAD_TREE if p.startswith(WF)
    )
    assert {w["path"] for w in pr["base"]["workflows"]} == {
        WF + "ci.yml",
        WF + "deploy.yml",
        WF + "lint.yml",
    }

    # the comment: headline, job-level changes, unchanged workflows folded
    assert "**4 of 5 workflows changed**" in body
    assert "Biggest changes:" in body
    assert "| new job |" in body and "removed job (was" in body
    assert "~~lint~~" in body and "~~test (3.11)~~" in body
    assert "(removed workflow)" in body and "(new workflow)" in body
    assert "Unchanged workflows: 1 workflow, 1 job" in body
    lint_row = next(line for line in body.splitlines() if line.startswith("| [lint]"))
    assert lint_row.endswith("| cold |") and "+" in lint_row.split("|")[-3]  # longer composite

    # the job summary is the same report, and the outputs are numbers
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.strip() == body.strip()
    out = _outputs(tmp_path)
    billable = sum(w["billable_s"] for w in result["workflows"]) / 60
    assert float(out["total-billable-minutes"]) == pytest.approx(billable, abs=0.05)
    assert float(out["critical-path-minutes"]) > 0

    # e2e's p90 exceeds its timeout-minutes: 1, but the base branch has no runs: a cold
    # guess raises no "may hit its timeout" annotation; its advice says it cannot tell yet
    # (issue 49)
    assert "may hit its timeout" not in first.output
    e2e = next(j for w in result["workflows"] for j in w["jobs"] if j["name"] == "e2e")
    assert e2e["history_source"] is None
    assert any(a["message"].startswith("Cannot tell yet") for a in e2e["advice"])

    # second push to the PR: same comment edited in place, never a second one
    github.add_commit(REPO, dict(HEAD_TREE, **{WF + "docs.yml": DOCS + "      - run: ls\n"}),
                      sha=HEAD2_SHA)
    github.pulls[(REPO, NUMBER)]["head"]["sha"] = HEAD2_SHA
    github.pull_files[(REPO, NUMBER)] = None  # recompute the PR's files from the commits
    event2 = json.loads(json.dumps(EVENT))
    event2["pull_request"]["head"]["sha"] = HEAD2_SHA
    github.clear_requests()
    second = _invoke(_env(tmp_path, github, event2), monkeypatch)
    assert second.exit_code == 0, second.output

    comments = github.comments(REPO, NUMBER)
    assert len(comments) == 1
    assert comments[0]["body"] != body and "**5 of 5 workflows changed**" in comments[0]["body"]
    patches = github.requests_to(r"/issues/comments/\d+$", method="PATCH")
    assert [r.path for r in patches] == [f"/repos/{REPO}/issues/comments/{comments[0]['id']}"]
    assert github.requests_to(rf"/issues/{NUMBER}/comments$", method="POST") == []

    # a rerun with nothing new leaves the comment alone
    github.clear_requests()
    third = _invoke(_env(tmp_path, github, event2), monkeypatch)
    assert third.exit_code == 0
    assert github.requests_to(r"/comments", method="PATCH") == []
    assert github.requests_to(r"/comments", method="POST") == []
    assert len(github.comments(REPO, NUMBER)) == 1


def test_each_workflows_input_keeps_its_own_comment(tmp_path, github, monkeypatch):
    # two laser-ci steps on one PR (a monorepo's two folders, say) overwrote one comment,
    # which flipped between their reports on every push
    def step(name: str, workflows: str) -> None:
        (tmp_path / name).mkdir(exist_ok=True)
        env = _env(tmp_path / name, github, LASER_CI_WORKFLOWS=workflows)
        assert _invoke(env, monkeypatch).exit_code == 0

    for _push in range(2):
        step("all", ".github/workflows")
        step("docs", ".github/workflows/docs.yml")
    comments = github.comments(REPO, NUMBER)
    assert len(comments) == 2
    everything, docs = (c["body"] for c in comments)
    assert everything.startswith(MARKER + "\n") and "**4 of 5 workflows changed**" in everything
    assert not docs.startswith(MARKER) and docs.startswith("<!-- laser-ci:sticky-comment ")
    assert "ci.yml" not in docs and "docs.yml" in docs
    assert len(github.requests_to(rf"/issues/{NUMBER}/comments$", method="POST")) == 2


def test_pr_without_github_repository_reads_it_from_the_payload(tmp_path, github, monkeypatch):
    # the repository was only read from GITHUB_REPOSITORY: without it the run stopped with
    # "the event payload lacks the repository", though the payload has repository.full_name
    env = _env(tmp_path, github)
    del env["GITHUB_REPOSITORY"]
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    result = _invoke(env, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "::warning" not in result.output
    assert len(github.comments(REPO, NUMBER)) == 1


def test_pr_without_any_repository_names_the_variable(tmp_path, github, monkeypatch):
    event = {k: v for k, v in EVENT.items() if k != "repository"}
    env = _env(tmp_path, github, event)
    del env["GITHUB_REPOSITORY"]
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    result = _invoke(env, monkeypatch)
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("::warning")]
    assert "GITHUB_REPOSITORY is not set" in line and "payload lacks the repository" not in line
    assert github.requests == []
    # the SHAs are what the payload lacks: said so, not the repository
    pr = dict(EVENT["pull_request"], head={"ref": "feature"})
    env = _env(tmp_path, github, dict(EVENT, pull_request=pr))
    result = _invoke(env, monkeypatch)
    (line,) = [x for x in result.output.splitlines() if x.startswith("::warning")]
    assert "the event payload lacks the pull request's head SHA" in line


def test_pr_comment_of_someone_else_is_not_edited(tmp_path, github, monkeypatch):
    human = {"login": "octocat", "id": 583231, "type": "User"}
    github.add_comment(REPO, NUMBER, f"quoting the bot: {MARKER}", user=human)
    assert _invoke(_env(tmp_path, github), monkeypatch).exit_code == 0
    comments = github.comments(REPO, NUMBER)
    assert [c["user"]["login"] for c in comments] == ["octocat", "github-actions[bot]"]
    assert comments[0]["body"] == f"quoting the bot: {MARKER}"


def test_pr_read_only_token_gets_a_notice_and_the_summary(tmp_path, github, monkeypatch):
    fault = github.inject_forbidden(rf"/issues/{NUMBER}/comments$", method="POST", times=None)
    result = _invoke(_env(tmp_path, github, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)

    assert result.exit_code == 0, result.output
    assert fault.hits == 1
    assert github.comments(REPO, NUMBER) == []
    assert "::notice title=laser-ci%3A no PR comment::" in result.output
    assert "Resource not accessible by integration" in result.output
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "**4 of 5 workflows changed**" in summary
    out = _outputs(tmp_path)
    assert set(out) == {"json", "total-billable-minutes", "critical-path-minutes"}
    assert json.loads(Path(out["json"]).read_text())["comment"] == {"status": "forbidden"}


def test_pr_comment_api_down_keeps_the_report(tmp_path, github, monkeypatch):
    # retries run out (urllib3's RetryError, not a GithubException): before, the estimate
    # was lost, summary, outputs and JSON with it
    github.inject_server_error(rf"/issues/{NUMBER}/comments$", status=502, method="GET",
                               times=None)
    result = _invoke(_env(tmp_path, github), monkeypatch)

    assert result.exit_code == 0, result.output
    assert "::warning::laser-ci could not comment on the pull request: RetryError" in result.output
    assert "could not estimate" not in result.output
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "**4 of 5 workflows changed**" in summary
    out = _outputs(tmp_path)
    assert json.loads(Path(out["json"]).read_text())["comment"] == {"status": "failed"}
    failed = _invoke(_env(tmp_path, github, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)
    assert failed.exit_code == 1


def test_pr_comment_is_posted_once_when_its_answer_is_lost(tmp_path, github, monkeypatch):
    # GitHub stores the comment, the gateway answers 502: PyGithub's default retried the
    # POST, and every retry was another sticky comment
    fault = github.inject_server_error(rf"/issues/{NUMBER}/comments$", status=502,
                                       method="POST", times=3, after=True)
    result = _invoke(_env(tmp_path, github, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)

    assert result.exit_code == 0, result.output
    assert fault.hits == 1
    comments = github.comments(REPO, NUMBER)
    assert len(comments) == 1 and comments[0]["body"].startswith(MARKER)
    out = json.loads(Path(_outputs(tmp_path)["json"]).read_text())
    assert out["comment"]["status"] == "created" and out["comment"]["id"] == comments[0]["id"]


def test_pr_rate_limited_comment_is_a_warning_not_a_fork_notice(tmp_path, github,
                                                                 monkeypatch):
    github.inject_secondary_rate_limit(rf"/issues/{NUMBER}/comments$", method="POST",
                                       times=None)
    result = _invoke(_env(tmp_path, github, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)

    assert result.exit_code == 1
    assert "expected for pull requests from forks" not in result.output
    assert "::warning::laser-ci could not comment on the pull request: GitHub API 403: " \
        "You have exceeded a secondary rate limit" in result.output
    assert len(github.requests_to(rf"/issues/{NUMBER}/comments$", method="POST")) == 1


def test_pr_comment_edit_is_retried(tmp_path, github, monkeypatch):
    assert _invoke(_env(tmp_path, github), monkeypatch).exit_code == 0
    github.issue_comments[(REPO, NUMBER)][0]["body"] += "\nan older report"
    fault = github.inject_server_error(r"/issues/comments/\d+$", status=502, method="PATCH")
    result = _invoke(_env(tmp_path, github, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)

    assert result.exit_code == 0, result.output
    assert fault.hits == 1
    assert "an older report" not in github.comments(REPO, NUMBER)[0]["body"]


def test_pr_rate_limit_is_not_waited_out_for_an_hour(tmp_path, github, monkeypatch):
    # PyGithub's default sleeps until X-RateLimit-Reset; the estimate goes on cold instead
    _add_history(github)
    github.inject_rate_limit(r"/actions/workflows/[^/]+/runs", reset_in=3600, times=None)
    start = time.monotonic()
    result = _invoke(_env(tmp_path, github), monkeypatch)

    assert result.exit_code == 0, result.output
    assert time.monotonic() - start < 30
    body = github.comments(REPO, NUMBER)[0]["body"]
    assert "history unavailable (GitHub API rate limit): cold-start predictions" in body


def test_pr_comment_false_only_writes_the_summary(tmp_path, github, monkeypatch):
    result = _invoke(_env(tmp_path, github, LASER_CI_COMMENT="false"), monkeypatch)
    assert result.exit_code == 0
    assert github.requests_to(r"/comments") == []
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").startswith(MARKER)


def test_pr_api_failure_is_a_warning_unless_fail_on_error(tmp_path, github, monkeypatch):
    github.inject(r"/pulls/7/files", 404, {"message": "Not Found"}, times=None)
    ok = _invoke(_env(tmp_path, github), monkeypatch)
    assert ok.exit_code == 0
    assert "::warning::laser-ci could not estimate the workflows: GitHub API 404" in ok.output
    assert "could not estimate" in (tmp_path / "summary.md").read_text(encoding="utf-8")

    failed = _invoke(_env(tmp_path, github, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)
    assert failed.exit_code == 1
    assert "::error::laser-ci could not estimate" in failed.output


def test_pr_unreadable_workflow_fails_only_with_fail_on_error(tmp_path, github, monkeypatch):
    broken = dict(HEAD_TREE, **{WF + "ci.yml": "name: CI\non: push\njobs: [unclosed\n"})
    github.add_commit(REPO, broken, sha=HEAD2_SHA)
    github.pulls[(REPO, NUMBER)]["head"]["sha"] = HEAD2_SHA
    github.pull_files[(REPO, NUMBER)] = None
    event = json.loads(json.dumps(EVENT))
    event["pull_request"]["head"]["sha"] = HEAD2_SHA

    ok = _invoke(_env(tmp_path, github, event), monkeypatch)
    assert ok.exit_code == 0
    assert f"::warning file={WF}ci.yml" in ok.output
    assert "[!WARNING]" in github.comments(REPO, NUMBER)[0]["body"]

    failed = _invoke(_env(tmp_path, github, event, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)
    assert failed.exit_code == 1


@pytest.mark.parametrize("truncated", [False, True], ids=["tree", "contents-listing"])
def test_pr_large_and_linked_workflow_files_are_one_error_each(tmp_path, github, monkeypatch,
                                                               truncated):
    """What the contents API gives for a file over 1 MB (no content) or a link it does not
    follow (no content either) is one error for that file; every other file is estimated."""
    padding = "# " + "x" * 78 + "\n"
    big = DOCS.replace("name: Docs", "name: Big") + padding * (CONTENTS_LIMIT // len(padding) + 100)
    huge = DOCS + padding * (3 * CONTENTS_LIMIT // len(padding))
    tree = dict(HEAD_TREE, **{
        WF + "big.yml": big,                                   # 1.1 MB: read as a git blob
        WF + "huge.yml": huge,                                 # 3 MB: over the 2 MB limit
        WF + "outside.yml": Symlink("../../../etc/passwd"),    # out of the repository
        WF + "absolute.yml": Symlink("/etc/passwd"),           # out of it too
        WF + "folder.yml": Symlink("../actions"),              # to a folder
        WF + "same.yml": Symlink("docs.yml"),                  # to a file: read as it
    })
    github.add_commit(REPO, tree, sha=HEAD2_SHA)
    github.pulls[(REPO, NUMBER)]["head"]["sha"] = HEAD2_SHA
    github.pull_files[(REPO, NUMBER)] = None
    github.truncate_trees = truncated
    event = json.loads(json.dumps(EVENT))
    event["pull_request"]["head"]["sha"] = HEAD2_SHA

    result = _invoke(_env(tmp_path, github, event), monkeypatch)
    assert result.exit_code == 0, result.output
    assert "could not estimate" not in result.output
    data = json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))
    errors = {e["path"]: e["message"] for e in data["errors"]}
    assert set(errors) == {WF + "huge.yml", WF + "outside.yml", WF + "absolute.yml",
                           WF + "folder.yml"}, errors
    assert "larger than 2 MB" in errors[WF + "huge.yml"]
    assert "symbolic link" in errors[WF + "outside.yml"]
    assert "symbolic link" in errors[WF + "folder.yml"]
    assert "symbolic link" in errors[WF + "absolute.yml"]
    names = {wf["path"]: wf["name"] for wf in data["workflows"]}
    assert names[WF + "big.yml"] == "Big"
    assert names[WF + "same.yml"] == "Docs"
    assert WF + "ci.yml" in names
    if not truncated:  # the tree's sizes are enough: the huge file is not fetched
        assert not github.requests_to(r"/contents/.*huge\.yml")
    body = github.comments(REPO, NUMBER)[0]["body"]
    assert "huge.yml" in body and "[!WARNING]" in body


def test_pr_renamed_workflow_is_compared_with_its_old_path(tmp_path, monkeypatch):
    with FakeGitHub() as gh:
        gh.add_commit(REPO, {WF + "old.yml": CI_BASE}, sha=BASE_SHA)
        gh.add_commit(REPO, {WF + "ci.yml": CI_BASE}, sha=HEAD_SHA)
        files = [{"filename": WF + "ci.yml", "previous_filename": WF + "old.yml",
                  "status": "renamed", "additions": 0, "deletions": 0, "changes": 0}]
        gh.add_pull(REPO, NUMBER, head_sha=HEAD_SHA, base_sha=BASE_SHA, files=files)
        gh.add_run(REPO, workflow_path=WF + "old.yml", head_sha=BASE_SHA,
                   created_at="2024-05-01T10:00:00Z", jobs=[_job("build", 1, 90)])
        assert _invoke(_env(tmp_path, gh), monkeypatch).exit_code == 0
        body = gh.comments(REPO, NUMBER)[0]["body"]
    assert "**1 of 1 workflow changed**" in body
    assert "new job" not in body and "removed" not in body
    result = json.loads(Path(_outputs(tmp_path)["json"]).read_text())
    assert result["pull_request"]["renamed"] == {WF + "old.yml": WF + "ci.yml"}
    # the history of the old path carries over to the new one, at the head and the base
    for res in (result, result["pull_request"]["base"]):
        (wf,) = res["workflows"]
        assert {j["name"]: j["history_runs"] for j in wf["jobs"]}["build"] == 1


def test_pr_is_compared_with_where_it_branched(tmp_path, monkeypatch):
    # the base branch gained a job after the PR branched: the PR removes nothing, and its
    # file list (the three-dot diff) does not name the file the base branch changed
    fork_point, tip = "1" * 40, "2" * 40
    security = "  security:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ./audit.sh\n"
    with FakeGitHub() as gh:
        gh.add_commit(REPO, {WF + "ci.yml": CI_BASE, WF + "docs.yml": DOCS}, sha=fork_point)
        gh.add_commit(REPO, {WF + "ci.yml": CI_BASE + security, WF + "docs.yml": DOCS},
                      sha=tip, branch="main", parents=[fork_point])
        gh.add_commit(REPO, {WF + "ci.yml": CI_BASE.replace("python -m build", "make dist"),
                             WF + "docs.yml": DOCS}, sha=HEAD_SHA, parents=[fork_point])
        gh.add_pull(REPO, NUMBER, head_sha=HEAD_SHA, base_sha=tip)
        event = json.loads(json.dumps(EVENT))
        event["pull_request"]["base"]["sha"] = tip
        assert _invoke(_env(tmp_path, gh, event), monkeypatch).exit_code == 0
        body = gh.comments(REPO, NUMBER)[0]["body"]
    assert "security" not in body and "removed" not in body
    assert "**1 of 2 workflows changed**" in body
    result = json.loads(Path(_outputs(tmp_path)["json"]).read_text())
    assert result["pull_request"]["base_sha"] == fork_point
    (base_ci,) = result["pull_request"]["base"]["workflows"]
    assert [j["name"] for j in base_ci["jobs"]] == [
        "lint", "test (3.11)", "test (3.12)", "build"]


def test_pr_with_more_files_than_github_lists(tmp_path, github, monkeypatch):
    # GitHub lists at most 3,000 files of a PR: a workflow it changed past them was shown
    # as unchanged; the event's changed_files count says the list stopped short
    github.pull_files[(REPO, NUMBER)] = [
        {"filename": f"src/gen/file{i}.py", "status": "added", "additions": 1,
         "deletions": 0, "changes": 1} for i in range(40)]
    event = json.loads(json.dumps(EVENT))
    event["pull_request"]["changed_files"] = 4000
    assert _invoke(_env(tmp_path, github, event), monkeypatch).exit_code == 0
    full = json.loads(Path(_outputs(tmp_path)["json"]).read_text())
    (tmp_path / "listed").mkdir()
    as_listed = _invoke(_env(tmp_path / "listed", github), monkeypatch)
    assert as_listed.exit_code == 0
    listed = json.loads(Path(_outputs(tmp_path / "listed")["json"]).read_text())
    assert listed["pull_request"]["changed_workflows"] == []  # the list is taken at its word
    # as from the whole list: ci.yml, deploy.yml (removed), lint.yml (through its local
    # action), release.yml (added)
    assert full["pull_request"]["changed_workflows"] == [
        WF + p for p in ("ci.yml", "deploy.yml", "lint.yml", "release.yml")]


# --- history ------------------------------------------------------------------------------


def _job(name: str, day: int, seconds: int | None, **fields) -> dict:
    """A job of a run on 2024-05-<day> that took ``seconds`` (None: it never started)."""
    if seconds is None:
        return {"name": name, "started_at": None, "completed_at": None, **fields}
    return {"name": name, "started_at": f"2024-05-{day:02d}T10:00:00Z",
            "completed_at": f"2024-05-{day:02d}T10:{seconds // 60:02d}:{seconds % 60:02d}Z",
            **fields}


def _add_history(gh: FakeGitHub) -> None:
    """Three completed runs of ci.yml and two of docs.yml on main, at the base commit, and
    runs that must not count (another branch, still running, a fork's branch named main)."""
    for day, (test_s, build_s) in enumerate([(300, 170), (320, 200), (340, 180)], start=1):
        gh.add_run(REPO, workflow_path=WF + "ci.yml", head_sha=BASE_SHA,
                   created_at=f"2024-05-{day:02d}T10:00:00Z",
                   jobs=[_job("lint", day, 60), _job("test (3.12)", day, test_s),
                         _job("build", day, build_s),
                         _job("test (3.11)", day, None, conclusion="skipped")])
    for day, seconds in ((1, 60), (2, 80)):
        gh.add_run(REPO, workflow_path=WF + "docs.yml", head_sha=BASE_SHA,
                   created_at=f"2024-05-{day:02d}T11:00:00Z",
                   jobs=[_job("build docs", day, seconds)])
    gh.add_run(REPO, workflow_path=WF + "ci.yml", head_sha=HEAD_SHA, head_branch="feature",
               created_at="2024-05-04T10:00:00Z", jobs=[_job("build", 4, 3599)])
    gh.add_run(REPO, workflow_path=WF + "ci.yml", head_sha=BASE_SHA, status="in_progress",
               created_at="2024-05-05T10:00:00Z")
    # a pull request from a fork's main: listed under ?branch=main, but the fork's code
    for day in (6, 7, 8, 9):
        gh.add_run(REPO, workflow_path=WF + "ci.yml", head_sha="f" * 40, event="pull_request",
                   created_at=f"2024-05-{day:02d}T10:00:00Z",
                   head_repository={"full_name": "contributor/app"},
                   jobs=[_job("build", day, 3000)])


def _row(body: str, job: str) -> list[str]:
    line = next(x for x in body.splitlines() if x.startswith(f"| [{job}]"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_pr_history_makes_warm_predictions(tmp_path, github, monkeypatch):
    _add_history(github)
    predictor = LengthPredictor()
    result = _invoke(_env(tmp_path, github), monkeypatch, predictor)
    assert result.exit_code == 0, result.output

    # runs of each workflow on the base branch, completed only, newest first, 20 at most
    listed = github.requests_to(r"/actions/workflows/[^/]+/runs$")
    assert {r.path.rsplit("/", 2)[-2] for r in listed} == {"ci.yml", "docs.yml", "lint.yml",
                                                          "deploy.yml"}  # not release.yml
    assert all(r.query == {"branch": "main", "status": "completed", "per_page": "20", "page": "1"}
               for r in listed)
    assert len(github.requests_to(r"/actions/runs/\d+/jobs$")) == 5
    # the newest run is at the base commit, which the Action read already: no extra reads
    assert len(github.requests_to(r"/git/trees/")) == 2

    body = github.comments(REPO, NUMBER)[0]["body"]
    build, test312, test313 = _row(body, "build"), _row(body, "test (3.12)"), _row(body, "test (3.13)")
    assert build[1] == "3m 00s" and build[-1] == "warm (3 runs)"  # the median of 170/200/180
    assert test312[1] == "5m 20s" and test312[-1] == "warm (3 runs)"
    # no runs of their own (issue 49): 3.13 from its sibling 3.12, e2e from ci.yml's jobs
    assert test313[-1] == "new: from 3 runs of its matrix siblings"  # not warm: not its own
    assert re.fullmatch(r"new: from \d+ runs of its workflow's other jobs", _row(body, "e2e")[-1])
    assert "| warm (2 runs) |" in body  # build docs, in the unchanged workflows
    assert ("History: **3 of 7 jobs warm** (predicted with their earlier runs on `main`), 1 new, "
            "from their matrix siblings' runs on `main`, 3 new, calibrated by the repository's "
            "other runs on `main`, 0 cold") in body
    assert "earlier runs, before CI runs" in body
    # lint.yml and deploy.yml never ran on main
    assert "> no completed runs on `main` for `deploy.yml`, `lint.yml`" in body

    data = json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))
    jobs = {j["name"]: j for w in data["workflows"] for j in w["jobs"]}
    assert {n: j["history_runs"] for n, j in jobs.items()} == {
        "test (3.12)": 3, "test (3.13)": None, "build": 3, "e2e": None, "build docs": 2,
        "lint": None, "publish": None,
    }
    assert {n: j["history_source"] for n, j in jobs.items()} == {
        "test (3.12)": "own", "test (3.13)": "siblings", "build": "own", "e2e": "workflow",
        "build docs": "own", "lint": "repository", "publish": "repository",
    }
    assert jobs["build"]["runtime_s"]["p50"] == 180.0
    base_jobs = {(w["path"], j["name"]): j["history_runs"]
                 for w in data["pull_request"]["base"]["workflows"] for j in w["jobs"]}
    assert base_jobs[(WF + "ci.yml", "lint")] == 3  # the base estimate is warm too
    # always skipped: no runtime of its own, so from its sibling 3.12's (issue 49): not warm
    test311 = next(j for w in data["pull_request"]["base"]["workflows"] for j in w["jobs"]
                   if j["name"] == "test (3.11)")
    assert test311["history_source"] == "siblings" and test311["evidence_runs"] == 3
    assert base_jobs[(WF + "ci.yml", "test (3.11)")] is None
    assert base_jobs[(WF + "lint.yml", "lint")] is None
    assert data["history"]["branch"] == "main" and data["history"]["workflows"] == 2

    # a job its own runs predict is not asked of the model with its history: only its cold
    # text is (the other half of the repository's residual, issue 49)
    builds = [t for t in predictor.texts if "job: build\n" in t and "e2e" not in t]
    assert builds and all("history: none" in t for t in builds)
    assert not any("history-config:" in t for t in predictor.texts)

    # the next run reads the cache: runs are listed again, the jobs of known runs are not
    github.clear_requests()
    again = _invoke(_env(tmp_path, github), monkeypatch)
    assert again.exit_code == 0
    assert len(github.requests_to(r"/actions/workflows/[^/]+/runs$")) == 4
    assert github.requests_to(r"/actions/runs/\d+/jobs$") == []
    assert github.comments(REPO, NUMBER)[0]["body"] == body

    new = github.add_run(REPO, workflow_path=WF + "ci.yml", head_sha=BASE_SHA,
                         created_at="2024-05-06T10:00:00Z", jobs=[_job("build", 6, 600)])
    github.clear_requests()
    assert _invoke(_env(tmp_path, github), monkeypatch).exit_code == 0
    assert [r.path for r in github.requests_to(r"/actions/runs/\d+/jobs$")] == [
        f"/repos/{REPO}/actions/runs/{new['id']}/jobs"
    ]
    assert _row(github.comments(REPO, NUMBER)[0]["body"], "build")[-1] == "warm (4 runs)"


def test_pr_token_without_actions_read_is_cold_with_a_note(tmp_path, github, monkeypatch):
    _add_history(github)
    fault = github.inject_forbidden(r"^/repos/[^/]+/[^/]+/actions/", method="GET", times=None)
    result = _invoke(_env(tmp_path, github, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)

    assert result.exit_code == 0, result.output  # never a failure, even with fail-on-error
    assert fault.hits == 1  # one 403 is enough: no call for the other workflows
    body = github.comments(REPO, NUMBER)[0]["body"]
    note = "> [!NOTE]\n> history unavailable (the token lacks `actions: read`): cold-start predictions"
    assert note in body
    assert "History: all 7 jobs **cold**" in body and "warm (" not in body
    assert "from the workflow files alone" in body
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert note in summary
    data = json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))
    assert all(j["history_runs"] is None for w in data["workflows"] for j in w["jobs"])
    assert data["history"]["notes"] == [
        "history unavailable (the token lacks `actions: read`): cold-start predictions"
    ]


def test_pr_history_runs_zero_disables_history(tmp_path, github, monkeypatch):
    _add_history(github)
    result = _invoke(_env(tmp_path, github, LASER_CI_HISTORY_RUNS="0"), monkeypatch)
    assert result.exit_code == 0, result.output
    assert github.requests_to(r"^/repos/[^/]+/[^/]+/actions/") == []
    body = github.comments(REPO, NUMBER)[0]["body"]
    assert "history disabled (`history-runs: 0`)" in body and "warm (" not in body


def test_pr_history_runs_limits_the_runs_read(tmp_path, github, monkeypatch):
    _add_history(github)
    assert _invoke(_env(tmp_path, github, LASER_CI_HISTORY_RUNS="2"), monkeypatch).exit_code == 0
    assert {r.query["per_page"] for r in github.requests_to(r"/runs$")} == {"2"}
    body = github.comments(REPO, NUMBER)[0]["body"]
    assert _row(body, "build")[-1] == "warm (2 runs)" and _row(body, "build")[1] == "3m 10s"


# --- other events -------------------------------------------------------------------------


def _push_checkout(tmp_path: Path, tree: dict[str, str]) -> tuple[Path, Path]:
    """A workspace checked out with ``tree`` and the push event's file."""
    ws = tmp_path / "workspace"
    for path, text in tree.items():
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(text, encoding="utf-8")
    event_path = tmp_path / "push.json"
    event_path.write_text((FIXTURES / "push_event.json").read_text(), encoding="utf-8")
    return ws, event_path


def test_push_estimates_the_checked_out_workflows(tmp_path, monkeypatch):
    ws, event_path = _push_checkout(tmp_path, HEAD_TREE)
    (tmp_path / "my-model").mkdir()  # what is in it is the (fake) loader's business
    env = {
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": "http://127.0.0.1:9",  # never called: nothing listens there
        "GITHUB_SHA": HEAD_SHA,
        "GITHUB_WORKSPACE": str(ws),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "RUNNER_TEMP": str(tmp_path / "temp"),
        "LASER_CI_MODEL": str(tmp_path / "my-model"),
    }
    predictor = LengthPredictor()
    seen: list = []

    def fake_load(model_dir=None):
        seen.append(model_dir)
        return predictor

    monkeypatch.setattr(laser_ci.predictors.choice, "load_predictor", fake_load)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    result = CliRunner().invoke(action_command, [], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    assert seen == [tmp_path / "my-model"] and predictor.calls == 1
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### ⏱️ laser-ci: predicted CI runtime")
    assert "**4 workflows, 7 jobs:**" in summary and MARKER not in summary
    # every job cold: e2e's p90 past its 1-minute timeout is no alarm (issue 49)
    assert "::notice file=.github/workflows/ci.yml" not in result.output
    out = _outputs(tmp_path)
    data = json.loads(Path(out["json"]).read_text(encoding="utf-8"))
    assert "pull_request" not in data and data["predictor"] == "length-test"
    # no token: no history, said so
    assert data["history"]["notes"] == [
        "history unavailable (no `github-token`): cold-start predictions"
    ]
    assert "History: all 7 jobs **cold**" in summary


def test_push_history_comes_from_the_pushed_branch(tmp_path, github, monkeypatch):
    _add_history(github)
    ws, event_path = _push_checkout(tmp_path, BASE_TREE)
    env = _env(tmp_path, github, GITHUB_EVENT_NAME="push", GITHUB_EVENT_PATH=str(event_path),
               GITHUB_SHA=BASE_SHA)  # the event's ref is refs/heads/main
    monkeypatch.delenv("GITHUB_REF_NAME", raising=False)
    result = _invoke(env, monkeypatch)
    assert result.exit_code == 0, result.output
    assert {r.query["branch"] for r in github.requests_to(r"/runs$")} == {"main"}
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    # build: the median of its 3 successful runs (170/200/180), the band of 3 own runs
    lo, hi = load_offsets()["own/3"]
    band = f"{format_duration(180 * math.exp(lo))} – {format_duration(180 * math.exp(hi))}"
    assert "| [build](" in summary and f"| 3m 00s | {band} | warm (3 runs) |" in summary
    # 4 jobs with runs of their own, test (3.11) from its sibling's, 2 new (issue 49)
    assert ("History: **4 of 7 jobs warm** (predicted with their earlier runs on `main`), 1 new, "
            "from their matrix siblings' runs on `main`, 2 new, calibrated by the repository's "
            "other runs on `main`, 0 cold") in summary


def test_merge_group_history_comes_from_the_queue_base_branch(tmp_path, github, monkeypatch):
    # GITHUB_REF_NAME of a merge queue run is its temporary gh-readonly-queue/... branch,
    # which never has runs: history was read for it, and every job was cold
    _add_history(github)
    ws, _push = _push_checkout(tmp_path, BASE_TREE)
    queue = f"gh-readonly-queue/main/pr-{NUMBER}-{BASE_SHA}"
    event = {"action": "checks_requested",
             "merge_group": {"head_sha": HEAD2_SHA, "head_ref": f"refs/heads/{queue}",
                             "base_sha": BASE_SHA, "base_ref": "refs/heads/main",
                             "head_commit": {"id": HEAD2_SHA, "message": "Merge pull request"}},
             "repository": EVENT["repository"]}
    env = _env(tmp_path, github, event, GITHUB_EVENT_NAME="merge_group", GITHUB_SHA=HEAD2_SHA,
               GITHUB_REF=f"refs/heads/{queue}", GITHUB_REF_NAME=queue)
    result = _invoke(env, monkeypatch)
    assert result.exit_code == 0, result.output
    assert {r.query["branch"] for r in github.requests_to(r"/runs$")} == {"main"}
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    # 4 jobs with runs of their own, test (3.11) from its sibling's, 2 new (issue 49)
    assert ("History: **4 of 7 jobs warm** (predicted with their earlier runs on `main`), 1 new, "
            "from their matrix siblings' runs on `main`, 2 new, calibrated by the repository's "
            "other runs on `main`, 0 cold") in summary
    data = json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))
    assert data["history"]["branch"] == "main"
    assert Settings.from_env({"GITHUB_EVENT_NAME": "merge_group",
                              "GITHUB_REF_NAME": queue}).ref_name == queue  # no payload: as is


def test_push_without_checkout_is_a_warning(tmp_path, monkeypatch):
    env = {
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "GITHUB_WORKSPACE": str(tmp_path / "empty"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
    }
    monkeypatch.setattr(laser_ci.predictors.choice, "load_predictor", lambda m=None: LengthPredictor())
    code = run(Settings.from_env(env))
    assert code == 0
    assert "is the repository checked out?" in (tmp_path / "summary.md").read_text()


# --- settings -----------------------------------------------------------------------------


@pytest.mark.parametrize(("given", "read"), [
    (".", ".github/workflows"), ("./", ".github/workflows"), ("", ".github/workflows"),
    ("./.github/workflows/", ".github/workflows"), (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
])
def test_the_workflows_input_at_the_repository_root_means_its_workflows(given, read):
    assert Settings.from_env({"LASER_CI_WORKFLOWS": given}).workflows == read


def test_settings_are_read_once_from_the_environment(tmp_path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps(EVENT))
    s = Settings.from_env(
        {
            "GITHUB_EVENT_NAME": "pull_request_target",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
            "RUNNER_TEMP": str(tmp_path),
            "LASER_CI_GITHUB_TOKEN": "ghs_secret",
            "LASER_CI_WORKFLOWS": ".github/workflows/",
            "LASER_CI_COMMENT": "False",
            "LASER_CI_FAIL_ON_ERROR": " true ",
        }
    )
    assert s.pull_request is not None and s.pull_request["number"] == NUMBER
    assert s.api_url == "https://ghe.example.com/api/v3"
    assert (s.workflows, s.comment, s.fail_on_error, s.model) == (
        ".github/workflows", False, True, None
    )
    assert s.json_path == tmp_path / "laser-ci" / "laser-ci.json"
    assert "ghs_secret" not in repr(s)
    assert s.visibility == "public"  # from the event's repository.private
    assert s.history_runs == 20 and s.history_cache == tmp_path / "laser-ci-history"
    assert Settings.from_env({"GITHUB_TOKEN": "t"}).token == "t"  # fallback
    assert Settings.from_env({"LASER_CI_HISTORY_RUNS": " 5 "}).history_runs == 5
    assert Settings.from_env({"GITHUB_REF_NAME": "release/1.x"}).ref_name == "release/1.x"
    assert Settings.from_env({"GITHUB_EVENT_NAME": "pull_request"}).pull_request is None


def test_invalid_input_fails(tmp_path, monkeypatch):
    with pytest.raises(SettingsError, match="comment must be true or false"):
        Settings.from_env({"LASER_CI_COMMENT": "maybe"})
    for bad in ("-1", "lots", "2.5"):
        with pytest.raises(SettingsError, match="history-runs must be a whole number"):
            Settings.from_env({"LASER_CI_HISTORY_RUNS": bad})
    monkeypatch.setenv("LASER_CI_FAIL_ON_ERROR", "sometimes")
    result = CliRunner().invoke(action_command, [])
    assert result.exit_code == 1
    assert "::error::laser-ci: input fail-on-error must be true or false" in result.output


def test_workflow_command_escaping():
    line = command("notice", "50% done\nnext", file="a,b.yml", line=3, title="x: y")
    assert line == "::notice file=a%2Cb.yml,line=3,title=x%3A y::50%25 done%0Anext"


# --- action.yml and this repository's workflows -------------------------------------------


def _yaml(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


def _pinned(uses: str) -> bool:
    return uses.startswith("./") or re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses) is not None


def test_action_yml_is_a_safe_composite_action():
    action = _yaml(ROOT / "action.yml")
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {
        "workflows", "github-token", "comment", "fail-on-error", "model", "python-version",
        "history-runs", "runner-prices",
    }
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert action["inputs"]["workflows"]["default"] == ".github/workflows"
    assert (action["inputs"]["comment"]["default"], action["inputs"]["fail-on-error"]["default"]) \
        == ("true", "false")
    assert action["inputs"]["history-runs"]["default"] == "20"
    assert set(action["outputs"]) == {"json", "total-billable-minutes", "critical-path-minutes"}
    for name, out in action["outputs"].items():
        assert out["value"] == "${{ steps.run.outputs." + name + " }}"
    env_names = set()
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert step.get("shell") == "bash"
            assert "${{" not in step["run"], "inputs reach run: only through env:"
            env_names |= set(step.get("env", {}))
        else:
            assert _pinned(step["uses"]), step["uses"]
    assert {"LASER_CI_WORKFLOWS", "LASER_CI_GITHUB_TOKEN", "LASER_CI_COMMENT",
            "LASER_CI_FAIL_ON_ERROR", "LASER_CI_MODEL", "LASER_CI_HISTORY_RUNS",
            "LASER_CI_RUNNER_PRICES"} <= env_names
    cache = next(s for s in action["runs"]["steps"] if s.get("id") == "cache")
    assert cache["with"]["key"].endswith("-${{ steps.deps.outputs.hash }}")
    # the run history cache: where Settings.history_cache points, a new entry per run
    steps = action["runs"]["steps"]
    history = next(s for s in steps if s.get("id") == "history-cache")
    assert steps.index(history) < steps.index(next(s for s in steps if s.get("id") == "run"))
    assert history["uses"].startswith("actions/cache@") and _pinned(history["uses"])
    step = "${{ steps.history-key.outputs.step }}"
    assert history["with"]["path"] == "${{ runner.temp }}/laser-ci-history-" + step
    prefix = "laser-ci-history-${{ github.repository }}-" + step + "-"
    job = prefix + "${{ github.job }}-${{ strategy.job-index }}-"
    assert history["with"]["key"] == job + "${{ github.run_id }}-${{ github.run_attempt }}"
    assert history["with"]["restore-keys"].splitlines() == [job, prefix]
    assert Settings.from_env({"RUNNER_TEMP": "/rt"}).history_cache == Path("/rt/laser-ci-history")


def test_each_laser_ci_step_and_job_has_its_own_history_cache(tmp_path):
    # the key was laser-ci-history-<repo>-<run id> and the folder $RUNNER_TEMP/laser-ci-history
    # for every step: with two laser-ci steps in one job (two `workflows` inputs), the second
    # step's restore overwrote the first one's fresh files, and two steps or two jobs of one
    # run (a matrix) saved the same key, so the second save failed ("Unable to reserve
    # cache") on every run
    steps = _yaml(ROOT / "action.yml")["runs"]["steps"]
    by_id = {s.get("id"): s for s in steps}
    key_step, cache, run_step = by_id["history-key"], by_id["history-cache"], by_id["run"]
    assert steps.index(key_step) < steps.index(cache) < steps.index(run_step)
    assert key_step["if"] == cache["if"] == "inputs.history-runs != '0'"

    def step_output(action: str, workflows: str) -> dict[str, str]:
        """What the key step writes for a step whose GITHUB_ACTION is ``action``."""
        out = tmp_path / "output.txt"
        out.write_text("", encoding="utf-8")
        env = {"PATH": os.environ["PATH"], "GITHUB_ACTION": action, "GITHUB_OUTPUT": str(out)}
        env.update({k: {"${{ steps.python.outputs.python-path }}": sys.executable,
                        "${{ inputs.workflows }}": workflows}[v]
                    for k, v in key_step["env"].items()})
        subprocess.run(["bash", "-c", key_step["run"]], env=env, check=True)
        return dict(line.split("=", 1) for line in out.read_text(encoding="utf-8").splitlines())

    def use(action: str, workflows: str = ".github/workflows", *, job: str = "predict",
            index: str = "0", run_id: str = "100", attempt: str = "1") -> dict[str, object]:
        """The cache step's path, key and restore-keys, and the folder laser-ci reads, for
        one use of the Action, as the runner evaluates them."""
        values = {"github.repository": REPO, "github.job": job, "strategy.job-index": index,
                  "github.run_id": run_id, "github.run_attempt": attempt, "runner.temp": "/rt"}
        values.update({f"steps.history-key.outputs.{k}": v
                       for k, v in step_output(action, workflows).items()})

        def ev(text: str) -> str:
            return re.sub(r"\$\{\{ *([\w.-]+) *\}\}", lambda m: values[m.group(1)], text)

        return {"path": ev(cache["with"]["path"]), "key": ev(cache["with"]["key"]),
                "restore": ev(cache["with"]["restore-keys"]).splitlines(),
                "read": Settings.from_env({
                    "RUNNER_TEMP": "/rt",
                    "LASER_CI_HISTORY_CACHE": ev(run_step["env"]["LASER_CI_HISTORY_CACHE"]),
                }).history_cache}

    first = use("__org_laser-ci.history-key")
    assert first["read"] == Path(first["path"]) and first["path"].startswith("/rt/")
    # a second step in the job, another `workflows` input, a matrix leg, another job
    for other in (use("__org_laser-ci_2.history-key", ".github/workflows/ci.yml"),
                  use("__org_laser-ci_2.history-key"),
                  use("__org_laser-ci.history-key", index="1"),
                  use("__org_laser-ci.history-key", job="estimate")):
        assert other["key"] != first["key"]
    second = use("__org_laser-ci_2.history-key", ".github/workflows/ci.yml")
    assert second["path"] != first["path"] and second["read"] == Path(second["path"])
    # a re-run (same run id, next attempt) saves what it fetched under a key of its own
    rerun = use("__org_laser-ci.history-key", attempt="2")
    assert rerun["key"] != first["key"] and all(first["key"].startswith(k)
                                                 for k in rerun["restore"])
    # the next run restores the newest entry of the same step
    later = use("__org_laser-ci.history-key", run_id="101")
    assert later["path"] == first["path"] and later["key"] != first["key"]
    assert later["restore"] and all(first["key"].startswith(k) for k in later["restore"])
    assert not any(second["key"].startswith(k) for k in later["restore"])
    assert all(k.startswith(f"laser-ci-history-{REPO}-") for k in later["restore"])


def test_the_environment_cache_is_keyed_on_the_dependencies(tmp_path):
    # a fixed key kept a cached venv without a dependency added since: a hit installs
    # laser-ci alone (--no-deps)
    step = next(s for s in _yaml(ROOT / "action.yml")["runs"]["steps"] if s.get("id") == "deps")
    assert set(step["env"]) == {"LASER_CI_PYTHON"}

    def key(pyproject: str) -> str:
        (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        out = tmp_path / "output.txt"
        out.write_text("", encoding="utf-8")
        env = {"PATH": os.environ["PATH"], "LASER_CI_PYTHON": sys.executable,
               "GITHUB_ACTION_PATH": str(tmp_path), "GITHUB_OUTPUT": str(out)}
        subprocess.run(["bash", "-c", step["run"]], env=env, check=True)
        (line,) = out.read_text(encoding="utf-8").splitlines()
        assert re.fullmatch(r"hash=[0-9a-f]{16}", line), line
        return line

    shipped = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert key(shipped) == key(shipped)
    assert key(shipped) != key(shipped.replace('"numpy', '"scipy", "numpy', 1))


def test_repository_workflows_are_pinned_and_least_privilege():
    ci = _yaml(ROOT / ".github/workflows/ci.yml")
    dog = _yaml(ROOT / ".github/workflows/laser-ci.yml")
    assert set(ci["on"]) == {"push", "pull_request"}
    assert any("bash .ci/run" in s.get("run", "") for s in ci["jobs"]["test"]["steps"])
    assert set(dog["on"]) == {"pull_request"}
    assert ci["permissions"] == {} and dog["permissions"] == {}
    (job,) = dog["jobs"].values()
    assert job["permissions"] == {"contents": "read", "pull-requests": "write", "actions": "read"}
    assert any(s.get("uses") == "./" for s in job["steps"])
    for wf in (ci, dog):
        for j in wf["jobs"].values():
            for step in j["steps"]:
                if "uses" in step:
                    assert _pinned(step["uses"]), step["uses"]
                assert "${{" not in step.get("run", "")


# --- a large repository: shards of a matrix computed at run time --------------------------


def test_pr_history_expands_run_time_shards_with_warm_predictions(tmp_path, monkeypatch):
    """The shards of a matrix a script computes at run time are predicted one by one, each
    from its own runs on the base branch, grouped in the comment; workflows that only run
    when called are shown under their callers."""
    import runtime_history as rh

    tree = dict(rh.fixture_files(), **{"README.md": "# monorepo\n"})
    ci = WF + "ci.yml"
    head_tree = dict(tree, **{ci: tree[ci].replace("ruff check .", "ruff check . --fix")})
    runs = rh.make_runs(days=1.5, runs_per_day=2)  # three runs, no suite split yet
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_commit(REPO, tree, sha=BASE_SHA, branch="main")
        gh.add_commit(REPO, head_tree, sha=HEAD_SHA)
        gh.add_pull(REPO, NUMBER, head_sha=HEAD_SHA, base_sha=BASE_SHA)
        for row in runs:
            gh.add_run(REPO, workflow_path=ci, head_sha=BASE_SHA, created_at=row["commit_date"],
                       jobs=[{"name": j["name"], "started_at": j["started_at"],
                              "completed_at": j["completed_at"], "conclusion": j["conclusion"],
                              "labels": j["runner_labels"]} for j in row["jobs"]])
        predictor = LengthPredictor()
        result = _invoke(_env(tmp_path, gh), monkeypatch, predictor)
        assert result.exit_code == 0, result.output
        body = gh.comments(REPO, NUMBER)[0]["body"]
        # no history asked for the workflows that only run when called
        assert {r.path.rsplit("/", 2)[-2] for r in gh.requests_to(r"/runs$")} == {"ci.yml"}

    data = json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))
    jobs = {j["name"]: j for w in data["workflows"] if w["path"] == ci for j in w["jobs"]}
    shards = [j for n, j in jobs.items() if n.startswith("Unit Test / ")]
    assert {j["name"] for j in shards} == {n for n in rh.latest_names(runs)
                                           if n.startswith("Unit Test / ")}
    assert len(shards) == 47 and all(j["expanded"] and j["history_runs"] == 3 for j in shards)
    assert jobs["Unit Test / pkg 7/12 on windows-latest/current"]["runner"]["sku"] == "windows"
    # the warm prediction is the shard's own median (the stand-in predictor reads it)
    times = sorted(j["run_time_s"] for r in runs for j in r["jobs"]
                   if j["name"] == "Unit Test / cli 2/3 on ubuntu-latest/current")
    assert jobs["Unit Test / cli 2/3 on ubuntu-latest/current"]["runtime_s"]["p50"] == \
        pytest.approx(times[1], abs=1)

    # the comment: one group row for the shards, warm, with the shards folded out below
    group = next(line for line in body.splitlines()
                 if line.startswith("| **Unit Test / … … on …/…** · 47 instances"))
    assert group.endswith("| warm (47) |") and "Σ " in group and "slowest " in group
    assert "<summary>Unit Test / … … on …/…: 47 instances</summary>" in body
    row = next(line for line in body.splitlines()
               if line.startswith("| [Unit Test / cli 2/3 on ubuntu-latest/current]("))
    assert row.endswith("| warm (3 runs) |")
    assert f"/blob/{HEAD_SHA}/{WF}_unit.yml#L" in row  # the file and line that define it
    # the called workflow is shown under its caller, not as a workflow of its own
    assert "${{" not in body and "<code>.github/workflows/_unit.yml</code>" not in body
    assert len(body) <= 65_536
    assert "History: **60 of 60 jobs warm**" in body and "**1 of 1 workflow changed**" in body
