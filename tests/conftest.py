"""Shared test fixtures."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import pytest

from laser_ci.predictors.base import Runtime

# the modules of the `train` extra the tests use: a test marked `train_extra` is skipped
# without them, so `pip install -e ".[dev]" && pytest` passes (the CPU-only user's setup)
TRAIN_EXTRA = ("torch", "transformers", "lightgbm", "sklearn")


def has_train_extra() -> bool:
    try:
        return all(importlib.util.find_spec(m) is not None for m in TRAIN_EXTRA)
    except (ImportError, ValueError, AttributeError):
        return False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "train_extra: needs the train extra (torch, "
                            "transformers, lightgbm, scikit-learn); skipped without it")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if has_train_extra():
        return
    skip = pytest.mark.skip(reason="needs the train extra: pip install -e '.[train]'")
    for item in items:
        if "train_extra" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_github_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where nothing else names the repository estimated, the CLI takes
    ``$GITHUB_REPOSITORY``; on a CI runner it names this project, not a test's fixture (a
    test that wants it sets it)."""
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)


class LengthPredictor:
    """A tiny deterministic predictor for tests: the runtime grows with the text length."""

    name = "test-length"

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        return [Runtime(len(t) / 20, len(t) / 10, len(t) / 5) for t in texts]


@pytest.fixture
def fake_predictor(monkeypatch: pytest.MonkeyPatch) -> LengthPredictor:
    """Make ``laser-ci estimate`` use :class:`LengthPredictor` instead of the shipped model,
    so CLI tests do not depend on ``laser_ci.predictors.choice``."""
    predictor = LengthPredictor()
    monkeypatch.setattr("laser_ci.estimate._default_predictor", lambda model_dir=None: predictor)
    return predictor


@pytest.fixture(scope="session")
def examples() -> list:
    """Every example of the ``gha-mini`` test folder (tests/gha_mini.py), read once."""
    import gha_mini

    from laser_ci.training.examples import load_examples

    return load_examples(gha_mini.MINI, cache=False)


# the `learned` block `laser-ci finetune` writes into a learned model's laser.json
# (laser_ci/predictors/learned.py); the figures are a fixture's, not a measurement
LEARNED = {
    "repository": "octo/app", "job_runs": 20021, "runs": 1339,
    "first": "2026-01-02T03:04:05Z", "last": "2026-01-12T00:00:00Z",
    "calibrated_on": {"job_runs": 3000, "first": "2026-01-10T00:00:00Z",
                      "last": "2026-01-12T00:00:00Z"},
    "created": "2026-12-07T15:00:00Z", "base": "0" * 64, "minutes": 18.5,
}


@pytest.fixture(scope="session")
def learned_model(tmp_path_factory: pytest.TempPathFactory):
    """``learned_model(repository="octo/app", **block)``: a learned model folder, the
    shipped language model (model/lm, without the fine-tuning weights it does not need to
    predict) with a ``learned`` block in its laser.json; made once per block."""
    import json
    import shutil
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[1] / "model" / "lm"
    made: dict[str, Path] = {}

    def make(**block: object) -> Path:
        learned = {**LEARNED, **block}
        key = json.dumps(learned, sort_keys=True)
        if key not in made:
            folder = tmp_path_factory.mktemp("learned") / "laser-ci-model"
            shutil.copytree(shipped, folder, ignore=shutil.ignore_patterns(
                "weights.safetensors", "*.md"))
            config = json.loads((folder / "laser.json").read_text(encoding="utf-8"))
            config["learned"] = learned
            (folder / "laser.json").write_text(json.dumps(config), encoding="utf-8")
            made[key] = folder
        return made[key]

    return make
