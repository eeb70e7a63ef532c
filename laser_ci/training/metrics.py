"""Runtime prediction metrics (numpy only). All runtimes are in seconds, clipped to >= 1 s.

- ``log_mae``: mean |ln pred - ln true|. exp(log_mae) is the typical multiplicative error.
- ``mae_min``: mean |pred - true| in minutes.
- ``spearman``: Spearman rank correlation (average ranks for ties); NaN for n < 2 or a
  constant input.
- ``within_2x``: share of predictions in [true / 2, true * 2].
- ``coverage``: share of truths within [p10, p90] (only for predictors that give intervals;
  a well calibrated p10-p90 band covers about 0.8).

Bands are judged on calibration and sharpness together (``compute(..., bands=True)``, as
``laser-ci eval --folds K`` reports them): ``coverage``; ``width``, the median over
examples of p90 / p10 (how many times longer the band's top is than its bottom: 1 is a
point, 10 a decade); and ``interval_score``, the interval score of the central 80% band in
natural-log seconds, averaged over examples (lower is better)::

    IS = (ln u - ln l) + (2 / 0.2) (ln l - ln y) [y < l] + (2 / 0.2) (ln y - ln u) [y > u]

with l = p10, u = p90 and y the truth: the band's log width, plus ten times how far the
truth falls outside it. A band that is too narrow pays for its misses, one that is too
wide for its width, so the score is lowest for the sharpest band that still covers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from laser_ci.predictors.base import Runtime

METRICS = ("n", "log_mae", "mae_min", "spearman", "within_2x", "coverage")
BAND_METRICS = ("width", "interval_score")
BAND_ALPHA = 0.2  # p10-p90: the central 80% interval


def _clip(x: Sequence[float] | np.ndarray, floor: float = 1.0) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    return np.maximum(np.nan_to_num(a, nan=floor, posinf=1e9, neginf=floor), floor)


def log_errors(pred: Sequence[float], true: Sequence[float], floor: float = 1.0) -> np.ndarray:
    """|ln pred - ln true| per example: what ``log_mae`` averages; values under ``floor``
    count as ``floor`` (1 second for runtimes)."""
    return np.abs(np.log(_clip(pred, floor)) - np.log(_clip(true, floor)))


def log_mae(pred: Sequence[float], true: Sequence[float], floor: float = 1.0) -> float:
    return float(np.mean(log_errors(pred, true, floor))) if len(true) else math.nan


def paired_log_mae_diff(
    pred_a: Sequence[float], pred_b: Sequence[float], true: Sequence[float],
    groups: Sequence[str], n_boot: int = 2000, seed: int = 0,
) -> dict[str, float]:
    """log-MAE of ``pred_a`` minus that of ``pred_b`` on the same examples (negative: ``a``
    is better), with a 95% interval from resampling whole ``groups`` (repositories: their
    runs are not independent). ``{"diff", "lo", "hi", "groups"}``."""
    return paired_error_diff(log_errors(pred_a, true), log_errors(pred_b, true), groups,
                             n_boot, seed)


def paired_error_diff(err_a: Sequence[float], err_b: Sequence[float], groups: Sequence[str],
                      n_boot: int = 2000, seed: int = 0) -> dict[str, float]:
    """:func:`paired_log_mae_diff` from the examples' log errors (:func:`log_errors`).
    Fewer than two groups give no interval (``lo``, ``hi`` NaN): resampling one repository
    draws the same difference every time, a zero-width interval that would read as a lead."""
    d = np.asarray(err_a, dtype=np.float64) - np.asarray(err_b, dtype=np.float64)
    if not len(d):
        return {"diff": math.nan, "lo": math.nan, "hi": math.nan, "groups": 0}
    names, idx = np.unique(np.asarray(groups), return_inverse=True)
    if len(names) < 2:
        return {"diff": float(d.mean()), "lo": math.nan, "hi": math.nan,
                "groups": len(names)}
    sums = np.bincount(idx, weights=d, minlength=len(names))
    counts = np.bincount(idx, minlength=len(names)).astype(np.float64)
    pick = np.random.default_rng(seed).integers(0, len(names), (n_boot, len(names)))
    boot = sums[pick].sum(axis=1) / counts[pick].sum(axis=1)
    lo, hi = np.quantile(boot, [0.025, 0.975])
    return {"diff": float(d.mean()), "lo": float(lo), "hi": float(hi), "groups": len(names)}


def is_number(x: Any) -> bool:
    """A finite int or float: a figure a report can print (not None, NaN or a string)."""
    return isinstance(x, (int, float)) and math.isfinite(x)


def format_diff(d: Mapping[str, float] | None) -> str:
    """A :func:`paired_log_mae_diff` result as ``"+0.012 [-0.003, +0.027]"``; ``"-"`` when
    there is none (no examples, or no result)."""
    if d is None or not all(is_number(d.get(k)) for k in ("diff", "lo", "hi")):
        return "-"
    return f"{d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]"


def paired_diff_text(pred_a: Sequence[float], pred_b: Sequence[float], true: Sequence[float],
                     groups: Sequence[str]) -> str:
    """:func:`paired_log_mae_diff` as :func:`format_diff` writes it."""
    return format_diff(paired_log_mae_diff(pred_a, pred_b, true, groups))


def mae_minutes(pred: Sequence[float], true: Sequence[float]) -> float:
    p, t = _clip(pred), _clip(true)
    return float(np.mean(np.abs(p - t)) / 60.0) if len(t) else math.nan


def rankdata(x: Sequence[float] | np.ndarray) -> np.ndarray:
    """1-based ranks, ties get their average rank (as scipy's ``rankdata``)."""
    a = np.asarray(x, dtype=np.float64)
    n = len(a)
    order = np.argsort(a, kind="mergesort")
    sa = a[order]
    # boundaries of runs of equal values
    new = np.r_[True, sa[1:] != sa[:-1]] if n else np.array([], dtype=bool)
    idx = np.flatnonzero(new)
    ends = np.r_[idx[1:], n]
    avg = (idx + ends + 1) / 2.0  # average of 1-based positions idx+1 .. ends
    ranks_sorted = np.repeat(avg, ends - idx)
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = ranks_sorted
    return ranks


def spearman(pred: Sequence[float], true: Sequence[float]) -> float:
    p, t = np.asarray(pred, dtype=np.float64), np.asarray(true, dtype=np.float64)
    if len(p) < 2:
        return math.nan
    rp, rt = rankdata(p), rankdata(t)
    rp -= rp.mean()
    rt -= rt.mean()
    denom = math.sqrt(float(np.dot(rp, rp)) * float(np.dot(rt, rt)))
    return float(np.dot(rp, rt) / denom) if denom > 0 else math.nan


def within_2x(pred: Sequence[float], true: Sequence[float]) -> float:
    p, t = _clip(pred), _clip(true)
    if not len(t):
        return math.nan
    r = p / t
    return float(np.mean((r >= 0.5) & (r <= 2.0)))


def inside(p10: Sequence[float], p90: Sequence[float], true: Sequence[float]) -> np.ndarray:
    """Per example, whether the truth lies in [p10, p90]: what ``coverage`` averages."""
    lo, hi, t = _clip(p10), _clip(p90), _clip(true)
    return (t >= lo) & (t <= hi)


def coverage(p10: Sequence[float], p90: Sequence[float], true: Sequence[float]) -> float:
    return float(np.mean(inside(p10, p90, true))) if len(true) else math.nan


def width_ratio(p10: Sequence[float], p90: Sequence[float]) -> float:
    """Median over examples of p90 / p10 (both clipped to >= 1 s)."""
    lo, hi = _clip(p10), _clip(p90)
    return float(np.median(hi / lo)) if len(lo) else math.nan


def interval_score_log(lo: np.ndarray, hi: np.ndarray, y: np.ndarray,
                       alpha: float = BAND_ALPHA) -> float:
    """Mean interval score of the central ``1 - alpha`` intervals [``lo``, ``hi``] for
    truths ``y``, everything already in log space (lower is better)."""
    if not len(y):
        return math.nan
    width = hi - lo
    below = np.maximum(lo - y, 0.0)
    above = np.maximum(y - hi, 0.0)
    return float(np.mean(width + (2.0 / alpha) * (below + above)))


def interval_score(p10: Sequence[float], p90: Sequence[float], true: Sequence[float],
                   alpha: float = BAND_ALPHA) -> float:
    """Mean interval score of the [p10, p90] bands in natural-log seconds (module doc)."""
    lo, hi, t = _clip(p10), _clip(p90), _clip(true)
    if not len(t):
        return math.nan
    return interval_score_log(np.log(lo), np.log(hi), np.log(t), alpha)


def has_intervals(preds: Sequence[Runtime]) -> bool:
    """Whether a predictor gave real intervals (not p10 == p50 == p90 everywhere)."""
    return any(r.p10 < r.p50 or r.p90 > r.p50 for r in preds)


def compute(
    preds: Sequence[Runtime], true: Sequence[float], intervals: bool | None = None,
    bands: bool = False,
) -> dict[str, float | int | None]:
    """All metrics for one predictor on one set; ``coverage`` is None without intervals.
    ``bands``: also ``width`` and ``interval_score`` (None without intervals)."""
    if len(preds) != len(true):
        raise ValueError(f"{len(preds)} predictions for {len(true)} truths")
    p50 = [r.p50 for r in preds]
    out: dict[str, float | int | None] = {
        "n": len(true),
        "log_mae": log_mae(p50, true),
        "mae_min": mae_minutes(p50, true),
        "spearman": spearman(p50, true),
        "within_2x": within_2x(p50, true),
        "coverage": None,
    }
    if intervals is None:
        intervals = has_intervals(preds)
    if bands:
        out.update(dict.fromkeys(BAND_METRICS))
    if intervals and len(true):
        p10, p90 = [r.p10 for r in preds], [r.p90 for r in preds]
        out["coverage"] = coverage(p10, p90, true)
        if bands:
            out["width"] = width_ratio(p10, p90)
            out["interval_score"] = interval_score(p10, p90, true)
    return out
