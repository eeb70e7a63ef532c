"""A reusable workflow's job run on its own and called from other workflows is one job:
GitHub names its runs ``build`` in the one and ``call / build`` in the others. A job with
no runs under its own name has the others' (laser_ci.workflows.same_job): on iree, the
standalone ``ci_linux_x64_bazel.yml`` was predicted at 14m 21s from alike jobs while the
same job called from ``ci.yml`` takes 36 minutes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from test_new_jobs import _runs  # about `minutes` each, all successful

from laser_ci.estimate import estimate_paths
from laser_ci.predictors.evidence_bands import load_offsets
from laser_ci.report.cells import history_cell
from laser_ci.report.comment import render_summary
from laser_ci.report.render import render
from laser_ci.text.history import HistoryIndex
from laser_ci.workflows.model import JobInstance, Workflow
from laser_ci.workflows.same_job import same_jobs

BUILD = """name: Build
on:
  workflow_call:
  workflow_dispatch:
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        py: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - run: make build PY=${{ matrix.py }}
"""
CI = """name: CI
on: [push, pull_request]
jobs:
  call:
    uses: ./.github/workflows/_build.yml
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: make lint
"""
NIGHTLY = """name: Nightly
on:
  schedule:
    - cron: "0 3 * * *"
jobs:
  nightly:
    uses: ./.github/workflows/_build.yml
