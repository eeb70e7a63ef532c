"""End-to-end tests of ``laser-ci collect`` against the local fake GitHub (no internet)."""

from __future__ import annotations

import gzip
import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakegithub import FakeGitHub

import laser_ci.github.collect as collect_mod
import laser_ci.github.collect_store as collect_store
from laser_ci.github.collect import collect
from laser_ci.workflows.model import RepoProfile

REPO = "octo/app"
CI = ".github/workflows/ci.yml"
LINT = ".github/workflows/lint.yaml"
ACTION = ".github/actions/setup/action.yml"
CI_V1 = "name: CI\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n"
CI_V2 = CI_V1.replace("make", "make test")
LINT_TEXT = "on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps: [{run: ruff .}]\n"
ACTION_TEXT = "runs:\n  using: composite\n  steps:\n    - run: echo hi\n      shell: bash\n"
T0 = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
SHARED_KEYS = {
    "id", "repo", "workflow_path", "sha", "commit_date", "event", "branch", "conclusion",
    "attempts", "run_time_s", "files", "repo_profile",
}  # fmt: skip
JOB_KEYS = {
    "name", "run_time_s", "conclusion", "runner_labels", "runner_name", "started_at",
    "completed_at",
}  # fmt: skip


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def files_v1() -> dict[str, str]:
    return {
        CI: CI_V1,
        LINT: LINT_TEXT,
        ACTION: ACTION_TEXT,
        ".github/dependabot.yml": "version: 2\n",
        "README.md": "# app\n",
        "src/main.py": "print('hi')\n",
        "src/util.py": "X = 1\n",
        "Makefile": "all:\n\ttrue\n",
    }


@pytest.fixture
def gh():
    with FakeGitHub(token="secret") as server:
        server.add_repo(REPO)
        yield server


@pytest.fixture(autouse=True)
def fast(monkeypatch):
    """No real sleeping, small pages, no token from the environment."""
    sleeps: list[float] = []
    monkeypatch.setattr(collect_mod, "_sleep", sleeps.append)
    monkeypatch.setattr(collect_mod, "PER_PAGE", 5)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    return sleeps


def add_runs(gh: FakeGitHub, n: int, sha: str, start: datetime = T0, **kw: Any) -> list[dict]:
    runs = []
    for i in range(n):
        created = start + timedelta(hours=i)
        job = {
            "name": "test",
            "started_at": iso(created + timedelta(seconds=5)),
            "completed_at": iso(created + timedelta(seconds=65 + i)),
        }
        runs.append(
            gh.add_run(REPO, workflow_path=CI, head_sha=sha, created_at=iso(created), jobs=[job], **kw)
        )
    return runs


def run(gh: FakeGitHub, out: Path, *args: str, token: str = "secret"):
    argv = [REPO, "-o", str(out), "--api-url", gh.url, "--token", token, *args]
    result = CliRunner().invoke(collect, argv)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def read(out: Path, name: str) -> list[dict[str, Any]]:
    path = out / f"{name}.jsonl.gz"
    if not path.exists():
        return []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def jobs_requested(gh: FakeGitHub) -> list[int]:
    return [int(r.path.split("/")[-2]) for r in gh.requests_to(r"/actions/runs/\d+/jobs$")]


