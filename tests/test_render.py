"""laser_ci.report.render (and the comment's assumptions): what a row's cost cell and the
folded advice lines claim, from `laser-ci estimate` on small workflows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from laser_ci.cli import main
from laser_ci.report import assumptions, cells, comment, tables
from laser_ci.report.fold import fold_messages, folded_advice
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
    folded = assumptions.assumptions(result["workflows"], detail=1)
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
    folded = assumptions.assumptions(result["workflows"])
    (line,) = [x for x in folded.splitlines() if "/ release |" in x]
    assert line.endswith("| — |") and "$" not in line
    # the instances of a group that never run are not in its sum, nor counted unpriced
    jobs = [{**build, "id": "t"}] * 7 + [{**release, "id": "t", "cost_usd": None}]
    (group,) = grouped(jobs)
    assert group.cost_words(lambda x: f"${x:.3f}") == f"${7 * build['cost_usd']:.3f}"
    group = Group([{**release, "id": "t"}] * 8)
    assert group.cost_usd is None and group.cost_words(str) == ""
    # nor in its summed median or its slowest instance (the billable time leaves them out)
    (group,) = grouped([{**build, "id": "t"}] * 7 + [{**release, "id": "t"}])
    assert group.total_s == pytest.approx(7 * build["runtime_s"]["p50"])
    assert group.slowest is not None and group.slowest["name"] == "build"
    members = [comment.JobDiff(f"t{i}", "unchanged", head=j, base=j)
               for i, j in enumerate([{**build, "id": "t"}] * 7 + [{**release, "id": "t"}])]
    row = tables.group_row(members, compare=True, folded=False)
    assert row[1] == f"Σ {cells.dur(7 * build['runtime_s']['p50'])}"


@pytest.mark.usefixtures("fake_predictor")
def test_a_job_that_never_runs_gets_no_advice(tmp_path: Path) -> None:
    """No `timeout-minutes` advice ('$2.16 per hung run') for a job that never runs."""
    wf = json.loads(_estimate(_write(tmp_path, NEVER_RUNS), "--format", "json"))["workflows"][0]
    build, release = wf["jobs"]
    assert build["advice"] and release["advice"] == []


def _long_job(name: str, runner: str, lines: int) -> str:
    script = "\n".join(f"          ./step-{i}.sh --with a long argument list" for i in range(lines))
    return f"  {name}:\n    runs-on: {runner}\n    steps:\n      - run: |\n{script}\n"


TIMEOUTS = ("name: Timeouts\non: push\njobs:\n" + _long_job("small", "ubuntu-latest", 1)
            + _long_job("medium", "ubuntu-latest", 60) + _long_job("big", "macos-latest", 200))


@pytest.mark.usefixtures("fake_predictor")
def test_folded_advice_gives_each_varying_number_as_its_range(tmp_path: Path) -> None:
    """The same advice on more than 2 jobs is one line; where their messages differ in
    numbers (the suggested timeout-minutes, the $ per hung run), the line gives each as its
    range over them, not one job's numbers as if they were all of theirs."""
    folder = _write(tmp_path, TIMEOUTS)
    result = json.loads(_estimate(folder, "--format", "json"))
    advice = [a for j in result["workflows"][0]["jobs"] for a in j["advice"]
              if a["kind"] == "timeout"]
    assert len(advice) == 3
    minutes = sorted(a["suggested"]["timeout-minutes"] for a in advice)
    assert minutes[0] < minutes[-1]  # they differ
    costs = sorted({re.search(r"That is (\$[\d.,]+)", a["message"]).group(1) for a in advice},
                   key=lambda x: float(x[1:].replace(",", "")))
    assert len(costs) == 2  # ubuntu and macOS
    (line,) = [x for x in _estimate(folder).splitlines() if x.startswith("  advice")]
    assert line.startswith("  advice (timeout, 3 jobs, e.g. small): No `timeout-minutes`: ")
    assert f"Suggest `timeout-minutes: {minutes[0]}`–`{minutes[-1]}`." in line
    assert f"That is {costs[0]}–{costs[-1]} per hung run" in line
    assert "(GitHub's default)" in line and line.count("360") == 1  # shared wording kept
    # the comment's instances of one job: the same
    group = [{**j, "id": "t"} for j in result["workflows"][0]["jobs"]]
    folded = assumptions.assumptions([{**result["workflows"][0], "jobs": group}], detail=1)
    assert f"`timeout-minutes: {minutes[0]}`–`{minutes[-1]}`" in folded  # code spans


