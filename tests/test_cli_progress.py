"""The long commands show progress on stderr, and a command without the optional extra it
needs is one line naming the install command, exit 2 (laser_ci.cli, laser_ci.report.progress)."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest
from click.testing import CliRunner
from gha_mini import MINI

from laser_ci.cli import main
from laser_ci.report.progress import Progress


@pytest.mark.parametrize("module", ["torch", "transformers"])
@pytest.mark.parametrize("args", [
    ["train", "--data", str(MINI), "--out", "out"],
    ["finetune", "--data", str(MINI), "--base", str(MINI), "--out", "out"],
])
def test_train_without_its_extra_is_one_line_and_exit_2(
        monkeypatch: pytest.MonkeyPatch, module: str, args: list[str]) -> None:
    monkeypatch.delenv("LASER_CI_DEBUG", raising=False)
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    with CliRunner().isolated_filesystem():
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert re.fullmatch(rf"laser-ci: error: `laser-ci {args[0]}` needs (torch|transformers), "
                        r"which is not installed: pip install 'laser-ci\[train\]'", line), line
    assert "Traceback" not in result.output


def test_help_works_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    result = CliRunner().invoke(main, ["train", "--help"])
    assert result.exit_code == 0 and "Pretrain the language model" in result.output


def test_eval_shows_its_stages_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LASER_CI_PROGRESS", "1")
    result = CliRunner().invoke(main, ["eval", str(MINI), "--predictor", "median",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    err = result.stderr.splitlines()
    assert err[0] == "laser-ci eval: loading the predictors…"
    assert f"laser-ci eval: reading examples from {MINI}…" in err
    assert any(line.startswith("laser-ci eval: [1/1] scoring median on ") for line in err)
    assert err[-1].startswith("laser-ci eval: [1/1] scoring median") and " done in " in err[-1]
    assert "median" in json.loads(result.stdout)["predictors"]  # stdout is the report alone


def test_no_progress_in_a_log_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LASER_CI_PROGRESS", raising=False)
    stream = io.StringIO()
    with Progress("eval", stream).stage("reading"):
        pass
    assert stream.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_the_stage_before_its_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LASER_CI_PROGRESS", raising=False)
    stream = _Terminal()
    seen = []
    with Progress("eval", stream).stage("scoring median", 1, 2):
        seen.append(stream.getvalue())  # written before the stage's work starts
    assert seen == ["\r\x1b[2Klaser-ci eval: [1/2] scoring median…"]
    assert stream.getvalue().endswith("laser-ci eval: [1/2] scoring median: done in 0s\n")
    monkeypatch.setenv("LASER_CI_PROGRESS", "0")
    quiet = _Terminal()
    with Progress("eval", quiet).stage("x"):
        pass
    assert quiet.getvalue() == ""
