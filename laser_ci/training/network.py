"""The language model as torch holds it: a ``LlamaForCausalLM`` built from a named size,
or loaded from a checkpoint or a shipped model folder to be fine-tuned."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from laser_ci.text.numbers import DEFAULT_CODEC, NumberCodec
from laser_ci.training.config import SIZES, TrainConfig, codec_for


def build_model(vocab_size: int, size: str | dict[str, int], max_positions: int = 2048) -> Any:
    """A randomly initialised ``LlamaForCausalLM`` of a named size (or explicit fields)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    fields = SIZES[size] if isinstance(size, str) else dict(size)
    config = LlamaConfig(
        vocab_size=vocab_size,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        rope_theta=10000.0,
        attention_dropout=0.0,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=1,
        **fields,
    )
    return LlamaForCausalLM(config)


def count_parameters(model: Any) -> int:
    return int(sum(p.numel() for p in model.parameters()))


def load_model(folder: str | os.PathLike[str]) -> Any:
    """An fp32 ``LlamaForCausalLM`` from a shipped model folder (``laser.json`` with
    ``weights.safetensors`` and ``hf_config.json``) or a transformers checkpoint folder."""
    from safetensors.torch import load_file
    from transformers import LlamaConfig, LlamaForCausalLM

    from laser_ci.predictors.lm import read_config

    base = Path(folder)
    if not (base / "laser.json").is_file():
        return LlamaForCausalLM.from_pretrained(str(base)).float()
    files = read_config(base)["files"]
    for name in ("weights.safetensors", "hf_config.json"):
        if name not in files:
            raise click.ClickException(f"{base}: no {name}; this model cannot be fine-tuned")
    model = LlamaForCausalLM(LlamaConfig.from_dict(json.loads((base / "hf_config.json").read_text())))
    missing, unexpected = model.load_state_dict(
        {k: v.float() for k, v in load_file(str(base / "weights.safetensors")).items()},
        strict=False)
    if [k for k in missing if k != "lm_head.weight"] or unexpected:
        raise click.ClickException(f"{base}: weights do not fit the config: {missing} {unexpected}")
    model.tie_weights()
    return model



def load_base(base_dir: str | os.PathLike[str], cfg: TrainConfig) -> tuple[TrainConfig, NumberCodec,
                                                                           Any, Any]:
    """``(cfg, codec, tokenizer, model)`` to fine-tune from ``base_dir``: a shipped model
    folder (its prompt budget, output semantics and codec win over ``cfg``) or a checkpoint
    folder with ``tokenizer.json`` (``OUT/pretrained``: ``cfg``'s, and the default codec)."""
    from laser_ci.predictors.lm import read_config
    from laser_ci.text.tokenize import load_tokenizer

    base = Path(base_dir)
    if (base / "laser.json").is_file():
        base_cfg = read_config(base)
        cfg = replace(cfg, max_prompt_tokens=int(base_cfg["prompt"]["max_prompt_tokens"]),
                      warm_target=str(base_cfg["prompt"].get("warm_target", "runtime")))
        codec = NumberCodec(**base_cfg["codec"])
    else:
        codec = codec_for(cfg, DEFAULT_CODEC)
    if not (base / "tokenizer.json").is_file():
        raise click.ClickException(f"{base}: no tokenizer.json")
    return cfg, codec, load_tokenizer(base / "tokenizer.json"), load_model(base)
