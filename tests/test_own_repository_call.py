"""A reusable workflow of the repository itself, called by name
(``uses: OWNER/REPO/.github/workflows/x.yml@main``): read from the checkout, as a ``./``
call is. It was a remote call, its jobs unread: containerd's
``windows-periodic-trigger.yml`` showed one job at 1m 08s, "no price: the job has no
`runs-on`", beside the 12-minute file it calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from laser_ci.cli import main
from laser_ci.workflows.files import own_repository_target

CALLED = """name: Windows
on: [workflow_call, workflow_dispatch]
jobs:
  integration:
    runs-on: windows-2022
    strategy:
      matrix:
        os: [ltsc2019, ltsc2022]
    steps:
      - run: make integration
"""
CALLER = """name: Periodic
on:
  schedule:
    - cron: "0 1 * * *"
jobs:
  trigger:
    uses: Octo/App/.github/workflows/windows.yml@main
"""


@pytest.mark.parametrize(("uses", "repository", "target"), [
    ("octo/app/.github/workflows/windows.yml@main", "octo/app", ".github/workflows/windows.yml"),
    ("Octo/App/.github/workflows/windows.yml@v1", "octo/app", ".github/workflows/windows.yml"),
    ("octo/app/.github/workflows/windows.yml@main", "octo/other", None),
    ("octo/app/.github/workflows/windows.yml@main", None, None),
    ("octo/app/.github/workflows/windows.yml@main", "octo", None),
    ("octo/app/.github/workflows/windows.yml", "octo/app", None),  # no ref: not a call
    ("octo/app/.github/workflows/windows.yml@", "octo/app", None),
    ("octo/app@main", "octo/app", None),
    ("octo/app/@main", "octo/app", None),
    ("./.github/workflows/windows.yml", "octo/app", None),  # local: local_target's
    # only GitHub's form, OWNER/REPO/.github/workflows/FILE@REF
    ("octo/app/.github/workflows/../workflows/windows.yml@main", "octo/app", None),
    ("octo/app/.github/workflows/sub/windows.yml@main", "octo/app", None),
    ("octo/app/ci/windows.yml@main", "octo/app", None),
    ("octo/app/.github/workflows/..@main", "octo/app", None),
])
def test_own_repository_target_edge_values(uses, repository, target) -> None:
    assert own_repository_target(uses, repository) == target


def _repo(tmp_path: Path) -> Path:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "windows.yml").write_text(CALLED)
    (wf / "periodic.yml").write_text(CALLER)
    return tmp_path


@pytest.mark.usefixtures("fake_predictor")
def test_a_call_of_the_repository_by_name_reads_the_checkout(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    out = CliRunner().invoke(main, ["estimate", str(root), "--repo", "octo/app",
                                    "--format", "json"])
    assert out.exit_code == 0, out.output
    jobs = {j["name"]: j for wf in json.loads(out.stdout)["workflows"]
            if wf["path"] == ".github/workflows/periodic.yml" for j in wf["jobs"]}
    assert sorted(jobs) == ["trigger / integration (ltsc2019)", "trigger / integration (ltsc2022)"]
    job = jobs["trigger / integration (ltsc2022)"]
    assert job["runs_on"] == "windows-2022" and job["remote_workflow"] is None
    assert job["called_workflow"] == ".github/workflows/windows.yml"
    assert job["called_as"] == "Octo/App/.github/workflows/windows.yml@main"
    table = CliRunner().invoke(main, ["estimate", str(root), "--repo", "octo/app"]).stdout
    assert ("  note: trigger / integration (ltsc2019) (and 1 more): read from this checkout's "
            "`.github/workflows/windows.yml`; GitHub reads it at the ref the call names "
            "(`Octo/App/.github/workflows/windows.yml@main`)") in table.splitlines()


@pytest.mark.usefixtures("fake_predictor")
def test_another_repository_stays_remote(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    out = CliRunner().invoke(main, ["estimate", str(root), "--repo", "octo/fork",
                                    "--format", "json"])
    jobs = [j for wf in json.loads(out.stdout)["workflows"]
            if wf["path"] == ".github/workflows/periodic.yml" for j in wf["jobs"]]
    assert [j["name"] for j in jobs] == ["trigger"]
    assert jobs[0]["remote_workflow"] == "Octo/App/.github/workflows/windows.yml@main"
    assert jobs[0]["called_as"] is None
    table = CliRunner().invoke(main, ["estimate", str(root), "--repo", "octo/fork"]).stdout
    assert "remote reusable workflow: its jobs are not read" in table
    assert "no price" not in table  # said once: its jobs are not read


@pytest.mark.usefixtures("fake_predictor")
def test_a_call_by_name_of_a_file_the_checkout_lacks_stays_remote(tmp_path: Path) -> None:
    """GitHub reads the file at the named ref, which may hold it though the checkout no
    longer does (renamed since): a remote call, not a 'cannot read' error."""
    root = _repo(tmp_path)
    (root / ".github" / "workflows" / "windows.yml").unlink()
    out = CliRunner().invoke(main, ["estimate", str(root), "--repo", "octo/app",
                                    "--format", "json"])
    assert out.exit_code == 0, out.output
    (job,) = [j for wf in json.loads(out.stdout)["workflows"] for j in wf["jobs"]]
    assert job["remote_workflow"] == "Octo/App/.github/workflows/windows.yml@main"
