"""Every job a large repository runs, under the name GitHub shows, predicted from its own history.

The fixture ``tests/fixtures/repos/runtime-matrix`` has test shards from a matrix a script
computes at run time (``Unit Test${{ matrix.platform && '' }}`` calling a reusable workflow
named ``${{ inputs.test-name }}``), reusable workflows nested three deep, an e2e matrix
listed at run time and workflows that only run when called. ``tests/runtime_history.py``
writes a history for it in the format ``laser-ci collect`` writes (per-job times).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from runtime_history import WORKFLOW, latest_names, make_runs, write_folder

import laser_ci.predictors.choice
from laser_ci.estimate import estimate, estimate_paths, load_history
from laser_ci.predictors.base import Runtime
from laser_ci.report.comment import COMMENT_LIMIT, render_pr_comment, render_summary
from laser_ci.report.render import render
from laser_ci.text.history import RunJob
from laser_ci.workflows.model import JobInstance, NameHole, Workflow
from laser_ci.workflows.parse import read_paths
from laser_ci.workflows.runtime_matrix import expand

ROOT = Path(__file__).parent / "fixtures" / "repos" / "runtime-matrix"
WORKFLOWS = str(ROOT / ".github" / "workflows")
_MEDIAN = re.compile(r"^history: n=\d+ median=(\S+)", re.MULTILINE)


class MedianPredictor:
    """Deterministic: the history block's median when there is one, else by text length."""

    name = "median-test"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        self.texts += texts
        out = []
        for t in texts:
            m = _MEDIAN.search(t)
            p50 = float(m.group(1)) if m else 30.0 + len(t) / 10
            out.append(Runtime(0.5 * p50, p50, 2 * p50))
        return out


@pytest.fixture(scope="module")
def runs() -> list[dict]:
    return make_runs(days=21)  # the newest run is the first after the `api` suite's split


@pytest.fixture(scope="module")
def folder(runs, tmp_path_factory) -> Path:
    return write_folder(tmp_path_factory.mktemp("history") / "collected", runs)


def _estimate(history=None, predictor=None) -> dict:
    return estimate_paths([WORKFLOWS], repo_root=str(ROOT), predictor=predictor or MedianPredictor(),
                          history=history)


def _jobs(result: dict, path: str = WORKFLOW) -> list[dict]:
    return next(w for w in result["workflows"] if w["path"] == path)["jobs"]


# --- reading: names, groups and what only the run knows ------------------------------------


def test_names_as_github_renders_them_and_what_only_the_run_knows() -> None:
    wfs, errors = read_paths([WORKFLOWS], str(ROOT))
    assert errors == []
    ci = next(w for w in wfs if w.path == WORKFLOW)
    by_id = {j.id: j for j in ci.jobs}
    unit = by_id["unit/test"]
    # `matrix.platform && ''` renders as nothing; the called job's name is the caller's
    # `with:` from a matrix computed at run time
    assert unit.name_parts[0] == "Unit Test / " and all(
        isinstance(p, NameHole) for p in unit.name_parts[1::2])
    assert unit.run_time == {
        "name": ("matrix.suite", "matrix.shard", "matrix.platform", "matrix.python"),
        "runs-on": ("matrix.platform",), "matrix": ("needs.plan.outputs.matrix",)}
    assert unit.dynamic_matrix and unit.called_via == (".github/workflows/_unit.yml",)
    # inputs known from the caller: names and runners of the nested workflows
    assert [j.name for j in ci.jobs if j.id == "integration/build"] == [
        "integration (x64) / ubuntu-x64", "integration (arm64) / ubuntu-arm64"]
    assert by_id["integration/build"].runs_on == "ubuntu-latest"
    assert by_id["integration/build"].group == "integration (…) / ubuntu-…"
    suite = by_id["integration/e2e/suite"]
    assert suite.name_parts == ("integration (arm64) / e2e / suite",
                                NameHole(refs=("needs.suites.outputs.list",), suffix=True))
    assert suite.called_via == (".github/workflows/_platform.yml", ".github/workflows/_e2e.yml")
    # `if: github.event_name == 'push'` on a push and pull_request workflow
    assert by_id["docs"].events == ("push",) and by_id["lint"].events is None


