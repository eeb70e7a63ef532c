"""``estimate --history DIR`` on a collected folder with corrupt parts: each is refused in
one line, or left out, and never gives a job a wrong history.

The folders are the ``runtime-matrix`` fixture's history (``tests/runtime_history.py``, the
format ``laser-ci collect`` writes) with one thing changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from runtime_history import WORKFLOW, make_runs, write_folder

from laser_ci.estimate import load_history
from laser_ci.text.history import seconds_of

ROOT = Path(__file__).parent / "fixtures" / "repos" / "runtime-matrix"
SHARD = "Unit Test / pkg 1/12 on ubuntu-latest/current"


def _runs() -> list[dict]:
    return make_runs(days=14)


def _set_job(row: dict, name: str, **fields: object) -> None:
    for job in row["jobs"]:
        if job["name"] == name:
            job.update(fields)


def _times(runs: list[dict], name: str) -> list[float]:
    """The job's times in the runs, oldest first (as the fixture writes them: all timed)."""
    return [j["run_time_s"] for r in runs for j in r["jobs"] if j["name"] == name]


def test_a_json_boolean_is_not_a_duration() -> None:
    assert seconds_of(True) is None


@pytest.mark.parametrize("name", ["lint", SHARD])
def test_a_boolean_duration_is_untimed_not_one_second(tmp_path, name: str) -> None:
    """``"run_time_s": true`` (a corrupt row) was read as 1 s, for a job the workflow names
    (``lint``) and for an instance of a matrix computed at run time."""
    runs = _runs()
    _set_job(runs[-1], name, run_time_s=True)
    past = load_history(write_folder(tmp_path / "h", runs)).for_job(WORKFLOW, name)
    assert past is not None and 1.0 not in past.runtimes
    assert list(past.runtimes) == _times(runs[:-1], name)[-len(past.runtimes):]


@pytest.mark.parametrize("end", ["cancelled", "skipped"])
def test_a_cancelled_or_skipped_job_of_the_workflow_is_untimed(tmp_path, end: str) -> None:
    """A cancelled job's duration is where it was cut (UNTIMED_ENDS): the instances of a
    run-time matrix left it out, but a job the workflow names (``lint``) counted it, so
    three runs cancelled after 3 s made its recent median 3 s."""
    runs = _runs()
    for row in runs[-3:]:
        _set_job(row, "lint", conclusion=end, run_time_s=3.0)
        _set_job(row, SHARD, conclusion=end, run_time_s=3.0)
    index = load_history(write_folder(tmp_path / "h", runs))
    for name in ("lint", SHARD):
        past = index.for_job(WORKFLOW, name)
        assert past is not None and 3.0 not in past.runtimes, name
        assert list(past.runtimes) == _times(runs[:-3], name)[-len(past.runtimes):]
        assert len(past.conclusions) in (0, len(past.runtimes))


@pytest.mark.parametrize("rows", ["all", "every other"])
def test_runs_without_an_id_are_each_a_run(tmp_path, rows: str) -> None:
    """Rows without an ``id`` were all one run to a job the workflow names (the last such
    row, at the first one's place: ``history_runs`` 1, or its latest run among the oldest),
    while the instances of a run-time matrix counted each row."""
    runs = _runs()
    for row in runs if rows == "all" else runs[::2]:
        del row["id"]
    index = load_history(write_folder(tmp_path / "h", runs))
    for name in ("lint", SHARD):
        past = index.for_job(WORKFLOW, name)
        assert past is not None
        assert list(past.runtimes) == _times(runs, name)[-len(past.runtimes):], name
        assert len(past.runtimes) == len(runs)


@pytest.mark.parametrize("value", [None, "", "missing"])
def test_a_run_without_a_repository_is_named_by_its_line(tmp_path, value: object) -> None:
    """One row without ``repo`` made the folder "hold 2 repositories (, octo/monorepo)":
    an empty name and no file. It is one line naming the row; exit 2, as for any
    unreadable --history folder."""
    from laser_ci.cli import main

    runs = _runs()
    if value == "missing":
        del runs[5]["repo"]
    else:
        runs[5]["repo"] = value
    folder = write_folder(tmp_path / "h", runs)
    out = CliRunner().invoke(main, ["estimate", str(ROOT / ".github" / "workflows"),
                                    "--repo-root", str(ROOT), "--history", str(folder)])
    assert out.exit_code == 2
    assert out.stderr.splitlines() == [
        f"laser-ci: error: --history {folder}: unreadable ({folder / 'runs.jsonl.gz'}:6: "
        "a run without a repository, in a folder of octo/monorepo's runs)"]


@pytest.mark.parametrize("jobs", ["lint", {"lint": 57.0}, [["lint", 57.0]], [5]])
def test_a_jobs_field_that_is_not_a_list_of_jobs_is_one_line(tmp_path, jobs: object) -> None:
    """A row whose ``jobs`` is not a list of objects was read as a run that listed no job:
    every job of such a folder was estimated cold under a warning that the folder has no
    run of it, and the instances of a run-time matrix came from an older run."""
    from laser_ci.cli import main

    runs = _runs()
    runs[-1]["jobs"] = jobs  # line 28
    folder = write_folder(tmp_path / "h", runs)
    out = CliRunner().invoke(main, ["estimate", str(ROOT / ".github" / "workflows"),
                                    "--repo-root", str(ROOT), "--history", str(folder)])
    assert out.exit_code == 2
    [line] = out.stderr.splitlines()
    assert line.startswith(f"laser-ci: error: --history {folder}: unreadable "
                           f"({folder / 'runs.jsonl.gz'}:{len(runs)}: jobs is not a list of "
                           "jobs (")


def test_rows_without_jobs_are_read_as_before(tmp_path) -> None:
    runs = _runs()
    runs[0]["jobs"] = None
    del runs[1]["jobs"]
    runs[2]["jobs"] = []
    assert load_history(write_folder(tmp_path / "h", runs)).for_job(WORKFLOW, "lint")


def test_runs_on_one_commit_are_ordered_by_when_they_ran(tmp_path) -> None:
    """Runs of one commit (a schedule on a quiet branch) tie on its date, and collect
    writes each call's runs newest first: the oldest of them counted as the latest. The
    run's ``created_at`` (collect writes it) orders them as they ran, for a job the
    workflow names and for the instances of a run-time matrix."""
    runs = _runs()
    tail = runs[-4:]
    for k, row in enumerate(tail):
        row["commit_date"] = tail[0]["commit_date"]
        row["created_at"] = f"2024-06-0{k + 1}T03:00:00Z"
    runs[-4:] = tail[::-1]  # as one collect call writes them
    index = load_history(write_folder(tmp_path / "h", runs))
    for name in ("lint", SHARD):
        past = index.for_job(WORKFLOW, name)
        assert past is not None
        assert list(past.runtimes)[-4:] == _times(tail, name), name


def test_a_repeated_run_id_reads_its_last_row_for_the_matrix_instances(tmp_path) -> None:
    """A re-run left twice by a collect call that was killed: its last row is the newest
    attempt. The instances of a run-time matrix came from the first row, while the jobs
    the workflow names read the last one."""
    runs = _runs()
    again = {**runs[-1], "jobs": [dict(j) for j in runs[-1]["jobs"]]}
    _set_job(again, SHARD, run_time_s=777.0)
    index = load_history(write_folder(tmp_path / "h", [*runs, again]))
    past = index.for_job(WORKFLOW, SHARD)
    assert past is not None and past.runtimes[-1] == 777.0
    assert list(past.runtimes).count(777.0) == 1
