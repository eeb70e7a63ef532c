"""The Action end to end with measured usage: earlier runs' usage records (the measure
step's artifacts) turned into sizing advice in the PR comment, the summary and the JSON."""

from __future__ import annotations

import json
from pathlib import Path

from test_action import (
    EVENT,
    NUMBER,
    REPO,
    WF,
    _add_history,
    _env,
    _invoke,
    _outputs,
)
from test_action import github as github  # noqa: PLC0414 - the PR fixture, re-exported
from test_usage import GB, record, zipped

from laser_ci.report.comment import MARKER


def _private_event(tmp_path: Path) -> dict:
    event = json.loads(json.dumps(EVENT))
    event["repository"]["private"] = True
    event["repository"]["visibility"] = "private"
    return event


def _measure(gh, day_runs: dict[int, int]) -> None:
    """A usage record for build (small: fits ubuntu-slim) and for test (3.12) (near 8 GB)
    in each ci.yml run on main, as the measure step uploads them. build shares its runner
    name and start with lint (the fake's jobs all do): its record names its job."""
    for run in gh.runs[REPO]:
        if run["path"] != WF + "ci.yml" or run["head_branch"] != "main" \
                or run["status"] != "completed" or run["event"] != "push":
            continue
        day = int(run["created_at"][8:10])
        start = f"2024-05-{day:02d}T10:00:07Z"
        gh.add_artifact(REPO, run["id"], f"laser-ci-usage-1-build-{day:08x}",
                        zipped(record(peak_gb=1.6 + 0.1 * day, cores=0.7, started_at=start,
                                      job="build")))
        gh.add_artifact(REPO, run["id"], f"laser-ci-usage-1-test-{day:08x}",
                        zipped(record(peak_gb=7.5 + 0.1 * day, cores=1.9, started_at=start,
                                      runner_name="GitHub Actions 5", job="test")))
        day_runs[day] = run["id"]
    for job in (j for rid in day_runs.values() for j in gh.jobs[rid]):
        if job["name"] == "test (3.12)":
            job["runner_name"] = "GitHub Actions 5"


def test_measured_usage_of_earlier_runs_becomes_advice_in_the_pr_comment(
        tmp_path, github, monkeypatch):
    _add_history(github)
    runs: dict[int, int] = {}
    _measure(github, runs)
    assert len(runs) == 3
    result = _invoke(_env(tmp_path, github, _private_event(tmp_path)), monkeypatch)
    assert result.exit_code == 0, result.output

    # each new run's artifacts listed once, our zips downloaded (2 a run)
    assert len(github.requests_to(r"/actions/runs/\d+/artifacts$")) == 5  # ci x3, docs x2
    assert len(github.requests_to(r"^/_artifact_blobs/")) == 6

    data = json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))
    assert data["history"]["measured_jobs"] == 2  # build, test (3.12)
    jobs = {j["name"]: j for w in data["workflows"] for j in w["jobs"]}
    build = jobs["build"]["usage"]
    assert build["measured_runs"] == 3
    assert build["memory_peak_bytes"]["p50"] == 1.8 * GB  # 1.7, 1.8, 1.9 GB
    assert build["cpu_cores_p95"] == {"p50": 0.7, "p90": 0.7}
    assert jobs["test (3.12)"]["usage"]["measured_runs"] == 3
    assert jobs["e2e"]["usage"] == {"measured_runs": 0}
    slim = [a for a in jobs["build"]["advice"] if a["kind"] == "usage"]
    assert [a["suggested"]["runs-on"] for a in slim] == ["ubuntu-slim"]
    near = [a for a in jobs["test (3.12)"]["advice"] if a["kind"] == "usage"]
    assert len(near) == 1 and "near the machine's memory" in near[0]["message"]

    body = github.comments(REPO, NUMBER)[0]["body"]
    assert body.startswith(MARKER)
    assert "fits `ubuntu-slim` (1 vCPU, 5 GB)" in body
    assert "memory peaks at 7.8 GB of 8.0 GB" in body
    assert "Usage: **2 of 7 jobs measured** (CPU, memory and disk of their earlier runs): " \
        "1 near its runner's memory, 1 fits a cheaper runner (see the advice)" in body
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "fits `ubuntu-slim`" in summary

    # the next run reads the records from the cache: no artifact is listed again
    github.clear_requests()
    again = _invoke(_env(tmp_path, github, _private_event(tmp_path)), monkeypatch)
    assert again.exit_code == 0
    assert github.requests_to(r"/artifacts") == [] and github.requests_to(r"_artifact_blobs") == []
    assert github.comments(REPO, NUMBER)[0]["body"] == body


def test_artifacts_unreadable_keep_the_history_and_todays_advice(tmp_path, github, monkeypatch):
    _add_history(github)
    _measure(github, {})
    github.inject_server_error(r"/artifacts", times=None)
    result = _invoke(_env(tmp_path, github, _private_event(tmp_path)), monkeypatch)
    assert result.exit_code == 0, result.output
    data = json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))
    jobs = {j["name"]: j for w in data["workflows"] for j in w["jobs"]}
    assert jobs["build"]["history_runs"] == 3  # warm all the same
    assert jobs["build"]["usage"] == {"measured_runs": 0}
    assert not any(a["kind"] == "usage" for j in jobs.values() for a in j["advice"])
