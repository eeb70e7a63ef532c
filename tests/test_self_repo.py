"""``uses: $/…``: GitHub's self-repository reference (changelog of 2026-07-30: a ``uses:``
value that starts with ``$/`` resolves to the workflow's own repository at the exact commit
that is running, with no checkout required; it works wherever ``./`` works: steps, composite
action steps, nested composition and reusable workflow calls). Issue 50, reproduction 1."""

from __future__ import annotations

from laser_ci.github.refs import local_uses
from laser_ci.workflows.parse import read_workflows

CI = """\
on: push
jobs:
  test:
    uses: $/.github/workflows/test.yml
  self:
    runs-on: ubuntu-latest
    steps:
      - uses: $/.github/actions/setup
      - uses: $/.github/actions/missing
"""
TEST = """\
on: workflow_call
jobs:
  unit:
    strategy: {matrix: {os: [ubuntu-latest, windows-latest]}}
    runs-on: ${{ matrix.os }}
    steps:
      - uses: $/.github/actions/setup
      - run: make test
"""
SETUP = """\
runs:
  using: composite
  steps:
    - uses: $/.github/actions/inner
    - {run: echo setup, shell: bash}
"""
INNER = "runs:\n  using: composite\n  steps:\n    - {run: echo inner, shell: bash}\n"


def _files(**extra: str) -> dict[str, str]:
    return {".github/workflows/ci.yml": CI, ".github/workflows/test.yml": TEST,
            ".github/actions/setup/action.yml": SETUP,
            ".github/actions/inner/action.yml": INNER, **extra}


def test_reusable_workflow_call_is_read_as_local() -> None:
    (wf,), errors = read_workflows(_files(), [".github/workflows/ci.yml"])
    called = [j for j in wf.jobs if j.id.startswith("test/")]
    assert [j.name for j in called] == ["test / unit (ubuntu-latest)",
                                        "test / unit (windows-latest)"]
    assert all(j.remote_workflow is None for j in wf.jobs)
    assert all(j.called_workflow == ".github/workflows/test.yml" for j in called)
    # the called workflow's own `$/` action is inlined too, nested
    setup = called[0].steps[0]
    assert setup.composite is not None
    assert [s.run for s in setup.composite[0].composite or []] == ["echo inner"]
    assert [e for e in errors if "missing" not in e.message] == []


def test_composite_action_is_inlined_and_a_missing_one_is_an_error_line() -> None:
    (wf,), errors = read_workflows(_files(), [".github/workflows/ci.yml"])
    self_ = next(j for j in wf.jobs if j.id == "self")
    setup, missing = self_.steps
    assert setup.composite is not None and [s.run for s in setup.composite] == [None, "echo setup"]
    assert missing.composite is None
    lines = [(e.path, e.line) for e in errors if "not found" in e.message]
    assert lines == [(".github/workflows/ci.yml", 9)]
    assert "$/.github/actions/missing" in next(e.message for e in errors
                                               if "not found" in e.message)


def test_missing_action_after_a_script_is_still_an_error() -> None:
    # `./` resolves in the workspace, where an earlier step may have made it; `$/` resolves
    # in the repository at the running commit, whatever the steps before did.
    text = CI.replace("      - uses: $/.github/actions/setup\n", "      - run: make\n")
    (_wf,), errors = read_workflows(_files(**{".github/workflows/ci.yml": text}),
                                    [".github/workflows/ci.yml"])
    assert [e.line for e in errors if "not found" in e.message] == [9]


def test_missing_called_workflow_is_an_error_line() -> None:
    text = CI.replace("test.yml", "gone.yml")
    (wf,), errors = read_workflows(_files(**{".github/workflows/ci.yml": text}),
                                   [".github/workflows/ci.yml"])
    assert any(e.line == 3 and "gone.yml" in e.message for e in errors)  # the calling job
    assert any(j.id == "self" for j in wf.jobs)  # the rest is still read


def test_same_jobs_and_texts_as_dot_slash() -> None:
    def dot(text: str) -> str:
        return text.replace("$/", "./")

    dollar, _ = read_workflows(_files(), [".github/workflows/ci.yml"])
    files = {k: dot(v) for k, v in _files().items()}
    plain, _ = read_workflows(files, [".github/workflows/ci.yml"])
    assert [j.name for j in dollar[0].jobs] == [j.name for j in plain[0].jobs]
    assert [len(j.steps) for j in dollar[0].jobs] == [len(j.steps) for j in plain[0].jobs]


def test_action_reads_the_files_a_dollar_slash_names() -> None:
    text = (b"steps:\n  - uses: $/.github/actions/setup\n  - uses: './x'\n"
            b"  - uses: $/.github/workflows/t.yml\n")
    assert local_uses(text) == [".github/actions/setup", "x", ".github/workflows/t.yml"]