def test_without_history_no_row_shows_a_raw_expression(tmp_path) -> None:
    result = _estimate()
    json_text = json.dumps(result)
    wf_json = {w["path"]: w for w in result["workflows"]}
    # JSON keeps the workflows that only run when called, flagged
    unit = wf_json[".github/workflows/_unit.yml"]
    assert unit["called_only"] and unit["called_by"] == [WORKFLOW]
    assert wf_json[".github/workflows/_e2e.yml"]["called_by"] == [
        ".github/workflows/_platform.yml", WORKFLOW]
    assert "${{ inputs.test-name }}" in json_text  # as written, for tools
    ci = {j["id"]: j for j in _jobs(result)}
    assert ci["unit/test"]["label"] == "Unit Test / … … on …/…"
    assert ci["unit/test"]["run_time"]["matrix"] == ["needs.plan.outputs.matrix"]
    assert ci["docs"]["runs_on_events"] == ["push"]

    head = {"workflows": result["workflows"], "predictor": "x", "errors": []}
    outputs = {
        "table": render(result, "table"),
        "markdown": render(result, "markdown"),
        "summary": render_summary(result),
        "comment": render_pr_comment(head, {"workflows": []}, [WORKFLOW]),
    }
    for kind, text in outputs.items():
        assert "${{" not in text, kind
        # called-only workflows appear under their callers, not on their own
        assert "_unit.yml" not in text and "(Unit)" not in text, kind
        assert "Unit Test / … … on …/…" in text, kind
        assert "computed at run time" in text, kind  # said in words
        assert "`matrix.platform`" in text, kind
    assert "note: docs: runs only on `push`" in outputs["table"]
    assert "set at run time" in outputs["table"]


def test_a_called_workflow_estimated_alone_is_still_listed() -> None:
    result = estimate_paths([WORKFLOWS + "/_unit.yml"], repo_root=str(ROOT),
                            predictor=MedianPredictor())
    table = render(result, "table")
    assert "(Unit)" in table and "${{" not in table
    assert "…  " in table and "known only at run time: name (`inputs.test-name`)" in table


# --- history: every instance under its exact name ------------------------------------------


def test_history_folder_lists_every_job_each_run_ran(folder, runs) -> None:
    index = load_history(folder)
    listed = index.runs_of(WORKFLOW)
    assert len(listed) == len(runs)
    assert [j.name for j in listed[-1]] == latest_names(runs)
    cancelled = "Unit Test / api 5/5 on windows-latest/current"
    assert next(j for j in listed[-1] if j.name == cancelled).seconds is None
    past = index.for_job(WORKFLOW, "Unit Test / pkg 3/12 on macos-latest/current")
    assert len(past.runtimes) == len(runs)
    assert past.previous_text is not None and "job: Unit Test / pkg 3/12 on macos" in \
        past.previous_text
    assert index.for_job(WORKFLOW, "Unit Test / api 1/5 on ubuntu-latest/current").runtimes \
        == (float(next(j["run_time_s"] for j in runs[-1]["jobs"]
                       if j["name"] == "Unit Test / api 1/5 on ubuntu-latest/current")),)


