"""laser_ci.github.history against what real GitHub returns (an audit's findings), with the
fake GitHub: deleted forks, cache entries that cannot be read, and what stays correct."""

from __future__ import annotations

import json

import pytest
from fakegithub import FakeGitHub
from github import Auth, Github
from test_github_history import _job

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


def test_a_rerun_counts_its_final_attempt_with_the_jobs_carried_over(gh, tmp_path):
    # "re-run failed jobs": filter=latest lists the re-run jobs of attempt 2 and the jobs
    # that passed in attempt 1 (carried over); attempt 1's failed execution does not count
    gh.carry_over_jobs = True
    run = _run(gh, 1, [], run_attempt=2, conclusion="success")
    gh.add_job(REPO, run["id"], run_attempt=1, **_job("test", 1, 100))
    gh.add_job(REPO, run["id"], run_attempt=1, **_job("lint", 1, 10, conclusion="failure"))
    gh.add_job(REPO, run["id"], run_attempt=2, **_job("lint", 1, 12))
    index, notes = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert notes == []
    assert index.for_job(CI, "test").runtimes == (100.0,)
    assert index.for_job(CI, "lint").runtimes == (12.0,)
    assert index.for_job(CI, "lint").conclusions == ("success",)
    assert index.for_workflow(CI).runtimes == (112.0,)
    assert {r.query["filter"] for r in gh.requests_to(r"/jobs$")} == {"latest"}


def test_durations_are_the_time_on_a_runner_not_in_the_queue(gh, tmp_path):
    # created_at is when the job was queued; started_at when a runner picked it up
    _run(gh, 1, [dict(_job("test", 1, 120), created_at="2024-05-01T09:00:00Z"),
                 # GitHub can stamp a job that never ran with completed_at before started_at
                 {"name": "gone", "started_at": "2024-05-01T10:05:00Z",
                  "completed_at": "2024-05-01T10:00:00Z", "conclusion": "failure"},
                 {"name": "never", "started_at": None, "completed_at": None,
                  "conclusion": "failure"}])
    index, _ = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert index.for_job(CI, "test").runtimes == (120.0,)
    assert index.for_job(CI, "gone") is None and index.for_job(CI, "never") is None
    # listed (a run-time matrix's instances come from here), untimed
    assert [(j.name, j.seconds) for j in index.runs_of(CI)[0]] == \
        [("test", 120.0), ("gone", None), ("never", None)]


def test_jobs_of_a_called_workflow_are_kept_under_the_callers_path_by_display_name(gh, tmp_path):
    _run(gh, 1, [_job("call (3.11) / Build 3.11", 1, 70), _job("Docs / lint (a)", 1, 30)])
    index, _ = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert index.for_job(CI, "call (3.11) / Build 3.11").runtimes == (70.0,)
    assert index.for_job(CI, "Docs / lint (a)").runtimes == (30.0,)


def test_two_workflows_of_one_name_keep_their_own_runs_and_caches(gh, tmp_path):
    other = ".github/workflows/ci2.yml"
    gh.add_workflow(REPO, CI, name="CI")
    gh.add_workflow(REPO, other, name="CI")
    _run(gh, 1, [_job("test", 1, 100)])
    gh.add_run(REPO, workflow_path=other, head_sha=gh.sha, created_at="2024-05-02T10:00:00Z",
               jobs=[_job("test", 2, 300)])
    for _ in range(2):  # the second from the caches
        index, _ = fetch_history(_repo(gh), [CI, other], branch="main", cache_dir=tmp_path)
        assert index.for_job(CI, "test").runtimes == (100.0,)
        assert index.for_job(other, "test").runtimes == (300.0,)
    assert len(list(tmp_path.glob("*.json"))) == 2


def test_a_cache_file_of_another_repository_or_workflow_is_not_read(gh, tmp_path):
    run = _run(gh, 1, [_job("test", 1, 100)])
    cache = tmp_path / github_history._cache_name(REPO, CI)
    for repository, workflow in (("fork/app", CI), (REPO, ".github/workflows/docs.yml")):
        cache.write_text(json.dumps({
            "version": github_history.CACHE_VERSION, "repository": repository,
            "workflow": workflow,
            "runs": {str(run["id"]): {"attempt": 1, "jobs": {"test": 5.0}}}}))
        index, _ = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
        assert index.for_job(CI, "test").runtimes == (100.0,)
        data = json.loads(cache.read_text())
        assert (data["repository"], data["workflow"]) == (REPO, CI)


def test_a_run_listed_on_two_pages_counts_once(gh, tmp_path):
    # the list is newest first by created_at: a run that completes while the pages are read
    # (created before the newest ones) moves the rest one place on, so page 2 starts with
    # page 1's last run again; a page past the first is read when forks' runs fill it
    one = _run(gh, 1, [_job("test", 1, 100)])
    two = _run(gh, 2, [_job("test", 2, 110)])
    _run(gh, 4, [_job("test", 4, 900)], event="pull_request", head_sha="f" * 40,
         head_repository={"full_name": "someone/app"})
    gh.inject(r"/ci\.yml/runs\?.*&page=2", 200, {"total_count": 4, "workflow_runs": [two, one]})
    index, notes = fetch_history(_repo(gh), [CI], branch="main", max_runs=2, cache_dir=tmp_path)
    assert notes == []
    assert index.for_job(CI, "test").runtimes == (100.0, 110.0)
    assert len(index.runs_of(CI)) == 2
