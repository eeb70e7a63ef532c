"""Runtime metrics against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from laser_ci.predictors.base import Runtime
from laser_ci.training import metrics


def test_log_mae_clips_to_one_second() -> None:
    assert metrics.log_mae([100.0], [100.0]) == 0.0
    assert metrics.log_mae([200.0, 50.0], [100.0, 100.0]) == pytest.approx(math.log(2))
    # 0 s and 0.2 s both count as 1 s
    assert metrics.log_mae([0.0, 0.2], [1.0, 0.5]) == 0.0
    assert metrics.log_mae([math.e], [0.0]) == pytest.approx(1.0)
    assert math.isnan(metrics.log_mae([], []))


@pytest.mark.parametrize(("x", "expected"), [
    (0, True), (1.5, True), (-2, True), (math.nan, False), (math.inf, False),
    (-math.inf, False), (None, False), ("0.3", False), ([], False),
])
def test_is_number(x: object, expected: bool) -> None:
    assert metrics.is_number(x) is expected


@pytest.mark.parametrize(("d", "text"), [
    ({"diff": -0.0404, "lo": -0.0811, "hi": -0.0086}, "-0.040 [-0.081, -0.009]"),
    ({"diff": 0.0, "lo": -0.0004, "hi": 0.0004}, "+0.000 [-0.000, +0.000]"),
    ({"diff": 1, "lo": 0, "hi": 2}, "+1.000 [+0.000, +2.000]"),
    ({"diff": math.nan, "lo": math.nan, "hi": math.nan, "groups": 0}, "-"),
    ({"diff": 0.1, "lo": 0.0}, "-"),
    (None, "-"),
])
def test_format_diff(d: dict[str, float] | None, text: str) -> None:
    assert metrics.format_diff(d) == text


def test_paired_diff_text_of_no_examples_is_a_dash() -> None:
    assert metrics.paired_diff_text([], [], [], []) == "-"
    # one repository: no interval (a zero-width one would read as a lead)
    assert metrics.paired_diff_text([200.0], [100.0], [100.0], ["r"]) == "-"
    assert metrics.paired_diff_text([200.0, 100.0], [100.0, 100.0], [100.0, 100.0],
                                    ["r", "s"]) == "+0.347 [+0.000, +0.693]"


def test_mae_minutes() -> None:
    assert metrics.mae_minutes([60.0, 180.0], [120.0, 120.0]) == pytest.approx(1.0)


def test_rankdata_averages_ties() -> None:
    assert metrics.rankdata([10, 20, 20, 5]).tolist() == [2.0, 3.5, 3.5, 1.0]
    assert metrics.rankdata([]).tolist() == []


def test_spearman() -> None:
    assert metrics.spearman([1, 2, 3, 4], [10, 20, 30, 400]) == pytest.approx(1.0)
    assert metrics.spearman([4, 3, 2, 1], [10, 20, 30, 40]) == pytest.approx(-1.0)
    # with ties: Pearson correlation of the average ranks
    p, t = [1, 2, 2, 3], [1, 3, 2, 4]
    rp, rt = metrics.rankdata(p), metrics.rankdata(t)
    assert metrics.spearman(p, t) == pytest.approx(float(np.corrcoef(rp, rt)[0, 1]))
    assert math.isnan(metrics.spearman([5, 5, 5], [1, 2, 3]))  # constant predictor
    assert math.isnan(metrics.spearman([1], [1]))


def test_within_2x_is_inclusive() -> None:
    assert metrics.within_2x([50.0, 200.0, 49.0, 201.0], [100.0] * 4) == 0.5


def test_coverage() -> None:
    assert metrics.coverage([10, 10, 10, 10], [20, 20, 20, 20], [10, 15, 20, 21]) == 0.75


def test_compute() -> None:
    preds = [Runtime(50, 100, 200), Runtime(100, 200, 400), Runtime(10, 10, 10)]
    true = [100.0, 100.0, 1000.0]
    m = metrics.compute(preds, true)
    assert m["n"] == 3
    assert m["log_mae"] == pytest.approx((0 + math.log(2) + math.log(100)) / 3)
    assert m["within_2x"] == pytest.approx(2 / 3)
    assert m["coverage"] == pytest.approx(2 / 3)
    point = [Runtime(100, 100, 100), Runtime(200, 200, 200)]
    assert metrics.compute(point, [100.0, 300.0])["coverage"] is None
    assert metrics.compute(point, [100.0, 300.0], intervals=True)["coverage"] == 0.5
    with pytest.raises(ValueError):
        metrics.compute(point, [1.0])


def test_paired_log_mae_diff() -> None:
    true = [100.0] * 6
    groups = ["a", "a", "b", "b", "c", "c"]
    same = metrics.paired_log_mae_diff([200.0] * 6, [50.0] * 6, true, groups)
    assert same == {"diff": pytest.approx(0.0), "lo": pytest.approx(0.0),
                    "hi": pytest.approx(0.0), "groups": 3}
    better = metrics.paired_log_mae_diff([110.0] * 6, [200.0] * 6, true, groups)
    assert better["diff"] == pytest.approx(math.log(1.1) - math.log(2))
    assert better["hi"] < 0
    # better in one repository, worse in the other two: the interval spans zero
    mixed = metrics.paired_log_mae_diff([100, 100, 300, 300, 300, 300], [1000, 1000, 200, 200,
                                        200, 200], true, groups)
    assert mixed["lo"] < 0 < mixed["hi"]
    assert math.isnan(metrics.paired_log_mae_diff([], [], [], [])["diff"])