def test_every_job_of_the_latest_run_is_predicted_under_its_exact_name(folder, runs,
                                                                       monkeypatch) -> None:
    predictor = MedianPredictor()
    # the warm texts are asked too (they are where a job's own runs give no figure): their
    # history blocks are checked below
    monkeypatch.setattr("laser_ci.estimate._own_rule", lambda *_a: {})
    result = _estimate(load_history(folder), predictor)
    jobs = _jobs(result)
    names = [j["name"] for j in jobs]
    assert set(latest_names(runs)) <= set(names)
    assert len(names) == len(set(names)) == len(latest_names(runs))
    by_name = {j["name"]: j for j in jobs}
    shard = by_name["Unit Test / pkg 3/12 on macos-latest/current"]
    assert shard["expanded"] and shard["history_runs"] == 20 and shard["history_source"] == "own"
    assert shard["runs_on"] == "macos-latest" and shard["runner"]["sku"] == "macos"
    assert "runs-on" not in shard["run_time"] and "name" not in shard["run_time"]
    # warm: from this shard's own runs (the median of the latest half of its successful ones)
    times = [j["run_time_s"] for r in runs for j in r["jobs"] if j["name"] == shard["name"]]
    assert shard["runtime_s"]["p50"] == pytest.approx(sorted(times[-20:])[9:11][0], rel=0.5)
    text = next(t for t in predictor.texts if "job: Unit Test / pkg 3/12 on macos" in t)
    assert "history: n=20" in text and "history-config: unchanged" in text
    # the e2e suites of both callers: a run-time matrix nested three deep
    assert {"integration (x64) / e2e / suite (login)",
            "integration (arm64) / e2e / suite (search)"} <= set(names)
    # new since its latest runs, no time of its own: predicted from its siblings
    new = by_name["Unit Test / api 5/5 on windows-latest/current"]
    assert new["history_source"] == "siblings"
    sibling_text = next(t for t in predictor.texts if "job: Unit Test / api 5/5 on windows" in t)
    assert "history: none" in sibling_text  # its text is its own configuration, cold
    # from the most alike instances (the other api shards on Windows), their successful runs
    alike = [f"Unit Test / api {k}/5 on windows-latest/current" for k in range(1, 5)]
    times = {n: [j["run_time_s"] for r in runs for j in r["jobs"]
                 if j["name"] == n and j.get("conclusion") == "success"] for n in alike}
    medians = sorted(float(np.median(t[-20:])) for t in times.values() if t)
    assert medians and medians[0] * 0.99 <= new["runtime_s"]["p50"] <= medians[-1] * 1.01
    assert new["history_runs"] is None  # no runs of its own: not warm
    assert new["evidence_runs"] == sum(min(len(t), 20) for t in times.values())
    assert new["runtime_s"]["p10"] < new["runtime_s"]["p50"] < new["runtime_s"]["p90"]
    assert by_name["Unit Test / api 1/5 on ubuntu-latest/current"]["history_runs"] == 1
    body = render_summary(result)
    assert "| Unit Test / api 5/5 on windows-latest/current | " in body
    assert f"| new: from {new['evidence_runs']} runs of its matrix siblings |" in body
    # totals count every shard
    assert result["workflows"][-1]["billable_s"] == pytest.approx(
        sum(j["runtime_s"]["p50"] for j in jobs), abs=0.5)


def test_the_cli_reads_the_history_folder(folder, monkeypatch) -> None:
    monkeypatch.setattr(laser_ci.predictors.choice, "load_predictor",
                        lambda model_dir=None: MedianPredictor())
    out = CliRunner().invoke(estimate, [WORKFLOWS, "--repo-root", str(ROOT), "--history",
                                        str(folder), "--format", "json"])
    assert out.exit_code == 0, out.output
    names = [j["name"] for w in json.loads(out.output)["workflows"] for j in w["jobs"]]
    assert "Unit Test / cli 3/3 on ubuntu-latest/current" in names
    table = CliRunner().invoke(estimate, [WORKFLOWS, "--repo-root", str(ROOT), "--history",
                                          str(folder)])
    # the shards are grouped: count, summed median, slowest instance; instances below
    group = next(line for line in table.output.splitlines() if "· 49 instances" in line)
    assert "Unit Test / … … on …/…" in group and "Σ " in group and "slowest " in group
    assert "\n    Unit Test / cli 3/3 on ubuntu-latest/current" in table.output
    markdown = CliRunner().invoke(estimate, [WORKFLOWS, "--repo-root", str(ROOT), "--history",
                                             str(folder), "--format", "markdown"]).output
    assert "| **Unit Test / … … on …/… · 49 instances** (details below) |" in markdown
    assert "<details><summary>Unit Test / … … on …/…: 49 instances</summary>" in markdown
    assert "| Unit Test / cli 3/3 on ubuntu-latest/current | `ubuntu-latest` |" in markdown


