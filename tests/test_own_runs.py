"""Issue 49, part 5: a job's own runs, used well. Its p50 is the median of the latest half of
its successful runs (at least 3, at most 100), its band calibrated per history size; a busy
job's slow afternoon does not move it, a quiet job is read from all it has."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from laser_ci.estimate import estimate_files, estimate_paths
from laser_ci.predictors.base import Runtime
from laser_ci.predictors.evidence_bands import load_offsets
from laser_ci.predictors.own_runs import (
    MAX_WINDOW,
    MIN_RUNS,
    bucket,
    has_bands,
    offsets_for,
    own_log_p50,
    own_runtime,
    passing_runs,
    window,
)
from laser_ci.report.tables import _group_history
from laser_ci.text.history import HistoryIndex, PastRuns, parse_history
from laser_ci.workflows.parse import DiskFiles

OK, FAIL = "success", "failure"


def _past(times, ends=None) -> PastRuns:
    times = tuple(float(t) for t in times)
    return PastRuns(times, conclusions=tuple(ends) if ends is not None else (OK,) * len(times))


@pytest.mark.parametrize(("n", "expected"), [
    (0, 0),      # no successful run: no window
    (1, 1),      # a quiet job: every run it has
    (2, 2),
    (3, 3),
    (4, 3),      # at least 3 ...
    (6, 3),
    (7, 4),      # ... else the latest half, rounded up
    (20, 10),
    (200, 100),  # at most 100
    (201, 100),
])
def test_window_by_history_size(n: int, expected: int) -> None:
    assert (MIN_RUNS, MAX_WINDOW) == (3, 100)  # the rule these edges are of
    assert window(n) == expected


@pytest.mark.parametrize(("times", "ends", "runs"), [
    ((), (), ()),                                          # no runs
    ((60,), (OK,), (60.0,)),                               # one run
    ((60, 70), (OK, OK), (60.0, 70.0)),
    ((60, 10, 70), (OK, FAIL, OK), (60.0, 70.0)),          # a failure's time is left out
    ((10, 12, 11), (FAIL, FAIL, "timed_out"), ()),         # every run failed: none
    ((60, 70, 80), (None, None, None), (60.0, 70.0, 80.0)),  # no end known: every timed run
])
def test_passing_runs(times, ends, runs) -> None:
    past = PastRuns(tuple(float(t) for t in times),
                    conclusions=tuple(ends) if any(ends) else ())
    assert passing_runs(past) == runs


@pytest.mark.parametrize(("runs", "p50"), [
    ((), None),
    ((100.0,), 100.0),
    ((100.0, 300.0), 200.0),                      # the median of both
    ((100.0, 200.0, 900.0), 200.0),               # of all three: one outlier ignored
    ((900.0,) * 10 + (100.0,) * 10, 100.0),       # 20 runs: the latest 10
    ((900.0,) * 100 + (100.0,) * 100, 100.0),     # 200 runs: the latest 100
    ((100.0,) * 20 + (900.0, 950.0, 920.0), 100.0),  # a slow afternoon: the usual time
])
def test_own_p50(runs, p50) -> None:
    got = own_log_p50(runs)
    assert (got is None) if p50 is None else math.exp(got) == pytest.approx(p50)


@pytest.mark.parametrize(("n", "key"), [(0, "own/1"), (1, "own/1"), (2, "own/1"),
                                        (3, "own/3"), (9, "own/3"), (10, "own/10"),
                                        (49, "own/10"), (50, "own/50"), (5000, "own/50")])
def test_band_bucket(n: int, key: str) -> None:
    assert bucket(n) == key


def test_band_of_the_bucket_else_pooled_else_the_predictors_width() -> None:
    offsets = {"own": (-0.5, 0.5), "own/3": (-0.1, 0.2)}
    assert offsets_for(5, offsets) == (-0.1, 0.2)
    assert offsets_for(60, offsets) == (-0.5, 0.5)  # no own/50: the pooled band
    assert offsets_for(5, {}) is None
    past = _past([100.0] * 5)
    warm = Runtime(p10=50.0, p50=400.0, p90=800.0)
    rt, n = own_runtime(past, offsets, warm)
    assert n == 5 and rt.p50 == pytest.approx(100.0)
    assert (rt.p10, rt.p90) == pytest.approx((100 * math.exp(-0.1), 100 * math.exp(0.2)))
    rt, _ = own_runtime(past, {}, warm)  # uncalibrated: the predictor's width, moved
    assert (rt.p10, rt.p90) == pytest.approx((12.5, 200.0))
    # every run failed: nothing to say how long until it passes, the predictor's stands
    assert own_runtime(_past([10.0, 12.0], [FAIL, FAIL]), offsets, warm) is None
    assert own_runtime(None, offsets, warm) is None
    # no calibrated band and no warm prediction yet: the estimate asks the predictor first
    assert own_runtime(past, {}, None) is None
    assert own_runtime(past, offsets, None) == own_runtime(past, offsets, warm)


def test_the_shipped_bands_calibrate_every_bucket(tmp_path: Path) -> None:
    offsets = load_offsets()
    assert has_bands(offsets) and {"own", "own/1", "own/3", "own/10", "own/50"} <= set(offsets)
    for key in ("own/1", "own/3", "own/10", "own/50"):
        lo, hi = offsets[key]
        assert lo < 0 < hi and math.exp(hi - lo) < 3  # narrow: a job's own runs
    # unknown keys and bad pairs are left out
    (tmp_path / "b.json").write_text(json.dumps({"offsets": {
        "own/0": [-1, 1], "own/x": [-1, 1], "own/3": [1, 2], "own/10": [-0.2, 0.3],
        "mine": [-1, 1]}}), encoding="utf-8")
    assert load_offsets(tmp_path / "b.json") == {"own/10": (-0.2, 0.3)}
    assert not has_bands({"siblings": (-1.0, 1.0)})


# --- through the estimate ------------------------------------------------------------------

CI = """name: CI
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: make
"""
PATH = ".github/workflows/ci.yml"


class HistoryRecent:
    """The default's warm rule on the history block: the median of its last 3 runs."""

    name = "stub-recent"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def predict(self, texts):
        from laser_ci.text.history import parse_history

        self.asked += texts
        out = []
        for t in texts:
            h = parse_history(t)
            m = h.get("recent", h["median"]) if h else 60.0
            out.append(Runtime(p10=m / 2, p50=m, p90=m * 2))
        return out


