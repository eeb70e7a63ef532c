"""Scored-examples files: a predictions file and its errors-only form pair alike."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
from pathlib import Path

import pytest

from laser_ci.training import scored
from laser_ci.training.folds import fold_of

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def bench(name: str):  # noqa: ANN201
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def predictions(path: Path) -> list[dict]:
    """12 repositories, 3 runs each, two predictors: ``good`` 2% to 46% off by repository
    (its p50 ``t * (1.02 + 0.04 r)``), ``bad`` 2x off; ``good``'s band holds every truth,
    ``bad``'s none."""
    rows = []
    for r in range(12):
        repo = f"owner/repo{r}"
        for i in range(3):
            t = 60.0 * (r + 1) + i
            base = {"key": f"{repo}|.github/workflows/ci.yml|workflow||{i}", "repo": repo,
                    "subset": ("cold", "warm", "warm-changed")[i],
                    "conclusion": "success" if r % 2 else "failure", "runtime_s": t}
            rows.append({**base, "predictor": "good", "prior": [t / 2, t * (1.02 + 0.04 * r), t * 2],
                         "none": [t / 3, t * 0.9, t * 3]})
            rows.append({**base, "predictor": "bad", "prior": [t * 3, t * 2, t * 4],
                         "none": [t * 3, t * 2, t * 4]})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return rows


@pytest.mark.parametrize("out", ["errors.jsonl", "errors.jsonl.gz"])
def test_errors_file_pairs_as_the_predictions_file(tmp_path: Path, out: str) -> None:
    pred, err = tmp_path / "pred.jsonl", tmp_path / out
    rows = predictions(pred)
    assert scored.write_errors(pred, err) == len(rows)
    text = (gzip.open(err, "rt") if out.endswith(".gz") else err.open()).read()
    # nothing of the data leaves: no run time, repository or workflow path
    assert "owner/" not in text and "ci.yml" not in text and "runtime_s" not in text
    kept = [json.loads(line) for line in text.splitlines()]
    assert {r["fold"] for r in kept} == {fold_of(f"owner/repo{r}", 5) for r in range(12)}

    paired_runs = bench("paired_runs")
    full = paired_runs.compare(paired_runs.load(str(pred), "good"),
                               paired_runs.load(str(pred), "bad"))
    short = paired_runs.compare(paired_runs.load(str(err), "good"),
                                paired_runs.load(str(err), "bad"))
    mixed = paired_runs.compare(paired_runs.load(str(err), "good"),
                                paired_runs.load(str(pred), "bad"))
    assert len(full) == len(short) == len(mixed) > 0
    for f, s, m in zip(full, short, mixed, strict=True):
        for key in ("regime", "subset", "runs", "n", "groups"):
            assert f[key] == s[key] == m[key]
        for key in ("a", "b", "diff", "cov_a", "cov_b"):
            assert s[key] == pytest.approx(f[key], abs=1e-5)
            assert m[key] == pytest.approx(f[key], abs=1e-5)
        # the same repositories resampled under their digests: the same interval but for
        # the draw; A's names group a mixed pair
        assert (m["lo"], m["hi"]) == pytest.approx((s["lo"], s["hi"]), abs=1e-5)
        for r in (s, f):
            assert r["lo"] - 1e-9 <= r["diff"] <= r["hi"] + 1e-9
    everything = next(r for r in full if (r["regime"], r["subset"], r["runs"]) ==
                      ("prior", "all", "all"))
    assert everything["n"] == 36 and everything["groups"] == 12
    assert everything["a"] == pytest.approx(
        sum(math.log(1.02 + 0.04 * r) for r in range(12)) / 12)
    assert everything["b"] == pytest.approx(math.log(2))
    assert everything["diff"] < 0 and everything["hi"] < 0  # good is clearly better
    assert (everything["cov_a"], everything["cov_b"]) == (1.0, 0.0)

    # one fold of an errors file: its stored fold, the same runs as the predictions' fold
    for f in range(5):
        assert set(paired_runs.only_fold(paired_runs.load(str(err), "good"), f, 5)) == \
            set(paired_runs.only_fold(paired_runs.load(str(pred), "good"), f, 5))
    with pytest.raises(SystemExit, match="folds of 5, not 3"):
        paired_runs.only_fold(paired_runs.load(str(err), "good"), 0, 3)


def test_kept_folds_pool_by_concatenation(tmp_path: Path) -> None:
    pred = tmp_path / "pred.jsonl"
    rows = predictions(pred)
    halves = []
    for half in (0, 1):
        part = tmp_path / f"part{half}.jsonl"
        part.write_text("".join(json.dumps(r) + "\n" for r in rows
                                if int(r["repo"][-1]) % 2 == half))
        scored.write_errors(part, tmp_path / f"part{half}.errors.jsonl")
        halves.append((tmp_path / f"part{half}.errors.jsonl").read_text())
    pooled = tmp_path / "pooled.jsonl"
    pooled.write_text("".join(halves))
    paired_runs = bench("paired_runs")
    scored.write_errors(pred, tmp_path / "whole.jsonl")
    whole = paired_runs.compare(paired_runs.load(str(tmp_path / "whole.jsonl"), "good"),
                                paired_runs.load(str(tmp_path / "whole.jsonl"), "bad"))
    parts = paired_runs.compare(paired_runs.load(str(pooled), "good"),
                                paired_runs.load(str(pooled), "bad"))
    assert [r["n"] for r in parts] == [r["n"] for r in whole]
    assert [r["groups"] for r in parts] == [r["groups"] for r in whole]
    assert parts == whole  # folds kept apart pool to the figures of one file


@pytest.mark.parametrize(("content", "message"), [
    ("{not json\n", r"x\.jsonl:1: not JSON"),
    ('{"predictor": "a"}\n', r"x\.jsonl:1: a scored example without its fields"),
    ('["a list"]\n', r"x\.jsonl:1: not a scored example"),
    ('\n{"predictor": "a", "key": "k", "repo": "r", "fold": 0, "subset": "warm", '
     '"conclusion": "success", "prior": [0.1, 1], "none": [0.2]}\n',
     r"x\.jsonl:2: a scored example without its fields"),
    ("", r"x\.jsonl: no predictions of a"),
])
def test_bad_scored_files_name_the_file_and_line(tmp_path: Path, content: str,
                                                 message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(content)
    with pytest.raises(scored.ScoredError, match=message):
        scored.load(path, "a")


def test_missing_file_and_two_predictors(tmp_path: Path) -> None:
    with pytest.raises(scored.ScoredError, match="absent.jsonl"):
        scored.load(tmp_path / "absent.jsonl", None)
    pred = tmp_path / "pred.jsonl"
    predictions(pred)
    with pytest.raises(scored.ScoredError, match="holds bad, good: pick one"):
        scored.load(pred, None)
    scored.write_errors(pred, tmp_path / "e.jsonl")
    with pytest.raises(scored.ScoredError, match="not a predictions file"):
        scored.write_errors(tmp_path / "e.jsonl", tmp_path / "e2.jsonl")


def test_keep_errors_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keep = bench("keep_errors")
    pred = tmp_path / "pred.jsonl"
    predictions(pred)
    out = tmp_path / "kept" / "fold.jsonl.gz"
    assert keep.main([str(pred), str(out)]) == 0
    assert "72 rows" in capsys.readouterr().out and out.exists()
    assert keep.main([str(out), str(tmp_path / "again.jsonl")]) == 1
    assert "not a predictions file" in capsys.readouterr().err
