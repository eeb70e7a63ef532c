"""benchmarks/changed_row.py on the gha-mini fixture: its rebuilt earlier runs are the
history line's, and its references are the medians its docstring names."""

from __future__ import annotations

import json
from pathlib import Path

import bench
import gha_mini
import numpy as np
import pytest

from laser_ci.training.examples import load_examples, load_runs, workflow_blobs


def _module():
    return bench.load("changed_row")


@pytest.mark.parametrize(("runs", "k", "expected"), [
    # the latest earlier run failed: the median of the last k failures
    ([(10.0, "failure", None), (100.0, "success", None), (30.0, "failure", None)], 1, 30.0),
    ([(10.0, "failure", None), (100.0, "success", None), (30.0, "failure", None)], 3, 20.0),
    # the latest succeeded: the successes only
    ([(10.0, "failure", None), (100.0, "success", None), (200.0, "success", None)], 20, 150.0),
    # one earlier run: itself
    ([(7.0, "cancelled", None)], 5, 7.0),
])
def test_persistence_median(runs, k, expected) -> None:
    assert _module().persistence_median(runs, k) == pytest.approx(expected)


def test_earlier_runs_match_the_history_line() -> None:
    mod = _module()
    examples = load_examples(gha_mini.MINI, kinds=("workflow", "job"))
    blobs = workflow_blobs(load_runs(Path(gha_mini.MINI)))
    before = mod.earlier_runs(examples, blobs)
    warm = [(e, b) for e, b in zip(examples, before, strict=True) if e.history is not None]
    assert warm, "the fixture has runs with earlier runs"
    for e, b in zip(examples, before, strict=True):
        if e.history is None:
            assert b == [] or e.runtime_s <= 0
            continue
        assert tuple(r[0] for r in b) == e.history.runtimes
        # changed means the latest earlier run's blob differs from this run's
        assert bool(e.changed) == (b[-1][2] != blobs.get(e.run_id))
        assert all(isinstance(r[3], str) and r[3] != e.run_id for r in b)


@pytest.mark.parametrize(("recent", "t_this", "t_before", "w", "expected"), [
    (100.0, 200.0, 100.0, 0.0, 100.0),   # w = 0: the recent median
    (100.0, 200.0, 100.0, 1.0, 200.0),   # w = 1: the whole ratio
    (100.0, 400.0, 100.0, 0.5, 200.0),   # half the log ratio
    (100.0, 50.0, 100.0, 1.0, 50.0),     # the change halves the tabular p50
    (100.0, 0.0, 100.0, 1.0, 1.0),       # a 0 s T is floored at 1 s
    (0.0, 10.0, 10.0, 1.0, 1.0),         # so is a 0 s recent median
])
def test_ratio_reference(recent, t_this, t_before, w, expected) -> None:
    assert _module().ratio_reference(recent, t_this, t_before, w) == pytest.approx(expected)


@pytest.mark.parametrize(("form", "expected"), [
    ("latest", 40.0),          # the latest earlier run's T
    ("recent", 30.0),          # the median of the last 3 runs' T: 20, 30, 40
])
def test_tabular_before(form, expected) -> None:
    runs = [(1.0, "success", None, r) for r in ("a", "b", "c", "d")]
    t = {"a": 10.0, "b": 20.0, "c": 30.0, "d": 40.0}
    assert _module().tabular_before(runs, t, form) == pytest.approx(expected)
    t.pop("d")
    assert _module().tabular_before(runs, t, form) is None   # a run without T
    assert _module().tabular_before([], t, form) is None


def test_pick_per_fold_uses_the_other_folds_only() -> None:
    mod = _module()
    true = np.array([10.0, 10.0, 100.0, 100.0])
    folds = np.array([0, 0, 1, 1])
    # candidate "a" is right on fold 0, "b" on fold 1: each fold gets the other's winner
    cands = {"a": np.array([10.0, 10.0, 10.0, 10.0]), "b": np.array([100.0] * 4)}
    picked, picks = mod.pick_per_fold(cands, true, folds, np.ones(4, dtype=bool), 2)
    assert picks == ["b", "a"]
    assert list(picked) == [100.0, 100.0, 10.0, 10.0]


def test_runs_on_the_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = _module()
    examples = load_examples(gha_mini.MINI, kinds=("workflow",))
    preds = tmp_path / "p.jsonl"
    with preds.open("w") as fh:
        for e in examples:
            key = f"{e.repo}|{e.workflow_path}|{e.kind}|{e.job_name or ''}|{e.run_id}"
            fh.write(json.dumps({"key": key, "predictor": "tabular",
                                 "prior": [1.0, 60.0, 600.0],
                                 "none": [1.0, len(e.text), 600.0]}) + "\n")
    assert mod.main(["--data", str(gha_mini.MINI), "--folds", "3",
                     "--predictions", str(preds)]) == 0
    out = capsys.readouterr().out
    assert "(0 whose rebuilt earlier runs disagree with the history line)" in out
    assert "4. history median^(1-w)" in out and "w picked per fold" in out
    assert "5. recent median * (tabular p50" in out and "form and w picked per fold" in out


def test_no_history_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "runs.jsonl").write_text("")
    assert _module().main(["--data", str(tmp_path)]) == 1
    assert "no workflow examples with earlier runs" in capsys.readouterr().err