def _repo(tmp_path: Path) -> Path:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "ci.yml").write_text(CI, encoding="utf-8")
    return tmp_path


def _build(result: dict) -> dict:
    return next(j for w in result["workflows"] for j in w["jobs"] if j["name"] == "build")


def test_a_busy_job_with_a_slow_afternoon_gets_its_usual_time(tmp_path: Path) -> None:
    """The issue's job: about 2,350 s on most runs, then one slow afternoon (4,318, 4,610
    and 4,479 s) and a few failures; its last three say 4,479 s, its usual time is 2,350."""
    rng = np.random.default_rng(0)
    usual = tuple(2350.0 * (1 + 0.05 * x) for x in rng.standard_normal(150))
    times = usual + (1200.0, 4318.0, 4610.0, 4479.0)
    ends = (OK,) * 150 + (FAIL, OK, OK, OK)
    history = HistoryIndex(jobs={(PATH, "build"): _past(times, ends)}, workflows={})
    root = _repo(tmp_path)
    job = _build(estimate_paths([str(root)], repo_root=str(root), predictor=HistoryRecent(),
                                history=history))
    assert job["history_source"] == "own" and job["history_runs"] == 20
    ok = [t for t, e in zip(times, ends, strict=True) if e == OK]
    assert job["runtime_s"]["p50"] == pytest.approx(float(np.median(ok[-window(len(ok)):])),
                                                    rel=1e-3)
    assert job["runtime_s"]["p50"] == pytest.approx(2350.0, rel=0.05)  # not 4,479
    lo, hi = load_offsets()["own/50"]
    assert job["runtime_s"]["p90"] / job["runtime_s"]["p50"] == pytest.approx(math.exp(hi),
                                                                              rel=1e-3)
    assert job["runtime_s"]["p10"] / job["runtime_s"]["p50"] == pytest.approx(math.exp(lo),
                                                                              rel=1e-3)


def test_the_predictor_is_not_asked_for_the_jobs_their_own_runs_predict(tmp_path) -> None:
    """Its warm prediction of them would be replaced: only the new job's text and the
    cold text of the job with runs (the evidence's residual) are asked for."""
    root = _repo(tmp_path)
    (root / PATH).write_text(CI + "  lint:\n    runs-on: ubuntu-latest\n    steps:\n"
                             "      - run: make lint\n", encoding="utf-8")
    history = HistoryIndex(jobs={(PATH, "build"): _past([100.0, 110.0, 120.0])},
                           workflows={})
    stub = HistoryRecent()
    result = estimate_paths([str(root)], repo_root=str(root), predictor=stub, history=history)
    assert _build(result)["history_source"] == "own"
    assert _build(result)["runtime_s"]["p50"] == pytest.approx(110.0)
    assert len(stub.asked) == 2 and not any(parse_history(t) for t in stub.asked)


