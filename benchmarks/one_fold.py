"""One fold of the cross-validation for a language-model recipe that is too slow for five:
lever 4 (Gemma-3-270M, a registry package's pretrained base, LoRA-fine-tuned on the CPU with
the shipped prompts: :mod:`laser_ci.training.pretrained`) or, to pair it with, the shipped
recipe (:class:`laser_ci.training.crossval.LMRecipe` as the model card runs it), scored on
one held-out fold beside ``tabular`` and ``history-median``.

The fold is ``laser-ci eval --folds 5``'s (``crossval.score_fold``): the same repositories
held out, the same inner val fold, the same out-of-fold tabular references in the training
texts, the fold's own tabular model as the reference at inference, decoded by the shipped
loop (16 stratified samples, the last digit whole), band scales fit on the val part
(``--calibration`` examples of it for Gemma, all of it for the shipped recipe). It writes
``--predictions`` in ``eval --predictions``' format (``laser-gemma`` or ``laser-lm`` beside
the baselines), for ``benchmarks/paired_runs.py``, and with ``--errors`` its errors-only
form (:mod:`laser_ci.training.scored`), which is kept in ``benchmarks/folds/``:

    python benchmarks/one_fold.py ../shared/data/gha-runs --recipe gemma --base runs/gemma_base \\
        --fold 0 --minutes 50 --keep runs/gemma_folds --predictions runs/gemma_fold0.jsonl
    python benchmarks/one_fold.py ../shared/data/gha-runs --recipe shipped \\
        --base runs/base_corpus/pretrained --fold 0 --minutes 6 --keep runs/small_folds \\
        --predictions runs/small_fold0.jsonl

``--recipe shipped`` alone is the small model's recipe as the distillation runs ran it (the
median of earlier runs as the warm reference, bands fit on val); the shipped model's own
recipe (model card, lever 6) adds ``--warm-anchor recent --shrink --epochs 1``.

``--base``: for ``gemma``, the GGUF dequantized and saved as a transformers folder (the
loading recipe of ``../shared/docs/pretrained-models.md``); for ``shipped``, the label-free
base of ``laser-ci train --pretrain-only`` (the model card's command). ``--reuse`` scores a
kept fold model again. ``--sample N`` scores N held-out runs only (a smoke run).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.training import metrics  # noqa: E402
from laser_ci.training.crossval import (  # noqa: E402
    LM_NAME,
    FoldWork,
    LMRecipe,
    score_fold,
    write_predictions,
)
from laser_ci.training.folds import fold_of  # noqa: E402
from laser_ci.training.history import subset_of  # noqa: E402
from laser_ci.training.pretrained import LoraSettings, PretrainedRecipe  # noqa: E402
from laser_ci.training.scored import ScoredError, write_errors  # noqa: E402

BASELINES = ["tabular", "history-median"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_dir")
    ap.add_argument("--recipe", choices=["gemma", "shipped"], default="gemma")
    ap.add_argument("--base", required=True)
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--kind", default="workflow", choices=["workflow", "job"])
    ap.add_argument("--minutes", type=float, default=50.0, help="fine-tuning time limit")
    ap.add_argument("--max-steps", type=int, default=None)
    ap.add_argument("--epochs", type=int, default=None,
                    help="shipped recipe: fine-tune this many epochs (the shipped model: 1) "
                         "instead of the recipe's default, within --minutes")
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--lr", type=float, default=4e-4)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--device", default="cpu",
                    help="where to fine-tune (cuda on a GPU machine); gemma also decodes "
                         "there (the shipped recipe decodes its int8 ONNX graph on the CPU)")
    ap.add_argument("--calibration", type=int, default=300,
                    help="val examples the band scales are fit on")
    ap.add_argument("--warm-anchor", choices=["median", "recent"], default="median",
                    help="shipped recipe: the history figure a warm ratio is over (the "
                         "shipped model's is recent; median as the distillation runs ran)")
    ap.add_argument("--shrink", action="store_true",
                    help="shipped recipe: shrink each regime's median toward its reference, "
                         "fit on the val part (the shipped model's decoding)")
    ap.add_argument("--keep", default=None)
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--sample", type=int, default=None, help="score this many held-out runs")
    ap.add_argument("--predictions", required=True)
    ap.add_argument("--errors", default=None,
                    help="also write the predictions' errors-only form here, which can be "
                         "committed and pooled with other sessions' folds "
                         "(benchmarks/keep_errors.py)")
    args = ap.parse_args(argv)
    if args.errors and Path(args.errors).resolve() == Path(args.predictions).resolve():
        ap.error("--errors must not be the --predictions file")  # known before the fold runs

    from laser_ci.training.baselines import text_features
    from laser_ci.training.examples import load_examples

    t0 = time.time()

    def say(line: str) -> None:
        print(f"[{time.time() - t0:7.0f}s] {line}", flush=True)

    examples = load_examples(args.data_dir, history=True)
    k, f = args.folds, args.fold
    folds = [fold_of(e.repo, k) for e in examples]
    scored = [i for i, e in enumerate(examples) if e.kind == args.kind and folds[i] == f]
    if args.sample is not None:
        scored = sorted(random.Random(0).sample(scored, min(args.sample, len(scored))))
    say(f"{len(examples)} examples; fold {f}: {len(scored)} {args.kind} runs scored")
    keep = Path(args.keep) if args.keep else None
    recipe: LMRecipe | PretrainedRecipe
    if args.recipe == "gemma":
        recipe = PretrainedRecipe(
            Path(args.base),
            LoraSettings(rank=args.rank, alpha=2 * args.rank, lr=args.lr,
                         batch_size=args.batch_size, minutes=args.minutes,
                         max_steps=args.max_steps, device=args.device),
            keep=keep, reuse=args.reuse, calibration_examples=args.calibration, log=say)
        lm_name = "laser-gemma"
    else:  # the model card's cross-validated recipe
        recipe = LMRecipe(Path(args.base), keep=keep, threads=2, minutes=args.minutes,
                          epochs=args.epochs,
                          device=args.device,
                          prompt_lines=True, layout="shared-prefix", reuse=args.reuse,
                          exact_last=True, calibrate_bands=True,
                          warm_anchor=args.warm_anchor, shrink=args.shrink)
        lm_name = LM_NAME
    work = FoldWork(examples, folds, scored, k, [*BASELINES, LM_NAME], "prior", recipe,
                    text_features(examples), False, None)
    record, held, preds = score_fold(work, f)
    say(f"fold done: {json.dumps(record['seconds'])}")
    test = [examples[scored[j]] for j in held]
    preds = {lm_name if name == LM_NAME else name: pc for name, pc in preds.items()}
    write_predictions(args.predictions, test, {n: p for n, (p, _) in preds.items()},
                      {n: c for n, (_, c) in preds.items()})
    truth = [e.runtime_s for e in test]
    subsets = [subset_of(e) for e in test]
    print(f"\nfold {f}, {len(test)} {args.kind} runs, log-MAE (all runs):")
    print(f"{'predictor':16} {'cold (none)':>12} {'warm':>8} {'changed':>8} {'cov warm':>9}")
    for name, (prior, cold) in preds.items():
        warm = [i for i, s in enumerate(subsets) if s != "cold"]
        changed = [i for i, s in enumerate(subsets) if s == "warm-changed"]

        def mae(rows: list, idx: list[int]) -> float:
            return metrics.log_mae([rows[i].p50 for i in idx], [truth[i] for i in idx]) \
                if idx else float("nan")

        cov = sum(prior[i].p10 <= truth[i] <= prior[i].p90 for i in warm) / max(len(warm), 1)
        print(f"{name:16} {mae(cold, list(range(len(test)))):12.3f} "
              f"{mae(prior, warm):8.3f} {mae(prior, changed):8.3f} {cov:9.1%}")
    if args.errors:
        try:
            write_errors(args.predictions, args.errors, [lm_name, *BASELINES])
        except ScoredError as exc:  # the predictions are written: keep_errors.py can retry
            print(f"error: {exc}", file=sys.stderr)
            return 1
    print(f"wrote {args.predictions}" + (f" and {args.errors}" if args.errors else "")
          + f"; total {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
