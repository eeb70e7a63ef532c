"""Baselines (numpy inference, save/load), features, predictor selection and `laser-ci eval`."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import gha_mini
import numpy as np
import pytest
from click.testing import CliRunner

from laser_ci.predictors.baselines import (
    MedianPredictor,
    TabularPredictor,
    TextLinearPredictor,
    TreeEnsemble,
    analyze,
    bag_vocabulary,
    interval_offsets,
    load_baselines,
    vectorize,
)
from laser_ci.predictors.choice import available_predictors, load_predictor
from laser_ci.predictors.features import extract
from laser_ci.training.examples import Example

MINI = gha_mini.MINI  # written per test run, see tests/gha_mini.py


def text_of(examples: list[Example], run_id: str, kind: str = "workflow") -> str:
    return next(e.text for e in examples if e.run_id == run_id and e.kind == kind)


# --- features ------------------------------------------------------------------------------


def test_features_of_a_single_job(examples: list[Example]) -> None:
    f = extract(text_of(examples, "fixture01", "job"))
    assert f["task_job"] == 1 and f["n_jobs"] == 1 and f["instances"] == 1
    assert f["steps"] == 3 and f["run_steps"] == 1 and f["uses_steps"] == 2
    assert f["uses:actions/setup-java"] == 1 and f["cmd:mvnw"] == 1
    assert f["timeout_max"] == 30 and f["os:ubuntu"] == 1
    assert f["on:push"] == 1 and f["on:pull_request"] == 1 and f["n_triggers"] == 2
    assert f["top:pom.xml"] == 1 and f["ext:.java"] == pytest.approx(math.log1p(600))
    assert f["repo_files_log"] == pytest.approx(math.log1p(812))


def test_features_of_a_workflow(examples: list[Example]) -> None:
    m = extract(text_of(examples, "fixture07"))
    assert m["task_job"] == 0 and m["instances"] == 4 and m["wf_instances"] == 4
    assert m["steps"] == 3 and m["steps_x_inst"] == 12
    assert m["os:ubuntu"] == 2 and m["os:windows"] == 2
    assert m["services"] == 1 and m["matrix_keys_max"] == 2
    assert m["cmd:pip"] == 1 and m["cmd:pytest"] == 1 and m["run_lines"] == 2
    r = extract(text_of(examples, "fixture09"))
    assert r["n_jobs"] == 2 and r["os:macos"] == 1 and r["job_container"] == 1
    assert r["uses:local"] == 1 and r["composite_steps"] == 2 and r["uses:actions/setup-node"] == 1
    assert r["on:workflow_dispatch"] == 1 and r["needs"] == 1
    c = extract(next(e.text for e in examples if e.job_name == "End to end"))
    assert c["runner_cores"] == 8


def test_features_of_raw_fallback_and_junk(examples: list[Example]) -> None:
    f = extract(text_of(examples, "fixture10"))
    assert f["raw"] == 1 and f["uses:actions/checkout"] == 1 and f["n_jobs"] == 0
    for junk in ("", "garbage\n\n- : :\n  run: |\n", "task: job\njob: x\nsteps:\n- {}\n"):
        assert isinstance(extract(junk), dict)


def test_features_read_the_history_block() -> None:
    text = (
        "task: job\nworkflow: CI\nfile: ci.yml\non: push\njob: test\n"
        "history: n=12 median=4.73e+02 p10=3.10e+02 p90=6.00e+02 latest=5.01e+02\n"
        "history-config: changed +1 -1\n+ run: pytest -n 4\n- run: pytest\n"
        "runs-on: ubuntu-latest\nsteps:\n- uses: actions/checkout@v4\n"
    )
    f = extract(text)
    assert f["history_n"] == 12 and f["history_median_log"] == pytest.approx(math.log(473))
    assert f["history_config_changed"] == 1 and f["history_diff_lines"] == 2
    assert f["steps"] == 1 and f["run_steps"] == 0  # diff lines are not steps
    assert extract(text.replace(text.split("\n")[5], "history: none"))["history_none"] == 1


def test_history_block_counts_and_relative_latest() -> None:
    text = ("task: job\njob: t\nhistory: n=3 median=1.00e+02 p10=5.00e+01 p90=2.00e+02 "
            "latest=2.00e+02\nhistory-config: changed +2 -1\n+ a\n+ b\n- c\nruns-on: x\n")
    f = extract(text)
    assert f["history_diff_added"] == 2 and f["history_diff_removed"] == 1
    assert f["history_diff_lines"] == 3
    assert f["history_latest_rel"] == pytest.approx(math.log(2))
    assert f["history_spread_log"] == pytest.approx(math.log(4))


def test_bag_vocabulary_needs_enough_repositories() -> None:
    rows = [{"steps": 1, "uses:a": 1}, {"uses:a": 1, "uses:b": 1}, {"uses:b": 2}]
    assert bag_vocabulary(rows, ["r1", "r2", "r2"], 2) == ["steps", "uses:a"]
    X = vectorize(rows, {"steps": 0, "uses:b": 1})
    assert X.tolist() == [[1, 0], [0, 1], [0, 2]]


# --- numpy trees ---------------------------------------------------------------------------


def test_tree_ensemble_matches_lightgbm_including_missing_values() -> None:
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = rng.random((300, 4))
    X[:40, 0] = np.nan
    X[40:90, 2] = 0.0
    y = np.nan_to_num(X[:, 0]) * 3 + X[:, 2] + rng.random(300)
    Xt = rng.random((100, 4))
    Xt[:20, 0] = np.nan
    Xt[20:40, 2] = 0.0
    Xt[40:50, 1] = np.nan  # NaN where training had none: treated as 0
    for params in ({"objective": "regression"}, {"objective": "huber", "zero_as_missing": True},
                   {"objective": "quantile", "alpha": 0.9}):
        booster = lgb.train({"num_leaves": 6, "verbose": -1, "num_threads": 1, **params},
                            lgb.Dataset(X, y), 20)
        trees = TreeEnsemble.from_lightgbm(booster.dump_model())
        assert np.allclose(trees.predict(Xt), booster.predict(Xt), atol=1e-9)
    bags = [lgb.train({"num_leaves": 4, "verbose": -1, "num_threads": 1, "seed": s,
                       "bagging_fraction": 0.7, "bagging_freq": 1}, lgb.Dataset(X, y), 5)
            for s in range(3)]
    mean = TreeEnsemble.mean([TreeEnsemble.from_lightgbm(b.dump_model()) for b in bags])
    assert np.allclose(mean.predict(Xt), np.mean([b.predict(Xt) for b in bags], axis=0))
    stump = TreeEnsemble.from_lightgbm({"tree_info": [{"tree_structure": {"leaf_value": 2.5}}]})
    assert stump.predict(np.zeros((3, 1))).tolist() == [2.5, 2.5, 2.5]
    assert stump.predict(np.zeros((0, 1))).shape == (0,)


# --- predictors ----------------------------------------------------------------------------


def test_median_predictor_round_trip(tmp_path: Path) -> None:
    p = MedianPredictor.fit([10, 100, 1000])
    (r,) = p.predict(["anything"])
    assert r.p50 == pytest.approx(100.0) and r.p10 < r.p50 < r.p90
    p.save(tmp_path)
    assert MedianPredictor.load(tmp_path).predict(["x", "y"]) == p.predict(["x", "y"])


def test_interval_offsets() -> None:
    lo, hi = interval_offsets(np.linspace(-1, 1, 101))
    assert lo == pytest.approx(-0.8) and hi == pytest.approx(0.8)
    assert interval_offsets([1.0, 2.0])[0] == 0.0  # never above the median prediction


def _train_tabular(examples: list[Example]) -> TabularPredictor:
    from laser_ci.predictors.baselines import fit_lightgbm

    texts = [e.text for e in examples]
    y = np.log([e.runtime_s for e in examples])
    feats = [extract(t) for t in texts]
    names = bag_vocabulary(feats, [e.repo for e in examples], 1)
    X = vectorize(feats, {n: i for i, n in enumerate(names)})
    params = {"objective": "regression", "num_leaves": 3, "min_data_in_leaf": 2,
              "min_data_in_bin": 1, "learning_rate": 0.3}
    model = fit_lightgbm(X, y, params, 10)
    lo = fit_lightgbm(X, y, {**params, "objective": "quantile", "alpha": 0.1}, 10)
    hi = fit_lightgbm(X, y, {**params, "objective": "quantile", "alpha": 0.9}, 10)
    return TabularPredictor(names, model, -0.1, 0.2, lo, hi, info={"test": True})


def test_tabular_predictor_round_trip(tmp_path: Path, examples: list[Example]) -> None:
    pytest.importorskip("lightgbm")
    p = _train_tabular(examples)
    texts = [e.text for e in examples]
    preds = p.predict(texts)
    assert len(preds) == len(texts)
    assert all(r.p10 <= r.p50 <= r.p90 and r.p50 >= 1 for r in preds)
    assert len({round(r.p50, 6) for r in preds}) > 1  # it does use the features
    p.save(tmp_path)
    q = TabularPredictor.load(tmp_path)
    assert q.predict(texts) == preds and q.info == {"test": True}
    assert q.predict([]) == []


def test_tabular_warm_part_is_anchored_on_the_history(tmp_path: Path,
                                                      examples: list[Example]) -> None:
    pytest.importorskip("lightgbm")
    from laser_ci.predictors.baselines import WarmPart, fit_lightgbm

    p = _train_tabular(examples)
    cold_texts = [e.text for e in examples]
    warm_ex = [e for e in examples if e.text_warm is not None]
    warm_texts = [e.text_warm for e in warm_ex]
    before = p.predict(cold_texts + warm_texts)
    feats = [extract(t) for t in warm_texts]
    names = bag_vocabulary(feats, [e.repo for e in warm_ex], 1)
    X = vectorize(feats, {n: i for i, n in enumerate(names)})
    anchor = np.array([f[WarmPart.MEDIAN] for f in feats])
    y = np.log([e.runtime_s for e in warm_ex]) - anchor
    model = fit_lightgbm(X, y, {"objective": "regression_l1", "num_leaves": 3,
                                "min_data_in_leaf": 2, "min_data_in_bin": 1}, 5)
    p.warm = WarmPart(names, model, -0.3, 0.4, info={"warm": 1})
    mu, lo, hi = p.predict_log(cold_texts + warm_texts)
    n = len(cold_texts)
    # cold texts: the cold model as before; warm texts: anchor + correction, own band
    assert p.predict(cold_texts) == before[:n]
    assert np.allclose(mu[n:], anchor + model.predict(X))
    assert np.allclose(lo[n:], mu[n:] - 0.3) and np.allclose(hi[n:], mu[n:] + 0.4)
    p.save(tmp_path)
    q = TabularPredictor.load(tmp_path)
    assert q.warm is not None and q.warm.info == {"warm": 1} and q.warm.offset_lo == -0.3
    assert q.predict(cold_texts + warm_texts) == p.predict(cold_texts + warm_texts)


def test_tabular_warm_part_on_the_recent_median(tmp_path: Path, examples: list[Example]) -> None:
    """``anchor`` ``history_recent_log``: the same correction added to ln of the history's
    recent median (the median where a text lacks the field); kept by save/load; a file
    without ``anchor`` is a median-anchored part."""
    pytest.importorskip("lightgbm")
    from laser_ci.predictors.baselines import WarmPart, fit_lightgbm

    p = _train_tabular(examples)
    warm_texts = [e.text_warm for e in examples if e.text_warm is not None]
    feats = [extract(t) for t in warm_texts]
    assert all("history_recent_log" in f for f in feats)
    names = bag_vocabulary(feats, ["r"] * len(feats), 1)
    X = vectorize(feats, {n: i for i, n in enumerate(names)})
    model = fit_lightgbm(X, np.zeros(len(feats)), {"objective": "regression_l1", "num_leaves": 3,
                                                   "min_data_in_leaf": 2, "min_data_in_bin": 1}, 3)
    p.warm = WarmPart(names, model, -0.3, 0.4, anchor="history_recent_log")
    mu, _lo, _hi = p.predict_log(warm_texts)
    assert np.allclose(mu, [f["history_recent_log"] for f in feats])
    assert not np.allclose(mu, [f["history_median_log"] for f in feats])
    no_field = [t.replace(" recent=", " x=") for t in warm_texts]
    assert np.allclose(p.predict_log(no_field)[0], [f["history_median_log"] for f in feats])
    p.save(tmp_path)
    assert TabularPredictor.load(tmp_path).warm.anchor == "history_recent_log"
    d = p.warm.to_json()
    del d["anchor"]
    assert WarmPart.from_json(d, model).anchor == "history_median_log"
    with pytest.raises(ValueError, match="anchor"):
        WarmPart.from_json({**d, "anchor": "history_mean_log"}, model)


def test_text_linear_matches_sklearn(tmp_path: Path, examples: list[Example]) -> None:
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import Ridge

    from laser_ci.predictors.baselines import fit_text_linear, make_analyzer

    texts = [e.text for e in examples]
    y = np.log([e.runtime_s for e in examples])
    p = fit_text_linear(texts, y, alpha=0.5, ngram_max=2, min_df=1)
    vec = TfidfVectorizer(analyzer=make_analyzer(2), sublinear_tf=True)
    ref = Ridge(alpha=0.5).fit(vec.fit_transform(texts), y)
    unseen = ["task: job\nruns-on: windows-latest\nsteps:\n- run: |\n    cargo test\n"]
    for batch in (texts, unseen):
        want = ref.predict(vec.transform(batch))
        assert np.allclose(p.predict_log(batch)[0], want, atol=1e-9)
    p.offset_lo, p.offset_hi = -0.5, 0.7
    p.save(tmp_path)
    q = TextLinearPredictor.load(tmp_path)
    a, b = p.predict(texts), q.predict(texts)
    assert all(x.p50 == pytest.approx(y_.p50, rel=1e-5) for x, y_ in zip(a, b, strict=True))
    assert all(r.p10 < r.p50 < r.p90 for r in b)
    assert q.predict(["zzz qqq"])[0].p50 == pytest.approx(math.exp(q.intercept), rel=1e-6)


def test_analyze_keeps_ci_words() -> None:
    terms = analyze("uses: actions/setup-java@v4\nrun: ./gradlew build")
    assert "setup-java" in terms and "gradlew" in terms and "gradlew build" in terms
    assert "v4 run" not in terms  # n-grams stay within a line


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory, examples: list[Example]) -> Path:
    pytest.importorskip("lightgbm")
    from laser_ci.predictors.baselines import fit_text_linear

    d = tmp_path_factory.mktemp("model")
    out = d / "baselines"
    MedianPredictor.fit(e.runtime_s for e in examples).save(out)
    _train_tabular(examples).save(out)
    y = np.log([e.runtime_s for e in examples])
    text = fit_text_linear([e.text for e in examples], y, alpha=1.0, min_df=1)
    text.offset_lo, text.offset_hi = -1.0, 1.0
    text.save(out)
    card = {"best": "median", "predictors": {"median": {"val_log_mae": 2.0},
                                             "tabular": {"val_log_mae": 0.9},
                                             "text-linear": {"val_log_mae": 1.2}}}
    (out / "card.json").write_text(json.dumps(card))
    return d


def test_load_predictor_picks_the_lowest_val_log_mae(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import laser_ci.predictors.choice as P

    preds = available_predictors(model_dir)
    assert set(preds) == {"median", "tabular", "text-linear"}
    assert set(load_baselines(model_dir / "baselines")) == set(preds)
    assert load_predictor(model_dir).name == "tabular"
    assert P.find_families(model_dir) == [("baselines", model_dir / "baselines")]

    # a language model in the model folder itself, with its own card
    class FakeLM:
        name = "laser-lm"

        def predict(self, texts):
            return []

    calls: list[Path] = []

    def load_lm(folder: Path) -> dict:
        calls.append(folder)
        return {"laser-lm": FakeLM()}

    monkeypatch.setitem(P.FAMILIES, "lm", (lambda p: (p / "laser.json").is_file(), load_lm))
    lm = tmp_path / "model"
    lm.mkdir()
    (lm / "laser.json").write_text("{}")
    (lm / "baselines").symlink_to(model_dir / "baselines", target_is_directory=True)
    (lm / "card.json").write_text(json.dumps({"predictors": {"laser-lm": {"val_log_mae": 1.5}}}))
    assert load_predictor(lm).name == "tabular" and calls == []  # loser's folder not loaded
    assert set(available_predictors(lm)) == {"median", "tabular", "text-linear", "laser-lm"}
    (lm / "card.json").write_text(json.dumps({"predictors": {"laser-lm": {"val_log_mae": 0.5}}}))
    assert load_predictor(lm).name == "laser-lm"
    # the tabular model a language model's prompts read (its reference/) is not a family
    shutil.copytree(model_dir / "baselines", lm / "reference")
    assert P.find_families(lm) == [("lm", lm), ("baselines", lm / "baselines")]
    # a card whose predictor cannot be loaded is skipped
    (lm / "laser.json").unlink()
    assert load_predictor(lm).name == "tabular"
    # equal val_log_mae: the better one with history (val_prior_log_mae) wins the tie
    tie = tmp_path / "tie"
    shutil.copytree(model_dir / "baselines", tie / "baselines")
    (tie / "baselines" / "card.json").write_text(json.dumps({"predictors": {
        "tabular": {"val_log_mae": 0.9, "val_prior_log_mae": 0.4},
        "text-linear": {"val_log_mae": 0.9, "val_prior_log_mae": 0.6},
        "median": {"val_log_mae": 0.9}}}))
    assert load_predictor(tie).name == "tabular"
    assert P.best_name(tie, {"median", "text-linear"}) == "text-linear"
    with pytest.raises(P.ModelNotFoundError, match="no model found"):
        load_predictor(tmp_path / "nothing")


def test_shipped_model_loads_if_present() -> None:
    shipped = Path(__file__).resolve().parent.parent / "model" / "baselines"
    if not (shipped / "card.json").is_file():
        pytest.skip("no shipped baselines")
    p = load_predictor()
    (r,) = p.predict(["task: job\nruns-on: ubuntu-latest\nsteps:\n- uses: actions/checkout@v4\n"])
    assert 1 <= r.p10 <= r.p50 <= r.p90
    assert sum(f.stat().st_size for f in shipped.iterdir()) < 5 * 1024 * 1024


# --- laser-ci eval -------------------------------------------------------------------------


def run_eval(*args: str) -> str:
    from laser_ci.cli import main

    result = CliRunner().invoke(main, ["eval", str(MINI), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_eval_json(model_dir: Path) -> None:
    report = json.loads(run_eval("--split", "all", "--format", "json", "--model", str(model_dir)))
    assert report["n"] == 15 and report["n_success"] == 10 and report["fallback"] == 1
    assert report["history"] == "none"
    assert set(report["predictors"]) == {"median", "tabular", "text-linear"}
    for res in report["predictors"].values():
        assert res["all"]["n"] == 15 and res["success"]["n"] == 10
        assert set(res["all"]) == {"n", "log_mae", "mae_min", "spearman", "within_2x",
                                   "coverage"}
    assert report["predictors"]["median"]["all"]["spearman"] is None  # constant: no ranking
    assert 0 <= report["predictors"]["tabular"]["all"]["coverage"] <= 1
    val = json.loads(run_eval("--format", "json", "--model", str(model_dir), "--kind", "job"))
    assert val["split"] == "val" and val["kind"] == "job" and val["n"] == 2


def test_eval_table_markdown_and_plot(model_dir: Path, tmp_path: Path) -> None:
    table = run_eval("--split", "train", "--model", str(model_dir), "--predictor", "median")
    assert "log-MAE" in table and "median" in table and "tabular" not in table
    md = run_eval("--split", "all", "--format", "markdown", "--model", str(model_dir))
    assert "| predictor | runs | n | log-MAE |" in md and "| tabular | success |" in md
    pytest.importorskip("matplotlib")
    png = tmp_path / "pva.png"
    run_eval("--split", "all", "--model", str(model_dir), "--plot", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_errors(tmp_path: Path, model_dir: Path) -> None:
    from laser_ci.cli import main

    r = CliRunner().invoke(main, ["eval", str(MINI), "--model", str(tmp_path)])
    assert r.exit_code != 0 and "no predictors" in r.output
    r = CliRunner().invoke(main, ["eval", str(MINI), "--model", str(model_dir),
                                  "--predictor", "nope"])
    assert r.exit_code == 2 and "unknown predictor" in r.output  # a usage error