def test_a_job_whose_runs_all_failed_keeps_the_predictors_warm_prediction(tmp_path) -> None:
    history = HistoryIndex(jobs={(PATH, "build"): _past([30.0, 40.0, 50.0], [FAIL] * 3)},
                           workflows={})
    root = _repo(tmp_path)
    stub = HistoryRecent()
    job = _build(estimate_paths([str(root)], repo_root=str(root), predictor=stub,
                                history=history))
    assert len(stub.asked) == 1 and parse_history(stub.asked[0])  # its warm text
    assert job["history_source"] == "own"
    assert (job["runtime_s"]["p10"], job["runtime_s"]["p50"], job["runtime_s"]["p90"]) == \
        pytest.approx((20.0, 40.0, 80.0))


def test_a_model_folder_without_own_bands_keeps_its_warm_predictions(tmp_path) -> None:
    """``--model DIR`` (a fine-tuned language model, say): its evidence bands have no own
    entries, so its warm prediction of a job with runs stands; with them, the own runs'."""
    times = (100.0,) * 20 + (900.0, 950.0, 920.0)
    history = HistoryIndex(jobs={(PATH, "build"): _past(times)}, workflows={})
    root = _repo(tmp_path / "repo")
    model = tmp_path / "model"
    model.mkdir()

    def p50() -> float:
        result = estimate_files(DiskFiles(root), [PATH], predictor=HistoryRecent(),
                                model_dir=str(model), history=history)
        return _build(result)["runtime_s"]["p50"]

    assert p50() == pytest.approx(920.0)  # its own: the median of the last 3
    (model / "evidence_bands.json").write_text(json.dumps(
        {"offsets": {"own": [-0.3, 0.3]}}), encoding="utf-8")
    assert p50() == pytest.approx(100.0)


def test_a_folded_group_counts_siblings_apart_from_warm() -> None:
    from laser_ci.report.diff import JobDiff

    own = {"name": "t (1)", "history_runs": 5, "history_source": "own"}
    sib = {"name": "t (2)", "history_runs": None, "history_source": "siblings",
           "evidence_runs": 5}
    old = {"name": "t (3)", "history_runs": 5, "history_source": "siblings",
           "evidence_runs": 5}  # a result that still set history_runs for siblings
    cold = {"name": "t (4)", "history_runs": None, "history_source": None}

    def group(*jobs):
        return _group_history([JobDiff(j["name"], "new", j) for j in jobs])

    assert group(own, own) == "warm (2)"
    assert group(own, sib, old, cold) == "1 warm, 2 new from other runs, 1 cold"
    assert group(sib, old) == "2 new from other runs"
    assert group(cold) == "cold"


def test_the_depth_eval_calibrates_the_own_band_per_history_size() -> None:
    """``laser-ci eval --new-jobs`` / ``benchmarks/new_jobs.py``: the earlier window's own
    rows give a band per bucket (20 runs at least) and pooled; the later rows get theirs."""
    from laser_ci.evaluation.new_jobs import Row, calibrate, rebanded

    def row(n: int, ratio: float, ok: bool = True) -> Row:
        return Row("job", "own", ok, 100.0 * ratio, (1.0, 100.0, 1e4), (50.0, 100.0, 200.0),
                   100.0, n)

    wide = [row(5, r) for r in np.linspace(0.5, 2.0, 30)]
    narrow = [row(60, r) for r in np.linspace(0.9, 1.1, 30)]
    few = [row(12, 3.0) for _ in range(5)]  # too few for a band of their own
    failed = [row(60, 9.0, ok=False)] * 40  # failed runs do not count
    offsets = calibrate(wide + narrow + few + failed)
    assert set(offsets) == {"own", "own/3", "own/50"}
    assert offsets["own/50"][1] - offsets["own/50"][0] < offsets["own/3"][1] - offsets["own/3"][0]
    later = rebanded([row(5, 1.0), row(60, 1.0), row(12, 1.0)], offsets)
    for r, key in zip(later, ("own/3", "own/50", "own"), strict=True):
        lo, hi = offsets[key]
        assert r.pred == pytest.approx((100 * math.exp(lo), 100.0, 100 * math.exp(hi)))
