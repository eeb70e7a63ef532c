"""Find the shipped predictors and pick the best one.

The model folder (default: ``model/`` next to the package, or ``$LASER_CI_MODEL_DIR``) holds
predictor *families*, each either in the folder itself or in a sub-folder:

- ``baselines``: ``median.json``, ``tabular.{json,npz}``, ``text_linear.{json,npz}``
  (:mod:`laser_ci.predictors.baselines`, written by ``benchmarks/baselines.py``), usually
  ``model/baselines/``;
- ``lm``: a language-model folder with ``laser.json`` (:mod:`laser_ci.predictors.lm`), in
  ``model/`` itself or any sub-folder.

Every folder may hold a ``card.json``::

    {"best": "<name>",  # optional: the family's own pick
     "predictors": {"<name>": {"val_log_mae": 0.93, ...}, ...},
     "cv": {"folds": 5, "predictors": {"<name>": {"log_mae": 0.98, "prior_log_mae": 0.51,
                                                  ...}, ...}, ...}}  # optional

``cv`` holds cross-validated scores, written by ``laser-ci eval DATA_DIR --folds K
--write-cards`` (:func:`laser_ci.evaluation.cv_report.write_cards`): ``log_mae`` is the
log-MAE pooled over the held-out folds of every repository, all conclusions, one example
per run, cold start (``--history none``); ``prior_log_mae`` the same with ``--history
prior``. ``val_log_mae`` is the log-MAE on the ``val`` split alone, as printed by
``laser-ci eval DATA_DIR --split val``, and ``val_prior_log_mae`` (optional) the same with
``--history prior``.

:func:`load_predictor` returns the loadable predictor with the best score over every
card: a predictor with cross-validated scores ranks before every predictor without them
(whatever their ``val`` scores), and within each group the lowest ``log_mae`` (``cv``) or
``val_log_mae`` wins, ties broken by the lower ``prior_log_mae`` / ``val_prior_log_mae``
(absent: last) and then by name. A language model's cross-validated scores count only
where they are no worse than the best cross-validated baseline's on every row of
:data:`HEADLINE` that a baseline's card holds (issue #13's rows: cold, all and successful
runs; warm; workflow changed; per job with and without history); a row its own card lacks
counts as behind. Otherwise it ranks after every cross-validated baseline. So the
language model takes over as soon as its card says it is ahead of, or level with, the
baselines on each of those rows on the same footing, and a lower cold score alone (a tie
by its interval, say) does not make it the default.
(``history-median`` and ``history-recent`` fall back to ``tabular`` without history: same
cold score; the tie goes to the better one with history.)
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from laser_ci.predictors.base import Predictor

CARD = "card.json"
# the cross-validated rows a language model must lead (or tie) every baseline on to become
# the default (issue #13): cold, all and successful runs; warm and workflow changed (with
# history); per job with history and cold. Keys of a card's ``cv.predictors`` entries.
HEADLINE = ("log_mae", "success_log_mae", "prior_warm_log_mae", "prior_warm_changed_log_mae",
            "job_prior_log_mae", "job_log_mae")


def _load_baselines(folder: Path) -> dict[str, Any]:
    from laser_ci.predictors.baselines import load_baselines

    return load_baselines(folder)


def _is_baselines(folder: Path) -> bool:
    from laser_ci.predictors.baselines import BASELINES

    return any((folder / cls.FILE).is_file() for cls in BASELINES.values())


def _load_lm(folder: Path) -> dict[str, Any]:
    from laser_ci.predictors.lm import load_models

    return dict(load_models(folder))


def _is_lm(folder: Path) -> bool:
    return (folder / "laser.json").is_file()


# family -> (is this folder one of ours?, loader(folder) -> {predictor name: predictor})
FAMILIES: dict[str, tuple[Callable[[Path], bool], Callable[[Path], dict[str, Any]]]] = {
    "baselines": (_is_baselines, _load_baselines),
    "lm": (_is_lm, _load_lm),
}

# used only when no model folder is shipped at all: about the shared data's median run


class ModelNotFoundError(FileNotFoundError):
    """The model folder holds no predictor laser-ci can load."""


def default_model_dir() -> Path:
    """``$LASER_CI_MODEL_DIR``, else ``model/`` of a source checkout, else the copy installed
    with the package (``laser_ci/_model``)."""
    env = os.environ.get("LASER_CI_MODEL_DIR")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2] / "model"
    if checkout.is_dir():
        return checkout
    return Path(__file__).resolve().parents[1] / "_model"


def _model_dir(model_dir: str | os.PathLike[str] | None) -> Path:
    return Path(model_dir) if model_dir is not None else default_model_dir()


def _folders(model_dir: str | os.PathLike[str] | None) -> list[Path]:
    d = _model_dir(model_dir)
    if not d.is_dir():
        return []
    # a language-model folder's reference/ (its prompts' tabular model) is part of it
    from laser_ci.predictors.lm import REFERENCE_DIR

    own = {REFERENCE_DIR} if _is_lm(d) else set()
    return [d] + sorted(p for p in d.iterdir()
                        if p.is_dir() and not p.name.startswith(".") and p.name not in own)


def find_families(model_dir: str | os.PathLike[str] | None = None) -> list[tuple[str, Path]]:
    """``(family, folder)`` for every predictor family in the model folder."""
    out = []
    for folder in _folders(model_dir):
        for family, (detect, _) in FAMILIES.items():
            if detect(folder):
                out.append((family, folder))
    return out


def read_cards(model_dir: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """Every ``card.json`` in the model folder and its sub-folders, by folder path."""
    cards: dict[str, dict[str, Any]] = {}
    for folder in _folders(model_dir):
        card = folder / CARD
        if card.is_file():
            try:
                data = json.loads(card.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict):
                cards[str(folder)] = data
    return cards


def available_predictors(model_dir: str | os.PathLike[str] | None = None) -> dict[str, Predictor]:
    """Every predictor that can be loaded from the model folder, by name."""
    out: dict[str, Predictor] = {}
    for folder in _folders(model_dir):
        out.update(_load_folder(folder))  # a broken family must not hide the others
    return out


def _score(info: Any, key: str) -> float | None:
    score = info.get(key) if isinstance(info, dict) else None
    if isinstance(score, (int, float)) and math.isfinite(score):
        return float(score)
    return None


def best_name(model_dir: str | os.PathLike[str] | None, names: set[str]) -> str | None:
    """The best-ranked name among ``names`` over every card (see the module doc)."""
    cards = read_cards(model_dir)
    ranked = [r for r in _ranked(model_dir) if r[1] in names]
    if ranked:
        return ranked[0][1]
    for card in cards.values():
        if isinstance(card.get("best"), str) and card["best"] in names:
            return str(card["best"])
    return None


def _cv_predictors(card: dict[str, Any]) -> dict[str, Any]:
    """A card's ``cv.predictors`` (``{}`` without a readable one)."""
    cv = card.get("cv")
    preds = cv.get("predictors") if isinstance(cv, dict) else None
    return preds if isinstance(preds, dict) else {}


