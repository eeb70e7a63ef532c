"""Distillation (issue #13, lever 4): a fine-tuned teacher's runtime samples on unlabeled
workflow texts become training targets for the shipped small model.

The corpus (``corpus.jsonl.gz``) holds tens of thousands of workflow file versions that no
labeled run used. A teacher (Gemma-3-270M LoRA-tuned on one fold's training runs,
:class:`laser_ci.training.pretrained.PretrainedRecipe`) writes runtime samples for the
versions of that fold's training repositories; the small model is then trained on them
(:func:`distill_base`, each sample one cold target, the prompt read as the shipped model
reads it: ``outcome: success`` and the fold's tabular reference) before its usual
fine-tuning on the labeled runs. The result is a base for *that fold only*: the teacher saw
the fold's training labels, so its marker names the fold (``labels.held_out_fold``) and
:class:`laser_ci.training.crossval.LMRecipe` refuses it for any other fold or for a
shipped model.

Data flows one way: :func:`corpus_texts_for` (texts) → :func:`teacher_targets` (samples,
JSON rows) → :func:`distilled_texts` (training texts) → :func:`distill_base` (a base).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KIND = "workflow"  # the corpus gives workflow texts (a version has no per-job runs)


@dataclass(frozen=True)
class CorpusText:
    """One unlabeled workflow file version serialized as a cold workflow example's text."""

    repo: str
    path: str
    blob: str
    text: str


def labeled_blobs(runs: Iterable[dict[str, Any]]) -> set[str]:
    """The blob ids of the workflow files labeled runs ran (their texts are labeled)."""
    from laser_ci.training.examples import workflow_blobs

    return {str(b) for b in workflow_blobs(runs).values() if b}


