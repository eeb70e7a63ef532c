"""Bad input to ``laser-ci train``, ``laser-ci finetune`` and ``laser-ci eval``: one line
naming the file (and line where there is one), a non-zero exit, never a traceback.

The data folders are written here, small and by hand, from the ``gha-mini`` rows
(tests/gha_mini.py); nothing is trained beyond a few steps of the tiny model.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import has_train_extra
from gha_mini import MINI

from laser_ci.cli import main

LM = Path(__file__).resolve().parents[1] / "model" / "lm"
TINY = ["--size", "tiny", "--pretrain-steps", "1", "--vocab-size", "300",
        "--pretrain-seq-len", "16", "--device", "cpu"]


def _mini_rows() -> list[dict]:
    return [json.loads(line) for line in (MINI / "runs.jsonl").read_text().splitlines()]


def _folder(tmp_path: Path, rows: list[dict] | None = None, name: str = "data") -> Path:
    """A copy of gha-mini, its runs file replaced by ``rows`` when given."""
    d = tmp_path / name
    shutil.copytree(MINI, d)
    if rows is not None:
        (d / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d


def _one_error_line(r: Result, *parts: str, code: int = 2) -> str:
    """The command failed with ``code``, no traceback, and stderr is one line holding
    every one of ``parts`` (besides the folds' progress lines, ``fold 1/3: ...``)."""
    assert r.exit_code == code, (r.exit_code, r.output, r.exception)
    assert isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    lines = [x for x in r.stderr.strip().splitlines() if not x.startswith("fold ")]
    assert len(lines) == 1, r.stderr
    for p in parts:
        assert p in lines[0], lines[0]
    return lines[0]


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


# --- train / finetune: a data folder they cannot read -----------------------------------------


def _truncated_gz(tmp_path: Path, stem: str = "runs") -> Path:
    d = tmp_path / "cut"
    shutil.copytree(MINI, d)
    data = gzip.compress((d / f"{stem}.jsonl").read_bytes())
    (d / f"{stem}.jsonl").unlink()
    (d / f"{stem}.jsonl.gz").write_bytes(data[: len(data) // 2])
    return d


@pytest.mark.train_extra
@pytest.mark.parametrize("case", ["empty", "truncated"])
@pytest.mark.parametrize("command", ["train", "finetune"])
def test_train_and_finetune_on_unreadable_data_is_one_line(tmp_path: Path, case: str,
                                                           command: str) -> None:
    stem = "corpus" if command == "train" else "runs"  # train reads the corpus alone
    if case == "empty":
        data = tmp_path / "empty"
        data.mkdir()
        expect = (str(data), f"{stem}.jsonl.gz or {stem}.jsonl")
    else:
        data = _truncated_gz(tmp_path, stem)
        expect = (str(data / f"{stem}.jsonl.gz"), "cannot be read")
    if command == "train":
        r = _invoke("train", "--data", str(data), "--out", str(tmp_path / "out"), *TINY)
    else:
        r = _invoke("finetune", "--data", str(data), "--base", str(LM),
                    "--out", str(tmp_path / "out"), "--device", "cpu")
    _one_error_line(r, "laser-ci: error:", *expect)


# --- a runs or blobs row with a field of the wrong type ---------------------------------------


def _eval(data: Path, *extra: str) -> Result:
    return _invoke("eval", str(data), "--split", "all", "--no-cache", "--predictor", "median",
                   *extra)


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("files", [".github/workflows/ci.yml"], "files is not an object"),
    ("files", "ci.yml", "files is not an object"),
    ("files", {".github/workflows/ci.yml": 5}, "files is not an object"),
    ("repo_profile", {"n_files": "many"}, "repo_profile cannot be read"),
    ("repo_profile", {"by_ext": [".py"]}, "repo_profile cannot be read"),
    ("repo_profile", {"by_ext": {".py": ["a", 1]}}, "repo_profile cannot be read"),
    ("repo_profile", {"top_level": 5}, "repo_profile cannot be read"),
])
def test_a_runs_row_with_a_field_of_the_wrong_type_is_one_line(
        tmp_path: Path, field: str, value: object, reason: str) -> None:
    rows = _mini_rows()
    rows[2][field] = value  # line 3
    data = _folder(tmp_path, rows)
    for folds in ([], ["--folds", "3"])[: 2 if has_train_extra() else 1]:  # --folds trains
        r = _invoke("eval", str(data), "--no-cache", "--predictor", "median",
                    *(folds or ["--split", "all"]))
        _one_error_line(r, "laser-ci: error:", f"{data / 'runs.jsonl'}:3:", reason)


def test_a_file_whose_blob_was_not_recorded_is_left_out_not_an_error(tmp_path: Path) -> None:
    # a null blob id (the file was not fetched) was read before as a file left out
    rows = _mini_rows()
    rows[2]["files"] = {**rows[2]["files"], ".github/workflows/other.yml": None}
    r = _eval(_folder(tmp_path, rows))
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("text", [5, ["name: CI"], {"a": 1}])
def test_a_blob_whose_text_is_not_a_string_is_one_line(tmp_path: Path, text: object) -> None:
    data = _folder(tmp_path)
    blobs = [json.loads(line) for line in (data / "blobs.jsonl").read_text().splitlines()]
    blobs[1]["text"] = text  # line 2
    (data / "blobs.jsonl").write_text("".join(json.dumps(b) + "\n" for b in blobs))
    r = _eval(data)
    _one_error_line(r, "laser-ci: error:", f"{data / 'blobs.jsonl'}:2:", "text is not a string")


@pytest.mark.parametrize("case", ["no blobs file", "a blob left out"])
def test_runs_whose_file_texts_are_not_there_is_one_line(tmp_path: Path, case: str) -> None:
    # Without them each run would be read as a job without its workflow file, silently.
    data = _folder(tmp_path)
    if case == "no blobs file":
        (data / "blobs.jsonl").unlink()
        expected = [f"{data}: no blobs.jsonl.gz or blobs.jsonl"]
    else:
        rows = (data / "blobs.jsonl").read_text().splitlines()
        (data / "blobs.jsonl").write_text("\n".join(rows[1:]) + "\n")
        expected = [f"{data / 'blobs.jsonl'}:", "file texts the runs name are not there"]
    _one_error_line(_eval(data), "laser-ci: error:", *expected)


# --- eval: output files it cannot write ------------------------------------------------------


@pytest.mark.parametrize("where", ["missing", "file"])
@pytest.mark.parametrize("option", ["--plot", "--predictions"])
def test_eval_output_in_a_folder_that_is_not_there_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, option: str) -> None:
    """Refused before any work (no predictor is trained or scored), not a traceback after it."""
    import laser_ci.evaluation.crossval as crossval
    import laser_ci.evaluation.eval_command as eval_command

    def no_work(*_a: object, **_k: object) -> None:
        raise AssertionError("the work started")

    monkeypatch.setattr(crossval, "cross_validate", no_work)
    monkeypatch.setattr(eval_command, "evaluate", no_work)
    parent = tmp_path / "nowhere"
    if where == "file":
        parent.write_text("a file\n")
    path = parent / "out.png"
    folds = ["--folds", "3"] if option == "--predictions" else []
    for extra in ([["--split", "all"]] if folds else [["--split", "all"], ["--folds", "3"]]):
        r = _invoke("eval", str(MINI), "--predictor", "median", *(folds or extra), option,
                    str(path))
        _one_error_line(r, "laser-ci: error:", option, str(path), str(parent))


