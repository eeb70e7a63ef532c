"""The decoding loops over an ONNX decoder with a KV cache (numpy + onnxruntime only).

:func:`sample_numbers` is the constrained, prefix-filled loop:

* One forward pass over each prompt plus the skeleton's fixed prefix (``{"runtime_s": "``).
* Then, walking the skeleton (:meth:`laser_ci.text.numbers.NumberCodec.skeleton`), every known
  token (a fixed piece such as ``.`` or ``e``, or a generated position where the codec's
  mask leaves exactly one legal token, such as the exponent sign ``+``) is appended without
  a forward pass of its own and fed together with the last sampled token; a forward pass is
  spent only where a token must be chosen. For ``d.dde+dd`` with exponents 0..5 that is
  the prompt pass plus 3 passes (``[d1 .]``, ``[d2]``, ``[d3 e + 0]``) for 6 generated
  tokens and 16 output tokens.
* Each chosen position is sampled under the mask of legal tokens (first mantissa digit 1-9,
  then digits, then the exponent sign, then exponent digits), so every sample parses.
* Batched across jobs (left-padded prompts, bucketed by length) and across samples, with
  *tree attention*: the N samples of a job are drawn as multinomial counts over a prefix
  tree (the same distribution as N independent ancestral samples), and every distinct
  prefix is a branch of the job's one sequence. A step feeds the new tokens of all of a
  job's branches side by side in one row; the ``attention_bias`` input lets each token see
  the prompt, its own branch's earlier tokens and nothing else, with positions continuing
  its branch. So the samples share the prompt's KV cache instead of copying it once per
  sample, and a step costs a few tokens per branch, not a prompt-sized cache per sample.
* Shared prefixes (``shared``: a model whose prompt layout is ``shared-prefix``,
  :meth:`laser_ci.text.tokenize.PromptCodec.encode_segments`): the KV cache of each distinct
  shared prefix is computed once, in a pass of its own, and the prompts that start with it
  feed only the rest, their keys laid after the prefix's (right-padded to the batch's
  longest prefix, padding hidden by the bias). A prompt's passes are then the same whether
  or not other prompts share its prefix, so sharing changes no sample; it only skips the
  recomputation (``DecodeStats.shared_tokens``: the prompt tokens not fed again).
* Seeded per job and branch (the seed, the job's prompt ids and the branch's tokens, hashed
  into the branch's own uniforms: :func:`branch_uniforms`): the same input gives the same
  samples, whatever else is in the batch. The branches of one step that choose among the
  same tokens are drawn together, as arrays.
* ``stratified=True`` splits a branch's c samples among the next tokens by stratified
  sampling instead of multinomial counts: the legal tokens, in the order of the values
  they lead to, cut [0, 1) by their probabilities, and the samples sit at
  ``u_k = (k + U_k) / c`` (one uniform per stratum), so a token with probability p gets
  c*p samples give or take one, and in expectation exactly c*p. The samples still follow
  the model's distribution, but they cover its quantiles evenly, so the median of 16 is
  about as steady as that of many more independent ones. Fresh uniforms at every step keep
  a sample from hinging on the last bits of the logits. The order is exact within one
  exponent (the mantissa is written first), which is where a warm ``ratio`` model's
  outputs sit (:mod:`laser_ci.text.tokenize`).
* ``exact_last=True`` samples every choice but the last one (the exponent's last digit of
  ``d.dde+dd``): a branch of c samples that reaches it takes every legal last token, each
  with weight c times its probability, and the job's values are the quantiles of that
  mixture at the midpoints of N equal strata (:func:`mixture_quantiles`). The same passes
  are spent (the last digit's logits are computed anyway); what changes is that the last
  digit, the order of magnitude of a runtime written in seconds, is read off the model's
  distribution instead of drawn once per branch.

The baseline of ``benchmarks/decoding.py`` (``benchmarks/naive_decoding.py``): every
output token, structure included, is sampled from the full vocabulary one forward pass at a time until
``<eos>``, one row per sample (the prompt's KV cache computed once, then copied per sample,
as ``generate`` does); outputs are parsed afterwards and may be invalid.

The decoder is anything with ``forward(input_ids, position_ids, bias, past) -> (logits
[rows, positions, columns], present)``; :class:`OnnxDecoder` wraps an onnxruntime session
of the graph written by :mod:`laser_ci.training.export`.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from laser_ci.text.numbers import NumberCodec

Past = list[np.ndarray]
NEG = np.float32(-1e9)  # attention bias of a hidden key (finite: no NaN for empty rows)


class Decoder(Protocol):
    def empty_past(self, batch: int) -> Past: ...

    def forward(
        self, input_ids: np.ndarray, position_ids: np.ndarray, bias: np.ndarray, past: Past
    ) -> tuple[np.ndarray, Past]: ...


class OnnxDecoder:
    """An onnxruntime session of the decoder graph written by :mod:`laser_ci.training.export`."""

    def __init__(self, session: Any) -> None:
        self.session = session
        inputs = {i.name: i for i in session.get_inputs()}
        for name in ("input_ids", "position_ids", "attention_bias"):
            if name not in inputs:
                raise ValueError(f"decoder graph has no {name!r} input (re-export the model)")
        self.past_names = [n for n in inputs if n.startswith("past_key_values.")]
        self.present_names = [n.replace("past_key_values.", "present.") for n in self.past_names]
        shape = inputs[self.past_names[0]].shape  # [batch, kv heads, past_len, head_dim]
        self.kv_heads, self.head_dim = int(shape[1]), int(shape[3])
        self.output_names = ["logits", *self.present_names]
        out = session.get_outputs()[0].shape
        self.columns = int(out[-1])
        self.last_only = out[1] == 1

    def empty_past(self, batch: int) -> Past:
        return [
            np.zeros((batch, self.kv_heads, 0, self.head_dim), dtype=np.float32)
            for _ in self.past_names
        ]

    def forward(
        self, input_ids: np.ndarray, position_ids: np.ndarray, bias: np.ndarray, past: Past
    ) -> tuple[np.ndarray, Past]:
        feeds: dict[str, np.ndarray] = {
            "input_ids": np.ascontiguousarray(input_ids, dtype=np.int64),
            "position_ids": np.ascontiguousarray(position_ids, dtype=np.int64),
            "attention_bias": np.ascontiguousarray(bias, dtype=np.float32),
        }
        feeds.update(zip(self.past_names, past, strict=True))
        out = self.session.run(self.output_names, feeds)
        return out[0], list(out[1:])


@dataclass
class DecodeStats:
    """What a decoding call cost: forward passes, rows and tokens fed."""

    forward_passes: int = 0
    prefill_tokens: int = 0  # padded prompt tokens fed in prefill passes
    step_rows: int = 0  # branches (constrained) or rows (naive) fed, summed over steps
    step_tokens: int = 0  # padded tokens fed, summed over the non-prefill passes
    batches: int = 0
    invalid: int = 0  # naive decoding only: samples that did not parse
    prefixes: int = 0  # distinct shared prefixes computed (their tokens are in prefill_tokens)
    shared_tokens: int = 0  # prompt tokens read from a shared prefix's cache, not fed again
    passes_per_batch: list[int] = field(default_factory=list)

    def add(self, other: DecodeStats) -> None:
        self.forward_passes += other.forward_passes
        self.prefill_tokens += other.prefill_tokens
        self.step_rows += other.step_rows
        self.step_tokens += other.step_tokens
        self.batches += other.batches
        self.invalid += other.invalid
        self.prefixes += other.prefixes
        self.shared_tokens += other.shared_tokens
        self.passes_per_batch += other.passes_per_batch


# ---- helpers ---------------------------------------------------------------------------------


def job_key(seed: int, prompt: Sequence[int]) -> list[int]:
    """Seed material that depends only on the seed and the job's own prompt ids."""
    digest = hashlib.sha256(np.asarray(prompt, dtype=np.int64).tobytes()).digest()
    return [seed & 0xFFFFFFFF, int.from_bytes(digest[:8], "little")]


