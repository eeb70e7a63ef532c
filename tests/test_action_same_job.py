"""The Action, on a pull request that adds a workflow calling a reusable workflow the
repository already runs from ci.yml: the new caller's job is warm from the runs of the
same job called from ci.yml on the base branch (laser_ci.workflows.same_job)."""

from __future__ import annotations

import pytest
from fakegithub import FakeGitHub
from test_action import BASE_SHA, HEAD_SHA, NUMBER, REPO, WF, _env, _invoke, _job, _row

BUILD = """name: Build
on: [workflow_call, workflow_dispatch]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: make build
"""
CI = """name: CI
on: [push, pull_request]
jobs:
  call:
    uses: ./.github/workflows/build.yml
"""
LINT = "on: pull_request\njobs:\n  lint: {runs-on: ubuntu-latest, steps: [{run: make lint}]}\n"
NIGHTLY = """name: Nightly
on:
  schedule:
    - cron: "0 3 * * *"
  pull_request:
jobs:
  nightly:
    uses: ./.github/workflows/build.yml
"""


@pytest.fixture
def github():
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_commit(REPO, {WF + "build.yml": BUILD, WF + "ci.yml": CI}, sha=BASE_SHA,
                      branch="main")
        gh.add_commit(REPO, {WF + "build.yml": BUILD, WF + "ci.yml": CI,
                             WF + "nightly.yml": NIGHTLY}, sha=HEAD_SHA)
        gh.add_pull(REPO, NUMBER, head_sha=HEAD_SHA, base_sha=BASE_SHA)
        for day in (1, 2, 3, 4):
            gh.add_run(REPO, workflow_path=WF + "ci.yml", head_sha=BASE_SHA,
                       created_at=f"2024-05-{day:02d}T10:00:00Z",
                       jobs=[_job("call / build", day, 600 + 10 * day)])
        yield gh


def test_a_new_caller_is_warm_from_the_runs_of_the_job_it_calls(tmp_path, github,
                                                                 monkeypatch) -> None:
    result = _invoke(_env(tmp_path, github), monkeypatch)
    assert result.exit_code == 0, result.output
    body = github.comments(REPO, NUMBER)[0]["body"]
    new = _row(body, "nightly / build")
    assert new[-1] == "warm (4 runs, as called from `.github/workflows/ci.yml`)"
    # the unchanged workflows' table: the caller's own runs, and the file run on its own
    called, alone = (next(x for x in body.splitlines() if f"| [{job}](" in x)
                     for job in ("call / build", "build"))
    assert called.endswith("| 10m 30s | 7m 49s – 15m 04s | warm (4 runs) |")
    assert alone.endswith("| warm (4 runs, as called from `.github/workflows/ci.yml`) |")
    assert new[1] == "10m 30s"  # the same runs' median
    assert ("History: **3 of 3 jobs warm** (predicted with their earlier runs on `main`; 2 of "
            "them ran under another name, the same job run on its own or called), 0 cold") in body
    # build.yml has no runs of its own on main, but its job is not a cold start
    assert "no completed runs" not in body


def test_the_no_runs_note_keeps_the_workflows_that_are_cold(tmp_path, github,
                                                          monkeypatch) -> None:
    github.add_commit(REPO, {WF + "build.yml": BUILD, WF + "ci.yml": CI, WF + "nightly.yml": NIGHTLY,
                             WF + "lint.yml": LINT}, sha=HEAD_SHA)
    github.add_commit(REPO, {WF + "build.yml": BUILD, WF + "ci.yml": CI, WF + "lint.yml": LINT},
                      sha=BASE_SHA, branch="main")
    result = _invoke(_env(tmp_path, github), monkeypatch)
    assert result.exit_code == 0, result.output
    body = github.comments(REPO, NUMBER)[0]["body"]
    assert "> no completed runs on `main` for `lint.yml`: cold-start predictions for their jobs" in body
    assert "`build.yml`" not in body.split("no completed runs", 1)[1].split("\n", 1)[0]
