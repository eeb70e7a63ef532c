"""Scored-examples files: a predictions file and its errors-only form pair alike."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import bench
import pytest

from laser_ci.evaluation.folds import fold_of
from laser_ci.training import metrics

scored = bench.load("scored")
KEEP = ["good", "bad"]
GOOD = (b'{"predictor": "a", "key": "k", "repo": "0a1b2c3d4e5f", "subset": "warm", '
        b'"conclusion": "success", "prior": [0.1, 1], "none": [0.2, 0]}\n')


def predictions(path: Path, repos: int = 12) -> list[dict]:
    """``repos`` repositories, 3 runs each, three predictors. ``good``: its p50
    ``t * (1.02 + 0.04 r)`` (2% to 46% off by repository), its band holding the truth in two
    runs of three (the third's p90 is below it; the first's p10 is the truth itself, on the
    edge). ``bad``: 2x off, its band never holding the truth. ``median``: the same p50
    everywhere."""
    rows = []
    for r in range(repos):
        repo = f"owner/repo{r}"
        for i in range(3):
            t = 60.0 * (r + 1) + i
            base = {"key": f"{repo}|.github/workflows/ci.yml|workflow||{i}", "repo": repo,
                    "subset": ("cold", "warm", "warm-changed")[i],
                    "conclusion": "success" if r % 2 else "failure", "runtime_s": t}
            p90 = t * 0.9 if i == 2 else t * 2
            rows.append({**base, "predictor": "good",
                         "prior": [t if i == 0 else t / 2, t * (1.02 + 0.04 * r), p90],
                         "none": [t / 3, t * (0.9 - 0.01 * r), t * 3]})
            rows.append({**base, "predictor": "bad", "prior": [t * 3, t * 2, t * 4],
                         "none": [t * 3, t * 2, t * 4]})
            rows.append({**base, "predictor": "median", "prior": [30.0, 300.0, 900.0],
                         "none": [30.0, 300.0, 900.0]})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return rows


def pairs(a: Path, b: Path, pa: str = "good", pb: str = "bad") -> list[dict]:
    paired_runs = bench.load("paired_runs")
    return paired_runs.compare(paired_runs.load(str(a), pa), paired_runs.load(str(b), pb))


def cell(rows: list[dict], regime: str, subset: str, runs: str) -> dict:
    return next(r for r in rows if (r["regime"], r["subset"], r["runs"]) == (regime, subset, runs))


def test_predictions_pair_as_before_errors_files(tmp_path: Path) -> None:
    """On predictions files the figures are those of the code before errors files: examples
    in the order of their keys, resampled by repository name."""
    pred = tmp_path / "pred.jsonl"
    rows = predictions(pred)
    got = cell(pairs(pred, pred), "prior", "all", "all")
    good = sorted((r for r in rows if r["predictor"] == "good"), key=lambda r: r["key"])
    bad = sorted((r for r in rows if r["predictor"] == "bad"), key=lambda r: r["key"])
    true = [r["runtime_s"] for r in good]
    want = metrics.paired_log_mae_diff([r["prior"][1] for r in good],
                                       [r["prior"][1] for r in bad], true,
                                       [r["repo"] for r in good])
    assert {k: got[k] for k in want} == want
    assert got["a"] == metrics.log_mae([r["prior"][1] for r in good], true)
    assert got["cov_a"] == metrics.coverage([r["prior"][0] for r in good],
                                            [r["prior"][2] for r in good], true)
    assert got["n"] == 36 and got["groups"] == 12
    assert got["a"] == pytest.approx(sum(math.log(1.02 + 0.04 * r) for r in range(12)) / 12)
    assert got["b"] == pytest.approx(math.log(2))
    assert got["hi"] < 0  # good is clearly better
    # the band's edge counts as inside; a p90 below the truth does not
    assert (got["cov_a"], got["cov_b"]) == (pytest.approx(2 / 3), 0.0)


@pytest.mark.parametrize("out", ["errors.jsonl", "errors.jsonl.gz"])
def test_errors_file_pairs_as_the_predictions_file(tmp_path: Path, out: str) -> None:
    pred, err = tmp_path / "pred.jsonl", tmp_path / out
    predictions(pred)
    assert scored.write_errors(pred, err, KEEP) == 72
    text = (gzip.open(err, "rt") if out.endswith(".gz") else err.open()).read()
    kept = [json.loads(line) for line in text.splitlines()]
    # nothing of the data but the errors: no run time, no name, no other field
    assert all(tuple(r) == scored.FIELDS for r in kept)
    assert all(len(r[g]) == 2 and r[g][1] in (0, 1) for r in kept for g in scored.REGIMES)
    assert "owner/" not in text and "ci.yml" not in text
    assert {r["predictor"] for r in kept} == set(KEEP)
    assert [r["key"] for r in kept] == sorted(r["key"] for r in kept)

    full, short, mixed = pairs(pred, pred), pairs(err, err), pairs(err, pred)
    assert len(full) == len(short) == len(mixed) > 0
    for f, s, m in zip(full, short, mixed, strict=True):
        for key in ("regime", "subset", "runs", "n", "groups"):
            assert f[key] == s[key] == m[key]
        for key in ("a", "b", "diff", "cov_a", "cov_b"):
            assert s[key] == pytest.approx(f[key], abs=1e-5)
            assert m[key] == pytest.approx(f[key], abs=1e-5)
        # A's digests group a mixed pair as they group the errors file
        assert (m["lo"], m["hi"]) == pytest.approx((s["lo"], s["hi"]), abs=1e-5)
        assert s["lo"] - 1e-9 <= s["diff"] <= s["hi"] + 1e-9

    # one fold, any K: the digest places the repository as its name does
    paired_runs = bench.load("paired_runs")
    for k in (3, 5):
        for f in range(k):
            by_digest = paired_runs.only_fold(paired_runs.load(str(err), "good"), f, k)
            by_name = paired_runs.only_fold(paired_runs.load(str(pred), "good"), f, k)
            assert set(by_digest) == set(by_name)


def test_kept_folds_pool_to_the_figures_of_one_file(tmp_path: Path) -> None:
    pred = tmp_path / "pred.jsonl"
    rows = predictions(pred, repos=20)
    scored.write_errors(pred, tmp_path / "whole.jsonl", KEEP)
    parts = []
    for f in range(5):
        part = tmp_path / f"fold{f}.jsonl"
        part.write_text("".join(json.dumps(r) + "\n" for r in rows
                                if fold_of(r["repo"], 5) == f))
        if part.read_text():
            scored.write_errors(part, tmp_path / f"fold{f}.errors.jsonl", KEEP)
            parts.append((tmp_path / f"fold{f}.errors.jsonl").read_text())
    assert len(parts) > 1
    pooled = tmp_path / "pooled.jsonl"
    pooled.write_text("".join(reversed(parts)))
    whole = pairs(tmp_path / "whole.jsonl", tmp_path / "whole.jsonl")
    assert pairs(pooled, pooled) == whole
    assert cell(whole, "prior", "all", "all")["groups"] == 20


def test_a_constant_predictor_is_not_kept(tmp_path: Path) -> None:
    """A p50 that is the same everywhere would give every run time back from its errors."""
    pred, out = tmp_path / "pred.jsonl", tmp_path / "e.jsonl"
    predictions(pred)
    with pytest.raises(scored.ScoredError, match="median predicts the same on every example"):
        scored.write_errors(pred, out, ["good", "median"])
    assert not out.exists()
    with pytest.raises(scored.ScoredError, match="no scored examples of absent"):
        scored.write_errors(pred, out, ["good", "absent"])
    with pytest.raises(scored.ScoredError, match="no predictor"):
        scored.write_errors(pred, out, [])


def test_gzip_errors_files_are_the_same_bytes_on_a_rerun(tmp_path: Path) -> None:
    pred = tmp_path / "pred.jsonl"
    predictions(pred)
    scored.write_errors(pred, tmp_path / "a.jsonl.gz", KEEP)
    scored.write_errors(pred, tmp_path / "b.jsonl.gz", KEEP)
    assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()
    # the mode of any file written here (a temporary file's 0600 would not be)
    (tmp_path / "plain").write_text("")
    modes = {(tmp_path / n).stat().st_mode & 0o777 for n in ("a.jsonl.gz", "plain")}
    assert len(modes) == 1


@pytest.mark.parametrize(("content", "message"), [
    (b"{not json\n", r"x\.jsonl:1: not JSON"),
    (b'{"predictor": "a"}\n', r"x\.jsonl:1: a scored example without its fields"),
    (b'["a list"]\n', r"x\.jsonl:1: not a scored example"),
    (b'\n{"predictor": "a", "key": "k", "repo": "0a1b2c3d4e5f", "subset": "warm", '
     b'"conclusion": "success", "prior": [0.1, 1], "none": [0.2]}\n',
     r"x\.jsonl:2: a scored example without its fields"),
    (b'{"predictor": "a", "key": "k", "repo": "owner/name", "subset": "warm", '
     b'"conclusion": "success", "prior": [0.1, 1], "none": [0.2, 0]}\n',
     r"x\.jsonl:1: a scored example without its fields"),  # not a digest
    (b'{"predictor": "a", "key": "k", "repo": "0a1b2c3d4e5f", "subset": "warm", '
     b'"conclusion": "success", "prior": [-0.1, 1], "none": [0.2, 3]}\n',
     r"x\.jsonl:1: a scored example without its fields"),
    (b'{"predictor": "a", "key": "k", "repo": "r", "subset": "warm", "conclusion": "",'
     b' "runtime_s": 60, "prior": [1, "x", 3], "none": [1, 2, 3]}\n',
     r"x\.jsonl:1: a scored example without its fields"),
    (b"", r"x\.jsonl: no scored examples of a"),
    (b"\xff\xfe not text\n", r"x\.jsonl: cannot be read"),
    (gzip.compress(GOOD * 500)[:60], r"x\.jsonl: cannot be read"),  # cut short
    (b"\x1f\x8b but not gzip", r"x\.jsonl: cannot be read"),
])
def test_bad_scored_files_name_the_file_and_line(tmp_path: Path, content: bytes,
                                                 message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(scored.ScoredError, match=message):
        scored.load(path, "a")


def test_missing_files_two_predictors_and_the_output_path(tmp_path: Path) -> None:
    with pytest.raises(scored.ScoredError, match="absent.jsonl: cannot be read"):
        scored.load(tmp_path / "absent.jsonl", None)
    with pytest.raises(scored.ScoredError, match="cannot be read"):
        scored.load(tmp_path, None)  # a folder
    pred = tmp_path / "pred.jsonl"
    predictions(pred)
    with pytest.raises(scored.ScoredError, match="holds bad, good, median: name the one"):
        scored.load(pred, None)
    kept = tmp_path / "e.jsonl"
    scored.write_errors(pred, kept, KEEP)
    with pytest.raises(scored.ScoredError, match=r"e\.jsonl:1: not a predictions file's row"):
        scored.write_errors(kept, tmp_path / "e2.jsonl", KEEP)
    assert not (tmp_path / "e2.jsonl").exists()
    before = pred.read_bytes()
    with pytest.raises(scored.ScoredError, match="would replace its predictions file"):
        scored.write_errors(pred, pred, KEEP)
    assert pred.read_bytes() == before
    with pytest.raises(scored.ScoredError, match="cannot be written"):
        scored.write_errors(pred, pred / "under_a_file.jsonl", KEEP)
    with pytest.raises(scored.ScoredError, match="cannot be written"):
        scored.write_errors(pred, tmp_path, KEEP)  # a folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.jsonl", "pred.jsonl"]
