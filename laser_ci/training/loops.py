"""The training loops: causal-LM pretraining on packed rows, fine-tuning on runtimes (the
loss on the output ``{"runtime_s": "4.73e+02"}<eos>`` only, the best epoch by ``cfg.select_on``).
Both run through ``accelerate``, data-parallel under ``torchrun``: time limits and early
stopping are decided by the first process and broadcast, so all stop together."""

from __future__ import annotations

import json
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from laser_ci.text.tokenize import PromptCodec
from laser_ci.training.config import IGNORE, TrainConfig


def _step(accelerator: Any, wrapped: Any, opt: Any, sched: Any, grad_clip: float,
          ids: Any, mask: Any, labels: Any) -> float:
    """One optimizer step on one batch (mean token loss); returns the loss."""
    with accelerator.autocast():
        loss_sum, n = wrapped(ids, mask, labels)
        loss = loss_sum / n.clamp(min=1)
    accelerator.backward(loss)
    if grad_clip:
        accelerator.clip_grad_norm_(wrapped.parameters(), grad_clip)
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)
    return float(loss.detach())

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
        out, generated = prompt.target(ex.runtime_s, prompt.reference(text),
                                       getattr(ex, "usage", None))
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
        losses.append(_step(accelerator, wrapped, opt, sched, cfg.grad_clip,
                            x, torch.ones_like(x), batch_labels))
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
            losses.append(_step(accelerator, wrapped, opt, sched, cfg.grad_clip,
                                b["input_ids"], b["attention_mask"], b["labels"]))
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
            bar.write(json.dumps(metrics), file=sys.stderr)  # stdout: the summary
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
