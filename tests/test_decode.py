"""The constrained, prefix-filled decoding loop, on fake decoders (numpy only, no model).

A fake decoder keeps each row's token history in its "KV cache" (one float per position), so
its logits can depend on exactly what a real model would see, and the test can check what
was fed, in what chunks, and at which positions.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from pathlib import Path

import bench
import numpy as np
import pytest

from laser_ci.predictors.decode import (
    DecodeStats,
    Skeleton,
    buckets,
    left_pad,
    mixture_quantiles,
    sample_numbers,
    summarize_samples,
)
from laser_ci.text.numbers import DEFAULT_CODEC, NumberCodec

sample_naive = bench.load("naive_decoding").sample_naive

# a made-up vocabulary: the codec's tokens and the skeleton's fixed pieces get ids
PAD, EOS, SEP = 0, 1, 2
VOCAB = ["<pad>", "<eos>", "<sep>", '{"', "runtime", "_s", '":', ' "', ".", "e", '"}'] + list(
    "+-0123456789"
)
ID = {t: i for i, t in enumerate(VOCAB)}


def make_skeleton(codec: NumberCodec = DEFAULT_CODEC, full_vocab: bool = False) -> Skeleton:
    fixed = {
        '{"runtime_s": "': [ID['{"'], ID["runtime"], ID["_s"], ID['":'], ID[' "']],
        ".": [ID["."]],
        "e": [ID["e"]],
        '"}': [ID['"}']],
    }
    pieces = [fixed[p] if isinstance(p, str) else p for p in codec.skeleton()]
    token_ids = {t: ID[t] for t in codec.all_tokens()}
    columns = token_ids if full_vocab else {t: i for i, t in enumerate(codec.all_tokens())}
    return Skeleton(codec, pieces, token_ids, columns)


class FakeDecoder:
    """Logits are a deterministic function of what each query token can attend to.

    The "KV cache" holds the token ids; a query's history is the keys its attention bias
    leaves visible, in cache order, so tree attention is checked as a model would see it.
    """

    def __init__(self, columns: int, logit_fn=None, last_only: bool = False) -> None:
        self.columns = columns
        self.logit_fn = logit_fn or self.hashed_logits
        self.last_only = last_only
        self.calls: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    @staticmethod
    def hashed_logits(history: tuple[int, ...], columns: int) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(repr(history).encode()).digest()[:8], "little")
        return np.random.default_rng(seed).normal(0, 3, columns)

    def empty_past(self, batch: int) -> list[np.ndarray]:
        return [np.zeros((batch, 1, 0, 1), np.float32)]

    def forward(self, input_ids, position_ids, bias, past):
        self.calls.append((input_ids.copy(), position_ids.copy(), bias.copy()))
        (kv,) = past
        b, s = input_ids.shape
        assert bias.shape == (b, 1, s, kv.shape[2] + s)
        present = np.concatenate([kv, input_ids[:, None, :, None].astype(np.float32)], axis=2)
        logits = np.zeros((b, s, self.columns), np.float32)
        for r in range(b):
            for q in range(s):
                visible = np.flatnonzero(bias[r, 0, q] == 0)
                if not len(visible):
                    continue  # a padding query
                assert visible[-1] == kv.shape[2] + q  # sees itself, nothing later
                assert position_ids[r, q] == len(visible) - 1  # positions follow the branch
                history = tuple(int(x) for x in present[r, 0, visible, 0])
                logits[r, q] = self.logit_fn(history, self.columns)
        return (logits[:, -1:] if self.last_only else logits), [present]


def prompts(n: int, seed: int = 0) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [[EOS, *rng.integers(3, 11, rng.integers(1, 30)).tolist(), SEP] for _ in range(n)]


@pytest.mark.parametrize("stratified", [False, True])
def test_random_logits_always_parse(stratified: bool):
    """Output valid by construction: random logits, every sample is a legal number."""
    codec = DEFAULT_CODEC
    sk = make_skeleton(codec)
    for seed in range(5):
        ps = prompts(7, seed)
        dec = FakeDecoder(len(codec.all_tokens()))
        stats = DecodeStats()
        out = sample_numbers(dec, ps, sk, num_samples=50, seed=seed, stats=stats,
                             max_batch_tokens=64, max_batch_jobs=3, stratified=stratified)
        assert len(out) == len(ps)
        for samples in out:
            assert len(samples) == 50
            assert np.all(np.diff(samples) >= 0)
            for v in samples:
                assert codec.min_value <= v <= codec.max_value
                assert codec.from_string(codec.to_string(v)) == v  # a legal, exact value
                text = codec.render(codec.to_tokens(v))
                assert codec.parse(text) == v
        assert stats.batches >= 3


@pytest.mark.parametrize("stratified", [False, True])
def test_random_logits_full_vocab_columns_and_negative_exponents(stratified: bool):
    """Same with logits over a whole vocabulary and a codec whose exponent sign is sampled."""
    codec = NumberCodec(min_exponent=-3, max_exponent=12)
    sk = make_skeleton(codec, full_vocab=True)
    dec = FakeDecoder(len(VOCAB))
    out = sample_numbers(dec, prompts(5), sk, num_samples=40, seed=3, stratified=stratified)
    signs = set()
    for samples in out:
        for v in samples:
            tokens = codec.to_tokens(v)
            signs.add(tokens[3])
            assert codec.from_tokens(tokens) == v
            assert 1e-3 <= v <= 9.99e12
    assert signs == {"+", "-"}


def _fed_groups(call, width):
    """The real (unmasked) query tokens of one step, cut into groups of ``width``."""
    ids, _pos, bias = call
    groups = []
    for r in range(len(ids)):
        real = [q for q in range(ids.shape[1]) if (bias[r, 0, q] == 0).any()]
        toks = [VOCAB[int(ids[r, q])] for q in real]
        assert len(toks) % width == 0
        groups += [toks[k : k + width] for k in range(0, len(toks), width)]
    return groups


def test_prefix_filling_feeds_known_tokens_without_a_pass():
    """Prompt+prefix in one pass, then [d1 .], [d2], [d3 e + 0]: 4 passes for 16 tokens."""
    codec = DEFAULT_CODEC
    sk = make_skeleton(codec)
    dec = FakeDecoder(len(codec.all_tokens()))
    ps = prompts(3)
    stats = DecodeStats()
    out = sample_numbers(dec, ps, sk, num_samples=8, seed=0, stats=stats)
    assert stats.forward_passes == len(dec.calls) == 4
    prefill = dec.calls[0][0]
    prefix = sk.prefix()
    for r, p in enumerate(sorted(ps, key=len)):
        assert prefill[r, -len(p) - len(prefix):].tolist() == p + prefix
    g1, g2, g3 = (_fed_groups(c, w) for c, w in zip(dec.calls[1:], (2, 1, 4), strict=True))
    assert all(g[0] in "123456789" and g[1] == "." for g in g1)
    assert all(g[0] in "0123456789" for g in g2)
    assert all(g[0] in "0123456789" and g[1:] == ["e", "+", "0"] for g in g3)
    # one group per distinct prefix, at most one per sample
    assert len(g1) <= len(g2) <= len(g3) <= 3 * 8
    assert all(len(s) == 8 for s in out)


def test_tree_attention_matches_one_job_at_a_time():
    """Branches side by side in one row, jobs side by side in a batch: each token sees only
    its own history, so the samples equal those of decoding each job alone."""
    sk = make_skeleton()
    ps = prompts(4, seed=2)
    tree = sample_numbers(FakeDecoder(12), ps, sk, num_samples=64, seed=5)
    alone = [sample_numbers(FakeDecoder(12), [p], sk, num_samples=64, seed=5)[0] for p in ps]
    for x, y in zip(tree, alone, strict=True):
        np.testing.assert_array_equal(x, y)


def test_one_branch_per_job_when_the_model_is_sure():
    """A peaked model: all samples share one prefix, so every step feeds one branch a job."""

    def peaked(history, columns):
        x = np.full(columns, -30.0)
        x[2 + 4] = 30.0  # digit "4" (columns: + - 0..9)
        return x

    sk = make_skeleton()
    dec = FakeDecoder(12, peaked)
    stats = DecodeStats()
    out = sample_numbers(dec, prompts(4), sk, num_samples=100, seed=0, stats=stats)
    assert [c[0].shape[1] for c in dec.calls[1:]] == [2, 1, 4]
    assert stats.step_rows == 3 * 4
    assert all(np.all(s == 4.44e4) for s in out)
    assert summarize_samples(out[0]) == (44400.0, 44400.0, 44400.0)


def test_sampling_follows_the_masked_distribution():
    """First digit: softmax over the legal columns 1-9 only (the mask drops 0 and signs)."""
    probs = np.array([0, 0, 9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.2])  # + - 0 1 ... 9

    def fixed(history, columns):
        with np.errstate(divide="ignore"):
            x = np.log(probs + 1e-300)
        x[2] = 50.0  # "0" is very likely but illegal as the first digit
        return x

    sk = make_skeleton()
    out = sample_numbers(FakeDecoder(12, fixed), prompts(1), sk, num_samples=20000, seed=1)
    first = np.array([DEFAULT_CODEC.to_tokens(v)[0] for v in out[0]])
    expected = probs[3:] / probs[3:].sum()
    observed = np.array([(first == str(d)).mean() for d in range(1, 10)])
    assert np.abs(observed - expected).max() < 0.02


@pytest.mark.parametrize("stratified", [False, True])
def test_seeded_and_independent_of_the_batch(stratified: bool):
    sk = make_skeleton()
    ps = prompts(9, seed=4)
    kw = dict(num_samples=16, stratified=stratified)
    a = sample_numbers(FakeDecoder(12), ps, sk, seed=7, **kw)
    b = sample_numbers(FakeDecoder(12), ps, sk, seed=7, **kw)
    c = sample_numbers(FakeDecoder(12), ps[::-1], sk, seed=7, max_batch_jobs=2, **kw)
    d = sample_numbers(FakeDecoder(12), ps, sk, seed=8, **kw)
    for x, y, z in zip(a, b, c[::-1], strict=True):
        assert np.array_equal(x, y) and np.array_equal(x, z)
    assert any(not np.array_equal(x, y) for x, y in zip(a, d, strict=True))


def test_branch_uniforms_are_a_stream_of_the_branch_own():
    from laser_ci.predictors.decode import branch_uniforms, job_key

    key = job_key(0, [1, 5, 2])
    u = branch_uniforms(key, ["4", "2"], 20)
    assert u.shape == (20,) and np.all((u >= 0) & (u < 1)) and len(set(u.tolist())) == 20
    np.testing.assert_array_equal(branch_uniforms(key, ["4", "2"], 3), u[:3])  # a prefix
    assert not np.array_equal(branch_uniforms(key, ["4", "3"], 20), u)  # another branch
    assert not np.array_equal(branch_uniforms(key, ["4"], 20), u)
    assert not np.array_equal(branch_uniforms(job_key(1, [1, 5, 2]), ["4", "2"], 20), u)
    assert branch_uniforms(key, [], 0).shape == (0,)
    pooled = np.concatenate([branch_uniforms(job_key(0, [i]), [], 16) for i in range(500)])
    assert abs(pooled.mean() - 0.5) < 0.01 and abs(np.mean(pooled < 0.1) - 0.1) < 0.01


@pytest.mark.parametrize(
    ("weighted", "n", "expected"),
    [
        ([(5.0, 1.0)], 4, [5, 5, 5, 5]),
        ([(1.0, 1.0), (2.0, 1.0)], 4, [1, 1, 2, 2]),
        ([(1.0, 1.0), (2.0, 1.0)], 2, [1, 2]),  # a midpoint on neither side of a step
        ([(2.0, 3.0), (1.0, 1.0)], 4, [1, 2, 2, 2]),  # any order, any total weight
        ([(1.0, 0.2), (3.0, 0.2), (2.0, 0.6)], 5, [1, 2, 2, 2, 3]),
        ([(1.0, 0.5), (1.0, 0.5), (7.0, 1e-12)], 3, [1, 1, 1]),  # repeated values add up
        ([(3.0, 1.0), (1.0, 0.0)], 2, [3, 3]),  # a zero weight is never drawn
    ],
)
def test_mixture_quantiles(weighted, n, expected):
    assert mixture_quantiles(weighted, n).tolist() == expected


LAST_DIGIT = np.array([0.1, 0.2, 0.4, 0.2, 0.05, 0.05])  # exponent +00 .. +05


def _sure_mantissa(history, columns):
    """Mantissa digits almost surely 4; after ``e+0``, the exponent's last digit by
    LAST_DIGIT."""
    if history[-2:] == (ID["+"], ID["0"]):
        x = np.full(columns, -30.0)
        x[2:8] = np.log(LAST_DIGIT)
        return x
    x = np.full(columns, -30.0)
    x[2 + 4] = 30.0
    return x


@pytest.mark.parametrize("stratified", [False, True])
def test_exact_last_keeps_the_last_digit_distribution_whole(stratified: bool):
    """exact_last: every sampled prefix takes every last token at its probability; the
    values are that mixture's quantiles, whatever the seed, for the same passes."""
    sk = make_skeleton()
    expected = mixture_quantiles([(4.44 * 10.0 ** k, p) for k, p in enumerate(LAST_DIGIT)], 16)
    drawn: list[np.ndarray] = []
    for seed in (0, 1):
        st_exact, st_sampled = DecodeStats(), DecodeStats()
        exact = sample_numbers(FakeDecoder(12, _sure_mantissa), prompts(3), sk, num_samples=16,
                               seed=seed, stratified=stratified, exact_last=True, stats=st_exact)
        sampled = sample_numbers(FakeDecoder(12, _sure_mantissa), prompts(3), sk,
                                 num_samples=16, seed=seed, stratified=stratified,
                                 stats=st_sampled)
        for x in exact:
            np.testing.assert_allclose(x, expected)
        assert st_exact.forward_passes == st_sampled.forward_passes
        assert st_exact.step_tokens == st_sampled.step_tokens
        drawn += sampled
    support = {round(4.44 * 10.0 ** k, 2) for k in range(6)}
    assert all(set(np.round(x, 2).tolist()) <= support for x in drawn)
    assert any(not np.allclose(x, expected) for x in drawn)  # sampled: draws, not quantiles