def test_folded_messages_that_differ_in_words() -> None:
    """A sentence only some of the messages have says on how many; messages that differ in
    more than that are one job's message, said to be its own."""
    assert fold_messages(["No limit. It costs $2.160. Suggest 5.", "No limit. Suggest 10.",
                          "No limit. Suggest 5."]) == (
        "No limit. It costs $2.160 (1 of 3 jobs). Suggest 5–10.")
    assert fold_messages(["Use `ubuntu-22.04` 3 times.", "Use `ubuntu-24.04` 3 times."]) == (
        "Use `ubuntu-22.04` 3 times (1 of 2 jobs). Use `ubuntu-24.04` 3 times (1 of 2 jobs).")
    items = [(f"j{i}", f"Use `r{i}`. Then `x{i}`.") for i in range(3)]
    assert fold_messages([m for _, m in items]) is None
    assert folded_advice(items) == ("j0", "Use `r0`. Then `x0`. (for j0; the other 2 differ)")
    assert fold_messages(["Costs $1,200.50, 4 cores.", "Costs $0.010, 2 cores.",
                          "Costs $3.10, 4 cores."]) == "Costs $0.010–$1,200.50, 2–4 cores."


@pytest.mark.usefixtures("fake_predictor")
def test_a_runner_group_is_shown_in_words_not_as_json(tmp_path: Path) -> None:
    folder = _write(tmp_path, "on: push\njobs:\n  a:\n    runs-on: {group: big-runners, "
                              "labels: [linux, x64]}\n    steps: [{run: make}]\n")
    (row,) = [x for x in _estimate(folder).splitlines() if x.startswith("  a ")]
    assert "group: big-runners; labels: linux, x64" in row and "{" not in row
    (md,) = [x for x in _estimate(folder, "--format", "markdown").splitlines()
             if x.startswith("| a |")]
    assert "`group: big-runners; labels: linux, x64`" in md


@pytest.mark.usefixtures("fake_predictor")
def test_a_job_on_a_retired_runner_takes_no_time_and_costs_nothing(tmp_path: Path) -> None:
    """GitHub fails a job that asks for a retired label without running it: it is not in
    the billable time, the critical path or the totals (not counted as unpriced either)."""
    folder = _write(tmp_path, "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
                              "    steps: [{run: make}]\n  old:\n    runs-on: ubuntu-20.04\n"
                              "    steps: [{run: make something much longer}]\n")
    wf = json.loads(_estimate(folder, "--format", "json"))["workflows"][0]
    a, old = wf["jobs"]
    assert old["runner"]["retired"] and old["runtime_s"]["p50"] > 0
    assert wf["billable_s"] == pytest.approx(a["runtime_s"]["p50"], abs=0.1)
    assert wf["critical_path_s"] == pytest.approx(a["runtime_s"]["p50"], abs=0.1)
    assert wf["cost_usd"] == a["cost_usd"] and "unpriced" not in json.dumps(wf["cost"])


