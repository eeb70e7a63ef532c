"""The shipped predictors on edge-case job texts: empty, huge, and unusual unicode.

Every text gives a prediction: finite, positive, p10 <= p50 <= p90, the same on every call.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from laser_ci.cli import main

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_LM = ROOT / "model" / "lm"
SHIPPED_BASELINES = ROOT / "model" / "baselines"

JOB = ("task: job\nworkflow: CI\nfile: ci.yml\non: push\njob: test\nhistory: none\n"
       "runs-on: ubuntu-latest\nsteps:\n- run: {run}\nrepo: files=1\n")
UNUSUAL = {
    "lone surrogate": JOB.format(run="echo \ud800 and \udfff"),
    "surrogate pair": JOB.format(run="echo \ud83d\ude00"),
    "nul": JOB.format(run="echo \x00 end"),
    "rtl marks": JOB.format(run="echo \u202eevil\u200f \u200b\ufeff\uffff"),
    "empty": "",
    "huge": JOB.format(run="|\n" + "\n".join(f"    echo line {i}" for i in range(100_000))),
}


def check(runtimes: list) -> None:
    for r in runtimes:
        assert all(math.isfinite(x) and x > 0 for x in (r.p10, r.p50, r.p90)), r
        assert r.p10 <= r.p50 <= r.p90, r


@pytest.fixture(scope="module")
def lm():
    if not (SHIPPED_LM / "laser.json").is_file():
        pytest.skip("no shipped language model")
    from laser_ci.predictors.lm import LaserModel

    return LaserModel(SHIPPED_LM)


def test_the_language_model_reads_any_text(lm) -> None:
    """A lone surrogate (what a YAML "\\uD800" escape gives) could not be handed to the
    tokenizer ('TextEncodeInput must be Union[...]'), which stopped the whole estimate; it
    is read as U+FFFD, and an escaped surrogate pair as the character it stands for."""
    texts = list(UNUSUAL.values())
    got = lm.predict(texts)
    check(got)
    assert lm.predict(texts) == got  # deterministic
    replaced = JOB.format(run="echo \ufffd and \ufffd")
    assert lm.predict([UNUSUAL["lone surrogate"]]) == lm.predict([replaced])
    assert lm.predict([UNUSUAL["surrogate pair"]]) == lm.predict([JOB.format(run="echo \U0001f600")])


def test_the_tabular_model_reads_any_text() -> None:
    if not (SHIPPED_BASELINES / "tabular.json").is_file():
        pytest.skip("no shipped baselines")
    from laser_ci.predictors.baselines import TabularPredictor

    tab = TabularPredictor.load(SHIPPED_BASELINES)
    texts = list(UNUSUAL.values())
    got = tab.predict(texts)
    check(got)
    assert tab.predict(texts) == got


def test_a_surrogate_escape_in_one_workflow_leaves_the_others_estimated(tmp_path: Path) -> None:
    if not (SHIPPED_LM / "laser.json").is_file():
        pytest.skip("no shipped language model")
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "a.yml").write_text('on: push\njobs:\n  sur:\n    runs-on: ubuntu-latest\n'
                              '    steps:\n      - run: "echo \\uD800 lone"\n', encoding="utf-8")
    (wf / "b.yml").write_text("on: push\njobs:\n  ok:\n    runs-on: ubuntu-latest\n"
                              "    steps:\n      - run: echo hi\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["estimate", "--model", str(SHIPPED_LM), "--format",
                                       "json", str(wf)])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert '"sur"' in result.stdout and '"ok"' in result.stdout
