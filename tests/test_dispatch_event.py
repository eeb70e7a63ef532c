"""What a run knows before it starts, as GitHub reads it (issue 50, reproductions 2-4):
a ``workflow_dispatch`` input is what the user types (its default only pre-fills the form);
``github.repository``; ``github.event_name`` per trigger."""

from __future__ import annotations

import pytest

from laser_ci.workflows.model import Workflow
from laser_ci.workflows.parse import read_workflows

RELEASE = """\
on:
  workflow_dispatch:
    inputs:
      tag: {description: Release Tag, required: true, default: dry-run, type: string}
jobs:
  build: {runs-on: ubuntu-latest, steps: [{run: make dist}]}
  publish:
    if: ${{ inputs.tag != 'dry-run' }}
    needs: build
    runs-on: ubuntu-latest
    steps: [{run: make publish}]
"""


def _read(text: str, **kw: str) -> Workflow:
    (wf,), errors = read_workflows({"w.yml": text}, ["w.yml"], **kw)
    assert errors == []
    return wf


def _job(wf: Workflow, job_id: str):  # noqa: ANN202
    return next(j for j in wf.jobs if j.id == job_id)


def test_dispatch_default_is_not_the_value() -> None:
    publish = _job(_read(RELEASE), "publish")
    assert publish.events != ()  # it may run: the user types the tag
    assert publish.if_inputs == ("inputs.tag",)


def test_pushed_run_has_no_inputs() -> None:
    text = RELEASE.replace("on:\n", "on:\n  push:\n", 1).replace(
        "if: ${{ inputs.tag != 'dry-run' }}", "if: ${{ inputs.tag == '' }}")
    publish = _job(_read(text), "publish")
    assert publish.events is None  # on push inputs.tag is '' (runs); on dispatch it may
    text = RELEASE.replace("on:\n", "on:\n  push:\n", 1).replace(
        "if: ${{ inputs.tag != 'dry-run' }}", "if: ${{ inputs.tag == 'dry-run' }}")
    publish = _job(_read(text), "publish")
    assert publish.events == ("workflow_dispatch",)
    assert publish.if_inputs == ("inputs.tag",)
    assert _job(_read(text, event="push"), "publish").events == ()


def test_dispatch_choice_and_boolean_inputs_keep_their_options() -> None:
    text = """\
on:
  workflow_dispatch:
    inputs:
      size: {type: choice, options: [small, big], default: small}
jobs:
  j:
    runs-on: ${{ inputs.size == 'big' && 'ubuntu-latest-8-cores' || 'ubuntu-latest' }}
    steps: [{run: echo}]
"""
    j = _read(text).jobs[0]
    assert j.run_time.get("runs-on") == ("inputs.size",)


REPO = """\
on: push
jobs:
  j:
    name: build ${{ github.repository }}
    runs-on: ${{ github.repository == 'astral-sh/ruff' && 'depot-ubuntu-22.04-16' || 'ubuntu-latest' }}
    steps: [{run: echo}]
  k:
    if: github.repository_owner == 'astral-sh'
    runs-on: ubuntu-latest
    steps: [{run: echo}]
"""


def test_repository_unknown_without_it() -> None:
    wf = _read(REPO)
    assert "runs-on" in wf.jobs[0].run_time and "${{" in wf.jobs[0].name


def test_repository_known() -> None:
    wf = _read(REPO, repository="astral-sh/ruff")
    j, k = wf.jobs
    assert (j.name, j.runs_on, j.run_time) == ("build astral-sh/ruff", "depot-ubuntu-22.04-16", {})
    assert k.events is None
    fork = _read(REPO, repository="someone/ruff")
    assert fork.jobs[0].runs_on == "ubuntu-latest" and fork.jobs[1].events == ()


EVENTS = """\
on: [push, pull_request]
jobs:
  three:
    runs-on: ${{ github.event_name == 'pull_request' && 'ubuntu-latest' || 'macos-latest' }}
    steps: [{run: echo}]
"""


def test_runs_on_per_trigger() -> None:
    three = _read(EVENTS).jobs[0]
    assert three.runs_on == "ubuntu-latest"  # the pull request's run
    assert three.runs_on_by_event == {"push": "macos-latest", "pull_request": "ubuntu-latest"}
    push = _read(EVENTS, event="push").jobs[0]
    assert (push.runs_on, push.runs_on_by_event) == ("macos-latest", {})


def test_runs_on_same_on_every_trigger_is_one_value() -> None:
    text = EVENTS.replace("'ubuntu-latest' || 'macos-latest'", "'ubuntu-latest' || 'ubuntu-latest'")
    three = _read(text).jobs[0]
    assert (three.runs_on, three.runs_on_by_event, three.run_time) == ("ubuntu-latest", {}, {})


