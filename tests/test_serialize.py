"""The serializer is the model's input contract: these tests pin it byte for byte.

If a change here is intended, regenerate the golden files with
``LASER_CI_UPDATE_GOLDEN=1 pytest tests/test_serialize.py`` and retrain the model.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

from laser_ci.text.serialize import approx_tokens, serialize_job, serialize_raw, serialize_workflow
from laser_ci.workflows.model import JobInstance, RepoProfile, Step, Workflow
from laser_ci.workflows.parse import DiskFiles, read_workflows

FIXTURE = Path(__file__).parent / "fixtures" / "serialize"
PROFILE = RepoProfile(n_files=120, total_bytes=2_500_000,
                      by_ext={".py": (80, 2_000_000), ".md": (10, 30_000), "Dockerfile": (1, 300)},
                      top_level=(".github/", "pyproject.toml", "src/", "tests/"))


def _golden(name: str, text: str) -> None:
    path = FIXTURE / "golden" / name
    if os.environ.get("LASER_CI_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def ci() -> Workflow:
    workflows, errors = read_workflows(DiskFiles(FIXTURE), [".github/workflows/ci.yml"])
    assert errors == []
    return workflows[0]


def test_job_text_is_pinned(ci: Workflow) -> None:
    test_job = next(j for j in ci.jobs if j.name == "test (ubuntu-latest, 3.13, true)")
    _golden("job_test.txt", serialize_job(test_job, ci, PROFILE))


def test_workflow_text_is_pinned(ci: Workflow) -> None:
    _golden("workflow_ci.txt", serialize_workflow(ci, PROFILE))


def test_task_line_tells_the_kinds_apart(ci: Workflow) -> None:
    assert serialize_job(ci.jobs[0], ci).startswith("task: job\n")
    assert serialize_workflow(ci).startswith("task: workflow\n")
    assert serialize_raw("x.yml", "not: [valid").startswith("task: workflow\n")


def test_same_input_same_bytes(ci: Workflow) -> None:
    again, _ = read_workflows(DiskFiles(FIXTURE), [".github/workflows/ci.yml"])
    assert [serialize_job(j, ci) for j in ci.jobs] == [serialize_job(j, again[0]) for j in again[0].jobs]


def _long_job() -> tuple[JobInstance, Workflow]:
    script = "\n".join(f"echo step {i}" for i in range(2000))
    steps = [Step(uses="actions/checkout@v4"), Step(name="big", run=script),
             Step(uses="actions/upload-artifact@v4", with_={"path": "dist/"})]
    job = JobInstance(id="build", name="build", runs_on="ubuntu-latest", steps=steps)
    return job, Workflow(path=".github/workflows/x.yml", name="X", triggers=["push"], jobs=[job])


@pytest.mark.parametrize("budget", [300, 800, 2048])
def test_budget_cuts_run_scripts_in_the_middle_and_keeps_every_uses(budget: int) -> None:
    job, wf = _long_job()
    text = serialize_job(job, wf, budget=budget)
    assert approx_tokens(text) <= budget
    assert "uses: actions/checkout@v4" in text
    assert "uses: actions/upload-artifact@v4" in text  # after the long script: not cut at the end
    assert "echo step 0" in text and "echo step 1999" in text  # head and tail kept
    assert "lines cut" in text


def test_under_budget_nothing_is_cut(ci: Workflow) -> None:
    text = serialize_job(ci.jobs[0], ci)
    assert "cut" not in text and "truncated" not in text


def test_hard_cut_as_last_resort() -> None:
    steps = [Step(uses=f"org/action-{i}@v1") for i in range(500)]
    job = JobInstance(id="a", name="a", runs_on="ubuntu-latest", steps=steps)
    wf = Workflow(path="w.yml", name="w", jobs=[job])
    text = serialize_job(job, wf, budget=200)
    assert approx_tokens(text) <= 200
    assert text.endswith("# ... truncated ...\n")
    with_profile = serialize_job(job, wf, PROFILE, budget=200)
    assert approx_tokens(with_profile) <= 200
    profile_line = serialize_job(job, wf, PROFILE).split("\n")[-2]
    assert profile_line.startswith("repo: ")
    assert with_profile.endswith("# ... truncated ...\n" + profile_line + "\n")


def test_custom_token_counter_is_used(ci: Workflow) -> None:
    chars = serialize_job(ci.jobs[1], ci, budget=400, count_tokens=len)
    assert len(chars) <= 400


@pytest.mark.parametrize(("a", "b"), [
    ({"a": 1}, {"a": True}),          # equal in Python (1 == True), written differently
    ({"a": 1}, {"a": "1"}),
    ({"a": 1}, {"a": 1.0}),
    ([1, 2], [2, 1]),
    ({"x": 1, "y": 2}, {"y": 2, "x": 1}),  # key order is kept in the text
    ({"a": None}, {"a": "null"}),
])
def test_dump_cache_by_content_tells_values_apart(a, b) -> None:
    from laser_ci.text import serialize as s

    first = s._dump(a)
    again = s._dump(copy.deepcopy(a))   # a distinct object, equal content: the same text
    assert again == first
    other = s._dump(b)
    s._DUMPED.clear()
    s._DUMPED_BY_REPR.clear()
    assert s._dump(copy.deepcopy(b)) == other   # what the cache gave is what a fresh dump gives
    assert s._dump(copy.deepcopy(a)) == first
    assert other != first
