"""Issue 50's done-when figures on the shared real workflows (skipped where the data is not
beside the checkout): ruff's release is 44 jobs, uv's ci reads the same with `$/` as with
`./`, deno's ci has a runner for every job of the pull request's run, no name keeps a
`${{ }}` known before the run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from laser_ci.sizing.runners import resolve_runner

REAL = Path(__file__).parents[2] / "shared" / "data" / "real-workflows"
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason="the shared real-workflows data is not here")


def _jobs(root: Path, workflow: str, repo: str, **kw: str):  # noqa: ANN202
    from laser_ci.workflows.files import DiskFiles
    from laser_ci.workflows.parse import read_workflows

    (wf,), _ = read_workflows(DiskFiles(root), [f".github/workflows/{workflow}"],
                              repository=repo, **kw)
    return wf.jobs


def test_ruff_release_44_jobs() -> None:
    jobs = _jobs(REAL / "astral-sh+ruff@fca5c7cf2c", "release.yml", "astral-sh/ruff")
    assert len(jobs) == 44
    gate = next(j for j in jobs if j.id == "release-gate")
    assert gate.events == ("workflow_dispatch",) and gate.if_inputs


def test_uv_dollar_slash_as_dot_slash(tmp_path: Path) -> None:
    root = REAL / "astral-sh+uv@26a9dd4b21"
    copy = tmp_path / "uv"
    shutil.copytree(root / ".github", copy / ".github")
    for f in (copy / ".github").rglob("*.y*ml"):
        f.write_text(f.read_text(encoding="utf-8").replace("$/", "./"), encoding="utf-8")
    dollar = _jobs(root, "ci.yml", "astral-sh/uv")
    dot = _jobs(copy, "ci.yml", "astral-sh/uv")
    assert len(dollar) == len(dot) == 145
    assert [(j.name, j.runs_on, len(j.steps)) for j in dollar] == \
           [(j.name, j.runs_on, len(j.steps)) for j in dot]


def test_deno_ci_has_runners_for_the_pull_request_run() -> None:
    jobs = _jobs(REAL / "denoland+deno@98f9507aff", "ci.generated.yml", "denoland/deno")
    unknown = [j.name for j in jobs if resolve_runner(j.runs_on, j.matrix).kind == "unknown"]
    assert len(jobs) == 134 and unknown == []


def test_no_name_keeps_an_expression_known_before_the_run() -> None:
    for root in sorted(REAL.iterdir()):
        if not (root / ".github" / "workflows").is_dir():
            continue
        repo = root.name.split("@", 1)[0].replace("+", "/", 1)
        from laser_ci.workflows.files import DiskFiles
        from laser_ci.workflows.parse import read_workflows, workflow_targets

        targets, _ = workflow_targets([str(root / ".github" / "workflows")], root)
        workflows, _ = read_workflows(DiskFiles(root), targets, repository=repo)
        raw = [j.name for wf in workflows for j in wf.jobs
               if "${{" in j.name and not j.run_time.get("name")
               and not any(c in j.name for c in ("needs.", "steps.", "secrets.", "vars."))]
        assert raw == [], root.name