@pytest.mark.usefixtures("fake_predictor")
def test_a_runner_without_a_price_says_why(tmp_path: Path) -> None:
    """A label no catalog knows: its blank cost cell is explained by a note (the sizing's
    reason), in the table and the Markdown; a retired label's advice says it instead."""
    folder = _write(tmp_path, "on: push\njobs:\n  b:\n    runs-on: my-box\n"
                              "    steps: [{run: make}]\n  c:\n    runs-on: ubuntu-20.04\n"
                              "    steps: [{run: make}]\n")
    (line,) = [x for x in _estimate(folder).splitlines() if "not priced: self" in x]
    assert line.startswith("  note: b: not priced: self-hosted or third-party (`my-box` is "
                           "not a label GitHub documents")
    assert any("- **b**: not priced: self-hosted or third-party (`my-box`" in x
               for x in _estimate(folder, "--format", "markdown").splitlines())


@pytest.mark.usefixtures("fake_predictor")
def test_a_group_leaves_out_its_instances_on_retired_runners(tmp_path: Path) -> None:
    """As the workflow's totals do: not in the group's sum, slowest or cost, nor unpriced."""
    folder = _write(tmp_path, "on: push\njobs:\n  t:\n    runs-on: ${{ matrix.os }}\n"
                              "    strategy:\n      matrix:\n        os: [ubuntu-20.04, ubuntu-latest]\n"
                              "        py: ['3.10', '3.11', '3.12', '3.13']\n    steps: [{run: make}]\n")
    wf = json.loads(_estimate(folder, "--format", "json"))["workflows"][0]
    (group,) = grouped(wf["jobs"])
    assert group.total_s == pytest.approx(wf["billable_s"], abs=0.5)
    assert group.unpriced == 0 and group.cost_usd == pytest.approx(wf["cost_usd"])


@pytest.mark.parametrize(("messages", "folded"), [
    (["Runs (1.5x faster).", "Runs (2.5x faster).", "Runs (1.25x faster)."],
     "Runs (1.25x–2.5x faster)."),
    (["A (0.27x the price) on `ubuntu-22.04`.", "A (1.27x the price) on `ubuntu-22.04`."],
     "A (0.27x–1.27x the price) on `ubuntu-22.04`."),
])
def test_folded_multipliers_are_whole_numbers(messages: list[str], folded: str) -> None:
    # `1.5x` was read as the number 1 followed by `.5x`: '(1–2.5x faster)'
    assert fold_messages(messages) == folded


@pytest.mark.parametrize("group, label", [
    ("test (${{ matrix.os }})", "test (…)"),
    ("${{ matrix.job }} ${{ matrix.profile }} ${{ matrix.os }}-${{ matrix.arch }}", "build"),
    ("${{ matrix.name }}", "build"),
    ("Unit Test / ${{ matrix.suite }}", "Unit Test / …"),
])
def test_a_group_whose_shared_name_is_all_matrix_values_is_named_by_its_id(group: str,
                                                                           label: str) -> None:
    from laser_ci.report.diff import JobDiff
    from laser_ci.report.tables import group_label

    job = {"id": "build", "group": group, "name": "x"}
    assert Group([job] * 3).label == label
    # the comment and the job summary too, at head or (a removed job) at base
    assert group_label([JobDiff("x", "unchanged", head=job)] * 3) == label
    assert group_label([JobDiff("x", "removed", base=job)] * 3) == label


@pytest.mark.usefixtures("fake_predictor")
def test_a_job_on_a_retired_runner_costs_a_dash(tmp_path: Path) -> None:
    """As a job that never runs: its cost cell was blank, as for a runner without a price,
    beside a group sum that leaves it out."""
    folder = _write(tmp_path, "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
                              "    steps: [{run: make}]\n  old:\n    runs-on: ubuntu-20.04\n"
                              "    steps: [{run: make}]\n")
    (row,) = [x for x in _estimate(folder).splitlines() if x.startswith("  old ")]
    assert row.rstrip().endswith("  —")
    (md,) = [x for x in _estimate(folder, "--format", "markdown").splitlines()
             if x.startswith("| old |")]
    assert md.rstrip().endswith("| — |")
