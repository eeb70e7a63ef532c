"""Fine-tuning a pretrained model on labeled runtimes, and exporting it.

:func:`finetune_examples` is the shipped recipe's stage 2, run per fold and on every
repository by :mod:`laser_ci.evaluation.lm_recipe`; ``laser-ci finetune`` (a shipped model
learning one repository's history) is :mod:`laser_ci.training.learn`. Warm training texts
lose their history block with probability ``p_cold`` and have runtime and history rescaled
together (``scale_aug``), so the model reads the history instead of remembering each
repository's level; a cold text's prompt carries a tabular p50 that never saw its label
(:mod:`laser_ci.training.references`)."""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from laser_ci.training.config import TrainConfig, prompt_codec
from laser_ci.training.loops import _accelerator, finetune_loop, make_items
from laser_ci.training.network import load_base

# laser-ci finetune: one repository, so learning its own level is the point (no rescaling)
FINETUNE_CONFIG = TrainConfig(epochs=3, lr=2e-4, patience=1, batch_size=8, threads=1,
                              pretrain_steps=0, scale_aug=0.0, select_on="number_loss")


@dataclass
class LabeledText:
    """The fields of :class:`laser_ci.training.example.Example` that training reads."""

    text: str
    runtime_s: float
    kind: str
    conclusion: str
    repo: str
    reference: float | None = None  # a cold text's reference runtime (cold_reference models)
    usage: dict[str, float] | None = None  # what the run used (laser_ci.text.targets)


def with_history_texts(train: Sequence[Any], val: Sequence[Any], cfg: TrainConfig,
                       references: Mapping[Any, float] | None = None,
                       ) -> tuple[list[LabeledText], list[LabeledText]]:
    """Training texts with and without their history block (cold and warm start in one
    model, see the module doc); the validation texts carry the history block whenever there
    are earlier runs, as ``laser-ci eval --history prior`` feeds them. ``references``
    (:func:`laser_ci.training.references.out_of_fold_references`) gives each cold text its
    reference runtime."""
    from laser_ci.training.history import rescaled, training_texts
    from laser_ci.training.references import reference_key

    def ref(text: str, e: Any) -> float | None:
        if not references or text is not e.text:
            return None
        return references.get(reference_key(e))

    pairs = training_texts(train, mode="drop", p_cold=cfg.p_cold, seed=cfg.seed)
    rng = random.Random(cfg.seed + 1)
    tr = []
    for text, e in pairs:
        runtime, reference = e.runtime_s, ref(text, e)
        if text is e.text_warm and rng.random() < cfg.scale_aug:
            factor = math.exp(rng.uniform(-cfg.scale_range, cfg.scale_range))
            text, runtime = rescaled(e, factor)
        tr.append(LabeledText(text, runtime, e.kind, e.conclusion, e.repo, reference,
                              getattr(e, "usage", None)))
    va = []
    for e in val:
        text = e.text_warm if e.text_warm is not None else e.text
        va.append(LabeledText(text, e.runtime_s, e.kind, e.conclusion, e.repo, ref(text, e),
                              getattr(e, "usage", None)))
    return tr, va


def finetune_examples(base_dir: str | os.PathLike[str], train_ex: Sequence[Any],
                      val_ex: Sequence[Any], out_dir: str | os.PathLike[str],
                      cfg: TrainConfig, *, device: str = "auto",
                      references: Mapping[Any, float] | None = None,
                      reference_model: Any = None,
                      include_weights: bool = False) -> dict[str, Any]:
    """Fine-tune from ``base_dir`` on labeled examples (:class:`~laser_ci.training.example.
    Example`, with their history), ``val_ex`` picking the best epoch, and export the int8
    graph alone to ``out_dir`` (what ``laser-ci eval --folds`` does per fold). With
    ``cfg.cold_reference``, ``references`` are the cold texts' out-of-fold references and
    ``reference_model`` the tabular model the exported folder ships to compute them at
    inference (fit on ``train_ex`` and ``val_ex``). ``include_weights``: also the fp16
    weights (the base of ``laser-ci finetune``; a shipped model has them). Returns the log
    (also ``train_report.json``)."""
    if cfg.cold_reference and (references is None or reference_model is None):
        raise ValueError("cold_reference needs the training texts' references and the model")
    from laser_ci.training.export import export_model

    t0 = time.time()
    cfg, codec, tok, model = load_base(base_dir, cfg)
    acc = _accelerator(cfg, device)
    model.to(acc.device)
    train_ex = [e for e in train_ex if e.runtime_s > 0]
    val_ex = [e for e in val_ex if e.runtime_s > 0]
    if cfg.success_only:
        train_ex = [e for e in train_ex if e.conclusion == "success"]
        val_ex = [e for e in val_ex if e.conclusion == "success"]
    tr, va = with_history_texts(train_ex, val_ex, cfg, references)
    prompt = prompt_codec(tok, codec, cfg)
    log: dict[str, Any] = {"config": asdict(cfg), "base": str(base_dir), "device": str(acc.device),
                           "data": {"train": len(tr), "val": len(va),
                                    "with_reference": sum(e.reference is not None for e in tr)}}
    train_items = make_items(tr, prompt)
    best = finetune_loop(model, train_items, make_items(va, prompt), cfg, acc,
                         prompt.pad_id, log)
    model = acc.unwrap_model(model)
    if best is not None:
        model.load_state_dict(best)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t = time.time()
    export_model(model.to("cpu").float().eval(), tok, out,
                 max_prompt_tokens=cfg.max_prompt_tokens, codec=codec,
                 warm_target=cfg.warm_target, num_samples=cfg.num_samples, int8=True,
                 include_weights=include_weights, layout=cfg.layout,
                 warm_anchor=cfg.warm_anchor,
                 extra={"training": {"base": str(base_dir), "seed": cfg.seed}})
    if cfg.outcome or cfg.cold_reference:
        from laser_ci.training.references import attach_reference

        attach_reference(out, outcome=cfg.outcome,
                         reference=reference_model if cfg.cold_reference else None)
    log["export_seconds"] = round(time.time() - t, 1)
    log["seconds"] = round(time.time() - t0, 1)
    (out / "train_report.json").write_text(json.dumps(log, indent=2) + "\n")
    return log