# ---- the format ---------------------------------------------------------------------------
def test_collect_writes_the_shared_format_with_per_job_labels(gh, tmp_path):
    sha1 = gh.add_commit(REPO, files_v1(), date="2024-04-30T12:00:00+02:00")
    sha2 = gh.add_commit(REPO, dict(files_v1(), **{CI: CI_V2}), branch="main")
    a = gh.add_run(
        REPO, workflow_path=CI, head_sha=sha1, created_at="2024-05-01T10:00:00Z", run_attempt=2,
        event="pull_request", head_branch="feature", conclusion="failure",
        jobs=[
            {"name": "test (3.11)", "started_at": "2024-05-01T10:00:10Z",
             "completed_at": "2024-05-01T10:02:10Z", "labels": ["ubuntu-22.04"]},
            {"name": "test (3.12)", "started_at": "2024-05-01T10:00:20Z",
             "completed_at": "2024-05-01T10:01:20Z", "conclusion": "failure",
             "labels": ["self-hosted", "linux"], "runner_name": "box-7"},
            # attempt 1's job: not part of the final attempt's label
            {"name": "test (3.11)", "started_at": "2024-05-01T09:00:00Z",
             "completed_at": "2024-05-01T09:30:00Z", "run_attempt": 1},
        ],
    )  # fmt: skip
    b = gh.add_run(
        REPO, workflow_path=LINT, head_sha=sha2, created_at="2024-05-02T10:00:00Z",
        jobs=[{"name": "lint", "started_at": "2024-05-02T10:00:00Z", "completed_at": None,
               "conclusion": "skipped", "runner_name": None, "labels": []}],
    )  # fmt: skip
    gh.add_run(REPO, workflow_path="dynamic/github-code-scanning/codeql", head_sha=sha2,
               created_at="2024-05-03T10:00:00Z")  # fmt: skip
    gh.add_run(REPO, workflow_path=CI, head_sha=sha2, created_at="2024-05-04T10:00:00Z",
               status="in_progress")  # fmt: skip

    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert f"{REPO}: 2 new runs" in result.output
    assert "1 skipped (1 not a workflow file of the repo)" in result.output

    runs = {r["workflow_path"]: r for r in read(tmp_path, "runs")}
    assert set(runs) == {CI, LINT}
    for row in runs.values():
        assert set(row) == SHARED_KEYS | {"jobs", "created_at"}
        for job in row["jobs"]:
            assert set(job) == JOB_KEYS
    ra, rb = runs[CI], runs[LINT]
    assert ra["id"] == hashlib.sha256(f"gha-run/{a['id']}".encode()).hexdigest()[:16]
    assert (ra["repo"], ra["sha"], ra["event"], ra["branch"]) == (REPO, sha1, "pull_request",
                                                                   "feature")  # fmt: skip
    assert (ra["conclusion"], ra["attempts"]) == ("failure", 2)
    assert ra["commit_date"] == "2024-04-30T12:00:00+02:00"
    assert ra["run_time_s"] == 180.0  # 120 + 60: the final attempt only
    assert ra["jobs"] == [
        {"name": "test (3.11)", "run_time_s": 120.0, "conclusion": "success",
         "runner_labels": ["ubuntu-22.04"], "runner_name": "GitHub Actions 2",
         "started_at": "2024-05-01T10:00:10Z", "completed_at": "2024-05-01T10:02:10Z"},
        {"name": "test (3.12)", "run_time_s": 60.0, "conclusion": "failure",
         "runner_labels": ["self-hosted", "linux"], "runner_name": "box-7",
         "started_at": "2024-05-01T10:00:20Z", "completed_at": "2024-05-01T10:01:20Z"},
    ]  # fmt: skip
    assert rb["run_time_s"] == 0.0 and rb["jobs"][0]["runner_name"] is None
    assert rb["id"] != ra["id"] and b["id"] != a["id"]

    # files: every .yml/.yaml under .github/workflows and .github/actions, by blob id
    blobs = {b["id"]: b["text"] for b in read(tmp_path, "blobs")}
    assert len(blobs) == len(read(tmp_path, "blobs"))  # no duplicates
    for bid, text in blobs.items():
        assert bid == hashlib.sha256(text.encode()).hexdigest()[:24]
    assert list(ra["files"]) == sorted([ACTION, CI, LINT])
    assert {p: blobs[b] for p, b in ra["files"].items()} == {
        CI: CI_V1, LINT: LINT_TEXT, ACTION: ACTION_TEXT}  # fmt: skip
    assert blobs[rb["files"][CI]] == CI_V2
    assert rb["files"][LINT] == ra["files"][LINT]
    assert len(blobs) == 4  # CI v1, CI v2, lint, action
    corpus = read(tmp_path, "corpus")
    assert {(c["repo"], c["path"], blobs[c["blob"]]) for c in corpus} == {
        (REPO, CI, CI_V1), (REPO, CI, CI_V2), (REPO, LINT, LINT_TEXT), (REPO, ACTION, ACTION_TEXT)
    }  # fmt: skip
    assert len(corpus) == 4

    prof = ra["repo_profile"]
    assert prof["n_files"] == 8
    assert prof["total_bytes"] == sum(len(v) for v in files_v1().values())
    assert prof["by_ext"][".yml"] == [3, len(CI_V1) + len(ACTION_TEXT) + len("version: 2\n")]
    assert prof["by_ext"][".py"][0] == 2 and prof["by_ext"]["Makefile"][0] == 1
    assert list(prof["by_ext"])[0] == ".yml"  # most files first
    assert prof["top_level"] == [".github/", "Makefile", "README.md", "src/"]
    assert RepoProfile.from_json(prof).n_files == 8

    # the jobs of the final attempt were asked for, once per run
    assert all(r.query.get("filter") == "latest" for r in gh.requests_to(r"/jobs$"))
    assert sorted(jobs_requested(gh)) == sorted([a["id"], b["id"]])
    listing = gh.requests_to(r"/actions/runs$")
    assert listing and all(r.query["status"] == "completed" for r in listing)


def test_the_folder_loads_as_training_examples_without_conversion(gh, tmp_path):
    from laser_ci.training.examples import load_examples

    matrix = (
        "on: push\njobs:\n  test:\n    strategy:\n      matrix:\n        py: ['3.11', '3.12']\n"
        "    runs-on: ubuntu-latest\n    steps:\n      - run: make test\n"
    )
    sha = gh.add_commit(REPO, dict(files_v1(), **{CI: matrix}))
    gh.add_run(
        REPO, workflow_path=CI, head_sha=sha, created_at="2024-05-01T10:00:00Z",
        jobs=[
            {"name": "test (3.11)", "started_at": "2024-05-01T10:00:00Z",
             "completed_at": "2024-05-01T10:05:00Z"},
            {"name": "test (3.12)", "started_at": "2024-05-01T10:00:00Z",
             "completed_at": "2024-05-01T10:07:00Z", "conclusion": "failure"},
        ],
    )  # fmt: skip
    assert run(gh, tmp_path).exit_code == 0
    examples = load_examples(tmp_path, cache=False)
    wf = [e for e in examples if e.kind == "workflow"]
    jobs = sorted((e.job_name, e.runtime_s, e.conclusion) for e in examples if e.kind == "job")
    assert [e.runtime_s for e in wf] == [720.0] and not wf[0].fallback
    assert jobs == [("test (3.11)", 300.0, "success"), ("test (3.12)", 420.0, "failure")]


