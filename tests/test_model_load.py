"""`laser-ci estimate --model DIR` on model folders that are missing, incomplete or corrupt.

Each case copies a shipped model folder to a temporary one and breaks the copy (the
shipped files are never touched). Expected, as for any bad input: one line on stderr
naming the file and what is wrong, exit 2 (an unusable model folder is a usage error),
never a traceback.
"""

from __future__ import annotations

import hashlib
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


def _set(path: str, value: Any) -> Any:
    def edit(config: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node = config
        for key in parents:
            node = node[key]
        node[last] = value
    return edit


def _drop(key: str) -> Any:
    return lambda config: config.pop(key)


@pytest.mark.parametrize(("edit", "reason"), [
    (_drop("codec"), "missing 'codec'"),
    (_drop("prompt"), "missing 'prompt'"),
    (_drop("head_tokens"), "missing 'head_tokens'"),
    (_set("codec", "x"), "must be a mapping"),
    (_set("codec.foo", 1), "unexpected keyword argument 'foo'"),
    (_set("codec.mantissa_digits", "3"), "not supported"),
    (_set("prompt.max_prompt_tokens", "abc"), "invalid literal"),
    (_set("prompt.max_prompt_tokens", -5), "max_prompt_tokens -5"),
    (_set("model", None), "has no attribute 'get'"),
    (_set("files", ["model.onnx", "tokenizer.json"]), "files is not an object"),
    (_set("decoding.num_samples", 0), "num_samples 0"),
    (_set("decoding.num_samples", -3), "num_samples -3"),
    (_set("decoding.temperature", float("nan")), "temperature nan"),
    (_set("decoding.band_scale", [1]), "band_scale [1]"),
    (_set("decoding.band_scale", {"cold": float("nan")}), "band_scale.cold nan"),
    (_set("decoding.band_scale", {"cold": -1}), "band_scale.cold -1"),
    (_set("decoding.shrink", {"cold": float("nan")}), "shrink.cold nan"),
    (_set("decoding.shrink", {"warm": "x"}), "shrink.warm 'x'"),
    (_set("head_token_ids", [13, 15]), "zip()"),
    (_set("prompt.targets", ["gpu_count"]), "prompt.targets ['gpu_count']"),
    (_set("prompt.targets", "cpu_cores"), "prompt.targets 'cpu_cores', expected a list"),
    (_set("prompt.targets", 3), "prompt.targets 3"),
])
def test_a_bad_model_config_is_one_line_naming_laser_json(
        lm_copy: Path, edit: Any, reason: str) -> None:
    """A laser.json key missing, of the wrong type or out of range: the line names the
    file; it said only "'codec'" or "'list' object has no attribute 'get'", and settings
    no decoding can use (num_samples 0, a NaN temperature, band scale or shrink) were
    accepted and failed later inside the loop ("index -1 is out of bounds for axis 0",
    "cannot convert float NaN to integer"), or turned the band inside out (p10 > p90)."""
    edit_config(lm_copy, edit)
    line = one_error_line(estimate("--model", str(lm_copy)))
    assert f"{lm_copy / 'laser.json'}: " in line, line
    assert reason in line, line


def test_a_laser_json_that_is_not_an_object_names_the_file(lm_copy: Path) -> None:
    (lm_copy / "laser.json").write_text("[1, 2]", encoding="utf-8")
    line = one_error_line(estimate("--model", str(lm_copy)))
    assert f"{lm_copy / 'laser.json'}: not a JSON object" in line, line


@pytest.mark.parametrize("text", ['{"x": 1}', '{"version": "1.0", "model": {'])
def test_a_corrupt_tokenizer_names_the_file(lm_copy: Path, text: str) -> None:
    """tokenizer.json that is not a tokenizer (its sha256 in laser.json updated to match):
    the tokenizers library's message alone ('EOF while parsing a value') named no file."""
    tok = lm_copy / "tokenizer.json"
    tok.write_text(text, encoding="utf-8")
    config = json.loads((lm_copy / "laser.json").read_text(encoding="utf-8"))
    config["files"]["tokenizer.json"] = hashlib.sha256(tok.read_bytes()).hexdigest()
    (lm_copy / "laser.json").write_text(json.dumps(config), encoding="utf-8")
    line = one_error_line(estimate("--model", str(lm_copy)))
    assert f"{tok}: cannot read the tokenizer" in line, line
