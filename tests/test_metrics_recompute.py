"""The evaluation metrics recomputed by hand on tiny inputs: edge cases of the paired
bootstrap and of the clipping that the docs' figures rely on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from laser_ci.training import metrics


def _own_bootstrap(d: list[float], groups: list[str], n_boot: int = 2000,
                   seed: int = 0) -> tuple[float, float]:
    """The percentile interval of the pooled mean difference over repositories drawn with
    replacement, written out again from the docstring."""
    names = sorted(set(groups))
    sums = np.array([sum(x for x, g in zip(d, groups, strict=True) if g == n) for n in names])
    counts = np.array([sum(g == n for g in groups) for n in names], dtype=float)
    pick = np.random.default_rng(seed).integers(0, len(names), (n_boot, len(names)))
    stats = sums[pick].sum(axis=1) / counts[pick].sum(axis=1)
    lo, hi = np.quantile(stats, [0.025, 0.975])
    return float(lo), float(hi)


def test_bootstrap_resamples_repositories_not_runs() -> None:
    # repository a: 3 runs much better, b and c one run each, a little worse
    err_a = [0.0, 0.0, 0.0, 0.5, 0.5]
    err_b = [1.0, 1.0, 1.0, 0.4, 0.4]
    groups = ["a", "a", "a", "b", "c"]
    res = metrics.paired_error_diff(err_a, err_b, groups)
    d = [x - y for x, y in zip(err_a, err_b, strict=True)]
    assert res["diff"] == pytest.approx(sum(d) / len(d))
    assert res["groups"] == 3
    assert (res["lo"], res["hi"]) == pytest.approx(_own_bootstrap(d, groups))
    # a draw without a holds only the +0.1 runs, one with only a only the -1.0 runs
    assert res["lo"] == pytest.approx(-1.0)
    assert res["hi"] == pytest.approx(0.1)


def test_bootstrap_of_equal_errors_is_a_tie_at_zero() -> None:
    res = metrics.paired_error_diff([0.3] * 4, [0.3] * 4, ["a", "b", "c", "d"])
    assert (res["diff"], res["lo"], res["hi"]) == (0.0, 0.0, 0.0)


def test_one_repository_gives_no_interval() -> None:
    """Resampling one repository gives the same difference every time: a zero-width
    interval that excludes zero and so reads as "ahead" however few runs back it. With
    fewer than two repositories there is no interval to give."""
    res = metrics.paired_error_diff([0.1, 0.2, 0.3], [0.5, 0.5, 0.5], ["r", "r", "r"])
    assert res["diff"] == pytest.approx(-0.3)
    assert res["groups"] == 1
    assert math.isnan(res["lo"]) and math.isnan(res["hi"])
    assert metrics.format_diff(res) == "-"
    two = metrics.paired_error_diff([0.1, 0.2], [0.5, 0.5], ["r", "s"])
    assert two["lo"] < two["hi"]


@pytest.mark.parametrize(("pred", "true", "err"), [
    (0.0, 10.0, math.log(10)),     # a prediction of 0 counts as 1 s
    (-5.0, 10.0, math.log(10)),    # so does a negative one
    (10.0, 0.0, math.log(10)),     # and a truth of 0
    (0.5, 0.2, 0.0),               # both under 1 s: no error
    (math.e ** 3, math.e, 2.0),    # natural log, not log10
])
def test_log_error_clips_at_one_second(pred: float, true: float, err: float) -> None:
    assert metrics.log_errors([pred], [true])[0] == pytest.approx(err)


def test_band_metrics_by_hand() -> None:
    p10, p90, true = [10.0, 10.0, 0.0], [40.0, 20.0, 4.0], [20.0, 30.0, 0.5]
    assert metrics.coverage(p10, p90, true) == pytest.approx(2 / 3)  # 0.5 s and 0 s: 1 s
    assert metrics.width_ratio(p10, p90) == pytest.approx(4.0)  # median of 4, 2, 4
    want = np.mean([math.log(4), math.log(2) + 10 * math.log(1.5), math.log(4)])
    assert metrics.interval_score(p10, p90, true) == pytest.approx(want)
    assert math.isnan(metrics.coverage([], [], []))
    assert math.isnan(metrics.width_ratio([], []))
