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
    ([{"repo": "a/b", "workflow_path": CI, "files": {CI: "x1", LINT: "x2"},
       "commit_date": "2023-01-01", "repo_profile": {"n_files": 1}}],
     {"x1"}, {"a/b": {"n_files": 1}}),
    ([{"repo": "a/b", "workflow_path": CI, "files": {CI: "x1"}, "commit_date": "2023-02-01",
       "repo_profile": {"n_files": 2}},
      {"repo": "a/b", "workflow_path": LINT, "files": {LINT: "x3"}, "commit_date": "2023-01-01",
       "repo_profile": {"n_files": 1}},
      {"repo": "a/b", "workflow_path": TESTS, "files": {}, "commit_date": "2023-03-01"}],
     {"x1", "x3"}, {"a/b": {"n_files": 2}}),
])
def test_labeled_blobs_and_latest_profiles(runs, blobs, profiles) -> None:
    assert distill.labeled_blobs(runs) == blobs
    assert distill.latest_profiles(runs) == profiles


class _Reference:
    def predict(self, texts):
        return [Runtime(10.0, 20.0 + len(t) % 3, 40.0) for t in texts]


class _Teacher:
    """The two things teacher_targets reads of a TorchLaserModel."""

    reference_model = _Reference()

    def sample(self, texts):
        return [np.array([5.0, 10.0 * (i + 1), 0.0]) for i, _ in enumerate(texts)]


def test_teacher_samples_become_cold_success_targets(tmp_path: Path) -> None:
    texts = [distill.CorpusText("a/b", CI, f"b{i}", f"text {i}") for i in range(3)]
    rows = distill.teacher_targets(_Teacher(), texts, batch=2)
    assert [r["samples"] for r in rows] == [[5.0, 10.0, 0.0], [5.0, 20.0, 0.0],
                                            [5.0, 10.0, 0.0]]  # batches of two
    assert [r["reference"] for r in rows] == [20.0 + len(t.text) % 3 for t in texts]
    distill.write_rows(tmp_path / "t.jsonl", rows)
    assert distill.read_rows(tmp_path / "t.jsonl") == rows
    targets = distill.distilled_texts(rows)
    assert len(targets) == 6  # the zero sample is dropped
    assert {(t.kind, t.conclusion, t.repo) for t in targets} == {("workflow", "success", "a/b")}
    assert [(t.text, t.runtime_s, t.reference) for t in targets[:2]] == [
        ("text 0", 5.0, rows[0]["reference"]), ("text 0", 10.0, rows[0]["reference"])]


def _base(folder: Path, marker: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / PRETRAIN_MARKER).write_text(json.dumps(marker))
    return folder


@pytest.mark.parametrize(("labels", "fold", "k", "ok"), [
    ({"from": "teacher", "held_out_fold": 1, "folds": 3}, 1, 3, True),
    ({"from": "teacher", "held_out_fold": 1, "folds": 3}, 0, 3, False),
    ({"from": "teacher", "held_out_fold": 1, "folds": 3}, 1, 5, False),
])
def test_a_distilled_base_scores_its_own_fold_only(tmp_path: Path, labels, fold, k, ok) -> None:
    marker = distill.fold_marker({"pretrain_only": True, "labels": False}, fold=1, folds=3,
                                 teacher={"base": "gemma"}, texts=2, targets=8)
    assert marker["labels"] == labels and marker["distilled"]["targets"] == 8
    recipe = LMRecipe(_base(tmp_path / "base", marker))
    assert "teacher's samples" in recipe.describe()["note"]
    if ok:
        recipe._check_fold(fold, k)
    else:
        with pytest.raises(CVError, match="distilled"):
            recipe.fit([], [], fold, k=k)
    with pytest.raises(CVError, match="shipped model"):
        recipe.ship([], tmp_path / "ship", k=3)


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
    from click.testing import CliRunner

    from laser_ci.cli import main
    from laser_ci.training.examples import load_examples
    from laser_ci.training.folds import fold_of, inner_fold

    r = CliRunner().invoke(main, [
        "train", "--pretrain-only", "--data", str(MINI), "--out", str(tmp_path / "b"),
        "--size", "tiny", "--pretrain-steps", "2", "--vocab-size", "300",
        "--pretrain-seq-len", "32", "--device", "cpu"])
    assert r.exit_code == 0, r.output
    base = tmp_path / "b" / "pretrained"
    k, f = 3, 2  # acme/widgets (a corpus version) is in fold 2's training part
    inner = inner_fold(f, k)
    examples = load_examples(MINI, history=True)
    train = [e for e in examples if fold_of(e.repo, k) not in (f, inner)]
    val = [e for e in examples if fold_of(e.repo, k) == inner]
    texts = distill.corpus_texts_for(data, lambda repo: fold_of(repo, k) not in (f, inner),
                                     max_texts=10)
    assert texts
    rows = [{"repo": t.repo, "path": t.path, "blob": t.blob, "text": t.text,
             "reference": 100.0, "samples": [50.0, 80.0, 200.0]} for t in texts]
    targets = distill.distilled_texts(rows)
    recipe = LMRecipe(base, epochs=1, threads=1, device="cpu", prompt_lines=True)
    tabular = LMRecipe.tabular(train, val)
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