def test_a_history_of_other_workflows_is_one_warning(folder, monkeypatch, tmp_path) -> None:
    """--history with no run of any estimated job (another repository's folder): estimated
    cold, and one warning line says so, naming the repository the runs are of."""
    monkeypatch.setattr(laser_ci.predictors.choice, "load_predictor",
                        lambda model_dir=None: MedianPredictor())
    other = tmp_path / ".github" / "workflows"
    other.mkdir(parents=True)
    (other / "build.yml").write_text("on: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n"
                                     "    steps: [{run: make}]\n")
    out = CliRunner().invoke(estimate, [str(other), "--history", str(folder)])
    assert out.exit_code == 0, out.output
    repo = load_history(folder).repo
    assert repo and out.stderr.splitlines() == [
        f"warning: --history {folder}: no job estimated here has a run there (it holds runs "
        f"of {repo} of .github/workflows/ci.yml); estimated without history"]
    used = CliRunner().invoke(estimate, [WORKFLOWS, "--repo-root", str(ROOT), "--history",
                                         str(folder)])
    assert used.exit_code == 0 and used.stderr == ""
    # and estimated without it indeed: another repository's runs calibrate nothing here
    cold = CliRunner().invoke(estimate, [str(other), "--format", "json"])
    again = CliRunner().invoke(estimate, [str(other), "--history", str(folder), "--format",
                                          "json"])
    assert json.loads(again.stdout) == json.loads(cold.stdout)


def test_a_history_of_this_repository_with_nothing_alike_says_every_job_is_cold(
        folder, monkeypatch, tmp_path) -> None:
    """--history of the repository estimated, but no job estimated has runs there or an
    alike job: the history stays (its runs per month), and one line says every job's
    runtime is a cold guess."""
    monkeypatch.setattr(laser_ci.predictors.choice, "load_predictor",
                        lambda model_dir=None: MedianPredictor())
    # the fixture's 50-odd jobs together outweigh the cold guess for nearly any new job
    # (evidence.lent: many lenders add up): no say is enough here, so nothing is alike
    monkeypatch.setattr("laser_ci.predictors.evidence.MIN_SAY", 2.0)
    repo = load_history(folder).repo
    other = tmp_path / ".github" / "workflows"
    other.mkdir(parents=True)
    (other / "pages.yml").write_text("on: push\njobs:\n  p:\n    runs-on: windows-2025\n"
                                     "    steps: [{uses: peaceiris/actions-gh-pages@v4}]\n")
    out = CliRunner().invoke(estimate, [str(other), "--repo", repo, "--history", str(folder),
                                        "--format", "json"])
    assert out.exit_code == 0, out.output
    assert {j["history_source"] for w in json.loads(out.stdout)["workflows"]
            for j in w["jobs"]} == {None}
    assert out.stderr.splitlines() == [
        f"warning: --history {folder}: no job estimated here has a run there or an alike one "
        f"(it holds runs of {repo} of .github/workflows/ci.yml); every job's runtime is "
        "estimated cold"]


@pytest.mark.parametrize("named, used", [("someone/else", False), ("SAME", True)])
def test_a_history_of_another_named_repository_is_not_used(folder, monkeypatch, tmp_path,
                                                            named, used) -> None:
    """--history of a repository other than the one estimated (--repo, the checkout's
    origin): not used at all, one warning naming both; of the same repository (any case):
    used, though no job has runs of its own: a new workflow's job borrows from its alike
    jobs, and no warning says it was estimated without history."""
    monkeypatch.setattr(laser_ci.predictors.choice, "load_predictor",
                        lambda model_dir=None: MedianPredictor())
    repo = load_history(folder).repo
    named = repo.upper() if named == "SAME" else named
    other = tmp_path / ".github" / "workflows"  # a new workflow, its job alike to ci's lint
    other.mkdir(parents=True)
    (other / "lint.yml").write_text(
        "name: Lint\non: [push, pull_request]\njobs:\n  ruff:\n    runs-on: ubuntu-latest\n"
        "    timeout-minutes: 10\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - run: ruff check .\n")
    args = [str(other), "--repo", named, "--format", "json"]
    out = CliRunner().invoke(estimate, [*args, "--history", str(folder)])
    assert out.exit_code == 0, out.output
    cold = json.loads(CliRunner().invoke(estimate, args).stdout)
    sources = {j["history_source"] for w in json.loads(out.stdout)["workflows"]
               for j in w["jobs"]}
    if used:
        assert out.stderr == "" and sources - {None} and json.loads(out.stdout) != cold
    else:
        assert out.stderr.splitlines() == [
            f"warning: --history {folder}: it holds runs of {repo}, not of {named} (the "
            f"repository estimated); estimated without it (--repo {repo} if they are its "
            "runs, as for a fork)"]
        assert json.loads(out.stdout) == cold


