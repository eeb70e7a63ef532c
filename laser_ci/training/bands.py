"""The language model's p10-p90 band, calibrated on examples it was not trained on.

The samples' p10 and p90 are the model's own uncertainty; held out, they may hold the truth
more or less often than 80% (cross-validated, the warm band over-covered: 86.5% at 4.6x).
A *band scale* ``s`` per regime stretches or shrinks the band in log space around the
median: ``p10' = p50 * (p10 / p50) ** s`` and ``p90' = p50 * (p90 / p50) ** s``
(:func:`laser_ci.predictors.lm.scaled_band`); the median, and so every log-MAE, is
unchanged. The scale of a regime is the smallest that puts ``target`` of the calibration
examples inside their bands (:func:`band_scale`): each example needs
``log(truth / p50) / log(p90 / p50)`` above the median, ``log(p50 / truth) /
log(p50 / p10)`` below it, and the scale is the k-th smallest need, k = ceil(target * n).

Before the band, optionally, a *shrink* ``a`` per regime moves the median toward the number
the prompt's output is relative to (the history median, or recent median, warm; the
reference model's p50 cold): ``p50' = ref * (p50 / ref) ** a``
(:func:`laser_ci.predictors.lm.shrunk`, the band moved with it). ``a = 1`` is the model's
own median, ``a = 0`` the reference itself. The
shrink of a regime (:func:`shrink_factor`) is the ``a`` in [0, 1] with the least log-MAE on
the calibration examples: ``sum |d - a c|`` with ``d = log(truth / ref)`` and ``c = log(p50 /
ref)`` is least at the weighted median of ``d / c`` with weights ``|c|``. It says how much
of the model's correction to its reference holds on texts it was not trained on. The band
scales are then fit on the shrunk predictions.

Regimes (:data:`laser_ci.predictors.lm.BAND_REGIMES`): ``warm``, texts with a history block
whose configuration did not change since the latest earlier run, ``changed``, texts whose
configuration did (``history-config: changed``), and ``cold``, texts without a block.
``changed`` with fewer than :data:`MIN_EXAMPLES` calibration examples is left out and takes
``warm``'s values; a regime without usable examples keeps 1. The calibration examples are a fold's val part in
``laser-ci eval --folds`` (the shipped recipe: bands and shrinks per regime) and fold 0 for a
shipped model (the examples that pick its epoch), never the examples it is scored on; the
values go to ``laser.json`` ``decoding.band_scale`` and ``decoding.shrink``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from laser_ci.predictors.base import Runtime

DEFAULT_TARGET = 0.8
MIN_EXAMPLES = 30  # the fewest calibration examples ``changed``'s own values are fit on


def band_scale(preds: Sequence[Runtime], truth: Sequence[float],
               target: float = DEFAULT_TARGET) -> float | None:
    """The smallest scale whose bands hold ``target`` of ``truth`` (None without examples
    that have a band on the side their truth lies)."""
    need = []
    for r, y in zip(preds, truth, strict=True):
        if not (y > 0 and r.p50 > 0 and r.p10 > 0 and r.p90 > 0):
            continue
        up, down = math.log(r.p90 / r.p50), math.log(r.p50 / r.p10)
        d = math.log(y / r.p50)
        if d == 0:
            need.append(0.0)
        elif d > 0:
            need.append(d / up if up > 0 else math.inf)
        else:
            need.append(-d / down if down > 0 else math.inf)
    if not need:
        return None
    k = max(1, math.ceil(target * len(need) - 1e-9))  # the fewest examples that make target
    s = float(np.sort(np.asarray(need))[k - 1])
    return s if math.isfinite(s) else None


def shrink_factor(preds: Sequence[Runtime], refs: Sequence[float | None],
                  truth: Sequence[float]) -> float | None:
    """The ``a`` in [0, 1] whose shrunk medians have the least log-MAE on ``truth`` (None
    without an example whose median differs from its reference)."""
    c, d = [], []
    for r, ref, y in zip(preds, refs, truth, strict=True):
        if ref is None or not (ref > 0 and r.p50 > 0 and y > 0):
            continue
        c.append(math.log(r.p50 / ref))
        d.append(math.log(y / ref))
    cs, ds = np.asarray(c), np.asarray(d)
    keep = cs != 0
    if not keep.any():
        return None
    ratio, weight = ds[keep] / cs[keep], np.abs(cs[keep])
    order = np.argsort(ratio, kind="stable")
    cum = np.cumsum(weight[order])
    a = float(ratio[order][np.searchsorted(cum, cum[-1] / 2)])  # the weighted median
    return min(max(a, 0.0), 1.0)


@dataclass
class Regime:
    """A regime's calibration examples: raw predictions (:meth:`laser_ci.predictors.lm.
    LaserModel.predict_raw`), their references and the truths."""

    preds: list[Runtime] = field(default_factory=list)
    refs: list[float | None] = field(default_factory=list)
    truth: list[float] = field(default_factory=list)


@dataclass
class Calibration:
    """What :func:`fit` found: ``{regime: value}`` for the regimes it could fit."""

    band_scale: dict[str, float]
    shrink: dict[str, float]


def regime_predictions(model: Any, examples: Sequence[Any]) -> dict[str, Regime]:
    """``{regime: Regime}`` of ``model`` on labeled ``examples``
    (:class:`~laser_ci.training.example.Example`): ``warm`` and ``changed`` from each
    example's text with history (those that have one), ``cold`` from every example's cold
    text."""
    from laser_ci.predictors.lm import BAND_REGIMES, text_regime

    warm = [e for e in examples if e.text_warm is not None and e.runtime_s > 0]
    cold = [e for e in examples if e.runtime_s > 0]
    texts = [e.text_warm for e in warm] + [e.text for e in cold]
    out = {name: Regime() for name in BAND_REGIMES}
    for text, e, (raw, ref) in zip(texts, warm + cold, model.predict_raw(texts), strict=True):
        reg = out[text_regime(text)]
        reg.preds.append(raw)
        reg.refs.append(ref)
        reg.truth.append(e.runtime_s)
    return out


def fit(by_regime: dict[str, Regime], target: float = DEFAULT_TARGET, *,
        shrink: bool = False) -> Calibration:
    """Each regime's shrink (with ``shrink``) and then its band scale on the shrunk
    predictions; ``changed`` with fewer than :data:`MIN_EXAMPLES` examples is left out (it
    falls back to ``warm``'s, :func:`laser_ci.predictors.lm.regime_values`)."""
    from laser_ci.predictors.lm import shrunk

    cal = Calibration({}, {})
    for name, reg in by_regime.items():
        if name == "changed" and len(reg.truth) < MIN_EXAMPLES:
            continue
        a = shrink_factor(reg.preds, reg.refs, reg.truth) if shrink else None
        preds = reg.preds
        if a is not None:
            cal.shrink[name] = round(a, 4)
            preds = [shrunk(r, ref, cal.shrink[name]) for r, ref in zip(preds, reg.refs,
                                                                          strict=True)]
        s = band_scale(preds, reg.truth, target)
        if s is not None:
            cal.band_scale[name] = round(s, 4)
    return cal


def calibrate(model: Any, examples: Sequence[Any], target: float = DEFAULT_TARGET, *,
              shrink: bool = False) -> Calibration:
    """:func:`fit` for ``model`` (a :class:`~laser_ci.predictors.lm.LaserModel`; its own
    shrink and band scales are not used) on labeled ``examples``."""
    return fit(regime_predictions(model, examples), target, shrink=shrink)


def apply(model: Any, cal: Calibration) -> None:
    """Set ``cal`` on ``model`` as :class:`~laser_ci.predictors.lm.LaserModel` reads it from
    ``laser.json``."""
    from laser_ci.predictors.lm import band_scales, shrinks

    model.band_scale = band_scales(cal.band_scale)
    model.shrink = shrinks(cal.shrink)


def write_calibration(model_dir: str | Path, cal: Calibration, *, examples: int,
                      target: float = DEFAULT_TARGET) -> None:
    """Store ``cal`` in ``model_dir``'s ``laser.json`` (``decoding.band_scale``,
    ``decoding.shrink``; none when not fit), with how it was made
    (``decoding.band_calibration``)."""
    from laser_ci.predictors.lm import CONFIG_NAME

    path = Path(model_dir) / CONFIG_NAME
    config = json.loads(path.read_text(encoding="utf-8"))
    decoding = config.setdefault("decoding", {})
    decoding["band_scale"] = cal.band_scale
    if cal.shrink:
        decoding["shrink"] = cal.shrink
    else:
        decoding.pop("shrink", None)
    decoding["band_calibration"] = {"target": target, "examples": examples,
                                    "min_examples": MIN_EXAMPLES}
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
