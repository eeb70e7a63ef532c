"""Baseline predictors that run on numpy alone: global median, tabular trees, TF-IDF + linear.

Every baseline predicts ln(seconds) and turns it into a :class:`~laser_ci.predictors.base.Runtime`.
Training (the recipe :func:`laser_ci.training.baselines.fit_baselines`, run by
``benchmarks/baselines.py``) needs the ``train`` extra (LightGBM, scikit-learn);
what it ships under ``model/baselines/`` is plain JSON + ``.npz`` read here with numpy:

- ``median.json``: :class:`MedianPredictor`.
- ``tabular.json`` + ``tabular.npz``: :class:`TabularPredictor`: the feature names, and the
  LightGBM model(s) flattened to node arrays (:class:`TreeEnsemble`), evaluated in numpy.
- ``text_linear.json`` + ``text_linear.npz``: :class:`TextLinearPredictor`: the TF-IDF
  vocabulary, idf weights and the linear model's coefficients.

Intervals: p10/p90 add log-space offsets to the median prediction (or to the predictions
of quantile models, when shipped). The offsets are quantiles of out-of-fold residuals on the
training repositories, so the p10-p90 band covers about 80% of unseen repositories' runs.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from laser_ci.predictors.base import Runtime
from laser_ci.predictors.trees import TreeEnsemble
from laser_ci.text.history import anchor_field, parse_history

MAX_LOG_S = math.log(7 * 24 * 3600.0)  # a week: nothing sensible runs longer


def _to_runtimes(mu: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[Runtime]:
    mu = np.clip(mu, 0.0, MAX_LOG_S)
    lo = np.clip(np.minimum(lo, mu), 0.0, MAX_LOG_S)
    hi = np.clip(np.maximum(hi, mu), 0.0, MAX_LOG_S)
    return [
        Runtime(p10=float(a), p50=float(b), p90=float(c))
        for a, b, c in zip(np.exp(lo), np.exp(mu), np.exp(hi), strict=True)
    ]


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """A model file that cannot be read, or holds what does not fit, as one ValueError
    naming it (a KeyError's message is the bare key)."""
    try:
        yield
    except KeyError as e:
        raise ValueError(f"{path}: missing {e}") from e
    except (OSError, ValueError, TypeError, AttributeError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path}: {e}") from e


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


# --- global median ------------------------------------------------------------------------


class MedianPredictor:
    """The same prediction for every text: the training set's median (and p10/p90) runtime."""

    name = "median"
    FILE = "median.json"

    def __init__(self, log_p50: float, log_p10: float, log_p90: float) -> None:
        self.log_p50, self.log_p10, self.log_p90 = log_p50, log_p10, log_p90

    @classmethod
    def fit(cls, runtimes_s: Iterable[float]) -> MedianPredictor:
        y = np.log(np.maximum(np.asarray(list(runtimes_s), dtype=np.float64), 1.0))
        q10, q50, q90 = np.quantile(y, [0.1, 0.5, 0.9])
        return cls(float(q50), float(q10), float(q90))

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        n = len(texts)
        return _to_runtimes(
            np.full(n, self.log_p50), np.full(n, self.log_p10), np.full(n, self.log_p90)
        )

    def save(self, folder: str | Path) -> None:
        _write_json(
            Path(folder) / self.FILE,
            {"log_p10": self.log_p10, "log_p50": self.log_p50, "log_p90": self.log_p90},
        )

    @classmethod
    def load(cls, folder: str | Path) -> MedianPredictor:
        with _reading(Path(folder) / cls.FILE):
            d = json.loads((Path(folder) / cls.FILE).read_text(encoding="utf-8"))
            return cls(float(d["log_p50"]), float(d["log_p10"]), float(d["log_p90"]))


# --- tabular: engineered features + trees -------------------------------------------------


class TabularPredictor:
    """LightGBM on features engineered from the serialized text (:mod:`laser_ci.predictors.features`).

    Cold start (``history: none``): ``model`` (+ ``lo_model``/``hi_model`` or offsets).
    With a history block and a ``warm`` part: the prediction is anchored on the history
    (ln of its median, or of its ``recent`` median: ``warm.anchor``) and ``warm.model``
    predicts the correction from the configuration, what changed since the earlier runs and
    the history's shape (ln seconds)::

        ln p50 = ln(history anchor) + warm.model(features)

    with the p10/p90 offsets of ``warm`` (out-of-sample residual quantiles). A single tree
    model on mixed cold and warm texts cannot copy the history median through its splits
    (measured: val log-MAE 0.80 on warm runs against 0.41 for the median itself), hence the
    anchor.
    """

    name = "tabular"
    FILE = "tabular.json"
    ARRAYS = "tabular.npz"

    def __init__(
        self,
        feature_names: Sequence[str],
        model: TreeEnsemble,
        offset_lo: float,
        offset_hi: float,
        lo_model: TreeEnsemble | None = None,
        hi_model: TreeEnsemble | None = None,
        info: dict[str, Any] | None = None,
        warm: WarmPart | None = None,
    ) -> None:
        self.feature_names = list(feature_names)
        self.index = {f: i for i, f in enumerate(self.feature_names)}
        self.model, self.lo_model, self.hi_model = model, lo_model, hi_model
        self.offset_lo, self.offset_hi = offset_lo, offset_hi
        self.info = dict(info or {})
        self.warm = warm

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        from laser_ci.predictors.features import extract

        return vectorize([extract(t) for t in texts], self.index)

    def predict_log(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from laser_ci.predictors.features import extract

        rows = [extract(t) for t in texts]
        X = vectorize(rows, self.index)
        mu = self.model.predict(X)
        lo = (self.lo_model.predict(X) if self.lo_model else mu) + self.offset_lo
        hi = (self.hi_model.predict(X) if self.hi_model else mu) + self.offset_hi
        if self.warm is not None:
            warm = np.array([WarmPart.MEDIAN in r for r in rows], dtype=bool)
            if warm.any():
                wrows = [r for r, w in zip(rows, warm, strict=True) if w]
                w_mu = self.warm.predict(self.warm.anchors(wrows),
                                         vectorize(wrows, self.warm.index))
                mu, lo, hi = mu.copy(), lo.copy(), hi.copy()
                mu[warm] = w_mu
                lo[warm] = w_mu + self.warm.offset_lo
                hi[warm] = w_mu + self.warm.offset_hi
        return mu, lo, hi

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        return _to_runtimes(*self.predict_log(texts))

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        arrays = self.model.to_arrays("p50_")
        if self.lo_model is not None:
            arrays.update(self.lo_model.to_arrays("p10_"))
        if self.hi_model is not None:
            arrays.update(self.hi_model.to_arrays("p90_"))
        if self.warm is not None:
            arrays.update(self.warm.model.to_arrays("warm_"))
        folder.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(folder / self.ARRAYS, **arrays)
        data = {
            "feature_names": self.feature_names,
            "offset_lo": self.offset_lo,
            "offset_hi": self.offset_hi,
            "quantile_models": self.lo_model is not None,
            "info": self.info,
        }
        if self.warm is not None:
            data["warm"] = self.warm.to_json()
        _write_json(folder / self.FILE, data)

    @classmethod
    def load(cls, folder: str | Path) -> TabularPredictor:
        folder = Path(folder)
        with _reading(folder / cls.FILE):
            d = json.loads((folder / cls.FILE).read_text(encoding="utf-8"))
            names = [str(f) for f in d["feature_names"]]
            offset_lo, offset_hi = float(d["offset_lo"]), float(d["offset_hi"])
            info, warm_json = d.get("info"), d.get("warm")
        with _reading(folder / cls.ARRAYS):
            with np.load(folder / cls.ARRAYS, allow_pickle=False) as a:
                model = TreeEnsemble.from_arrays(a, "p50_")
                lo = TreeEnsemble.from_arrays(a, "p10_") if "p10_roots" in a else None
                hi = TreeEnsemble.from_arrays(a, "p90_") if "p90_roots" in a else None
                warm_model = (TreeEnsemble.from_arrays(a, "warm_")
                              if warm_json is not None and "warm_roots" in a else None)
            for prefix, trees in (("p50_", model), ("p10_", lo), ("p90_", hi)):
                if trees is not None:
                    trees.check(len(names), prefix)
        with _reading(folder / cls.FILE):
            warm = WarmPart.from_json(warm_json, warm_model) if warm_model is not None else None
        if warm is not None:
            with _reading(folder / cls.ARRAYS):
                warm.model.check(len(warm.feature_names), "warm_")
        return cls(names, model, offset_lo, offset_hi, lo, hi, info, warm)


class WarmPart:
    """The history-anchored part of :class:`TabularPredictor`: its own feature names, a
    tree model of ``ln runtime - anchor`` and log-space p10/p90 offsets. ``anchor``
    (:data:`ANCHORS`, features of :mod:`laser_ci.predictors.features`): ln of the history
    block's median, or of its ``recent`` median (the median where a text has no
    ``recent=`` field)."""

    MEDIAN = "history_median_log"
    ANCHORS = (MEDIAN, "history_recent_log")

    def __init__(self, feature_names: Sequence[str], model: TreeEnsemble,
                 offset_lo: float = 0.0, offset_hi: float = 0.0,
                 info: dict[str, Any] | None = None, anchor: str = MEDIAN) -> None:
        if anchor not in self.ANCHORS:
            raise ValueError(f"tabular: unknown warm anchor {anchor!r}")
        self.feature_names = list(feature_names)
        self.index = {f: i for i, f in enumerate(self.feature_names)}
        self.model = model
        self.offset_lo, self.offset_hi = offset_lo, offset_hi
        self.info = dict(info or {})
        self.anchor = anchor

    def anchors(self, rows: Sequence[dict[str, float]]) -> list[float]:
        """Each feature row's anchor (every row has a history median)."""
        return self.anchor_values(rows, self.anchor)

    @classmethod
    def anchor_values(cls, rows: Sequence[dict[str, float]], anchor: str) -> list[float]:
        return [r.get(anchor, r[cls.MEDIAN]) for r in rows]

    def predict(self, anchors: Sequence[float], X: np.ndarray) -> np.ndarray:
        return np.asarray(anchors, dtype=np.float64) + self.model.predict(X)

    def to_json(self) -> dict[str, Any]:
        return {"feature_names": self.feature_names, "anchor": self.anchor,
                "offset_lo": self.offset_lo, "offset_hi": self.offset_hi, "info": self.info}

    @classmethod
    def from_json(cls, d: dict[str, Any], model: TreeEnsemble) -> WarmPart:
        return cls(d["feature_names"], model, float(d["offset_lo"]), float(d["offset_hi"]),
                   d.get("info"), str(d.get("anchor", cls.MEDIAN)))


def vectorize(rows: Sequence[dict[str, float]], index: dict[str, int]) -> np.ndarray:
    """Dense matrix of feature dicts; names not in ``index`` are dropped, absent ones are 0."""
    X = np.zeros((len(rows), len(index)), dtype=np.float64)
    for i, row in enumerate(rows):
        for k, v in row.items():
            j = index.get(k)
            if j is not None:
                X[i, j] = v
    return X


# --- text: TF-IDF + linear model ----------------------------------------------------------

_TOKEN = re.compile(r"[a-z][a-z0-9_+#.-]*[a-z0-9+#]|[a-z]|[0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (keeps ``setup-java``, ``ubuntu-latest``, ``c++``)."""
    return _TOKEN.findall(text.lower())


def analyze(text: str, ngram_max: int = 2) -> list[str]:
    """Terms of a text: tokens and ``ngram_max``-grams of consecutive tokens in a line."""
    terms: list[str] = []
    for line in text.lower().splitlines():
        toks = _TOKEN.findall(line)
        terms.extend(toks)
        for n in range(2, ngram_max + 1):
            terms.extend(" ".join(toks[i : i + n]) for i in range(len(toks) - n + 1))
    return terms


def make_analyzer(ngram_max: int) -> Callable[[str], list[str]]:
    return lambda text: analyze(text, ngram_max)


class TextLinearPredictor:
    """TF-IDF (sublinear tf, l2 norm) over the serialized text and a linear model on ln s."""

    name = "text-linear"
    FILE = "text_linear.json"
    ARRAYS = "text_linear.npz"

    def __init__(
        self,
        vocab: Sequence[str],
        idf: np.ndarray,
        coef: np.ndarray,
        intercept: float,
        offset_lo: float,
        offset_hi: float,
        ngram_max: int = 2,
        sublinear_tf: bool = True,
        info: dict[str, Any] | None = None,
        norm: str | None = "l2",
    ) -> None:
        self.norm = norm
        self.vocab = list(vocab)
        self.index = {t: i for i, t in enumerate(self.vocab)}
        self.idf = np.asarray(idf, dtype=np.float64)
        self.coef = np.asarray(coef, dtype=np.float64)
        self.intercept = float(intercept)
        self.offset_lo, self.offset_hi = offset_lo, offset_hi
        self.ngram_max, self.sublinear_tf = ngram_max, sublinear_tf
        self.info = dict(info or {})

    def _score(self, text: str) -> float:
        counts: dict[int, int] = {}
        for term in analyze(text, self.ngram_max):
            j = self.index.get(term)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        if not counts:
            return self.intercept
        idx = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        if self.sublinear_tf:
            tf = 1.0 + np.log(tf)
        w = tf * self.idf[idx]
        if self.norm == "l2":
            norm = math.sqrt(float(np.dot(w, w)))
            if norm > 0:
                w /= norm
        return self.intercept + float(np.dot(w, self.coef[idx]))

    def predict_log(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mu = np.array([self._score(t) for t in texts], dtype=np.float64)
        return mu, mu + self.offset_lo, mu + self.offset_hi

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        return _to_runtimes(*self.predict_log(texts))

    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        vocab = np.frombuffer("\n".join(self.vocab).encode("utf-8"), dtype=np.uint8)
        np.savez_compressed(
            folder / self.ARRAYS,
            vocab=vocab,
            idf=self.idf.astype(np.float32),
            coef=self.coef.astype(np.float32),
        )
        _write_json(
            folder / self.FILE,
            {
                "intercept": self.intercept,
                "offset_lo": self.offset_lo,
                "offset_hi": self.offset_hi,
                "ngram_max": self.ngram_max,
                "sublinear_tf": self.sublinear_tf,
                "norm": self.norm,
                "n_terms": len(self.vocab),
                "info": self.info,
            },
        )

    @classmethod
    def load(cls, folder: str | Path) -> TextLinearPredictor:
        folder = Path(folder)
        with _reading(folder / cls.FILE):
            d = json.loads((folder / cls.FILE).read_text(encoding="utf-8"))
            intercept, offset_lo = float(d["intercept"]), float(d["offset_lo"])
            offset_hi, ngram_max = float(d["offset_hi"]), int(d.get("ngram_max", 2))
        with _reading(folder / cls.ARRAYS):
            with np.load(folder / cls.ARRAYS, allow_pickle=False) as a:
                raw = a["vocab"].tobytes().decode("utf-8")
                vocab = raw.split("\n") if raw else []
                idf, coef = a["idf"], a["coef"]
            if not len(idf) == len(coef) == len(vocab):
                raise ValueError(f"{len(vocab)} terms, {len(idf)} idf weights and "
                                 f"{len(coef)} coefficients")
        return cls(
            vocab, idf, coef, intercept, offset_lo, offset_hi, ngram_max,
            bool(d.get("sublinear_tf", True)), d.get("info"), d.get("norm", "l2"),
        )  # fmt: skip


# --- history median -----------------------------------------------------------------------

class HistoryMedianPredictor:
    """What CI peers do: predict the median of the earlier runs, read from the text's
    history block (``median=``: the last 20 runs). The p10-p90 band is the history's own
    p10/p90, widened by log-space offsets calibrated on the training repositories' warm
    examples. A text without history (``history: none``) goes to ``fallback``, the
    cold-start predictor (``tabular`` when shipped)."""

    name = "history-median"
    FILE = "history_median.json"
    FIELD = "median"  # the history line's figure it predicts (laser_ci.text.history)

    def __init__(self, fallback: Any, offset_lo: float = 0.0, offset_hi: float = 0.0,
                 fallback_name: str | None = None, info: dict[str, Any] | None = None) -> None:
        self.fallback = fallback
        self.fallback_name = fallback_name or getattr(fallback, "name", "median")
        self.offset_lo, self.offset_hi = offset_lo, offset_hi
        self.info = dict(info or {})

    @classmethod
    def history_log(cls, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                        np.ndarray]:
        """(has history, ln :data:`FIELD`, ln p10, ln p90) of each text (0 where no history;
        the median where a line lacks the field)."""
        n = len(texts)
        warm = np.zeros(n, dtype=bool)
        mu, lo, hi = np.zeros(n), np.zeros(n), np.zeros(n)
        for i, text in enumerate(texts):
            h = parse_history(text)
            if h is None:
                continue
            warm[i] = True
            m = h[anchor_field(h, cls.FIELD)]
            mu[i] = math.log(max(m, 1.0))
            lo[i] = math.log(max(min(h.get("p10", m), m), 1.0))
            hi[i] = math.log(max(h.get("p90", m), m, 1.0))
        return warm, mu, lo, hi

    def predict(self, texts: Sequence[str]) -> list[Runtime]:
        warm, mu, lo, hi = self.history_log(texts)
        out: list[Runtime | None] = [None] * len(texts)
        idx = np.flatnonzero(warm)
        for i, r in zip(idx, _to_runtimes(mu[idx], lo[idx] + self.offset_lo,
                                          hi[idx] + self.offset_hi), strict=True):
            out[i] = r
        cold = [i for i in range(len(texts)) if not warm[i]]
        if cold:
            if self.fallback is None:
                raise ValueError(f"{self.name}: a text without history and no fallback")
            for i, r in zip(cold, self.fallback.predict([texts[i] for i in cold]), strict=True):
                out[i] = r
        return out  # type: ignore[return-value]

    def save(self, folder: str | Path) -> None:
        _write_json(Path(folder) / self.FILE, {
            "offset_lo": self.offset_lo, "offset_hi": self.offset_hi,
            "fallback": self.fallback_name, "info": self.info,
        })

    @classmethod
    def load(cls, folder: str | Path, loaded: dict[str, Any] | None = None) -> HistoryMedianPredictor:
        """``loaded``: baselines already loaded from ``folder`` (the fallback is looked up
        there first, else loaded from the folder)."""
        folder = Path(folder)
        with _reading(folder / cls.FILE):
            d = json.loads((folder / cls.FILE).read_text(encoding="utf-8"))
            name = str(d.get("fallback") or "median")
            offset_lo, offset_hi = float(d["offset_lo"]), float(d["offset_hi"])
        fallback = (loaded or {}).get(name)
        if fallback is None:
            cls_ = BASELINES.get(name)
            if cls_ is None or cls_ is cls or not (folder / cls_.FILE).is_file():
                raise ValueError(f"{cls.name}: fallback {name!r} not in {folder}")
            fallback = cls_.load(folder)
        return cls(fallback, offset_lo, offset_hi, name, d.get("info"))


class HistoryRecentPredictor(HistoryMedianPredictor):
    """:class:`HistoryMedianPredictor` on the history's ``recent`` median (the last 3 runs,
    :data:`laser_ci.text.history.RECENT_RUNS`) instead of the last 20 runs' median."""

    name = "history-recent"
    FILE = "history_recent.json"
    FIELD = "recent"


# --- loading ------------------------------------------------------------------------------

BASELINES: dict[str, type] = {
    MedianPredictor.name: MedianPredictor,
    TabularPredictor.name: TabularPredictor,
    TextLinearPredictor.name: TextLinearPredictor,
    HistoryMedianPredictor.name: HistoryMedianPredictor,  # after its fallback
    HistoryRecentPredictor.name: HistoryRecentPredictor,
}


def load_baselines(folder: str | Path) -> dict[str, Any]:
    """Every baseline whose files are in ``folder``, by name (missing ones are skipped)."""
    folder = Path(folder)
    out: dict[str, Any] = {}
    for name, cls in BASELINES.items():
        if (folder / cls.FILE).is_file():
            out[name] = (cls.load(folder, out) if issubclass(cls, HistoryMedianPredictor)
                         else cls.load(folder))
    return out


# --- training (needs the ``train`` extra: lightgbm, scikit-learn) -------------------------


def interval_offsets(residuals: Sequence[float], lo: float = 0.1, hi: float = 0.9) -> tuple[float, float]:
    """Log-space offsets (q_lo, q_hi) of residuals ``y - prediction``."""
    r = np.asarray(residuals, dtype=np.float64)
    if not len(r):
        return 0.0, 0.0
    q_lo, q_hi = np.quantile(r, [lo, hi])
    return float(min(q_lo, 0.0)), float(max(q_hi, 0.0))


def bag_vocabulary(
    rows: Sequence[dict[str, float]], groups: Sequence[str], min_groups: int
) -> list[str]:
    """Feature names: every fixed (unprefixed) name, plus bag names (``prefix:...``) seen
    in at least ``min_groups`` distinct groups (repositories), sorted."""
    seen: dict[str, set[str]] = {}
    fixed: set[str] = set()
    for row, g in zip(rows, groups, strict=True):
        for k in row:
            if ":" in k:
                seen.setdefault(k, set()).add(g)
            else:
                fixed.add(k)
    return sorted(fixed) + sorted(k for k, gs in seen.items() if len(gs) >= min_groups)


def fit_lightgbm(
    X: np.ndarray,
    y: np.ndarray,
    params: dict[str, Any],
    num_rounds: int,
    weights: np.ndarray | None = None,
    feature_names: Sequence[str] | None = None,
) -> TreeEnsemble:
    import lightgbm as lgb

    p = {"verbose": -1, "num_threads": 1, "seed": 0, "deterministic": True, **params}
    if p.get("bagging_freq") and len(y) * float(p.get("bagging_fraction", 1.0)) < 2:
        p["bagging_freq"] = 0  # too few rows to draw a bag from (only in tiny folders)
    ds = lgb.Dataset(X, y, weight=weights, free_raw_data=True,
                     feature_name=list(feature_names) if feature_names else "auto")
    booster = lgb.train(p, ds, num_boost_round=num_rounds)
    trees = TreeEnsemble.from_lightgbm(booster.dump_model())
    check = X[: min(len(X), 256)]
    diff = np.max(np.abs(trees.predict(check) - booster.predict(check)), initial=0.0)
    if diff > 1e-6:  # the numpy evaluator must reproduce LightGBM exactly
        raise AssertionError(f"numpy trees differ from LightGBM by {diff}")
    return trees


def fit_text_linear(
    texts: Sequence[str],
    y: np.ndarray,
    *,
    alpha: float = 1.0,
    ngram_max: int = 2,
    min_df: int = 2,
    max_features: int | None = 50000,
    sublinear_tf: bool = True,
    weights: np.ndarray | None = None,
    groups: Sequence[str] | None = None,
    min_groups: int = 1,
    norm: str | None = "l2",
) -> TextLinearPredictor:
    """TF-IDF (sklearn, with :func:`analyze` as analyzer) + ridge regression on ln seconds.

    With ``groups`` (the repository of each text), terms must occur in at least
    ``min_groups`` repositories (and ``min_df`` texts); the ``max_features`` most frequent
    of those are kept.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import Ridge

    analyzer = make_analyzer(ngram_max)
    vocabulary = None
    if groups is not None and min_groups > 1:
        repos: dict[str, set[str]] = {}
        docs: dict[str, int] = {}
        for text, g in zip(texts, groups, strict=True):
            for term in set(analyzer(text)):
                repos.setdefault(term, set()).add(g)
                docs[term] = docs.get(term, 0) + 1
        keep = [t for t, gs in repos.items() if len(gs) >= min_groups and docs[t] >= min_df]
        keep.sort(key=lambda t: (-docs[t], t))
        vocabulary = sorted(keep[:max_features] if max_features else keep) or None
        if vocabulary is None:  # no term in enough repositories (tiny folders): every term
            min_df = 1
    vec = TfidfVectorizer(
        analyzer=analyzer, min_df=1 if vocabulary else min_df,
        max_features=None if vocabulary else max_features, vocabulary=vocabulary,
        sublinear_tf=sublinear_tf, norm=norm, smooth_idf=True, dtype=np.float64,
    )
    X = vec.fit_transform(texts)
    model = Ridge(alpha=alpha, fit_intercept=True, solver="auto", random_state=0)
    model.fit(X, y, sample_weight=weights)
    vocab = [""] * len(vec.vocabulary_)
    for term, j in vec.vocabulary_.items():
        vocab[j] = term
    intercept = float(np.ravel(model.intercept_)[0])
    return TextLinearPredictor(
        vocab, vec.idf_, np.ravel(model.coef_), intercept, 0.0, 0.0,
        ngram_max=ngram_max, sublinear_tf=sublinear_tf,
        info={"alpha": alpha, "min_df": min_df, "max_features": max_features,
              "min_groups": min_groups},
        norm=norm,
    )  # fmt: skip
