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

Regimes (:data:`laser_ci.predictors.lm.BAND_REGIMES`): ``warm``, texts with a history block,
and ``cold``, texts without. The calibration examples are a fold's val part in
``laser-ci eval --folds`` (``--lm-calibrate-bands``) and fold 0 for a shipped model (the
examples that pick its epoch), never the examples it is scored on; the scales go to
``laser.json`` ``decoding.band_scale``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from laser_ci.predictors.base import Runtime

DEFAULT_TARGET = 0.8


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


def regime_predictions(model: Any, examples: Sequence[Any],
                       ) -> dict[str, tuple[list[Runtime], list[float]]]:
    """``{regime: (predictions, truths)}`` of ``model`` on labeled ``examples``
    (:class:`~laser_ci.training.example.Example`): ``warm`` from each example's text with
    history (those that have one), ``cold`` from every example's cold text."""
    warm = [e for e in examples if e.text_warm is not None and e.runtime_s > 0]
    cold = [e for e in examples if e.runtime_s > 0]
    preds = model.predict([e.text_warm for e in warm] + [e.text for e in cold])
    return {"warm": (preds[: len(warm)], [e.runtime_s for e in warm]),
            "cold": (preds[len(warm):], [e.runtime_s for e in cold])}


def scales(by_regime: dict[str, tuple[list[Runtime], list[float]]],
           target: float = DEFAULT_TARGET) -> dict[str, float]:
    """The band scale of each regime of :func:`regime_predictions` (a regime without
    usable examples is left out: scale 1)."""
    out: dict[str, float] = {}
    for name, (preds, truth) in by_regime.items():
        s = band_scale(preds, truth, target)
        if s is not None:
            out[name] = round(s, 4)
    return out


def calibrate(model: Any, examples: Sequence[Any], target: float = DEFAULT_TARGET,
              ) -> dict[str, float]:
    """``{"warm": s, "cold": s}`` for ``model`` (a :class:`~laser_ci.predictors.lm.LaserModel`
    without band scales) on labeled ``examples``."""
    return scales(regime_predictions(model, examples), target)


def write_band_scale(model_dir: str | Path, scales: dict[str, float], *, examples: int,
                     target: float = DEFAULT_TARGET) -> None:
    """Store ``scales`` in ``model_dir``'s ``laser.json`` (``decoding.band_scale``), with how
    they were made (``decoding.band_calibration``)."""
    from laser_ci.predictors.lm import CONFIG_NAME

    path = Path(model_dir) / CONFIG_NAME
    config = json.loads(path.read_text(encoding="utf-8"))
    config.setdefault("decoding", {})["band_scale"] = scales
    config["decoding"]["band_calibration"] = {"target": target, "examples": examples}
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
