"""Tests for laser_ci.workflows.graph: ``needs`` validation, critical path and billable total.

Sources:

* github/docs data/reusables/actions/jobs/section-using-jobs-in-a-workflow-needs.md:
  "Use jobs.<job_id>.needs to identify any jobs that must complete successfully before this
  job will run. It can be a string or array of strings." (job3 needs [job1, job2] waits for
  both: the jobs run as a chain.)
* github/docs content/actions/how-tos/reuse-automations/reuse-workflows.md: a reusable
  workflow is called by a job; "Loops in the workflow tree are not permitted"; a job that
  `needs` the caller job uses the called workflow's outputs, so it waits for all its jobs.
* github/docs workflow-syntax.md, jobs.<job_id>.strategy: a matrix creates one job per
  combination; they run in parallel (max-parallel bounds them), so the matrix job ends when
  its slowest instance ends (max-parallel is not modelled here).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from laser_ci.estimate import estimate_workflows
from laser_ci.predictors.base import Runtime
from laser_ci.workflows.graph import check_needs, critical_path, dependencies
from laser_ci.workflows.model import JobInstance, Workflow
from laser_ci.workflows.parse import read_paths, read_workflows

REPOS = Path(__file__).parent / "fixtures" / "repos"


def job(job_id: str, *needs: str, line: int | None = None) -> JobInstance:
    return JobInstance(id=job_id, name=job_id, needs=list(needs), line=line)


def wf(*jobs: JobInstance) -> Workflow:
    return Workflow(path="w.yml", name="w", jobs=list(jobs))


# --- critical path ---------------------------------------------------------------------------


def test_chain() -> None:
    jobs = [job("a"), job("b", "a"), job("c", "b")]
    assert critical_path(jobs, [10, 20, 30]) == 60


def test_diamond() -> None:
    jobs = [job("a"), job("b", "a"), job("c", "a"), job("d", "b", "c")]
    assert critical_path(jobs, [1, 5, 2, 1]) == 7


def test_independent_jobs_run_in_parallel() -> None:
    assert critical_path([job("a"), job("b"), job("c")], [3, 9, 4]) == 9
    assert critical_path([], []) == 0


def test_matrix_job_lasts_as_long_as_its_slowest_instance() -> None:
    jobs = [job("test"), job("test"), job("test"), job("deploy", "test")]
    assert critical_path(jobs, [3, 10, 4, 2]) == 12


def test_needs_on_a_reusable_caller_waits_for_every_nested_job() -> None:
    jobs = [job("prep"), job("call/compile", "prep"), job("call/test", "prep", "call/compile"),
            job("after", "call")]
    assert dependencies(jobs)["after"] == {"call/compile", "call/test"}
    assert critical_path(jobs, [1, 2, 30, 4]) == 1 + 2 + 30 + 4


def test_reusable_chain_fixture_critical_path() -> None:
    root = REPOS / "reusable-chain"
    workflows, errors = read_paths([str(root / ".github/workflows/release.yml")], str(root))
    assert errors == []
    jobs = workflows[0].jobs
    seconds = {"prepare": 10, "build/compile": 100, "build/test/run-tests": 50, "publish": 5,
               "scan": 500, "notify": 1}
    durations = [seconds[j.id] for j in jobs]
    # prepare -> compile -> tests -> publish -> notify = 166, but scan (500) -> notify = 501.
    assert critical_path(jobs, durations) == 501
    durations = [seconds[j.id] if j.id != "scan" else 1 for j in jobs]
    assert critical_path(jobs, durations) == 10 + 100 + 50 + 5 + 1


def test_a_cycle_leaves_the_critical_path_unknown() -> None:
    """GitHub runs no job of a workflow whose `needs` form a cycle: no chain length."""
    assert critical_path([job("a", "b"), job("b", "a"), job("c")], [1, 2, 3]) is None
    assert critical_path([job("a"), job("c", "c")], [1, 3]) is None  # a job needing itself
    assert critical_path([job("x"), job("a", "x", "c"), job("b", "a"), job("c", "b")],
                         [1, 1, 1, 1]) is None


def test_a_long_chain_does_not_exhaust_the_stack() -> None:
    jobs = [job("j0")] + [job(f"j{i}", f"j{i - 1}") for i in range(1, 5000)]
    assert critical_path(jobs, [1.0] * len(jobs)) == 5000


class _ByJob:
    """Runtime from the ``job:`` line of the serialized text."""

    name = "by-job"

    def __init__(self, seconds: dict[str, float]) -> None:
        self.seconds = seconds

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        out = []
        for text in texts:
            line = next(x for x in text.splitlines() if x.startswith("job: "))
            s = self.seconds[line.removeprefix("job: ")]
            out.append(Runtime(s / 2, s, s * 2))
        return out


def test_estimate_billable_is_the_sum_and_critical_path_uses_the_graph() -> None:
    workflows, errors = read_workflows({"w.yml": """
