"""Stage 1 of the shipped recipe (``laser-ci train``): a tokenizer (a byte-level BPE with
digits split, :mod:`laser_ci.text.tokenize`) and a causal LM pretrained on the distinct
workflow file versions of ``corpus.jsonl.gz`` only: no runtime, no labeled example's text,
so ``laser-ci eval --folds K --lm-base OUT/pretrained`` may fine-tune it per fold. The
shipped base: 747 steps of 8x512 tokens in 22 minutes on the 2-core CPU."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
import numpy as np

from laser_ci.training.config import PRETRAIN_MARKER, TrainConfig
from laser_ci.training.loops import _accelerator, pack_tokens, pretrain
from laser_ci.training.network import build_model, count_parameters


def corpus_texts(data_dir: str | os.PathLike[str], split: str = "all",
                 max_docs: int = 0, seed: int = 0) -> list[str]:
    """Unlabeled workflow texts of one split's repositories (distinct blobs, stable order)."""
    from laser_ci.training.example import split_of
    from laser_ci.training.examples import load_blobs, load_corpus

    rows = [r for r in load_corpus(data_dir) if split == "all" or split_of(str(r["repo"])) == split]
    ids = list(dict.fromkeys(str(r["blob"]) for r in rows))
    if max_docs and len(ids) > max_docs:
        ids = sorted(random.Random(seed).sample(ids, max_docs), key=ids.index)
    blobs = load_blobs(data_dir, ids)
    return [blobs[i] for i in ids if blobs.get(i)]


def tokenize_corpus(texts: Sequence[str], cfg: TrainConfig,
                    log: dict[str, Any]) -> tuple[Any, np.ndarray | None]:
    """A tokenizer trained on ``texts`` and, when ``cfg`` pretrains, the texts packed into
    ``[n, pretrain_seq_len]`` rows; sizes and seconds go to ``log``."""
    from laser_ci.text.tokenize import EOS, train_tokenizer

    t = time.time()
    tok = train_tokenizer(texts, cfg.vocab_size)
    log["tokenizer"] = {"documents": len(texts), "vocab": tok.get_vocab_size(),
                        "seconds": round(time.time() - t, 1)}
    rows = None
    if cfg.pretrain_steps > 0:
        t = time.time()
        encs = tok.encode_batch(texts, add_special_tokens=False)
        rows = pack_tokens([e.ids for e in encs], cfg.pretrain_seq_len, tok.token_to_id(EOS))
        if tok.get_vocab_size() <= 1 << 16:
            rows = rows.astype(np.uint16)
        log["pretrain_data"] = {"sequences": int(len(rows)), "tokens": int(rows.size),
                                "tokenize_seconds": round(time.time() - t, 1)}
    return tok, rows


def run_pretrain(data_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str],
                 cfg: TrainConfig, *, device: str = "auto",
                 corpus_split: str = "all") -> dict[str, Any]:
    """A base pretrained on the unlabeled workflow corpus only (``laser-ci train``): the
    tokenizer and the causal LM see the distinct file versions of
    ``corpus.jsonl.gz`` of ``corpus_split``'s repositories and nothing from ``runs``: no
    runtime, no labeled example's text. Writes ``OUT/pretrained`` (a transformers
    checkpoint, ``tokenizer.json`` and ``laser_pretrain.json``, which says so) and
    ``OUT/train_report.json``; ``laser-ci eval --folds K --lm-base OUT/pretrained``
    fine-tunes it per fold."""
    from laser_ci.training.examples import DataError, load_corpus

    if cfg.pretrain_steps <= 0:
        raise click.ClickException("laser-ci train needs --pretrain-steps > 0")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    acc = _accelerator(cfg, device)
    t_all = time.time()
    texts = corpus_texts(data_dir, corpus_split, seed=cfg.seed)
    if not texts:
        raise DataError(f"{data_dir}: no corpus documents (corpus.jsonl.gz or corpus.jsonl)")
    from laser_ci.training.example import split_of

    repos = {str(r["repo"]) for r in load_corpus(data_dir)
             if corpus_split == "all" or split_of(str(r["repo"])) == corpus_split}
    log: dict[str, Any] = {"config": asdict(cfg), "device": str(acc.device),
                           "processes": acc.num_processes, "pretrain_only": True}
    tok, rows = tokenize_corpus(texts, cfg, log)
    if rows is None or not len(rows):
        raise click.ClickException(f"{data_dir}: the corpus does not fill one "
                                   f"{cfg.pretrain_seq_len}-token row (--pretrain-seq-len)")
    model = build_model(tok.get_vocab_size(), cfg.size, max(2048, cfg.max_prompt_tokens + 64))
    log["parameters"] = count_parameters(model)
    model.to(acc.device)
    pretrain(model, rows, cfg, acc, log)
    log["seconds"] = round(time.time() - t_all, 1)
    if acc.is_main_process:
        base = out / "pretrained"
        acc.unwrap_model(model).save_pretrained(str(base))
        tok.save(str(base / "tokenizer.json"))
        marker = {"pretrain_only": True, "labels": False,
                  "corpus": {"data": str(data_dir), "split": corpus_split,
                             "documents": len(texts), "repos": len(repos),
                             "what": "distinct workflow file versions of corpus.jsonl, raw "
                                     "YAML; no runs, no runtimes, no labeled example's text"},
                  "size": cfg.size, "seed": cfg.seed, "seq_len": cfg.pretrain_seq_len,
                  "pretrain": log.get("pretrain"),
                  "tokenizer": log.get("tokenizer")}
        (base / PRETRAIN_MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        (out / "train_report.json").write_text(json.dumps(log, indent=2) + "\n")
    return log