# --- eval --folds: too few repositories -------------------------------------------------------


@pytest.mark.train_extra
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_folds_with_a_fold_left_nothing_to_train_on_is_one_line(tmp_path: Path, jobs: str) -> None:
    """One repository (or two in a held-out fold and its val fold): some fold's training
    part is empty. That is said, naming the folder, instead of numpy's IndexError."""
    rows = [r for r in _mini_rows() if r["repo"] == "tiny/collected"]
    data = _folder(tmp_path, rows)
    r = _invoke("eval", str(data), "--folds", "3", "--predictor", "median", "--jobs", jobs)
    _one_error_line(r, "laser-ci: error:", str(data), "no training examples", "--folds 3")


# --- train / finetune: option values ----------------------------------------------------------


@pytest.mark.parametrize(("command", "option", "value"), [
    *(("finetune", o, v) for o, v in (
        ("--batch-size", "0"), ("--batch-size", "-2"), ("--lr", "-1"), ("--epochs", "-1"),
        ("--epochs", "0"), ("--threads", "0"), ("--patience", "-1"),
        ("--minutes", "-1"), ("--finetune-minutes", "-1"))),
    *(("train", o, v) for o, v in (
        ("--pretrain-steps", "0"), ("--pretrain-batch-size", "0"), ("--pretrain-lr", "-1"),
        ("--pretrain-minutes", "-1"), ("--pretrain-seq-len", "2"), ("--threads", "0"),
        ("--vocab-size", "0"))),
])
def test_a_bad_option_value_is_a_usage_error(tmp_path: Path, command: str, option: str,
                                             value: str) -> None:
    if command == "train":
        args = ["train", "--data", str(MINI), "--out", str(tmp_path / "out"), *TINY]
    else:
        args = ["finetune", "--data", str(MINI), "--base", str(LM), "--out",
                str(tmp_path / "out"), "--device", "cpu"]
    r = _invoke(*args, option, value)
    assert r.exit_code == 2, (r.output, r.exception)
    assert isinstance(r.exception, SystemExit), repr(r.exception)
    assert f"Invalid value for '{option}'" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


# --- train / finetune: where the model goes ---------------------------------------------------


@pytest.mark.train_extra
@pytest.mark.parametrize("case", ["train-out", "finetune-out"])
def test_an_output_path_that_cannot_be_made_is_one_line(tmp_path: Path, case: str) -> None:
    """Under a file: said before the data are read, not a traceback."""
    afile = tmp_path / "afile"
    afile.write_text("a file\n")
    if case == "train-out":
        path, args = afile / "model", ["train", "--data", str(MINI), *TINY]
        option = "--out"
    else:
        path, args = afile / "model", ["finetune", "--data", str(MINI), "--base", str(LM),
                                       "--device", "cpu"]
        option = "--out"
    r = _invoke(*args, option, str(path))
    _one_error_line(r, "laser-ci: error:", option, str(path))


# --- eval --model: a folder with no model -----------------------------------------------------


@pytest.mark.parametrize("case", ["missing", "empty"])
def test_eval_model_folder_without_a_model_is_one_line(tmp_path: Path, case: str) -> None:
    """Said as estimate says it (exit 2, the folder named), not 'train them with
    benchmarks/baselines.py' and exit 1."""
    model = tmp_path / "model"
    if case == "empty":
        model.mkdir()
    r = _invoke("eval", str(MINI), "--model", str(model))
    _one_error_line(r, "laser-ci: error: no predictors found in", str(model), "no model there")
