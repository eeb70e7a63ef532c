"""What ``laser-ci estimate`` prints around its table: the errors before it (not after
hundreds of rows), one short assumptions line (all of them with ``--verbose`` and in the
JSON), and the runner time (summed runtime) told apart from the billed minutes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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


@pytest.mark.parametrize(("text", "width", "shown"), [
    ("short", 60, "short"),
    ("x" * 60, 60, "x" * 60),
    ("a" * 40 + "b" * 21, 60, "a" * 40 + "…" + "b" * 19),
    ("abcdef", 4, "ab…f"),
    ("abcdef", 2, "a…"),
    ("abcdef", 1, "…"),
])
def test_cut_edge_values(text: str, width: int, shown: str) -> None:
    from laser_ci.report.render import _cut

    assert _cut(text, width) == shown and len(shown) <= width


LONG = """name: Long
on: push
jobs:
  it:
    name: Linux Integration (${{ matrix.runtime }}, ${{ matrix.os }}, ${{ matrix.cgroup }})
    runs-on: ubuntu-latest
    strategy:
      matrix:
        runtime: [io.containerd.runc.v2]
        os: [ubuntu-22.04-with-a-long-image-name]
        cgroup: [cgroupfs, systemd]
    steps:
      - run: make integration
"""


def test_long_names_keep_the_end_that_tells_instances_apart(tmp_path: Path,
                                                            fake_predictor: object) -> None:
    """containerd's instances were cut after 59 characters, before the cgroup that is all
    that differs: six rows read the same."""
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "long.yml").write_text(LONG)
    out = CliRunner().invoke(main, ["estimate", str(tmp_path)]).stdout
    rows = [line.split("  ")[1] for line in out.splitlines()
            if line.startswith("  Linux Integration")]
    assert len(rows) == 2 and len(set(rows)) == 2, rows
    assert rows[0].endswith("cgroupfs)") and rows[1].endswith("systemd)") and "…" in rows[0]