on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps: [{run: echo}]
  b:
    needs: a
    runs-on: ubuntu-latest
    strategy:
      matrix:
        n: [1, 2]
    steps: [{run: echo}]
"""}, ["w.yml"])
    result = estimate_workflows(workflows, errors, _ByJob({"a": 60, "b (1)": 120, "b (2)": 300}))
    (out,) = result["workflows"]
    assert out["billable_s"] == 60 + 120 + 300
    assert out["critical_path_s"] == 60 + 300


# --- needs validation ------------------------------------------------------------------------


def test_needs_naming_a_missing_job_is_an_error_with_line() -> None:
    workflows, errors = read_workflows({"w.yml": """
on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps: [{run: echo}]
  b:
    needs: [a, nope]
    runs-on: ubuntu-latest
    steps: [{run: echo}]
"""}, ["w.yml"])
    assert [(e.path, e.line, e.message) for e in errors] == [
        ("w.yml", 7, "job 'b' needs 'nope', which does not exist")]
    assert len(workflows) == 1  # still read and estimated


def test_needs_cycle_is_an_error() -> None:
    _, errors = read_workflows({"w.yml": """
on: push
jobs:
  a:
    needs: c
    runs-on: ubuntu-latest
    steps: [{run: echo}]
  b:
    needs: a
    runs-on: ubuntu-latest
    steps: [{run: echo}]
  c:
    needs: b
    runs-on: ubuntu-latest
    steps: [{run: echo}]
"""}, ["w.yml"])
    assert [(e.line, e.message) for e in errors] == [(4, "`needs` cycle: a -> c -> b -> a")]


@pytest.mark.parametrize("needs", ["a", "[a]"])
def test_a_job_needing_itself_is_a_cycle(needs: str) -> None:
    _, errors = read_workflows({"w.yml": f"""
on: push
jobs:
  a:
    needs: {needs}
    runs-on: ubuntu-latest
    steps: [{{run: echo}}]
"""}, ["w.yml"])
    assert [(e.line, e.message) for e in errors] == [(4, "`needs` cycle: a -> a")]


def test_check_needs_directly() -> None:
    assert check_needs(wf(job("a"), job("b", "a"), job("c", "a", "b"))) == []
    errors = check_needs(wf(job("a", "b", line=3), job("b", "a", line=9)))
    assert [(e.line, e.message) for e in errors] == [(3, "`needs` cycle: a -> b -> a")]


def test_bad_needs_inside_a_called_workflow_points_at_that_file() -> None:
    _, errors = read_workflows({
        "w.yml": "on: push\njobs:\n  call:\n    uses: ./.github/workflows/r.yml\n",
        ".github/workflows/r.yml": """on: workflow_call
jobs:
  x:
    needs: ghost
    runs-on: ubuntu-latest
    steps: [{run: echo}]
""",
    }, ["w.yml"])
    assert [(e.path, e.line, e.message) for e in errors] == [
        (".github/workflows/r.yml", 3, "job 'call/x' needs 'call/ghost', which does not exist")]


def test_reusable_workflow_cycle_is_an_error() -> None:
    workflows, errors = read_workflows({
        "w.yml": "on: push\njobs:\n  go:\n    uses: ./.github/workflows/a.yml\n",
        ".github/workflows/a.yml": "on: workflow_call\njobs:\n  again:\n"
                                   "    uses: ./.github/workflows/b.yml\n",
        ".github/workflows/b.yml": "on: workflow_call\njobs:\n  back:\n"
                                   "    uses: ./.github/workflows/a.yml\n",
    }, ["w.yml"])
    assert [(e.path, e.line, e.message) for e in errors] == [
        (".github/workflows/b.yml", 3, "reusable workflow cycle: w.yml -> .github/workflows/a.yml "
                                       "-> .github/workflows/b.yml -> .github/workflows/a.yml")]
    assert [j.id for j in workflows[0].jobs] == ["go/again/back"]


def test_a_workflow_calling_itself_is_a_cycle() -> None:
    _, errors = read_workflows({
        ".github/workflows/self.yml": "on: [push, workflow_call]\njobs:\n  me:\n"
                                      "    uses: ./.github/workflows/self.yml\n",
    }, [".github/workflows/self.yml"])
    assert [e.message for e in errors] == [
        "reusable workflow cycle: .github/workflows/self.yml -> .github/workflows/self.yml"]