def test_exact_last_is_seeded_and_independent_of_the_batch():
    sk = make_skeleton()
    ps = prompts(9, seed=4)
    kw = dict(num_samples=16, stratified=True, exact_last=True)
    a = sample_numbers(FakeDecoder(12), ps, sk, seed=7, **kw)
    c = sample_numbers(FakeDecoder(12), ps[::-1], sk, seed=7, max_batch_jobs=2, **kw)
    for x, z in zip(a, c[::-1], strict=True):
        assert np.array_equal(x, z)
        assert len(x) == 16 and np.all(np.diff(x) >= 0)
        for v in x:
            assert DEFAULT_CODEC.from_string(DEFAULT_CODEC.to_string(v)) == v


RATIO_CODEC = NumberCodec(min_exponent=-2)
SURE_CODEC = NumberCodec(min_exponent=-2, max_exponent=0)
# + - 0..9: the exponent sign almost surely "+" (then "00", the only legal exponent digits
# after it with SURE_CODEC); mantissa digits spread out
SURE_EXPONENT = np.log(np.array([30, 1e-9, 30, 2, 3, 5, 8, 9, 7, 4, 2, 1], dtype=float))


def _fixed(history, columns):
    return SURE_EXPONENT


def _exact_distribution(codec: NumberCodec) -> tuple[np.ndarray, np.ndarray]:
    """Every value the fixed model can write and its probability (the masked softmax at
    every position, as the loop computes it)."""
    import itertools

    values, probs = [], []
    cols = {t: i for i, t in enumerate(codec.all_tokens())}
    def dist(prev):
        options = codec.possible_next_tokens(prev)
        x = np.exp(SURE_EXPONENT[[cols[t] for t in options]])
        return dict(zip(options, x / x.sum(), strict=True))
    for d1, d2, d3 in itertools.product("123456789", "0123456789", "0123456789"):
        prev, p = [], 1.0
        for t in (d1, d2, d3):
            p *= dist(prev)[t]
            prev.append(t)
        values.append(float(f"{d1}.{d2}{d3}"))  # exponent +00 (the rest: ~1e-10)
        probs.append(p)
    order = np.argsort(values)
    return np.array(values)[order], np.array(probs)[order]