def test_names_github_would_reject_still_show_no_raw_expression() -> None:
    from laser_ci.estimate import estimate_files

    files = {"w.yml": """
on: push
jobs:
  a:
    name: "${{ 'unclosed"
    runs-on: [self-hosted, "${{ inputs.pool }}"]
    strategy:
      matrix:
        x: ${{ fromJSON('not json') }}
    steps: [{run: echo}]
  b:
    name: "two ${{ format('{0}', 'lines') }}\\nof text ${{ toJSON(github) }}"
    runs-on: ubuntu-latest
    steps: [{run: echo}]
"""}
    result = estimate_files(files, ["w.yml"], predictor=MedianPredictor())
    for fmt in ("table", "markdown"):
        text = render(result, fmt)
        assert "${{" not in text, text
    assert "from `fromJSON('not json')`" in render(result, "table")
    assert "two lines of text …" in render(result, "table")  # one line


def test_a_job_whose_if_is_false_on_every_trigger_is_shown_but_not_counted() -> None:
    from laser_ci.estimate import estimate_files

    files = {"w.yml": """
on: [push, pull_request]
jobs:
  build:
    runs-on: ubuntu-latest
    steps: [{run: make}]
  nightly-only:
    if: github.event_name == 'schedule'
    runs-on: ubuntu-latest
    steps: [{run: make long}]
  on-push:
    if: ${{ github.event_name == 'push' }}
    runs-on: ubuntu-latest
    steps: [{run: make}]
"""}
    result = estimate_files(files, ["w.yml"], predictor=MedianPredictor())
    (wf,) = result["workflows"]
    jobs = {j["name"]: j for j in wf["jobs"]}
    assert jobs["nightly-only"]["runs_on_events"] == []
    assert jobs["on-push"]["runs_on_events"] == ["push"]
    assert jobs["build"]["runs_on_events"] is None
    counted = jobs["build"]["runtime_s"]["p50"] + jobs["on-push"]["runtime_s"]["p50"]
    assert wf["billable_s"] == pytest.approx(counted, abs=0.1)
    table = render(result, "table")
    assert "note: nightly-only: its `if:` is false on every trigger: it never runs" in table


def test_a_job_that_needs_one_that_never_runs_never_runs_unless_its_if_says_so() -> None:
    """GitHub skips a job whose needs were skipped (the implicit success() is false), unless
    its `if:` calls a status function; the chain is followed."""
    from laser_ci.estimate import estimate_files

    files = {"w.yml": """
on: push
jobs:
  release:
    if: github.event_name == 'release'
    runs-on: ubuntu-latest
    steps: [{run: make release}]
  publish:
    needs: release
    runs-on: ubuntu-latest
    steps: [{run: make publish}]
  announce:
    needs: publish
    if: github.ref == 'refs/heads/main'
    runs-on: ubuntu-latest
    steps: [{run: make announce}]
  report:
    needs: [release]
    if: ${{ always() }}
    runs-on: ubuntu-latest
    steps: [{run: make report}]
"""}
    result = estimate_files(files, ["w.yml"], predictor=MedianPredictor())
    wf = result["workflows"][0]
    events = {j["name"]: j["runs_on_events"] for j in wf["jobs"]}
    assert events == {"release": [], "publish": [], "announce": [], "report": None}
    (report,) = [j for j in wf["jobs"] if j["name"] == "report"]
    assert wf["billable_s"] == pytest.approx(report["runtime_s"]["p50"], abs=0.1)


