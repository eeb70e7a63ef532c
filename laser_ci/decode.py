"""The decoding loops over an ONNX decoder with a KV cache (numpy + onnxruntime only).

:func:`sample_numbers` is the constrained, prefix-filled loop:

* One forward pass over each prompt plus the skeleton's fixed prefix (``{"runtime_s": "``).
* Then, walking the skeleton (:meth:`laser_ci.numbers.NumberCodec.skeleton`), every known
  token (a fixed piece such as ``.`` or ``e``, or a generated position where the codec's
  mask leaves exactly one legal token, such as the exponent sign ``+``) is appended without
  a forward pass of its own and fed together with the last sampled token; a forward pass is
  spent only where a token must be chosen. For ``d.dde+dd`` with exponents 0..5 that is
  the prompt pass plus 3 passes (``[d1 .]``, ``[d2]``, ``[d3 e + 0]``) for 6 generated
  tokens and 16 output tokens.
* Each chosen position is sampled under the mask of legal tokens (first mantissa digit 1-9,
  then digits, then the exponent sign, then exponent digits), so every sample parses.
* Batched across jobs (left-padded prompts, bucketed by length) and across samples: the N
  samples of a job share its prompt's KV cache. Samples are drawn as multinomial *counts*
  over a prefix tree, which is the same distribution as N independent ancestral samples
  but runs one row per distinct prefix instead of one per sample.
* Seeded per job (the seed and the job's prompt ids): the same input gives the same
  samples, whatever else is in the batch.

:func:`sample_naive` is the baseline for ``benchmarks/decoding.py``: every output token,
structure included, is sampled from the full vocabulary one forward pass at a time until
``<eos>``; outputs are parsed afterwards and may be invalid.

The decoder is anything with ``forward(input_ids, attention_mask, position_ids, past) ->
(last_logits [rows, columns], present)``; :class:`OnnxDecoder` wraps an onnxruntime session
of the graph written by :mod:`laser_ci.export`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from laser_ci.numbers import NumberCodec

Past = list[np.ndarray]


class Decoder(Protocol):
    def empty_past(self, batch: int) -> Past: ...

    def forward(
        self,
        input_ids: np.ndarray,
        attention_mask: np.ndarray,
        position_ids: np.ndarray,
        past: Past,
    ) -> tuple[np.ndarray, Past]: ...


class OnnxDecoder:
    """An onnxruntime session of an optimum ``text-generation-with-past`` decoder graph."""

    def __init__(self, session: Any) -> None:
        self.session = session
        names = [i.name for i in session.get_inputs()]
        self.past_names = [n for n in names if n.startswith("past_key_values.")]
        self.present_names = [n.replace("past_key_values.", "present.") for n in self.past_names]
        self.has_position_ids = "position_ids" in names
        meta = {i.name: i for i in session.get_inputs()}
        if self.past_names:
            shape = meta[self.past_names[0]].shape  # [batch, heads, past_len, head_dim]
            self.kv_heads, self.head_dim = int(shape[1]), int(shape[3])
        self.output_names = ["logits", *self.present_names]
        self.columns = int(session.get_outputs()[0].shape[-1])

    def empty_past(self, batch: int) -> Past:
        return [
            np.zeros((batch, self.kv_heads, 0, self.head_dim), dtype=np.float32)
            for _ in self.past_names
        ]

    def forward(
        self,
        input_ids: np.ndarray,
        attention_mask: np.ndarray,
        position_ids: np.ndarray,
        past: Past,
    ) -> tuple[np.ndarray, Past]:
        feeds: dict[str, np.ndarray] = {
            "input_ids": np.ascontiguousarray(input_ids, dtype=np.int64),
            "attention_mask": np.ascontiguousarray(attention_mask, dtype=np.int64),
        }
        if self.has_position_ids:
            feeds["position_ids"] = np.ascontiguousarray(position_ids, dtype=np.int64)
        feeds.update(zip(self.past_names, past, strict=True))
        out = self.session.run(self.output_names, feeds)
        logits = out[0][:, -1, :]
        return logits, list(out[1:])


@dataclass
class DecodeStats:
    """What a decoding call cost: forward passes, rows and tokens fed."""

    forward_passes: int = 0
    prefill_tokens: int = 0  # padded prompt tokens fed in prefill passes
    step_rows: int = 0  # rows summed over the non-prefill passes
    step_tokens: int = 0  # tokens summed over the non-prefill passes
    batches: int = 0
    invalid: int = 0  # naive decoding only: samples that did not parse
    passes_per_batch: list[int] = field(default_factory=list)

    def add(self, other: DecodeStats) -> None:
        self.forward_passes += other.forward_passes
        self.prefill_tokens += other.prefill_tokens
        self.step_rows += other.step_rows
        self.step_tokens += other.step_tokens
        self.batches += other.batches
        self.invalid += other.invalid
        self.passes_per_batch += other.passes_per_batch


# ---- helpers ---------------------------------------------------------------------------------


def job_rng(seed: int, prompt: Sequence[int]) -> np.random.Generator:
    """A generator that depends only on the seed and the job's own prompt ids."""
    digest = hashlib.sha256(np.asarray(prompt, dtype=np.int64).tobytes()).digest()
    return np.random.default_rng([seed & 0xFFFFFFFF, int.from_bytes(digest[:8], "little")])


