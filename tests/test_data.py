"""The gha-runs loader, examples and repository splits, on the hand-written gha-mini folder."""

from __future__ import annotations

import gzip
import shutil
from dataclasses import replace
from pathlib import Path

import gha_mini
import pytest
from conftest import has_train_extra

from laser_ci.training.example import split_of
from laser_ci.training.examples import (
    Example,
    filter_split,
    load_blobs,
    load_corpus,
    load_examples,
    load_runs,
    run_files,
    summarize,
)

MINI = gha_mini.MINI  # written per test run, see tests/gha_mini.py


def by_run(examples: list[Example], run_id: str, kind: str) -> list[Example]:
    return [e for e in examples if e.run_id == run_id and e.kind == kind]


def test_raw_files_load_plain_and_gzip(tmp_path: Path) -> None:
    runs = load_runs(MINI)
    assert len(runs) == 16 and runs[0]["id"] == "fixture01"
    blobs = load_blobs(MINI)
    files = run_files(runs[8], blobs)
    assert set(files) == {
        ".github/workflows/release.yml", ".github/workflows/build.yml",
        ".github/actions/setup/action.yml",
    }  # fmt: skip
    assert "workflow_call" in files[".github/workflows/build.yml"]
    only = load_blobs(MINI, [runs[0]["files"][".github/workflows/ci.yml"]])
    assert len(only) == 1
    assert len(load_corpus(MINI)) == 6

    for name in ("runs", "blobs"):  # the shared set is gzip-compressed; corpus left out
        with open(MINI / f"{name}.jsonl", "rb") as src, gzip.open(
            tmp_path / f"{name}.jsonl.gz", "wb"
        ) as dst:
            shutil.copyfileobj(src, dst)
    assert load_runs(tmp_path) == runs
    assert load_corpus(tmp_path) == []
    assert load_examples(tmp_path, cache=False) == load_examples(MINI, cache=False)


def test_missing_runs_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="runs.jsonl"):
        load_runs(tmp_path)


@pytest.mark.parametrize("name, content, reason", [
    (None, None, "no runs.jsonl.gz or runs.jsonl"),  # an empty folder
    ("runs.jsonl", b'{"id": 1, broken\n', "runs.jsonl:1: not JSON (Expecting property name"),
    ("runs.jsonl", b'{"id": 1}\n{"repo": "a/b\xff"}\n', "runs.jsonl:2: not UTF-8 (byte 0xff"),
    ("runs.jsonl", b'{"id": 1}\n\n[1, 2]\n', "runs.jsonl:3: not a JSON object"),
    ("runs.jsonl.gz", b"not gzip\n", "runs.jsonl.gz: cannot be read (Not a gzipped file"),
])
def test_eval_on_unreadable_data_is_one_error_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_predictor: object,
        name: str | None, content: bytes | None, reason: str) -> None:
    """`laser-ci eval` on a folder without data, or with a data file it cannot read: one
    line naming the file (and line) and what is wrong, exit 2; never a traceback."""
    from click.testing import CliRunner

    from laser_ci.cli import main

    monkeypatch.setattr("laser_ci.predictors.choice.available_predictors",
                        lambda model_dir=None: {"test-length": fake_predictor})
    if name is not None:
        (tmp_path / name).write_bytes(content or b"")
    for folds in ([], ["--folds", "3"])[: 2 if has_train_extra() else 1]:  # --folds trains
        result = CliRunner().invoke(main, ["eval", str(tmp_path), "--no-cache", *folds])
        assert result.exit_code == 2, result.output
        assert isinstance(result.exception, SystemExit), result.exception
        assert "Traceback" not in result.output
        assert result.stderr.splitlines() == [result.stderr.strip()]
        assert result.stderr.startswith(f"laser-ci: error: {tmp_path}"), result.stderr
        assert reason in result.stderr, result.stderr


def test_every_positive_run_gives_one_workflow_example(examples: list[Example]) -> None:
    wf = [e for e in examples if e.kind == "workflow"]
    assert sorted(e.run_id for e in wf) == [f"fixture{i:02d}" for i in range(1, 17) if i != 4]
    assert all(e.text.startswith("task: workflow\n") for e in wf)
    assert all(e.runtime_s > 0 for e in examples)
    first = by_run(examples, "fixture01", "workflow")[0]
    assert (first.repo, first.workflow_path, first.conclusion, first.runtime_s) == (
        "acme/widgets", ".github/workflows/ci.yml", "success", 610.0,
    )  # fmt: skip
    assert first.sha and first.commit_date.startswith("2023-") and first.event == "push"
    assert by_run(examples, "fixture02", "workflow")[0].conclusion == "failure"
    assert "repo: files=812" in first.text


def test_single_job_runs_give_a_job_example(examples: list[Example]) -> None:
    job = by_run(examples, "fixture01", "job")
    assert len(job) == 1 and job[0].job_name == "build" and job[0].runtime_s == 610.0
    assert job[0].text.startswith("task: job\n") and "job: build" in job[0].text
    # a matrix (4 instances) and a reusable-workflow caller (2 jobs): only the sum is known
    assert by_run(examples, "fixture07", "job") == []
    assert by_run(examples, "fixture09", "job") == []
    nested = by_run(examples, "fixture09", "workflow")[0].text
    assert "build/compile" in nested and "actions/setup-node" in nested  # nested + inlined