def cv_scores(card: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """``{name: (log_mae, prior_log_mae)}`` of a card's cross-validated scores
    (``prior_log_mae`` inf when absent); empty without a ``cv`` block."""
    out = {}
    for name, info in _cv_predictors(card).items():
        score = _score(info, "log_mae")
        if score is not None:
            prior = _score(info, "prior_log_mae")
            out[str(name)] = (score, math.inf if prior is None else prior)
    return out


def headline_scores(card: dict[str, Any]) -> dict[str, dict[str, float]]:
    """``{name: {key: score}}`` of a card's cross-validated :data:`HEADLINE` scores."""
    out: dict[str, dict[str, float]] = {}
    for name, info in _cv_predictors(card).items():
        scores = {key: _score(info, key) for key in HEADLINE}
        out[str(name)] = {k: v for k, v in scores.items() if v is not None}
    return out


def lags_baselines(scores: dict[str, float], best: dict[str, float]) -> list[str]:
    """The :data:`HEADLINE` keys on which ``scores`` is behind ``best`` (the lowest
    baseline score per key) or has no score where a baseline has one; keys no baseline has
    are not compared."""
    return [key for key in HEADLINE
            if key in best and (key not in scores or scores[key] > best[key])]


def _ranked(model_dir: str | os.PathLike[str] | None) -> list[tuple[float, str, Path]]:
    """``(score, name, folder)`` from every card, best first: cross-validated scores
    before ``val`` ones (a language model's cross-validated ones after the baselines'
    if it lags them on a headline row), then the score, the history score and the
    name (module doc)."""
    from laser_ci.predictors.baselines import BASELINES

    cards = read_cards(model_dir)
    best: dict[str, float] = {}  # the cross-validated baselines' best score per headline row
    for card in cards.values():
        for name, scores in headline_scores(card).items():
            if name in BASELINES:
                for key, value in scores.items():
                    best[key] = min(best.get(key, math.inf), value)
    out = []
    for folder, card in cards.items():
        cv = cv_scores(card)
        heads = headline_scores(card)
        for name, (score, prior) in cv.items():
            challenger = name not in BASELINES  # the language model
            tier = 1 if challenger and lags_baselines(heads.get(name, {}), best) else 0
            out.append((tier, score, prior, name, Path(folder)))
        preds = card.get("predictors")
        for name, info in (preds if isinstance(preds, dict) else {}).items():
            if str(name) in cv:
                continue
            score = _score(info, "val_log_mae")
            if score is not None:
                prior = _score(info, "val_prior_log_mae")
                out.append((2, score, math.inf if prior is None else prior, str(name),
                            Path(folder)))
    out.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
    return [(score, name, folder) for _tier, score, _prior, name, folder in out]


def _load_folder(folder: Path, errors: list[str] | None = None) -> dict[str, Predictor]:
    """The predictors of ``folder``; why a family could not be loaded is printed, or added
    to ``errors`` when given."""
    out: dict[str, Predictor] = {}
    for family, (detect, loader) in FAMILIES.items():
        if detect(folder):
            try:
                out.update(loader(folder))
            except Exception as exc:
                message = f"cannot load {family} from {folder}: {exc}"
                if errors is None:
                    print(f"laser-ci: {message}", file=sys.stderr)
                else:
                    errors.append(message)
    return out


def load_predictor(model_dir: str | os.PathLike[str] | None = None) -> Predictor:
    """The best shipped predictor (see the module doc). Only the winner's folder is loaded.

    Each folder is loaded at most once. Raises :class:`ModelNotFoundError` (one readable
    line: why its folders could not be loaded, or that it has none) when the folder holds
    no predictor: a made-up constant is never passed off as a prediction. When one loads,
    why another family could not is printed once, as a warning.
    """
    loaded: dict[Path, dict[str, Predictor]] = {}
    errors: list[str] = []

    def load(folder: Path) -> dict[str, Predictor]:
        if folder not in loaded:
            loaded[folder] = _load_folder(folder, errors)
        return loaded[folder]

    def found(predictor: Predictor) -> Predictor:
        for message in errors:
            print(f"laser-ci: {message}", file=sys.stderr)
        return predictor

    for _score, name, folder in _ranked(model_dir):
        if name in load(folder):
            return found(loaded[folder][name])
    preds: dict[str, Predictor] = {}
    for folder in _folders(model_dir):
        preds.update(load(folder))  # a broken family must not hide the others
    name = best_name(model_dir, set(preds))
    if name is not None:
        return found(preds[name])
    for fallback in ("tabular", "history-median", "text-linear", "median"):
        if fallback in preds:
            return found(preds[fallback])
    if preds:
        return found(next(iter(preds.values())))
    if errors:
        raise ModelNotFoundError("; ".join(errors))
    raise ModelNotFoundError(f"no model found in {_model_dir(model_dir)} (expected baselines/ "
                             "or a language model folder; see --model)")
