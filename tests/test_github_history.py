"""Past runs from the GitHub API (laser_ci.github.history) against the local fake GitHub."""

from __future__ import annotations

import json

import pytest
from fakegithub import FakeGitHub
from github import Auth, Github

from laser_ci.github import history as github_history
from laser_ci.github.history import NO_PERMISSION, default_cache_dir, fetch_history
from laser_ci.github.refs import RefFiles
from laser_ci.text.serialize import serialize_job
from laser_ci.workflows.parse import read_workflows

REPO = "octo/app"
CI = ".github/workflows/ci.yml"
DOCS = ".github/workflows/docs.yml"
CI_OLD = """\
name: CI
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: pytest
  build:
    runs-on: ubuntu-latest
    steps:
      - run: python -m build
"""
CI_NEW = CI_OLD.replace("- run: pytest", "- run: pytest -n 4")
DOCS_YML = """\
name: Docs
on: push
jobs:
  docs:
    runs-on: ubuntu-latest
    steps:
      - run: mkdocs build
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
        old = fake.add_commit(REPO, {CI: CI_OLD, DOCS: DOCS_YML, "README.md": "# app\n"})
        new = fake.add_commit(REPO, {CI: CI_NEW, DOCS: DOCS_YML, "README.md": "# app\n"},
                              branch="main")
        fake.shas = (old, new)
        # four runs on main (the newest at the new commit), oldest first by day
        for day, (test_s, build_s) in enumerate([(100, 50), (110, 60), (120, 70), (130, 80)], 1):
            fake.add_run(REPO, workflow_path=CI, head_sha=new if day == 4 else old,
                         created_at=f"2024-05-{day:02d}T10:00:00Z",
                         jobs=[_job("test", day, test_s), _job("build", day, build_s),
                               _job("lint", day, None, conclusion="skipped"),
                               _job("flaky", day, 30, conclusion="cancelled")])
        # runs that do not count: another branch, still running
        fake.add_run(REPO, workflow_path=CI, head_sha=new, head_branch="feature",
                     created_at="2024-05-09T10:00:00Z", jobs=[_job("test", 9, 999)])
        fake.add_run(REPO, workflow_path=CI, head_sha=new, status="in_progress",
                     created_at="2024-05-10T10:00:00Z")
        yield fake


def _repo(fake: FakeGitHub):
    g = Github(base_url=fake.url, auth=Auth.Token("x"), retry=None, lazy=True,
               seconds_between_requests=None, seconds_between_writes=None)
    return g.get_repo(REPO)


def _jobs_requests(fake: FakeGitHub) -> list:
    return fake.requests_to(r"/actions/runs/\d+/jobs$")


def test_runtimes_oldest_first_from_completed_runs_on_the_branch(gh, tmp_path):
    index, notes = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert notes == []
    assert index.for_job(CI, "test").runtimes == (100.0, 110.0, 120.0, 130.0)
    assert index.for_job(CI, "build").runtimes == (50.0, 60.0, 70.0, 80.0)
    # skipped, cancelled and never-started jobs do not count
    assert index.for_job(CI, "lint") is None and index.for_job(CI, "flaky") is None
    assert index.for_workflow(CI).runtimes == (150.0, 170.0, 190.0, 210.0)
    (listed,) = gh.requests_to(r"/actions/workflows/ci\.yml/runs$")
    assert listed.query == {"branch": "main", "status": "completed", "per_page": "20", "page": "1"}
    assert all(r.query.get("filter") == "latest" for r in _jobs_requests(gh))


def test_max_runs_keeps_the_newest(gh, tmp_path):
    index, _ = fetch_history(_repo(gh), [CI], branch="main", max_runs=2, cache_dir=tmp_path)
    assert index.for_job(CI, "test").runtimes == (120.0, 130.0)
    assert gh.requests_to(r"/runs$")[0].query["per_page"] == "2"
    assert len(_jobs_requests(gh)) == 2


def test_previous_text_is_the_job_as_the_newest_run_ran_it(gh, tmp_path):
    index, _ = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    src = RefFiles(_repo(gh), gh.shas[1])
    src.load_tree()
    src.with_deps(CI)
    (wf,), _ = read_workflows(src.files, [CI])
    expected = {j.name: serialize_job(j, wf, src.profile()) for j in wf.jobs}
    past = index.for_job(CI, "test")
    assert past.previous_text == expected["test"] and "pytest -n 4" in past.previous_text
    # the same configuration: unchanged; the older one: a diff
    assert past.history_for(expected["test"]).diff == ()
    old = expected["test"].replace("pytest -n 4", "pytest")
    assert past.history_for(old).diff == ("+ pytest", "- pytest -n 4")


def test_sources_already_read_are_reused(gh, tmp_path):
    src = RefFiles(_repo(gh), gh.shas[1])
    src.load_tree()
    gh.clear_requests()
    index, _ = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path,
                             sources={gh.shas[1]: src})
    assert index.for_job(CI, "test").previous_text is not None
    assert gh.requests_to(r"/git/trees/") == []


def test_missing_history_is_a_note(gh, tmp_path):
    gh.add_workflow(REPO, ".github/workflows/new.yml")  # exists, never ran on main
    index, notes = fetch_history(_repo(gh), [".github/workflows/gone.yml", CI,
                                             ".github/workflows/new.yml"],
                                 branch="main", cache_dir=tmp_path)
    assert notes == ["no completed runs on `main` for `gone.yml`, `new.yml`: cold-start "
                     "predictions for their jobs"]
    assert {p for p, _ in index.jobs} == {CI}


def test_a_hostile_workflow_name_stays_inside_its_code_span(gh, tmp_path):
    # a PR can add a workflow file with any name; the note is Markdown in the comment
    _, notes = fetch_history(_repo(gh), [".github/workflows/a` @you\n> [x](y).yml"],
                             branch="main", cache_dir=tmp_path)
    assert notes == ["no completed runs on `main` for ``a` @you > [x](y).yml``: cold-start "
                     "predictions for their jobs"]


def test_no_actions_read_is_a_note_after_one_request(gh, tmp_path):
    fault = gh.inject_forbidden(r"/actions/", method="GET", times=None)
    index, notes = fetch_history(_repo(gh), [CI, DOCS], branch="main", cache_dir=tmp_path)
    assert notes == [NO_PERMISSION]
    assert "`actions: read`" in NO_PERMISSION
    assert index.jobs == {} and index.workflows == {}
    assert fault.hits == 1


def test_other_failures_are_notes_too(gh, tmp_path):
    gh.inject_server_error(r"/runs\?", status=502)
    index, notes = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert index.jobs == {}
    assert notes == ["history unavailable (GitHub API 502: Server Error): cold-start predictions"]


def test_an_api_message_is_text_in_the_note(gh, tmp_path):
    # a proxy or an error page can answer with Markdown or HTML; the note is Markdown
    gh.inject(r"/runs\?", 502, {"message": "<b>Bad</b> @ops [x](y)\n> quote"}, None, None, 1)
    _, notes = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert notes == ["history unavailable (GitHub API 502: &lt;b&gt;Bad&lt;/b&gt; @&#8203;ops "
                     "\\[x\\](y) &gt; quote): cold-start predictions"]


def test_jobs_forbidden_keeps_the_cached_runs(gh, tmp_path):
    fetch_history(_repo(gh), [CI], branch="main", max_runs=2, cache_dir=tmp_path)
    gh.inject_forbidden(r"/jobs\?", method="GET", times=None)
    index, notes = fetch_history(_repo(gh), [CI], branch="main", max_runs=4, cache_dir=tmp_path)
    assert notes == [NO_PERMISSION]
    assert index.for_job(CI, "test").runtimes == (120.0, 130.0)


def test_the_cache_saves_job_requests(gh, tmp_path):
    repo = _repo(gh)
    first, _ = fetch_history(repo, [CI, DOCS], branch="main", cache_dir=tmp_path)
    assert len(_jobs_requests(gh)) == 4
    (cache_file,) = tmp_path.glob("*ci.yml*.json")
    data = json.loads(cache_file.read_text())
    assert data["repository"] == REPO and data["workflow"] == CI and len(data["runs"]) == 4
    assert data["texts"]["sha"] == gh.shas[1]

    gh.clear_requests()
    second, notes = fetch_history(repo, [CI, DOCS], branch="main", cache_dir=tmp_path)
    assert second == first and notes == ["no completed runs on `main` for `docs.yml`: "
                                         "cold-start predictions for their jobs"]
    # one list call per workflow, nothing else: no jobs, no files of the newest commit
    assert [r.path.rsplit("/", 2)[-2] for r in gh.requests] == ["ci.yml", "docs.yml"]

    # a new run, and a re-run of a cached one: only those two are fetched
    rerun = next(r for r in gh.runs[REPO] if r["created_at"].startswith("2024-05-02"))
    rerun["run_attempt"] = 2
    gh.add_job(REPO, rerun["id"], **_job("test", 2, 200))
    gh.add_job(REPO, rerun["id"], **_job("build", 2, 65))
    new = gh.add_run(REPO, workflow_path=CI, head_sha=gh.shas[1],
                     created_at="2024-05-11T10:00:00Z", jobs=[_job("test", 11, 140)])
    gh.clear_requests()
    third, _ = fetch_history(repo, [CI], branch="main", cache_dir=tmp_path)
    assert sorted(int(r.path.split("/")[-2]) for r in _jobs_requests(gh)) == \
        sorted([rerun["id"], new["id"]])
    assert third.for_job(CI, "test").runtimes == (100.0, 200.0, 120.0, 130.0, 140.0)


def test_a_broken_cache_is_ignored_and_the_cache_is_bounded(gh, tmp_path, monkeypatch):
    fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    (cache_file,) = tmp_path.glob("*.json")
    cache_file.write_text("{not json")
    gh.clear_requests()
    index, notes = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert notes == [] and len(index.for_job(CI, "test").runtimes) == 4
    assert len(_jobs_requests(gh)) == 4

    monkeypatch.setattr(github_history, "CACHE_MAX_RUNS", 3)
    fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    runs = json.loads(cache_file.read_text())["runs"]
    assert len(runs) == 3 and min(r["created_at"] for r in runs.values()).startswith("2024-05-02")


def test_zero_runs_asks_nothing(gh, tmp_path):
    index, notes = fetch_history(_repo(gh), [CI], branch="main", max_runs=0, cache_dir=tmp_path)
    assert (index.jobs, index.workflows, notes) == ({}, {}, [])
    assert gh.requests == [] and list(tmp_path.iterdir()) == []


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path))
    assert default_cache_dir() == tmp_path / "laser-ci-history"
    monkeypatch.delenv("RUNNER_TEMP")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "laser-ci" / "history"