def latest_profiles(runs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Each repository's ``repo_profile`` of its latest run (by commit date)."""
    best: dict[str, tuple[str, Any]] = {}
    for run in runs:
        repo, date = str(run.get("repo") or ""), str(run.get("commit_date") or "")
        if run.get("repo_profile") is not None and (repo not in best or date >= best[repo][0]):
            best[repo] = (date, run.get("repo_profile"))
    return {repo: profile for repo, (_, profile) in best.items()}


def serialize_version(path: str, raw: str, profile: Any) -> str | None:
    """The cold workflow text of one file version, as :func:`laser_ci.training.examples.
    examples_from_run` writes a run's, but read alone: a local reusable workflow or action
    it calls is not resolved (a corpus row is one file). None when it has no readable job."""
    from laser_ci.text.serialize import serialize_workflow
    from laser_ci.workflows.parse import read_workflows

    try:
        workflows, _errors = read_workflows({path: raw}, [path])
    except Exception:  # a reader bug must not stop the corpus; the version is skipped
        return None
    wf = next((w for w in workflows if w.path == path), None)
    if wf is None or not wf.jobs:
        return None
    return serialize_workflow(wf, profile)


def corpus_texts_for(data_dir: str | Path, keep_repo: Callable[[str], bool], *,
                     max_texts: int, seed: int = 0,
                     exclude_texts: Iterable[str] = ()) -> list[CorpusText]:
    """Up to ``max_texts`` distinct texts of corpus versions of the repositories
    ``keep_repo`` accepts that no labeled run used (by blob, and by text: ``exclude_texts``,
    the labeled examples' texts), drawn with ``seed`` (stable order)."""
    from laser_ci.training.examples import load_blobs, load_corpus, load_runs
    from laser_ci.workflows.model import RepoProfile

    if max_texts <= 0:
        return []
    runs = load_runs(data_dir)
    used = labeled_blobs(runs)
    profiles = {r: RepoProfile.from_json(p) for r, p in latest_profiles(runs).items()}
    rows = [r for r in load_corpus(data_dir)
            if keep_repo(str(r["repo"])) and str(r["blob"]) not in used]
    seen_blobs: set[str] = set()
    unique = []
    for r in rows:
        if str(r["blob"]) not in seen_blobs:
            seen_blobs.add(str(r["blob"]))
            unique.append(r)
    random.Random(seed).shuffle(unique)
    out: list[CorpusText] = []
    seen_texts: set[str] = set(exclude_texts)
    # read the blob file once per chunk of max_texts rows: most versions serialize, so one
    # or two passes over it suffice
    for start in range(0, len(unique), max_texts):
        chunk = unique[start:start + max_texts]
        blobs = load_blobs(data_dir, [str(r["blob"]) for r in chunk])
        for r in chunk:
            raw = blobs.get(str(r["blob"]))
            if not raw:
                continue
            text = serialize_version(str(r["path"]), raw, profiles.get(str(r["repo"])))
            if text is None or text in seen_texts:
                continue
            seen_texts.add(text)
            out.append(CorpusText(str(r["repo"]), str(r["path"]), str(r["blob"]), text))
            if len(out) >= max_texts:
                return out
    return out


def corpus_references(texts: Sequence[CorpusText], labeled: Sequence[Any], k: int,
                      params: Mapping[str, Any],
                      feats: dict[str, dict[str, float]]) -> list[float | None]:
    """Each corpus text's reference as a labeled training text's is made
    (:func:`laser_ci.training.references.out_of_fold_references`): the p50 of a tabular
    model with ``params`` fit on the ``labeled`` examples of the other folds (of ``k``)
    than the text's repository's. None where no other fold has examples."""
    import math

    from laser_ci.predictors.features import extract
    from laser_ci.training.baselines import SEEDS, Tabular
    from laser_ci.training.folds import fold_of
    from laser_ci.training.references import grid_point

    feats = {**feats, **{t.text: extract(t.text) for t in texts if t.text not in feats}}
    cfg = grid_point(params)
    groups = [fold_of(t.repo, k) for t in texts]
    out: list[float | None] = [None] * len(texts)
    for g in sorted(set(groups)):
        train = [e for e in labeled if fold_of(e.repo, k) != g]
        idx = [i for i, h in enumerate(groups) if h == g]
        if not train:
            continue
        tab = Tabular(train, feats)
        names, model = tab.fit(cfg, seeds=SEEDS)
        for i, m in zip(idx, model.predict(tab.matrix([texts[i] for i in idx], names)),
                        strict=True):
            out[i] = float(math.exp(m))
    return out


class FixedReferences:
    """A reference model that answers from a table (text → reference seconds): what a
    teacher reads when its references are made out of fold (:func:`corpus_references`)."""

    def __init__(self, refs: Mapping[str, float]) -> None:
        self.refs = dict(refs)

    def predict(self, texts: Sequence[str]) -> list[Any]:
        from laser_ci.predictors.base import Runtime

        return [Runtime(self.refs[t], self.refs[t], self.refs[t]) for t in texts]


def teacher_targets(teacher: Any, texts: Sequence[CorpusText], *, batch: int = 16,
                    log: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """The teacher's samples (runtime seconds, sorted) for each text, with the reference
    its prompt read (its reference model's p50, :meth:`laser_ci.predictors.lm.LaserModel.
    sample_with_references`): one JSON-ready row per text."""
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for s in range(0, len(texts), batch):
        part = texts[s:s + batch]
        got = teacher.sample_with_references([t.text for t in part])
        for t, (samples, r) in zip(part, got, strict=True):
            rows.append({"repo": t.repo, "path": t.path, "blob": t.blob, "text": t.text,
                         "reference": r, "samples": [float(x) for x in samples]})
        if log is not None:
            log(f"teacher: {len(rows)}/{len(texts)} texts ({time.time() - t0:.0f} s)")
    return rows


def write_rows(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def distilled_texts(rows: Sequence[Mapping[str, Any]]) -> list[Any]:
    """One cold training text per teacher sample: the version's text, the sample as its
    runtime, ``success`` as its outcome (the teacher was asked for it), the reference the
    teacher read."""
    from laser_ci.training.train import LabeledText

    return [LabeledText(str(r["text"]), float(x), KIND, "success", str(r["repo"]),
                        None if r.get("reference") is None else float(r["reference"]))
            for r in rows for x in r["samples"] if float(x) > 0]


def fold_marker(base_marker: Mapping[str, Any], *, fold: int, folds: int,
                teacher: Mapping[str, Any], texts: int, targets: int) -> dict[str, Any]:
    """The ``laser_pretrain.json`` of a distilled base: the original base's, with
    ``labels`` saying whose labels reached it (fold ``fold``'s training folds, through the
    teacher) so that it is used to score that fold only."""
    corpus = {**base_marker.get("corpus", {}),
              "what": "the base's corpus, then a teacher's runtime samples on unlabeled "
                      "corpus versions of the fold's training repositories"}
    return {**base_marker, "pretrain_only": False, "corpus": corpus,
            "labels": {"from": "teacher", "held_out_fold": fold, "folds": folds},
            "distilled": {"teacher": dict(teacher), "texts": texts, "targets": targets}}


def distill_base(base: str | Path, targets: Sequence[Any], val: Sequence[Any],
                 out: str | Path, cfg: Any, *, references: Mapping[Any, float],
                 reference_model: Any, marker: Mapping[str, Any],
                 device: str = "auto") -> dict[str, Any]:
    """Train ``base`` (a label-free base) on the distilled ``targets`` alone, ``val`` (the
    fold's labeled val part) picking the epoch, and write a base folder to ``out`` (the
    int8 graph, the weights ``laser-ci finetune`` starts from and ``marker``). Returns the
    training log."""
    from laser_ci.training.train import PRETRAIN_MARKER, finetune_examples

    if not targets:
        raise ValueError("no teacher targets to distill")
    log = finetune_examples(base, [], val, out, cfg, device=device, references=references,
                            reference_model=reference_model, include_weights=True,
                            extra=targets)
    Path(out, PRETRAIN_MARKER).write_text(json.dumps(dict(marker), indent=2) + "\n",
                                          encoding="utf-8")
    return log