def test_collect_then_estimate_with_history_gives_each_job_its_runs(gh, tmp_path):
    """End to end: the folder collect writes is what ``estimate --history`` reads."""
    from laser_ci.cli import main

    matrix = (
        "name: CI\non: push\njobs:\n  test:\n    strategy:\n      matrix:\n"
        "        py: ['3.11', '3.12']\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: make test\n"
    )
    files = dict(files_v1(), **{CI: matrix})
    sha = gh.add_commit(REPO, files)
    for i in range(3):
        t = T0 + timedelta(hours=i)
        gh.add_run(REPO, workflow_path=CI, head_sha=sha, created_at=iso(t), jobs=[
            {"name": f"test ({py})", "started_at": iso(t),
             "completed_at": iso(t + timedelta(seconds=s + 10 * i))}
            for py, s in (("3.11", 300), ("3.12", 420))])  # fmt: skip
    for i in range(2):
        t = T0 + timedelta(days=1, hours=i)
        gh.add_run(REPO, workflow_path=LINT, head_sha=sha, created_at=iso(t), jobs=[
            {"name": "lint", "started_at": iso(t), "completed_at": iso(t + timedelta(seconds=40))}
        ])  # fmt: skip
    out = tmp_path / "data"
    result = run(gh, out)
    assert result.exit_code == 0 and f"{REPO}: 5 new runs" in result.output, result.output

    root = tmp_path / "checkout"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    est = CliRunner().invoke(main, ["estimate", str(root), "--history", str(out),
                                    "--format", "json"])  # fmt: skip
    assert est.exit_code == 0, est.output
    report = json.loads(est.output[est.output.index("{"):])
    got = {(wf["path"], job["name"]): (job["history_runs"], job["history_source"])
           for wf in report["workflows"] for job in wf["jobs"]}  # fmt: skip
    assert got == {
        (CI, "test (3.11)"): (3, "own"), (CI, "test (3.12)"): (3, "own"), (LINT, "lint"): (2, "own")
    }  # fmt: skip
    assert "warning" not in est.output


# ---- pagination ---------------------------------------------------------------------------
def test_pagination_and_githubs_1000_result_cap(gh, tmp_path, monkeypatch):
    monkeypatch.setattr(collect_mod, "RESULT_CAP", 10)
    gh.max_filtered_results = 10  # like GitHub's 1000, scaled down
    sha = gh.add_commit(REPO, files_v1())
    runs = add_runs(gh, 23, sha)
    many = runs[4]
    for k in range(11):  # 12 jobs: three pages of 5
        t = T0 + timedelta(hours=4)
        gh.add_job(REPO, many["id"], name=f"shard {k}", started_at=iso(t),
                   completed_at=iso(t + timedelta(seconds=10)))  # fmt: skip

    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    rows = read(tmp_path, "runs")
    assert len(rows) == 23 and len({r["id"] for r in rows}) == 23
    big = next(r for r in rows if len(r["jobs"]) > 1)
    assert len(big["jobs"]) == 12
    assert big["run_time_s"] == pytest.approx(60 + 4 + 11 * 10)
    pages = [r.query.get("page") for r in gh.requests_to(f"/runs/{many['id']}/jobs$")]
    assert pages == [None, "2", "3"]
    windows = [r.query.get("created") for r in gh.requests_to(r"/actions/runs$")]
    assert any(w and ".." not in w and w.startswith("<=") for w in windows)  # narrowed
    assert len(gh.requests_to(r"/git/trees/")) == 23
    assert len(gh.requests_to(r"/contents/")) == 3  # each file fetched once, then cached


def test_a_run_of_250_jobs_at_githubs_100_per_page(gh, tmp_path, monkeypatch):
    monkeypatch.setattr(collect_mod, "PER_PAGE", 100)
    sha = gh.add_commit(REPO, files_v1())
    big = add_runs(gh, 1, sha)[0]
    for k in range(249):
        gh.add_job(REPO, big["id"], name=f"shard {k}", started_at=iso(T0),
                   completed_at=iso(T0 + timedelta(seconds=10)))  # fmt: skip
    assert run(gh, tmp_path).exit_code == 0
    [row] = read(tmp_path, "runs")
    assert len(row["jobs"]) == 250 and len({j["name"] for j in row["jobs"]}) == 250
    assert row["run_time_s"] == 60 + 249 * 10
    asked = [(r.query.get("page"), r.query.get("per_page")) for r in gh.requests_to(r"/jobs$")]
    assert asked == [(None, "100"), ("2", "100"), ("3", "100")]


# ---- incremental and resumable --------------------------------------------------------------
def test_second_call_adds_only_new_runs(gh, tmp_path):
    sha = gh.add_commit(REPO, files_v1())
    first = add_runs(gh, 4, sha)
    assert run(gh, tmp_path).exit_code == 0
    before = (tmp_path / "blobs.jsonl.gz").read_bytes()

    gh.clear_requests()
    new = add_runs(gh, 2, sha, start=T0 + timedelta(days=1))
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert f"{REPO}: 2 new runs, 0 new files" in result.output
    assert sorted(jobs_requested(gh)) == sorted(r["id"] for r in new)
    assert not gh.requests_to(r"/contents/")  # git blob ids are remembered
    created = [r.query.get("created", "") for r in gh.requests_to(r"/actions/runs$")]
    assert created and all(c.startswith(">=") for c in created)  # only the recent window
    assert (tmp_path / "blobs.jsonl.gz").read_bytes() == before
    ids = [r["id"] for r in read(tmp_path, "runs")]
    assert len(ids) == 6 == len(set(ids))
    assert {collect_mod.row_id(r["id"]) for r in first + new} == set(ids)

    gh.clear_requests()
    result = run(gh, tmp_path)
    assert f"{REPO}: 0 new runs" in result.output and not jobs_requested(gh)
    assert len(read(tmp_path, "runs")) == 6


