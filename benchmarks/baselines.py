"""Train the baselines from scratch, tune them on ``val``, ship them, print the eval table.

    python benchmarks/baselines.py [--data ../shared/data/gha-runs] [--out model/baselines]

Needs the ``train`` extra (LightGBM, scikit-learn). Steps:

1. Examples from the data folder (:func:`laser_ci.training.examples.load_examples`, both kinds, with
   their causal history: :mod:`laser_ci.training.history`), split by repository
   (:func:`laser_ci.training.examples.split_of`). Everything is fit on ``train`` only.
2. ``median``: the training runtimes' median (p10/p90: their 10th/90th percentiles).
3. ``tabular``: LightGBM on :mod:`laser_ci.predictors.features`.
   Cold part (texts without history): a small grid (below) chosen by log-MAE on ``val``
   runs (kind ``workflow``, all conclusions, ``--history none``: what ``laser-ci eval``
   prints by default). The shipped p50 model averages 5 bagged models. p10/p90: offsets
   from residual quantiles, or quantile models (alpha 0.1/0.9) shifted by their
   miscoverage, whichever has the better interval score on ``val``; residuals are
   out-of-sample: 5-fold (by repository) out-of-fold on ``train``, pooled with ``val``
   (so ``val`` coverage is partly in-sample; ``card.json`` also gives the coverage a
   train-only calibration gets on ``val``).
   Warm part (texts with a history block; every training example with earlier runs, its
   ``text_warm``): LightGBM (L1) on ``ln runtime - ln(history median)``, a small grid
   chosen by ``val`` log-MAE on warm workflow runs (``--history prior``); 5 bags; p10/p90
   offsets from out-of-fold residuals pooled with ``val``. (One model on the mixed cold and
   warm texts was measured first: it cannot copy the history median through its splits.)
4. ``text-linear``: TF-IDF over the serialized text + ridge, trained on the mix (every
   training example cold, and warm too when it has earlier runs:
   :func:`laser_ci.training.history.training_texts`), same selection and offsets.
5. ``history-median``: the median of the earlier runs read from the history block, p10/p90
   from the history's own p10/p90 widened by offsets calibrated on warm ``train`` runs
   (pooled with ``val``); without history it falls back to ``tabular``.
6. Writes ``median.json``, ``tabular.{json,npz}``, ``text_linear.{json,npz}``,
   ``history_median.json`` and ``card.json`` (val metrics in both history regimes,
   chosen parameters, best predictor) to ``--out``, reloads them with numpy only and prints
   ``laser-ci eval``'s tables for ``val`` (workflow and job, ``--history prior``: both
   regimes and the warm, warm-changed and cold subsets).

Deterministic: fixed seeds, one thread. About three minutes on one core.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from laser_ci.predictors.baselines import (  # noqa: E402
    HistoryMedianPredictor,
    MedianPredictor,
    TabularPredictor,
    TextLinearPredictor,
    TreeEnsemble,
    WarmPart,
    bag_vocabulary,
    fit_lightgbm,
    fit_text_linear,
    interval_offsets,
    load_baselines,
    vectorize,
)
from laser_ci.predictors.features import extract  # noqa: E402
from laser_ci.training.evaluate import describe, evaluate, render_table  # noqa: E402
from laser_ci.training.examples import Example, load_examples, summarize  # noqa: E402
from laser_ci.training.history import training_texts  # noqa: E402

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
# the warm (history-anchored) part of tabular: L1 on ln runtime - ln(history median)
WARM_BASE = {**TAB_BASE, "objective": "regression_l1"}
WARM_GRID = {
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


def grid(spec: dict[str, list[Any]]) -> list[dict[str, Any]]:
    keys = list(spec)
    return [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*spec.values())]


def lmae(mu: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.abs(mu - y)))


def interval_score(lo: np.ndarray, hi: np.ndarray, y: np.ndarray, alpha: float = 0.2) -> float:
    """Winkler score of the central 80% interval in log space (lower is better)."""
    width = hi - lo
    below = np.maximum(lo - y, 0.0)
    above = np.maximum(y - hi, 0.0)
    return float(np.mean(width + (2.0 / alpha) * (below + above)))


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
    return float(np.mean((y >= lo) & (y <= hi)))


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
    folds = repo_folds(train, FOLDS)
    oof = np.zeros(len(train))
    oof_lo = np.zeros(len(train))
    oof_hi = np.zeros(len(train))
    for k in range(FOLDS):
        tr_idx, te_idx = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
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
        scores[label] = interval_score(lo, hi, y_val)
        cov = float(np.mean((y_val >= lo) & (y_val <= hi)))
        log(f"  tabular intervals {label}: val interval score {scores[label]:.3f}, "
            f"coverage {cov:.3f} (train-only calibration: {oof_only[label]:.3f})")
    chosen = min(scores, key=scores.get)
    pred = quant if chosen == "quantile" else plain
    pred.info["intervals"] = chosen
    pred.info["val_coverage_train_calibrated"] = oof_only[chosen]
    return pred, {"grid": [{"val_log_mae": s, **c} for s, c in results]}


def train_warm(train, val, feats, log) -> WarmPart:
    """The history-anchored part of tabular, on the examples that have earlier runs."""
    wt = [e for e in train if e.text_warm is not None]
    wv = [e for e in val if e.text_warm is not None]
    wv_wf = [e for e in wv if e.kind == "workflow"]
    changed = np.array([bool(e.changed) for e in wv_wf])

    def anchor(examples):
        return np.array([feats[e.text_warm][WarmPart.ANCHOR] for e in examples])

    def matrix(examples, names):
        return vectorize([feats[e.text_warm] for e in examples], {n: i for i, n in enumerate(names)})

    def vocab(examples):
        return bag_vocabulary([feats[e.text_warm] for e in examples], [e.repo for e in examples],
                              WARM_MIN_REPOS)

    def fit(examples, cfg, seeds=1):
        names = vocab(examples)
        X, y = matrix(examples, names), log_y(examples) - anchor(examples)
        params = {**WARM_BASE, "num_leaves": cfg["num_leaves"],
                  "min_data_in_leaf": cfg["min_data_in_leaf"]}
        models = [fit_lightgbm(X, y, {**params, "seed": s}, cfg["rounds"]) for s in range(seeds)]
        return names, models[0] if seeds == 1 else TreeEnsemble.mean(models)

    y_val = log_y(wv_wf)
    base_val = lmae(anchor(wv_wf), y_val)
    base_ch = lmae(anchor(wv_wf)[changed], y_val[changed])
    log(f"  warm: {len(wt)} train, {len(wv_wf)} val workflow runs with history; history "
        f"median alone: val log-MAE {base_val:.3f} (changed {base_ch:.3f})")
    results = []
    for cfg in grid(WARM_GRID):
        t0 = time.perf_counter()
        names, model = fit(wt, cfg)
        mu = anchor(wv_wf) + model.predict(matrix(wv_wf, names))
        score, score_ch = lmae(mu, y_val), lmae(mu[changed], y_val[changed])
        results.append((score, cfg, score_ch))
        log(f"  warm {cfg} val log-MAE {score:.3f} changed {score_ch:.3f} "
            f"({time.perf_counter() - t0:.1f}s)")
    best_score, best, best_ch = min(results, key=lambda r: r[0])
    log(f"  warm best {best}: {best_score:.3f} (changed {best_ch:.3f})")
    folds = repo_folds(wt, FOLDS)
    oof = np.zeros(len(wt))
    for k in range(FOLDS):
        tr_idx, te_idx = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        names, model = fit([wt[i] for i in tr_idx], best)
        te = [wt[i] for i in te_idx]
        oof[te_idx] = anchor(te) + model.predict(matrix(te, names))
    names, model = fit(wt, best, seeds=SEEDS)
    mu_val = anchor(wv) + model.predict(matrix(wv, names))
    y_wt, y_wv = log_y(wt), log_y(wv)
    off_lo, off_hi = interval_offsets(np.r_[y_wt - oof, y_wv - mu_val])
    info = {"params": {**WARM_BASE, **best, "min_repos": WARM_MIN_REPOS, "seeds": SEEDS},
            "val_warm_log_mae": best_score, "val_warm_changed_log_mae": best_ch,
            "oof_log_mae": lmae(oof, y_wt), "n_features": len(names), "n_train": len(wt),
            "val_coverage_train_calibrated": _coverage(y_wv, mu_val,
                                                       *interval_offsets(y_wt - oof)),
            "grid": [{"val_log_mae": s_, "val_changed_log_mae": c_, **cfg}
                     for s_, cfg, c_ in results]}
    return WarmPart(names, model, off_lo, off_hi, info=info)


def train_history_median(train, val, fallback) -> HistoryMedianPredictor:
    """Band offsets: the history's own p10/p90 widened to cover 80% of warm runs."""
    warm = [e for e in (*train, *val) if e.text_warm is not None]
    has, _mu, lo, hi = HistoryMedianPredictor.history_log([e.text_warm for e in warm])
    y = log_y(warm)
    res_lo, res_hi = (y - lo)[has], (y - hi)[has]
    off_lo = float(min(np.quantile(res_lo, 0.1), 0.0))
    off_hi = float(max(np.quantile(res_hi, 0.9), 0.0))
    tr = np.array([e.split == "train" for e in warm])[has]
    info = {"offsets_from": "warm train + val runs (history p10/p90 residual quantiles)",
            "train_only_offsets": [float(min(np.quantile(res_lo[tr], 0.1), 0.0)),
                                   float(max(np.quantile(res_hi[tr], 0.9), 0.0))],
            "n": int(has.sum())}
    return HistoryMedianPredictor(fallback, off_lo, off_hi, fallback.name, info)


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
    folds = repo_folds([e for _, e in rows], FOLDS)
    oof = np.zeros(len(rows))
    for k in range(FOLDS):
        tr_idx, te_idx = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
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