def test_stratified_samples_cover_the_quantiles_evenly():
    """Stratified: the first digit's counts are N*p give or take 2, and the samples' median
    sits within a couple of 1/N of the distribution's exact median; independent samples'
    median wanders by ~1/sqrt(N)."""
    codec = SURE_CODEC
    sk = make_skeleton(codec)
    values, probs = _exact_distribution(codec)
    cdf = np.cumsum(probs) / probs.sum()
    n = 16
    ps = prompts(200, seed=9)
    strat = sample_numbers(FakeDecoder(12, _fixed), ps, sk, num_samples=n, stratified=True)
    indep = sample_numbers(FakeDecoder(12, _fixed), ps, sk, num_samples=n)
    p_first = np.array([probs[np.floor(values) == d].sum() for d in range(1, 10)]) / probs.sum()

    def quantile_of(v):
        return cdf[np.searchsorted(values, v)]

    for s in strat:
        first = np.floor(s)
        counts = np.array([(first == d).sum() for d in range(1, 10)])
        assert np.abs(counts - n * p_first).max() <= 2
        assert abs(quantile_of(np.quantile(s, 0.5, method="lower")) - 0.5) <= 2.5 / n
    errs_strat = [abs(quantile_of(np.median(s)) - 0.5) for s in strat]
    errs_indep = [abs(quantile_of(np.median(s)) - 0.5) for s in indep]
    assert np.mean(errs_strat) < 0.5 * np.mean(errs_indep)


def test_stratified_samples_follow_the_distribution():
    """Pooled over many jobs, stratified samples are distributed as the model says."""
    codec = SURE_CODEC
    sk = make_skeleton(codec)
    values, probs = _exact_distribution(codec)
    out = sample_numbers(FakeDecoder(12, _fixed), prompts(500, seed=3), sk, num_samples=8,
                         stratified=True)
    pooled = np.concatenate(out)
    cdf = np.cumsum(probs) / probs.sum()
    for q in (0.1, 0.25, 0.5, 0.75, 0.9):
        at = np.searchsorted(cdf, q)  # the q-quantile's value, and the exact CDF there
        assert abs(np.mean(pooled <= values[at]) - cdf[at]) < 0.015


