"""The language model's training settings: one :class:`TrainConfig`, whose defaults are the
shipped recipe's (``model/lm/laser.json`` ``training.recipe``) for both its stages:
``laser-ci train`` (:mod:`laser_ci.training.pretrain`) and the fine-tune that ``laser-ci eval
--folds 5 --lm-ship`` runs (:data:`FOLD_CONFIG`, :mod:`laser_ci.evaluation.lm_recipe`). The
levers tried and not adopted are in ``model/lm/EXPERIMENTS.md``, with their commits."""

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
    p_cold: float = 0.3  # a warm training text loses its history block with this probability
    scale_aug: float = 1.0  # share of warm texts rescaled by exp(U(-scale_range, scale_range))
    scale_range: float = 1.5
    # the prompt (laser_ci.text.tokenize.PromptCodec): warm, the ratio to the recent median;
    # cold, to a tabular reference (laser_ci.training.references); the run's outcome last
    warm_target: str = "ratio"
    outcome: bool = True
    cold_reference: str | None = "tabular"
    layout: str = "shared-prefix"
    warm_anchor: str = "recent"
    pretrain_steps: int = 820  # pretraining: the shipped base's (runs/base512)
    pretrain_seq_len: int = 512
    pretrain_batch_size: int = 8
    pretrain_lr: float = 1e-3
    pretrain_minutes: float = 22.0  # 0: no limit; else pretraining stops after this long
    # fine-tuning on runtimes
    epochs: int = 1
    batch_size: int = 32
    lr: float = 3e-4
    weight_decay: float = 0.01
    warmup_frac: float = 0.05
    patience: int = 3
    grad_clip: float = 1.0
    # the val loss that picks the epoch: number_loss, warm_number_loss or cold_number_loss
    select_on: str = "warm_number_loss"
    finetune_minutes: float = 0.0  # 0: no limit; else fine-tuning stops after this long
    threads: int = 2
    mixed_precision: str = "no"
    num_samples: int = 16  # decoding samples per text (written to laser.json)
    # usage targets written after the runtime (laser_ci.text.targets): `laser-ci finetune`
    # sets them when the history holds enough measured runs
    targets: tuple[str, ...] = ()


# a cross-validation fold's fine-tune, and the shipped model's (--lm-ship)
FOLD_CONFIG = TrainConfig(pretrain_steps=0)


def prompt_codec(tok: Any, codec: NumberCodec, cfg: TrainConfig,
                 specials: tuple[str, str, str] = (PAD, EOS, SEP)) -> PromptCodec:
    """The prompt layout ``cfg`` trains (and its exported folder reads)."""
    return PromptCodec(tok, codec, cfg.max_prompt_tokens, warm_target=cfg.warm_target,
                       outcome=cfg.outcome, cold_reference=cfg.cold_reference is not None,
                       layout=cfg.layout, warm_anchor=cfg.warm_anchor, specials=specials,
                       targets=tuple(cfg.targets))


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
            "warm_anchor": str(prompt.get("warm_anchor", "median")),
            "targets": tuple(str(t) for t in prompt.get("targets", ()))}
