"""Constrained, prefix-filled decoding against naive decoding, on the same jobs.

    python benchmarks/decoding.py --model model/lm [--data DIR] [--jobs 100] [--samples 32]
        [--batch-jobs N] [--batch-check 30]

Prints, per variant, the wall time for the jobs, the latency per job, the forward passes,
the share of samples that parse, and the speedup over naive decoding:

* ``naive``: every output token (JSON skeleton included) sampled from the full vocabulary,
  one forward pass per token until ``<eos>``, on the full-vocabulary graph
  (``model.full.onnx``, last position only); the prompt is encoded once per job and its KV
  cache copied to one row per sample, as ``generate`` does.
* ``constrained + tree attention`` (shipped): the constrained prefix-filled loop
  (:func:`laser_ci.predictors.decode.sample_numbers`) on the shipped graph (digit and sign columns).

Both decode the same number of jobs side by side: the model's (``--batch-jobs``; one for an
int8 graph, so that no job's prediction depends on another's).

Then the end-to-end figure the CLI pays: model load (with the sha256 checks) + prediction for
the jobs, cold, as ``laser-ci estimate`` does. Last, how much a job's samples depend on the
rest of its batch (``--batch-check N``: the first N jobs predicted alone and in the batch of
all jobs; the int8 graph quantizes activations with one scale per batch). Needs only
numpy + onnxruntime + tokenizers.
Jobs: the validation split's ``job`` examples of ``--data`` (the first ``--jobs``), or
synthetic texts without ``--data``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # naive_decoding.py beside it

from naive_decoding import sample_naive  # noqa: E402

from laser_ci.predictors.decode import DecodeStats, OnnxDecoder, sample_numbers  # noqa: E402
from laser_ci.predictors.lm import LaserModel, make_session  # noqa: E402


def job_texts(data: str | None, n: int, kind: str) -> list[str]:
    if data:
        from laser_ci.training.examples import load_examples

        texts = [e.text for e in load_examples(data, split="val") if e.kind == kind]
        if len(set(texts)) < n:
            texts += [e.text for e in load_examples(data, split="train") if e.kind == kind]
        return list(dict.fromkeys(texts))[:n]  # distinct jobs
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        steps = "".join(f"- name: step {k}\n  run: make target-{rng.integers(100)}\n"
                        for k in range(int(rng.integers(2, 20))))
        out.append(f"task: {kind}\nworkflow: CI\njob: build-{i}\nruns-on: ubuntu-latest\n"
                   f"steps:\n{steps}")
    return out


def run_variant(name, fn, repeat):
    times = []
    stats = None
    result = None
    for _ in range(repeat):
        stats = DecodeStats()
        t = time.perf_counter()
        result = fn(stats)
        times.append(time.perf_counter() - t)
    return name, min(times), statistics.median(times), stats, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="model/lm")
    ap.add_argument("--full", default=None, help="full-vocabulary graph (default MODEL/model.full.onnx)")
    ap.add_argument("--data", default=os.environ.get("LASER_CI_DATA"))
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--kind", default="job", choices=["job", "workflow"])
    ap.add_argument("--samples", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-naive", action="store_true")
    ap.add_argument("--batch-jobs", type=int, default=None,
                    help="jobs decoded side by side (default: the model's; int8: 1)")
    ap.add_argument("--batch-check", type=int, default=30,
                    help="jobs predicted alone to compare with the batch (0: skip)")
    args = ap.parse_args()

    model_dir = Path(args.model)
    texts = job_texts(args.data, args.jobs, args.kind)
    # cold end-to-end first (what `laser-ci estimate` pays): load + sha256 + predict
    t0 = time.perf_counter()
    lm = LaserModel(model_dir, threads=args.threads, num_samples=args.samples,
                    batch_jobs=args.batch_jobs)
    t_load = time.perf_counter() - t0
    lm.predict(texts)
    t_e2e = time.perf_counter() - t0
    n = lm.num_samples
    prompts = lm.prompt.encode_texts(texts)
    lengths = [len(p) for p in prompts]
    print(f"model: {model_dir}  params: {lm.config['model']['parameters']:,}  "
          f"size: {(model_dir / 'model.onnx').stat().st_size / 1e6:.1f} MB  "
          f"threads: {args.threads}")
    print(f"jobs: {len(texts)} ({args.kind}, {len(set(texts))} distinct)  samples/job: {n} "
          f"({lm.sampling})  jobs per batch: {lm.batch_jobs}  prompt tokens: mean "
          f"{np.mean(lengths):.0f}, max {max(lengths)} "
          f"(budget {lm.prompt.max_prompt_tokens})")
    print(f"end to end (cold): load {t_load:.2f} s + predict = {t_e2e:.2f} s "
          f"for {len(texts)} jobs  [target < 1.5 s for 100 jobs]")
    print()

    def constrained(model):
        def fn(stats):
            return sample_numbers(model.decoder, prompts, model.skeleton, num_samples=n,
                                  seed=0, pad_id=model.prompt.pad_id, stats=stats,
                                  stratified=model.sampling == "stratified",
                                  max_batch_jobs=model.batch_jobs)
        return fn

    variants = [run_variant("constrained + tree attention", constrained(lm), args.repeat)]
    full_path = Path(args.full) if args.full else model_dir / "model.full.onnx"
    if full_path.is_file() and not args.skip_naive:
        full = OnnxDecoder(make_session(full_path, args.threads))

        def naive(stats):
            def parse(ids):
                return lm.codec.parse(lm.prompt.decode_output(ids))

            return sample_naive(full, prompts, parse=parse, eos_id=lm.prompt.eos_id,
                                max_new_tokens=24, num_samples=n, seed=0,
                                pad_id=lm.prompt.pad_id, stats=stats,
                                max_batch_jobs=lm.batch_jobs)

        variants.append(run_variant("naive (full head, 1 token/pass)", naive, args.repeat))
    elif not full_path.is_file():
        print(f"(no {full_path}: export with full_vocab_graph=True for the naive comparison)")

    base = next((v for v in variants if v[0].startswith("naive")), None)
    print(f"{'variant':34} {'best s':>7} {'median s':>8} {'ms/job':>7} {'passes':>6} "
          f"{'rows/step':>9} {'valid':>6} {'speedup':>8} {'less time':>9}")
    for name, best, med, stats, result in variants:
        total = sum(len(r) for r in result)
        valid = sum(int(np.isfinite(r).sum()) for r in result)
        steps = max(stats.forward_passes - stats.batches, 1)
        speed = f"{base[1] / best:.2f}x" if base else "-"
        less = f"{100 * (1 - best / base[1]):.0f}%" if base else "-"
        print(f"{name:34} {best:7.3f} {med:8.3f} {1000 * best / len(texts):7.1f} "
              f"{stats.forward_passes:6d} {stats.step_rows / steps:9.0f} "
              f"{100 * valid / max(total, 1):5.1f}% {speed:>8} {less:>9}")
    if base:
        res = dict(zip([v[0] for v in variants], [v[4] for v in variants], strict=True))
        a = np.array([np.nanmedian(r) for r in res["constrained + tree attention"]])
        b = np.array([np.nanmedian(r) if np.isfinite(r).any() else np.nan for r in base[4]])
        ok = np.isfinite(b)
        if ok.any():
            print(f"\nmedian |log(constrained p50 / naive p50)| over jobs with a valid naive "
                  f"sample: {np.nanmedian(np.abs(np.log(a[ok] / b[ok]))):.3f}")

    if args.batch_check:
        batch_dependence(lm, texts, args.batch_check)


def batch_dependence(lm: LaserModel, texts: list[str], n: int) -> None:
    """Samples of the first ``n`` jobs, alone against in the batch of all ``texts``."""
    from collections import Counter

    together = lm.sample(texts)
    differ, shift = [], []
    for i, text in enumerate(texts[:n]):
        alone = lm.sample([text])[0]
        same = sum((Counter(alone.tolist()) & Counter(together[i].tolist())).values())
        differ.append(1 - same / len(alone))
        shift.append(abs(np.log(np.median(alone) / np.median(together[i]))))
    print(f"\nbatch dependence ({len(differ)} jobs alone vs in the batch of {len(texts)}): "
          f"{100 * np.mean(differ):.0f}% of samples differ; median moves by "
          f"{100 * (np.exp(np.mean(shift)) - 1):.1f}% on average (geometric), "
          f"{100 * (np.exp(np.max(shift)) - 1):.0f}% at most")


if __name__ == "__main__":
    main()
