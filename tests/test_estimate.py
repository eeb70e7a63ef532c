"""``estimate_workflows``: alternative-runner predictions for the sizing advice are batched;
and ``laser-ci estimate``'s cost figures where a price is unknown."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from laser_ci import estimate
from laser_ci.cli import main
from laser_ci.estimate import estimate_workflows
from laser_ci.predictors.base import Runtime
from laser_ci.workflows.parse import read_workflows

WORKFLOW = """
on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps: [{run: ruff check .}]
  build:
    runs-on: ubuntu-latest
    steps: [{run: make -j all}]
  mac:
    runs-on: macos-latest
    steps: [{run: xcodebuild}]
  big:
    runs-on: ubuntu-latest-8-cores
    steps: [{run: make test}]
"""
SECONDS = {"lint": 40.0, "build": 2400.0, "mac": 1800.0, "big": 900.0}


class _Recording:
    """Runtime by job name, faster on bigger runners; records every call."""

    name = "recording"
    runner_sizes = True  # its runtimes on other runner sizes are predictions

    def __init__(self) -> None:
        self.calls: list[int] = []

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        self.calls.append(len(texts))
        out = []
        for text in texts:
            lines = text.splitlines()
            job = next(x for x in lines if x.startswith("job: ")).removeprefix("job: ")
            runs_on = next(x for x in lines if x.startswith("runs-on: "))
            s = SECONDS[job] / (2.0 if "cores" in runs_on else 1.0)
            out.append(Runtime(s * 0.8, s, s * 1.3))
        return out


def _run(monkeypatch: pytest.MonkeyPatch, batched: bool) -> tuple[dict, list[int]]:
    if not batched:
        monkeypatch.setattr(estimate._OtherRunners, "gather", lambda self: self.asked.clear())
    workflows, errors = read_workflows({"w.yml": WORKFLOW}, ["w.yml"])
    predictor = _Recording()
    return estimate_workflows(workflows, errors, predictor), predictor.calls


def test_other_runner_predictions_come_in_one_batch_with_the_same_result(
        monkeypatch: pytest.MonkeyPatch) -> None:
    batched, calls = _run(monkeypatch, batched=True)
    with monkeypatch.context() as m:
        one_by_one, calls_one = _run(m, batched=False)
    assert batched == one_by_one
    asked = sum(calls_one) - calls_one[0]
    assert asked >= 2  # the advice did ask about other runners
    assert calls == [len(SECONDS), asked]  # the jobs, then every alternative at once
    assert all(c == 1 for c in calls_one[1:])
    predicted = [row for job in batched["workflows"][0]["jobs"] for a in job["advice"]
                 for row in (a.get("suggested") or {}).get("alternatives", [])
                 if "predicted_p50_s" in row]
    assert predicted, batched["workflows"][0]["jobs"]


class _SizeBlind(_Recording):
    """The same runtimes, from a predictor that does not claim to know runner sizes (as
    none of the shipped ones does)."""

    runner_sizes = False


def test_a_predictor_blind_to_sizes_is_not_asked_about_other_runners() -> None:
    workflows, errors = read_workflows({"w.yml": WORKFLOW}, ["w.yml"])
    predictor = _SizeBlind()
    result = estimate_workflows(workflows, errors, predictor)
    assert predictor.calls == [len(SECONDS)]  # the jobs only
    jobs = {job["name"]: job for job in result["workflows"][0]["jobs"]}
    [advice] = [a for a in jobs["build"]["advice"] if a["kind"] == "runner"]
    rows = advice["suggested"]["alternatives"]
    assert rows and not any("predicted_p50_s" in row for row in rows)
    assert "not predicted" in advice["message"] and "runs-on" not in advice["suggested"]
    assert {row["label"] for row in rows} >= {"ubuntu-latest-4-cores"}
    assert estimate.SIZES_NOT_PREDICTED in result["assumptions"]
    # the same predictor claiming sizes is asked, and its figures are quoted
    sized = estimate_workflows(workflows, errors, _Recording())
    assert estimate.SIZES_NOT_PREDICTED not in sized["assumptions"]
    [advice] = [a for a in {j["name"]: j for j in sized["workflows"][0]["jobs"]}["build"]["advice"]
                if a["kind"] == "runner"]
    assert any("predicted_p50_s" in row for row in advice["suggested"]["alternatives"])


def test_no_shipped_predictor_claims_runner_sizes() -> None:
    from laser_ci.predictors import baselines
    from laser_ci.predictors.base import predicts_runner_sizes
    from laser_ci.predictors.lm import LaserModel

    for cls in [*baselines.BASELINES.values(), LaserModel]:
        assert not predicts_runner_sizes(cls), cls


# --- the CLI: unknown costs ---------------------------------------------------------------

UNPRICED = """name: Unpriced
on: push
jobs:
  expr:
    runs-on: ${{ github.event.inputs.os }}
    steps: [{run: make}]
  custom:
    runs-on: my-custom-runner
    steps: [{run: make}]
