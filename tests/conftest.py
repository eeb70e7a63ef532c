"""Shared test fixtures."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from laser_ci.predictors.base import Runtime


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