def test_runs_on_per_trigger_in_a_called_workflow() -> None:
    caller = "on: [push, pull_request]\njobs:\n  c:\n    uses: ./called.yml\n"
    called = EVENTS.replace("on: [push, pull_request]", "on: workflow_call")
    (wf,), errors = read_workflows({"w.yml": caller, "called.yml": called}, ["w.yml"])
    assert errors == []
    assert wf.jobs[0].runs_on == "ubuntu-latest"
    assert wf.jobs[0].runs_on_by_event == {"push": "macos-latest", "pull_request": "ubuntu-latest"}


LABELS = """\
on: [push, pull_request]
jobs:
  mac:
    runs-on: >-
      ${{ !contains(github.event.pull_request.labels.*.name, 'ci-full')
          && github.event_name == 'pull_request' && 'ubuntu-24.04' || 'macos-15-intel' }}
    steps: [{run: echo}]
"""


def test_runner_chosen_by_a_label_is_priced_for_the_pull_request_run() -> None:
    mac = _read(LABELS).jobs[0]  # as deno's ci: a push has no pull request
    assert mac.runs_on_by_event == {"push": "macos-15-intel", "pull_request": "ubuntu-24.04"}
    assert mac.runs_on == "ubuntu-24.04"  # a pull request without labels
    assert _read(LABELS, event="push").jobs[0].runs_on == "macos-15-intel"
    assert _read(LABELS, event="pull_request").jobs[0].runs_on == "ubuntu-24.04"
    full = {"pull_request": {"labels": [{"name": "ci-full"}]}}
    (wf,), _ = read_workflows({"w.yml": LABELS}, ["w.yml"], event="pull_request", payload=full)
    assert wf.jobs[0].runs_on == "macos-15-intel"  # the Action knows the run's labels


MATRIX_LABELS = """\
on: [push, pull_request]
jobs:
  build:
    strategy:
      matrix:
        include:
          - os: linux
            runner: >-
              ${{ !contains(github.event.pull_request.labels.*.name, 'ci-full')
                  && github.event_name == 'pull_request' && 'ubuntu-24.04' || 'macos-15-intel' }}
          - os: windows
            runner: windows-2025
    runs-on: ${{ matrix.runner }}
    steps: [{run: echo}]
"""


@pytest.mark.parametrize("kw, payload, runners", [
    ({}, None, ["ubuntu-24.04", "windows-2025"]),  # the pull request's run, without labels
    ({"event": "pull_request"}, None, ["ubuntu-24.04", "windows-2025"]),
    ({"event": "push"}, None, ["macos-15-intel", "windows-2025"]),
    ({"event": "pull_request"}, {"pull_request": {"labels": [{"name": "ci-full"}]}},
     ["macos-15-intel", "windows-2025"]),  # the Action knows the run's labels
])
def test_a_matrix_value_chosen_by_the_event_is_the_shown_runs(kw, payload, runners) -> None:
    """As deno's ci: a matrix value the event decides is that of the run shown (--event's,
    else the pull request's), as a ``runs-on`` the event decides is; not "set at run
    time"."""
    (wf,), errors = read_workflows({"w.yml": MATRIX_LABELS}, ["w.yml"], payload=payload, **kw)
    assert errors == []
    assert [j.runs_on for j in wf.jobs] == runners
    assert [j.name for j in wf.jobs] == [f"build (linux, {runners[0]})",
                                         "build (windows, windows-2025)"]
    assert not any(j.dynamic_matrix or j.run_time for j in wf.jobs)


def test_a_matrix_chosen_by_the_event_follows_the_jobs_if() -> None:
    """A job that runs only on push gets push's matrix, not the pull request's (its
    `if:` cannot read the matrix, so it is known first)."""
    text = MATRIX_LABELS.replace("  build:\n", "  build:\n    if: github.event_name == 'push'\n")
    wf = _read(text)
    assert [j.runs_on for j in wf.jobs] == ["macos-15-intel", "windows-2025"]
    assert all(j.events == ("push",) for j in wf.jobs)
    text = MATRIX_LABELS.replace("on: [push, pull_request]", "on: [push, workflow_dispatch]")
    assert [j.runs_on for j in _read(text).jobs] == ["macos-15-intel", "windows-2025"]  # agree
    # push's value depends on the ref too (unknown before the run): the pull request's
    text = MATRIX_LABELS.replace("|| 'macos-15-intel'", "|| github.ref == 'refs/heads/main' "
                                 "&& 'macos-15-xl' || 'macos-15-intel'")
    assert [j.runs_on for j in _read(text).jobs] == ["ubuntu-24.04", "windows-2025"]


def test_a_push_has_no_pull_request() -> None:
    text = "on: push\njobs:\n  d:\n    if: contains(github.event.pull_request.labels.*.name, 'x')\n" \
           "    runs-on: ubuntu-latest\n    steps: [{run: echo}]\n"
    assert _read(text).jobs[0].events == ()
    text = text.replace("on: push", "on: pull_request")
    assert _read(text).jobs[0].events is None  # may run: the payload is not known
