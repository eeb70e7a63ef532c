"""The language model's band calibration (laser_ci.training.bands) and its band scales at
inference (laser_ci.predictors.lm.scaled_band): table tests of edge values."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from laser_ci.predictors.base import Runtime
from laser_ci.predictors.lm import scaled_band
from laser_ci.training.bands import band_scale, write_band_scale
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


def test_model_applies_its_band_scales_by_regime(tmp_path: Path) -> None:
    """laser.json decoding.band_scale: warm texts (a history block) take the warm scale,
    the others the cold one; the medians do not move."""
    from laser_ci.predictors.lm import LaserModel

    folder = tmp_path / "lm"
    shutil.copytree(SHIPPED, folder)
    write_band_scale(folder, {"warm": 0.5, "cold": 2.0}, examples=7)
    decoding = json.loads((folder / "laser.json").read_text())["decoding"]
    assert decoding["band_scale"] == {"warm": 0.5, "cold": 2.0}
    assert decoding["band_calibration"] == {"target": 0.8, "examples": 7}
    cold = "task: job\njob: build\nhistory: none\nruns-on: ubuntu-latest\nsteps:\n- run: make\n"
    warm = cold.replace("history: none", "history: n=5 median=1.20e+02 p10=1.00e+02 "
                        "p90=1.50e+02 latest=1.10e+02\nhistory-config: unchanged")
    scaled = LaserModel(folder).predict([warm, cold])
    raw = LaserModel(folder, band_scale={}).predict([warm, cold])
    for r, q, s in zip(scaled, raw, (0.5, 2.0), strict=True):
        assert r.p50 == q.p50
        # scaled in log space around the median, then kept within 1 s .. 9.99e5 s
        assert r.p90 == pytest.approx(min(q.p50 * (q.p90 / q.p50) ** s, 9.99e5))
        assert r.p10 == pytest.approx(max(q.p50 * (q.p10 / q.p50) ** s, 1.0))
    assert scaled[0].p90 < raw[0].p90 and scaled[1].p90 > raw[1].p90


def test_predictions_stay_within_the_stated_range() -> None:
    from laser_ci.predictors.lm import _in_range

    assert _in_range(Runtime(0.2, 0.5, 3.0)) == Runtime(1.0, 1.0, 3.0)
    assert _in_range(Runtime(10.0, 2e6, 3e6)) == Runtime(10.0, 9.99e5, 9.99e5)
    assert _in_range(BAND) == BAND