def test_a_job_after_one_on_a_retired_runner_is_skipped_and_says_why() -> None:
    """A job on a label GitHub retired fails before it starts; a job that needs it is
    skipped (success() is false) unless its `if:` asks for failure() or always(), and the
    note names the need that stopped it, not an `if:` it does not have."""
    from laser_ci.estimate import estimate_files

    files = {"w.yml": """
on: push
jobs:
  old:
    runs-on: ubuntu-18.04
    steps: [{run: make}]
  after-old:
    needs: old
    runs-on: ubuntu-latest
    steps: [{run: make test}]
  then:
    needs: after-old
    runs-on: ubuntu-latest
    steps: [{run: make deploy}]
  on-failure:
    needs: then
    if: failure()
    runs-on: ubuntu-latest
    steps: [{run: make notify}]
  on-success:
    needs: old
    if: success() || github.ref == 'refs/heads/main'
    runs-on: ubuntu-latest
    steps: [{run: make notify}]
"""}
    result = estimate_files(files, ["w.yml"], predictor=MedianPredictor())
    wf = result["workflows"][0]
    jobs = {j["name"]: j for j in wf["jobs"]}
    assert {n: j["runs_on_events"] for n, j in jobs.items()} == {
        "old": None, "after-old": [], "then": [], "on-failure": None, "on-success": None}
    assert jobs["after-old"]["skipped_after"] == "old"
    assert jobs["then"]["skipped_after"] == "after-old"
    assert jobs["after-old"]["advice"] == []  # it never runs: nothing to advise
    counted = sum(jobs[n]["runtime_s"]["p50"] for n in ("on-failure", "on-success"))
    assert wf["billable_s"] == pytest.approx(counted, abs=0.1)
    table = render(result, "table")
    assert ("note: after-old: it needs `old`, which does not run, so GitHub skips it too"
            in table)
    assert "its `if:` is false" not in table


def test_skipping_follows_a_long_chain_and_a_matrix_with_one_retired_leg() -> None:
    """A `needs` chain hundreds of jobs long is followed without a recursion limit (a pull
    request can write one); one retired leg fails its matrix, so the jobs after it are
    skipped, and `failure()` holds at the end of the chain."""
    from laser_ci.estimate import estimate_files

    job = "    runs-on: ubuntu-latest\n    steps: [{run: make}]\n"
    chain = "".join(f"  j{i}:\n    needs: {'legs' if i == 0 else f'j{i - 1}'}\n{job}"
                    for i in range(600))
    files = {"w.yml": (
        "on: push\njobs:\n"
        "  legs:\n    strategy: {matrix: {os: [ubuntu-18.04, ubuntu-latest]}}\n"
        "    runs-on: ${{ matrix.os }}\n    steps: [{run: make}]\n"
        + chain
        + f"  tell:\n    needs: j599\n    if: failure()\n{job}"
        + f"  off:\n    if: false\n{job}  last:\n    needs: [j599, off]\n{job}")}
    result = estimate_files(files, ["w.yml"], predictor=MedianPredictor())
    jobs = {j["name"]: j for j in result["workflows"][0]["jobs"]}
    assert jobs["j0"]["skipped_after"] == "legs" and jobs["j599"]["skipped_after"] == "j598"
    assert jobs["tell"]["runs_on_events"] is None
    assert jobs["last"]["skipped_after"] in ("j599", "off")
    assert not result["errors"]


def test_failure_after_a_skipped_and_a_failing_need_is_decided_once_both_are_known() -> None:
    """`report` needs `off` (never runs) and `after-old` (skipped: it needs a job on a
    retired runner), and asks for failure(): on GitHub it runs, as a job before it failed.
    Skipping was decided when the file was read, before any runner was known, and stuck."""
    from laser_ci.estimate import estimate_files

    files = {"w.yml": """
on: push
jobs:
  off:
    if: false
    runs-on: ubuntu-latest
    steps: [{run: a}]
  old:
    runs-on: ubuntu-18.04
    steps: [{run: a}]
  after-old:
    needs: old
    runs-on: ubuntu-latest
    steps: [{run: a}]
  report:
    needs: [off, after-old]
    if: failure()
    runs-on: ubuntu-latest
    steps: [{run: a}]
"""}
    result = estimate_files(files, ["w.yml"], predictor=MedianPredictor())
    jobs = {j["name"]: j for j in result["workflows"][0]["jobs"]}
    assert jobs["after-old"]["skipped_after"] == "old"
    assert jobs["report"]["runs_on_events"] is None


