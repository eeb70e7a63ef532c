"""Fine-tuning a pretrained model on labeled runtimes, and exporting it.

:func:`finetune_examples` is the shipped recipe's stage 2, run per fold and on every
repository by :mod:`laser_ci.evaluation.lm_recipe`; :func:`run_finetune` is ``laser-ci
finetune``: a shipped model adapted to one repository's history, its latest 20% of runs by
commit date the validation set. Warm training texts lose their history block with
probability ``p_cold`` and have runtime and history rescaled together (``scale_aug``), so
the model reads the history instead of remembering each repository's level; a cold text's
prompt carries a tabular p50 that never saw its label (:mod:`laser_ci.training.references`)."""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import click
import numpy as np

from laser_ci.text.numbers import NumberCodec
from laser_ci.training.config import TrainConfig, base_prompt, prompt_codec
from laser_ci.training.loops import _accelerator, evaluate_loss, finetune_loop, make_items
from laser_ci.training.network import load_base, load_model

# laser-ci finetune: one repository, so learning its own level is the point (no rescaling)
FINETUNE_CONFIG = TrainConfig(epochs=3, lr=2e-4, patience=1, batch_size=8, threads=1,
                              pretrain_steps=0, scale_aug=0.0, select_on="number_loss",
                              max_val_decode=400)


@dataclass
class LabeledText:
    """The fields of :class:`laser_ci.training.example.Example` that training reads."""

    text: str
    runtime_s: float
    kind: str
    conclusion: str
    repo: str
    reference: float | None = None  # a cold text's reference runtime (cold_reference models)


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
        tr.append(LabeledText(text, runtime, e.kind, e.conclusion, e.repo, reference))
    va = []
    for e in val:
        text = e.text_warm if e.text_warm is not None else e.text
        va.append(LabeledText(text, e.runtime_s, e.kind, e.conclusion, e.repo, ref(text, e)))
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


def run_finetune(data_dir: str | os.PathLike[str], base_dir: str | os.PathLike[str],
                 out_dir: str | os.PathLike[str], cfg: TrainConfig, *,
                 device: str = "auto") -> dict[str, Any]:
    """Adapt a shipped model to one repository's history (``laser-ci finetune``)."""
    from laser_ci.predictors.lm import load_reference, prompt_references, read_config
    from laser_ci.text.tokenize import load_tokenizer
    from laser_ci.training.examples import load_examples

    base = Path(base_dir)
    base_cfg = read_config(base)
    try:
        cfg = replace(cfg, **base_prompt(base_cfg))
    except ValueError as exc:
        raise click.ClickException(f"{base}: {exc}") from None
    codec = NumberCodec(**base_cfg["codec"])
    acc = _accelerator(cfg, device)
    tok = load_tokenizer(base / "tokenizer.json")
    model = load_model(base)
    model.to(acc.device)
    examples = [e for e in load_examples(data_dir, kinds=cfg.kinds, cache=False) if e.runtime_s > 0]
    if cfg.success_only:
        examples = [e for e in examples if e.conclusion == "success"]
    if len(examples) < 5:
        raise click.ClickException(f"{data_dir}: only {len(examples)} labeled examples")
    runs = sorted({(e.commit_date, e.run_id) for e in examples})
    cut = runs[int(len(runs) * 0.8)] if len(runs) >= 5 else runs[-1]
    train_ex = [e for e in examples if (e.commit_date, e.run_id) < cut]
    val_ex = [e for e in examples if (e.commit_date, e.run_id) >= cut]
    # a cold text's reference: the base's own reference model's p50 (never saw these labels)
    reference_model = load_reference(base) if cfg.cold_reference else None
    refs = None
    if reference_model is not None:
        from laser_ci.training.references import reference_key

        refs = {reference_key(e): r for e, r in zip(
            examples, prompt_references(reference_model, [e.text for e in examples]),
            strict=True)}
    train_ex, val_ex = with_history_texts(train_ex, val_ex, cfg, refs)
    prompt = prompt_codec(tok, codec, cfg)
    log: dict[str, Any] = {"config": asdict(cfg), "base": str(base),
                           "data": {"train": len(train_ex), "val": len(val_ex)}}
    before = evaluate_loss(model, make_items(val_ex, prompt), prompt.pad_id, cfg.batch_size,
                           acc.device)
    log["val_before"] = before
    if cfg.max_val_decode:
        log["eval_before"] = decode_metrics(base, _sample_val(val_ex, cfg.max_val_decode, cfg.seed),
                                            "model.onnx", cfg.num_samples, max(cfg.threads, 1))
    best = finetune_loop(model, make_items(train_ex, prompt), make_items(val_ex, prompt), cfg,
                         acc, prompt.pad_id, log)
    if best is not None:
        model.load_state_dict(best)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log["eval"] = export_and_check(model, tok, out, cfg, val_ex, codec,
                                   reference_model=reference_model)
    (out / "train_report.json").write_text(json.dumps(log, indent=2) + "\n")
    return log


