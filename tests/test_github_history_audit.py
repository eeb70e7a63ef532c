"""laser_ci.github.history against what real GitHub returns (an audit's findings), with the
fake GitHub: deleted forks, cache entries that cannot be read, and what stays correct."""

from __future__ import annotations

import json

import pytest
from fakegithub import FakeGitHub
from github import Auth, Github

from laser_ci.github import history as github_history
from laser_ci.github.history import fetch_history

REPO = "octo/app"
CI = ".github/workflows/ci.yml"
CI_YML = """\
name: CI
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: pytest
"""


def _job(name: str, day: int, seconds: int | None, **fields) -> dict:
    if seconds is None:
        return {"name": name, "started_at": None, "completed_at": None, **fields}
    return {"name": name, "started_at": f"2024-05-{day:02d}T10:00:00Z",
            "completed_at": f"2024-05-{day:02d}T10:{seconds // 60:02d}:{seconds % 60:02d}Z",
            **fields}


@pytest.fixture
def gh():
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        fake.sha = fake.add_commit(REPO, {CI: CI_YML}, branch="main")
        yield fake


def _repo(fake: FakeGitHub):
    g = Github(base_url=fake.url, auth=Auth.Token("x"), retry=None, lazy=True,
               seconds_between_requests=None, seconds_between_writes=None)
    return g.get_repo(REPO)


def _run(fake: FakeGitHub, day: int, jobs: list[dict], **fields) -> dict:
    fields.setdefault("head_sha", fake.sha)
    return fake.add_run(REPO, workflow_path=CI, created_at=f"2024-05-{day:02d}T10:00:00Z",
                        jobs=jobs, **fields)


@pytest.mark.parametrize("seconds", [None, "slow", [1, 2]])
def test_a_cache_entry_that_cannot_be_read_is_fetched_again(gh, tmp_path, seconds):
    # valid JSON of this version, repository and workflow, but a job's time is no number
    # (a hand-edited or damaged file): that run is read from the API again, the file rewritten
    run = _run(gh, 1, [_job("test", 1, 100)])
    cache = tmp_path / github_history._cache_name(REPO, CI)
    cache.write_text(json.dumps({
        "version": github_history.CACHE_VERSION, "repository": REPO, "workflow": CI,
        "runs": {str(run["id"]): {"attempt": 1, "created_at": run["created_at"],
                                  "head_sha": gh.sha, "jobs": {"test": seconds}}}}))
    index, notes = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert notes == []
    assert index.for_job(CI, "test").runtimes == (100.0,)
    assert json.loads(cache.read_text())["runs"][str(run["id"])]["jobs"] == {"test": 100.0}


def test_a_run_of_a_deleted_fork_is_not_the_branchs(gh, tmp_path):
    # a pull request from a fork's branch named main is listed under main too; once the
    # contributor deletes the fork, GitHub answers "head_repository": null for its runs
    _run(gh, 1, [_job("test", 1, 100)])
    _run(gh, 2, [_job("test", 2, 900)], event="pull_request", head_sha="f" * 40,
         head_repository=None)
    _run(gh, 3, [_job("test", 3, 800)], event="pull_request", head_sha="e" * 40,
         head_repository={"full_name": "someone/app"})
    index, notes = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert notes == []
    assert index.for_job(CI, "test").runtimes == (100.0,)
    assert index.for_workflow(CI).runtimes == (100.0,)
