"""A collected folder (what `laser-ci collect` writes) as the past runs `estimate --history` reads."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from laser_ci.text.history import UNTIMED_ENDS, HistoryIndex, PastRuns
from laser_ci.training.example import Example
from laser_ci.training.history import run_time


def load_history_index(
    data_dir: str | os.PathLike[str], repo: str | None = None, *, success_only: bool = False
) -> HistoryIndex:
    """Past runs of one repository from a folder in the ``gha-runs`` format (what
    ``laser-ci collect`` writes), for ``laser-ci estimate --history``.

    Per (workflow path, job display name): the per-job ``run_time_s`` of the runs (the
    collected ``jobs`` whose name matches one job of the workflow file at that run, or the
    run's time when its workflow expands to one job; a skipped or cancelled job is untimed,
    :data:`~laser_ci.text.history.UNTIMED_ENDS`), ordered by when each run began
    (:func:`run_time`; oldest first, undated runs first), and ``previous_text``: that job
    serialized from the latest run's files. Per workflow path: the runs' totals and the
    latest run's workflow text. Only those latest texts are serialized. ``repo`` picks one
    repository when the folder holds several (an error otherwise).
    """
    return read_collected(data_dir, repo, success_only=success_only)[0]


def read_collected(
    data_dir: str | os.PathLike[str], repo: str | None = None, *, success_only: bool = False
) -> tuple[HistoryIndex, list[dict[str, Any]]]:
    """:func:`load_history_index` and every row of the folder's runs file it was read from
    (:func:`laser_ci.training.examples.load_runs`): the file read once."""
    from laser_ci.training.examples import load_untexted, numbered_runs

    with _reading(data_dir):
        path, numbered = numbered_runs(data_dir)
    # before the examples are made: they iterate each row's list
    if (wrong := _wrong_jobs(path, numbered)) is not None:
        raise ValueError(f"--history {data_dir}: unreadable ({wrong})")
    rows = [row for _n, row in numbered]
    with _reading(data_dir):
        examples, renderers = load_untexted(data_dir, rows)
    # each example's text, made on demand (by identity: the examples looked up below are
    # these objects, alive until the index is built)
    text_of = {id(e): r for e, r in zip(examples, renderers, strict=True)}
    repos = sorted({e.repo for e in examples})
    if repo is not None:
        examples = [e for e in examples if e.repo == repo]
    elif len(repos) > 1 and "" in repos:
        raise ValueError(f"--history {data_dir}: unreadable ({_without_repo(data_dir)}, in a "
                         f"folder of {', '.join(repos[1:4])}{', ...' if len(repos) > 4 else ''}"
                         "'s runs)")
    elif len(repos) > 1:
        raise ValueError(f"--history {data_dir} holds {len(repos)} repositories "
                         f"({', '.join(repos[:3])}{', ...' if len(repos) > 3 else ''}); "
                         "collect one repository per folder")
    if success_only:
        examples = [e for e in examples if e.conclusion == "success"]
    def when(e: Example) -> float | None:
        return run_time(e.created_at, e.commit_date)

    order = sorted(range(len(examples)), key=lambda i: (when(examples[i]) or float("-inf"), i))
    jobs: dict[tuple[str, str], list[Example]] = {}
    workflows: dict[str, list[Example]] = {}
    for i in order:
        e = examples[i]
        if e.kind == "job" and e.job_name is not None:
            if e.conclusion in UNTIMED_ENDS:  # its duration is not a runtime
                continue
            jobs.setdefault((e.workflow_path, e.job_name), []).append(e)
        elif e.kind == "workflow":
            workflows.setdefault(e.workflow_path, []).append(e)

    def past(runs: list[Example]) -> PastRuns:
        # one entry per run (a row an id repeats: a re-run, its last row); a row without
        # an id is a run of its own, as estimate.load_history reads it
        once = list({e.run_id or i: e for i, e in enumerate(runs)}.values())
        times = [t for e in once if (t := when(e)) is not None]
        span = (max(times) - min(times)) / 86400 if len(times) > 1 else None
        return PastRuns(tuple(e.runtime_s for e in once), text_of[id(once[-1])](None), span,
                        conclusions=tuple(e.conclusion or None for e in once))

    return HistoryIndex(
        jobs={k: past(v) for k, v in jobs.items()},
        workflows={k: past(v) for k, v in workflows.items()},
        source=str(data_dir),
        repo=repo or (repos[0] if len(repos) == 1 else ""),
    ), rows


@contextmanager
def _reading(data_dir: str | os.PathLike[str]) -> Iterator[None]:
    """A folder without its files, or one that cannot be read, as one ``--history`` error."""
    try:
        yield
    except FileNotFoundError as exc:
        raise ValueError(f"--history {data_dir}: not a collected folder ({exc})") from exc
    except (OSError, ValueError) as exc:
        raise ValueError(f"--history {data_dir}: unreadable ({exc})") from exc


def _without_repo(data_dir: str | os.PathLike[str]) -> str:
    """``<runs file>:<line>: a run without a repository``, of the first such row."""
    from laser_ci.training.examples import _data_file, _numbered_rows

    path = _data_file(data_dir, "runs")
    assert path is not None
    line = next((n for n, row in _numbered_rows(path) if not row.get("repo")), None)
    return f"{path}:{line}: a run without a repository"


def _wrong_jobs(path: Path, rows: list[tuple[int, dict[str, Any]]]) -> str | None:
    """``<runs file>:<line>: jobs is not a list of jobs (...)`` for the first of the runs
    file's ``rows`` (line number, row) whose ``jobs`` is there but not a list of objects
    (each row's jobs as GitHub listed them, or none: null or left out); None when every
    row's are."""
    from laser_ci.training.examples import _short

    n, jobs = next(((n, row.get("jobs")) for n, row in rows if not _jobs_listed(row)),
                   (None, None))
    return None if n is None else f"{path}:{n}: jobs is not a list of jobs ({_short(jobs)})"


def _jobs_listed(row: dict[str, Any]) -> bool:
    """Whether a runs row's ``jobs`` is left out, null or a list of objects."""
    jobs = row.get("jobs")
    return jobs is None or (isinstance(jobs, list) and all(isinstance(j, dict) for j in jobs))