def job_rng(seed: int, prompt: Sequence[int]) -> np.random.Generator:
    """A generator that depends only on the seed and the job's own prompt ids."""
    return np.random.default_rng(job_key(seed, prompt))


def branch_uniforms(key: list[int], tokens: Sequence[str], n: int) -> np.ndarray:
    """``n`` uniforms in [0, 1) for the choice after ``tokens`` in a job (``key``:
    :func:`job_key`): a stream of the branch's own (BLAKE2b of the key, the tokens and a
    block counter; 53 bits each), so a branch whose counts change does not shift the draws
    of others, and a draw costs a hash, not a generator."""
    head = b"".join(int(k).to_bytes(8, "little") for k in key) + "".join(tokens).encode() + \
        bytes([len(tokens)])
    blocks = [hashlib.blake2b(head + i.to_bytes(4, "little"), digest_size=64).digest()
              for i in range((n + 7) // 8)]
    words = np.frombuffer(b"".join(blocks), dtype="<u8")[:n]
    return (words >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def buckets(
    lengths: Sequence[int], max_batch_tokens: int, max_batch_jobs: int
) -> list[list[int]]:
    """Job indices grouped by similar length so that jobs x longest <= max_batch_tokens."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    return _chunks(order, lengths, max_batch_tokens, max_batch_jobs)


def _chunks(order: Sequence[int], lengths: Sequence[int], max_batch_tokens: int,
            max_batch_jobs: int) -> list[list[int]]:
    """``order`` cut into consecutive batches of at most ``max_batch_jobs`` jobs whose
    count times their longest length stays within ``max_batch_tokens``."""
    out: list[list[int]] = []
    cur: list[int] = []
    longest = 0
    for i in order:
        longest = max(lengths[i], longest)
        if cur and (len(cur) >= max_batch_jobs or longest * (len(cur) + 1) > max_batch_tokens):
            out.append(cur)
            cur, longest = [], lengths[i]
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


def causal_bias(mask: np.ndarray) -> np.ndarray:
    """``[rows, 1, L, L]`` bias for left-padded prompts: causal, padding keys hidden."""
    n = mask.shape[1]
    allowed = np.tril(np.ones((n, n), dtype=bool))[None] & mask.astype(bool)[:, None, :]
    return np.where(allowed, np.float32(0), NEG)[:, None].astype(np.float32)


_CAUSAL: dict[int, np.ndarray] = {}


def _causal(k: int) -> np.ndarray:
    """``[k, k]`` bias of k new tokens among themselves: each sees itself and the earlier."""
    if k not in _CAUSAL:
        _CAUSAL[k] = np.where(np.tril(np.ones((k, k), dtype=bool)), np.float32(0), NEG)
    return _CAUSAL[k]


def padding_bias(mask: np.ndarray) -> np.ndarray:
    """``[rows, 1, 1, T]`` bias for one new token per row that sees every unmasked key."""
    return np.where(mask.astype(bool), np.float32(0), NEG)[:, None, None, :].astype(np.float32)


# ---- the constrained, prefix-filled loop with tree attention -----------------------------------


@dataclass
class Skeleton:
    """What the constrained loop needs to know about the output layout.

    ``pieces``: :attr:`laser_ci.text.tokenize.PromptCodec.pieces` (fixed vocabulary ids, or a
    slot index); ``token_ids``: codec token -> vocabulary id (what is fed back);
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


@dataclass
class _Branch:
    """One distinct sample prefix of one job: ``count`` samples share it."""

    job: int
    count: int
    tokens: list[str]  # codec tokens chosen so far
    cache: list[int]  # KV-cache positions of the branch's own fed tokens
    seen: int  # real tokens before the next fed one (its position id)
    pending: list[int]  # known ids to feed before the next choice
    logits: np.ndarray | None = None  # next-token logits once everything is fed


def value_order(codec: NumberCodec, prev: Sequence[str], options: Sequence[str]) -> list[str]:
    """``options`` (legal next tokens after ``prev``) in the order of the values they lead
    to, other tokens being equal: digits ascending, ``-`` before ``+``, and exponent digits
    descending after a ``-`` sign."""
    if len(prev) == codec.mantissa_digits:  # the exponent sign
        return sorted(options, key=lambda t: t != "-")
    negative = len(prev) > codec.mantissa_digits and prev[codec.mantissa_digits] == "-"
    return sorted(options, reverse=negative)


def masked_probs(logits: np.ndarray, columns: Sequence[int], temperature: float) -> np.ndarray:
    """Row-wise softmax of ``logits[:, columns]`` at ``temperature`` (0: all mass on the
    first largest)."""
    x = logits[:, list(columns)].astype(np.float64)
    if temperature <= 0:
        p = np.zeros_like(x)
        p[np.arange(len(x)), np.argmax(x, axis=1)] = 1.0
        return p
    x = x / temperature
    x -= x.max(axis=1, keepdims=True)
    p = np.exp(x)
    return p / p.sum(axis=1, keepdims=True)


def draw_counts(p: np.ndarray, counts: Sequence[int], uniforms: np.ndarray,
                stratified: bool) -> np.ndarray:
    """``[branches, tokens]``: how many of each branch's ``counts[b]`` samples take each
    token, the tokens' probabilities ``p[b]`` laid end to end on [0, 1) and read at the
    branch's uniforms (``uniforms``: ``counts[b]`` of them per branch, concatenated). Plain:
    each uniform is a sample (multinomial counts); ``stratified``: sample ``k`` of ``c`` sits
    at ``(k + u_k) / c``, one in each of ``c`` equal strata."""
    c = np.asarray(counts, dtype=np.int64)
    owner = np.repeat(np.arange(len(c)), c)
    u = uniforms
    if stratified:
        within = np.arange(len(owner)) - np.repeat(np.cumsum(c) - c, c)
        u = (within + uniforms) / c[owner]
    upper = np.cumsum(p, axis=1)
    upper[:, -1] = 1.0
    k = np.minimum((upper[owner] <= u[:, None]).sum(axis=1), p.shape[1] - 1)
    return np.bincount(owner * p.shape[1] + k, minlength=p.size).reshape(p.shape)


_PrefixBatch = tuple[Past, np.ndarray, np.ndarray]  # :meth:`_Prefixes.batch`


class PrefixStore:
    """Shared prefixes' KV caches kept across decoding calls, least recently used dropped
    past ``max_bytes`` (``laser-ci estimate`` asks for a job's runtime, then for the same
    job on other runners: the second call finds the bodies the first one computed)."""

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self.max_bytes = max_bytes
        self.entries: OrderedDict[tuple[int, ...], Past] = OrderedDict()
        self.bytes = 0
        self.hits = 0

    def get(self, key: tuple[int, ...]) -> Past | None:
        past = self.entries.get(key)
        if past is not None:
            self.entries.move_to_end(key)
            self.hits += 1
        return past

    def put(self, key: tuple[int, ...], past: Past) -> None:
        if key in self.entries:
            return
        size = sum(a.nbytes for a in past)
        if size > self.max_bytes:
            return
        self.entries[key] = past
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, old = self.entries.popitem(last=False)
            self.bytes -= sum(a.nbytes for a in old)


class _Prefixes:
    """The KV caches of the distinct shared prefixes, each computed alone (one row, one
    pass) when first asked for (or found in ``store``) and dropped after the last prompt
    that reads it. Buckets decoded on several threads compute their own prefixes side by
    side; a prefix one thread is computing, another waits for (a lock guards the
    bookkeeping, not the passes)."""

    def __init__(self, decoder: Decoder, shared: Sequence[tuple[int, ...]],
                 store: PrefixStore | None = None) -> None:
        self.decoder = decoder
        self.store = store
        self.left: dict[tuple[int, ...], int] = {}
        for key in shared:
            self.left[key] = self.left.get(key, 0) + 1
        self.cache: dict[tuple[int, ...], Past] = {}
        self.busy: dict[tuple[int, ...], threading.Event] = {}  # being computed
        self.stats = DecodeStats()
        self.lock = threading.Lock()

    def _compute(self, key: tuple[int, ...]) -> Past:
        n = len(key)
        _, past = self.decoder.forward(np.asarray([key], dtype=np.int64), np.arange(n)[None],
                                       causal_bias(np.ones((1, n), dtype=np.int64)),
                                       self.decoder.empty_past(1))
        return past

    def _ready(self, keys: Sequence[tuple[int, ...]]) -> None:
        """Every one of ``keys`` in :attr:`cache`: found in the store, computed here, or
        waited for while another thread computes it."""
        mine: list[tuple[int, ...]] = []
        with self.lock:
            for key in dict.fromkeys(k for k in keys if k):
                if key in self.cache or key in self.busy:
                    continue
                kept = self.store.get(key) if self.store is not None else None
                if kept is not None:
                    self.cache[key] = kept
                else:
                    self.busy[key] = threading.Event()
                    mine.append(key)
        for key in mine:
            past = self._compute(key)
            with self.lock:
                self.cache[key] = past
                if self.store is not None:
                    self.store.put(key, past)
                self.stats.forward_passes += 1
                self.stats.prefill_tokens += len(key)
                self.stats.prefixes += 1
                done = self.busy.pop(key)
            done.set()
        for key in keys:
            with self.lock:
                pending = self.busy.get(key)
            if pending is not None:
                pending.wait()

    def batch(self, keys: Sequence[tuple[int, ...]]) -> tuple[Past, np.ndarray, np.ndarray]:
        """(past, visible [jobs, longest], lengths) for one row per key: each prefix's
        cache, right-padded to the longest; then each key counts as read once."""
        self._ready(keys)
        with self.lock:
            return self._batch(keys)

    def _batch(self, keys: Sequence[tuple[int, ...]]) -> tuple[Past, np.ndarray, np.ndarray]:
        longest = max(len(k) for k in keys)
        pasts = [self.cache[k] for k in keys if k]
        template = pasts[0] if pasts else self.decoder.empty_past(1)
        past = [np.zeros((len(keys), a.shape[1], longest, a.shape[3]), dtype=a.dtype)
                for a in template]
        visible = np.full((len(keys), longest), NEG, dtype=np.float32)
        for r, k in enumerate(keys):
            if k:
                for dst, src in zip(past, self.cache[k], strict=True):
                    dst[r, :, : len(k)] = src[0]
                visible[r, : len(k)] = 0.0
                self.stats.shared_tokens += len(k)
        for k in keys:
            self.left[k] -= 1
            if not self.left[k]:
                self.cache.pop(k, None)
        return past, visible, np.asarray([len(k) for k in keys], dtype=np.int64)


def prefix_buckets(shared: Sequence[tuple[int, ...]], lengths: Sequence[int],
                   max_batch_tokens: int, max_batch_jobs: int) -> list[list[int]]:
    """Job indices grouped as :func:`buckets` does, the prompts of one shared prefix side
    by side (in the order the prefixes first appear), so each prefix's cache is freed
    early; ``lengths`` are the whole prompts'."""
    rank: dict[tuple[int, ...], int] = {}
    for key in shared:
        rank.setdefault(key, len(rank))
    order = sorted(range(len(lengths)), key=lambda i: (rank[shared[i]], lengths[i], i))
    return _chunks(order, lengths, max_batch_tokens, max_batch_jobs)


class _Tree:
    """Decoding state of one batch of jobs: their prompts' KV cache and their branches."""

    def __init__(self, decoder: Decoder, ids: np.ndarray, mask: np.ndarray,
                 prefix: _PrefixBatch | None = None) -> None:
        """Prefill ``ids`` (left-padded, ``mask``); after ``prefix``'s cache when given
        (one row per job: :meth:`_Prefixes.batch`)."""
        self.decoder = decoder
        self.stats = DecodeStats(batches=1)
        if prefix is None:
            past, visible = decoder.empty_past(len(ids)), np.zeros((len(ids), 0), np.float32)
            start = np.zeros(len(ids), dtype=np.int64)
        else:
            past, visible, start = prefix
        pos = start[:, None] + np.maximum(np.cumsum(mask, axis=1) - 1, 0)
        bias = causal_bias(mask)
        if visible.shape[1]:
            query = mask.astype(bool)[:, None, :, None]  # padding queries see nothing
            seen_prefix = np.where(query, visible[:, None, None, :], NEG).astype(np.float32)
            bias = np.concatenate([seen_prefix, bias], axis=3)
        logits, self.past = decoder.forward(ids, pos, bias, past)
        self.stats.forward_passes += 1
        self.stats.prefill_tokens += ids.size
        self.prompt_visible = np.concatenate(  # [jobs, prefix + L]
            [visible, np.where(mask.astype(bool), np.float32(0), NEG)], axis=1)
        self.width = self.prompt_visible.shape[1]  # positions in the KV cache
        self.first_logits = logits[:, -1, :]
        self.seen = start + mask.sum(axis=1)

    def feed(self, branches: list[_Branch]) -> None:
        """One pass over every branch's pending tokens; sets each branch's logits."""
        jobs = len(self.prompt_visible)
        per_job: list[list[_Branch]] = [[] for _ in range(jobs)]
        for b in branches:
            per_job[b.job].append(b)
        width = max(sum(len(b.pending) for b in bs) for bs in per_job)
        t = self.width
        ids = np.zeros((jobs, width), dtype=np.int64)
        pos = np.zeros((jobs, width), dtype=np.int64)
        bias = np.full((jobs, 1, width, t + width), NEG, dtype=np.float32)
        spans: list[tuple[_Branch, int, int]] = []
        pw = self.prompt_visible.shape[1]
        for j, bs in enumerate(per_job):
            n = sum(len(b.pending) for b in bs)
            bias[j, 0, :n, :pw] = self.prompt_visible[j]  # every real query sees the prompt
            o = 0
            for b in bs:
                k = len(b.pending)
                ids[j, o : o + k] = b.pending
                pos[j, o : o + k] = b.seen + np.arange(k)
                if b.cache:
                    bias[j, 0, o : o + k, b.cache] = 0.0
                bias[j, 0, o : o + k, t + o : t + o + k] = _causal(k)  # own new tokens
                spans.append((b, o, k))
                o += k
        logits, self.past = self.decoder.forward(ids, pos, bias, self.past)
        for b, o, k in spans:
            b.logits = logits[b.job, o + k - 1]
            b.cache = b.cache + list(range(t + o, t + o + k))
            b.seen += k
            b.pending = []
        self.width = t + width
        self.stats.forward_passes += 1
        self.stats.step_rows += len(branches)
        self.stats.step_tokens += ids.size


def sample_numbers(
    decoder: Decoder,
    prompts: Sequence[Sequence[int]],
    skeleton: Skeleton,
    *,
    num_samples: int = 32,
    temperature: float = 1.0,
    seed: int = 0,
    pad_id: int = 0,
    max_batch_tokens: int = 8192,
    max_batch_jobs: int = 64,
    stats: DecodeStats | None = None,
    stratified: bool = False,
    shared: Sequence[Sequence[int]] | None = None,
    prefix_store: PrefixStore | None = None,
    exact_last: bool = False,
    workers: int = 1,
) -> list[np.ndarray]:
    """``num_samples`` sampled values per prompt (sorted), with the constrained loop.

    ``prompts`` are input ids *without* the skeleton prefix (``<eos> text <sep>``); with
    ``shared``, each prompt is ``shared[i] + prompts[i]`` and the distinct ``shared``
    prefixes are computed once (see the module doc; the samples are those of the whole
    prompt's ids, however it is split); ``prefix_store`` keeps their caches for later
    calls. ``stratified`` and ``exact_last``: see the module doc. ``workers`` > 1 decodes
    that many buckets at a time, each on a thread of its own (a decoder whose ``forward``
    may run concurrently, as an onnxruntime session may), with the jobs cut into at least
    that many buckets; a job's samples do not depend on its bucket, so they are the same.
    """
    ordered = stratified
    codec = skeleton.codec
    prefix = skeleton.prefix()
    first_slot = next(i for i, p in enumerate(skeleton.pieces) if isinstance(p, int))
    rest = skeleton.pieces[first_slot:]
    last_slot = max(i for i, p in enumerate(rest) if isinstance(p, int))
    options_of: dict[tuple[int, str], tuple[str, ...]] = {}

    def legal_after(tokens: list[str]) -> tuple[str, ...]:
        """The legal next tokens (in value order when stratified): they depend only on
        the position and the exponent written so far."""
        key = (len(tokens), "".join(tokens[codec.mantissa_digits:]))
        if key not in options_of:
            options = codec.possible_next_tokens(tokens)
            options_of[key] = tuple(value_order(codec, tokens, options) if ordered
                                    else options)
        return options_of[key]

    def value_of(tokens: list[str]) -> float:  # legal by construction
        return float(codec.tokens_to_string(tokens))
    results: list[np.ndarray] = [np.empty(0)] * len(prompts)
    heads = [tuple(int(t) for t in s) for s in shared] if shared is not None else None
    if heads is not None and len(heads) != len(prompts):
        raise ValueError("one shared prefix per prompt")
    own = [list(p) + prefix for p in prompts]
    whole = [list(h) + list(p) for h, p in zip(heads, prompts, strict=True)] if heads else \
        [list(p) for p in prompts]
    cache = _Prefixes(decoder, heads, prefix_store) if heads and any(heads) else None
    if workers > 1:  # at least one bucket per worker
        max_batch_jobs = min(max_batch_jobs, max(1, -(-len(prompts) // workers)))
    if cache is not None and heads is not None:
        groups = prefix_buckets(heads, [len(h) + len(o) for h, o in zip(heads, own, strict=True)],
                                max_batch_tokens, max_batch_jobs)
    else:
        groups = buckets([len(p) for p in own], max_batch_tokens, max_batch_jobs)

    def decode(bucket: list[int]) -> tuple[list[np.ndarray], DecodeStats]:
        """One bucket's samples (in its order) and what its passes cost."""
        ids, mask = left_pad([own[i] for i in bucket], pad_id)
        past = cache.batch([heads[i] for i in bucket]) if cache and heads else None
        tree = _Tree(decoder, ids, mask, past)
        keys = [job_key(seed, whole[i]) for i in bucket]
        branches = [
            _Branch(j, num_samples, [], [], int(tree.seen[j]), [], tree.first_logits[j])
            for j in range(len(bucket))
        ]
        # exact_last: each job's (value, weight) pairs
        leaves: list[list[tuple[float, float]]] = [[] for _ in bucket]
        for at, piece in enumerate(rest):
            if not isinstance(piece, int):
                for b in branches:
                    b.pending.extend(piece)
                continue
            legal = [legal_after(b.tokens) for b in branches]
            if all(len(options) == 1 for options in legal):  # known: no pass spent on it
                for b, options in zip(branches, legal, strict=True):
                    if exact_last and at == last_slot:  # the one last token, whole count
                        leaves[b.job].append((value_of([*b.tokens, options[0]]),
                                              float(b.count)))
                    b.tokens.append(options[0])
                    b.pending.append(skeleton.token_ids[options[0]])
                continue
            if any(b.pending for b in branches):
                tree.feed(branches)
            # the branches that choose among the same tokens, as one array each
            same: dict[tuple[str, ...], list[_Branch]] = {}
            for b, options in zip(branches, legal, strict=True):
                same.setdefault(options, []).append(b)
            children: list[_Branch] = []
            for options, group in same.items():
                p = masked_probs(np.stack([b.logits for b in group]),  # type: ignore[misc]
                                 [skeleton.columns[t] for t in options], temperature)
                if exact_last and at == last_slot:  # every last token, at its probability
                    for b, row in zip(group, p, strict=True):
                        leaves[b.job] += [(value_of([*b.tokens, tok]), b.count * float(q))
                                          for tok, q in zip(options, row, strict=True) if q > 0]
                    continue
                points = np.concatenate([branch_uniforms(keys[b.job], b.tokens, b.count)
                                         for b in group])
                counts = draw_counts(p, [b.count for b in group], points, stratified)
                for b, row in zip(group, counts, strict=True):
                    for t in np.flatnonzero(row):
                        tok = options[t]
                        children.append(_Branch(b.job, int(row[t]), [*b.tokens, tok], b.cache,
                                                b.seen, [skeleton.token_ids[tok]], None))
            branches = children
        tree.stats.passes_per_batch.append(tree.stats.forward_passes)
        if exact_last:
            return [mixture_quantiles(leaf, num_samples) for leaf in leaves], tree.stats
        values: list[list[float]] = [[] for _ in bucket]
        for b in branches:
            values[b.job].extend([value_of(b.tokens)] * b.count)
        return [np.sort(np.asarray(v, dtype=np.float64)) for v in values], tree.stats

    if workers > 1 and len(groups) > 1:  # each bucket's passes on a thread of its own
        with ThreadPoolExecutor(min(workers, len(groups))) as pool:
            done = list(pool.map(decode, groups))
    else:
        done = [decode(bucket) for bucket in groups]
    for bucket, (samples, bucket_stats) in zip(groups, done, strict=True):
        for k, i in enumerate(bucket):
            results[i] = samples[k]
        if stats is not None:
            stats.add(bucket_stats)
    if stats is not None and cache is not None:
        stats.add(cache.stats)
    return results


def mixture_quantiles(weighted: Sequence[tuple[float, float]], n: int) -> np.ndarray:
    """``n`` values standing for a discrete distribution (``(value, weight)`` pairs): its
    quantiles at the midpoints ``(k + 1/2) / n`` of ``n`` equal strata, sorted."""
    values = np.asarray([v for v, _ in weighted], dtype=np.float64)
    weights = np.asarray([w for _, w in weighted], dtype=np.float64)
    order = np.argsort(values, kind="stable")
    values, cum = values[order], np.cumsum(weights[order])
    at = (np.arange(n) + 0.5) / n * cum[-1]
    return values[np.minimum(np.searchsorted(cum, at, side="left"), len(values) - 1)]


def summarize_samples(samples: np.ndarray) -> tuple[float, float, float]:
    """(p10, p50, p90) of one job's samples (NaN-tolerant; all NaN gives NaNs)."""
    s = samples[np.isfinite(samples)]
    if not len(s):
        return (float("nan"),) * 3  # type: ignore[return-value]
    p10, p50, p90 = np.quantile(s, [0.1, 0.5, 0.9])
    return float(p10), float(p50), float(p90)
