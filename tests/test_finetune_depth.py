"""benchmarks/finetune_depth.py (issue 53's measurement) on a tiny synthetic history: the
held-out names never reach the training folder, a size keeps the latest job rows, and the
fine-tuned model is scored beside the shipped one, the evidence and the median."""

from __future__ import annotations

import gzip
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    from finetune_depth import make_split
    from runtime_history import make_runs, write_folder

    folder = write_folder(tmp_path_factory.mktemp("depth53") / "collected", make_runs(days=21))
    return make_split(folder, test_days=3, groups=5, held_group=0)


def _rows(folder: Path) -> list[dict]:
    with gzip.open(folder / "runs.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_held_out_names_never_reach_training_and_sizes_keep_the_latest(split, tmp_path) -> None:
    from finetune_depth import write_training

    assert split.held and split.truth
    every = write_training(split, tmp_path / "all", None)
    rows = _rows(tmp_path / "all")
    names = {(r["workflow_path"], j["name"]) for r in rows for j in r["jobs"]}
    assert not names & split.held
    assert every["job_rows"] == sum(len(r["jobs"]) for r in rows)
    small = write_training(split, tmp_path / "small", 50)
    kept = _rows(tmp_path / "small")
    assert 50 <= small["job_rows"] < every["job_rows"]
    assert [r["id"] for r in kept] == [r["id"] for r in rows][-len(kept):]  # the latest runs
    assert (tmp_path / "small" / "blobs.jsonl.gz").exists()


@pytest.mark.train_extra
def test_a_fine_tuned_model_is_scored_against_every_method(split, tmp_path) -> None:
    from finetune_depth import medians, predictions, score, summary, write_training

    from laser_ci.predictors.choice import load_predictor
    from laser_ci.training.finetune import FINETUNE_CONFIG
    from laser_ci.training.learn import learn_repository

    write_training(split, tmp_path / "train", 60)
    cfg = replace(FINETUNE_CONFIG, epochs=1, threads=1)
    learn_repository(tmp_path / "train", ROOT / "model" / "lm", tmp_path / "model", cfg,
                     device="cpu", minutes=1)
    shipped = predictions(split, load_predictor(ROOT / "model" / "lm"))
    learned = load_predictor(tmp_path / "model")
    preds = {"finetuned": predictions(split, learned, own_runs=True),
             "finetuned_text": predictions(split, learned), "shipped": shipped,
             "evidence": shipped}
    text, figures = score(split, preds, medians(split))
    new = figures["(i) new jobs (held-out names)"]
    every = figures["(iii) every job run"]
    assert new["runs"] > 0 and "median" not in new  # a held-out name has no median
    assert every["runs"] > new["runs"] and every["median_runs"] < every["runs"]
    assert every["vs_shipped"]["lo"] <= every["vs_shipped"]["diff"] <= every["vs_shipped"]["hi"]
    assert new["vs_evidence"] == new["vs_shipped"]  # same predictions, same paired figure
    assert "| (i) new jobs (held-out names) |" in text
    assert 0.0 <= every["coverage"] <= 1.0 and 0.0 <= every["coverage_evidence"] <= 1.0
    line = summary({"command": "x", "60": {"training": {"job_rows": 60},
                                           "finetune": {"seconds": 90}, "table": figures}})
    assert line.splitlines()[-1].startswith("| 60 | 60 | 1.5 | ")