def buckets(
    lengths: Sequence[int], max_batch_tokens: int, max_batch_jobs: int
) -> list[list[int]]:
    """Job indices grouped by similar length so that jobs x longest <= max_batch_tokens."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    out: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        longest = max(lengths[i], lengths[cur[-1]] if cur else 0)
        if cur and (len(cur) >= max_batch_jobs or longest * (len(cur) + 1) > max_batch_tokens):
            out.append(cur)
            cur = []
        cur.append(i)
    if cur:
        out.append(cur)
    return out


def left_pad(prompts: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    n = max(len(p) for p in prompts)
    ids = np.full((len(prompts), n), pad_id, dtype=np.int64)
    mask = np.zeros((len(prompts), n), dtype=np.int64)
    for r, p in enumerate(prompts):
        if len(p):
            ids[r, n - len(p) :] = p
            mask[r, n - len(p) :] = 1
    return ids, mask


def _masked_probs(logits: np.ndarray, columns: Sequence[int], temperature: float) -> np.ndarray:
    x = logits[list(columns)].astype(np.float64)
    if temperature <= 0:
        p = np.zeros_like(x)
        p[int(np.argmax(x))] = 1.0
        return p
    x = x / temperature
    x -= x.max()
    p = np.exp(x)
    return p / p.sum()


class _Rows:
    """Decoding state of one batch: one row per distinct sample prefix."""

    def __init__(self, decoder: Decoder, ids: np.ndarray, mask: np.ndarray) -> None:
        self.decoder = decoder
        self.prompt_ids = ids
        self.prompt_mask = mask
        self.past: Past | None = None
        self.attn = mask[:, :0]
        self.seen = np.zeros(len(ids), dtype=np.int64)  # real tokens seen, per row
        self.stats = DecodeStats(batches=1)

    def forward(self, feed: np.ndarray | None) -> np.ndarray:
        """Feed ``feed`` ([rows, k], or None for the first pass over the prompts)."""
        if self.past is None:
            ids, mask = self.prompt_ids, self.prompt_mask
            if feed is not None and feed.shape[1]:
                ids = np.concatenate([ids, feed], axis=1)
                mask = np.concatenate([mask, np.ones_like(feed)], axis=1)
            pos = np.maximum(np.cumsum(mask, axis=1) - 1, 0)
            past = self.decoder.empty_past(len(ids))
            self.stats.prefill_tokens += ids.size
        else:
            assert feed is not None and feed.shape[1] > 0
            ids = feed
            k = feed.shape[1]
            mask = np.concatenate([self.attn, np.ones((len(feed), k), dtype=np.int64)], axis=1)
            pos = self.seen[:, None] + np.arange(k)[None, :]
            past = self.past
            self.stats.step_rows += len(feed)
            self.stats.step_tokens += feed.size
        logits, self.past = self.decoder.forward(ids, mask, pos, past)
        self.attn = mask
        self.seen = mask.sum(axis=1)
        self.stats.forward_passes += 1
        return logits

    def select(self, parent: np.ndarray) -> None:
        """Keep/duplicate rows: new row i continues old row ``parent[i]``."""
        if len(parent) == len(self.attn) and np.array_equal(parent, np.arange(len(parent))):
            return
        assert self.past is not None
        if len(parent) and np.all(parent[1:] >= parent[:-1]):  # runs: a block copy per row
            counts = np.bincount(parent, minlength=len(self.attn))
            self.past = [np.repeat(x, counts, axis=0) for x in self.past]
        else:
            self.past = [x[parent] for x in self.past]
        self.attn = self.attn[parent]
        self.seen = self.seen[parent]


# ---- the constrained, prefix-filled loop --------------------------------------------------------


@dataclass
class Skeleton:
    """What the constrained loop needs to know about the output layout.

    ``pieces``: :meth:`PromptCodec.pieces` (fixed vocabulary ids, or a slot index);
    ``token_ids``: codec token -> vocabulary id (what is fed back);
    ``columns``: codec token -> column of the decoder's logits.
    """

    codec: NumberCodec
    pieces: list[list[int] | int]
    token_ids: dict[str, int]
    columns: dict[str, int]

    def prefix(self) -> list[int]:
        out: list[int] = []
        for p in self.pieces:
            if isinstance(p, int):
                break
            out.extend(p)
        return out


def sample_numbers(
    decoder: Decoder,
    prompts: Sequence[Sequence[int]],
    skeleton: Skeleton,
    *,
    num_samples: int = 32,
    temperature: float = 1.0,
    seed: int = 0,
    pad_id: int = 0,
    max_batch_tokens: int = 16384,
    max_batch_jobs: int = 64,
    stats: DecodeStats | None = None,
) -> list[np.ndarray]:
    """``num_samples`` sampled values per prompt (sorted), with the constrained loop.

    ``prompts`` are input ids *without* the skeleton prefix (``<eos> text <sep>``).
    """
    codec = skeleton.codec
    prefix = skeleton.prefix()
    first_slot = next(i for i, p in enumerate(skeleton.pieces) if isinstance(p, int))
    rest = skeleton.pieces[first_slot:]
    results: list[np.ndarray] = [np.empty(0)] * len(prompts)
    full = [list(p) + prefix for p in prompts]
    for bucket in buckets([len(p) for p in full], max_batch_tokens, max_batch_jobs):
        ids, mask = left_pad([full[i] for i in bucket], pad_id)
        rows = _Rows(decoder, ids, mask)
        rngs = [job_rng(seed, prompts[i]) for i in bucket]
        row_job = np.arange(len(bucket))
        row_count = np.full(len(bucket), num_samples, dtype=np.int64)
        row_tokens: list[list[str]] = [[] for _ in bucket]
        pending: list[list[int]] = [[] for _ in bucket]  # known ids not fed yet, per row
        for piece in rest:
            if not isinstance(piece, int):
                for p in pending:
                    p.extend(piece)
                continue
            legal = [codec.possible_next_tokens(t) for t in row_tokens]
            if all(len(options) == 1 for options in legal):  # known: no pass spent on it
                for r, options in enumerate(legal):
                    row_tokens[r].append(options[0])
                    pending[r].append(skeleton.token_ids[options[0]])
                continue
            logits = rows.forward(np.asarray(pending, dtype=np.int64).reshape(len(pending), -1))
            parent, new_job, new_count, new_tokens = [], [], [], []
            for r, options in enumerate(legal):
                p = _masked_probs(logits[r], [skeleton.columns[t] for t in options], temperature)
                counts = rngs[row_job[r]].multinomial(int(row_count[r]), p)
                for tok, c in zip(options, counts, strict=True):
                    if c:
                        parent.append(r)
                        new_job.append(row_job[r])
                        new_count.append(c)
                        new_tokens.append([*row_tokens[r], tok])
            parent_arr = np.asarray(parent, dtype=np.int64)
            rows.select(parent_arr)
            row_job = np.asarray(new_job, dtype=np.int64)
            row_count = np.asarray(new_count, dtype=np.int64)
            row_tokens = new_tokens
            pending = [[skeleton.token_ids[t[-1]]] for t in row_tokens]
        values: list[list[float]] = [[] for _ in bucket]
        for j, c, toks in zip(row_job, row_count, row_tokens, strict=True):
            values[j].extend([codec.from_tokens(toks)] * int(c))
        for k, i in enumerate(bucket):
            results[i] = np.sort(np.asarray(values[k], dtype=np.float64))
        rows.stats.passes_per_batch.append(rows.stats.forward_passes)
        if stats is not None:
            stats.add(rows.stats)
    return results


# ---- naive decoding (benchmark baseline) -------------------------------------------------------


def sample_naive(
    decoder: Decoder,
    prompts: Sequence[Sequence[int]],
    *,
    parse: Callable[[list[int]], float],
    eos_id: int,
    max_new_tokens: int,
    num_samples: int = 32,
    temperature: float = 1.0,
    seed: int = 0,
    pad_id: int = 0,
    max_batch_tokens: int = 16384,
    max_batch_jobs: int = 64,
    stats: DecodeStats | None = None,
) -> list[np.ndarray]:
    """Unconstrained sampling over the full vocabulary, one token per forward pass.

    ``decoder`` must have full-vocabulary logits (``model.full.onnx``). The prompt's KV
    cache is computed once per job and repeated for its samples (as ``generate`` with
    ``num_return_sequences`` does after prefill). ``parse(ids)`` turns the generated ids
    (without ``<eos>``) into a value or raises ``ValueError`` (counted in ``stats.invalid``;
    the sample is NaN).
    """
    results: list[np.ndarray] = [np.empty(0)] * len(prompts)
    for bucket in buckets([len(p) for p in prompts], max_batch_tokens, max_batch_jobs):
        ids, mask = left_pad([prompts[i] for i in bucket], pad_id)
        rows = _Rows(decoder, ids, mask)
        rngs = [job_rng(seed, prompts[i]) for i in bucket]
        logits = rows.forward(None)
        n = num_samples
        rows.select(np.repeat(np.arange(len(bucket)), n))
        logits = np.repeat(logits, n, axis=0)
        out: list[list[int]] = [[] for _ in range(len(bucket) * n)]
        done = np.zeros(len(out), dtype=bool)
        for _step in range(max_new_tokens):
            x = logits.astype(np.float64) / max(temperature, 1e-6)
            nxt = np.full(len(out), pad_id, dtype=np.int64)
            for k in range(len(bucket)):  # Gumbel-max: one draw per sample, per-job stream
                sl = slice(k * n, (k + 1) * n)
                nxt[sl] = np.argmax(x[sl] + rngs[k].gumbel(size=x[sl].shape), axis=1)
            for r in np.flatnonzero(~done):
                tok = int(nxt[r])
                if tok == eos_id:
                    done[r] = True
                else:
                    out[r].append(tok)
            nxt[done] = pad_id
            if done.all():
                break
            logits = rows.forward(nxt[:, None])
        bad = 0
        for k, i in enumerate(bucket):
            vals = []
            for r in range(k * n, (k + 1) * n):
                try:
                    vals.append(parse(out[r]))
                except ValueError:
                    vals.append(np.nan)
                    bad += 1
            results[i] = np.sort(np.asarray(vals, dtype=np.float64))
        rows.stats.invalid = bad
        rows.stats.passes_per_batch.append(rows.stats.forward_passes)
        if stats is not None:
            stats.add(rows.stats)
    return results


def summarize_samples(samples: np.ndarray) -> tuple[float, float, float]:
    """(p10, p50, p90) of one job's samples (NaN-tolerant; all NaN gives NaNs)."""
    s = samples[np.isfinite(samples)]
    if not len(s):
        return (float("nan"),) * 3  # type: ignore[return-value]
    p10, p50, p90 = np.quantile(s, [0.1, 0.5, 0.9])
    return float(p10), float(p50), float(p90)