@pytest.mark.parametrize(
    ("prev", "options", "expected"),
    [
        ([], list("123456789"), list("123456789")),
        (list("12"), list("0123456789"), list("0123456789")),
        (list("123"), ["+", "-"], ["-", "+"]),
        (list("123+"), list("01"), list("01")),
        (list("123-"), list("012"), list("210")),  # e-02 < e-01 < e-00
        (list("123-0"), list("12"), list("21")),
    ],
)
def test_value_order(prev, options, expected):
    from laser_ci.predictors.decode import value_order

    assert value_order(RATIO_CODEC, prev, options) == expected


def test_temperature_zero_is_greedy():
    sk = make_skeleton()
    out = sample_numbers(FakeDecoder(12), prompts(3), sk, num_samples=5, temperature=0)
    assert all(len(set(s)) == 1 for s in out)


def test_naive_loop_generates_structure_and_counts_invalid():
    """Naive decoding: one pass per token; a full-vocab model that spells the skeleton."""
    target = ['{"', "runtime", "_s", '":', ' "', "4", ".", "7", "3", "e", "+", "0", "2", '"}']

    def spell(history, columns):
        n = 0  # tokens generated so far = tokens after the last <sep>
        for t in reversed(history):
            if t == SEP:
                break
            n += 1
        x = np.full(columns, -20.0)
        x[ID[target[n]] if n < len(target) else EOS] = 20.0
        return x

    def parse(ids):
        return DEFAULT_CODEC.parse("".join(VOCAB[i] for i in ids))

    dec = FakeDecoder(len(VOCAB), spell, last_only=True)
    stats = DecodeStats()
    out = sample_naive(dec, prompts(3), parse=parse, eos_id=EOS, max_new_tokens=20,
                       num_samples=4, stats=stats)
    assert all(np.all(s == 473.0) for s in out)
    assert stats.forward_passes == len(target) + 1 and stats.invalid == 0
    # a model that never stops: every sample is invalid (NaN), and counted
    bad = FakeDecoder(len(VOCAB), lambda h, c: np.eye(c)[ID["7"]] * 10,
                      last_only=True)
    stats = DecodeStats()
    out = sample_naive(bad, prompts(2), parse=parse, eos_id=EOS, max_new_tokens=5,
                       num_samples=3, stats=stats)
    assert stats.invalid == 6 and all(np.isnan(s).all() for s in out)
    assert all(np.isnan(x) for x in summarize_samples(out[0]))


@pytest.mark.parametrize(
    ("lengths", "max_tokens", "max_jobs", "expected"),
    [
        ([5, 1, 3], 100, 10, [[1, 2, 0]]),
        ([5, 1, 3], 6, 10, [[1, 2], [0]]),
        ([4, 4, 4, 4], 100, 2, [[0, 1], [2, 3]]),
        ([10], 1, 1, [[0]]),  # a job longer than the budget still gets a batch
    ],
)
def test_buckets(lengths, max_tokens, max_jobs, expected):
    got = buckets(lengths, max_tokens, max_jobs)
    assert got == expected
    assert sorted(itertools.chain(*got)) == list(range(len(lengths)))


