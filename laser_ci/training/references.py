"""Reference runtimes for the language model's prompts: a tabular p50, never in-sample.

A model trained with ``cold_reference`` (:mod:`laser_ci.text.tokenize`) reads, in the prompt
of a text without history, the p50 of a tabular model and writes its runtime as a ratio to
that reference: at inference the tabular model shipped in the model folder's
``reference/``; in training one with the same hyperparameters fit on the other groups
(repositories), never on the text's own, or the model would learn to trust a reference that
is better on its training texts than anywhere else.

:func:`attach_reference` writes the shipped part: the tabular model under ``reference/``,
and the prompt options and file hashes in ``laser.json``.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from laser_ci.training.example import Example

ReferenceKey = tuple[str, str, str, str, str | None, bool]


def reference_key(e: Example) -> ReferenceKey:
    """What identifies one labeled example's cold text across copies (a run's job or
    workflow)."""
    return (e.repo, e.workflow_path, e.run_id, e.kind, e.job_name, False)


def grid_point(params: Mapping[str, Any]) -> dict[str, Any]:
    """The grid hyperparameters of a fitted tabular model (its ``info["params"]``)."""
    from laser_ci.training.baselines import TAB_GRID

    missing = [k for k in TAB_GRID if k not in params]
    if missing:
        raise ValueError(f"tabular params lack {missing}: not a model of this recipe")
    return {k: params[k] for k in TAB_GRID}


def out_of_fold_references(
    examples: Sequence[Example],
    groups: Sequence[int],
    params: Mapping[str, Any],
    *,
    feats: dict[str, dict[str, float]] | None = None,
    seeds: int | None = None,
) -> dict[ReferenceKey, float]:
    """The reference (seconds) of every example's cold text: the p50 of a tabular model
    with ``params`` (:func:`grid_point`) fit on the examples of the other ``groups``.

    A group with no other group to learn from gets no references (its texts then train
    without a reference line, as texts of a plain model do).
    """
    from laser_ci.training.baselines import SEEDS, Tabular, text_features

    if len(groups) != len(examples):
        raise ValueError("one group per example")
    cfg = grid_point(params)
    bags = SEEDS if seeds is None else seeds
    if feats is None:
        feats = text_features(examples)
    out: dict[ReferenceKey, float] = {}
    labels = np.asarray(groups)
    for g in sorted(set(groups)):
        train = [e for e, h in zip(examples, labels, strict=True) if h != g]
        held = [e for e, h in zip(examples, labels, strict=True) if h == g]
        if not train or not held:
            continue
        tab = Tabular(train, feats)
        names, model = tab.fit(cfg, seeds=bags)
        mu = model.predict(tab.matrix(held, names))
        for e, m in zip(held, mu, strict=True):
            out[reference_key(e)] = float(math.exp(m))
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def attach_reference(model_dir: str | Path, *, outcome: bool, reference: Any = None) -> None:
    """Make an exported model folder read its prompt lines: ``prompt.outcome`` and, with a
    tabular model (``reference``), the ``reference/`` folder and ``prompt.cold_reference``,
    with the reference files' sha256 in ``laser.json``."""
    from laser_ci.predictors.lm import CONFIG_NAME, REFERENCE_DIR

    d = Path(model_dir)
    config = json.loads((d / CONFIG_NAME).read_text(encoding="utf-8"))
    config["prompt"]["outcome"] = bool(outcome)
    if reference is not None:
        target = d / REFERENCE_DIR
        if target.exists():
            shutil.rmtree(target)
        reference.save(target)
        config["prompt"]["cold_reference"] = "tabular"
        for f in sorted(target.iterdir()):
            config["files"][f"{REFERENCE_DIR}/{f.name}"] = _sha256(f)
    (d / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
