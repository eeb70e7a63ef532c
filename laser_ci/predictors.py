"""Find the shipped predictors and pick the best one.

A model folder (default: ``model/`` next to the package, or ``$LASER_CI_MODEL_DIR``) holds
one sub-folder per family, each with a ``card.json``::

    {"best": "<name>",  # optional: the family's own pick
     "predictors": {"<name>": {"val_log_mae": 0.93, ...}, ...}}

``val_log_mae`` is the log-MAE on the ``val`` split, all conclusions, as printed by
``laser-ci eval DATA_DIR --split val``. :func:`load_predictor` returns the loadable predictor
with the lowest ``val_log_mae`` across every card, so a language model wins as soon as its
card says so. Families register a loader in :data:`LOADERS` (folder -> predictors by name).
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from laser_ci.predict import Predictor

# family folder name -> loader(folder) -> {predictor name: predictor}
LOADERS: dict[str, Callable[[Path], dict[str, Any]]] = {}


def _load_baselines(folder: Path) -> dict[str, Any]:
    from laser_ci.baselines import load_baselines

    return load_baselines(folder)


LOADERS["baselines"] = _load_baselines

# used only when no model folder is shipped at all: the shared data's median success run
DEFAULT_LOG_P50 = math.log(480.0)


def default_model_dir() -> Path:
    env = os.environ.get("LASER_CI_MODEL_DIR")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "model"


def _model_dir(model_dir: str | os.PathLike[str] | None) -> Path:
    return Path(model_dir) if model_dir is not None else default_model_dir()


def read_cards(model_dir: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """``card.json`` of each family folder, by folder name."""
    d = _model_dir(model_dir)
    cards: dict[str, dict[str, Any]] = {}
    if not d.is_dir():
        return cards
    for sub in sorted(p for p in d.iterdir() if p.is_dir()):
        card = sub / "card.json"
        if card.is_file():
            try:
                cards[sub.name] = json.loads(card.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
    return cards


def available_predictors(model_dir: str | os.PathLike[str] | None = None) -> dict[str, Predictor]:
    """Every predictor that can be loaded from the model folder, by name."""
    d = _model_dir(model_dir)
    out: dict[str, Predictor] = {}
    for family, loader in LOADERS.items():
        folder = d / family
        if not folder.is_dir():
            continue
        try:
            out.update(loader(folder))
        except Exception as exc:  # a broken family must not hide the others
            print(f"laser-ci: cannot load {folder}: {exc}", file=sys.stderr)
    return out


def best_name(model_dir: str | os.PathLike[str] | None, names: set[str]) -> str | None:
    """The name with the lowest ``val_log_mae`` over every card, among ``names``."""
    best: tuple[float, str] | None = None
    for card in read_cards(model_dir).values():
        for name, info in (card.get("predictors") or {}).items():
            score = info.get("val_log_mae") if isinstance(info, dict) else None
            if name in names and isinstance(score, (int, float)) and math.isfinite(score):
                if best is None or score < best[0]:
                    best = (float(score), name)
    if best is not None:
        return best[1]
    for card in read_cards(model_dir).values():
        if card.get("best") in names:
            return str(card["best"])
    return None


def load_predictor(model_dir: str | os.PathLike[str] | None = None) -> Predictor:
    """The best shipped predictor (see the module doc).

    Without any shipped model, a constant median predictor (``median-default``) so that
    ``estimate`` still answers.
    """
    preds = available_predictors(model_dir)
    name = best_name(model_dir, set(preds))
    if name is not None:
        return preds[name]
    for fallback in ("tabular", "text-linear", "median"):
        if fallback in preds:
            return preds[fallback]
    if preds:
        return next(iter(preds.values()))
    from laser_ci.baselines import MedianPredictor

    p = MedianPredictor(DEFAULT_LOG_P50, math.log(90.0), math.log(3000.0))
    p.name = "median-default"
    return p
