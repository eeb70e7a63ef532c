"""benchmarks/pool_points.py: kept folds' rows from their errors, recorded folds as given,
the runs-weighted mean over both, and a fold counted twice refused."""

from __future__ import annotations

import json
from pathlib import Path

import bench
import pytest

from laser_ci.training.folds import fold_of, repo_digest

pool_points = bench.load("pool_points")
PREDICTORS = ["a", "b"]


def repo_in_fold(fold: int) -> str:
    """A repository name whose fold of 5 is ``fold``."""
    return next(f"owner/r{i}" for i in range(1000) if fold_of(f"owner/r{i}", 5) == fold)


def errors_file(path: Path, fold: int) -> Path:
    """Three runs of one repository of ``fold``: cold, warm and warm-changed. ``a``'s
    errors: prior 0.1, 0.2, 0.3 and none 1.0, 2.0, 3.0; ``b``'s twice those."""
    repo = repo_digest(repo_in_fold(fold))[:12]
    lines = []
    for p, scale in (("a", 1.0), ("b", 2.0)):
        for i, subset in enumerate(("cold", "warm", "warm-changed")):
            lines.append({"key": f"{fold}{i}", "repo": repo, "subset": subset,
                          "conclusion": "success", "predictor": p,
                          "prior": [scale * 0.1 * (i + 1), 1], "none": [scale * (i + 1), 0]})
    path.write_text("".join(json.dumps(row) + "\n" for row in lines))
    return path


def recorded_file(path: Path, entries: list[dict]) -> Path:
    path.write_text(json.dumps({"about": "test", "entries": entries}))
    return path


def entry(folds: list[int], runs: int, a: float, b: float | None) -> dict:
    row = {"runs": runs, "a": a, **({"b": b} if b is not None else {})}
    return {"folds": folds, "rows": {"warm": row, "workflow changed": row, "cold": row}}


@pytest.mark.parametrize(
    ("row", "runs", "a", "b"),
    [("warm", 2, 0.25, 0.5),  # warm includes warm-changed: (0.2 + 0.3) / 2
     ("workflow changed", 1, 0.3, 0.6),
     ("cold", 3, 2.0, 4.0)],  # every run, scored without history
)
def test_kept_rows(tmp_path: Path, row: str, runs: int, a: float, b: float) -> None:
    e = pool_points.kept(str(errors_file(tmp_path / "k.jsonl", 3)), PREDICTORS, 5)
    assert e.folds == (3,)
    assert e.runs[row] == runs
    assert e.mae[row] == pytest.approx({"a": a, "b": b})


def test_pooled_is_runs_weighted(tmp_path: Path) -> None:
    rec = pool_points.recorded(str(recorded_file(tmp_path / "r.json", [
        entry([0, 1], 6, 1.0, 2.0), entry([2], 2, 3.0, None)])))
    k = pool_points.kept(str(errors_file(tmp_path / "k.jsonl", 4)), PREDICTORS, 5)
    pooled = pool_points.pool([*rec, k], PREDICTORS)
    assert pooled.folds == (0, 1, 2, 4) and pooled.runs["cold"] == 11
    # a: (6 * 1.0 + 2 * 3.0 + 3 * 2.0) / 11; b: missing from one entry, so missing pooled
    assert pooled.mae["cold"] == pytest.approx({"a": 18 / 11})
    assert pooled.mae["warm"]["a"] == pytest.approx((6 * 1.0 + 2 * 3.0 + 2 * 0.25) / 10)


@pytest.mark.parametrize(
    ("entries", "kept_fold"),
    [([entry([0, 1], 5, 1.0, 1.0), entry([1], 5, 1.0, 1.0)], None),  # recorded twice
     ([entry([2], 5, 1.0, 1.0)], 2)],  # recorded and kept
)
def test_a_fold_twice_is_refused(tmp_path: Path, entries: list[dict],
                                 kept_fold: int | None, capsys: pytest.CaptureFixture) -> None:
    files = [str(recorded_file(tmp_path / "r.json", entries))]
    if kept_fold is not None:
        files.append(str(errors_file(tmp_path / "k.jsonl", kept_fold)))
    assert pool_points.main([*files, "--predictor", "a"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: fold ") and "both" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "says"),
    [("{", "r.json"),
     (json.dumps({"entries": [{"folds": [0], "rows": {"warm": {"runs": 1}}}]}),
      "without its fields"),
     (json.dumps({"entries": [{"folds": ["x"], "rows": {}}]}), "without its fields")],
)
def test_bad_recorded_file_is_one_line(tmp_path: Path, text: str, says: str,
                                       capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "r.json").write_text(text)
    assert pool_points.main([str(tmp_path / "r.json"), "--predictor", "a"]) == 1
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_kept_file_without_the_predictor(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    k = errors_file(tmp_path / "k.jsonl", 1)
    assert pool_points.main([str(k), "--predictor", "a", "--predictor", "c"]) == 1
    assert "no scored examples of c" in capsys.readouterr().err


def test_markdown_table(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rec = recorded_file(tmp_path / "r.json", [entry([0], 1, 1.0, None)])
    k = errors_file(tmp_path / "k.jsonl", 1)
    assert pool_points.main([str(rec), str(k), "--predictor", "a", "--predictor", "b",
                             "--markdown"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "| row | entry | folds | runs | a | b |"
    assert "| cold | pooled | 0, 1 | 4 | 1.750 | - |" in out  # (1 * 1.0 + 3 * 2.0) / 4


def test_kept_predictors_on_other_runs_are_refused(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    k = errors_file(tmp_path / "k.jsonl", 1)
    lines = k.read_text().splitlines()
    k.write_text("\n".join(lines[:-1]) + "\n")  # b lost its last run
    assert pool_points.main([str(k), "--predictor", "a", "--predictor", "b"]) == 1
    assert "b scored other runs than a" in capsys.readouterr().err


FOLDS_DIR = Path(__file__).resolve().parent.parent / "benchmarks" / "folds"


# Each kept recipe: its file prefix and its language-model predictor's name.
KEPT_RECIPES = {
    "gemma": "laser-gemma",
    "small": "laser-lm",
    "selfdistill": "laser-lm",
    "shipped": "laser-lm",
    "shippedself": "laser-lm",
}


@pytest.mark.parametrize("recipe", sorted(KEPT_RECIPES))
def test_kept_folds_are_the_folds_their_names_say(recipe: str) -> None:
    """Every kept file of a recipe in benchmarks/folds/ holds one fold, the F of its
    name, and the recipe's kept files together are its five folds, each once (the
    README's commands)."""
    predictors = [KEPT_RECIPES[recipe], "tabular", "history-median"]
    kept = sorted(FOLDS_DIR.glob(f"{recipe}_fold*.jsonl.gz"))
    assert kept, f"no kept fold files of {recipe}"
    entries = []
    for path in kept:
        e = pool_points.kept(str(path), predictors, 5)
        assert e.folds == (int(path.name.removeprefix(f"{recipe}_fold").split(".")[0]),)
        entries.append(e)
    pooled = pool_points.pool(entries, predictors)
    assert pooled.folds == (0, 1, 2, 3, 4)


def test_kept_recipes_score_the_same_runs() -> None:
    """The kept recipes of one fold scored the same held-out runs, so any two pair."""
    for fold in range(5):
        keys = {}
        for recipe, predictor in KEPT_RECIPES.items():
            path = FOLDS_DIR / f"{recipe}_fold{fold}.jsonl.gz"
            keys[recipe] = set(pool_points.load_scored(str(path), predictor))
        first = keys["gemma"]
        assert all(k == first for k in keys.values()), f"fold {fold}"
