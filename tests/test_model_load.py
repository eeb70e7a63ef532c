"""`laser-ci estimate --model DIR` on model folders that are missing, incomplete or corrupt.

Each case copies a shipped model folder to a temporary one and breaks the copy (the
shipped files are never touched). Expected, as for any bad input: one line on stderr
naming the file and what is wrong, exit 2 (an unusable model folder is a usage error),
never a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from laser_ci.cli import main

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_LM = ROOT / "model" / "lm"
SHIPPED_BASELINES = ROOT / "model" / "baselines"
DEMO = ROOT / "examples" / "demo" / ".github" / "workflows"


def estimate(*args: str) -> Result:
    return CliRunner().invoke(main, ["estimate", *args, str(DEMO)])


def one_error_line(result: Result) -> str:
    """The one stderr line of a run that could not load its model (exit 2)."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("laser-ci: error: "), lines
    return lines[0]


@pytest.fixture
def lm_copy(tmp_path: Path) -> Path:
    if not (SHIPPED_LM / "laser.json").is_file():
        pytest.skip("no shipped language model")
    out = tmp_path / "lm"
    shutil.copytree(SHIPPED_LM, out, ignore=shutil.ignore_patterns("weights.safetensors",
                                                                    "MODEL_CARD.md"))
    return out


def edit_config(folder: Path, edit: Any) -> None:
    """``laser.json`` changed by ``edit(config)``, its files' sha256 kept right."""
    path = folder / "laser.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    edit(config)
    path.write_text(json.dumps(config), encoding="utf-8")


@pytest.mark.parametrize(("breakage", "reason"), [
    (lambda d: (d / "model.onnx").unlink(), "missing model.onnx"),
    (lambda d: (d / "tokenizer.json").unlink(), "missing tokenizer.json"),
    (lambda d: (d / "model.onnx").write_bytes((d / "model.onnx").read_bytes()[:1000]),
     "model.onnx: sha256"),
    (lambda d: (d / "laser.json").write_text("{", encoding="utf-8"), "laser.json: cannot read"),
    (lambda d: (d / "reference" / "tabular.json").write_text("{}", encoding="utf-8"),
     "tabular.json: sha256"),
])
def test_a_broken_language_model_folder_is_one_line_naming_the_file(
        lm_copy: Path, breakage: Any, reason: str) -> None:
    """The reason is said once, on the one line: the folder was loaded twice (each time
    printing why it failed) and the line that ended the run said only 'no model found'."""
    breakage(lm_copy)
    line = one_error_line(estimate("--model", str(lm_copy)))
    assert reason in line, line
    assert str(lm_copy) in line, line


def test_a_missing_or_empty_model_folder_is_one_line(tmp_path: Path) -> None:
    for folder in (tmp_path / "nope", tmp_path):
        line = one_error_line(estimate("--model", str(folder)))
        assert "no model found" in line and str(folder) in line, line


def test_a_broken_family_beside_a_good_one_is_one_warning(tmp_path: Path) -> None:
    """A model folder whose baselines are broken but whose language model loads: the
    estimate goes on with the language model, and why the baselines were left out is
    said once."""
    if not (SHIPPED_LM / "laser.json").is_file():
        pytest.skip("no shipped language model")
    model = tmp_path / "model"
    shutil.copytree(SHIPPED_BASELINES, model / "baselines")
    shutil.copytree(SHIPPED_LM, model / "lm", ignore=shutil.ignore_patterns(
        "weights.safetensors", "MODEL_CARD.md"))
    (model / "baselines" / "tabular.json").write_text("{", encoding="utf-8")
    result = estimate("--model", str(model))
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "cannot load baselines" in lines[0], lines
    assert "predictor: laser-lm" in result.stdout


@pytest.mark.parametrize("card", [
    {"predictors": [1]},
    {"predictors": "tabular"},
    {"best": ["tabular"]},
    {"best": {"name": "tabular"}},
])
def test_a_card_of_the_wrong_shape_is_ignored(tmp_path: Path, card: Any) -> None:
    """A card.json that is JSON but not of the card's shape counts as no card, as one that
    is not JSON does: it stopped the estimate ('list' object has no attribute 'items',
    unhashable type: 'list'), naming no file."""
    baselines = tmp_path / "baselines"
    shutil.copytree(SHIPPED_BASELINES, baselines)
    (baselines / "card.json").write_text(json.dumps(card), encoding="utf-8")
    result = estimate("--model", str(baselines))
    assert result.exit_code == 0, result.output
    assert "predictor: tabular" in result.stdout
