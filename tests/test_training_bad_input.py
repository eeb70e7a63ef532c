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
from gha_mini import MINI

from laser_ci.cli import main

LM = Path(__file__).resolve().parents[1] / "model" / "lm"
TINY = ["--size", "tiny", "--pretrain-steps", "0", "--epochs", "1", "--no-export",
        "--vocab-size", "300", "--max-prompt-tokens", "64", "--device", "cpu"]


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
    every one of ``parts``."""
    assert r.exit_code == code, (r.exit_code, r.output, r.exception)
    assert isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for p in parts:
        assert p in lines[0], lines[0]
    return lines[0]


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


# --- train / finetune: a data folder they cannot read -----------------------------------------


def _truncated_gz(tmp_path: Path) -> Path:
    d = tmp_path / "cut"
    shutil.copytree(MINI, d)
    data = gzip.compress((d / "runs.jsonl").read_bytes())
    (d / "runs.jsonl").unlink()
    (d / "runs.jsonl.gz").write_bytes(data[: len(data) // 2])
    return d


@pytest.mark.parametrize("case", ["empty", "truncated"])
@pytest.mark.parametrize("command", ["train", "finetune"])
def test_train_and_finetune_on_unreadable_data_is_one_line(tmp_path: Path, case: str,
                                                           command: str) -> None:
    if case == "empty":
        data = tmp_path / "empty"
        data.mkdir()
        expect = (str(data), "no runs.jsonl.gz or runs.jsonl")
    else:
        data = _truncated_gz(tmp_path)
        expect = (str(data / "runs.jsonl.gz"), "cannot be read")
    if command == "train":
        r = _invoke("train", "--data", str(data), "--out", str(tmp_path / "out"), *TINY)
    else:
        r = _invoke("finetune", "--data", str(data), "--base", str(LM),
                    "--out", str(tmp_path / "out"), "--device", "cpu")
    _one_error_line(r, "laser-ci: error:", *expect)


def test_train_bundle_that_is_not_a_bundle_is_one_line(tmp_path: Path) -> None:
    for name, content in (("rows.npz", (MINI / "runs.jsonl").read_bytes()),
                          ("empty.npz", b"")):
        bundle = tmp_path / name
        bundle.write_bytes(content)
        r = _invoke("train", "--bundle", str(bundle), "--out", str(tmp_path / "out"), *TINY)
        _one_error_line(r, "laser-ci: error:", str(bundle), "not a bundle")