def test_left_pad():
    ids, mask = left_pad([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]


# ---- the prompt layout and the tokenizer (tokenizers only) -------------------------------------

from laser_ci.text.tokenize import PromptCodec, train_tokenizer  # noqa: E402

YAML = """name: CI
on: [push]
jobs:
  test:
    runs-on: ubuntu-22.04
    steps:
      - uses: actions/checkout@v4
      - run: |
          pytest -n 4 --timeout=300
"""


@pytest.fixture(scope="module")
def tok():
    return train_tokenizer([YAML, YAML.replace("test", "build"), "task: job\nrepo: files=12\n"],
                           vocab_size=300)


def test_tokenizer_round_trips_and_splits_digits(tok):
    for text in [YAML, "  a:\n\n\t- x: 12345\n", "ünïcode ✓ 3.14e+02"]:
        enc = tok.encode(text, add_special_tokens=False)
        assert tok.decode(enc.ids) == text
        for a, b in enc.offsets:
            if any(c.isdigit() for c in text[a:b]):
                assert b - a == 1  # every digit is a token of its own
    assert [tok.id_to_token(i) for i in (0, 1, 2)] == ["<pad>", "<eos>", "<sep>"]


def test_prompt_codec_skeleton_and_target(tok):
    pc = PromptCodec(tok, DEFAULT_CODEC, max_prompt_tokens=64)
    ids, generated = pc.target(473)
    assert pc.decode_output(ids) == '{"runtime_s": "4.73e+02"}'
    assert [pc.id_to_token[i] for i, g in zip(ids, generated, strict=True) if g] == list("473+02")
    assert ids[: len(pc.skeleton_prefix())] == pc.skeleton_prefix()
    (prompt,) = pc.encode_texts(["task: job\n"])
    assert prompt[0] == pc.eos_id and prompt[-1] == pc.sep_id


def test_long_prompts_keep_head_and_last_line(tok):
    pc = PromptCodec(tok, DEFAULT_CODEC, max_prompt_tokens=60, last_line_tokens=12)
    text = "task: job\n" + "steps: " + "x y z " * 200 + "\nrepo: files=12 size=3M ext=.py:4\n"
    (ids,) = pc.encode_texts([text])
    assert len(ids) == 60 + 2
    body = tok.decode(ids[1:-1])
    assert body.startswith("task: job\nsteps: x y z")
    assert "\nrepo: files=12" in body and len(tok.encode(body[body.index("\nrepo"):]).ids) <= 12
    short = "task: job\nrepo: files=1\n"
    assert tok.decode(pc.encode_texts([short])[0][1:-1]) == short


def test_prompt_ends_with_the_history_block_median_last(tok):
    pc = PromptCodec(tok, DEFAULT_CODEC, max_prompt_tokens=400, last_line_tokens=12)
    numbers = "history: n=3 median=2.00e+02 p10=1.20e+02 p90=2.80e+02 latest=3.00e+02"
    diff = "".join(f"+ run: step {i}\n" for i in range(40))  # longer than a third of 400
    text = ("task: job\n" + numbers + "\nhistory-config: changed +40 -0\n" + diff
            + "steps: " + "x y z " * 200 + "\nrepo: files=12\n")
    (ids,) = pc.encode_texts([text])
    assert len(ids) == 400 + 2
    prompt = tok.decode(ids[1:-1])
    assert prompt.startswith("task: job\nsteps: x y z") and "\nrepo: files=12\n" in prompt
    assert prompt.endswith("\nhistory: n=3 p10=1.20e+02 p90=2.80e+02 latest=3.00e+02 median=2.00e+02")
    assert "history-config: changed +40 -0\n+ run: step 0\n" in prompt
    assert "+ run: step 39" not in prompt  # the diff gives way: at most a third of the budget
    # the median's digits are the same distance from the output in every prompt
    short = "task: job\n" + numbers + "\nhistory-config: unchanged\nrepo: files=1\n"
    for p in (ids, pc.encode_texts([short])[0]):
        assert [tok.id_to_token(i) for i in p[-9:-1]] == list("2.00e+02")


def test_ratio_model_prompt_and_target(tok):
    """warm_target="ratio": the history's p10/p90/latest are written relative to the median
    (times √10, so "as usual" is 3.16e+00) and so is a warm text's target; cold texts are
    unchanged."""
    codec = NumberCodec(min_exponent=-2)
    pc = PromptCodec(tok, codec, max_prompt_tokens=200, warm_target="ratio")
    warm = ("task: job\nhistory: n=3 median=2.00e+02 p10=1.20e+02 p90=2.80e+02 "
            "latest=3.00e+02\nhistory-config: unchanged\nrepo: files=1\n")
    cold = "task: job\nhistory: none\nrepo: files=1\n"
    (ids,) = pc.encode_texts([warm])
    assert tok.decode(ids[1:-1]).endswith(
        "\nhistory: n=3 p10=1.90e+00 p90=4.43e+00 latest=4.74e+00 median=2.00e+02")
    assert pc.reference(warm) == pytest.approx(200.0 / 10**0.5) and pc.reference(cold) is None
    for text, runtime, expected in [(warm, 190, "3.00e+00"), (warm, 210, "3.32e+00"),
                                    (warm, 2000, "3.16e+01"), (warm, 1, "1.58e-02"),
                                    (warm, 0.1, "1.00e-02"), (cold, 190, "1.90e+02")]:
        out, _ = pc.target(runtime, pc.reference(text))
        assert pc.decode_output(out) == f'{{"runtime_s": "{expected}"}}'
    same = PromptCodec(tok, codec, max_prompt_tokens=200)  # the default: runtime
    assert same.reference(warm) is None
    assert pc.encode_texts([cold]) == same.encode_texts([cold])
    with pytest.raises(ValueError, match="warm_target"):
        PromptCodec(tok, codec, warm_target="log")


WARM = ("task: job\nhistory: n=3 median=2.00e+02 p10=1.20e+02 p90=2.80e+02 "
        "latest=3.00e+02\nhistory-config: unchanged\nrepo: files=1\n")
COLD = "task: job\nhistory: none\nrepo: files=1\n"


@pytest.mark.parametrize(
    "outcome, cold_reference, text, kwargs, expected_end, reference",
    [
        # neither option: the text is left alone, no reference
        (False, False, COLD, dict(reference=50.0), "repo: files=1\nhistory: none", None),
        # outcome only: the line goes after the history's config lines, the median last
        (True, False, WARM, dict(outcome="failure"),
         "\nhistory-config: unchanged\noutcome: failure"
         "\nhistory: n=3 p10=1.90e+00 p90=4.43e+00 latest=4.74e+00 median=2.00e+02", 200.0),
        # a cold text's reference is the number nearest the output
        (True, True, COLD, dict(reference=473.2),
         "\nrepo: files=1\nhistory: none\noutcome: success\nreference: 4.73e+02", 473.0),
        # a warm text keeps the history median as its reference: no reference line
        (False, True, WARM, dict(reference=473.0),
         "\nhistory: n=3 p10=1.90e+00 p90=4.43e+00 latest=4.74e+00 median=2.00e+02", 200.0),
        # a reference that is not a positive finite runtime is not written
        (False, True, COLD, dict(reference=0.0), "repo: files=1\nhistory: none", None),
        (False, True, COLD, dict(reference=float("nan")), "repo: files=1\nhistory: none", None),
        (False, True, COLD, dict(reference=None), "repo: files=1\nhistory: none", None),
    ],
)
def test_prompt_lines_outcome_and_cold_reference(tok, outcome, cold_reference, text, kwargs,
                                                 expected_end, reference):
    codec = NumberCodec(min_exponent=-2)
    pc = PromptCodec(tok, codec, max_prompt_tokens=600, warm_target="ratio", outcome=outcome,
                     cold_reference=cold_reference)
    _check_prompt(pc, pc.with_prompt_lines(text, **kwargs), expected_end, reference)


def _check_prompt(pc: PromptCodec, full: str, expected_end: str, reference: float | None):
    """``full``'s prompt ends with ``expected_end``, and its output is relative to
    ``reference`` (None: the output is the runtime itself)."""
    (ids,) = pc.encode_texts([full])
    assert pc.tokenizer.decode(ids[1:-1]).endswith(expected_end)
    ref = pc.reference(full)
    if reference is None:
        assert ref is None
    else:
        assert ref * 10**0.5 == pytest.approx(reference)
        out, _ = pc.target(reference, ref)  # the runtime equal to the reference
        assert pc.decode_output(out) == '{"runtime_s": "3.16e+00"}'


@pytest.mark.parametrize(
    "cold_reference, text, reference, expected_end, expected_ref",
    [
        # a warm text's reference goes last, the history line (median in seconds) before
        # the outcome line, and the output is relative to the reference
        (True, WARM, 250.0,
         "\nhistory-config: unchanged\nhistory: n=3 p10=1.90e+00 p90=4.43e+00 "
         "latest=4.74e+00 median=2.00e+02\noutcome: success\nreference: 2.50e+02", 250.0),
        # without a reference to write, a warm text falls back to its history median
        (True, WARM, None,
         "\nhistory-config: unchanged\noutcome: success"
         "\nhistory: n=3 p10=1.90e+00 p90=4.43e+00 latest=4.74e+00 median=2.00e+02", 200.0),
        (True, WARM, -1.0,
         "\nhistory-config: unchanged\noutcome: success"
         "\nhistory: n=3 p10=1.90e+00 p90=4.43e+00 latest=4.74e+00 median=2.00e+02", 200.0),
        # a cold text reads its reference as a cold_reference model's does
        (True, COLD, 473.2, "\nrepo: files=1\nhistory: none\noutcome: success\n"
         "reference: 4.73e+02", 473.0),
        # warm_reference alone: cold texts get no reference line
        (False, COLD, 473.2, "\nrepo: files=1\noutcome: success\nhistory: none", None),
    ],
)
def test_prompt_lines_warm_reference(tok, cold_reference, text, reference, expected_end,
                                     expected_ref):
    codec = NumberCodec(min_exponent=-2)
    pc = PromptCodec(tok, codec, max_prompt_tokens=600, warm_target="ratio", outcome=True,
                     cold_reference=cold_reference, warm_reference=True)
    _check_prompt(pc, pc.with_prompt_lines(text, reference=reference), expected_end,
                  expected_ref)
    with pytest.raises(ValueError, match="reference line needs"):
        PromptCodec(tok, codec, warm_reference=True)  # needs ratio outputs


def test_cold_reference_target_is_the_ratio_and_old_models_are_unchanged(tok):
    codec = NumberCodec(min_exponent=-2)
    pc = PromptCodec(tok, codec, max_prompt_tokens=200, warm_target="ratio", outcome=True,
                     cold_reference=True)
    full = pc.with_prompt_lines(COLD, reference=100.0)
    for runtime, expected in [(100, "3.16e+00"), (1000, "3.16e+01"), (10, "3.16e-01")]:
        out, _ = pc.target(runtime, pc.reference(full))
        assert pc.decode_output(out) == f'{{"runtime_s": "{expected}"}}'
    # a model without the options reads such lines as text and writes runtimes
    plain = PromptCodec(tok, codec, max_prompt_tokens=200, warm_target="ratio")
    assert plain.reference(full) is None
    assert plain.with_prompt_lines(COLD, reference=100.0) == COLD
    with pytest.raises(ValueError, match="reference line needs"):
        PromptCodec(tok, codec, cold_reference=True)  # needs ratio outputs


WARM_RECENT = WARM.replace("latest=3.00e+02", "latest=3.00e+02 recent=2.50e+02")


@pytest.mark.parametrize(
    "anchor, text, expected_end, reference",
    [
        # a median model drops ``recent=`` (it came later): its prompts are as before it
        ("median", WARM_RECENT, "\nhistory-config: unchanged"
         "\nhistory: n=3 p10=1.90e+00 p90=4.43e+00 latest=4.74e+00 median=2.00e+02", 200.0),
        ("median", WARM, "\nhistory-config: unchanged"
         "\nhistory: n=3 p10=1.90e+00 p90=4.43e+00 latest=4.74e+00 median=2.00e+02", 200.0),
        # a recent model: the recent median last, in seconds, the rest (median too) relative
        ("recent", WARM_RECENT, "\nhistory-config: unchanged\nhistory: n=3 median=2.53e+00 "
         "p10=1.52e+00 p90=3.54e+00 latest=3.79e+00 recent=2.50e+02", 250.0),
        # ... and on a line without the field, the median, as a median model
        ("recent", WARM, "\nhistory-config: unchanged"
         "\nhistory: n=3 p10=1.90e+00 p90=4.43e+00 latest=4.74e+00 median=2.00e+02", 200.0),
        # cold texts: no history, no anchor
        ("recent", COLD, "repo: files=1\nhistory: none", None),
    ],
)
def test_warm_anchor(tok, anchor, text, expected_end, reference):
    codec = NumberCodec(min_exponent=-2)
    pc = PromptCodec(tok, codec, max_prompt_tokens=600, warm_target="ratio", warm_anchor=anchor)
    _check_prompt(pc, text, expected_end, reference)


def test_warm_anchor_is_one_of_the_known(tok):
    with pytest.raises(ValueError, match="warm_anchor"):
        PromptCodec(tok, NumberCodec(min_exponent=-2), warm_target="ratio", warm_anchor="mean")


def job_text(runner: str = "ubuntu-latest", history: str = "history: none",
             matrix: str = "matrix: {python: '3.12'}", steps: str = "- run: pytest") -> str:
    return (f"task: job\nworkflow: CI\nfile: ci.yml\non: push\njob: test (3.12)\n{history}\n"
            f"runs-on: {runner}\n{matrix}\nneeds: [lint]\nsteps:\n{steps}\nrepo: files=1\n")


SHARED_BODY = ("task: job\nworkflow: CI\nfile: ci.yml\non: push\nneeds: [lint]\nsteps:\n"
               "- run: pytest\nrepo: files=1")


@pytest.mark.parametrize(
    "text, body, own",
    [
        # the instance lines follow the body, in the order job, runs-on, matrix
        (job_text(), SHARED_BODY,
         "\njob: test (3.12)\nruns-on: ubuntu-latest\nmatrix: {python: '3.12'}\nhistory: none"),
        # another runner: the same body, only its own lines differ
        (job_text("windows-latest"), SHARED_BODY,
         "\njob: test (3.12)\nruns-on: windows-latest\nmatrix: {python: '3.12'}\nhistory: none"),
        # no matrix line: nothing in its place
        (job_text(matrix="fail-fast: false"), SHARED_BODY.replace("needs", "fail-fast: false\nneeds"),
         "\njob: test (3.12)\nruns-on: ubuntu-latest\nhistory: none"),
        # a history block stays after the instance lines, its median last
        (job_text(history="history: n=3 median=2.00e+02 p10=1.20e+02 p90=2.80e+02 "
                          "latest=3.00e+02\nhistory-config: unchanged"), SHARED_BODY,
         "\njob: test (3.12)\nruns-on: ubuntu-latest\nmatrix: {python: '3.12'}\n"
         "history-config: unchanged\nhistory: n=3 p10=1.20e+02 p90=2.80e+02 latest=3.00e+02 "
         "median=2.00e+02"),
        # a step line that starts like an instance line is a step's, and stays
        (job_text(steps="- run: pytest\njob: not-a-key"), SHARED_BODY.replace(
            "pytest", "pytest\njob: not-a-key"),
         "\njob: test (3.12)\nruns-on: ubuntu-latest\nmatrix: {python: '3.12'}\nhistory: none"),
        # a workflow text is left in the serializer's order
        ("task: workflow\nworkflow: CI\nhistory: none\njob: a\nruns-on: x\nrepo: files=1\n",
         "task: workflow\nworkflow: CI\njob: a\nruns-on: x\nrepo: files=1", "\nhistory: none"),
    ],
)
def test_shared_prefix_layout_puts_instance_lines_last(tok, text, body, own):
    pc = PromptCodec(tok, DEFAULT_CODEC, max_prompt_tokens=400, layout="shared-prefix")
    ((shared, rest),) = pc.encode_segments([text])
    assert shared[0] == pc.eos_id and rest[-1] == pc.sep_id
    assert tok.decode(shared[1:]) == body
    assert tok.decode(rest[:-1]) == own
    assert pc.encode_texts([text]) == [shared + rest]


def test_shared_prefix_body_is_cut_the_same_on_every_runner(tok):
    """The body's budget leaves a fixed share to the instance lines, so runner labels of
    different lengths cut a long body at the same place (and it stays shared)."""
    steps = "\n".join(f"- run: make target{i} && pytest shard{i}" for i in range(40))
    texts = [job_text(r, matrix="fail-fast: false", steps=steps) for r in ("x", "ubuntu-22")]
    pc = PromptCodec(tok, DEFAULT_CODEC, max_prompt_tokens=240, layout="shared-prefix")
    (a, own_a), (b, own_b) = pc.encode_segments(texts)
    assert a == b and len(own_a) != len(own_b)
    assert len(a) + len(own_b) - 2 <= 240 and len(a) < 240 - 240 // 6
    # the serial layout keeps one segment, as before
    serial = PromptCodec(tok, DEFAULT_CODEC, max_prompt_tokens=96)
    assert [h for h, _ in serial.encode_segments(texts)] == [[], []]
    with pytest.raises(ValueError, match="layout"):
        PromptCodec(tok, DEFAULT_CODEC, layout="sideways")


# ---- the shipped model (onnxruntime + tokenizers only) -----------------------------------------

SHIPPED = Path(__file__).resolve().parent.parent / "model" / "lm"


@pytest.mark.skipif(not (SHIPPED / "laser.json").is_file(), reason="no shipped model/lm")
def test_shipped_model_loads_checks_and_predicts():
    """model/lm: every file matches its sha256, and predictions are valid and seeded."""
    from laser_ci.predictors.lm import LaserModel, read_config

    config = read_config(SHIPPED)  # checks the sha256 of every listed file
    assert {"model.onnx", "tokenizer.json"} <= set(config["files"])
    lm = LaserModel(SHIPPED)
    texts = ["task: job\njob: build\nruns-on: ubuntu-latest\nsteps:\n- run: ./gradlew build\n",
             "task: workflow\njobs: 2 definitions, 4 instances\n", "task: job\n"]
    a, b = lm.predict(texts), lm.predict(texts[::-1])[::-1]
    assert a == b
    for r in a:
        assert DEFAULT_CODEC.min_value <= r.p10 <= r.p50 <= r.p90 <= DEFAULT_CODEC.max_value



@pytest.mark.skipif(not (SHIPPED / "laser.json").is_file(), reason="no shipped model/lm")
@pytest.mark.parametrize("diff", [(), ("+ run: pytest -n 4", "- run: pytest")])
def test_a_median_model_reads_no_recent_field(tmp_path: Path, diff: tuple[str, ...]):
    """A folder without ``prompt.warm_anchor`` (every model from before the history line's
    ``recent=``; here model/lm's settings without it) builds the prompts (and references)
    of a text with the field that it built for the same text without it; model/lm itself
    writes its warm outputs over the recent median."""
    import json
    import shutil

    from laser_ci.predictors.lm import LaserModel
    from laser_ci.text.history import History, history_lines

    old_folder = tmp_path / "lm"
    shutil.copytree(SHIPPED, old_folder)
    config = json.loads((old_folder / "laser.json").read_text())  # not a hashed file
    config["prompt"].pop("warm_anchor", None)
    (old_folder / "laser.json").write_text(json.dumps(config))
    block = history_lines(History.of([100.0, 200.0, 900.0, 800.0, 850.0], diff))
    assert "recent=8.50e+02" in block[0]
    text = "task: job\njob: test\n" + "\n".join(block) + "\nruns-on: ubuntu-latest\n" \
        "steps:\n- run: pytest -n 4\nrepo: files=3\n"
    old = text.replace(" recent=8.50e+02", "")
    shipped = LaserModel(SHIPPED).prompt
    assert shipped.warm_anchor == "recent"
    assert shipped.reference(shipped.with_prompt_lines(text)) == pytest.approx(850.0 / 10**0.5)
    lm = LaserModel(old_folder)
    assert lm.prompt.warm_anchor == "median"
    full, old_full = (lm.prompt.with_prompt_lines(t, reference=300.0) for t in (text, old))
    assert lm.prompt.encode_segments([full]) == lm.prompt.encode_segments([old_full])
    assert lm.prompt.reference(full) == lm.prompt.reference(old_full) == pytest.approx(
        800.0 / 10**0.5)  # the median of all 5, not of the last 3 (850)

@pytest.mark.parametrize("batch_jobs", [1, 3, 64])
@pytest.mark.parametrize("stratified", [False, True])
def test_shared_prefixes_change_no_sample(batch_jobs: int, stratified: bool):
    """A prompt split into a shared prefix (computed once) and its own rest samples exactly
    what the whole prompt samples; the prefix's tokens are fed once, not per prompt."""
    codec = DEFAULT_CODEC
    sk = make_skeleton(codec)
    rng = np.random.default_rng(7)
    heads = [[EOS, *rng.integers(3, 11, n).tolist()] for n in (12, 5, 20)]
    split: list[tuple[list[int], list[int]]] = []
    for k in range(11):
        head = heads[k % 3] if k < 9 else []  # two prompts share nothing with the rest
        tail = rng.integers(3, 11, rng.integers(1, 8)).tolist() + [SEP]
        split.append((head, tail if head else [EOS, *tail]))
    whole = [h + t for h, t in split]
    kw = dict(num_samples=24, seed=5, stratified=stratified, max_batch_jobs=batch_jobs,
              max_batch_tokens=256)
    plain_stats = DecodeStats()
    plain = sample_numbers(FakeDecoder(len(codec.all_tokens())), whole, sk, stats=plain_stats,
                           **kw)
    stats = DecodeStats()
    dec = FakeDecoder(len(codec.all_tokens()))
    shared = sample_numbers(dec, [t for _, t in split], sk, shared=[h for h, _ in split],
                            stats=stats, **kw)
    for a, b in zip(plain, shared, strict=True):
        np.testing.assert_array_equal(a, b)
    assert stats.prefixes == 3
    assert stats.shared_tokens == sum(len(h) for h, _ in split)
    once = plain_stats.prefill_tokens - stats.shared_tokens + sum(len(h) for h in heads)
    if batch_jobs == 1:  # no padding: every prefix token is fed once, the rest as before
        assert stats.prefill_tokens == once
    else:
        assert stats.prefill_tokens < plain_stats.prefill_tokens
    # the same prompt alone gets the same samples as beside prompts sharing its prefix
    alone = sample_numbers(FakeDecoder(len(codec.all_tokens())), [split[4][1]], sk,
                           shared=[split[4][0]], **kw)
    np.testing.assert_array_equal(alone[0], plain[4])


class ThreadedDecoder(FakeDecoder):
    """A :class:`FakeDecoder` that notes which thread ran each pass. Passes wait (5 s at
    most) until a second thread has made one: a worker that finished its bucket before the
    next was handed out would take that one too (a loaded machine), and these passes are
    too fast to keep it busy."""

    def __init__(self, columns: int) -> None:
        super().__init__(columns)
        self.threads: set[int] = set()
        self.guard = threading.Lock()  # FakeDecoder.calls is a list: one append at a time
        self.two = threading.Event()

    def forward(self, input_ids, position_ids, bias, past):
        with self.guard:
            self.threads.add(threading.get_ident())
            if len(self.threads) > 1:
                self.two.set()
        self.two.wait(timeout=5)
        with self.guard:
            return super().forward(input_ids, position_ids, bias, past)


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("with_shared", [False, True])
def test_workers_decode_buckets_on_threads_with_the_same_samples(workers: int,
                                                                  with_shared: bool):
    """Several workers cut the jobs into at least that many buckets and decode them on
    threads of their own; every job's samples and the passes' totals are those of one
    worker."""
    codec = DEFAULT_CODEC
    sk = make_skeleton(codec)
    rng = np.random.default_rng(11)
    heads = [[EOS, *rng.integers(3, 11, n).tolist()] for n in (9, 4)]
    tails = [rng.integers(3, 11, rng.integers(1, 6)).tolist() + [SEP] for _ in range(7)]
    kw: dict = dict(num_samples=16, seed=3, stratified=True, exact_last=True)
    if with_shared:
        kw["shared"] = [heads[k % 2] for k in range(7)]
    else:
        tails = [[EOS, *t] for t in tails]
    one, many = DecodeStats(), DecodeStats()
    alone = sample_numbers(FakeDecoder(len(codec.all_tokens())), tails, sk, stats=one, **kw)
    dec = ThreadedDecoder(len(codec.all_tokens()))
    got = sample_numbers(dec, tails, sk, stats=many, workers=workers, **kw)
    for a, b in zip(alone, got, strict=True):
        np.testing.assert_array_equal(a, b)
    assert len(many.passes_per_batch) >= workers
    assert len(dec.threads) > 1  # the buckets ran on threads of their own
    assert many.prefixes == one.prefixes and many.shared_tokens == one.shared_tokens


def test_prefix_store_carries_caches_across_calls_and_drops_the_oldest():
    """A second call finds the prefixes the first one computed (same samples, no pass spent
    on them); past its byte budget the store drops the least recently used."""
    from laser_ci.predictors.decode import PrefixStore

    sk = make_skeleton()
    head = [EOS, 3, 4, 5, 6, 7]
    own = [[8, SEP], [9, 9, SEP]]
    store = PrefixStore()
    first, second = DecodeStats(), DecodeStats()
    a = sample_numbers(FakeDecoder(12), own, sk, shared=[head, head], prefix_store=store,
                       stats=first, num_samples=8)
    b = sample_numbers(FakeDecoder(12), own, sk, shared=[head, head], prefix_store=store,
                       stats=second, num_samples=8)
    assert first.prefixes == 1 and second.prefixes == 0 and store.hits == 1
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    one = sum(p.nbytes for p in store.entries[tuple(head)])
    small = PrefixStore(max_bytes=2 * one)
    for k in range(3):
        small.put((EOS, k), [np.zeros(one // 4, np.float32)])
    assert list(small.entries) == [(EOS, 1), (EOS, 2)] and small.bytes == 2 * one
    small.put((EOS, 9), [np.zeros(one, np.float32)])  # larger than the budget: not kept
    assert (EOS, 9) not in small.entries


def test_shared_prefixes_need_one_per_prompt():
    sk = make_skeleton()
    with pytest.raises(ValueError, match="one shared prefix per prompt"):
        sample_numbers(FakeDecoder(12), [[EOS, SEP]], sk, shared=[[EOS], [EOS]])


@pytest.mark.parametrize("codec", [SURE_CODEC, NumberCodec(min_exponent=9, max_exponent=10)])
def test_exact_last_when_the_last_digit_is_known(codec: NumberCodec):
    """exact_last with a codec whose exponent can force the last digit (SURE_CODEC after
    ``+0``, exponents 9..10 after ``1``): the branches that reach it with one legal token
    take it with their whole count. When every branch of a batch did, no job got a value
    ('index -1 is out of bounds for axis 0 with size 0'), and whether it failed depended
    on the other jobs in the batch."""
    sk = make_skeleton(codec)

    def sure(history, columns):  # sign "+", exponent's first digit "1", mantissa 1.11
        x = np.full(columns, -30.0)
        x[codec.all_tokens().index("1")] = 30.0
        x[codec.all_tokens().index("+")] = 30.0
        return x

    for fn in (sure, _fixed):
        ps = prompts(4, seed=1)
        got = sample_numbers(FakeDecoder(12, fn), ps, sk, num_samples=8, stratified=True,
                             exact_last=True)
        sampled = sample_numbers(FakeDecoder(12, fn), ps, sk, num_samples=8, stratified=True)
        for x, y in zip(got, sampled, strict=True):
            assert len(x) == 8 and np.all(np.diff(x) >= 0)
            for v in x:
                assert codec.from_string(codec.to_string(v)) == v
            if fn is sure:  # nothing left to draw: both ways give the one value
                np.testing.assert_array_equal(x, y)
        (alone,) = sample_numbers(FakeDecoder(12, fn), ps[:1], sk, num_samples=8,
                                  stratified=True, exact_last=True)
        np.testing.assert_array_equal(alone, got[0])