def test_a_repository_without_runs_says_so_and_leaves_a_folder_estimate_reads(gh, tmp_path):
    from laser_ci.cli import main

    out = tmp_path / "data"
    result = run(gh, out)
    assert result.exit_code == 0, result.output
    assert f"{REPO}: no completed workflow runs: GitHub Actions has not run here" in result.output
    for name in ("runs", "blobs", "corpus"):
        assert (out / f"{name}.jsonl.gz").exists() and read(out, name) == []
    root = tmp_path / "repo"
    (root / CI).parent.mkdir(parents=True)
    (root / CI).write_text(CI_V1)
    est = CliRunner().invoke(main, ["estimate", str(root), "--history", str(out)])
    assert est.exit_code == 0, est.output
    assert "not a collected folder" not in est.output and "holds no runs" in est.output
    # a later window without runs says which window
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 1, sha)
    assert "1 new runs" in run(gh, out).output
    later = run(gh, out, "--since", "2024-06-01").output
    assert f"{REPO}: no completed workflow runs created since 2024-06-01T00:00:00Z" in later
    assert len(read(out, "runs")) == 1


def test_max_runs_then_the_next_call_continues(gh, tmp_path):
    sha = gh.add_commit(REPO, files_v1())
    runs = add_runs(gh, 6, sha)
    result = run(gh, tmp_path, "--max-runs", "2")
    assert "2 new runs" in result.output and "more runs left" in result.output
    assert sorted(jobs_requested(gh)) == sorted(r["id"] for r in runs[-2:])  # newest first
    gh.clear_requests()
    result = run(gh, tmp_path)
    assert "4 new runs" in result.output and "more runs left" not in result.output
    assert sorted(jobs_requested(gh)) == sorted(r["id"] for r in runs[:4])
    assert len(read(tmp_path, "runs")) == 6


def test_a_run_re_run_after_it_was_collected_is_replaced_by_its_final_attempt(gh, tmp_path):
    sha = gh.add_commit(REPO, files_v1())
    runs = add_runs(gh, 3, sha, conclusion="failure")
    assert run(gh, tmp_path).exit_code == 0
    rerun = runs[-1]  # re-run after the call: attempt 2 succeeds, in 500 s
    rerun["run_attempt"], rerun["conclusion"] = 2, "success"
    t = T0 + timedelta(days=1)
    gh.add_job(REPO, rerun["id"], name="test", started_at=iso(t),
               completed_at=iso(t + timedelta(seconds=500)))  # fmt: skip
    gh.clear_requests()
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert "0 new runs, 1 re-run updated" in result.output
    assert jobs_requested(gh) == [rerun["id"]]  # the others are not asked for again
    rows = {r["id"]: r for r in read(tmp_path, "runs")}
    assert len(read(tmp_path, "runs")) == 3 == len(rows)  # replaced, not added
    row = rows[collect_mod.row_id(rerun["id"])]
    assert (row["attempts"], row["conclusion"], row["run_time_s"]) == (2, "success", 500.0)
    assert [r["attempts"] for r in rows.values()].count(1) == 2
    gh.clear_requests()
    assert "0 new runs" in run(gh, tmp_path).output and not jobs_requested(gh)


def test_a_re_run_staged_by_a_killed_call_replaces_the_old_row(gh, tmp_path, monkeypatch):
    sha = gh.add_commit(REPO, files_v1())
    runs = add_runs(gh, 2, sha, conclusion="failure")
    assert run(gh, tmp_path).exit_code == 0
    runs[0]["run_attempt"], runs[0]["conclusion"] = 2, "success"
    monkeypatch.setattr(collect_mod.Store, "merge", lambda self: None)  # killed: never merges
    assert run(gh, tmp_path).exit_code == 0
    monkeypatch.undo()
    monkeypatch.setattr(collect_mod, "_sleep", lambda s: None)
    monkeypatch.setattr(collect_mod, "PER_PAGE", 5)
    gh.clear_requests()
    result = run(gh, tmp_path)
    assert "recovered 1 runs" in result.output and not jobs_requested(gh)
    rows = read(tmp_path, "runs")
    assert sorted((r["attempts"], r["conclusion"]) for r in rows) == [(1, "failure"), (2, "success")]


