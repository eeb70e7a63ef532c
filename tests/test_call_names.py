"""Names as GitHub records them for reusable workflow calls (issue 50, problem 6): a
remote call's jobs, with history, under the ``caller / callee`` names of its runs (as a
run-time matrix is); a call GitHub skips under the caller's name alone."""

from __future__ import annotations

from laser_ci.text.history import RunJob
from laser_ci.workflows import runtime_matrix
from laser_ci.workflows.parse import read_workflows

REMOTE = """\
on: pull_request
jobs:
  label-check:
    uses: org/shared/.github/workflows/labels.yml@v1
  build:
    runs-on: ubuntu-latest
    steps: [{run: make}]
"""


def test_remote_call_takes_the_names_of_its_runs() -> None:
    (wf,), errors = read_workflows({"w.yml": REMOTE}, ["w.yml"])
    assert errors == [] and [j.name for j in wf.jobs] == ["label-check", "build"]
    runs = [[RunJob("label-check / old-job"), RunJob("build")],
            [RunJob("label-check / make-sure-label-is-present", ("ubuntu-22.04",)),
             RunJob("label-check / second", ("self-hosted", "linux")), RunJob("build")]]
    out = runtime_matrix.expand(wf, runs)
    assert [j.name for j in out.jobs] == ["label-check / make-sure-label-is-present",
                                          "label-check / second", "build"]
    first, second = out.jobs[:2]
    assert (first.runs_on, first.runs_on_source, first.expanded) == ("ubuntu-22.04", "history", True)
    assert second.runs_on == ["self-hosted", "linux"]
    assert first.remote_workflow == "org/shared/.github/workflows/labels.yml@v1"


def test_remote_call_without_history_stays_one_job() -> None:
    (wf,), _ = read_workflows({"w.yml": REMOTE}, ["w.yml"])
    assert runtime_matrix.expand(wf, [[RunJob("build")]]).jobs == wf.jobs


SKIPPED = """\
on: push
jobs:
  mi355:
    name: Test AMD MI355
    if: false
    uses: ./called.yml
  other:
    uses: ./called.yml
"""
CALLED = "on: workflow_call\njobs:\n  test_mi355:\n    runs-on: ubuntu-latest\n    steps: [{run: t}]\n"


def test_a_call_that_never_runs_is_the_caller_alone() -> None:
    (wf,), errors = read_workflows({"w.yml": SKIPPED, "called.yml": CALLED}, ["w.yml"])
    assert errors == []
    assert [(j.name, j.events) for j in wf.jobs] == [("Test AMD MI355", ()),
                                                    ("other / test_mi355", None)]
