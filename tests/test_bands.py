"""The language model's calibration (laser_ci.training.bands: band scales and shrinks) and
how it applies them at inference (laser_ci.predictors.lm.scaled_band, shrunk, text_regime):
table tests of edge values."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from laser_ci.predictors.base import Runtime
from laser_ci.predictors.lm import regime_values, scaled_band, shrunk, text_regime
from laser_ci.training.bands import (
    MIN_EXAMPLES,
    Calibration,
    Regime,
    band_scale,
    fit,
    shrink_factor,
    write_calibration,
)
from laser_ci.training.metrics import coverage

SHIPPED = Path(__file__).resolve().parent.parent / "model" / "lm"
BAND = Runtime(50.0, 100.0, 200.0)


@pytest.mark.parametrize(
    ("truth", "target", "expected"),
    [
        ([100.0], 0.8, 0.0),  # at the median: no band needed
        ([200.0], 0.8, 1.0),  # at p90: the band as it is
        ([400.0, 200.0, 100.0, 50.0, 25.0], 0.8, 2.0),  # needs 2, 1, 0, 1, 2
        ([400.0, 200.0, 100.0, 50.0, 25.0], 0.5, 1.0),
        ([141.42135623730952], 0.8, 0.5),  # half way to p90 in log space
        ([70.71067811865476], 0.8, 0.5),  # half way to p10
        ([], 0.8, None),
        ([-1.0, 0.0], 0.8, None),  # no usable truth
    ],
)
def test_band_scale(truth: list[float], target: float, expected: float | None) -> None:
    got = band_scale([BAND] * len(truth), truth, target)
    assert got == (None if expected is None else pytest.approx(expected))


def test_band_scale_without_a_side_is_none() -> None:
    # every truth above a band with no upper side: no finite scale holds them
    assert band_scale([Runtime(50.0, 100.0, 100.0)] * 3, [150.0] * 3) is None
    # ...unless enough lie where the band is
    assert band_scale([Runtime(50.0, 100.0, 100.0)] * 5, [150.0, 50, 50, 50, 50], 0.8) == 1.0


def test_scaled_bands_hold_the_target() -> None:
    truth = [100.0 * 2.0 ** (k / 10) for k in range(-40, 41)]
    preds = [BAND] * len(truth)
    s = band_scale(preds, truth, 0.8)
    assert s is not None
    scaled = [scaled_band(r, s) for r in preds]
    assert coverage([r.p10 for r in scaled], [r.p90 for r in scaled], truth) >= 0.8
    smaller = [scaled_band(r, s * 0.99) for r in preds]
    assert coverage([r.p10 for r in smaller], [r.p90 for r in smaller], truth) < 0.8


@pytest.mark.parametrize(
    ("band", "s", "expected"),
    [
        (BAND, 1.0, BAND),
        (BAND, 0.5, Runtime(100 / math.sqrt(2), 100.0, 100 * math.sqrt(2))),
        (BAND, 2.0, Runtime(25.0, 100.0, 400.0)),
        (BAND, 0.0, Runtime(100.0, 100.0, 100.0)),
        (Runtime(0.0, 100.0, 200.0), 2.0, Runtime(0.0, 100.0, 200.0)),  # unreadable: as is
    ],
)
def test_scaled_band(band: Runtime, s: float, expected: Runtime) -> None:
    got = scaled_band(band, s)
    assert got.p50 == expected.p50
    assert got.p10 == pytest.approx(expected.p10) and got.p90 == pytest.approx(expected.p90)


COLD = "task: job\njob: build\nhistory: none\nruns-on: ubuntu-latest\nsteps:\n- run: make\n"
WARM = COLD.replace("history: none", "history: n=5 median=1.20e+02 p10=1.00e+02 "
                    "p90=1.50e+02 latest=1.10e+02\nhistory-config: unchanged")
CHANGED = WARM.replace("history-config: unchanged",
                       "history-config: changed +1 -1\n+ run: make all\n- run: make")


@pytest.mark.parametrize(
    ("text", "regime"),
    [
        (COLD, "cold"),
        (WARM, "warm"),
        (CHANGED, "changed"),
        (WARM.replace("unchanged", "unknown"), "warm"),
        (COLD.replace("history: none\n", ""), "cold"),  # no block at all
        # a step that prints the words is not the block's line
        (WARM + "- run: echo 'history-config: changed'\n", "warm"),
    ],
)
def test_text_regime(text: str, regime: str) -> None:
    assert text_regime(text) == regime


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, {"warm": 1.0, "changed": 1.0, "cold": 1.0}),
        # calibrated before the changed regime existed: changed takes warm's
        ({"warm": 0.5, "cold": 2.0}, {"warm": 0.5, "changed": 0.5, "cold": 2.0}),
        ({"changed": 0.7}, {"warm": 1.0, "changed": 0.7, "cold": 1.0}),
        ({"warm": 0.5, "changed": 0.9, "cold": 2.0}, {"warm": 0.5, "changed": 0.9, "cold": 2.0}),
    ],
)
def test_regime_values(values: dict[str, float], expected: dict[str, float]) -> None:
    assert regime_values(values) == expected


@pytest.mark.parametrize(
    ("a", "expected"),
    [
        (1.0, BAND),  # the model's own median
        (0.0, Runtime(25.0, 50.0, 100.0)),  # the reference, the band moved with it
        (0.5, Runtime(50 / math.sqrt(2), 100 / math.sqrt(2), 200 / math.sqrt(2))),
    ],
)
def test_shrunk(a: float, expected: Runtime) -> None:
    got = shrunk(BAND, 50.0, a)
    assert (got.p10, got.p50, got.p90) == pytest.approx((expected.p10, expected.p50,
                                                          expected.p90))


def test_shrunk_without_a_reference_is_unchanged() -> None:
    assert shrunk(BAND, None, 0.0) == BAND
    assert shrunk(BAND, 0.0, 0.0) == BAND
    assert shrunk(Runtime(1.0, 0.0, 2.0), 50.0, 0.5) == Runtime(1.0, 0.0, 2.0)


REF = 100.0


def _at(ratio: float) -> Runtime:
    """A prediction whose median is ``ratio`` times the reference."""
    return Runtime(REF * ratio / 2, REF * ratio, REF * ratio * 2)


@pytest.mark.parametrize(
    ("pred_ratios", "true_ratios", "expected"),
    [
        ([2.0, 0.5], [2.0, 0.5], 1.0),  # every correction held
        ([2.0, 0.5], [1.0, 1.0], 0.0),  # none did: the reference
        ([4.0, 0.25], [2.0, 0.5], 0.5),  # half of each, in log space
        ([2.0, 0.5], [8.0, 0.125], 1.0),  # more than the whole: kept at 1
        ([2.0, 0.5], [0.5, 2.0], 0.0),  # the wrong way: kept at 0
        ([1.0, 1.0], [2.0, 0.5], None),  # no correction to weigh
        # weighted by the size of the correction: the large one decides
        ([8.0, 1.1, 1.1], [8.0, 1.0, 1.0], 1.0),
    ],
)
def test_shrink_factor(pred_ratios: list[float], true_ratios: list[float],
                       expected: float | None) -> None:
    got = shrink_factor([_at(r) for r in pred_ratios], [REF] * len(pred_ratios),
                        [REF * r for r in true_ratios])
    assert got == (None if expected is None else pytest.approx(expected))


def test_shrink_factor_skips_examples_without_a_reference() -> None:
    assert shrink_factor([_at(2.0), _at(4.0)], [None, REF], [REF * 4, REF * 2]) == 0.5


def test_shrink_factor_minimises_the_log_mae() -> None:
    rng = np.random.default_rng(0)
    c = rng.normal(0, 1, 200)
    d = 0.3 * c + rng.normal(0, 0.5, 200)
    preds = [_at(math.exp(x)) for x in c]
    truth = [REF * math.exp(x) for x in d]
    a = shrink_factor(preds, [REF] * 200, truth)
    assert a is not None and 0.1 < a < 0.6

    def loss(b: float) -> float:
        return float(np.mean(np.abs(d - b * c)))
    grid = min(np.linspace(0, 1, 1001), key=loss)
    assert loss(a) <= loss(grid) + 1e-12


def test_fit_shrinks_then_scales_and_skips_a_small_changed_regime() -> None:
    n = MIN_EXAMPLES
    # warm: the model doubles every reference, truth is the reference: shrink 0, then the
    # band (p10 = half the median) must reach the truth at the reference for 80% to fit
    warm = Regime([_at(2.0)] * n, [REF] * n, [REF] * n)
    changed = Regime([_at(2.0)] * (n - 1), [REF] * (n - 1), [REF] * (n - 1))  # too few
    cold = Regime([_at(1.0)] * 3, [REF] * 3, [REF * 2] * 3)  # no correction: no shrink
    cal = fit({"warm": warm, "changed": changed, "cold": cold}, shrink=True)
    assert cal.shrink == {"warm": 0.0}
    assert cal.band_scale == {"warm": 0.0, "cold": 1.0}  # changed falls back to warm's
    enough = Regime(changed.preds + [_at(2.0)], changed.refs + [REF], changed.truth + [REF])
    assert fit({"changed": enough}, shrink=True).shrink == {"changed": 0.0}
    no_shrink = fit({"warm": warm}, shrink=False)
    assert no_shrink.shrink == {} and no_shrink.band_scale == {"warm": 1.0}


def test_model_applies_its_calibration_by_regime(tmp_path: Path) -> None:
    """laser.json decoding.band_scale and decoding.shrink: each text takes its regime's
    values; the band scale moves no median, the shrink moves it toward the reference."""
    from laser_ci.predictors.lm import LaserModel, _in_range

    folder = tmp_path / "lm"
    shutil.copytree(SHIPPED, folder)
    write_calibration(folder, Calibration({"warm": 0.5, "changed": 0.8, "cold": 2.0}, {}),
                      examples=7)
    decoding = json.loads((folder / "laser.json").read_text())["decoding"]
    assert decoding["band_scale"] == {"warm": 0.5, "changed": 0.8, "cold": 2.0}
    assert "shrink" not in decoding
    assert decoding["band_calibration"] == {"target": 0.8, "examples": 7,
                                            "min_examples": MIN_EXAMPLES}
    texts = [WARM, CHANGED, COLD]
    scaled = LaserModel(folder).predict(texts)
    plain = LaserModel(folder, band_scale={}, shrink={})
    raw = plain.predict(texts)
    # 1.0 everywhere: as sampled, within 1 s .. 9.99e5 s
    assert raw == [_in_range(r) for r, _ in plain.predict_raw(texts)]
    for r, q, s in zip(scaled, raw, (0.5, 0.8, 2.0), strict=True):
        assert r.p50 == q.p50
        # scaled in log space around the median, then kept within 1 s .. 9.99e5 s
        assert r.p90 == pytest.approx(min(q.p50 * (q.p90 / q.p50) ** s, 9.99e5))
        assert r.p10 == pytest.approx(max(q.p50 * (q.p10 / q.p50) ** s, 1.0))
    assert scaled[0].p90 < raw[0].p90 and scaled[2].p90 > raw[2].p90

    write_calibration(folder, Calibration({}, {"warm": 0.0, "changed": 0.5, "cold": 0.0}),
                      examples=7)
    shrunk_model = LaserModel(folder)
    refs = [ref for _, ref in shrunk_model.predict_raw(texts)]
    assert refs[0] == pytest.approx(120.0) and refs[1] == pytest.approx(120.0)
    got = shrunk_model.predict(texts)
    assert got[0].p50 == pytest.approx(120.0)  # warm, shrink 0: the history median
    assert got[1].p50 == pytest.approx(math.sqrt(120.0 * raw[1].p50))  # half way, in log
    assert got[2].p50 == pytest.approx(refs[2])  # cold, shrink 0: the reference's p50
    # ... as the prompt's reference line states it (three digits)
    (tab,) = shrunk_model.reference_model.predict([COLD])
    assert refs[2] == pytest.approx(tab.p50, rel=0.01)
    assert refs[2] == pytest.approx(float(f"{tab.p50:.2e}"))


def test_predictions_stay_within_the_stated_range() -> None:
    from laser_ci.predictors.lm import _in_range

    assert _in_range(Runtime(0.2, 0.5, 3.0)) == Runtime(1.0, 1.0, 3.0)
    assert _in_range(Runtime(10.0, 2e6, 3e6)) == Runtime(10.0, 9.99e5, 9.99e5)
    assert _in_range(BAND) == BAND
