"""Distillation (laser_ci.training.distill): which corpus versions a teacher is asked about,
how its samples become training texts, and that a distilled base scores its own fold only.

Data: gha-mini with unlabeled file versions added to its corpus (written per test)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from gha_mini import CI_SINGLE, LINT_SINGLE, MATRIX, MINI, PROFILE_JS, blob_id

from laser_ci.predictors.base import Runtime
from laser_ci.training import distill
from laser_ci.training.baselines import fit_tabular
from laser_ci.training.crossval import CVError, LMRecipe
from laser_ci.training.train import PRETRAIN_MARKER

CI = ".github/workflows/ci.yml"
LINT = ".github/workflows/lint.yml"
TESTS = ".github/workflows/tests.yml"
JAVA21 = CI_SINGLE.replace("'17'", "'21'")
VERSIONS = [  # (repo, path, text, kept)
    ("acme/widgets", CI, JAVA21, True),
    ("acme/widgets", CI, JAVA21 + "# a comment: the same text, another blob\n", False),
    ("acme/gadgets", LINT, LINT_SINGLE.replace("node-version: 20", "node-version: 22"), True),
    ("broken/yaml-repo", ".github/workflows/broken.yml", "jobs: [unclosed\n", False),
    ("octo/matrix-lib", TESTS, MATRIX.replace("branches: [main]", "branches: [dev]"), True),
    ("acme/widgets", CI, CI_SINGLE, False),  # a labeled run's file
    ("acme/gadgets", LINT, LINT_SINGLE.replace("node-version: 20", "node-version: 22"), False),
]


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    out = tmp_path / "data"
    shutil.copytree(MINI, out)
    with open(out / "corpus.jsonl", "a", encoding="utf-8") as corpus, \
            open(out / "blobs.jsonl", "a", encoding="utf-8") as blobs:
        for repo, path, text, _ in VERSIONS:
            corpus.write(json.dumps({"repo": repo, "path": path, "blob": blob_id(text)}) + "\n")
            blobs.write(json.dumps({"id": blob_id(text), "text": text}) + "\n")
    return out


def test_corpus_texts_are_unlabeled_readable_distinct_versions(data: Path) -> None:
    texts = distill.corpus_texts_for(data, lambda repo: True, max_texts=10)
    assert sorted((t.repo, t.path) for t in texts) == sorted(
        (r, p) for r, p, _, kept in VERSIONS if kept)
    assert len({t.text for t in texts}) == len(texts)
    runs = [json.loads(line) for line in open(data / "runs.jsonl", encoding="utf-8")]
    assert not {t.blob for t in texts} & distill.labeled_blobs(runs)
    # the same draw again; a repository filter; a cap
    assert distill.corpus_texts_for(data, lambda repo: True, max_texts=10) == texts
    assert {t.repo for t in distill.corpus_texts_for(
        data, lambda repo: repo != "acme/widgets", max_texts=10)} == {"acme/gadgets",
                                                                       "octo/matrix-lib"}
    assert len(distill.corpus_texts_for(data, lambda repo: True, max_texts=1)) == 1
    assert distill.corpus_texts_for(data, lambda repo: True, max_texts=0) == []
    gadgets = next(t.text for t in texts if t.repo == "acme/gadgets")
    assert "acme/gadgets" not in {t.repo for t in distill.corpus_texts_for(
        data, lambda repo: True, max_texts=10, exclude_texts={gadgets})}


def test_corpus_texts_read_more_chunks_when_versions_drop_out(data: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of max_texts rows: an unreadable or repeated version in a chunk makes the
    loop read the next one, and every draw still returns max_texts texts."""
    import laser_ci.training.examples as examples

    calls: list[int] = []
    real = examples.load_blobs

    def spy(data_dir, ids=None):
        calls.append(len(list(ids or [])))
        return real(data_dir, ids)

    monkeypatch.setattr(examples, "load_blobs", spy)
    kept = {(r, p) for r, p, _, k in VERSIONS if k}
    union = set()
    passes = []
    for seed in range(8):
        calls.clear()
        got = distill.corpus_texts_for(data, lambda repo: True, max_texts=2, seed=seed)
        assert len(got) == 2 and {(t.repo, t.path) for t in got} <= kept
        union |= {(t.repo, t.path) for t in got}
        passes.append(len(calls))
    assert union == kept and max(passes) > 1 and min(passes) == 1


