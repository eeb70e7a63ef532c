"""Training the language model: tokenizer, causal-LM pretraining, runtime fine-tuning, export.

``laser-ci train --data DIR --out DIR`` runs, reproducibly from ``--seed``:

1. A byte-level BPE with digits split (:mod:`laser_ci.text.tokenize`) on the unlabeled workflow
   corpus (``corpus.jsonl.gz`` + ``blobs.jsonl.gz``) plus the training examples' texts.
2. A decoder-only transformer (a transformers ``LlamaConfig`` from scratch: RoPE, full
   attention, tied embeddings, grouped KV heads) pretrained as a causal LM on the same
   texts, packed into fixed-length sequences.
3. Fine-tuning on the labeled examples (:func:`laser_ci.training.examples.load_examples`, both task
   kinds in one model, told apart by the text's ``task:`` line) with the loss on the output
   tokens only (``{"runtime_s": "4.73e+02"}<eos>`` after the prompt). One model serves cold
   and warm start: a run with earlier runs is trained with its history block, or without it
   with probability ``--p-cold`` (``--history-mode drop``); the warm texts
   (``--scale-aug``: all by default) have their runtime and their history's numbers
   multiplied by one random factor in [e^-1.5, e^1.5], so that the model learns to read the
   history rather than to remember each training repository's level. Validation on the
   held-out repositories (:func:`laser_ci.training.examples.split_of`, texts with history where there is
   any) after every epoch; the best checkpoint is kept: the lowest loss on the number's
   tokens of the texts with history (``--select-on``; a longer schedule lowers it while the
   cold texts' loss rises, yet both regimes' log-MAE improved, see the model card).
4. Export to ONNX int8 (:mod:`laser_ci.training.export`), then sampled predictions on validation with
   the int8 and the fp32 graph, both reported in ``train_report.json``.

Validation repositories are excluded from the tokenizer and the pretraining corpus too.

Presets: ``--preset cpu-1h`` trains from scratch on a 2-core CPU in under an hour (15 min
of pretraining, 22 min of fine-tuning, 256-token prompts); ``--preset gpu`` is the one-GPU
configuration of the shipped base model. ``--init DIR`` continues from a checkpoint or a
shipped model folder instead (no tokenizer training, no pretraining).

Scaling: the loops run through ``accelerate``. ``--device cuda --mixed-precision bf16`` on
one GPU; ``accelerate launch $(which laser-ci) train ...`` or ``torchrun --nproc-per-node N
-m laser_ci train ...`` trains data-parallel (each process takes its share of every batch;
early stopping and time limits are decided by the first process and broadcast, so all
stop together; tested with two CPU processes). On CPU keep ``--threads`` at the cores you
have. ``--save-bundle FILE`` writes the prepared data (tokenizer, packed corpus, examples;
a few MB) so a machine without the data set can train with ``--bundle FILE``.

Measured (``small``, 5.1M parameters): on one H200, pretraining ran 2M tokens/s
(195M tokens in 96 s, bf16, batch 128x512) and one fine-tuning epoch took ~15 s; on this
2-core CPU (2 threads, otherwise idle) a fine-tuning epoch of the 5k training examples at
256-token prompts takes ~3 minutes (batch 32, ~1.1 s a step).

``laser-ci finetune --data COLLECTED_DIR --base model/ --out DIR`` adapts a shipped model
(its ``weights.safetensors``) to one repository's own history: the latest 20% of runs by
commit date are its validation set.

torch is imported inside the commands only: ``laser-ci --help`` works without it.
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import click
import numpy as np

from laser_ci.report.progress import Progress
from laser_ci.text.numbers import DEFAULT_CODEC, NumberCodec
from laser_ci.text.tokenize import DEFAULT_VOCAB_SIZE, EOS, PAD, SEP, PromptCodec
from laser_ci.training.examples import reading_data

IGNORE = -100
RATIO_MIN_EXPONENT = -2  # a ratio model's outputs reach down to 1.00e-02 (~300x under the median)

# name -> LlamaConfig fields. Parameters with the default 8k vocab (tied embeddings):
# tiny ~0.6M (tests), small ~5.2M, base ~11M.
SIZES: dict[str, dict[str, int]] = {
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=2, num_key_value_heads=1),
    "small": dict(hidden_size=256, intermediate_size=768, num_hidden_layers=4,
                  num_attention_heads=4, num_key_value_heads=1),
    "base": dict(hidden_size=384, intermediate_size=1024, num_hidden_layers=6,
                 num_attention_heads=6, num_key_value_heads=2),
}


# Named starting points for ``laser-ci train --preset``; options given on the command line
# override them. The figures in model/lm/MODEL_CARD.md name the preset they came from.
PRESETS: dict[str, dict[str, Any]] = {
    # from scratch on a 2-core CPU in under an hour: tokenizer, 15 min of pretraining on
    # 256-token rows, 22 min of fine-tuning (the schedule fits the time), export and checks
    "cpu-1h": dict(size="small", threads=2, max_prompt_tokens=256, pretrain_seq_len=256,
                   pretrain_batch_size=16, pretrain_lr=1e-3, pretrain_steps=100_000,
                   pretrain_minutes=15.0, epochs=8, batch_size=32, lr=5e-4, patience=8,
                   finetune_minutes=22.0, max_val_decode=200),
    # one GPU (the shipped base model: an H200, bf16, ~2 minutes of pretraining)
    "gpu": dict(size="small", threads=8, mixed_precision="bf16", max_prompt_tokens=512,
                pretrain_seq_len=512, pretrain_batch_size=128, pretrain_lr=2e-3,
                pretrain_steps=100_000, pretrain_minutes=1.8, epochs=8, batch_size=32,
                lr=1e-4, patience=2),
}


@dataclass
class TrainConfig:
    """Every knob of a training run (written to ``train_report.json``)."""

    size: str = "small"
    seed: int = 0
    vocab_size: int = DEFAULT_VOCAB_SIZE
    max_prompt_tokens: int = 512
    kinds: tuple[str, ...] = ("job", "workflow")
    success_only: bool = False
    # the history block in training texts (laser_ci.training.history.training_texts): "drop"
    # uses the block when a run has earlier runs, except with probability p_cold
    history_mode: str = "drop"
    p_cold: float = 0.3
    # share of warm training texts whose runtime and history are rescaled together by a
    # factor exp(U(-scale_range, scale_range)): teaches reading the history, not the repo
    scale_aug: float = 1.0
    scale_range: float = 1.5
    # changed configurations from pairs of runs (laser_ci.training.history.changed_pairs):
    # up to this many extra warm texts per training example, each from an earlier run (not
    # the latest) whose configuration differs, as if it had been the latest; 0: none
    pairs: int = 0
    # what a warm prompt's output is (laser_ci.text.tokenize): "runtime" (seconds) or "ratio" (to
    # the history median; the codec then also allows exponents down to RATIO_MIN_EXPONENT)
    warm_target: str = "ratio"
    # prompt lines (laser_ci.text.tokenize): ``outcome`` asks for the run's conclusion;
    # ``cold_reference`` "tabular": a cold text reads a tabular p50 (out of fold in
    # training, laser_ci.training.references) and its output is the ratio to it
    outcome: bool = False
    cold_reference: str | None = None
    # ``warm_reference`` "tabular" (needs cold_reference): a text with history reads the
    # tabular model's history-anchored p50 too, and its output is the ratio to that
    warm_reference: str | None = None
    # where a job text's lines sit in the prompt (laser_ci.text.tokenize): "serial" or
    # "shared-prefix" (the instance lines at the end: a job's body is shared across runners)
    layout: str = "serial"
    # the history figure a warm ratio is over (laser_ci.text.tokenize): "median" (the last 20
    # runs) or "recent" (the median of the last 3)
    warm_anchor: str = "median"
    # the int8 export (laser_ci.training.export.quantize_int8): "dynamic", or "static" with
    # activation scales calibrated on calibration_prompts training prompts
    quantization: str = "dynamic"
    calibration_prompts: int = 128
    # pretraining (causal LM on the corpus); 0 steps skips it
    pretrain_steps: int = 1500
    pretrain_seq_len: int = 512
    pretrain_batch_size: int = 8
    pretrain_lr: float = 1e-3
    # fine-tuning on runtimes
    epochs: int = 4
    batch_size: int = 8
    lr: float = 5e-4
    weight_decay: float = 0.01
    warmup_frac: float = 0.05
    patience: int = 2
    grad_clip: float = 1.0
    # the validation loss that picks the best epoch: number_loss (every val text) or
    # warm_number_loss / cold_number_loss (texts with / without a history block)
    select_on: str = "warm_number_loss"
    # runtime
    threads: int = 1
    mixed_precision: str = "no"
    max_val_decode: int = 400  # val examples decoded with the exported graphs (0: none)
    num_samples: int = 16  # decoding samples per text (written to laser.json)
    corpus_max_docs: int = 0  # 0: every corpus document
    pretrain_minutes: float = 0.0  # 0: no limit; else pretraining stops after this long
    finetune_minutes: float = 0.0  # 0: no limit; else fine-tuning stops after this long


# ---- data ----------------------------------------------------------------------------------


def corpus_texts(data_dir: str | os.PathLike[str], split: str = "train",
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


def load_labeled(data_dir: str | os.PathLike[str], cfg: TrainConfig) -> tuple[list, list]:
    """(train, val) examples by repository split."""
    from laser_ci.training.example import split_of
    from laser_ci.training.examples import load_examples

    examples = load_examples(data_dir, kinds=cfg.kinds)
    if cfg.success_only:
        examples = [e for e in examples if e.conclusion == "success"]
    examples = [e for e in examples if e.runtime_s > 0]
    train = [e for e in examples if split_of(e.repo) == "train"]
    val = [e for e in examples if split_of(e.repo) == "val"]
    return with_history_texts(train, val, cfg)


def with_history_texts(train: Sequence[Any], val: Sequence[Any], cfg: TrainConfig,
                       references: Mapping[Any, float] | None = None,
                       ) -> tuple[list[LabeledText], list[LabeledText]]:
    """Training texts per ``cfg.history_mode`` (cold and warm start in one model); the
    validation texts carry the history block whenever there are earlier runs (``cold``:
    never), as ``laser-ci eval --history prior`` feeds them. ``references``
    (:func:`laser_ci.training.references.out_of_fold_references`) gives each cold text its
    reference runtime, and each warm text its own where it has one (a ``warm_reference``
    recipe); a rescaled warm text's reference is rescaled with it."""
    from laser_ci.training.history import changed_pairs, rescaled, training_texts
    from laser_ci.training.references import reference_key

    def ref(text: str, e: Any) -> float | None:
        if not references or (text is not e.text and text is not e.text_warm):
            return None
        return references.get(reference_key(e, warm=text is not e.text))

    pairs = training_texts(train, mode=cfg.history_mode, p_cold=cfg.p_cold, seed=cfg.seed)
    if cfg.pairs:
        pairs += [(e.text_warm, e) for e in changed_pairs(train, cfg.pairs, seed=cfg.seed)]
    rng = random.Random(cfg.seed + 1)
    tr = []
    for text, e in pairs:
        runtime, reference = e.runtime_s, ref(text, e)
        if text is e.text_warm and rng.random() < cfg.scale_aug:
            factor = math.exp(rng.uniform(-cfg.scale_range, cfg.scale_range))
            text, runtime = rescaled(e, factor)
            reference = None if reference is None else reference * factor
        tr.append(LabeledText(text, runtime, e.kind, e.conclusion, e.repo, reference))
    warm_val = cfg.history_mode != "cold"
    va = []
    for e in val:
        text = e.text_warm if warm_val and e.text_warm is not None else e.text
        va.append(LabeledText(text, e.runtime_s, e.kind, e.conclusion, e.repo, ref(text, e)))
    return tr, va


