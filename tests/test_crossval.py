"""Cross-validation by repository (``laser-ci eval --folds K``): fold assignment, band
metrics and paired intervals on hand-computed cases, the command on the tiny fixture
folder, the cards it writes and the default chosen from them."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from gha_mini import MINI

from laser_ci.evaluation.folds import assign_folds, fold_of, inner_fold
from laser_ci.predictors.base import Runtime
from laser_ci.training import metrics
from laser_ci.training.example import Example, split_of

# --- folds -----------------------------------------------------------------------------------

# (repo, h % 100 with h = int(sha256(repo)[:8], 16), fold for K = 3, 5, 10)
FOLD_TABLE = [
    ("acme/gadgets", 3, (0, 0, 0)),
    ("octo/matrix-lib", 17, (0, 0, 1)),
    ("acme/widgets", 36, (1, 1, 3)),
    ("broken/yaml-repo", 43, (1, 2, 4)),
    ("octo/reusable", 77, (2, 3, 7)),
    ("tiny/collected", 85, (2, 4, 8)),
    ("torvalds/linux", 95, (2, 4, 9)),
]


@pytest.mark.parametrize(("repo", "h100", "folds"), FOLD_TABLE)
def test_fold_of_table(repo: str, h100: int, folds: tuple[int, int, int]) -> None:
    assert int(hashlib.sha256(repo.encode()).hexdigest()[:8], 16) % 100 == h100
    assert tuple(fold_of(repo, k) for k in (3, 5, 10)) == folds
    assert (fold_of(repo, 5) == 0) == (split_of(repo) == "val") == (h100 < 20)


def test_every_repository_in_exactly_one_fold() -> None:
    repos = [f"owner{i}/repo-{i * 7919 % 1000}" for i in range(2000)]
    for k in (3, 5, 7, 10):
        folds = assign_folds(repos + repos[:50], k)  # repeats: still one entry each
        assert set(folds) == set(repos)
        members = {f: {r for r, g in folds.items() if g == f} for f in range(k)}
        assert set().union(*members.values()) == set(repos)
        assert sum(len(m) for m in members.values()) == len(repos)  # disjoint
        assert all(len(m) > len(repos) / k / 2 for m in members.values())  # none near empty
        assert all(fold_of(r, k) == folds[r] for r in repos)  # stable
    assert {r for r in repos if fold_of(r, 5) == 0} == {r for r in repos if split_of(r) == "val"}
    assert [inner_fold(f, 5) for f in range(5)] == [1, 2, 3, 4, 0]
    for bad in (1, 101):
        with pytest.raises(ValueError):
            fold_of("a/b", bad)


# --- band metrics ----------------------------------------------------------------------------


def test_band_metrics_hand_computed() -> None:
    p10, p90 = [10.0, 10.0, 25.0], [100.0, 100.0, 100.0]
    true = [50.0, 5.0, 200.0]
    # inside: ln 10; below by ln 2: ln 10 + 10 ln 2; above by ln 2 (band 25-100): ln 4 + 10 ln 2
    expected = (math.log(10) + (math.log(10) + 10 * math.log(2))
                + (math.log(4) + 10 * math.log(2))) / 3
    assert metrics.interval_score(p10, p90, true) == pytest.approx(expected)
    assert metrics.width_ratio(p10, p90) == pytest.approx(10.0)  # median of 10, 10, 4
    assert metrics.coverage(p10, p90, true) == pytest.approx(1 / 3)
    # seconds are clipped to >= 1 like every other metric: a 0.5 s band bottom is 1 s
    assert metrics.width_ratio([0.5], [8.0]) == pytest.approx(8.0)
    assert metrics.interval_score([0.5], [8.0], [0.1]) == pytest.approx(math.log(8))
    assert math.isnan(metrics.interval_score([], [], []))
    preds = [Runtime(a, math.sqrt(a * b), b) for a, b in zip(p10, p90, strict=True)]
    m = metrics.compute(preds, true, bands=True)
    assert m["interval_score"] == pytest.approx(expected) and m["width"] == pytest.approx(10.0)
    assert "width" not in metrics.compute(preds, true)  # plain eval keeps its keys
    point = [Runtime(5.0, 5.0, 5.0)]
    assert metrics.compute(point, [5.0], bands=True)["interval_score"] is None


# --- paired intervals ------------------------------------------------------------------------


def _ex(repo: str, runtime: float, conclusion: str = "success") -> Example:
    return Example(text=f"task: workflow\nrepo: {repo}\n", runtime_s=runtime, repo=repo,
                   workflow_path=".github/workflows/ci.yml", conclusion=conclusion,
                   kind="workflow", commit_date="2023-01-01T00:00:00Z", run_id=repo + str(runtime),
                   sha="0")


def test_paired_differences_on_a_constructed_case() -> None:
    from laser_ci.evaluation.crossval import paired
    from laser_ci.evaluation.cv_report import versus

    e = math.e
    examples = [_ex("r/one", 100.0), _ex("r/one", 100.0, "failure"),
                _ex("r/two", 100.0), _ex("r/two", 100.0, "failure")]
    # a: exact in r/one, off by e in r/two; b: off by e in r/one, exact in r/two;
    # c: off by e everywhere
    a = [Runtime(1, 100.0, 1e4), Runtime(1, 100.0, 1e4), Runtime(1, 100 * e, 1e4),
         Runtime(1, 100 * e, 1e4)]
    b = [Runtime(1, 100 * e, 1e4), Runtime(1, 100 * e, 1e4), Runtime(1, 100.0, 1e4),
         Runtime(1, 100.0, 1e4)]
    c = [Runtime(1, 100 / e, 1e4)] * 4
    pairs = paired({"a": a, "b": b, "c": c}, None, examples, "none", n_boot=500)
    got = {(p["a"], p["b"], p["runs"]): p for p in pairs}
    assert len(pairs) == 3 * 2  # 3 pairs x (success, all)
    ab = got[("a", "b", "all")]
    # per repository the mean difference is -1 (r/one) and +1 (r/two): overall 0, and a
    # resample of repositories averages to -1, 0 or +1
    assert (ab["diff"], ab["lo"], ab["hi"], ab["groups"], ab["n"]) == (
        pytest.approx(0.0), pytest.approx(-1.0), pytest.approx(1.0), 2, 4)
    ac = got[("a", "c", "success")]  # a is better by 1 in r/one, equal in r/two
    assert ac["n"] == 2 and ac["diff"] == pytest.approx(-0.5)
    assert (ac["lo"], ac["hi"]) == (pytest.approx(-1.0), pytest.approx(0.0))
    report = {"paired": {"pairs": pairs}}
    ca = versus(report, "c", "a", "none", "all", "success")  # the other order: mirrored
    assert (ca["diff"], ca["lo"], ca["hi"]) == (pytest.approx(0.5), pytest.approx(0.0),
                                                pytest.approx(1.0))
    assert versus(report, "a", "zzz", "none", "all", "all") is None


# --- the command on the fixture folder --------------------------------------------------------


def run_eval(*args: str) -> str:
    from laser_ci.cli import main

    result = CliRunner().invoke(main, ["eval", str(MINI), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout  # stderr: the progress lines


def test_cv_trains_without_the_held_out_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("lightgbm")
    import laser_ci.training.baselines as recipe
    from laser_ci.evaluation.crossval import cross_validate
    from laser_ci.training.examples import load_examples

    seen: list[tuple[set[str], set[str]]] = []
    real = recipe.fit_baselines

    def spy(train, val, **kw):
        seen.append(({e.repo for e in train}, {e.repo for e in val}))
        return real(train, val, **kw)

    monkeypatch.setattr(recipe, "fit_baselines", spy)
    examples = load_examples(MINI, cache=False)
    report, preds, _ = cross_validate(examples, 5, ["tabular", "history-median"], history="prior",
                                   progress=False)
    repos = {e.repo for e in examples}
    assert len(seen) == 5
    for f, (train, val) in enumerate(seen):
        held = {r for r in repos if fold_of(r, 5) == f}
        assert not (train | val) & held
        assert val == {r for r in repos if fold_of(r, 5) == inner_fold(f, 5)}
        assert train | val | held == repos
    folds = report["cv"]["folds"]
    assert [r["fold"] for r in folds] == list(range(5))
    assert sum(r["n"] for r in folds) == report["n"] == 15
    assert sum(r["repos"] for r in folds) == report["repos"] == len(repos)
    assert len(preds["tabular"]) == 15


def test_eval_folds_json_and_table() -> None:
    pytest.importorskip("lightgbm")
    report = json.loads(run_eval("--folds", "--history", "prior", "--format", "json"))
    assert report["split"] == "cv" and report["folds"] == 5 and report["history"] == "prior"
    assert set(report["predictors"]) == {"median", "tabular", "text-linear", "history-median",
                                         "history-recent"}
    tab = report["predictors"]["tabular"]
    for block in (tab["all"], tab["success"], tab["subsets"]["warm"]["success"],
                  tab["regimes"]["none"]["subsets"]["warm-changed"]["all"]):
        assert {"log_mae", "within_2x", "coverage", "width", "interval_score"} <= set(block)
    assert tab["all"]["n"] == 15 and tab["success"]["n"] == 10
    assert len(tab["fold_seconds"]) == 5 and {"fit", "predict"} <= set(tab["fold_seconds"][0])
    pairs = report["paired"]["pairs"]
    assert report["paired"]["reference"] in report["predictors"]
    assert {(p["regime"], p["subset"]) for p in pairs} == {
        ("prior", "all"), ("prior", "warm"), ("prior", "warm-changed"), ("prior", "cold"),
        ("none", "all"), ("none", "warm"), ("none", "warm-changed")}
    assert len(pairs) == 7 * 2 * 10  # (regime, subset) x runs x pairs of 5 predictors
    assert all({"diff", "lo", "hi", "groups", "n"} <= set(p) for p in pairs)
    table = run_eval("--folds", "5", "--history", "prior", "--predictor", "tabular",
                     "--predictor", "history-median", "--reference", "tabular")
    assert "cv: 5 folds by repository" in table and "interval score" in table
    assert "log-MAE minus tabular's" in table and "wall time per fold" in table
    assert "warm-changed: 1 examples" in table
    job = json.loads(run_eval("--folds", "3", "--kind", "job", "--predictor", "text-linear",
                              "--format", "json"))
    assert job["folds"] == 3 and job["kind"] == "job" and job["history"] == "none"
    assert job["paired"]["pairs"] == [] and "subsets" not in job


def test_predictions_file_pairs_two_runs(tmp_path: Path) -> None:
    """--predictions writes every scored example once per predictor; benchmarks/paired_runs.py
    pairs two runs' files by example and gives the report's own paired differences."""
    pytest.importorskip("lightgbm")
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "paired_runs", Path(__file__).resolve().parent.parent / "benchmarks" / "paired_runs.py")
    assert spec is not None and spec.loader is not None
    paired_runs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(paired_runs)

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    report = json.loads(run_eval("--folds", "5", "--history", "prior", "--predictor", "tabular",
                                 "--predictor", "history-median", "--format", "json",
                                 "--predictions", str(a)))
    run_eval("--folds", "5", "--history", "prior", "--predictor", "tabular", "--format", "json",
             "--predictions", str(b))
    rows = [json.loads(line) for line in a.read_text().splitlines()]
    assert len(rows) == 2 * 15 and len({r["key"] for r in rows}) == 15
    assert {r["subset"] for r in rows} <= {"cold", "warm", "warm-changed"}
    assert all(r["prior"][0] <= r["prior"][1] <= r["prior"][2] for r in rows)
    same = paired_runs.compare(paired_runs.load(str(a), "tabular"), paired_runs.load(str(b), None))
    assert same and all(r["diff"] == 0 and r["a"] == r["b"] for r in same)
    cross = paired_runs.compare(paired_runs.load(str(b), None),
                                paired_runs.load(str(a), "history-median"))
    ours = {(r["regime"], r["subset"], r["runs"]): r for r in cross}
    for p in report["paired"]["pairs"]:
        sign = 1 if (p["a"], p["b"]) == ("tabular", "history-median") else -1
        mine = ours[(p["regime"], p["subset"], p["runs"])]
        assert mine["n"] == p["n"]
        assert mine["diff"] == pytest.approx(sign * p["diff"])
    with pytest.raises(SystemExit, match="name the one to use"):
        paired_runs.load(str(a), None)
    # one fold's runs: its repositories' examples only, every fold's together the whole
    per_fold = [paired_runs.only_fold(paired_runs.load(str(b), None), f, 5) for f in range(5)]
    assert sum(len(rows) for rows in per_fold) == 15
    assert all(fold_of(r.repo, 5) == f for f, rows in enumerate(per_fold)
               for r in rows.values())


def test_eval_folds_errors(tmp_path: Path) -> None:
    from laser_ci.cli import main

    def fails(*args: str) -> str:
        r = CliRunner().invoke(main, ["eval", str(MINI), *args])
        assert r.exit_code != 0
        return r.output

    assert "at least 3" in fails("--folds", "2")
    assert "no --split" in fails("--folds", "--split", "val")
    assert "only go with --folds" in fails("--write-cards")
    assert "only go with --folds" in fails("--predictions", str(tmp_path / "p.jsonl"))
    assert "needs --lm-base" in fails("--folds", "--predictor", "laser-lm")
    assert "unknown predictor" in fails("--folds", "--predictor", "nope")
    r = CliRunner().invoke(main, ["eval", str(MINI), "--folds", "--predictor", "nope"])
    assert r.exit_code == 2 and "Invalid value for --predictor" in r.output  # a usage error
    assert "pretrained on the unlabeled corpus only" in fails(
        "--folds", "--predictor", "laser-lm", "--lm-base", str(tmp_path))
    assert "only go with --folds" in fails("--lm-ship", str(tmp_path / "s"))
    assert "No such option" in fails("--folds", "--lm-warm-anchor", "recent")  # the recipe's
    labeled = tmp_path / "labeled"
    labeled.mkdir()
    (labeled / "laser_pretrain.json").write_text('{"pretrain_only": true, "labels": true}')
    assert "the base saw labels" in fails(
        "--folds", "--predictor", "laser-lm", "--lm-base", str(labeled))


@pytest.mark.parametrize(("own", "ok"), [
    (None, False),  # a folder from before the setting: median
    ("median", False),
    ("recent", True),
])
def test_recipe_refuses_a_model_folder_base_of_another_warm_anchor(tmp_path: Path,
                                                                   own: str | None,
                                                                   ok: bool) -> None:
    """A model-folder base keeps its warm outputs when fine-tuned: one over another history
    figure than the recipe's recent median is refused."""
    from laser_ci.evaluation.lm_recipe import CVError, LMRecipe
    from laser_ci.predictors.lm import FORMAT_VERSION

    (tmp_path / "laser_pretrain.json").write_text('{"pretrain_only": true, "labels": false}')
    prompt = {"max_prompt_tokens": 256, **({"warm_anchor": own} if own else {})}
    (tmp_path / "laser.json").write_text(json.dumps({
        "format_version": FORMAT_VERSION, "files": {"model.onnx": "", "tokenizer.json": ""},
        "prompt": prompt}))
    if ok:
        assert LMRecipe(tmp_path).cfg.warm_anchor == "recent"
    else:
        with pytest.raises(CVError, match="warm outputs"):
            LMRecipe(tmp_path)