def test_a_run_re_run_while_the_call_reaches_it_is_collected_once_it_ends(gh, tmp_path,
                                                                       monkeypatch):
    sha = gh.add_commit(REPO, files_v1())
    old = add_runs(gh, 1, sha, conclusion="failure")[0]  # days older than the others
    add_runs(gh, 3, sha, start=T0 + timedelta(days=5))
    real = collect_mod.Collector.label_run

    def rerun_starts(self, repo, full, run_obj, raw):
        if raw["id"] == old["id"] and old["run_attempt"] == 1:  # listed as attempt 1, done
            old.update(run_attempt=2, status="in_progress", conclusion=None)
            gh.add_job(REPO, old["id"], name="test", started_at=iso(T0 + timedelta(days=6)),
                       completed_at=None, conclusion=None, status="in_progress")  # fmt: skip
        return real(self, repo, full, run_obj, raw)

    monkeypatch.setattr(collect_mod.Collector, "label_run", rerun_starts)
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert "3 new runs" in result.output and "1 being re-run (collected when it ends)" in result.output
    assert len(read(tmp_path, "runs")) == 3  # not a row of a run half re-run
    gh.clear_requests()
    assert "1 being re-run" in run(gh, tmp_path).output  # still running: asked about, kept
    assert gh.requests_to(f"/actions/runs/{old['id']}$") and not jobs_requested(gh)
    old.update(status="completed", conclusion="success")
    gh.jobs[old["id"]][-1].update(status="completed", conclusion="success",
                                  completed_at=iso(T0 + timedelta(days=6, seconds=90)))
    gh.clear_requests()
    result = run(gh, tmp_path)  # outside the window the listing re-reads: fetched by id
    assert "1 new runs" in result.output and "being re-run" not in result.output
    row = next(r for r in read(tmp_path, "runs") if r["id"] == collect_mod.row_id(old["id"]))
    assert (row["attempts"], row["conclusion"], row["run_time_s"]) == (2, "success", 90.0)
    gh.clear_requests()
    assert "0 new runs" in run(gh, tmp_path).output and not gh.requests_to(f"/runs/{old['id']}")


def test_since_filters_by_creation_time(gh, tmp_path):
    sha = gh.add_commit(REPO, files_v1())
    runs = add_runs(gh, 5, sha)
    result = run(gh, tmp_path, "--since", "2024-05-01T10:00:00Z")
    assert result.exit_code == 0, result.output
    assert sorted(jobs_requested(gh)) == sorted(r["id"] for r in runs[2:])
    assert run(gh, tmp_path, "--since", "yesterday-ish").exit_code == 2


def test_a_failed_call_keeps_what_it_wrote_and_the_next_resumes(gh, tmp_path):
    sha = gh.add_commit(REPO, files_v1())
    runs = add_runs(gh, 5, sha)
    gh.inject_forbidden(f"/actions/runs/{runs[2]['id']}/jobs")  # the third newest
    result = run(gh, tmp_path)
    assert result.exit_code == 1
    assert "GitHub said 403 Resource not accessible by integration" in result.output
    assert f"{REPO}: stopped after 2 new runs, saved: run the same command again to " \
           "continue" in result.output
    assert len(read(tmp_path, "runs")) == 2  # the two newest, readable
    gh.clear_requests()
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert sorted(jobs_requested(gh)) == sorted(r["id"] for r in runs[:3])
    assert len(read(tmp_path, "runs")) == 5


def test_ctrl_c_saves_and_exits_130(gh, tmp_path, monkeypatch):
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 5, sha)
    real = collect_mod.Collector.label_run
    calls = []

    def flaky(self, *a):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, *a)

    monkeypatch.setattr(collect_mod.Collector, "label_run", flaky)
    result = run(gh, tmp_path)
    assert result.exit_code == 130 and "interrupted" in result.output
    assert f"{REPO}: stopped after 2 new runs, saved" in result.output
    assert len(read(tmp_path, "runs")) == 2
    monkeypatch.setattr(collect_mod.Collector, "label_run", real)
    assert run(gh, tmp_path).exit_code == 0
    assert len(read(tmp_path, "runs")) == 5


def test_a_killed_call_is_recovered_from_staging(gh, tmp_path, monkeypatch):
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 3, sha)
    monkeypatch.setattr(collect_mod.Store, "merge", lambda self: None)  # killed: never merges
    monkeypatch.setattr(collect_store, "MERGE_EVERY", 100)
    assert run(gh, tmp_path).exit_code == 0
    assert not (tmp_path / "runs.jsonl.gz").exists()
    staged = tmp_path / collect_mod.STATE_DIR / "runs.jsonl"
    with open(staged, "a") as fh:
        fh.write('{"id": "half a li')  # the write the kill cut short
    monkeypatch.undo()
    monkeypatch.setattr(collect_mod, "_sleep", lambda s: None)
    monkeypatch.setattr(collect_mod, "PER_PAGE", 5)
    gh.clear_requests()
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert "recovered 3 runs" in result.output
    assert not jobs_requested(gh)
    assert len(read(tmp_path, "runs")) == 3
    assert len(read(tmp_path, "blobs")) == 3 and len(read(tmp_path, "corpus")) == 3
    assert not staged.exists()


# ---- rate limits and bad answers ----------------------------------------------------------
def test_rate_limits_are_waited_out_and_shown(gh, tmp_path, fast):
    sha = gh.add_commit(REPO, files_v1())
    runs = add_runs(gh, 3, sha)
    gh.inject_rate_limit(r"/actions/runs\?", reset_in=1)
    gh.inject_rate_limit(f"/runs/{runs[1]['id']}/jobs", reset_in=1, status=429)
    gh.inject_secondary_rate_limit(r"/git/trees/", retry_after=3)
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert result.output.count("rate limited, waiting") == 3
    assert len(fast) == 3 and all(1 <= s <= 3 for s in fast)
    assert len(read(tmp_path, "runs")) == 3


