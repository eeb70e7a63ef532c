"""The text contract between training and ``laser-ci estimate``.

The models learn from the texts the training path builds (``load_examples``:
``Example.text`` cold, ``Example.text_warm`` with the history of the earlier runs), and
``laser-ci estimate`` builds the texts it predicts from through
``laser_ci.estimate._job_text_from`` (the files on disk, the repository's profile and,
with ``--history``, a folder ``laser-ci collect`` wrote). For the same job at the same
commit, with the same earlier runs, the two must be the same bytes, cold and warm, or the
model reads at inference something it never saw in training.

A small hand-written repository pins it: a one-job workflow with a local composite action
whose file changes in the latest run (a ``history-config: changed`` block), a matrix
whose instances are labeled by collected ``jobs``, and a job of a local reusable workflow.
The last three were differences (a cancelled earlier run, runs ordered by their commit's
date, a repeated run id), fixed by training's history reading runs as the estimate does.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from laser_ci.estimate import estimate_paths, load_history
from laser_ci.predictors.base import Runtime
from laser_ci.text.serialize import serialize_workflow
from laser_ci.training.example import Example
from laser_ci.training.examples import load_examples
from laser_ci.workflows.model import RepoProfile
from laser_ci.workflows.parse import DiskFiles, read_workflows

REPO = "octo/contract"
PROFILE = {"n_files": 120, "total_bytes": 2_400_000,
           "by_ext": {".py": [80, 2_000_000], ".yml": [6, 4_000]},
           "top_level": [".github/", "pyproject.toml", "src/", "tests/"]}

SINGLE = """\
name: Single
on: [push, pull_request]
jobs:
  build:
    runs-on: ubuntu-latest
    timeout-minutes: 20
    steps:
      - uses: actions/checkout@v4
      - uses: ./.github/actions/setup
        with:
          python: '3.12'
      - run: pytest -q
"""
SINGLE_CHANGED = SINGLE.replace("      - run: pytest -q\n",
                                "      - run: pytest -q -n 4\n      - run: make docs\n")
SETUP = """\
name: setup
inputs:
  python:
    default: '3.11'
runs:
  using: composite
  steps:
    - uses: actions/setup-python@v5
      with:
        python-version: ${{ inputs.python }}
    - run: pip install -e ".[test]"
      shell: bash
"""
MATRIX = """\
name: Matrix
on: push
jobs:
  test:
    name: test (${{ matrix.python }})
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        python: ['3.11', '3.12']
        os: [ubuntu-latest]
    steps:
      - uses: actions/checkout@v4
      - run: tox -e py
"""
CALLER = """\
name: Caller
on: push
jobs:
  call:
    uses: ./.github/workflows/reusable.yml
    with:
      target: release
"""
REUSABLE = """\
name: Reusable
on:
  workflow_call:
    inputs:
      target:
        type: string
        default: debug
jobs:
  build:
    name: build ${{ inputs.target }}
    runs-on: windows-latest
    steps:
      - uses: actions/checkout@v4
      - run: cargo build --profile ${{ inputs.target }}
