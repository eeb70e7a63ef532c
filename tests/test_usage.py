"""Usage records read back (artifacts, collected rows) and the sizing advice from them."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from click.testing import CliRunner
from fakegithub import FakeGitHub

import laser_ci.github.collect as collect_mod
from laser_ci.github.collect import collect
from laser_ci.github.usage_records import match_records, record_from_zip
from laser_ci.predictors.base import Runtime
from laser_ci.sizing.cost import MonthlyRuns
from laser_ci.sizing.runners import resolve_runner
from laser_ci.sizing.usage import (
    NOT_MEASURED,
    predicted_advice,
    predicted_words,
    usage_advice,
    usage_from_rows,
    usage_line,
    usage_summary,
    with_usage,
)

GB = 1e9
REPO = "octo/app"
CI = ".github/workflows/ci.yml"
CI_TEXT = "name: CI\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n"


def record(peak_gb: float = 1.9, cores: float = 0.8, total_gb: float = 8.0, **kw: Any) -> dict:
    rec = {"kind": "laser-ci-usage", "version": 1, "samples": 60, "interval_s": 1,
           "cpu_cores_mean": cores / 2, "cpu_cores_p95": cores,
           "memory_baseline_bytes": 0.6 * GB, "memory_peak_bytes": peak_gb * GB,
           "memory_total_bytes": total_gb * GB, "disk_used_baseline_bytes": 60 * GB,
           "disk_used_peak_bytes": 62 * GB, "disk_free_min_bytes": 80 * GB,
           "disk_total_bytes": 145 * GB, "sampler_cpu_cores": 0.001,
           "runner_name": "GitHub Actions 2", "run_attempt": 1,
           "started_at": "2024-05-01T10:00:09Z"}
    rec.update(kw)
    return rec


def zipped(rec: dict | bytes, name: str = "usage.json") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(name, rec if isinstance(rec, bytes) else json.dumps(rec))
    return buf.getvalue()


def test_record_from_zip_reads_only_records() -> None:
    assert record_from_zip(zipped(record()))["memory_peak_bytes"] == 1.9 * GB
    assert record_from_zip(zipped(record(), "other.json")) is None
    assert record_from_zip(zipped(b"{not json")) is None
    assert record_from_zip(zipped({"kind": "something-else", "samples": 3})) is None
    assert record_from_zip(b"PK\x03\x04 broken") is None


def test_records_match_the_job_on_their_runner_and_time() -> None:
    jobs = [
        {"name": "a", "runner_name": "GitHub Actions 2", "run_attempt": 1,
         "started_at": "2024-05-01T10:00:00Z", "completed_at": "2024-05-01T10:05:00Z"},
        {"name": "b", "runner_name": "GitHub Actions 3", "run_attempt": 1,
         "started_at": "2024-05-01T10:00:00Z", "completed_at": "2024-05-01T10:05:00Z"},
        # a self-hosted runner's second job, later, on the runner of a
        {"name": "c", "runner_name": "GitHub Actions 2", "run_attempt": 1,
         "started_at": "2024-05-01T10:06:00Z", "completed_at": "2024-05-01T10:09:00Z"},
    ]
    ra = record(runner_name="GitHub Actions 2", started_at="2024-05-01T10:00:05Z")
    rc = record(runner_name="GitHub Actions 2", started_at="2024-05-01T10:06:04Z")
    other_attempt = record(runner_name="GitHub Actions 3", run_attempt=2)
    too_late = record(runner_name="GitHub Actions 3", started_at="2024-05-01T11:00:00Z")
    assert match_records(jobs, [rc, other_attempt, ra, too_late]) == {0: ra, 2: rc}
    # two jobs on one runner name at one time: the record's job id (GITHUB_JOB) decides
    same = [dict(jobs[0], name="lint"), dict(jobs[0], name="test (3.12)")]
    rec = record(job="test")
    assert match_records(same, [rec]) == {1: rec}


def test_summary_p50_p90_and_derived_measures() -> None:
    s = usage_summary([record(peak_gb=g) for g in (1.0, 2.0, 3.0, 4.0, 5.0)])
    assert s["measured_runs"] == 5
    assert s["memory_peak_bytes"] == {"p50": 3 * GB, "p90": 4.6 * GB}
    assert s["memory_above_baseline_bytes"]["p50"] == 2.4 * GB
    assert s["disk_added_bytes"] == {"p50": 2 * GB, "p90": 2 * GB}
    assert s["disk_free_min_bytes"]["min"] == 80 * GB
    assert usage_summary([]) == {"measured_runs": 0}


def test_collected_rows_give_usage_per_job_name() -> None:
    rows = [{"jobs": [{"name": "test", "usage": record()}, {"name": "lint"},
                      {"name": "test", "usage": record(peak_gb=9)}]},  # duplicate name: first
            {"jobs": [{"name": "test", "usage": {"kind": "laser-ci-usage"}}]},  # no samples
            {"jobs": [{"name": "test", "usage": record(peak_gb=3)}]}]
    got = usage_from_rows(rows)
    assert list(got) == ["test"]
    assert [r["memory_peak_bytes"] for r in got["test"]] == [1.9 * GB, 3 * GB]


RT = Runtime(150.0, 180.0, 360.0)


def test_a_small_job_fits_ubuntu_slim_and_saves_money() -> None:
    runner = resolve_runner("ubuntu-latest", visibility="private")
    s = usage_summary([record(), record(peak_gb=1.5, cores=0.6), record(peak_gb=1.8)])
    [a] = usage_advice(s, runner, RT, visibility="private",
                       monthly=MonthlyRuns(300.0, "history"))
    assert a.kind == "usage" and a.suggested["runs-on"] == "ubuntu-slim"
    # 3 billable minutes a run x ($0.006 - $0.002) x 300 runs = $3.60 a month
    assert a.suggested["usd_per_month"] == pytest.approx(3.6)
    assert a.message.endswith("fits `ubuntu-slim` (1 vCPU, 5 GB), saving about $3.60 a month "
                              "(300 runs a month).")
    # with Docker the container runner is out: the next cheapest is the runner it has
    assert usage_advice(s, runner, RT, visibility="private", docker=True) == []
    # free in a public repository: nothing to save
    assert usage_advice(s, resolve_runner("ubuntu-latest", visibility="public"), RT,
                        visibility="public") == []
    # too long for ubuntu-slim's 15 minutes
    assert usage_advice(s, runner, Runtime(600, 800, 1000), visibility="private") == []


def test_near_the_memory_limit_warns_and_names_a_larger_runner() -> None:
    runner = resolve_runner("ubuntu-latest", visibility="private")
    s = usage_summary([record(peak_gb=7.6, cores=1.9), record(peak_gb=7.8, cores=2.0)])
    [a] = usage_advice(s, runner, RT, visibility="private", monthly=MonthlyRuns(100.0, "x"))
    assert "near the machine's memory" in a.message and "7.8 GB of 8.0 GB" in a.message
    assert a.suggested["runs-on"] != "ubuntu-latest" and a.suggested["usd_per_month"] > 0
    assert a.message.endswith(" GB) holds it, for about "
                              f"${a.suggested['usd_per_month']:.2f} a month more (100 runs a month).")


def test_disk_nearly_full_warns() -> None:
    runner = resolve_runner("ubuntu-latest", visibility="private")
    s = usage_summary([record(disk_free_min_bytes=1.2 * GB, cores=1.9, peak_gb=5)])
    [a] = usage_advice(s, runner, RT, visibility="private")
    assert a.message.startswith("disk nearly full: as little as 1.2 GB of 145.0 GB free")


def test_without_measurements_the_runner_advice_says_so() -> None:
    from laser_ci.sizing.advice import Advice

    advice = [Advice("slim", "short job"), Advice("timeout", "set one")]
    out = with_usage(advice, {"measured_runs": 0})
    assert out[0].assumptions == (NOT_MEASURED,) and out[1].assumptions == ()
    assert with_usage(advice, usage_summary([record()])) == advice
    assert usage_advice({"measured_runs": 0}, resolve_runner("ubuntu-latest"), RT,
                        visibility="private") == []


def test_collect_stores_each_jobs_usage_record(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(collect_mod, "_sleep", lambda s: None)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    with FakeGitHub(token="secret") as gh:
        gh.add_repo(REPO)
        sha = gh.add_commit(REPO, {CI: CI_TEXT}, branch="main")
        run = gh.add_run(REPO, workflow_path=CI, head_sha=sha, created_at="2024-05-01T10:00:00Z",
                         jobs=[{"name": "test", "started_at": "2024-05-01T10:00:00Z",
                                "completed_at": "2024-05-01T10:05:00Z"},
                               {"name": "lint", "started_at": "2024-05-01T10:00:00Z",
                                "completed_at": "2024-05-01T10:01:00Z",
                                "runner_name": "GitHub Actions 9"}])
        gh.add_artifact(REPO, run["id"], "laser-ci-usage-1-test-0a1b2c3d", zipped(record()))
        gh.add_artifact(REPO, run["id"], "coverage", b"PK not ours")
        gh.add_artifact(REPO, run["id"], "laser-ci-usage-1-lint-99999999",
                        zipped(record(runner_name="GitHub Actions 9")), expired=True)
        out = CliRunner().invoke(collect, [REPO, "-o", str(tmp_path), "--token", "secret",
                                           "--api-url", gh.url])
        assert out.exit_code == 0, out.output
        assert f"{REPO}: 1 new runs, 1 new files, 1 job runs with usage records" in out.output
        import gzip

        with gzip.open(tmp_path / "runs.jsonl.gz", "rt") as fh:
            [row] = [json.loads(line) for line in fh if line.strip()]
        jobs = {j["name"]: j for j in row["jobs"]}
        assert jobs["test"]["usage"]["memory_peak_bytes"] == 1.9 * GB
        assert "usage" not in jobs["lint"]  # its artifact expired
        # only ours was downloaded, through the redirect to storage (PyGithub sends the token
        # only to the API's host: the fake's storage shares it, GitHub's does not)
        assert len(gh.requests_to(r"^/_artifact_blobs/")) == 1
        # and estimate --history reads it back
        from laser_ci.estimate import load_history

        index = load_history(tmp_path)
        assert [r["memory_peak_bytes"] for r in index.usage[(CI, "test")]] == [1.9 * GB]


@pytest.mark.skipif(__import__("shutil").which("node") is None, reason="needs node")
def test_the_measure_steps_zip_reads_back(tmp_path) -> None:
    """The zip the measure step uploads (measure/lib.js zipStored) is the one the readers
    open (record_from_zip)."""
    import subprocess
    from pathlib import Path

    lib = Path(__file__).resolve().parent.parent / "measure" / "lib.js"
    script = ("const lib = require(process.argv[1]);"
              "process.stdout.write(lib.zipStored([['usage.json', Buffer.from(process.argv[2])]])"
              ".toString('base64'));")
    out = subprocess.run(["node", "-e", script, str(lib), json.dumps(record())],
                         capture_output=True, text=True, check=True, timeout=60)
    import base64

    rec = record_from_zip(base64.b64decode(out.stdout))
    assert rec is not None and rec["memory_peak_bytes"] == 1.9 * GB


PREDICTED = {"model": "laser-lm", "cpu_cores": {"p50": 1.2, "p90": 1.9},
             "memory_gb": {"p50": 5.1, "p90": 6.4}, "disk_gb": {"p50": 0.4, "p90": 0.9}}


@pytest.mark.parametrize(("mem_p90", "measured", "advised"), [
    (6.4, 0, False),  # of ubuntu-latest's 16 GB (public): not near
    (14.0, 0, True),
    (13.6, 0, True),  # 85% of 16 GB
    (13.5, 0, False),
    (14.0, 3, False),  # measured runs say more than a prediction
])
def test_a_predicted_peak_near_the_runners_memory_asks_to_measure(mem_p90, measured,
                                                                  advised) -> None:
    runner = resolve_runner("ubuntu-latest", visibility="public")
    assert runner.ram_gb == 16
    summary = {"measured_runs": measured,
               "predicted": {**PREDICTED, "memory_gb": {"p50": 5.0, "p90": mem_p90}}}
    got = predicted_advice(summary, runner)
    assert bool(got) == advised
    if got:
        (a,) = got
        assert a.kind == "usage" and a.suggested["rule"] == "predicted-near-memory"
        assert a.assumptions == (predicted_words(summary),)


def test_predicted_usage_in_words_and_in_the_usage_line() -> None:
    summary = {"measured_runs": 0, "predicted": PREDICTED}
    assert predicted_words(summary) == (
        "predicted, not measured: up to 1.9 cores, 6.4 GB of memory, 0.9 GB of disk added "
        "(p90 of `laser-lm`, learned from this repository's measured runs)")
    assert predicted_words({"measured_runs": 0}) == ""
    from laser_ci.sizing.advice import Advice

    runner_advice = Advice("runner", "x", {}, ())
    (a,) = with_usage([runner_advice], summary)
    assert a.assumptions == (NOT_MEASURED, predicted_words(summary))
    jobs = [{"usage": summary}, {"usage": {"measured_runs": 0}}]
    assert usage_line(jobs) == ("Usage: **1 of 2 jobs predicted** by the model learned from "
                                "this repository's measured runs")
    assert usage_line([{"usage": {"measured_runs": 0}}]) == ""