def test_a_version_reads_as_a_labeled_runs_text() -> None:
    """The text a teacher is asked about is the one a run of the same file trains on."""
    from laser_ci.training.examples import load_examples
    from laser_ci.workflows.model import RepoProfile

    run5 = next(e for e in load_examples(MINI, kinds=("workflow",))
                if e.run_id == "fixture05")
    assert distill.serialize_version(LINT, LINT_SINGLE, RepoProfile.from_json(PROFILE_JS)) \
        == run5.text
    assert distill.serialize_version(LINT, "on: push\n", None) is None  # no job


@pytest.mark.parametrize(("runs", "blobs", "profiles"), [
    ([], set(), {}),
    ([{"id": "r1", "repo": "a/b", "workflow_path": CI, "files": {CI: "x1", LINT: "x2"},
       "commit_date": "2023-01-01", "repo_profile": {"n_files": 1}}],
     {"x1"}, {"a/b": {"n_files": 1}}),
    ([{"id": "r1", "repo": "a/b", "workflow_path": CI, "files": {CI: "x1"},
       "commit_date": "2023-02-01",
       "repo_profile": {"n_files": 2}},
      {"id": "r2", "repo": "a/b", "workflow_path": LINT, "files": {LINT: "x3"},
       "commit_date": "2023-01-01",
       "repo_profile": {"n_files": 1}},
      {"id": "r3", "repo": "a/b", "workflow_path": TESTS, "files": {},
       "commit_date": "2023-03-01"}],
     {"x1", "x3"}, {"a/b": {"n_files": 2}}),
])
def test_labeled_blobs_and_latest_profiles(runs, blobs, profiles) -> None:
    assert distill.labeled_blobs(runs) == blobs
    assert distill.latest_profiles(runs) == profiles


class _Reference:
    def predict(self, texts):
        return [Runtime(10.0, 20.0 + len(t) % 3, 40.0) for t in texts]


class _Teacher:
    """What teacher_targets reads of a TorchLaserModel: each text's samples and the
    reference its prompt read."""

    def sample_with_references(self, texts):
        refs = [r.p50 for r in _Reference().predict(texts)]
        return [(np.array([5.0, 10.0 * (i + 1), 0.0]), ref) for i, ref in enumerate(refs)]


def test_teacher_samples_become_cold_success_targets(tmp_path: Path) -> None:
    texts = [distill.CorpusText("a/b", CI, f"b{i}", "text " + "x" * i) for i in range(3)]
    rows = distill.teacher_targets(_Teacher(), texts, batch=2)
    assert [r["samples"] for r in rows] == [[5.0, 10.0, 0.0], [5.0, 20.0, 0.0],
                                            [5.0, 10.0, 0.0]]  # batches of two
    assert [r["reference"] for r in rows] == [22.0, 20.0, 21.0]  # each text's own
    distill.write_rows(tmp_path / "t.jsonl", rows)
    assert distill.read_rows(tmp_path / "t.jsonl") == rows
    targets = distill.distilled_texts(rows)
    assert len(targets) == 6  # the zero sample is dropped
    assert {(t.kind, t.conclusion, t.repo) for t in targets} == {("workflow", "success", "a/b")}
    assert [(t.text, t.runtime_s, t.reference) for t in targets[:3]] == [
        ("text ", 5.0, 22.0), ("text ", 10.0, 22.0), ("text x", 5.0, 20.0)]
    with pytest.raises(ValueError, match="no teacher targets"):
        distill.distill_base(tmp_path, [], [], tmp_path / "out", None, references={},
                             reference_model=None, marker={})