"""
MATRIX_NAMES = ("test (3.11)", "test (3.12)")


def _blob(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _files(latest: bool) -> dict[str, str]:
    return {
        ".github/workflows/single.yml": SINGLE_CHANGED if latest else SINGLE,
        ".github/actions/setup/action.yml": SETUP,
        ".github/workflows/matrix.yml": MATRIX,
        ".github/workflows/caller.yml": CALLER,
        ".github/workflows/reusable.yml": REUSABLE,
    }


def _row(k: int, path: str, seconds: float, *, latest: bool = False, **fields: Any
         ) -> dict[str, Any]:
    day = f"2024-05-{k + 1:02d}T08:00:00+02:00"
    row: dict[str, Any] = {
        "id": f"{path.rsplit('/', 1)[-1]}-{k}", "repo": REPO, "workflow_path": path,
        "sha": f"{k:040x}", "commit_date": day, "created_at": day, "event": "push",
        "branch": "main", "conclusion": "success", "attempts": 1, "run_time_s": seconds,
        "files": {p: _blob(t) for p, t in _files(latest).items()}, "repo_profile": PROFILE,
    }
    if path.endswith("matrix.yml"):
        times = (seconds * 0.4, seconds * 0.6)
        row["jobs"] = [{"name": n, "run_time_s": t, "conclusion": "success"}
                       for n, t in zip(MATRIX_NAMES, times, strict=True)]
    row.update(fields)
    return row


LAST = 4  # the run whose texts are compared: runs 0..3 are its history


def _runs() -> list[dict[str, Any]]:
    out = []
    for k in range(LAST + 1):
        latest = k == LAST
        out.append(_row(k, ".github/workflows/single.yml", 300.0 + 17 * k, latest=latest))
        out.append(_row(k, ".github/workflows/matrix.yml", 500.0 + 31 * k, latest=latest))
        out.append(_row(k, ".github/workflows/caller.yml", 200.0 + 7 * k, latest=latest))
    return out


def _write(folder: Path, runs: Sequence[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    texts = {_blob(t): t for latest in (False, True) for t in _files(latest).values()}

    def dump(name: str, rows: Sequence[dict[str, Any]]) -> None:
        data = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
        (folder / f"{name}.jsonl.gz").write_bytes(gzip.compress(data.encode("utf-8"), mtime=0))

    dump("runs", runs)
    dump("blobs", [{"id": b, "text": t} for b, t in sorted(texts.items())])
    return folder


def _checkout(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


class _Capture:
    """A predictor that keeps the texts ``estimate`` asks it about."""

    name = "capture"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        self.texts.extend(texts)
        return [Runtime(1.0, 1.0, 1.0) for _ in texts]


def _estimate_texts(root: Path, path: str, history_dir: Path | None) -> dict[str, str]:
    """The text ``estimate`` predicts each job of ``path`` from, by display name (every
    job's: the jobs its own runs predict are asked too, as they are where those give no
    figure, :func:`laser_ci.estimate._own_rule`)."""
    capture = _Capture()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("laser_ci.estimate._own_rule", lambda *_a: {})
        result = _estimate(root, path, history_dir, capture)
    names = [j["name"] for wf in result["workflows"] for j in wf["jobs"]]
    assert len(names) == len(capture.texts[: len(names)])
    return dict(zip(names, capture.texts, strict=False))


def _estimate(root: Path, path: str, history_dir: Path | None, capture: _Capture) -> dict:
    return estimate_paths([str(root / path)], repo_root=str(root), predictor=capture,
                          profile=RepoProfile.from_json(PROFILE),
                          history=None if history_dir is None else load_history(history_dir))


def _setup(tmp_path: Path, runs: list[dict[str, Any]], last: dict[str, Any]
           ) -> tuple[list[Example], Path, Path]:
    """The training examples of ``last`` (from every run), the checkout of its files and
    a collected folder of the runs before it."""
    examples = [e for e in load_examples(_write(tmp_path / "all", runs), cache=False)
                if e.run_id == last["id"]]
    root = _checkout(tmp_path / "repo", _files(latest=last["sha"] == f"{LAST:040x}"))
    earlier = [r for r in runs if r["commit_date"] < last["commit_date"]]
    return examples, root, _write(tmp_path / "hist", earlier)


@pytest.mark.parametrize("path", [".github/workflows/single.yml",
                                  ".github/workflows/matrix.yml",
                                  ".github/workflows/caller.yml"])
def test_estimate_builds_the_job_texts_the_model_was_trained_on(tmp_path, path: str) -> None:
    runs = _runs()
    last = next(r for r in runs if r["workflow_path"] == path and r["id"].endswith(f"-{LAST}"))
    examples, root, hist = _setup(tmp_path, runs, last)
    jobs = [e for e in examples if e.kind == "job"]
    assert jobs and all(e.text_warm is not None for e in jobs)
    cold = _estimate_texts(root, path, None)
    warm = _estimate_texts(root, path, hist)
    for e in jobs:
        assert cold.get(e.job_name) == e.text, e.job_name
        assert warm.get(e.job_name) == e.text_warm, e.job_name
        assert f"history: n={LAST} " in e.text_warm
    if path.endswith("single.yml"):  # the file changed in the latest run
        assert "history-config: changed +3 -1\n+ pytest -q -n 4\n- pytest -q\n" in jobs[0].text_warm
        assert "uses: actions/setup-python@v5" in jobs[0].text  # the composite, inlined
    if path.endswith("matrix.yml"):
        assert sorted(e.job_name for e in jobs) == sorted(MATRIX_NAMES)
    if path.endswith("caller.yml"):
        assert [e.job_name for e in jobs] == ["call / build release"]


def test_the_workflow_text_from_the_checkout_is_the_trained_one(tmp_path) -> None:
    """``estimate`` predicts jobs, never a ``task: workflow`` text; the workflow it reads
    from disk, serialized with the collected folder's workflow history, still gives the
    trained workflow text, cold and warm."""
    runs = _runs()
    for path in (".github/workflows/single.yml", ".github/workflows/caller.yml"):
        last = next(r for r in runs if r["workflow_path"] == path
                    and r["id"].endswith(f"-{LAST}"))
        examples, root, hist = _setup(tmp_path / path.rsplit("/", 1)[-1], runs, last)
        (e,) = [e for e in examples if e.kind == "workflow"]
        wfs, _errors = read_workflows(DiskFiles(root, known_root=True), [path])
        (wf,) = [w for w in wfs if w.path == path]
        profile = RepoProfile.from_json(PROFILE)
        assert serialize_workflow(wf, profile) == e.text
        past = load_history(hist).for_workflow(path)
        assert past is not None
        warm = serialize_workflow(wf, profile, history=past.history_for(e.text))
        assert warm == e.text_warm


def test_a_cancelled_earlier_run_is_in_neither_history_or_in_both(tmp_path) -> None:
    path = ".github/workflows/single.yml"
    runs = _runs()
    for r in runs:
        if r["workflow_path"] == path and r["id"].endswith("-3"):
            r["conclusion"], r["run_time_s"] = "cancelled", 4.0
    last = next(r for r in runs if r["workflow_path"] == path and r["id"].endswith(f"-{LAST}"))
    examples, root, hist = _setup(tmp_path, runs, last)
    (e,) = [e for e in examples if e.kind == "job"]
    assert _estimate_texts(root, path, hist)["build"] == e.text_warm


def test_earlier_runs_are_ordered_alike_when_a_commit_is_older_than_its_run(tmp_path) -> None:
    """Run 3 ran last of the earlier runs, on a commit dated before run 2's (a pull
    request's older commit, a re-run)."""
    path = ".github/workflows/single.yml"
    runs = _runs()
    for r in runs:
        if r["workflow_path"] == path and r["id"].endswith("-3"):
            r["commit_date"] = "2024-05-02T20:00:00+02:00"  # after run 1's, before run 2's
    last = next(r for r in runs if r["workflow_path"] == path and r["id"].endswith(f"-{LAST}"))
    examples, root, hist = _setup(tmp_path, runs, last)
    (e,) = [e for e in examples if e.kind == "job"]
    assert _estimate_texts(root, path, hist)["build"] == e.text_warm


def test_a_repeated_run_id_counts_the_same_row_in_both(tmp_path) -> None:
    path = ".github/workflows/single.yml"
    runs = _runs()
    at = next(i for i, r in enumerate(runs) if r["workflow_path"] == path
              and r["id"].endswith("-3"))
    runs.insert(at + 1, {**runs[at], "run_time_s": 999.0})  # the newer attempt, last
    last = next(r for r in runs if r["workflow_path"] == path and r["id"].endswith(f"-{LAST}"))
    examples, root, hist = _setup(tmp_path, runs, last)
    (e,) = [e for e in examples if e.kind == "job"]
    assert _estimate_texts(root, path, hist)["build"] == e.text_warm
