"""The shipped model and baselines give the predictions recorded before the training
package was cut to the shipped recipe (issue 48): every predictor of ``model/`` on the
demo's workflows, through ``laser-ci estimate``'s code path, against
``benchmarks/reference/predictions.json`` (``benchmarks/same_predictions.py``; its ``val``
part is checked by the script, minutes)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "same_predictions.py"
REFERENCE = ROOT / "benchmarks" / "reference" / "predictions.json"


def _script():
    spec = importlib.util.spec_from_file_location("same_predictions", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_demo_predictions_are_the_recorded_ones(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnxruntime")
    sp = _script()
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert set(reference["demo"]) >= {"laser-lm", "tabular", "history-recent"}
    assert sp.main(["--check", str(REFERENCE), "--parts", "demo"]) == 0
    assert "0 of 60 predictions differ" in capsys.readouterr().out


def test_a_changed_prediction_is_found() -> None:
    """The comparison is not blind: one p90 moved by 1e-5 (relative) differs, one by 1e-8
    does not, and an item only on one side differs."""
    sp = _script()
    ref = {"demo": {"m": {"a": [1.0, 2.0, 3.0], "b": [10.0, 20.0, 30.0]}}}
    near = {"demo": {"m": {"a": [1.0, 2.0, 3.0 * (1 + 1e-8)], "b": [10.0, 20.0, 30.0]}}}
    far = {"demo": {"m": {"a": [1.0, 2.0, 3.0 * (1 + 1e-5)], "b": [10.0, 20.0, 30.0]}}}
    missing = {"demo": {"m": {"a": [1.0, 2.0, 3.0]}}}
    assert sp.compare(ref, near)[:2] == (2, 0)
    assert sp.compare(ref, far)[:2] == (2, 1)
    assert sp.compare(ref, missing)[:2] == (2, 1)