def pack_tokens(token_lists: Sequence[Sequence[int]], seq_len: int, eos_id: int) -> np.ndarray:
    """Documents joined with ``<eos>`` and cut into ``[n, seq_len]`` rows (remainder dropped)."""
    total = sum(len(t) + 1 for t in token_lists)
    flat = np.empty(total, dtype=np.int32)
    pos = 0
    for t in token_lists:
        flat[pos : pos + len(t)] = t
        flat[pos + len(t)] = eos_id
        pos += len(t) + 1
    n = total // seq_len
    return flat[: n * seq_len].reshape(n, seq_len)


@dataclass
class Item:
    """One fine-tuning sequence: prompt + output ids; loss where ``labels != IGNORE``."""

    ids: list[int]
    labels: list[int]  # next-token labels aligned with ids (IGNORE on the prompt)
    number_positions: list[int] = field(default_factory=list)  # positions of generated tokens
    runtime_s: float = 0.0
    kind: str = ""
    warm: bool = False  # the prompt carries a history block


def calibration_ids(items: Sequence[Item], n: int, seed: int) -> list[list[int]]:
    """The token ids (prompt and output) of ``n`` training items drawn with ``seed``: what
    a static int8 export calibrates its activation scales on."""
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(items), size=min(n, len(items)), replace=False)
    return [list(items[i].ids) for i in sorted(pick)]


