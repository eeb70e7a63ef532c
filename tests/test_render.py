"""laser_ci.report.render (and the comment's assumptions): what a row's cost cell and the
folded advice lines claim, from `laser-ci estimate` on small workflows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from laser_ci.cli import main
from laser_ci.report import comment


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