def test_a_dispatch_input_is_empty_on_other_events() -> None:
    """Only a dispatched run has ``inputs``: on push, ``inputs.e2e`` is empty even though the
    dispatch form defaults it to true (GitHub docs, Contexts: inputs), so a job gated on it
    runs on dispatch only; one that falls back with ``||`` runs on both."""
    from laser_ci.estimate import estimate_files

    files = {"w.yml": """
on:
  push:
  workflow_dispatch:
    inputs:
      e2e: {type: boolean, default: true}
jobs:
  e2e:
    if: inputs.e2e
    runs-on: ubuntu-latest
    steps: [{run: make e2e}]
  e2e-or-push:
    if: ${{ inputs.e2e || github.event_name == 'push' }}
    runs-on: ubuntu-latest
    steps: [{run: make e2e}]
"""}
    result = estimate_files(files, ["w.yml"], predictor=MedianPredictor())
    jobs = {j["name"]: j for j in result["workflows"][0]["jobs"]}
    assert jobs["e2e"]["runs_on_events"] == ["workflow_dispatch"]
    assert jobs["e2e-or-push"]["runs_on_events"] is None
    # a called workflow has its caller's `with:` on every event the caller runs on
    files = {"caller.yml": "on: [push, pull_request]\njobs:\n  call:\n"
                           "    uses: ./called.yml\n    with: {e2e: true}\n",
             "called.yml": "on:\n  workflow_call:\n    inputs:\n      e2e: {type: boolean, "
                           "default: false}\njobs:\n  e2e:\n    if: inputs.e2e\n"
                           "    runs-on: ubuntu-latest\n    steps: [{run: make e2e}]\n"}
    caller = estimate_files(files, ["caller.yml"], predictor=MedianPredictor())["workflows"][0]
    (called,) = caller["jobs"]
    assert called["name"] == "call / e2e" and called["runs_on_events"] is None


# --- expansion rules ------------------------------------------------------------------------


def _job(name: str, parts=(), dynamic=False, job_id="j") -> JobInstance:
    return JobInstance(id=job_id, name=name, name_parts=tuple(parts), dynamic_matrix=dynamic,
                       runs_on="${{ matrix.os }}", run_time={"runs-on": ("matrix.os",)})


def test_expansion_matches_names_by_pattern_most_literal_first() -> None:
    hole = NameHole(refs=("matrix.x",))
    wf = Workflow(path="w.yml", name="W", jobs=[
        _job("lint", job_id="lint"),
        _job("any", [hole], dynamic=True, job_id="any"),
        _job("test", ["test ", hole], dynamic=True, job_id="test"),
        _job("deploy", ["deploy to ", hole], job_id="deploy"),  # one instance, name unknown
        _job("same", [], dynamic=True, job_id="same"),  # every instance has the same name
    ])
    runs = [
        [RunJob("test old"), RunJob("deploy to staging")],
        [RunJob("lint"), RunJob("test 10", ("windows-latest",)), RunJob("test 9"),
         RunJob("something else"), RunJob("same"), RunJob("same")],
    ]
    got = expand(wf, runs)
    assert [(j.id, j.name) for j in got.jobs] == [
        ("lint", "lint"),
        ("any", "something else"),
        ("test", "test 9"), ("test", "test 10"),  # numbers sort by value
        ("deploy", "deploy to staging"),  # from the newest run that ran it
        ("same", "same"), ("same", "same"),
    ]
    ten = got.jobs[3]
    assert ten.expanded and ten.runs_on == "windows-latest" and ten.runs_on_source == "history"
    assert got.jobs[2].runs_on == "${{ matrix.os }}"  # no labels in the history: unknown
    assert not got.jobs[4].expanded  # not a matrix: renamed, not expanded
    assert expand(wf, []) is wf


# --- hundreds of jobs -----------------------------------------------------------------------


def test_the_pr_comment_of_a_300_job_repository_groups_the_shards_and_fits(tmp_path) -> None:
    runs = make_runs(days=6, scale=6)
    assert len(runs[-1]["jobs"]) >= 295
    index = load_history(write_folder(tmp_path / "big", runs))
    head = _estimate(index)
    n_jobs = sum(len(w["jobs"]) for w in head["workflows"] if w["path"] == WORKFLOW)
    assert n_jobs >= 295
    base = json.loads(json.dumps(head))
    for wf in base["workflows"]:
        wf["jobs"] = [j for j in wf["jobs"] if "api" not in j["name"]]
    body = render_pr_comment(head, base, [WORKFLOW])
    assert len(body) <= COMMENT_LIMIT.count
    assert "Unit Test / … … on …/…** · " in body and "instances" in body
    assert "cut to fit" not in body  # shortened by grouping, not cut
    full = render_pr_comment(head, base, [WORKFLOW], limit=replace(COMMENT_LIMIT, count=10_000_000))
    assert "Unit Test / pkg 71/72 on windows-latest/current" in full  # the instances fold out
    assert "65,536" not in full