def make_items(examples: Sequence[Any], prompt: PromptCodec) -> list[Item]:
    from laser_ci.predictors.baselines import parse_history

    items = []
    texts = [prompt.with_prompt_lines(e.text, outcome=getattr(e, "conclusion", None),
                                      reference=getattr(e, "reference", None)) for e in examples]
    for ex, text, p in zip(examples, texts, prompt.encode_texts(texts), strict=True):
        out, generated = prompt.target(ex.runtime_s, prompt.reference(text))
        ids = p + out + [prompt.eos_id]
        labels = [IGNORE] * len(p) + out + [prompt.eos_id]
        pos = [len(p) + k for k, g in enumerate(generated) if g]
        items.append(Item(ids, labels, pos, float(ex.runtime_s), ex.kind,
                          parse_history(ex.text) is not None))
    return items


def batches_by_length(n_items: int, lengths: Sequence[int], batch_size: int,
                      rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar length (less padding), in a shuffled order."""
    idx = list(range(n_items))
    rng.shuffle(idx)
    chunk = batch_size * 32
    out: list[list[int]] = []
    for s in range(0, len(idx), chunk):
        group = sorted(idx[s : s + chunk], key=lambda i: lengths[i])
        out.extend(group[k : k + batch_size] for k in range(0, len(group), batch_size))
    rng.shuffle(out)
    return out


# ---- model ---------------------------------------------------------------------------------


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


def _lr_lambda(total: int, warmup: int, plan: dict[str, int] | None = None):
    """Linear warmup, then cosine down to 10%. ``plan["total"]`` may be lowered while training
    (a time limit that will stop it early) so that the decay still completes."""
    plan = plan if plan is not None else {}
    plan.setdefault("total", total)
    plan.setdefault("warmup", warmup)

    def f(step: int) -> float:
        w = plan["warmup"]
        if step < w:
            return (step + 1) / max(w, 1)
        progress = (step - w) / max(plan["total"] - w, 1)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))

    return f


def _optimizer(model: Any, lr: float, weight_decay: float) -> Any:
    import torch

    decay, no_decay = [], []
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "norm" in n or "embed" in n else decay).append(p)
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr, betas=(0.9, 0.95), eps=1e-8,
    )


def _loss_module(model: Any) -> Any:
    """Wraps the LM so DDP sees one forward: returns (summed CE, number of target tokens)."""
    import torch
    import torch.nn.functional as F

    class LossModule(torch.nn.Module):
        def __init__(self, lm: Any) -> None:
            super().__init__()
            self.lm = lm

        def forward(self, input_ids: Any, attention_mask: Any, labels: Any) -> tuple[Any, Any]:
            hidden = self.lm.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            target = labels[:, 1:]
            sel = target != IGNORE
            h = hidden[:, :-1][sel]
            logits = self.lm.lm_head(h).float()
            loss = F.cross_entropy(logits, target[sel], reduction="sum")
            return loss, sel.sum()

    return LossModule(model)


def _collate(items: Sequence[Item], pad_id: int) -> dict[str, Any]:
    import torch

    n = max(len(it.ids) for it in items)
    ids = torch.full((len(items), n), pad_id, dtype=torch.long)
    mask = torch.zeros((len(items), n), dtype=torch.long)
    labels = torch.full((len(items), n), IGNORE, dtype=torch.long)
    for r, it in enumerate(items):
        k = len(it.ids)
        ids[r, :k] = torch.tensor(it.ids)
        mask[r, :k] = 1
        labels[r, :k] = torch.tensor(it.labels)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


# ---- phases ----------------------------------------------------------------------------------


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, dynamic_ncols=True, mininterval=2.0)


def _from_main(accelerator: Any, value: Any) -> Any:
    """``value`` as the main process has it, on every process: decisions that end a loop
    (time limits, early stopping) must agree across data-parallel processes, or the ones
    that go on wait forever for the others."""
    if accelerator.num_processes == 1:
        return value
    from accelerate.utils import broadcast_object_list

    return broadcast_object_list([value], from_process=0)[0]


def _refit_plan(plan: dict[str, int], total: int, done: int) -> None:
    """A time-limited schedule re-fit to ``total`` steps: the warmup shrinks with it (at most
    a twentieth of the steps, never below the steps already done in warmup), so a slow
    machine still decays its learning rate instead of stopping, or running on past its
    time, in the warmup."""
    warmup = plan["warmup"]
    if done < warmup:  # still warming up: at most a twentieth of the new total
        warmup = max(1, min(warmup, total // 20), done)
    plan["warmup"] = warmup
    plan["total"] = max(total, warmup + 1, done + 1)


def _refit_now(done: int) -> bool:
    """When a time-limited loop re-estimates how many steps fit: after 30 steps, then every
    100 (the machine may have been busier, or idler, at the start)."""
    return done == 30 or (done > 30 and done % 100 == 0)


def pretrain(model: Any, rows: np.ndarray, cfg: TrainConfig, accelerator: Any,
             log: dict[str, Any]) -> None:
    """Causal-LM training on packed ``rows`` for ``cfg.pretrain_steps`` steps."""
    import torch

    steps = cfg.pretrain_steps
    if steps <= 0 or len(rows) == 0:
        return
    wrapped = _loss_module(model)
    opt = _optimizer(model, cfg.pretrain_lr, cfg.weight_decay)
    warmup = max(1, min(steps // 20, 500))
    plan = {"total": steps, "warmup": warmup}
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _lr_lambda(steps, warmup, plan))
    wrapped, opt, sched = accelerator.prepare(wrapped, opt, sched)
    g = np.random.default_rng(cfg.seed)
    bs = cfg.pretrain_batch_size
    world, rank = accelerator.num_processes, accelerator.process_index
    wrapped.train()
    t0 = time.time()
    limit = cfg.pretrain_minutes * 60
    losses: list[float] = []
    bar = _progress(steps, "pretrain", accelerator.is_main_process)
    order = g.permutation(len(rows))
    cursor = 0
    done = 0
    for step in range(steps):
        if cursor + bs * world > len(order):
            order, cursor = g.permutation(len(rows)), 0
        take = order[cursor + rank * bs : cursor + (rank + 1) * bs]
        cursor += bs * world
        x = torch.from_numpy(rows[take].astype(np.int64)).to(accelerator.device)
        batch_labels = x.clone()
        with accelerator.autocast():
            loss_sum, n = wrapped(x, torch.ones_like(x), batch_labels)
            loss = loss_sum / n.clamp(min=1)
        accelerator.backward(loss)
        if cfg.grad_clip:
            accelerator.clip_grad_norm_(wrapped.parameters(), cfg.grad_clip)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
        done = step + 1
        bar.update(1)
        if step % 20 == 0:
            bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
        if limit and _refit_now(done):  # fit the schedule to the steps the time allows
            fit = _from_main(accelerator, int(done * limit / (time.time() - t0)))
            _refit_plan(plan, min(steps, fit), done)
        if limit and done >= 30 and done >= plan["total"]:
            break
    bar.close()
    del wrapped, opt, sched
    accelerator.free_memory()
    log["pretrain"] = {
        "steps": done,
        "tokens": int(done * bs * world * rows.shape[1]),
        "final_loss": float(np.mean(losses[-50:])) if losses else None,
        "seconds": round(time.time() - t0, 1),
    }


def evaluate_loss(model: Any, items: Sequence[Item], pad_id: int, batch_size: int,
                  device: Any) -> dict[str, float]:
    """Mean CE per example over the number's generated tokens, and over all output tokens."""
    import torch
    import torch.nn.functional as F

    model.eval()
    num, out_ = [], []
    order = sorted(range(len(items)), key=lambda i: len(items[i].ids))
    with torch.no_grad():
        for s in range(0, len(order), batch_size):
            chunk = [items[i] for i in order[s : s + batch_size]]
            b = {k: v.to(device) for k, v in _collate(chunk, pad_id).items()}
            hidden = model.model(input_ids=b["input_ids"],
                                 attention_mask=b["attention_mask"]).last_hidden_state
            target = b["labels"][:, 1:]
            sel = target != IGNORE
            number = torch.zeros_like(sel)
            for r, it in enumerate(chunk):  # position p is predicted from hidden[p - 1]
                number[r, [p - 1 for p in it.number_positions]] = True
            logits = model.lm_head(hidden[:, :-1][sel]).float()
            ce = torch.zeros(sel.shape, device=hidden.device)
            ce[sel] = F.cross_entropy(logits, target[sel], reduction="none")
            out_.extend((ce.sum(1) / sel.sum(1).clamp(min=1)).tolist())
            num.extend(((ce * number).sum(1) / number.sum(1).clamp(min=1)).tolist())
    model.train()
    return {"number_loss": float(np.mean(num)) if num else float("nan"),
            "output_loss": float(np.mean(out_)) if out_ else float("nan")}


def _val_losses(model: Any, items: Sequence[Item], pad_id: int, batch_size: int,
                device: Any) -> dict[str, float]:
    """:func:`evaluate_loss` over all ``items``, and the number loss of the texts with and
    without a history block (``warm_number_loss``, ``cold_number_loss``)."""
    out: dict[str, float] = {}
    sums = {"number_loss": 0.0, "output_loss": 0.0}
    for part, flag in (("warm", True), ("cold", False)):
        subset = [it for it in items if it.warm == flag]
        if subset:
            res = evaluate_loss(model, subset, pad_id, batch_size, device)
            out[f"{part}_number_loss"] = res["number_loss"]
            for k in sums:
                sums[k] += res[k] * len(subset)
    return {**{k: v / max(len(items), 1) for k, v in sums.items()}, **out}


def finetune_loop(model: Any, train_items: Sequence[Item], val_items: Sequence[Item],
                  cfg: TrainConfig, accelerator: Any, pad_id: int, log: dict[str, Any]) -> Any:
    """Fine-tune in place; returns the best state dict (by validation number loss)."""
    import torch

    if not train_items or cfg.epochs <= 0:
        return None
    rng = random.Random(cfg.seed)
    lengths = [len(it.ids) for it in train_items]
    per_epoch = math.ceil(len(train_items) / (cfg.batch_size * accelerator.num_processes))
    total = per_epoch * cfg.epochs
    wrapped = _loss_module(model)
    opt = _optimizer(model, cfg.lr, cfg.weight_decay)
    plan = {"total": total}
    warmup = int(total * cfg.warmup_frac)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _lr_lambda(total, warmup, plan))
    wrapped, opt, sched = accelerator.prepare(wrapped, opt, sched)
    unwrapped = accelerator.unwrap_model(wrapped).lm
    world, rank = accelerator.num_processes, accelerator.process_index
    best: tuple[float, int, dict[str, Any]] | None = None
    history = []
    bad_epochs = 0
    t0 = time.time()
    limit = cfg.finetune_minutes * 60
    bar = _progress(total, "finetune", accelerator.is_main_process)
    stop = False
    done_steps, stop_at = 0, total + 1
    for epoch in range(cfg.epochs):
        wrapped.train()
        batches = batches_by_length(len(train_items), lengths, cfg.batch_size * world, rng)
        losses = []
        for big in batches:
            mine = big[rank::world] or big[:1]
            b = {k: v.to(accelerator.device)
                 for k, v in _collate([train_items[i] for i in mine], pad_id).items()}
            with accelerator.autocast():
                loss_sum, n = wrapped(b["input_ids"], b["attention_mask"], b["labels"])
                loss = loss_sum / n.clamp(min=1)
            accelerator.backward(loss)
            if cfg.grad_clip:
                accelerator.clip_grad_norm_(wrapped.parameters(), cfg.grad_clip)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            losses.append(float(loss.detach()))
            bar.update(1)
            if len(losses) % 20 == 0:
                bar.set_postfix(epoch=epoch, loss=f"{np.mean(losses[-20:]):.3f}")
            done_steps += 1
            if limit and _refit_now(done_steps):  # fit the schedule to what the time allows
                fit = _from_main(accelerator, int(done_steps * limit / (time.time() - t0)))
                if done_steps == 30 and fit < total:
                    plan["warmup"] = min(warmup, max(fit // 10, 1))
                _refit_plan(plan, min(fit, total), done_steps)
                stop_at = plan["total"] if fit < total else total + 1
            if done_steps >= stop_at:
                stop = True
                break
        metrics = {"epoch": epoch, "train_loss": float(np.mean(losses)) if losses else None}
        if val_items and accelerator.is_main_process:
            metrics.update(_val_losses(unwrapped, val_items, pad_id, cfg.batch_size * 2,
                                       accelerator.device))
        metrics = _from_main(accelerator, metrics)
        score = metrics.get(cfg.select_on, metrics.get("number_loss", -epoch))
        history.append(metrics)
        if accelerator.is_main_process:
            bar.write(json.dumps(metrics))
        if best is None or score < best[0]:
            state = {k: v.detach().to("cpu").clone() for k, v in unwrapped.state_dict().items()}
            best = (score, epoch, state)
            bad_epochs = 0
        else:
            bad_epochs += 1
            if bad_epochs >= cfg.patience:
                break
        if stop:
            break
    bar.close()
    log["finetune"] = {
        "history": history,
        "best_epoch": best[1] if best else None,
        "steps": done_steps,
        "seconds": round(time.time() - t0, 1),
        "train_examples": len(train_items),
        "val_examples": len(val_items),
    }
    return best[2] if best else None


def _accelerator(cfg: TrainConfig, device: str) -> Any:
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed

    torch.set_num_threads(max(1, cfg.threads))
    cpu = device == "cpu" or (device == "auto" and not torch.cuda.is_available())
    acc = Accelerator(cpu=cpu, mixed_precision=cfg.mixed_precision)
    set_seed(cfg.seed)
    return acc


# ---- evaluation with the exported graphs ----------------------------------------------------


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
    y = np.log(np.maximum([e.runtime_s for e in examples], 1.0))
    p50 = np.log(np.maximum([p.p50 for p in preds], 1.0))
    lo = np.array([p.p10 for p in preds])
    hi = np.array([p.p90 for p in preds])
    true = np.array([e.runtime_s for e in examples])
    succ = np.array([e.conclusion == "success" for e in examples])
    err = np.abs(p50 - y)
    out = {
        "examples": len(examples),
        "log_mae": float(err.mean()),
        "log_mae_success": float(err[succ].mean()) if succ.any() else None,
        "coverage_p10_p90": float(np.mean((true >= lo) & (true <= hi))),
        "seconds": round(secs, 2),
        "by_kind": {k: float(err[[e.kind == k for e in examples]].mean())
                    for k in sorted({e.kind for e in examples})},
    }
    return out


def _sample_val(val: Sequence[Any], n: int, seed: int) -> list[Any]:
    if n <= 0:
        return []
    if len(val) <= n:
        return list(val)
    return random.Random(seed).sample(list(val), n)


# ---- orchestration --------------------------------------------------------------------------


@dataclass
class LabeledText:
    """The fields of :class:`laser_ci.training.examples.Example` that training reads (bundles store these)."""

    text: str
    runtime_s: float
    kind: str
    conclusion: str
    repo: str
    reference: float | None = None  # a cold text's reference runtime (cold_reference models)


@dataclass
class Prepared:
    """Everything the training phases read: tokenizer, packed corpus, labeled examples."""

    tokenizer: Any
    rows: np.ndarray | None
    train_ex: list[Any]
    val_ex: list[Any]
    log: dict[str, Any]


def prepare_data(data_dir: str | os.PathLike[str], cfg: TrainConfig,
                 init: str | None = None) -> Prepared:
    """Load the labeled examples, train the tokenizer (unless ``init``) and pack the corpus."""
    from laser_ci.text.tokenize import load_tokenizer

    train_ex, val_ex = load_labeled(data_dir, cfg)
    log: dict[str, Any] = {"data": {"train": len(train_ex), "val": len(val_ex)}}
    if init:
        return Prepared(load_tokenizer(Path(init) / "tokenizer.json"), None, train_ex, val_ex, log)
    texts = corpus_texts(data_dir, "train", cfg.corpus_max_docs, cfg.seed)
    texts += list(dict.fromkeys(e.text for e in train_ex))
    tok, rows = tokenize_corpus(texts, cfg, log)
    return Prepared(tok, rows, train_ex, val_ex, log)


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


def write_bundle(prep: Prepared, path: str | os.PathLike[str]) -> None:
    """One compressed file with the prepared data (to train on another machine)."""
    def pack(exs: Sequence[Any]) -> list[dict[str, Any]]:
        return [{"text": e.text, "runtime_s": float(e.runtime_s), "kind": e.kind,
                 "conclusion": e.conclusion, "repo": e.repo} for e in exs]

    meta = {"tokenizer": prep.tokenizer.to_str(), "train": pack(prep.train_ex),
            "val": pack(prep.val_ex), "log": prep.log}
    blob = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    rows = prep.rows if prep.rows is not None else np.zeros((0, 1), np.uint16)
    with open(path, "wb") as f:
        np.savez_compressed(f, meta=blob, rows=rows)


def load_bundle(path: str | os.PathLike[str]) -> Prepared:
    """The data :func:`write_bundle` wrote; a file it did not write is a
    :class:`~laser_ci.training.examples.DataError` naming it."""
    from tokenizers import Tokenizer

    from laser_ci.training.examples import DataError

    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode("utf-8"))
            rows = z["rows"]
        return Prepared(
            Tokenizer.from_str(meta["tokenizer"]),
            rows if rows.size else None,
            [LabeledText(**e) for e in meta["train"]],
            [LabeledText(**e) for e in meta["val"]],
            meta["log"],
        )
    except Exception as exc:  # noqa: BLE001 - whatever it is, it is not a bundle
        raise DataError(f"{path}: not a bundle written by --save-bundle "
                        f"({type(exc).__name__})") from None


def run_training(data_dir: str | os.PathLike[str] | None, out_dir: str | os.PathLike[str],
                 cfg: TrainConfig, *, device: str = "auto", init: str | None = None,
                 export: bool = True, codec: NumberCodec = DEFAULT_CODEC,
                 bundle: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The whole ``laser-ci train`` pipeline; returns the report (also in the out folder).

    The data come from ``data_dir`` or, prepared earlier by :func:`write_bundle`, ``bundle``.
    """
    if cfg.outcome or cfg.cold_reference or cfg.warm_reference:
        raise ValueError("outcome and reference prompts are trained per fold "
                         "(finetune_examples, `laser-ci eval --folds K --lm-prompt-lines`)")
    if init:
        refuse_fold_base(init)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    acc = _accelerator(cfg, device)
    t_all = time.time()
    if bundle is not None:
        prep = load_bundle(bundle)
        if init:
            from laser_ci.text.tokenize import load_tokenizer

            prep.tokenizer = load_tokenizer(Path(init) / "tokenizer.json")
    else:
        assert data_dir is not None
        prep = prepare_data(data_dir, cfg, init)
    if not prep.train_ex:
        from laser_ci.training.examples import DataError

        raise DataError(f"{bundle if bundle is not None else data_dir}: no labeled training "
                        f"examples (runs with run_time_s > 0 of the train split's "
                        f"repositories, kinds {','.join(cfg.kinds) or 'none'}"
                        f"{', successful runs only' if cfg.success_only else ''})")
    log: dict[str, Any] = {"config": asdict(cfg), "device": str(acc.device),
                           "processes": acc.num_processes, **prep.log}
    tok = prep.tokenizer
    codec = codec_for(cfg, codec)
    prompt = PromptCodec(tok, codec, cfg.max_prompt_tokens, warm_target=cfg.warm_target,
                         warm_anchor=cfg.warm_anchor)
    if init:
        model = load_model(init)
    else:
        model = build_model(tok.get_vocab_size(), cfg.size, max(2048, cfg.max_prompt_tokens + 64))
    log["parameters"] = count_parameters(model)
    model.to(acc.device)
    if not init and prep.rows is not None and cfg.pretrain_steps > 0:
        pretrain(model, prep.rows, cfg, acc, log)
        if acc.is_main_process:
            model.save_pretrained(str(out / "pretrained"))
            tok.save(str(out / "pretrained" / "tokenizer.json"))
    train_items = make_items(prep.train_ex, prompt)
    val_items = make_items(prep.val_ex, prompt)
    best = finetune_loop(model, train_items, val_items, cfg, acc, prompt.pad_id, log)
    if best is not None:
        acc.unwrap_model(model).load_state_dict(best)
    model = acc.unwrap_model(model)
    if acc.is_main_process:
        model.save_pretrained(str(out / "checkpoint"))
        tok.save(str(out / "checkpoint" / "tokenizer.json"))
        (out / "train_report.json").write_text(json.dumps(log, indent=2) + "\n")
    if export and acc.is_main_process:
        log["eval"] = export_and_check(model, tok, out, cfg, prep.val_ex, codec)
    log["seconds"] = round(time.time() - t_all, 1)
    if acc.is_main_process:
        (out / "train_report.json").write_text(json.dumps(log, indent=2) + "\n")
    return log


def prompt_codec(tok: Any, codec: NumberCodec, cfg: TrainConfig,
                 specials: tuple[str, str, str] = (PAD, EOS, SEP)) -> PromptCodec:
    """The prompt layout ``cfg`` trains (and its exported folder reads); ``specials``: a
    pretrained tokenizer's own (``PromptCodec.specials``)."""
    return PromptCodec(tok, codec, cfg.max_prompt_tokens, warm_target=cfg.warm_target,
                       outcome=cfg.outcome, cold_reference=cfg.cold_reference is not None,
                       warm_reference=cfg.warm_reference is not None, layout=cfg.layout,
                       warm_anchor=cfg.warm_anchor, specials=specials)


def codec_for(cfg: TrainConfig, codec: NumberCodec) -> NumberCodec:
    """``codec``, widened below 1 for a ``ratio`` model (its warm outputs are ratios)."""
    if cfg.warm_target == "ratio" and codec.min_exponent > RATIO_MIN_EXPONENT:
        return replace(codec, min_exponent=RATIO_MIN_EXPONENT)
    return codec


def export_and_check(model: Any, tok: Any, out: Path, cfg: TrainConfig,
                     val_ex: Sequence[Any], codec: NumberCodec,
                     reference_model: Any = None) -> dict[str, Any]:
    from laser_ci.training.export import export_model

    def prompt_lines() -> None:  # the prompt lines the model was trained with
        if cfg.outcome or cfg.cold_reference:
            from laser_ci.training.references import attach_reference

            attach_reference(out, outcome=cfg.outcome, reference=reference_model,
                             warm_reference=cfg.warm_reference is not None)

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
    # keep the int8 graph unless it drifts from fp32 (then ship fp32)
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


def run_finetune(data_dir: str | os.PathLike[str], base_dir: str | os.PathLike[str],
                 out_dir: str | os.PathLike[str], cfg: TrainConfig, *,
                 device: str = "auto") -> dict[str, Any]:
    """Adapt a shipped model to one repository's history (``laser-ci finetune``)."""
    from laser_ci.predictors.lm import load_reference, prompt_references, read_config
    from laser_ci.text.tokenize import load_tokenizer
    from laser_ci.training.examples import load_examples

    base = Path(base_dir)
    refuse_fold_base(base)
    base_cfg = read_config(base)
    cfg = replace(cfg, **base_prompt(base_cfg))
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
    # history blocks come from earlier runs of the same folder only; a cold text's
    # reference (and a warm text's, for a warm_reference model) is the base's own
    # reference model's p50 (it never saw these labels)
    reference_model = load_reference(base) if cfg.cold_reference else None
    refs = None
    if reference_model is not None:
        from laser_ci.training.references import reference_key

        texts = [(e, False, e.text) for e in examples]
        if cfg.warm_reference:
            texts += [(e, True, e.text_warm) for e in examples if e.text_warm is not None]
        refs = {reference_key(e, warm=w): r for (e, w, _), r in zip(
            texts, prompt_references(reference_model, [t for _, _, t in texts],
                                     warm=cfg.warm_reference is not None), strict=True)}
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


def base_prompt(base_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The prompt settings of a model folder's ``laser.json`` as :class:`TrainConfig`
    fields: a model adapted from it reads (and ships) the same prompts."""
    prompt = base_cfg["prompt"]
    return {"max_prompt_tokens": int(prompt["max_prompt_tokens"]),
            "warm_target": str(prompt.get("warm_target", "runtime")),
            "outcome": bool(prompt.get("outcome", False)),
            "cold_reference": prompt.get("cold_reference"),
            "warm_reference": prompt.get("warm_reference"),
            "layout": str(prompt.get("layout", "serial")),
            "warm_anchor": str(prompt.get("warm_anchor", "median"))}


PRETRAIN_MARKER = "laser_pretrain.json"  # in OUT/pretrained of `laser-ci train --pretrain-only`


def held_out_fold(marker: Mapping[str, Any]) -> tuple[int, int] | None:
    """``(fold, folds)`` for a base marker whose ``labels`` are one cross-validation fold's
    training labels (a distilled base, :mod:`laser_ci.training.distill`): it may score that
    fold only. None for a label-free marker."""
    labels = marker.get("labels")
    if isinstance(labels, dict) and "held_out_fold" in labels:
        return int(labels["held_out_fold"]), int(labels["folds"])
    return None


def refuse_fold_base(base_dir: str | os.PathLike[str]) -> None:
    """A base made to score one fold (it saw the other folds' labels through a teacher)
    must not become a trained or shipped model: ``--init`` and ``finetune`` refuse it."""
    marker = Path(base_dir) / PRETRAIN_MARKER
    if not marker.is_file():
        return
    try:
        scope = held_out_fold(json.loads(marker.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise click.ClickException(f"{marker}: unreadable ({exc})") from exc
    if scope is not None:
        raise click.ClickException(
            f"{base_dir}: a distilled base for fold {scope[0]} of {scope[1]} only (its teacher "
            "saw the other folds' labels); start from a label-free base instead")


def run_pretrain_only(data_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str],
                      cfg: TrainConfig, *, device: str = "auto",
                      corpus_split: str = "all") -> dict[str, Any]:
    """A base pretrained on the unlabeled workflow corpus only (``laser-ci train
    --pretrain-only``): the tokenizer and the causal LM see the distinct file versions of
    ``corpus.jsonl.gz`` of ``corpus_split``'s repositories and nothing from ``runs``: no
    runtime, no labeled example's text. Writes ``OUT/pretrained`` (a transformers
    checkpoint, ``tokenizer.json`` and ``laser_pretrain.json``, which says so) and
    ``OUT/train_report.json``; ``laser-ci eval --folds K --lm-base OUT/pretrained``
    fine-tunes it per fold."""
    from laser_ci.training.examples import load_corpus

    if cfg.pretrain_steps <= 0:
        raise click.ClickException("--pretrain-only needs --pretrain-steps > 0")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    acc = _accelerator(cfg, device)
    t_all = time.time()
    texts = corpus_texts(data_dir, corpus_split, cfg.corpus_max_docs, cfg.seed)
    if not texts:
        raise click.ClickException(f"{data_dir}: no corpus documents (corpus.jsonl[.gz])")
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


def finetune_examples(base_dir: str | os.PathLike[str], train_ex: Sequence[Any],
                      val_ex: Sequence[Any], out_dir: str | os.PathLike[str],
                      cfg: TrainConfig, *, device: str = "auto",
                      references: Mapping[Any, float] | None = None,
                      reference_model: Any = None,
                      include_weights: bool = False,
                      extra: Sequence[LabeledText] = ()) -> dict[str, Any]:
    """Fine-tune from ``base_dir`` on labeled examples (:class:`~laser_ci.training.example.
    Example`, with their history) exactly as ``laser-ci train --init`` does, ``val_ex``
    picking the best epoch, and export the int8 graph alone to ``out_dir`` (what
    ``laser-ci eval --folds`` does per fold). With ``cfg.cold_reference``, ``references``
    are the cold texts' out-of-fold references and ``reference_model`` the tabular model
    the exported folder ships to compute them at inference (fit on ``train_ex`` and
    ``val_ex``). ``include_weights``: also the fp16 weights (the base of ``laser-ci
    finetune``; a shipped model has them). Returns the log (also ``train_report.json``)."""
    if cfg.cold_reference and (references is None or reference_model is None):
        raise ValueError("cold_reference needs the training texts' references and the model")
    if cfg.warm_reference and not cfg.cold_reference:
        raise ValueError("warm_reference needs cold_reference (the reference model)")
    from laser_ci.training.export import QUANTIZATIONS, export_model

    if cfg.quantization not in QUANTIZATIONS:
        raise ValueError(f"quantization {cfg.quantization!r}: expected one of {QUANTIZATIONS}")

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
    tr += list(extra)
    prompt = prompt_codec(tok, codec, cfg)
    log: dict[str, Any] = {"config": asdict(cfg), "base": str(base_dir), "device": str(acc.device),
                           "data": {"train": len(tr), "val": len(va), "extra": len(extra),
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
                 calibration=calibration_ids(train_items, cfg.calibration_prompts, cfg.seed)
                 if cfg.quantization == "static" else None,
                 extra={"training": {"base": str(base_dir), "seed": cfg.seed}})
    if cfg.outcome or cfg.cold_reference:
        from laser_ci.training.references import attach_reference

        attach_reference(out, outcome=cfg.outcome,
                         reference=reference_model if cfg.cold_reference else None,
                         warm_reference=cfg.warm_reference is not None)
    log["export_seconds"] = round(time.time() - t, 1)
    log["seconds"] = round(time.time() - t0, 1)
    (out / "train_report.json").write_text(json.dumps(log, indent=2) + "\n")
    return log


# ---- commands ---------------------------------------------------------------------------------


def _kinds_option(_ctx: Any, param: Any, value: str | None) -> str | None:
    """``--kinds``: comma-separated, each one of the example kinds, at least one."""
    from laser_ci.training.example import KINDS

    if value is None:
        return None
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise click.BadParameter(
            f"{', '.join(map(repr, unknown)) if unknown else 'none given'}; expected a "
            f"comma-separated list of {', '.join(KINDS)}", param=param)
    return value


def _common(f: Any) -> Any:
    opts = [
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--epochs", type=click.IntRange(min=1), default=None, help="Fine-tuning epochs."),
        click.option("--batch-size", type=click.IntRange(min=1), default=None),
        click.option("--lr", type=click.FloatRange(min=0), default=None,
                     help="Fine-tuning learning rate."),
        click.option("--weight-decay", type=click.FloatRange(min=0), default=None),
        click.option("--patience", type=click.IntRange(min=0), default=None,
                     help="Epochs without a better validation loss before stopping."),
        click.option("--threads", type=click.IntRange(min=1), default=None, help="torch CPU threads [1]."),
        click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
                     show_default=True),
        click.option("--mixed-precision", type=click.Choice(["no", "bf16", "fp16"]),
                     default=None, help="[no]"),
        click.option("--kinds", default="job,workflow", show_default=True,
                     callback=_kinds_option, help="Task kinds to train on."),
        click.option("--success-only", is_flag=True, help="Train on successful runs only."),
        click.option("--history-mode", type=click.Choice(["drop", "both", "warm", "cold"]),
                     default=None,
                     help="History block in training texts: drop (the block when a run has "
                          "earlier runs, left out with probability --p-cold; default), both "
                          "(each such run twice), warm (always) or cold (never)."),
        click.option("--p-cold", type=click.FloatRange(0, 1), default=None,
                     help="drop: probability of training a run with history cold [0.3]."),
        click.option("--select-on", default=None,
                     type=click.Choice(["number_loss", "warm_number_loss", "cold_number_loss"]),
                     help="Validation loss that picks the best epoch [warm_number_loss]; "
                          "falls back to number_loss when val has no such texts."),
        click.option("--scale-aug", type=click.FloatRange(0, 1), default=None,
                     help="Share of warm training texts whose runtime and history are "
                          "rescaled together by a random factor [1.0]; 0: none."),
        click.option("--pairs", type=click.IntRange(min=0), default=None,
                     help="Extra warm texts per training run from earlier runs with another "
                          "configuration, each as if it had been the latest [0]."),
        click.option("--max-val-decode", type=click.IntRange(min=0), default=None,
                     help="Validation examples decoded with the exported graphs."),
        click.option("--finetune-minutes", type=click.FloatRange(min=0), default=None,
                     help="Stop fine-tuning after this many minutes (0: no limit)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _check_out(option: str, path: str, *, folder: bool) -> None:
    """An output path that cannot be made (a folder under a file, a file in a folder that is
    not there, a folder it may not write in) is one line and exit 2 before any work."""
    import sys

    from laser_ci.report import plain

    target = Path(path)
    if folder:
        near = target
        while not near.exists() and near.parent != near:
            near = near.parent
        ok_dir = near.is_dir()
        reason = f"{near}: not a folder" if not ok_dir else f"{near}: cannot write there"
    else:
        near = target.parent
        ok_dir = near.is_dir()
        reason = (f"{near}: {'not a folder' if near.exists() else 'no such folder'}"
                  if not ok_dir else f"{near}: cannot write there")
    if ok_dir and os.access(near, os.W_OK | os.X_OK):
        return
    click.echo(plain.line(f"laser-ci: error: {option} {path}: {reason}"), err=True)
    sys.exit(2)


def _cfg_from(base: TrainConfig, **kw: Any) -> TrainConfig:
    kinds = kw.pop("kinds", None)
    upd = {k: v for k, v in kw.items() if v is not None}
    if kinds:
        upd["kinds"] = tuple(k.strip() for k in kinds.split(",") if k.strip())
    return replace(base, **upd)


@click.command("train")
@click.option("--data", "data_dir", type=click.Path(exists=True, file_okay=False),
              help="A gha-runs style folder (runs, blobs, corpus).")
@click.option("--bundle", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Train from data prepared with --save-bundle (instead of --data).")
@click.option("--save-bundle", type=click.Path(dir_okay=False), default=None,
              help="Only prepare the data (tokenizer, packed corpus, examples) into this file.")
@click.option("--out", "out_dir", default="runs/model", show_default=True,
              type=click.Path(file_okay=False),
              help="Where the model folder (and checkpoints, report) go.")
@click.option("--preset", type=click.Choice(sorted(PRESETS)), default=None,
              help="A named configuration (cpu-1h: from scratch on 2 CPU cores in under an "
                   "hour; gpu: one GPU). Other options override it.")
@click.option("--size", type=click.Choice(sorted(SIZES)), default=None,
              help="Model size [small].")
@click.option("--pretrain-steps", type=click.IntRange(min=0), default=None)
@click.option("--pretrain-batch-size", type=click.IntRange(min=1), default=None)
@click.option("--pretrain-lr", type=float, default=None)
@click.option("--pretrain-minutes", type=click.FloatRange(min=0), default=None,
              help="Stop pretraining after this many minutes (0: no limit).")
@click.option("--pretrain-seq-len", type=click.IntRange(min=8), default=None,
              help="Tokens per packed pretraining row [512].")
@click.option("--max-prompt-tokens", type=click.IntRange(min=64), default=None)
@click.option("--vocab-size", type=click.IntRange(min=1), default=None)
@click.option("--corpus-max-docs", type=click.IntRange(min=0), default=None)
@click.option("--init", type=click.Path(exists=True, file_okay=False), default=None,
              help="Start from a saved checkpoint folder (e.g. OUT/pretrained) or a shipped "
                   "model folder (e.g. model/lm): skips the tokenizer and pretraining.")
@click.option("--warm-target", type=click.Choice(["runtime", "ratio"]), default=None,
              help="What the model writes for a text with history: the runtime, or its ratio "
                   "to the history median [ratio].")
@click.option("--no-export", is_flag=True, help="Skip the ONNX export and its checks.")
@click.option("--pretrain-only", is_flag=True,
              help="Only the tokenizer and pretraining, on the unlabeled corpus alone (no "
                   "runs, no labels): writes OUT/pretrained, a base for `laser-ci eval "
                   "--folds K --lm-base OUT/pretrained`.")
@click.option("--corpus-split", type=click.Choice(["all", "train"]), default="all",
              show_default=True,
              help="--pretrain-only: the repositories whose corpus files are read.")
@_common
def train_command(data_dir: str | None, bundle: str | None, save_bundle: str | None,
                  out_dir: str, preset: str | None, size: str | None, init: str | None,
                  no_export: bool, pretrain_only: bool, corpus_split: str, device: str,
                  **kw: Any) -> None:
    """Train the runtime language model from scratch (see laser_ci/training/train.py)."""
    base = replace(TrainConfig(), **PRESETS[preset]) if preset else TrainConfig()
    cfg = _cfg_from(base, size=size, **kw)
    if save_bundle:
        _check_out("--save-bundle", save_bundle, folder=False)
    else:
        _check_out("--out", out_dir, folder=True)
    if pretrain_only:
        if data_dir is None or bundle or save_bundle or init:
            raise click.UsageError("--pretrain-only needs --data, and no --bundle, "
                                   "--save-bundle or --init")
        with Progress("train").stage("pretraining on the unlabeled corpus"):
            log = reading_data(run_pretrain_only, data_dir, out_dir, cfg, device=device,
                               corpus_split=corpus_split)
        if int(os.environ.get("RANK", "0")) == 0:
            click.echo(json.dumps({k: log.get(k) for k in ("parameters", "tokenizer", "pretrain",
                                                           "seconds")}, indent=2))
        return
    if (data_dir is None) == (bundle is None):
        raise click.UsageError("give exactly one of --data and --bundle")
    if save_bundle:
        if data_dir is None:
            raise click.UsageError("--save-bundle needs --data")
        with Progress("train").stage(f"preparing the data of {data_dir}"):
            prep = reading_data(prepare_data, data_dir, cfg, init)
        write_bundle(prep, save_bundle)
        click.echo(json.dumps(prep.log, indent=2))
        return
    with Progress("train").stage(f"training on {data_dir or bundle}"):
        log = reading_data(run_training, data_dir, out_dir, cfg, device=device, init=init,
                           export=not no_export, bundle=bundle)
    if int(os.environ.get("RANK", "0")) == 0:  # one summary under torchrun / accelerate
        click.echo(json.dumps({k: log.get(k) for k in ("parameters", "data", "eval", "seconds")},
                              indent=2))


@click.command("finetune")
@click.option("--data", "data_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="One repository's history, as `laser-ci collect` writes it.")
@click.option("--base", "base_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="A model folder with weights.safetensors (the shipped model).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False))
@_common
def finetune_command(data_dir: str, base_dir: str, out_dir: str, device: str, **kw: Any) -> None:
    """Adapt the shipped model to one repository's own history (minutes on a CPU)."""
    kw.setdefault("epochs", None)
    # one repository: learning its own level is the point, so no rescaling by default
    cfg = _cfg_from(TrainConfig(epochs=3, lr=2e-4, patience=1, pretrain_steps=0, scale_aug=0.0,
                                select_on="number_loss"), **kw)
    _check_out("--out", out_dir, folder=True)
    with Progress("finetune").stage(f"fine-tuning {base_dir} on {data_dir}"):
        log = reading_data(run_finetune, data_dir, base_dir, out_dir, cfg, device=device)
    click.echo(json.dumps({k: log.get(k) for k in ("data", "val_before", "eval_before", "eval")},
                          indent=2))