"""
PARTLY = """name: Partly
on: push
jobs:
  hosted:
    runs-on: ubuntu-latest
    steps: [{run: make}]
  custom:
    runs-on: my-custom-runner
    steps: [{run: make}]
"""


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, ["estimate", *args])


@pytest.mark.usefixtures("fake_predictor")
def test_an_unknown_cost_is_not_shown_as_zero(tmp_path: Path) -> None:
    """A workflow whose jobs have no price (a runner set at run time, a label no catalog
    knows) costs ``?`` per run and JSON ``null``, not $0.000; a total that leaves jobs out
    says how many."""
    (tmp_path / "unpriced.yml").write_text(UNPRICED)
    (tmp_path / "partly.yml").write_text(PARTLY)
    table = _cli(str(tmp_path))
    assert table.exit_code == 0, table.output
    totals = [x for x in table.stdout.splitlines() if x.startswith("  critical path")]
    assert len(totals) == 2 and "$0.000" not in table.stdout
    partly, unpriced = totals  # files in name order
    assert partly.endswith("· cost $0.006 per run (1 job without a price not counted)")
    assert unpriced.endswith("· cost ? per run (no job has a known price)")
    result = json.loads(_cli("--format", "json", str(tmp_path)).stdout)
    by_name = {w["name"]: w for w in result["workflows"]}
    assert [j["cost_usd"] for j in by_name["Unpriced"]["jobs"]] == [None, None]
    assert by_name["Unpriced"]["cost_usd"] is None
    assert by_name["Unpriced"]["cost"]["range_usd"] is None
    assert by_name["Unpriced"]["cost"]["unknown_jobs"] == 2
    assert by_name["Partly"]["cost_usd"] == 0.006 and result["totals"]["cost_usd"] == 0.006
    (tmp_path / "partly.yml").unlink()
    result = json.loads(_cli("--format", "json", str(tmp_path)).stdout)
    assert result["totals"]["cost_usd"] is None and result["totals"]["cost"]["unknown_jobs"] == 2


NIGHTLY_AND_PUSH = """name: Nightly
on:
  push:
  schedule: [{cron: "0 0 * * *"}]
jobs:
  hosted:
    runs-on: ubuntu-latest
    steps: [{run: make}]