def _base(folder: Path, marker: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / PRETRAIN_MARKER).write_text(json.dumps(marker))
    return folder


def _tiny_base(out: Path) -> Path:
    """A tiny label-free base pretrained for 2 steps on gha-mini (``laser-ci train
    --pretrain-only``), its ``pretrained`` folder."""
    from click.testing import CliRunner

    from laser_ci.cli import main

    r = CliRunner().invoke(main, [
        "train", "--pretrain-only", "--data", str(MINI), "--out", str(out),
        "--size", "tiny", "--pretrain-steps", "2", "--vocab-size", "300",
        "--pretrain-seq-len", "32", "--device", "cpu"])
    assert r.exit_code == 0, r.output
    return out / "pretrained"


@pytest.mark.parametrize(("labels", "fold", "k", "ok"), [
    ({"from": "teacher", "held_out_fold": 1, "folds": 3}, 1, 3, True),
    ({"from": "teacher", "held_out_fold": 1, "folds": 3}, 0, 3, False),
    ({"from": "teacher", "held_out_fold": 1, "folds": 3}, 1, 5, False),
])
def test_a_distilled_base_scores_its_own_fold_only(tmp_path: Path, labels, fold, k, ok) -> None:
    marker = distill.fold_marker({"pretrain_only": True, "labels": False}, fold=1, folds=3,
                                 teacher={"base": "gemma"}, texts=2, targets=8)
    assert marker["labels"] == labels and marker["distilled"]["targets"] == 8
    assert marker["pretrain_only"] is False and "teacher" in marker["corpus"]["what"]
    recipe = LMRecipe(_base(tmp_path / "base", marker))
    assert "teacher's samples" in recipe.describe()["note"]
    if ok:
        recipe._check_fold(fold, k)
    else:
        with pytest.raises(CVError, match="distilled"):
            recipe.fit([], [], fold, k=k)
    with pytest.raises(CVError, match="shipped model"):
        recipe.ship([], tmp_path / "ship", k=3)


def test_a_distilled_base_never_becomes_a_trained_or_shipped_model(tmp_path: Path) -> None:
    """--init, finetune and a cross-validation over other folds refuse it before any work."""
    import click

    from laser_ci.training import train
    from laser_ci.training.crossval import LM_NAME, run_folds
    from laser_ci.training.examples import load_examples

    marker = distill.fold_marker({"labels": False}, fold=1, folds=3, teacher={}, texts=1,
                                 targets=1)
    base = _base(tmp_path / "base", marker)
    with pytest.raises(click.ClickException, match="fold 1 of 3 only"):
        train.run_training(MINI, tmp_path / "t", train.TrainConfig(), init=str(base))
    with pytest.raises(click.ClickException, match="fold 1 of 3 only"):
        train.run_finetune(MINI, base, tmp_path / "f", train.TrainConfig())
    assert not (tmp_path / "t").exists() and not (tmp_path / "f").exists()
    examples = load_examples(MINI)
    with pytest.raises(CVError, match="fold 0 of 3"):
        run_folds(examples, list(range(len(examples))), 3, [LM_NAME], "prior",
                  lm=LMRecipe(base), progress=False)
    train.refuse_fold_base(_base(tmp_path / "plain", {"labels": False}))
    train.refuse_fold_base(tmp_path / "no-marker")


def test_a_kept_fold_from_another_base_is_not_reused(tmp_path: Path) -> None:
    from dataclasses import asdict

    recipe = LMRecipe(_base(tmp_path / "base", {"labels": False}))
    fold = tmp_path / "fold0"
    fold.mkdir()
    report = {"config": json.loads(json.dumps(asdict(recipe.cfg)))}
    for kept_base, ok in ((tmp_path / "base", True), (tmp_path / "other", False)):
        (fold / "train_report.json").write_text(json.dumps({**report, "base": str(kept_base)}))
        if ok:
            recipe._check_kept(fold)
        else:
            with pytest.raises(CVError, match="fine-tuned from"):
                recipe._check_kept(fold)