def export_and_check(model: Any, tok: Any, out: Path, cfg: TrainConfig,
                     val_ex: Sequence[Any], codec: NumberCodec,
                     reference_model: Any = None) -> dict[str, Any]:
    """Export int8 (and fp32) ONNX to ``out``, decode a sample of ``val_ex`` with both, and
    keep the int8 graph unless it drifts from fp32 (then ship fp32)."""
    from laser_ci.training.export import export_model

    def prompt_lines() -> None:  # the prompt lines the model was trained with
        if cfg.outcome or cfg.cold_reference:
            from laser_ci.training.references import attach_reference

            attach_reference(out, outcome=cfg.outcome, reference=reference_model)

    model = model.to("cpu").float().eval()
    export_model(model, tok, out, max_prompt_tokens=cfg.max_prompt_tokens, codec=codec,
                 warm_target=cfg.warm_target, num_samples=cfg.num_samples,
                 keep_fp32=True, full_vocab_graph=True, layout=cfg.layout,
                 warm_anchor=cfg.warm_anchor,
                 extra={"training": {"size": cfg.size, "seed": cfg.seed}})
    prompt_lines()
    sample = _sample_val(val_ex, cfg.max_val_decode, cfg.seed)
    res = {
        "int8": decode_metrics(out, sample, "model.onnx", cfg.num_samples, max(cfg.threads, 1)),
        "fp32": decode_metrics(out, sample, "model.fp32.onnx", cfg.num_samples, max(cfg.threads, 1)),
    }
    i8, f32 = res["int8"].get("log_mae"), res["fp32"].get("log_mae")
    res["shipped"] = "int8"
    if i8 is not None and f32 is not None and i8 > f32 + 0.05:
        res["shipped"] = "fp32"
        export_model(model, tok, out, max_prompt_tokens=cfg.max_prompt_tokens, codec=codec,
                     warm_target=cfg.warm_target, num_samples=cfg.num_samples, int8=False,
                     keep_fp32=True, layout=cfg.layout, warm_anchor=cfg.warm_anchor,
                     extra={"training": {"size": cfg.size}})
        prompt_lines()
    config_path = out / "laser.json"
    config = json.loads(config_path.read_text())
    config["metrics"] = {"val": res}
    config_path.write_text(json.dumps(config, indent=2) + "\n")  # not a hashed file
    return res


def decode_metrics(model_dir: Path, examples: Sequence[Any], model_file: str,
                   num_samples: int, threads: int) -> dict[str, Any]:
    """Sampled predictions of an exported graph on ``examples``: log-MAE of the median,
    p10-p90 coverage, and seconds."""
    from laser_ci.predictors.lm import LaserModel

    if not examples:
        return {}
    m = LaserModel(model_dir, model_file=model_file, num_samples=num_samples, threads=threads)
    t = time.time()
    preds = m.predict([e.text for e in examples])
    secs = time.time() - t
    true = np.array([e.runtime_s for e in examples])
    err = np.abs(np.log(np.maximum([p.p50 for p in preds], 1.0)) - np.log(np.maximum(true, 1.0)))
    held = (true >= np.array([p.p10 for p in preds])) & (true <= np.array([p.p90 for p in preds]))
    succ = np.array([e.conclusion == "success" for e in examples])
    return {"examples": len(examples), "log_mae": float(err.mean()),
            "log_mae_success": float(err[succ].mean()) if succ.any() else None,
            "coverage_p10_p90": float(np.mean(held)), "seconds": round(secs, 2),
            "by_kind": {k: float(err[[e.kind == k for e in examples]].mean())
                        for k in sorted({e.kind for e in examples})}}


def _sample_val(val: Sequence[Any], n: int, seed: int) -> list[Any]:
    if n <= 0:
        return []
    return list(val) if len(val) <= n else random.Random(seed).sample(list(val), n)