"""


@pytest.mark.usefixtures("fake_predictor")
def test_runs_per_month_are_shown_and_carried(tmp_path: Path) -> None:
    """`--runs-per-month N`: the table's totals line shows the monthly projection, and the
    JSON carries the number used, per workflow and in the totals (2.5, not 2)."""
    (tmp_path / "partly.yml").write_text(PARTLY)
    table = _cli(str(tmp_path), "--runs-per-month", "100")
    assert table.exit_code == 0, table.output
    (totals,) = [x for x in table.stdout.splitlines() if x.startswith("  critical path")]
    assert totals.endswith("· cost $0.006 per run (1 job without a price not counted)"
                           " · $0.60 per month (100 runs)")
    result = json.loads(_cli("--format", "json", str(tmp_path), "--runs-per-month", "2.5").stdout)
    for cost in (result["workflows"][0]["cost"], result["totals"]["cost"]):
        assert cost["runs_per_month"] == 2.5 and cost["monthly_cost_usd"] == 0.015
        assert cost["runs_per_month_basis"] == "given: 2.5 runs per month"
    # known without being given: a schedule, a lower bound when other triggers run it too
    (tmp_path / "partly.yml").unlink()
    (tmp_path / "nightly.yml").write_text(NIGHTLY_AND_PUSH)
    table = _cli(str(tmp_path))
    assert "· cost $0.006 per run · at least $0.18 per month (at least 30.44 runs)" in table.stdout
    result = json.loads(_cli("--format", "json", str(tmp_path)).stdout)
    cost = result["workflows"][0]["cost"]
    assert cost["runs_per_month"] == 30.44 and cost["runs_per_month_lower_bound"] is True


def _estimate_json(tmp_path: Path, workflow: str) -> dict[str, Any]:
    """``laser-ci estimate --format json`` on one workflow file, ``ci.yml``; exit 0."""
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "ci.yml").write_text(workflow)
    result = CliRunner().invoke(main, ["estimate", str(wf), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_an_if_in_a_block_scalar_with_expression_is_a_string_so_the_job_runs(
        tmp_path: Path, fake_predictor: Any) -> None:
    # `if: >` keeps a line break after `${{ }}`: GitHub reads format('{0}\n', false), a
    # non-empty string, so the job runs on every trigger (actionlint#272); `>-` would not.
    out = _estimate_json(
        tmp_path, "on: pull_request\njobs:\n"
        "  folded:\n    if: >\n      ${{ github.event_name == 'push' }}\n"
        "    runs-on: ubuntu-latest\n    steps: [{run: make}]\n"
        "  stripped:\n    if: >-\n      ${{ github.event_name == 'push' }}\n"
        "    runs-on: ubuntu-latest\n    steps: [{run: make}]\n")
    jobs = {j["id"]: j for w in out["workflows"] for j in w["jobs"]}
    assert jobs["folded"].get("runs_on_events") is None
    assert jobs["stripped"]["runs_on_events"] == []
    # and the folded one is told how to write what it means
    assert [a["kind"] for a in jobs["folded"]["advice"]][:1] == ["if"]
    assert "`>-`" in jobs["folded"]["advice"][0]["message"]


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_a_lone_surrogate_in_a_job_name_is_shown_as_a_replacement_character(
        tmp_path: Path, fake_predictor: Any, fmt: str) -> None:
    # YAML's "\uD800" escape makes a lone surrogate, which UTF-8 cannot hold: every
    # output (and the PR comment, which measures its UTF-8 size) stopped on it.
    from laser_ci.report.comment import render_pr_comment

    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "ci.yml").write_text('on: push\njobs:\n  a:\n    name: "x\\uD800y \\uD83D\\uDE00"\n'
                               "    runs-on: ubuntu-latest\n    steps: [{run: make}]\n")
    result = CliRunner().invoke(main, ["estimate", str(wf), "--format", fmt])
    assert result.exit_code == 0, result.output
    assert "x\ufffdy \U0001f600" in (result.stdout if fmt != "json" else
                                     json.loads(result.stdout)["workflows"][0]["jobs"][0]["name"])
    if fmt == "json":
        assert "x\ufffdy" in render_pr_comment(json.loads(result.stdout), None, ["ci.yml"])


def test_a_job_calling_a_remote_workflow_gets_no_timeout_or_runner_advice(
        tmp_path: Path, fake_predictor: Any) -> None:
    # `timeout-minutes` is not allowed on a job that calls a reusable workflow (its keys:
    # name, uses, with, secrets, strategy, needs, if, permissions, concurrency); the advice
    # told such a job to set it
    (job,) = _estimate_json(tmp_path, "on: push\njobs:\n  remote:\n    uses: "
                            "octo/shared/.github/workflows/build.yml@v1\n")["workflows"][0]["jobs"]
    assert job["remote_workflow"] and job["advice"] == []


def test_a_step_whose_if_github_reads_as_text_gets_advice(
        tmp_path: Path, fake_predictor: Any) -> None:
    # `if: contains(${{ matrix.os }}, 'ubuntu')` is format() of its parts, a non-empty
    # string: the step always runs (the data has this in 18 of 339 repositories)
    (job,) = _estimate_json(
        tmp_path,
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n"
        "    steps:\n      - name: Linux only\n        if: contains(${{ runner.os }}, 'Linux')\n"
        "        run: make\n      - if: ${{ runner.os == 'Linux' }}\n        run: make\n"
        "      - if: |\n          ${{ false }}\n        uses: actions/cache@v4\n",
    )["workflows"][0]["jobs"]
    (advice,) = [a for a in job["advice"] if a["kind"] == "if"]
    assert advice["suggested"] == {"steps": ["Linux only", "actions/cache@v4"]}
    assert "`Linux only`" in advice["message"] and "always runs" in advice["message"]