def test_a_base_that_saw_labels_otherwise_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CVError, match="saw labels"):
        LMRecipe(_base(tmp_path / "base", {"pretrain_only": True, "labels": True}))
    plain = LMRecipe(_base(tmp_path / "plain", {"pretrain_only": True, "labels": False}))
    plain._check_fold(0, 5)
    plain._check_fold(None, 5)
    assert "teacher" not in plain.describe()["note"]


def test_distilled_base_trains_on_targets_then_fine_tunes_its_fold(tmp_path: Path,
                                                                   data: Path) -> None:
    """A tiny base trained on teacher targets only, written as a base, then fine-tuned on
    its fold's labeled runs and scored, as benchmarks/distill_fold.py runs it."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("optimum.exporters.onnx")
    pytest.importorskip("lightgbm")
    from laser_ci.training.examples import load_examples
    from laser_ci.training.folds import fold_of, fold_parts, inner_fold

    base = _tiny_base(tmp_path / "b")
    k, f = 3, 2  # acme/widgets (a corpus version) is in fold 2's training part
    inner = inner_fold(f, k)
    examples = load_examples(MINI, history=True)
    train, val = fold_parts(examples, [fold_of(e.repo, k) for e in examples], f, k)
    texts = distill.corpus_texts_for(data, lambda repo: fold_of(repo, k) not in (f, inner),
                                     max_texts=10)
    assert texts
    rows = [{"repo": t.repo, "path": t.path, "blob": t.blob, "text": t.text,
             "reference": 100.0, "samples": [50.0, 80.0, 200.0]} for t in texts]
    targets = distill.distilled_texts(rows)
    recipe = LMRecipe(base, epochs=1, threads=1, device="cpu", prompt_lines=True)
    tabular = fit_tabular(train, val)
    refs = recipe.references(train, val, tabular, k=k)
    marker = distill.fold_marker(json.loads((base / PRETRAIN_MARKER).read_text()), fold=f,
                                 folds=k, teacher={"base": "test"}, texts=len(rows),
                                 targets=len(targets))
    log = distill.distill_base(base, targets, val, tmp_path / "d", recipe.cfg,
                               references=refs, reference_model=tabular, marker=marker)
    assert log["data"]["extra"] == log["data"]["train"] == len(targets)
    assert (tmp_path / "d" / "weights.safetensors").is_file()
    student = LMRecipe(tmp_path / "d", epochs=1, threads=1, device="cpu", prompt_lines=True,
                       keep=tmp_path / "folds")
    model = student.fit(train, val, f, k=k, tabular=tabular)
    held = [e for e in examples if fold_of(e.repo, k) == f]
    preds = model.predict([e.text for e in held])
    assert len(preds) == len(held) and all(p.p10 <= p.p50 <= p.p90 for p in preds)
    fold_log = json.loads((tmp_path / "folds" / "fold2" / "train_report.json").read_text())
    assert fold_log["base"] == str(tmp_path / "d") and fold_log["data"]["extra"] == 0
    with pytest.raises(CVError, match="distilled"):
        student.fit(train, val, 1, k=k, tabular=tabular)


def test_corpus_references_come_from_models_without_the_texts_fold(
        data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a labeled training text's: fit on the other folds' labeled examples only."""
    pytest.importorskip("lightgbm")
    import laser_ci.training.baselines as baselines
    from laser_ci.predictors.lm import prompt_references
    from laser_ci.training.examples import load_examples
    from laser_ci.training.folds import fold_of

    k = 3
    labeled = load_examples(MINI)
    tabular = fit_tabular(labeled, labeled)
    texts = distill.corpus_texts_for(data, lambda repo: True, max_texts=10)
    fits: list[set[str]] = []
    real = baselines.Tabular.__init__

    def spy(self, train, feats):
        fits.append({e.repo for e in train})
        real(self, train, feats)

    monkeypatch.setattr(baselines.Tabular, "__init__", spy)
    refs = distill.corpus_references(texts, labeled, k, tabular.info["params"],
                                     baselines.text_features(labeled))
    folds = sorted({fold_of(t.repo, k) for t in texts})
    assert len(fits) == len(folds)
    for g, repos in zip(folds, fits, strict=True):
        assert repos and all(fold_of(r, k) != g for r in repos)
    assert all(r is not None and r > 0 for r in refs)
    fixed = distill.FixedReferences({t.text: r for t, r in zip(texts, refs, strict=True)})
    assert prompt_references(fixed, [t.text for t in texts]) == refs


