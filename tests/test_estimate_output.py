"""What ``laser-ci estimate`` prints around its table: the errors before it (not after
hundreds of rows), one short assumptions line (all of them with ``--verbose`` and in the
JSON), and the runner time (summed runtime) told apart from the billed minutes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from laser_ci.cli import main

BIG = """name: Big
on: push
jobs:
  fine:
    runs-on: ubuntu-latest
    steps:
      - run: echo ok
  huge:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]
        b: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
    steps:
      - run: echo ${{ matrix.a }} ${{ matrix.b }}
"""


def _repo(tmp_path: Path) -> Path:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "big.yml").write_text(BIG)
    return tmp_path


def test_the_errors_come_before_the_table(tmp_path: Path, fake_predictor: object) -> None:
    result = CliRunner().invoke(main, ["estimate", str(_repo(tmp_path))])
    assert result.exit_code == 1
    out = result.output  # stderr and stdout as a terminal shows them
    error = out.index("288 combinations")
    assert error < out.index("  job ") < out.index("predictor:")
    assert len(result.stderr.splitlines()) == 1  # stderr holds the errors alone


def test_one_short_assumptions_line_and_all_of_them_with_verbose(
        tmp_path: Path, fake_predictor: object) -> None:
    repo = _repo(tmp_path)
    table = CliRunner().invoke(main, ["estimate", str(repo)]).stdout
    lines = [x for x in table.splitlines() if x.startswith("assumptions")]
    assert len(lines) == 1 and len(lines[0]) <= 120, lines
    assert lines[0].endswith("more: --verbose)")
    verbose = CliRunner().invoke(main, ["estimate", str(repo), "--verbose"]).stdout
    full = json.loads(CliRunner().invoke(main, ["estimate", str(repo), "--format", "json"]).stdout)
    for assumption in full["assumptions"]:
        assert f"  - {assumption}" in verbose


def test_runner_time_and_billed_minutes_are_named_apart(
        tmp_path: Path, fake_predictor: object) -> None:
    repo = _repo(tmp_path)
    table = CliRunner().invoke(main, ["estimate", str(repo)]).stdout
    (total,) = [x for x in table.splitlines() if x.startswith("  critical path")]
    full = json.loads(CliRunner().invoke(main, ["estimate", str(repo), "--format", "json"]).stdout)
    billed = full["workflows"][0]["cost"]["billable_minutes"]
    assert " · runner time " in total and f" · {billed} billed minute" in total
    assert "billable" not in table


def test_markdown_lists_the_unreadable_files_first(tmp_path: Path, fake_predictor: object) -> None:
    md = CliRunner().invoke(main, ["estimate", str(_repo(tmp_path)), "--format", "markdown"])
    assert md.stdout.index("**Files that could not be read**") < md.stdout.index("| job |")


def test_markdown_has_the_cost_per_run_and_month_the_table_has(
        tmp_path: Path, fake_predictor: object) -> None:
    repo = _repo(tmp_path)
    args = ["estimate", str(repo), "--runs-per-month", "100"]
    table = CliRunner().invoke(main, args).stdout
    md = CliRunner().invoke(main, [*args, "--format", "markdown"]).stdout
    (total,) = [x for x in table.splitlines() if x.startswith("  critical path")]
    cost = total[total.index(" · cost "):]
    assert " per run · $" in cost and " per month (100 runs)" in cost
    assert f"{cost}." in md