# --- main --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "gha-runs"))
    ap.add_argument("--out", default=str(ROOT / "model" / "baselines"))
    ap.add_argument("--no-cache", action="store_true", help="re-parse the data")
    ap.add_argument("--quiet", action="store_true", help="only the final tables")
    ap.add_argument("--markdown", action="store_true", help="tables in markdown")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    t_start = time.perf_counter()
    examples = load_examples(args.data, cache=not args.no_cache)
    train = [e for e in examples if e.split == "train"]
    val = [e for e in examples if e.split == "val"]
    val_wf = [e for e in val if e.kind == "workflow"]
    log(f"data: {summarize(examples)}; train {summarize(train)}; val {summarize(val)} "
        f"({time.perf_counter() - t_start:.1f}s)")

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    median = MedianPredictor.fit(e.runtime_s for e in train)
    timings["median"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    texts = dict.fromkeys(e.text for e in examples)
    texts.update(dict.fromkeys(e.text_warm for e in examples if e.text_warm is not None))
    feats = {t: extract(t) for t in texts}
    tabular, tab_log = train_tabular(train, val, val_wf, feats, log)
    tabular.warm = train_warm(train, val, feats, log)
    timings["tabular"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    text, text_log = train_text(train, val, val_wf, log)
    timings["text-linear"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    history_median = train_history_median(train, val, tabular)
    timings["history-median"] = time.perf_counter() - t0

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for p in (median, tabular, text, history_median):
        p.save(out)

    # reload from disk (numpy only) and score exactly as `laser-ci eval --history prior` does
    shipped = load_baselines(out)
    reports = {}
    for kind in ("workflow", "job"):
        subset = [e for e in val if e.kind == kind]
        report, _ = evaluate(shipped, subset, history="prior")
        reports[kind] = {"split": "val", "kind": kind, **report}

    def metric(kind: str, name: str, regime: str, subset: str, runs: str = "all") -> float:
        res = reports[kind]["predictors"][name]
        res = res if regime == "prior" else res["regimes"][regime]
        res = res if subset == "all" else res["subsets"][subset]
        return res[runs]["log_mae"]

    val_scores = {n: metric("workflow", n, "none", "all") for n in shipped}
    prior_scores = {n: metric("workflow", n, "prior", "all") for n in shipped}
    best = min(val_scores, key=lambda n: (val_scores[n], prior_scores[n], n))
    card = {
        "best": best,
        "predictors": {
            n: {
                "val_log_mae": val_scores[n],
                "val_success_log_mae": metric("workflow", n, "none", "all", "success"),
                "val_job_log_mae": metric("job", n, "none", "all"),
                "val_prior_log_mae": prior_scores[n],
                "val_warm_log_mae": metric("workflow", n, "prior", "warm"),
                "val_warm_success_log_mae": metric("workflow", n, "prior", "warm", "success"),
                "val_warm_changed_log_mae": metric("workflow", n, "prior", "warm-changed"),
                "val_job_warm_log_mae": metric("job", n, "prior", "warm"),
                "train_seconds": round(timings[n], 1),
            }
            for n in shipped
        },
        "metrics": "log-MAE on val, kind workflow unless named job; val_log_mae: --history "
                   "none (cold start); val_prior_log_mae: --history prior; warm: runs with "
                   "earlier runs; warm_changed: and the workflow file changed since the "
                   "previous run",
        "history": {"policy": "earlier runs (strictly earlier commit date) of the same repo, "
                              "workflow and job name, all conclusions, last 20",
                    "val_workflow": reports["workflow"]["subsets"],
                    "val_job": reports["job"]["subsets"]},
        "data": {"train": summarize(train), "val": summarize(val)},
        "split": "sha256(owner/name)[:8] % 100 < 20 -> val (laser_ci.training.examples.split_of)",
        "tabular": tabular.info,
        "tabular-warm": {k: v for k, v in tabular.warm.info.items() if k != "grid"},
        "text-linear": text.info,
        "history-median": history_median.info,
        "val_metrics": {k: _finite(r) for k, r in reports.items()},
        "tuning": {"tabular": tab_log, "tabular-warm": {"grid": tabular.warm.info["grid"]},
                   "text-linear": text_log},
    }
    tabular.warm.info.pop("grid", None)
    tabular.save(out)  # without the tuning grid (it is in card.json)
    (out / "card.json").write_text(json.dumps(_finite(card), indent=1) + "\n", encoding="utf-8")

    sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
    log(f"wrote {out}: " + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in sizes.items())
        + f" (total {sum(sizes.values()) / 1024:.0f} KiB)")
    log("training time: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())
        + f"; total {time.perf_counter() - t_start:.1f}s")
    for kind in ("workflow", "job"):
        print(describe(reports[kind]))
        print(render_table(reports[kind], markdown=args.markdown))
    print(f"best: {best}")
    return 0


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, np.floating):
        return float(value)
    return value


if __name__ == "__main__":
    sys.exit(main())