def test_a_small_teacher_distills_from_its_kept_fold_model(tmp_path: Path, data: Path) -> None:
    """benchmarks/distill_fold.py --teacher shipped: the fold's undistilled small model (kept
    by the shipped recipe) writes the samples, read with out-of-fold references; a fold
    without a kept model is an error, not a model trained here."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("optimum.exporters.onnx")
    pytest.importorskip("lightgbm")
    import bench

    from laser_ci.training.examples import load_examples
    from laser_ci.training.folds import fold_of, fold_parts

    base = _tiny_base(tmp_path / "b")
    k, f = 3, 2
    script = bench.load("distill_fold")
    argv = [str(data), "--teacher", "shipped", "--teacher-base", str(base),
            "--teacher-keep", str(tmp_path / "folds"), "--base", str(base), "--fold", str(f),
            "--folds", str(k), "--texts", "10", "--samples", "3", "--minutes", "0.2",
            "--epochs", "1", "--oof-references", "--out", str(tmp_path / "d")]
    with pytest.raises(SystemExit, match="no kept teacher"):
        script.main(argv)
    assert not (tmp_path / "folds").exists()

    examples = load_examples(data, history=True)
    train, val = fold_parts(examples, [fold_of(e.repo, k) for e in examples], f, k)
    LMRecipe(base, epochs=1, threads=1, device="cpu", prompt_lines=True,
             layout="shared-prefix", exact_last=True, keep=tmp_path / "folds").fit(
        train, val, f, k=k, tabular=fit_tabular(train, val))
    assert script.main(argv) == 0
    about = json.loads((tmp_path / "d" / "teacher.json").read_text())
    assert about["teacher"] == "shipped" and about["references"] == "out of fold"
    assert about["model"] == str(tmp_path / "folds" / "fold2" / "laser.json")
    rows = distill.read_rows(tmp_path / "d" / "teacher.jsonl")
    assert rows and all(len(r["samples"]) == 3 and r["reference"] > 0 for r in rows)
    assert all(fold_of(r["repo"], k) not in (f, 0) for r in rows)  # 0: fold 2's inner fold
    marker = json.loads((tmp_path / "d" / "base" / PRETRAIN_MARKER).read_text())
    assert marker["labels"]["held_out_fold"] == f
    assert marker["distilled"]["teacher"]["recipe"] == "shipped"

    # its targets are cold texts only, so the shipped model's recipe (the recent median as
    # the warm anchor) may fine-tune it though its own prompt says median; its fold model
    # then reads the recent median
    from laser_ci.predictors.lm import read_config

    distilled = tmp_path / "d" / "base"
    assert read_config(distilled, verify=False)["prompt"].get("warm_anchor", "median") == "median"
    LMRecipe(distilled, epochs=1, threads=1, device="cpu", prompt_lines=True,
             layout="shared-prefix", exact_last=True, warm_anchor="recent",
             keep=tmp_path / "recent").fit(train, val, f, k=k, tabular=fit_tabular(train, val))
    fold_model = read_config(tmp_path / "recent" / f"fold{f}", verify=False)
    assert fold_model["prompt"]["warm_anchor"] == "recent"
    # a model folder whose marker does not say so keeps the refusal
    other = tmp_path / "other"
    shutil.copytree(distilled, other)
    (other / PRETRAIN_MARKER).write_text(json.dumps(
        {**marker, "labels": {**marker["labels"], "from": "runs"}}))
    with pytest.raises(CVError, match="warm outputs are over the history's median"):
        LMRecipe(other, warm_anchor="recent")