def test_secondary_limits_without_headers_are_waited_out_too(gh, tmp_path, fast):
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 2, sha)
    for message in (  # GitHub Enterprise Server's older words, and another of today's
        "You have triggered an abuse detection mechanism. Please wait a few minutes before "
        "you try again.",
        "Request was blocked for this token. Please retry your request again later.",
    ):  # fmt: skip
        gh.inject(r"/git/trees/", 403, {"message": message})
    gh.inject(r"/contents/", 429, {"message": "Too Many Requests"})
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert result.output.count("rate limited, waiting 60s") == 3 and fast == [60, 60, 60]
    assert len(read(tmp_path, "runs")) == 2


def test_a_rate_limit_too_long_to_wait_stops_cleanly(gh, tmp_path, fast):
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 2, sha)
    gh.inject_rate_limit(r"/git/trees/", reset_in=5 * 3600, times=None)
    result = run(gh, tmp_path)
    assert result.exit_code == 1 and "rate limit exhausted" in result.output
    assert fast == []


def test_server_errors_are_retried_with_backoff(gh, tmp_path, fast):
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 2, sha)
    gh.inject_server_error(r"/contents/", times=2)
    gh.inject(r"/git/trees/", 502, "<html><body>Unicorn!</body></html>")
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert "retrying in 1s" in result.output and "retrying in 2s" in result.output
    assert fast == [1, 1, 2]  # tree once, then contents twice
    assert len(read(tmp_path, "runs")) == 2


def test_persistent_server_errors_give_up_with_one_line(gh, tmp_path, fast):
    sha = gh.add_commit(REPO, files_v1())
    runs = add_runs(gh, 3, sha)
    gh.inject_server_error(f"/runs/{runs[0]['id']}/jobs", times=None)
    result = run(gh, tmp_path)
    assert result.exit_code == 1
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("Error: GitHub said 500 Server Error") and "gave up after 5" in last
    assert fast == [1, 2, 4, 8]
    assert len(read(tmp_path, "runs")) == 2


def test_malformed_answers_are_retried(gh, tmp_path, fast):
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 2, sha)
    gh.inject(r"/actions/runs\?", 200, '{"total_count": 2, "workflow_runs": [')
    gh.inject(r"/actions/runs\?", 200, {"total_count": 1, "workflow_runs": [{"oops": 1}]})
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert result.output.count("malformed answer") == 2
    assert len(read(tmp_path, "runs")) == 2


def test_a_folder_of_several_repositories_is_said_to_be_no_history_folder(gh, tmp_path):
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 1, sha)
    gh.add_repo("octo/lib")
    lib = gh.add_commit("octo/lib", files_v1())
    gh.add_run("octo/lib", workflow_path=CI, head_sha=lib, created_at=iso(T0))
    argv = [REPO, "-o", str(tmp_path), "--api-url", gh.url, "--token", "secret"]
    alone = CliRunner().invoke(collect, argv)
    assert alone.exit_code == 0 and "repositories" not in alone.output
    both = CliRunner().invoke(collect, ["octo/lib", *argv])
    assert both.exit_code == 0, both.output
    assert both.output.strip().splitlines()[-1] == (
        f"note: {tmp_path} holds the runs of 2 repositories (octo/app, octo/lib): eval and "
        "training read it, estimate --history reads one repository per folder (-o)"
    )


def test_help_says_what_it_reads_writes_and_skips():
    text = " ".join(CliRunner().invoke(collect, ["--help"]).output.split())
    for said in (
        "laser-ci estimate --history DIR", "one repository per folder", "skipped",
        "re-run", "final attempt", "Ctrl-C", "rate limit", "actions: read, contents: read",
        "Exit status: 0", "130", "since the newest run the last call saw, less two days",
    ):  # fmt: skip
        assert said in text, said
    assert "``" not in text


def test_runs_of_pull_requests_from_forks_are_kept(gh, tmp_path):
    fork = gh.add_repo("someone/app", fork=True)
    sha = gh.add_commit(REPO, files_v1())  # a fork's commit, readable through the base
    add_runs(gh, 1, sha, event="pull_request", head_branch="main",
             head_repository=gh._mini_repo(fork))  # fmt: skip
    assert run(gh, tmp_path).exit_code == 0
    [row] = read(tmp_path, "runs")
    assert (row["repo"], row["event"], row["run_time_s"]) == (REPO, "pull_request", 60.0)


def test_bad_token_missing_token_unknown_repo(gh, tmp_path):
    result = run(gh, tmp_path, token="wrong")
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: GitHub said 401 Bad credentials (GET repos/{REPO}): the token is wrong or "
        "expired (GITHUB_TOKEN or --token)"
    ]
    result = CliRunner().invoke(collect, [REPO, "-o", str(tmp_path), "--api-url", gh.url])
    assert result.exit_code == 1 and "no GitHub token" in result.output
    result = CliRunner().invoke(
        collect, ["octo/nope", "-o", str(tmp_path), "--api-url", gh.url],
        env={"GITHUB_TOKEN": "secret"},
    )  # fmt: skip
    assert result.exit_code == 1 and result.output.strip().splitlines() == [
        "Error: GitHub said 404 Not Found (GET repos/octo/nope): no such repository, or the "
        "token cannot see it (a private repository needs a token with access to it)"
    ]
    assert run(gh, tmp_path, "--max-runs", "0").exit_code == 2


