"""How a job's earlier runs ended, from each history source to the report: ``PastRuns.
failures`` (table-driven), the GitHub API and its cache, a collected folder, the estimate's
``history_failures`` and the words in the PR comment and the table."""

from __future__ import annotations

import json

import gha_mini
import pytest
from test_github_history import CI, REPO, _job, _repo, gh  # noqa: F401 - gh is a fixture

from laser_ci.estimate import estimate_workflows
from laser_ci.github.history import fetch_history
from laser_ci.predictors.base import Runtime
from laser_ci.report.comment import failed_words
from laser_ci.report.jobs import failed_runs
from laser_ci.report.render import _job_note
from laser_ci.text.history import MAX_RUNS, Failures, HistoryIndex, PastRuns
from laser_ci.training.collected import load_history_index
from laser_ci.workflows.parse import read_workflows


@pytest.mark.parametrize(("runtimes", "conclusions", "expected"), [
    # nothing known: no summary
    ((10.0, 20.0), (), None),
    ((10.0, 20.0), (None, None), None),
    # lengths disagree: unknown, not misaligned
    ((10.0, 20.0), ("success",), None),
    # none failed
    ((10.0, 20.0), ("success", "success"), Failures(2, ())),
    # failure and timed_out count; cancelled does not; unknown ends are left out of `known`
    ((10.0, 20.0, 30.0, 40.0, 50.0), ("failure", None, "timed_out", "cancelled", "success"),
     Failures(4, (10.0, 30.0))),
    # a run without a time is dropped as the history drops it
    ((0.0, 20.0), ("failure", "failure"), Failures(1, (20.0,))),
])
def test_failures(runtimes, conclusions, expected) -> None:
    assert PastRuns(runtimes, conclusions=conclusions).failures() == expected


def test_failures_window_is_the_history_window() -> None:
    runtimes = tuple(float(i + 1) for i in range(MAX_RUNS + 5))
    conclusions = ("failure",) * 5 + ("success",) * MAX_RUNS
    f = PastRuns(runtimes, conclusions=conclusions).failures()
    assert f == Failures(MAX_RUNS, ())  # the five old failures are out of the window
    f = PastRuns(runtimes, conclusions=conclusions[::-1]).failures()
    assert f.known == MAX_RUNS and f.failed_s == runtimes[-5:]
    assert f.median_s == runtimes[-3] and f.to_json() == {
        "runs": MAX_RUNS, "failed": 5, "failed_median_s": runtimes[-3]}


def test_github_history_keeps_conclusions_and_caches_them(gh, tmp_path) -> None:  # noqa: F811
    fail = gh.add_run(REPO, workflow_path=CI, head_sha=gh.shas[1], conclusion="failure",
                      created_at="2024-05-11T10:00:00Z",
                      jobs=[_job("test", 11, 40, conclusion="failure"),
                            _job("build", 11, 90)])
    index, _ = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    test = index.for_job(CI, "test")
    assert test.runtimes == (100.0, 110.0, 120.0, 130.0, 40.0)
    assert test.conclusions == ("success",) * 4 + ("failure",)
    assert test.failures() == Failures(5, (40.0,))
    assert index.for_job(CI, "build").failures() == Failures(5, ())
    assert index.for_workflow(CI).conclusions == ("success",) * 4 + ("failure",)

    # from the cache: the same, without asking for the jobs again
    gh.clear_requests()
    again, _ = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert again.for_job(CI, "test") == test and gh.requests_to(r"/jobs$") == []

    # a cache written before conclusions were kept: those runs' jobs end unknown
    (cache_file,) = tmp_path.glob("*ci.yml*.json")
    data = json.loads(cache_file.read_text())
    for run in data["runs"].values():
        run.pop("conclusions")
    cache_file.write_text(json.dumps(data))
    old, _ = fetch_history(_repo(gh), [CI], branch="main", cache_dir=tmp_path)
    assert old.for_job(CI, "test").conclusions == (None,) * 5
    assert old.for_job(CI, "test").failures() is None
    assert old.for_workflow(CI).failures() == Failures(5, (130.0,))  # 40 + 90
    assert fail["conclusion"] == "failure"


