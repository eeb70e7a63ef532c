"""laser_ci.report.render (and the comment's assumptions): what a row's cost cell and the
folded advice lines claim, from `laser-ci estimate` on small workflows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from laser_ci.cli import main
from laser_ci.report import comment
from laser_ci.report.jobs import Group, grouped


def _estimate(folder: Path, *args: str) -> str:
    out = CliRunner().invoke(main, ["estimate", str(folder), *args])
    assert out.exit_code == 0, out.output
    return out.stdout


def _write(tmp_path: Path, text: str, name: str = "w.yml") -> Path:
    (tmp_path / name).write_text(text)
    return tmp_path


PARTLY_PRICED_MATRIX = """name: Matrix
on: push
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, my-box-a, my-box-b, my-box-c]
        py: ["3.11", "3.12"]
    steps: [{run: make}]
"""


@pytest.mark.usefixtures("fake_predictor")
def test_a_group_row_says_how_many_instances_its_cost_leaves_out(tmp_path: Path) -> None:
    """8 instances, 2 priced: the group's cost is the sum of the 2, and the cell says that 6
    have no price (table, Markdown, the comment's assumptions), not a bare $0.012."""
    folder = _write(tmp_path, PARTLY_PRICED_MATRIX)
    result = json.loads(_estimate(folder, "--format", "json"))
    costs = [j["cost_usd"] for j in result["workflows"][0]["jobs"]]
    assert costs.count(None) == 6  # the JSON says it per job, as before
    priced = f"${sum(c for c in costs if c is not None):,.3f}"
    (group,) = [x for x in _estimate(folder).splitlines() if "· 8 instances" in x]
    assert group.rstrip().endswith(f"{priced} + 6 unpriced")
    (row,) = [x for x in _estimate(folder, "--format", "markdown").splitlines()
              if "· 8 instances" in x]
    assert row.endswith(f"| {priced} + 6 unpriced |")
    folded = comment._assumptions(result["workflows"], detail=1)
    assert f"(8 instances) | 4 runners | {priced} + 6 unpriced |" in folded
    # every instance priced: the sum alone; none priced: no sum at all
    for oses, priced in (("ubuntu-latest, ubuntu-22.04, ubuntu-24.04, windows-latest", True),
                         ("my-box-a, my-box-b, my-box-c, my-box-d", False)):
        folder = _write(tmp_path, PARTLY_PRICED_MATRIX.replace(
            "ubuntu-latest, my-box-a, my-box-b, my-box-c", oses))
        (group,) = [x for x in _estimate(folder).splitlines() if "· 8 instances" in x]
        cell = group.split("slowest ")[1].split(maxsplit=1)[1:]  # what follows the time
        assert cell == ([cell[0]] if priced else []) and "unpriced" not in group
        assert not priced or cell[0].startswith("$")


NEVER_RUNS = """name: Never
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps: [{run: make}]
  release:
    if: github.event_name == 'release'
    runs-on: macos-latest
    steps: [{run: make release}]
"""


@pytest.mark.usefixtures("fake_predictor")
def test_a_job_that_never_runs_shows_no_cost(tmp_path: Path) -> None:
    """A job whose `if:` is false on every trigger is left out of the totals, and its row
    shows no cost either ("—"), next to the note that says it never runs; the JSON keeps
    what one run would cost and says it never runs (runs_on_events [])."""
    folder = _write(tmp_path, NEVER_RUNS)
    result = json.loads(_estimate(folder, "--format", "json"))
    wf = result["workflows"][0]
    build, release = wf["jobs"]
    assert release["runs_on_events"] == [] and release["cost_usd"] > 0
    assert wf["cost_usd"] == build["cost_usd"]  # not counted, as before
    table = _estimate(folder).splitlines()
    (row,) = [x for x in table if x.startswith("  release ")]
    assert row.rstrip().endswith(" —") and "$" not in row
    assert any("release: its `if:` is false on every trigger: it never runs" in x for x in table)
    (md,) = [x for x in _estimate(folder, "--format", "markdown").splitlines()
             if x.startswith("| release |")]
    assert md.endswith("| — |") and "$" not in md
    folded = comment._assumptions(result["workflows"])
    (line,) = [x for x in folded.splitlines() if "/ release |" in x]
    assert line.endswith("| — |") and "$" not in line
    # the instances of a group that never run are not in its sum, nor counted unpriced
    jobs = [{**build, "id": "t"}] * 7 + [{**release, "id": "t", "cost_usd": None}]
    (group,) = grouped(jobs)
    assert group.cost_words(lambda x: f"${x:.3f}") == f"${7 * build['cost_usd']:.3f}"
    group = Group([{**release, "id": "t"}] * 8)
    assert group.cost_usd is None and group.cost_words(str) == ""