def test_a_token_without_read_access_says_what_it_needs(gh, tmp_path):
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 2, sha)
    denied = {"message": "Resource not accessible by personal access token"}
    gh.inject(r"/actions/runs\?", 403, denied, times=None)
    result = run(gh, tmp_path)
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        "Error: GitHub said 403 Resource not accessible by personal access token (listing runs "
        f"of {REPO}, page 1): the token needs read access to the repository's Actions and "
        "contents (a fine-grained token: Actions and Contents read; a workflow's GITHUB_TOKEN: "
        "permissions actions: read, contents: read)"
    )


def test_a_bad_repository_or_token_writes_no_folder(gh, tmp_path):
    out = tmp_path / "gha-runs"
    for argv in (["octo/nope", "--token", "secret"], [REPO, "--token", "wrong"],
                 [REPO, "octo/nope", "--token", "secret"]):  # fmt: skip
        result = CliRunner().invoke(collect, [*argv, "-o", str(out), "--api-url", gh.url])
        assert result.exit_code == 1 and "GitHub said 40" in result.output, result.output
        assert not out.exists()  # a typo leaves nothing behind, not even for the good name
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 1, sha)
    assert run(gh, out).exit_code == 0 and len(read(out, "runs")) == 1


def test_an_api_url_that_is_a_web_site_says_so_at_once(gh, tmp_path, fast):
    page = "<!DOCTYPE html><html><body>Sign in to GitHub Enterprise</body></html>"
    gh.inject(r"^/repos/octo/app$", 200, page, times=None)  # https://HOST without /api/v3
    result = run(gh, tmp_path / "out")
    assert result.exit_code == 1 and fast == []  # not retried: it will not change
    assert result.output.strip().splitlines() == [
        f"Error: --api-url {gh.url} is not GitHub's REST API (GET repos/{REPO} answered with "
        "a web page, not JSON): use https://api.github.com, or https://HOST/api/v3 for GitHub "
        "Enterprise Server"
    ]
    assert not (tmp_path / "out").exists()


def test_unreachable_api_fails_cleanly(tmp_path, fast):
    with FakeGitHub() as dead:
        url = dead.url
    result = CliRunner().invoke(collect, [REPO, "-o", str(tmp_path), "--api-url", url,
                                          "--token", "x"])  # fmt: skip
    assert result.exit_code == 1 and "cannot reach GitHub" in result.output
    assert "Traceback" not in result.output and len(fast) == 4


def test_missing_commits_and_truncated_trees(gh, tmp_path):
    sha = gh.add_commit(REPO, files_v1())
    gone = gh.add_run(REPO, workflow_path=CI, head_sha="f" * 40, created_at=iso(T0))
    ok = add_runs(gh, 1, sha, start=T0 + timedelta(hours=1))[0]
    gh.truncate_trees = True
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert "1 skipped (1 commit not found)" in result.output
    rows = read(tmp_path, "runs")
    assert [r["id"] for r in rows] == [collect_mod.row_id(ok["id"])]
    assert list(rows[0]["files"]) == [ACTION, CI, LINT] and rows[0]["repo_profile"] is None
    gh.clear_requests()
    run(gh, tmp_path, "--since", "2024-01-01")  # a skipped run is not retried
    assert not gh.requests_to(f"/runs/{gone['id']}") and not gh.requests_to(r"/git/trees/")


def test_runs_of_a_workflow_since_renamed_or_deleted_keep_the_path_they_ran(gh, tmp_path):
    build = ".github/workflows/build.yml"
    old = gh.add_commit(REPO, files_v1())
    renamed = {build if p == CI else p: t for p, t in files_v1().items()}
    new = gh.add_commit(REPO, renamed, branch="main")
    add_runs(gh, 2, old)  # ci.yml, deleted since
    gh.add_workflow(REPO, build)
    gh.workflows[REPO][0]["state"] = "deleted"
    gh.add_run(REPO, workflow_path=build, head_sha=new, created_at=iso(T0 + timedelta(days=1)),
               jobs=[{"name": "test", "started_at": iso(T0), "completed_at": iso(T0 + timedelta(
                   seconds=30))}])  # fmt: skip
    gh.add_run(REPO, workflow_path=CI, head_sha=new, created_at=iso(T0 + timedelta(days=2)))
    result = run(gh, tmp_path)
    assert result.exit_code == 0, result.output
    assert "3 new runs" in result.output
    assert "1 skipped (1 workflow file not at the commit)" in result.output
    rows = read(tmp_path, "runs")
    assert sorted(r["workflow_path"] for r in rows) == [build, CI, CI]
    for r in rows:
        assert r["workflow_path"] in r["files"] and (CI in r["files"]) == (r["sha"] == old)


def test_an_output_folder_it_cannot_write_is_one_line_naming_it(gh, tmp_path, monkeypatch):
    sha = gh.add_commit(REPO, files_v1())
    add_runs(gh, 1, sha)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    result = run(gh, blocker / "out")
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: cannot write to {blocker / 'out'}: Not a directory"]  # fmt: skip
    real = Path.mkdir

    def read_only(self, *a, **kw):
        if self.name == collect_mod.STATE_DIR:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *a, **kw)

    monkeypatch.setattr(Path, "mkdir", read_only)
    result = run(gh, tmp_path / "ro")
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: cannot write to {tmp_path / 'ro'}: Permission denied"]  # fmt: skip


