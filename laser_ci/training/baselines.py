"""The baselines' training recipe: every step of ``benchmarks/baselines.py`` as functions.

:func:`fit_baselines` runs the recipe on a ``train`` set with a ``val`` set that picks the
hyperparameters and calibrates the bands; ``benchmarks/baselines.py`` calls it with the
``train`` and ``val`` splits and ships the result, and ``laser-ci eval --folds K``
(:mod:`laser_ci.evaluation.crossval`) calls it once per held-out fold, with training folds
in both parts. Needs the ``train`` extra (LightGBM, scikit-learn).

1. ``median``: the training runtimes' median (p10/p90: their 10th/90th percentiles).
2. ``tabular``: LightGBM on :mod:`laser_ci.predictors.features`.
   Cold part (texts without history): a small grid (below) chosen by log-MAE on ``val``
   runs (kind ``workflow``, all conclusions, cold texts: what ``laser-ci eval`` prints by
   default). The p50 model averages 5 bagged models. p10/p90: offsets from residual
   quantiles, or quantile models (alpha 0.1/0.9) shifted by their miscoverage, whichever
   has the better interval score on ``val``; residuals are out-of-sample: 5-fold (by
   repository) out-of-fold on ``train``, pooled with ``val`` (so ``val`` coverage is
   partly in-sample; ``info`` also gives the coverage a train-only calibration gets on
   ``val``).
   Warm part (texts with a history block; every training example with earlier runs, its
   ``text_warm``): LightGBM (L1) on ``ln runtime - anchor``, the anchor ln of the history
   median or of its ``recent`` median (the last 3 runs), and a small grid, both chosen by
   ``val`` log-MAE on warm workflow runs; 5 bags; p10/p90 offsets from
   out-of-fold residuals pooled with ``val``. (One model on the mixed cold and warm texts
   was measured first: it cannot copy the history median through its splits.)
3. ``text-linear``: TF-IDF over the serialized text + ridge, trained on the mix (every
   training example cold, and warm too when it has earlier runs:
   :func:`laser_ci.training.history.training_texts`), same selection and offsets.
4. ``history-median``: the median of the earlier runs read from the history block, p10/p90
   from the history's own p10/p90 widened by offsets calibrated on warm ``train`` runs
   (pooled with ``val``); without history it falls back to ``tabular``.
5. ``history-recent``: the same on the history's ``recent`` median (the last 3 runs).

Deterministic: fixed seeds, one thread.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from laser_ci.predictors.baselines import (
    HistoryMedianPredictor,
    HistoryRecentPredictor,
    MedianPredictor,
    TabularPredictor,
    TextLinearPredictor,
    WarmPart,
    bag_vocabulary,
    fit_lightgbm,
    fit_text_linear,
    interval_offsets,
    vectorize,
)
from laser_ci.predictors.trees import TreeEnsemble
from laser_ci.training.example import Example
from laser_ci.training.examples import DataError
from laser_ci.training.history import training_texts
from laser_ci.training.metrics import interval_score_log

# the predictors this recipe makes, in training order (history-median/-recent need tabular)
NAMES = ("median", "tabular", "text-linear", "history-median", "history-recent")
NEEDS = {"history-median": ("tabular",), "history-recent": ("tabular",)}

# LightGBM: small trees win here (few hundred repositories; most signal is coarse).
TAB_BASE = {
    "learning_rate": 0.05,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.5,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
}
TAB_GRID = {
    "objective": ["huber", "regression_l1"],
    "num_leaves": [3, 4, 5, 7],
    "rounds": [200, 400],
    "min_repos": [3, 5],  # a bag feature must occur in this many training repositories
}
TEXT_GRID = {
    "alpha": [0.3, 1.0, 3.0],
    "ngram_max": [1, 2],
    "min_groups": [1, 2],
}
# the warm (history-anchored) part of tabular: L1 on ln runtime - anchor (WarmPart.ANCHORS)
WARM_BASE = {**TAB_BASE, "objective": "regression_l1"}
WARM_GRID = {
    "anchor": list(WarmPart.ANCHORS),
    "num_leaves": [3, 5, 8],
    "rounds": [150, 400],
    "min_data_in_leaf": [20, 50],
}
WARM_MIN_REPOS = 3
FOLDS = 5
SEEDS = 5  # the shipped p50 model averages this many bagged LightGBM models


def log_y(examples: Sequence[Example]) -> np.ndarray:
    return np.log(np.maximum([e.runtime_s for e in examples], 1.0))


def repo_folds(examples: Sequence[Example], k: int) -> np.ndarray:
    """Fold of each example: repositories dealt round-robin in a seeded order."""
    repos = sorted({e.repo for e in examples})
    rng = np.random.default_rng(0)
    order = rng.permutation(len(repos))
    fold_of = {repos[j]: i % k for i, j in enumerate(order)}
    return np.array([fold_of[e.repo] for e in examples])


def oof_splits(examples: Sequence[Example], k: int = FOLDS) -> Iterator[tuple[np.ndarray,
                                                                              np.ndarray]]:
    """``(train, test)`` indices of the out-of-fold loop over :func:`repo_folds`. A fold
    without examples is skipped; with a single repository (only in tiny folders) its
    predictions are in-sample, there being no other repository to learn from."""
    folds = repo_folds(examples, k)
    for f in range(k):
        tr_idx, te_idx = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        if not len(te_idx):
            continue
        yield (tr_idx if len(tr_idx) else te_idx), te_idx


def grid(spec: dict[str, list[Any]]) -> list[dict[str, Any]]:
    keys = list(spec)
    return [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*spec.values())]


def lmae(mu: np.ndarray, y: np.ndarray) -> float:
    """Mean |mu - y| (NaN without examples: an empty val part, only in tiny folders)."""
    return float(np.mean(np.abs(mu - y))) if len(y) else math.nan


# --- tabular -----------------------------------------------------------------------------


class Tabular:
    def __init__(self, train: Sequence[Example], feats: dict[str, dict[str, float]]):
        self.train = train
        self.feats = feats
        self.y = log_y(train)
        self._vocab: dict[int, list[str]] = {}

    def vocab(self, min_repos: int, idx: Sequence[int] | None = None) -> list[str]:
        ex = self.train if idx is None else [self.train[i] for i in idx]
        if idx is not None:
            return bag_vocabulary([self.feats[e.text] for e in ex], [e.repo for e in ex],
                                  min_repos)
        if min_repos not in self._vocab:
            self._vocab[min_repos] = bag_vocabulary(
                [self.feats[e.text] for e in ex], [e.repo for e in ex], min_repos
            )
        return self._vocab[min_repos]

    def matrix(self, examples: Sequence[Example], names: Sequence[str]) -> np.ndarray:
        index = {n: i for i, n in enumerate(names)}
        return vectorize([self.feats[e.text] for e in examples], index)

    def fit(self, cfg: dict[str, Any], idx: np.ndarray | None = None, objective: str | None = None,
            alpha: float | None = None, seeds: int = 1):
        names = self.vocab(cfg["min_repos"], None if idx is None else list(idx))
        ex = self.train if idx is None else [self.train[i] for i in idx]
        y = self.y if idx is None else self.y[idx]
        params = {**TAB_BASE, "objective": objective or cfg["objective"],
                  "num_leaves": cfg["num_leaves"]}
        if alpha is not None:
            params["alpha"] = alpha
        X = self.matrix(ex, names)
        models = [fit_lightgbm(X, y, {**params, "seed": s}, cfg["rounds"]) for s in range(seeds)]
        return names, models[0] if seeds == 1 else TreeEnsemble.mean(models)


def _coverage(y, mu, off_lo, off_hi, lo=None, hi=None) -> float:
    lo = (mu if lo is None else lo) + off_lo
    hi = (mu if hi is None else hi) + off_hi
    lo, hi = np.minimum(lo, mu), np.maximum(hi, mu)
    return float(np.mean((y >= lo) & (y <= hi))) if len(y) else math.nan


def train_tabular(train, val, val_wf, feats, log) -> tuple[TabularPredictor, dict[str, Any]]:
    tab = Tabular(train, feats)
    y_val = log_y(val_wf)
    results = []
    for cfg in grid(TAB_GRID):
        t0 = time.perf_counter()
        names, model = tab.fit(cfg)
        mu = model.predict(tab.matrix(val_wf, names))
        score = lmae(mu, y_val)
        results.append((score, cfg))
        log(f"  tabular {cfg} val log-MAE {score:.3f} ({time.perf_counter() - t0:.1f}s)")
    best_score, best = min(results, key=lambda r: r[0])
    log(f"  tabular best {best}: {best_score:.3f}")

    # out-of-fold residuals on train (by repository) for the p10-p90 band
    oof = np.zeros(len(train))
    oof_lo = np.zeros(len(train))
    oof_hi = np.zeros(len(train))
    for tr_idx, te_idx in oof_splits(train):
        te = [train[i] for i in te_idx]
        names, model = tab.fit(best, tr_idx)
        X = tab.matrix(te, names)
        oof[te_idx] = model.predict(X)
        _, lo_m = tab.fit(best, tr_idx, objective="quantile", alpha=0.1)
        _, hi_m = tab.fit(best, tr_idx, objective="quantile", alpha=0.9)
        oof_lo[te_idx], oof_hi[te_idx] = lo_m.predict(X), hi_m.predict(X)
    names, model = tab.fit(best, seeds=SEEDS)  # final p50 model: average of SEEDS bags
    _, lo_model = tab.fit(best, objective="quantile", alpha=0.1)
    _, hi_model = tab.fit(best, objective="quantile", alpha=0.9)
    X_val = tab.matrix(val, names)
    y_all_val = log_y(val)
    mu_val, lo_val, hi_val = model.predict(X_val), lo_model.predict(X_val), hi_model.predict(X_val)
    # p10/p90 from out-of-sample residuals: out-of-fold on train, pooled with val
    res = np.r_[tab.y - oof, y_all_val - mu_val]
    res_lo = np.r_[tab.y - oof_lo, y_all_val - lo_val]
    res_hi = np.r_[tab.y - oof_hi, y_all_val - hi_val]
    off_lo, off_hi = interval_offsets(res)
    # conformalized quantiles: shift so 10% of the truths fall below p10 (and above p90)
    q_lo, q_hi = float(np.quantile(res_lo, 0.1)), float(np.quantile(res_hi, 0.9))
    info = {"params": {**TAB_BASE, **best, "seeds": SEEDS}, "val_log_mae": best_score,
            "n_features": len(names), "oof_log_mae": lmae(oof, tab.y)}
    plain = TabularPredictor(names, model, off_lo, off_hi, info=info)
    quant = TabularPredictor(names, model, q_lo, q_hi, lo_model, hi_model, info=info)
    scores = {}
    oof_only = {  # val coverage had the band been calibrated on train alone (honest)
        "offsets": _coverage(y_all_val, mu_val, *interval_offsets(tab.y - oof)),
        "quantile": _coverage(y_all_val, mu_val, float(np.quantile(tab.y - oof_lo, 0.1)),
                              float(np.quantile(tab.y - oof_hi, 0.9)), lo_val, hi_val),
    }
    for label, pred in (("offsets", plain), ("quantile", quant)):
        mu, lo, hi = pred.predict_log([e.text for e in val_wf])
        lo, hi = np.minimum(lo, mu), np.maximum(hi, mu)
        scores[label] = interval_score_log(lo, hi, y_val)
        cov = float(np.mean((y_val >= lo) & (y_val <= hi))) if len(y_val) else math.nan
        log(f"  tabular intervals {label}: val interval score {scores[label]:.3f}, "
            f"coverage {cov:.3f} (train-only calibration: {oof_only[label]:.3f})")
    chosen = min(scores, key=scores.get)
    pred = quant if chosen == "quantile" else plain
    pred.info["intervals"] = chosen
    pred.info["val_coverage_train_calibrated"] = oof_only[chosen]
    return pred, {"grid": [{"val_log_mae": s, **c} for s, c in results]}


def warm_anchor(examples: Sequence[Example], feats: dict[str, dict[str, float]],
                anchor: str = WarmPart.MEDIAN) -> np.ndarray:
    """Each example's warm anchor (:data:`WarmPart.ANCHORS`) from its warm text's features."""
    return np.array(WarmPart.anchor_values([feats[e.text_warm] for e in examples], anchor))


def warm_matrix(examples: Sequence[Example], feats: dict[str, dict[str, float]],
                names: Sequence[str]) -> np.ndarray:
    return vectorize([feats[e.text_warm] for e in examples], {n: i for i, n in enumerate(names)})


def fit_warm(examples: Sequence[Example], feats: dict[str, dict[str, float]],
             cfg: dict[str, Any], seeds: int = 1) -> tuple[list[str], Any]:
    """The warm part's feature names and tree model of ``ln runtime - anchor`` on
    ``examples`` (each with a warm text), with the grid point ``cfg`` (:data:`WARM_GRID`
    keys; no ``anchor``: the history median)."""
    names = bag_vocabulary([feats[e.text_warm] for e in examples], [e.repo for e in examples],
                           WARM_MIN_REPOS)
    X = warm_matrix(examples, feats, names)
    y = log_y(examples) - warm_anchor(examples, feats, cfg.get("anchor", WarmPart.MEDIAN))
    params = {**WARM_BASE, "num_leaves": cfg["num_leaves"],
              "min_data_in_leaf": cfg["min_data_in_leaf"]}
    models = [fit_lightgbm(X, y, {**params, "seed": s}, cfg["rounds"]) for s in range(seeds)]
    return names, models[0] if seeds == 1 else TreeEnsemble.mean(models)


def train_warm(train, val, feats, log) -> WarmPart:
    """The history-anchored part of tabular, on the examples that have earlier runs."""
    wt = [e for e in train if e.text_warm is not None]
    wv = [e for e in val if e.text_warm is not None]
    wv_wf = [e for e in wv if e.kind == "workflow"]
    changed = np.array([bool(e.changed) for e in wv_wf], dtype=bool)

    def anchor(examples, cfg=None):
        return warm_anchor(examples, feats, (cfg or {}).get("anchor", WarmPart.MEDIAN))

    def matrix(examples, names):
        return warm_matrix(examples, feats, names)

    def fit(examples, cfg, seeds=1):
        return fit_warm(examples, feats, cfg, seeds)

    y_val = log_y(wv_wf)
    base_val = lmae(anchor(wv_wf), y_val)
    base_ch = lmae(anchor(wv_wf)[changed], y_val[changed])
    log(f"  warm: {len(wt)} train, {len(wv_wf)} val workflow runs with history; history "
        f"median alone: val log-MAE {base_val:.3f} (changed {base_ch:.3f})")
    results = []
    for cfg in grid(WARM_GRID):
        t0 = time.perf_counter()
        names, model = fit(wt, cfg)
        mu = anchor(wv_wf, cfg) + model.predict(matrix(wv_wf, names))
        score, score_ch = lmae(mu, y_val), lmae(mu[changed], y_val[changed])
        results.append((score, cfg, score_ch))
        log(f"  warm {cfg} val log-MAE {score:.3f} changed {score_ch:.3f} "
            f"({time.perf_counter() - t0:.1f}s)")
    best_score, best, best_ch = min(results, key=lambda r: r[0])
    log(f"  warm best {best}: {best_score:.3f} (changed {best_ch:.3f})")
    oof = np.zeros(len(wt))
    for tr_idx, te_idx in oof_splits(wt):
        names, model = fit([wt[i] for i in tr_idx], best)
        te = [wt[i] for i in te_idx]
        oof[te_idx] = anchor(te, best) + model.predict(matrix(te, names))
    names, model = fit(wt, best, seeds=SEEDS)
    mu_val = anchor(wv, best) + model.predict(matrix(wv, names))
    y_wt, y_wv = log_y(wt), log_y(wv)
    off_lo, off_hi = interval_offsets(np.r_[y_wt - oof, y_wv - mu_val])
    info = {"params": {**WARM_BASE, **best, "min_repos": WARM_MIN_REPOS, "seeds": SEEDS},
            "val_warm_log_mae": best_score, "val_warm_changed_log_mae": best_ch,
            "oof_log_mae": lmae(oof, y_wt), "n_features": len(names), "n_train": len(wt),
            "val_coverage_train_calibrated": _coverage(y_wv, mu_val,
                                                       *interval_offsets(y_wt - oof)),
            "grid": [{"val_log_mae": s_, "val_changed_log_mae": c_, **cfg}
                     for s_, cfg, c_ in results]}
    return WarmPart(names, model, off_lo, off_hi, info=info, anchor=best["anchor"])


def train_history_median(train, val, fallback,
                         cls: type[HistoryMedianPredictor] = HistoryMedianPredictor
                         ) -> HistoryMedianPredictor:
    """Band offsets: the history's own p10/p90 widened to cover 80% of warm runs
    (``cls``: :class:`HistoryMedianPredictor` or :class:`HistoryRecentPredictor`)."""
    warm = [e for e in (*train, *val) if e.text_warm is not None]
    has, _mu, lo, hi = cls.history_log([e.text_warm for e in warm])
    y = log_y(warm)
    res_lo, res_hi = (y - lo)[has], (y - hi)[has]

    def offsets(lo_res: np.ndarray, hi_res: np.ndarray) -> list[float]:
        if not len(lo_res):  # no warm run to calibrate on (tiny folders): the history's band
            return [0.0, 0.0]
        return [float(min(np.quantile(lo_res, 0.1), 0.0)),
                float(max(np.quantile(hi_res, 0.9), 0.0))]

    off_lo, off_hi = offsets(res_lo, res_hi)
    n_train = sum(e.text_warm is not None for e in train)
    tr = (np.arange(len(warm)) < n_train)[has]
    info = {"offsets_from": "warm train + val runs (history p10/p90 residual quantiles)",
            "train_only_offsets": offsets(res_lo[tr], res_hi[tr]),
            "n": int(has.sum())}
    return cls(fallback, off_lo, off_hi, fallback.name, info)


# --- text --------------------------------------------------------------------------------


def train_text(train, val, val_wf, log) -> tuple[TextLinearPredictor, dict[str, Any]]:
    rows = training_texts(train, mode="both")  # every example cold, and warm when it can be
    texts = [t for t, _ in rows]
    groups = [e.repo for _, e in rows]
    y = log_y([e for _, e in rows])
    y_val = log_y(val_wf)
    results = []
    for cfg in grid(TEXT_GRID):
        t0 = time.perf_counter()
        p = fit_text_linear(texts, y, groups=groups, **cfg)
        score = lmae(p.predict_log([e.text for e in val_wf])[0], y_val)
        results.append((score, cfg))
        log(f"  text {cfg} terms {len(p.vocab)} val log-MAE {score:.3f} "
            f"({time.perf_counter() - t0:.1f}s)")
    best_score, best = min(results, key=lambda r: r[0])
    log(f"  text best {best}: {best_score:.3f}")
    oof = np.zeros(len(rows))
    for tr_idx, te_idx in oof_splits([e for _, e in rows]):
        p = fit_text_linear([texts[i] for i in tr_idx], y[tr_idx],
                            groups=[groups[i] for i in tr_idx], **best)
        oof[te_idx] = p.predict_log([texts[i] for i in te_idx])[0]
    pred = fit_text_linear(texts, y, groups=groups, **best)
    val_rows = training_texts(val, mode="both")
    y_all_val = log_y([e for _, e in val_rows])
    mu_val = pred.predict_log([t for t, _ in val_rows])[0]
    # p10/p90 from out-of-sample residuals: out-of-fold on train, pooled with val
    pred.offset_lo, pred.offset_hi = interval_offsets(np.r_[y - oof, y_all_val - mu_val])
    pred.info.update({"val_log_mae": best_score, "oof_log_mae": lmae(oof, y),
                      "ngram_max": best["ngram_max"], "training_texts": "both",
                      "val_coverage_train_calibrated": _coverage(
                          y_all_val, mu_val, *interval_offsets(y - oof))})
    return pred, {"grid": [{"val_log_mae": s, **c} for s, c in results]}



# --- the whole recipe ----------------------------------------------------------------------


def text_features(examples: Iterable[Example]) -> dict[str, dict[str, float]]:
    """:func:`laser_ci.predictors.features.extract` of every text (cold and warm) of
    ``examples``, by text."""
    from laser_ci.predictors.features import extract

    texts: dict[str, None] = {}
    for e in examples:
        texts[e.text] = None
        if e.text_warm is not None:
            texts[e.text_warm] = None
    return {t: extract(t) for t in texts}


class NoTrainingData(DataError):
    """:func:`fit_baselines` given no training examples (a cross-validation fold whose
    training part is empty: too few repositories for the folds)."""


@dataclass
class BaselineFit:
    """What :func:`fit_baselines` made: the predictors by name, the tuning logs (the grids,
    for ``card.json``) and the seconds each predictor took to train."""

    predictors: dict[str, Any] = field(default_factory=dict)
    tuning: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def with_needs(names: Iterable[str]) -> list[str]:
    """``names`` and the predictors they need (history-median: tabular), in training order."""
    wanted = set(names)
    unknown = wanted - set(NAMES)
    if unknown:
        raise ValueError(f"unknown baseline(s) {sorted(unknown)}; expected {NAMES}")
    for n in list(wanted):
        wanted.update(NEEDS.get(n, ()))
    return [n for n in NAMES if n in wanted]


def fit_baselines(
    train: Sequence[Example],
    val: Sequence[Example],
    *,
    names: Iterable[str] = NAMES,
    feats: dict[str, dict[str, float]] | None = None,
    log: Callable[[str], None] | None = None,
    done: Callable[[str], None] | None = None,
) -> BaselineFit:
    """Run the recipe (module doc) for ``names`` (and what they need): fit on ``train``,
    pick hyperparameters and calibrate bands on ``val``. ``feats``: features by text of at
    least every ``train`` and ``val`` text (computed here, inside tabular's time, when not
    given). ``done(name)`` is called after each predictor."""
    if not train:
        raise NoTrainingData("no training examples")
    say = log or (lambda _msg: None)
    out = BaselineFit()
    val_wf = [e for e in val if e.kind == "workflow"]
    for name in with_needs(names):
        t0 = time.perf_counter()
        if name == "median":
            out.predictors[name] = MedianPredictor.fit(e.runtime_s for e in train)
        elif name == "tabular":
            if feats is None:
                feats = text_features([*train, *val])
            tabular, out.tuning["tabular"] = train_tabular(train, val, val_wf, feats, say)
            tabular.warm = train_warm(train, val, feats, say)
            out.tuning["tabular-warm"] = {"grid": tabular.warm.info.pop("grid")}
            out.predictors[name] = tabular
        elif name == "text-linear":
            out.predictors[name], out.tuning["text-linear"] = train_text(train, val, val_wf, say)
        elif name == "history-median":
            out.predictors[name] = train_history_median(train, val, out.predictors["tabular"])
        elif name == "history-recent":
            out.predictors[name] = train_history_median(train, val, out.predictors["tabular"],
                                                        HistoryRecentPredictor)
        out.seconds[name] = time.perf_counter() - t0
        if done is not None:
            done(name)
    return out


def fit_tabular(train: Sequence[Example], val: Sequence[Example],
                feats: dict[str, dict[str, float]] | None = None) -> Any:
    """The reference model of a fold (the language model's cold prompts carry its p50):
    ``tabular`` fit on the fold's training and val parts by :func:`fit_baselines`."""
    return fit_baselines(train, val, names=["tabular"], feats=feats).predictors["tabular"]
