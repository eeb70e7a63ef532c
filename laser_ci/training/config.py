"""The language model's training settings: one :class:`TrainConfig`, the shipped recipe's.

The shipped model (``model/lm``, its ``laser.json`` ``training.recipe``) is made in two
stages, both with these settings:

1. ``laser-ci train``: a tokenizer and a causal LM pretrained on the unlabeled workflow
   corpus only (:mod:`laser_ci.training.pretrain`);
2. ``laser-ci eval --folds 5 --lm-base OUT/pretrained --lm-ship DIR``: fine-tuned on the
   labeled runs as each cross-validation fold's model is (:data:`FOLD_CONFIG`,
   :mod:`laser_ci.training.lm_recipe`), then decoded with its band scales and shrinks fit
   on fold 0.

``laser-ci finetune`` adapts such a model to one repository's history
(:mod:`laser_ci.training.finetune`). The levers tried and not adopted are in
``model/lm/EXPERIMENTS.md``, each with the commit that ran it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from laser_ci.text.numbers import NumberCodec
from laser_ci.text.tokenize import DEFAULT_VOCAB_SIZE, EOS, PAD, SEP, PromptCodec

IGNORE = -100
RATIO_MIN_EXPONENT = -2  # a ratio model's outputs reach down to 1.00e-02 (~300x under the median)
PRETRAIN_MARKER = "laser_pretrain.json"  # in OUT/pretrained of `laser-ci train`

# name -> LlamaConfig fields. Parameters with the default 8k vocab (tied embeddings):
# tiny ~0.6M (tests), small ~5.1M (shipped).
SIZES: dict[str, dict[str, int]] = {
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=2, num_key_value_heads=1),
    "small": dict(hidden_size=256, intermediate_size=768, num_hidden_layers=4,
                  num_attention_heads=4, num_key_value_heads=1),
}


@dataclass
class TrainConfig:
    """Every knob of a training run (written to ``train_report.json``); the defaults are
    the shipped model's, for both stages."""

    size: str = "small"
    seed: int = 0
    vocab_size: int = DEFAULT_VOCAB_SIZE
    max_prompt_tokens: int = 256
    kinds: tuple[str, ...] = ("job", "workflow")
    success_only: bool = False
    # training texts (laser_ci.training.history.training_texts): the history block when a
    # run has earlier runs, left out with probability p_cold
    p_cold: float = 0.3
    # share of warm training texts whose runtime and history are rescaled together by a
    # factor exp(U(-scale_range, scale_range)): teaches reading the history, not the repo
    scale_aug: float = 1.0
    scale_range: float = 1.5
    # the prompt (laser_ci.text.tokenize.PromptCodec): a warm output is the ratio to the
    # history's recent median, a cold one the ratio to a tabular reference (cold_reference,
    # out of fold in training: laser_ci.training.references); outcome: the prompt ends with
    # the run's conclusion; the job's own lines after its body (shared-prefix)
    warm_target: str = "ratio"
    outcome: bool = True
    cold_reference: str | None = "tabular"
    layout: str = "shared-prefix"
    warm_anchor: str = "recent"
    # a static int8 export calibrates its activation scales on this many training prompts
    calibration_prompts: int = 128
    # pretraining (causal LM on the corpus): the shipped base's (runs/base512)
    pretrain_steps: int = 820
    pretrain_seq_len: int = 512
    pretrain_batch_size: int = 8
    pretrain_lr: float = 1e-3
    pretrain_minutes: float = 22.0  # 0: no limit; else pretraining stops after this long
    corpus_max_docs: int = 0  # 0: every corpus document
    # fine-tuning on runtimes
    epochs: int = 1
    batch_size: int = 32
    lr: float = 3e-4
    weight_decay: float = 0.01
    warmup_frac: float = 0.05
    patience: int = 3
    grad_clip: float = 1.0
    # the validation loss that picks the best epoch: number_loss (every val text) or
    # warm_number_loss / cold_number_loss (texts with / without a history block)
    select_on: str = "warm_number_loss"
    finetune_minutes: float = 0.0  # 0: no limit; else fine-tuning stops after this long
    # runtime
    threads: int = 2
    mixed_precision: str = "no"
    max_val_decode: int = 0  # val examples decoded with the exported graph (0: none)
    num_samples: int = 16  # decoding samples per text (written to laser.json)


# a cross-validation fold's fine-tune, and the shipped model's (--lm-ship)
FOLD_CONFIG = TrainConfig(pretrain_steps=0)


def prompt_codec(tok: Any, codec: NumberCodec, cfg: TrainConfig,
                 specials: tuple[str, str, str] = (PAD, EOS, SEP)) -> PromptCodec:
    """The prompt layout ``cfg`` trains (and its exported folder reads)."""
    return PromptCodec(tok, codec, cfg.max_prompt_tokens, warm_target=cfg.warm_target,
                       outcome=cfg.outcome, cold_reference=cfg.cold_reference is not None,
                       layout=cfg.layout, warm_anchor=cfg.warm_anchor, specials=specials)


def codec_for(cfg: TrainConfig, codec: NumberCodec) -> NumberCodec:
    """``codec``, widened below 1 for a ``ratio`` model (its warm outputs are ratios)."""
    if cfg.warm_target == "ratio" and codec.min_exponent > RATIO_MIN_EXPONENT:
        return replace(codec, min_exponent=RATIO_MIN_EXPONENT)
    return codec


def base_prompt(base_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The prompt settings of a model folder's ``laser.json`` as :class:`TrainConfig`
    fields: a model adapted from it reads (and ships) the same prompts."""
    prompt = base_cfg["prompt"]
    if prompt.get("warm_reference"):
        raise ValueError("a model whose warm texts read a tabular reference (not a recipe "
                         "laser-ci trains any more; model/lm/EXPERIMENTS.md)")
    return {"max_prompt_tokens": int(prompt["max_prompt_tokens"]),
            "warm_target": str(prompt.get("warm_target", "runtime")),
            "outcome": bool(prompt.get("outcome", False)),
            "cold_reference": prompt.get("cold_reference"),
            "layout": str(prompt.get("layout", "serial")),
            "warm_anchor": str(prompt.get("warm_anchor", "median"))}
