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


def _baselines(tmp_path: Path) -> Path:
    if not (SHIPPED_BASELINES / "tabular.json").is_file():
        pytest.skip("no shipped baselines")
    import shutil

    out = tmp_path / "baselines"
    shutil.copytree(SHIPPED_BASELINES, out)
    return out


@pytest.mark.parametrize(("name", "content"), [
    ("tabular.json", b"{"),
    ("tabular.npz", b"not a zip"),
    ("median.json", b'{"log_p10": 1}'),
    ("tabular.json", b'{"feature_names": [], "offset_lo": "a", "offset_hi": 1}'),
])
def test_a_corrupt_baseline_file_is_one_line_naming_it(tmp_path: Path, name: str,
                                                       content: bytes) -> None:
    """It said only 'File is not a zip file' or "'log_p50'", naming no file."""
    folder = _baselines(tmp_path)
    (folder / name).write_bytes(content)
    result = CliRunner().invoke(main, ["estimate", "--model", str(folder),
                                       str(ROOT / "examples" / "demo" / ".github" / "workflows")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and f"{folder / name}: " in lines[0], lines


def _edit_trees(folder: Path, edit) -> None:
    import numpy as np

    with np.load(folder / "tabular.npz") as a:
        arrays = {k: a[k].copy() for k in a.files}
    edit(arrays)
    np.savez(folder / "tabular.npz", **arrays)


def _cycle(a) -> None:
    internal = int(next(i for i, x in enumerate(a["p50_left"]) if x >= 0))
    a["p50_left"][internal] = internal  # a node that is its own child


@pytest.mark.parametrize(("edit", "reason"), [
    (_cycle, "p50_"),
    (lambda a: a.__setitem__("p50_right", a["p50_right"] * 0 + 10**6), "p50_"),
    (lambda a: a.__setitem__("p50_left", a["p50_left"][:10]), "p50_"),
    (lambda a: a.__setitem__("p50_feature", a["p50_feature"] * 0 + 10**6), "p50_"),
    (lambda a: a.__setitem__("p50_roots", a["p50_roots"] * 0 - 1), "p50_"),
])
def test_trees_that_do_not_fit_together_are_refused_at_load(tmp_path: Path, edit,
                                                            reason: str) -> None:
    """Node arrays of another length, a child or feature out of range, or a node that is
    its own descendant: the file is refused when it is read. They failed inside predict
    ('index 10 is out of bounds for axis 0 with size 10', no file named), or, with a
    cycle, predict never returned."""
    from laser_ci.predictors.baselines import TabularPredictor

    folder = _baselines(tmp_path)
    _edit_trees(folder, edit)
    with pytest.raises(ValueError, match=f"tabular.npz: .*{reason}"):
        TabularPredictor.load(folder)


def test_text_linear_weights_that_do_not_fit_its_terms_are_refused_at_load(
        tmp_path: Path) -> None:
    """Fewer idf weights than terms failed inside predict ('index ... is out of bounds')."""
    import numpy as np

    from laser_ci.predictors.baselines import TextLinearPredictor

    folder = _baselines(tmp_path)
    if not (folder / "text_linear.npz").is_file():
        pytest.skip("no shipped text-linear model")
    with np.load(folder / "text_linear.npz") as a:
        arrays = {k: a[k].copy() for k in a.files}
    arrays["idf"] = arrays["idf"][:10]
    np.savez(folder / "text_linear.npz", **arrays)
    with pytest.raises(ValueError, match="text_linear.npz: .* 10 idf weights"):
        TextLinearPredictor.load(folder)