"""
B, C, N = ".github/workflows/_build.yml", ".github/workflows/ci.yml", ".github/workflows/nightly.yml"


def _repo(tmp_path: Path, nightly: bool = False) -> Path:
    files = {"_build.yml": BUILD, "ci.yml": CI, **({"nightly.yml": NIGHTLY} if nightly else {})}
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    for name, text in files.items():
        (wf / name).write_text(text, encoding="utf-8")
    return tmp_path


def _jobs(result: dict) -> dict[tuple[str, str], dict]:
    return {(wf["path"], j["name"]): j for wf in result["workflows"] for j in wf["jobs"]}


def test_a_reusable_workflow_run_on_its_own_has_the_runs_of_its_callers(tmp_path) -> None:
    root = _repo(tmp_path)
    history = HistoryIndex(jobs={(C, "call / build (3.11)"): _runs(10.0),
                                 (C, "call / build (3.12)"): _runs(20.0, n=5)}, workflows={})
    jobs = _jobs(estimate_paths([str(root)], repo_root=str(root), history=history))
    for py, minutes, n in (("3.11", 10.0, 12), ("3.12", 20.0, 5)):
        alone = jobs[(B, f"build ({py})")]
        assert alone["history_source"] == "own" and alone["history_runs"] == n
        assert alone["history_as"] == {"path": C, "name": f"call / build ({py})"}
        assert alone["runtime_s"]["p50"] == pytest.approx(minutes * 60, rel=0.06)
        # the band calibrated for such runs, not the one of a job's own runs
        lo, hi = load_offsets()["same"]
        rt = alone["runtime_s"]
        assert math.log(rt["p10"] / rt["p50"]) == pytest.approx(lo, abs=0.01)
        assert math.log(rt["p90"] / rt["p50"]) == pytest.approx(hi, abs=0.01)
        # the callers' own jobs keep their own runs and say nothing more
        assert jobs[(C, f"call / build ({py})")]["history_as"] is None
    assert history_cell(jobs[(B, "build (3.11)")]) == (
        "warm (12 runs, as called from `.github/workflows/ci.yml`)")
    assert jobs[(C, "lint")]["history_as"] is None


def test_a_new_caller_has_the_runs_of_the_job_it_calls(tmp_path) -> None:
    """A pull request adds nightly.yml, calling a reusable workflow that ran on its own
    and from ci.yml: its jobs are warm from the job with the most runs."""
    root = _repo(tmp_path, nightly=True)
    history = HistoryIndex(jobs={(B, "build (3.11)"): _runs(10.0, n=4),
                                 (C, "call / build (3.11)"): _runs(11.0, n=9),
                                 (B, "build (3.12)"): _runs(12.0, n=3)}, workflows={})
    result = estimate_paths([str(root)], repo_root=str(root), history=history)
    jobs = _jobs(result)
    new = jobs[(N, "nightly / build (3.11)")]
    assert new["history_as"] == {"path": C, "name": "call / build (3.11)"}  # 9 runs > 4
    assert new["history_runs"] == 9
    assert history_cell(new) == "warm (9 runs, as called from `.github/workflows/ci.yml`)"
    other = jobs[(N, "nightly / build (3.12)")]
    assert other["history_as"] == {"path": B, "name": "build (3.12)"}
    assert history_cell(other) == "warm (3 runs, as run on its own)"
    assert jobs[(C, "call / build (3.12)")]["history_as"] == {"path": B, "name": "build (3.12)"}
    table = render(result, "table")
    assert ("  note: nightly / build (3.12): its runs are those of `build (3.12)`, the same job "
            "run on its own") in table.splitlines()
    # the summary counts them apart: runs of another name, not the jobs' own
    assert ("history: 6 of 7 jobs from their own earlier runs (3 under another name: the same "
            "job run on its own or called), 1 new from alike jobs' runs, 0 cold"
            ) in table.splitlines()
    assert ("History: **6 of 7 jobs warm** (predicted with their earlier runs; 3 of them ran "
            "under another name, the same job run on its own or called), 1 new, calibrated by "
            "the repository's other runs, 0 cold") in render_summary(result)


def test_no_runs_anywhere_leaves_the_job_to_the_evidence_rules(tmp_path) -> None:
    root = _repo(tmp_path)
    history = HistoryIndex(jobs={(C, "lint"): _runs(1.0)}, workflows={})
    jobs = _jobs(estimate_paths([str(root)], repo_root=str(root), history=history))
    assert all(j["history_as"] is None for j in jobs.values())
    assert jobs[(B, "build (3.11)")]["history_source"] != "own"
    without = _jobs(estimate_paths([str(root)], repo_root=str(root)))
    assert all(j["history_as"] is None for j in without.values())


def _job(id_: str, name: str, called: str | None = None,
         how: tuple[str, ...] = ()) -> JobInstance:
    return JobInstance(id=id_, name=name, called_workflow=called, call_values=how)


R = ".github/workflows/r.yml"


@pytest.mark.parametrize(("jobs", "expected"), [
    # (workflow path, job) pairs -> the indices of the others that are the same job
    ([("r", _job("b", "b")), ("c", _job("x/b", "x / b", R))], [(1,), (0,)]),
    # two callers and the file itself: one job
    ([("r", _job("b", "b")), ("c", _job("x/b", "x / b", R)), ("n", _job("y/b", "y / b", R))],
     [(1, 2), (0, 2), (0, 1)]),
    # a caller with a matrix of its own runs each instance its way: none is the file's job
    ([("r", _job("b", "b")), ("c", _job("x/b", "x (1) / b", R, ("os=1",))),
      ("c", _job("x/b", "x (2) / b", R, ("os=2",)))], [(), (), ()]),
    # ... but two callers' instances of the same values are one job
    ([("r", _job("b", "b")), ("c", _job("x/b", "x (1) / b", R, ("os=1",))),
      ("n", _job("y/b", "y (1) / b", R, ("os=1",)))], [(), (2,), (1,)]),
    # inputs given (`with:`): not the file's job run on its own; the same inputs, one job
    ([("r", _job("b", "b")), ("c", _job("x/b", "x / b", R, ("with os=win",))),
      ("n", _job("y/b", "y / b", R, ("with os=win",))),
      ("n", _job("z/b", "z / b", R, ("with os=linux",)))], [(), (2,), (1,), ()]),
    # the matrix instance named the same: each its own
    ([("r", _job("b", "b (1)")), ("r", _job("b", "b (2)")), ("c", _job("x/b", "x / b (2)", R))],
     [(), (2,), (1,)]),
    # another id, another file, a name the called one does not end: none
    ([("r", _job("b", "b")), ("c", _job("x/a", "x / b", R))], [(), ()]),
    ([("r", _job("b", "b")), ("c", _job("x/b", "x / b", ".github/workflows/s.yml"))], [(), ()]),
    ([("r", _job("b", "b")), ("c", _job("x/b", "x / build", R))], [(), ()]),
    ([("r", _job("b", "b")), ("c", _job("x/b", "x/b", R))], [(), ()]),
    # the file not estimated: two callers alone are not matched
    ([("c", _job("x/b", "x / b", R)), ("n", _job("y/b", "y / b", R))], [(), ()]),
    # the longest name it ends with
    ([("r", _job("b", "b")), ("r", _job("b", "z / b")), ("c", _job("x/b", "x / z / b", R))],
     [(), (2,), (1,)]),
])
def test_same_jobs_edge_values(jobs, expected) -> None:
    path = {"r": R, "c": ".github/workflows/c.yml", "n": ".github/workflows/n.yml"}
    pairs = [(job, Workflow(path=path[w], name=w)) for w, job in jobs]
    assert same_jobs(pairs) == expected


CALLS_WITH = """name: CI
on: [push, pull_request]
jobs:
  linux:
    uses: ./.github/workflows/_build.yml
    with: {py: "3.11", target: quick}
  windows:
    uses: ./.github/workflows/_build.yml
    with: {py: "3.11", target: full}
  each:
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
    uses: ./.github/workflows/_build.yml
"""


def test_callers_that_run_the_job_otherwise_do_not_lend_it_their_runs(tmp_path) -> None:
    """Review of this change: `windows / build` (other inputs) took `linux / build`'s runs
    as its own, and an instance of a caller's matrix another instance's."""
    root = _repo(tmp_path)
    (root / ".github" / "workflows" / "ci.yml").write_text(CALLS_WITH, encoding="utf-8")
    history = HistoryIndex(jobs={(C, "linux / build (3.11)"): _runs(3.0, n=20),
                                 (C, "each (ubuntu-latest) / build (3.11)"): _runs(3.0, n=20)},
                           workflows={})
    jobs = _jobs(estimate_paths([str(root)], repo_root=str(root), history=history))
    assert jobs[(C, "windows / build (3.11)")]["history_source"] != "own"
    other = jobs[(C, "each (windows-latest) / build (3.11)")]
    assert other["history_source"] == "siblings" and other["history_as"] is None
    # nor the file run on its own, which runs with no inputs given
    assert jobs[(B, "build (3.11)")]["history_as"] is None