def test_collected_folder_keeps_conclusions() -> None:
    index = load_history_index(gha_mini.MINI, "tiny/collected")
    assert index.workflows and all(len(p.conclusions) == len(p.runtimes)
                                   for p in [*index.jobs.values(), *index.workflows.values()])
    assert any(c for p in index.workflows.values() for c in p.conclusions)


WF = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: make test
"""


class _Fixed:
    name = "fixed"

    def predict(self, texts):
        return [Runtime(p10=50.0, p50=100.0, p90=200.0) for _ in texts]


def test_estimate_reports_failures_and_the_reports_say_them() -> None:
    (wf,), _ = read_workflows({".github/workflows/ci.yml": WF}, [".github/workflows/ci.yml"])
    past = PastRuns((300.0, 310.0, 60.0, 320.0, 80.0),
                    conclusions=("success", "success", "failure", None, "failure"))
    index = HistoryIndex(jobs={(wf.path, "test"): past}, workflows={})
    (job,) = estimate_workflows([wf], [], _Fixed(), history=index)["workflows"][0]["jobs"]
    assert job["history_runs"] == 5
    assert job["history_failures"] == {"runs": 4, "failed": 2, "failed_median_s": 70.0}
    assert failed_runs(job) == (2, 4, 70.0)
    assert failed_words(job, 5) == "; 2 of 4 failed, after ~1m 10s"
    assert failed_words(job, 4) == "; 2 failed, after ~1m 10s"
    assert "2 of its last 4 runs with a known end failed, after 1m 10s (median)" in _job_note(job)

    cold = estimate_workflows([wf], [], _Fixed())["workflows"][0]["jobs"][0]
    assert cold["history_failures"] is None and failed_words(cold, 0) == ""


@pytest.mark.parametrize("value", [
    None, "x", {"runs": 4, "failed": 0, "failed_median_s": None},
    {"runs": 2, "failed": 3, "failed_median_s": 10.0},  # more failed than known
    {"runs": True, "failed": True, "failed_median_s": 10.0},
    {"runs": 4, "failed": 1, "failed_median_s": float("nan")},
    {"runs": 4, "failed": 1, "failed_median_s": "10"},
])
def test_unreadable_failures_say_nothing(value) -> None:
    job = {"history_failures": value}
    assert failed_runs(job) is None and failed_words(job, 4) == ""


def test_history_cell_in_the_comment() -> None:
    from laser_ci.report.cells import history_cell as _history_cell

    job = {"history_runs": 12, "history_source": "own",
           "history_failures": {"runs": 12, "failed": 3, "failed_median_s": 250.0}}
    assert _history_cell(job) == "warm (12 runs; 3 failed, after ~4m 10s)"
    assert _history_cell({**job, "history_failures": None}) == "warm (12 runs)"
    assert _history_cell({"history_runs": None}) == "cold"


def test_run_time_matrix_instances_keep_conclusions(tmp_path) -> None:
    """A shard of a matrix computed at run time is known only from the job lists
    (``HistoryIndex.add_listed``): how its runs ended still reaches the estimate."""
    from runtime_history import WORKFLOW, make_runs, write_folder
    from test_runtime_matrix import ROOT, WORKFLOWS, MedianPredictor

    from laser_ci.estimate import estimate_paths, load_history

    shard = "Unit Test / pkg 3/12 on macos-latest/current"
    runs = make_runs(days=21)
    failed = []
    for i, run in enumerate(runs):
        for job in run["jobs"]:
            if job["name"] == shard and i % 4 == 0 and i >= len(runs) - 20:
                job["conclusion"] = "failure"
                failed.append(job["run_time_s"])
    index = load_history(write_folder(tmp_path / "collected", runs))
    past = index.for_job(WORKFLOW, shard)
    assert len(past.conclusions) == len(past.runtimes) == len(runs)
    assert past.conclusions.count("failure") == len(failed) == 5
    assert past.failures() == Failures(MAX_RUNS, tuple(failed))
    # a shard that never failed: known, none failed
    other = index.for_job(WORKFLOW, "Unit Test / pkg 4/12 on macos-latest/current")
    assert other.failures() == Failures(MAX_RUNS, ())

    result = estimate_paths([WORKFLOWS], repo_root=str(ROOT), predictor=MedianPredictor(),
                            history=index)
    jobs = {j["name"]: j for w in result["workflows"] for j in w["jobs"]}
    assert jobs[shard]["history_failures"] == Failures(MAX_RUNS, tuple(failed)).to_json()
    assert jobs["Unit Test / pkg 4/12 on macos-latest/current"]["history_failures"]["failed"] == 0


def test_cached_job_lists_keep_conclusions() -> None:
    from laser_ci.github.history import _listed, _Run
    from laser_ci.text.history import RunJob

    run = _Run(1, 1, "", "", listed=[RunJob("a", ("ubuntu-latest",), 5.0, "failure"),
                                     RunJob("b", (), None, None)])
    assert _listed(json.loads(json.dumps(run.to_json()))["listed"]) == run.listed
    # written before conclusions were kept: three items, the end unknown
    assert _listed([["a", [], 5.0]]) == [RunJob("a", (), 5.0, None)]
    assert _listed([["a", [], 5.0, 7], ["b"], "x"]) == [RunJob("a", (), 5.0, None)]


@pytest.mark.parametrize(("job", "expected"), [
    ({"name": "a", "run_time_s": 60, "conclusion": "failure", "runner_labels": ["x"]},
     ("a", ("x",), 60.0, "failure")),
    # a cancelled job's duration is where it was cut: listed, not timed (as the API's)
    ({"name": "a", "run_time_s": 60, "conclusion": "cancelled"}, ("a", (), None, "cancelled")),
    ({"name": "a", "run_time_s": 0, "conclusion": "success"}, ("a", (), None, "success")),
    ({"name": "a", "run_time_s": "n/a"}, ("a", (), None, None)),
    ({"name": "a", "run_time_s": "inf", "conclusion": "success"}, ("a", (), None, "success")),
    ({"name": "a", "run_time_s": "nan", "conclusion": "success"}, ("a", (), None, "success")),
    ({"name": "a", "run_time_s": 10**400, "conclusion": "success"}, ("a", (), None, "success")),
    ({"name": "a", "run_time_s": 60, "conclusion": "skipped"}, None),
    ({"run_time_s": 60}, None),
    ("not a job", None),
])
def test_collected_jobs_as_listed(job: object, expected: tuple | None) -> None:
    from laser_ci.text.history import RunJob

    got = RunJob.from_collected(job)
    assert (got if got is None else (got.name, got.labels, got.seconds, got.conclusion)) == expected


def test_listed_jobs_keep_the_first_timed_job_of_a_name() -> None:
    from laser_ci.text.history import HistoryIndex, RunJob

    index = HistoryIndex({}, {})
    index.add_listed("w.yml", [
        [RunJob("a", (), None, "cancelled"), RunJob("a", (), 30.0, "success"),
         RunJob("a", (), 99.0, "failure")],
        [RunJob("a", (), 40.0, "failure")],
    ])
    past = index.jobs[("w.yml", "a")]
    assert past.runtimes == (30.0, 40.0) and past.conclusions == ("success", "failure")
    assert past.failures() == Failures(2, (40.0,))


def test_runs_cached_without_job_lists_keep_their_jobs_ends() -> None:
    """A run cached before job lists were kept is listed from its timed jobs, with how
    each ended."""
    from laser_ci.github.history import _add, _Run
    from laser_ci.text.history import HistoryIndex, RunJob

    index = HistoryIndex({}, {})
    run = _Run(1, 1, "", "", jobs={"a": 5.0}, job_conclusions={"a": "failure"})
    _add(index, "w.yml", [run], None)
    assert index.runs["w.yml"] == ((RunJob("a", (), 5.0, "failure"),),)