# --- cards and the default -----------------------------------------------------------------------


def test_write_cards_merges_reports(tmp_path: Path) -> None:
    pytest.importorskip("lightgbm")
    from laser_ci.predictors.baselines import MedianPredictor
    from laser_ci.predictors.choice import cv_scores

    model = tmp_path / "model"
    MedianPredictor(5.0, 3.0, 7.0).save(model / "baselines")
    card = {"best": "median", "predictors": {"median": {"val_log_mae": 2.0}}}
    (model / "baselines" / "card.json").write_text(json.dumps(card))
    run_eval("--folds", "--history", "prior", "--predictor", "tabular", "--predictor",
             "history-median", "--write-cards", "--model", str(model))
    run_eval("--folds", "--kind", "job", "--predictor", "tabular", "--write-cards",
             "--model", str(model))
    card = json.loads((model / "baselines" / "card.json").read_text())
    assert card["predictors"] == {"median": {"val_log_mae": 2.0}}  # the val scores stay
    cv = card["cv"]
    assert cv["folds"] == 5 and set(cv["reports"]) == {"workflow/prior", "job/none"}
    assert "--folds 5 --kind job" in cv["reports"]["job/none"]["command"]
    tab = cv["predictors"]["tabular"]
    prior = cv["reports"]["workflow/prior"]["predictors"]["tabular"]
    assert tab["log_mae"] == prior["regimes"]["none"]["all"]["log_mae"]
    assert tab["prior_log_mae"] == prior["all"]["log_mae"]
    assert tab["prior_warm_changed_success_log_mae"] == \
        prior["subsets"]["warm-changed"]["success"]["log_mae"]
    assert "job_log_mae" in tab and "prior_interval_score" in tab
    assert "job_log_mae" not in cv["predictors"]["history-median"]
    assert set(cv_scores(card)) == {"tabular", "history-median"}
    # another K starts the block afresh
    run_eval("--folds", "3", "--predictor", "tabular", "--write-cards", "--model", str(model))
    cv = json.loads((model / "baselines" / "card.json").read_text())["cv"]
    assert cv["folds"] == 3 and set(cv["reports"]) == {"workflow/none"}


