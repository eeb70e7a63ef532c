"""Naive decoding, the baseline ``benchmarks/decoding.py`` compares the shipped constrained
loop (:func:`laser_ci.predictors.decode.sample_numbers`) with: unconstrained sampling over
the full vocabulary, one token per forward pass. Not used by laser-ci itself."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.predictors.decode import (  # noqa: E402
    Decoder,
    DecodeStats,
    buckets,
    causal_bias,
    job_rng,
    left_pad,
    padding_bias,
)


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
    max_batch_tokens: int = 8192,
    max_batch_jobs: int = 64,
    stats: DecodeStats | None = None,
) -> list[np.ndarray]:
    """Unconstrained sampling over the full vocabulary, one token per forward pass.

    ``decoder`` must have full-vocabulary logits (``model.full.onnx``). The prompt's KV
    cache is computed once per job and copied for its samples (as ``generate`` with
    ``num_return_sequences`` does after prefill). ``parse(ids)`` turns the generated ids
    (without ``<eos>``) into a value or raises ``ValueError`` (counted in ``stats.invalid``;
    the sample is NaN).
    """
    results: list[np.ndarray] = [np.empty(0)] * len(prompts)
    for bucket in buckets([len(p) for p in prompts], max_batch_tokens, max_batch_jobs):
        st = DecodeStats(batches=1)
        ids, mask = left_pad([prompts[i] for i in bucket], pad_id)
        pos = np.maximum(np.cumsum(mask, axis=1) - 1, 0)
        logits, past = decoder.forward(ids, pos, causal_bias(mask), decoder.empty_past(len(ids)))
        st.forward_passes += 1
        st.prefill_tokens += ids.size
        rngs = [job_rng(seed, prompts[i]) for i in bucket]
        n = num_samples
        past = [np.repeat(x, n, axis=0) for x in past]
        mask = np.repeat(mask, n, axis=0)
        seen = mask.sum(axis=1)
        logits = np.repeat(logits[:, -1, :], n, axis=0)
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
            mask = np.concatenate([mask, np.ones((len(out), 1), dtype=np.int64)], axis=1)
            logits, past = decoder.forward(nxt[:, None], seen[:, None], padding_bias(mask), past)
            logits = logits[:, -1, :]
            seen = seen + 1
            st.forward_passes += 1
            st.step_rows += len(out)
            st.step_tokens += len(out)
        for k, i in enumerate(bucket):
            vals = []
            for r in range(k * n, (k + 1) * n):
                try:
                    vals.append(parse(out[r]))
                except ValueError:
                    vals.append(np.nan)
                    st.invalid += 1
            results[i] = np.sort(np.asarray(vals, dtype=np.float64))
        st.passes_per_batch.append(st.forward_passes)
        if stats is not None:
            stats.add(st)
    return results