def test_a_second_writer_is_refused(gh, tmp_path):
    store = collect_mod.Store(tmp_path)
    try:
        result = run(gh, tmp_path)
        assert result.exit_code == 1 and "another laser-ci collect is writing" in result.output
    finally:
        store.close()
    assert run(gh, tmp_path).exit_code == 0


def test_collect_through_a_ghes_api_prefix(tmp_path):
    with FakeGitHub(prefix="/api/v3", token="secret") as server:
        server.add_repo(REPO)
        sha = server.add_commit(REPO, files_v1())
        add_runs(server, 3, sha)
        result = run(server, tmp_path)
        assert result.exit_code == 0, result.output
        assert not server.requests_to("__outside_prefix__")
    assert len(read(tmp_path, "runs")) == 3


# ---- the fake server itself, through PyGithub ------------------------------------------------
def test_fake_github_serves_pygithub_under_a_ghes_prefix():
    from github import Auth, Github, GithubException

    with FakeGitHub(prefix="/api/v3", token="t") as server:
        server.add_repo(REPO)
        base = server.add_commit(REPO, {"a.txt": "1", CI: CI_V1}, branch="main")
        head = server.add_commit(REPO, {"a.txt": "2", "b.txt": "x", CI: CI_V1})
        server.add_pull(REPO, 7, head_sha=head, base_sha=base)
        g = Github(base_url=server.url, auth=Auth.Token("t"), retry=None, per_page=2,
                   seconds_between_requests=None, seconds_between_writes=None)  # fmt: skip
        repo = g.get_repo(REPO)
        assert repo.default_branch == "main"
        pr = repo.get_pull(7)
        assert [(f.filename, f.status) for f in pr.get_files()] == [
            ("a.txt", "modified"), ("b.txt", "added")]  # fmt: skip
        assert repo.get_contents(CI, ref=pr.head.sha).decoded_content.decode() == CI_V1
        assert repo.get_contents("a.txt").decoded_content == b"1"  # default branch
        assert [c.name for c in repo.get_contents("", ref=head)] == [".github", "a.txt", "b.txt"]
        for i in range(3):
            pr.create_issue_comment(f"note {i}")
        sticky = pr.create_issue_comment("<!-- laser-ci --> v1")
        assert [c.body for c in pr.get_issue_comments()][-1] == sticky.body  # paginated
        sticky.edit("<!-- laser-ci --> v2")
        assert server.comments(REPO, 7)[-1]["body"] == "<!-- laser-ci --> v2"
        assert server.requests_to(r"/issues/comments/\d+$", "PATCH")[0].body == {
            "body": "<!-- laser-ci --> v2"}  # fmt: skip
        server.inject_forbidden(r"/issues/7/comments", method="POST")
        with pytest.raises(GithubException) as e:
            pr.create_issue_comment("read-only token")
        assert e.value.status == 403
        assert e.value.data["message"] == "Resource not accessible by integration"
        assert g.get_user().login == "github-actions[bot]"
        assert g.get_rate_limit().resources.core.limit == 5000
        links = [r for r in server.requests_to("/comments$") if r.query.get("page") == "2"]
        assert links  # PyGithub followed the Link header
        bad = Github(base_url=server.url, auth=Auth.Token("nope"), retry=None)
        with pytest.raises(GithubException) as e:
            bad.get_repo(REPO)
        assert e.value.status == 401


def test_re_runs_rewrite_the_runs_file_once_a_call_and_a_kill_keeps_one_row(tmp_path, monkeypatch):
    """A merge during a call appends (a re-run's new row beside the old); the call's last
    merge keeps each run's last row. The runs file was rewritten at every merge that held a
    re-run (70 s for 500 runs on a 20,000-run folder). A call killed between the two leaves
    both rows; the next call keeps the newer."""
    def row(i: int, attempt: int) -> dict:
        return {"id": f"r{i}", "repo": "o/r", "attempts": attempt, "files": {}}

    store = collect_mod.Store(tmp_path)
    for i in range(30):
        store.add_run(row(i, 1), {})
    store.merge()
    store.close()
    rewrites = []
    real = collect_mod.Store._fold

    def counting(self, name, lines, final=True):
        if name == "runs" and self.replaced and final:
            rewrites.append(len(lines))
        return real(self, name, lines, final)

    monkeypatch.setattr(collect_mod.Store, "_fold", counting)
    store = collect_mod.Store(tmp_path)
    for i in range(0, 30, 5):  # six re-runs over three merges of 25 (two periodic, one final)
        store.add_run(row(i, 2), {})
    for i in range(30, 74):
        store.add_run(row(i, 1), {})
    store.close()  # killed before its last merge: staging stays for recovery
    assert rewrites == []  # the periodic merges only appended
    runs = read(tmp_path, "runs")
    assert len(runs) > len({r["id"] for r in runs})  # both rows of a re-run, for now
    store = collect_mod.Store(tmp_path)  # the next call recovers and keeps the newer rows
    store.merge()
    store.close()
    runs = read(tmp_path, "runs")
    assert len(runs) == len({r["id"] for r in runs}) == 74
    assert {r["id"]: r["attempts"] for r in runs}["r5"] == 2 and len(rewrites) >= 1