def _card(folder: Path, predictors: dict | None = None, cv: dict | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    card: dict = {"predictors": predictors or {}}
    if cv is not None:
        card["cv"] = {"folds": 5, "predictors": cv}
    (folder / "card.json").write_text(json.dumps(card))


def test_default_is_chosen_from_cross_validated_scores(tmp_path: Path) -> None:
    from laser_ci.predictors.choice import best_name

    names = {"tabular", "text-linear", "laser-lm"}
    # without cv: val decides (today's behaviour)
    _card(tmp_path / "a" / "baselines", {"tabular": {"val_log_mae": 0.9},
                                         "text-linear": {"val_log_mae": 1.4}})
    _card(tmp_path / "a" / "lm", {"laser-lm": {"val_log_mae": 0.8}})
    assert best_name(tmp_path / "a", names) == "laser-lm"
    # a family with cv scores beats one without, whatever the val scores say
    _card(tmp_path / "b" / "baselines", {"tabular": {"val_log_mae": 0.9}},
          cv={"tabular": {"log_mae": 1.1, "prior_log_mae": 0.5}})
    _card(tmp_path / "b" / "lm", {"laser-lm": {"val_log_mae": 0.1}})
    assert best_name(tmp_path / "b", names) == "tabular"
    # both with cv: the lower cv log_mae, ties by prior_log_mae
    _card(tmp_path / "b" / "lm", {"laser-lm": {"val_log_mae": 0.1}},
          cv={"laser-lm": {"log_mae": 1.0, "prior_log_mae": 0.6}})
    assert best_name(tmp_path / "b", names) == "laser-lm"
    _card(tmp_path / "b" / "lm", {"laser-lm": {"val_log_mae": 0.1}},
          cv={"laser-lm": {"log_mae": 1.1, "prior_log_mae": 0.6}})
    assert best_name(tmp_path / "b", names) == "tabular"
    # a lower cold score is not enough: the language model must not lag the baselines on any
    # headline row their cards hold (here warm), nor lack it (here per job); rows only its
    # own card holds are not compared
    lead = {"tabular": {"log_mae": 1.1, "prior_warm_log_mae": 0.40, "job_log_mae": 1.2}}
    _card(tmp_path / "d" / "baselines", cv=lead)
    _card(tmp_path / "d" / "lm", cv={"laser-lm": {"log_mae": 1.0, "prior_warm_log_mae": 0.41,
                                                  "job_log_mae": 1.1}})
    assert best_name(tmp_path / "d", names) == "tabular"
    _card(tmp_path / "d" / "lm", cv={"laser-lm": {"log_mae": 1.0, "prior_warm_log_mae": 0.40}})
    assert best_name(tmp_path / "d", names) == "tabular"  # no per-job score
    _card(tmp_path / "d" / "lm", cv={"laser-lm": {"log_mae": 1.0, "prior_warm_log_mae": 0.40,
                                                  "job_log_mae": 1.2,
                                                  "prior_warm_changed_log_mae": 0.5}})
    assert best_name(tmp_path / "d", names) == "laser-lm"  # level on warm and per job: enough
    # the best baseline per row, whichever baseline it is (warm: history-median's 0.39); the
    # baselines tie cold, and the name decides between them
    lead["history-median"] = {"log_mae": 1.1, "prior_warm_log_mae": 0.39}
    _card(tmp_path / "d" / "baselines", cv=lead)
    assert best_name(tmp_path / "d", names | {"history-median"}) == "history-median"
    # a predictor without cv in a card that has some ranks after those with
    _card(tmp_path / "c" / "baselines", {"tabular": {"val_log_mae": 0.9},
                                         "text-linear": {"val_log_mae": 0.1}},
          cv={"tabular": {"log_mae": 1.5}})
    assert best_name(tmp_path / "c", names) == "tabular"
    assert best_name(tmp_path / "c", {"text-linear"}) == "text-linear"


# --- the language model per fold ------------------------------------------------------------------


def test_lm_cross_validation_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tiny base pretrained on the fixture's corpus alone, fine-tuned per fold by the
    shipped recipe, exported to int8, scored on the held-out fold, with its card written;
    then reused, and shipped on every repository."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("optimum.exporters.onnx")
    pytest.importorskip("lightgbm")
    from laser_ci.cli import main

    out = tmp_path / "base"
    r = CliRunner().invoke(main, [
        "train", "--data", str(MINI), "--out", str(out), "--size", "tiny",
        "--pretrain-steps", "3", "--vocab-size", "300", "--pretrain-seq-len", "32",
        "--device", "cpu"])
    assert r.exit_code == 0, r.output
    marker = json.loads((out / "pretrained" / "laser_pretrain.json").read_text())
    assert marker["pretrain_only"] is True and marker["labels"] is False
    assert marker["corpus"]["split"] == "all" and marker["pretrain"]["steps"] == 3
    assert marker["seq_len"] == 32
    report = json.loads((out / "train_report.json").read_text())
    assert "finetune" not in report and "data" not in report  # no labeled example read

    import laser_ci.training.baselines as baselines
    import laser_ci.training.finetune as finetune

    seen: list[set[str]] = []
    tabulars: list = []
    references: list = []
    real = finetune.finetune_examples
    real_fit = baselines.fit_baselines

    def spy(base, train_ex, val_ex, out_dir, cfg, **kw):
        seen.append({e.repo for e in (*train_ex, *val_ex)})
        references.append(kw.get("reference_model"))
        return real(base, train_ex, val_ex, out_dir, cfg, **kw)

    def fit_spy(*a, **kw):
        fit = real_fit(*a, **kw)
        if "tabular" in fit.predictors:
            tabulars.append(fit.predictors["tabular"])
        return fit

    monkeypatch.setattr(finetune, "finetune_examples", spy)
    monkeypatch.setattr(baselines, "fit_baselines", fit_spy)
    model = tmp_path / "model"
    (model / "lm").mkdir(parents=True)
    (model / "lm" / "laser.json").write_text("{}")
    keep = tmp_path / "folds"
    common = ("--folds", "3", "--history", "prior", "--predictor", "laser-lm",
              "--lm-base", str(out / "pretrained"), "--lm-device", "cpu", "--lm-threads", "1",
              "--lm-keep", str(keep), "--jobs", "1", "--format", "json")
    res = json.loads(run_eval(*common, "--predictor", "tabular", "--write-cards",
                              "--model", str(model)))
    lm = res["predictors"]["laser-lm"]
    assert lm["all"]["n"] == 15 and lm["subsets"]["warm"]["all"]["n"] == 8
    assert [s["fit"] > 0 for s in lm["fold_seconds"]] == [True] * 3
    assert res["lm"]["pretrained"]["labels"] is False and res["lm"]["config"]["epochs"] == 1
    config = res["lm"]["config"]  # the shipped recipe's prompt
    assert (config["outcome"], config["cold_reference"]) == (True, "tabular")
    assert (config["layout"], config["warm_anchor"]) == ("shared-prefix", "recent")
    assert res["lm"]["decoding"] == {"exact_last": True, "calibrate_bands": True,
                                     "shrink": True}
    repos = {"acme/gadgets", "octo/matrix-lib", "acme/widgets", "broken/yaml-repo",
             "octo/reusable", "tiny/collected"}
    assert len(seen) == 3
    # each fold's tabular model is trained once and is the reference its language model ships
    assert len(tabulars) == 3
    assert [r is tab for r, tab in zip(references, tabulars, strict=True)] == [True] * 3
    for f in range(3):  # no label of the held-out fold reaches its model
        held = {r for r in repos if fold_of(r, 3) == f}
        assert held and not seen[f] & held and seen[f] | held == repos
        log = json.loads((keep / f"fold{f}" / "train_report.json").read_text())
        assert log["finetune"]["history"]
        assert 0 < log["data"]["with_reference"] <= log["data"]["train"]
        assert (keep / f"fold{f}" / "model.onnx").is_file()
        assert not (keep / f"fold{f}" / "weights.safetensors").exists()
        cfg = json.loads((keep / f"fold{f}" / "laser.json").read_text())
        assert cfg["prompt"]["outcome"] is True and cfg["prompt"]["cold_reference"] == "tabular"
        assert "reference/tabular.json" in cfg["files"]
        decoding = cfg["decoding"]  # fit on the fold's val part
        assert set(decoding["band_scale"]) <= {"warm", "changed", "cold"}
        assert decoding["band_scale"] and decoding["band_calibration"]["examples"] > 0
        assert set(decoding.get("shrink", {})) <= set(decoding["band_scale"])
        assert all(0 <= a <= 1 for a in decoding.get("shrink", {}).values())
    card = json.loads((model / "lm" / "card.json").read_text())
    assert set(card["cv"]["predictors"]) == {"laser-lm"}
    assert "unlabeled workflow corpus" in card["cv"]["note"]
    assert card["cv"]["predictors"]["laser-lm"]["prior_log_mae"] == lm["all"]["log_mae"]

    # kept folds are reused: nothing fine-tuned again, the same scores
    again = json.loads(run_eval(*common, "--lm-reuse"))
    assert len(seen) == 3
    assert again["predictors"]["laser-lm"]["all"] == lm["all"]
    # a kept fold of another recipe is not reused as this one's
    report_path = keep / "fold1" / "train_report.json"
    kept = json.loads(report_path.read_text())
    report_path.write_text(json.dumps({**kept, "config": {**kept["config"], "layout": "serial"}}))
    r = CliRunner().invoke(main, ["eval", str(MINI), *common, "--lm-reuse"])
    assert r.exit_code != 0 and "trained with other layout than this recipe" in r.output
    report_path.write_text(json.dumps(kept))

    # the recipe shipped: trained on every repository but fold 0's (which picks the epoch),
    # with its weights and reference
    ship = tmp_path / "ship"
    run_eval(*common, "--lm-reuse", "--lm-ship", str(ship))
    assert len(seen) == 4 and seen[3] == repos  # the shipped model, fold 0's as val
    shipped = json.loads((ship / "laser.json").read_text())
    assert shipped["prompt"]["layout"] == "shared-prefix" and shipped["prompt"]["outcome"]
    from laser_ci.training.examples import load_examples

    assert shipped["decoding"]["exact_last"] is True and shipped["decoding"]["band_scale"]
    assert shipped["decoding"]["band_calibration"]["examples"] == len(
        [e for e in load_examples(MINI, cache=False) if fold_of(e.repo, 3) == 0])
    assert shipped["training"]["recipe"]["config"]["layout"] == "shared-prefix"
    assert {"weights.safetensors", "hf_config.json", "reference/tabular.json"} <= set(
        shipped["files"])
    from laser_ci.predictors.lm import LaserModel

    (pred,) = LaserModel(ship).predict(
        ["task: job\nworkflow: CI\njob: a\nruns-on: x\nsteps:\n- run: make\n"])
    assert 0 < pred.p10 <= pred.p50 <= pred.p90
    # `laser-ci finetune` from the shipped model keeps its prompts: layout, outcome line and
    # the reference model (cold texts read its p50 in training too)
    ft = tmp_path / "ft"
    r = CliRunner().invoke(main, [
        "finetune", "--data", str(MINI), "--base", str(ship), "--out", str(ft), "--epochs", "1",
        "--device", "cpu", "--repo", "tiny/collected", "--minutes", "1", "--threads", "1"])
    assert r.exit_code == 0, r.output
    adapted = json.loads((ft / "laser.json").read_text())
    assert adapted["prompt"] == shipped["prompt"]
    assert "reference/tabular.json" in adapted["files"]
    log = json.loads((ft / "train_report.json").read_text())
    assert log["config"]["layout"] == "shared-prefix" and log["config"]["outcome"] is True
    assert LaserModel(ft).predict(["task: job\nworkflow: CI\njob: a\nruns-on: x\n"])[0].p50 > 0


def test_folds_in_parallel_give_the_same_report() -> None:
    pytest.importorskip("lightgbm")
    from laser_ci.evaluation.crossval import cross_validate
    from laser_ci.training.examples import load_examples

    examples = load_examples(MINI, cache=False)
    one, p1, _ = cross_validate(examples, 4, ["text-linear", "median"], progress=False, jobs=1)
    two, p2, _ = cross_validate(examples, 4, ["text-linear", "median"], progress=False, jobs=2)
    assert p1 == p2 and one["cv"]["jobs"] == 1 and two["cv"]["jobs"] == 2
    for name in p1:
        a, b = one["predictors"][name], two["predictors"][name]
        assert (a["all"], a["success"]) == (b["all"], b["success"])
    assert one["paired"] == two["paired"]


@pytest.mark.parametrize(("folds", "fold", "k", "train", "val"), [
    ([0, 1, 2, 0, 1], 0, 3, ["c"], ["b", "e"]),
    ([0, 1, 2, 0, 1], 2, 3, ["b", "e"], ["a", "d"]),  # the inner fold wraps round
    ([0, 1, 2, 3, 4], 1, 5, ["a", "d", "e"], ["c"]),
])
def test_fold_parts_table(folds: list[int], fold: int, k: int, train: list[str],
                          val: list[str]) -> None:
    from laser_ci.evaluation.folds import fold_parts

    assert fold_parts(list("abcde"), folds, fold, k) == (train, val)


@pytest.mark.parametrize(("prompt", "anchor"), [
    ({"max_prompt_tokens": 256}, "median"),  # a folder from before the setting
    ({"max_prompt_tokens": 256, "warm_anchor": "recent"}, "recent"),
])
def test_a_model_folders_prompt_keeps_its_warm_anchor(prompt: dict, anchor: str) -> None:
    """``laser-ci finetune`` adapts a folder with its own prompt settings (config.base_prompt),
    the warm anchor among them, and the PromptCodec they build reads it."""
    pytest.importorskip("torch")
    from laser_ci.training.config import TrainConfig, base_prompt

    got = base_prompt({"prompt": prompt})
    assert got["warm_anchor"] == anchor
    assert TrainConfig(**got).warm_anchor == anchor