def test_collected_jobs_map_to_reader_jobs_by_display_name(examples: list[Example]) -> None:
    jobs = sorted((e.job_name, e.runtime_s, e.conclusion) for e in by_run(examples, "fixture11", "job"))
    # "Not in the file" matches no reader job and is dropped
    assert jobs == [("End to end", 900.0, "failure"), ("Unit tests", 120.0, "success")]
    assert by_run(examples, "fixture11", "workflow")[0].runtime_s == 1030.0
    e2e = next(e for e in examples if e.job_name == "End to end")
    assert "runs-on: ubuntu-latest-8-cores" in e2e.text


def test_unreadable_workflow_falls_back_to_raw_text(examples: list[Example]) -> None:
    (broken,) = [e for e in examples if e.fallback]
    assert broken.run_id == "fixture10" and broken.kind == "workflow"
    assert broken.text.startswith("task: workflow\n") and "unterminated" in broken.text
    assert summarize(examples)["fallback"] == 1


def test_kinds_filter(examples: list[Example]) -> None:
    jobs = load_examples(MINI, kinds=("job",), cache=False)
    assert jobs == [e for e in examples if e.kind == "job"]
    with pytest.raises(ValueError):
        load_examples(MINI, kinds=("step",), cache=False)


def test_split_is_by_repository_and_stable() -> None:
    assert split_of("acme/widgets") == "train"
    assert split_of("acme/gadgets") == "val"
    assert split_of("octo/matrix-lib") == "val"
    names = [f"owner{i}/repo{i}" for i in range(2000)]
    share = sum(split_of(n) == "val" for n in names) / len(names)
    assert 0.17 < share < 0.23


def test_split_filter(examples: list[Example]) -> None:
    val = filter_split(examples, "val")
    assert {e.repo for e in val} == {"acme/gadgets", "octo/matrix-lib"}
    train = load_examples(MINI, split="train", cache=False)
    assert len(val) + len(train) == len(examples) == len(filter_split(examples, "all"))
    assert not {e.repo for e in val} & {e.repo for e in train}
    with pytest.raises(ValueError):
        filter_split(examples, "test")


def test_cache_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                          examples: list[Example]) -> None:
    monkeypatch.setenv("LASER_CI_CACHE", str(tmp_path / "cache"))
    first = load_examples(MINI)
    assert first == examples
    (cached,) = (tmp_path / "cache").iterdir()
    assert cached.name.startswith("examples-")
    monkeypatch.setattr("laser_ci.training.examples.load_runs", lambda d: pytest.fail("cache not used"))
    assert load_examples(MINI) == examples
    assert load_examples(MINI, split="val") == filter_split(examples, "val")


def test_runs_of_the_same_files_serialize_each_text_once(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy repository's runs share their files: each workflow and job text is written
    once per version of the files (and repository profile), the same text every run."""
    from runtime_history import make_runs, write_folder

    import laser_ci.text.serialize as serialize

    runs = make_runs(days=3)
    folder = write_folder(tmp_path / "runs", runs)
    calls = {"workflow": 0, "job": 0}
    real_workflow, real_job = serialize.serialize_workflow, serialize.serialize_job

    def workflow(*a, **kw):
        calls["workflow"] += kw.get("history") is None
        return real_workflow(*a, **kw)

    def job(*a, **kw):
        calls["job"] += kw.get("history") is None
        return real_job(*a, **kw)

    monkeypatch.setattr(serialize, "serialize_workflow", workflow)
    monkeypatch.setattr(serialize, "serialize_job", job)
    examples = load_examples(folder, cache=False, history=False)
    jobs = [e for e in examples if e.kind == "job"]
    assert len(runs) == 6 and len({e.run_id for e in jobs}) == 6
    assert calls["workflow"] == 1  # one version of ci.yml, one profile
    assert calls["job"] == len({e.job_name for e in jobs}) < len(jobs)
    monkeypatch.undo()
    # the last run's texts written afresh, without the cache: the same
    from laser_ci.training.examples import KINDS, examples_from_run, load_blobs, run_files

    last = runs[-1]
    fresh = examples_from_run(last, run_files(last, load_blobs(folder)), KINDS, None)
    assert [e.text for e in fresh] == [e.text for e in examples if e.run_id == last["id"]]


def test_untexted_examples_are_the_examples_and_render_their_texts() -> None:
    """``estimate --history`` reads a busy repository's runs without serializing each one:
    the same examples, texts empty, each made on demand by its renderer."""
    from laser_ci.training.examples import load_untexted

    examples = load_examples(MINI, cache=False, history=False)
    untexted, renderers = load_untexted(MINI)
    assert len(untexted) == len(renderers) == len(examples)
    assert {e.text for e in untexted} == {""}
    assert [replace(e, text="") for e in examples] == untexted
    assert [render(None) for render in renderers] == [e.text for e in examples]
    assert any(e.fallback for e in examples)  # the raw form of an unreadable file too
