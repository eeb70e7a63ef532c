"""Lever 4 as a teacher (issue #13): one fold's Gemma-3-270M LoRA model writes runtime
samples for unlabeled corpus versions of that fold's training repositories, and the shipped
small model's label-free base is trained on them, giving a base for that fold only
(:mod:`laser_ci.training.distill`). Then the shipped recipe fine-tunes it and scores the
fold exactly as it scores the label-free base (``benchmarks/one_fold.py --recipe shipped``),
so the two are paired on the same held-out runs:

    python benchmarks/distill_fold.py ../shared/data/gha-runs --teacher-base runs/gemma_base \\
        --teacher-keep runs/gemma_fix_folds --base runs/base_corpus/pretrained --fold 0 \\
        --texts 3000 --minutes 10 --out runs/distill_fold0
    python benchmarks/one_fold.py ../shared/data/gha-runs --recipe shipped \\
        --base runs/distill_fold0/base --fold 0 --minutes 6 --keep runs/distill_fold0/folds \\
        --predictions runs/distill_fold0.jsonl
    python benchmarks/paired_runs.py runs/distill_fold0.jsonl runs/small_fold0.jsonl

The teacher is the fold model ``one_fold.py --recipe gemma --keep TEACHER_KEEP`` kept (its
adapter), or with ``--teacher shipped`` the fold's undistilled small model, ``one_fold.py
--recipe shipped --base TEACHER_BASE --keep TEACHER_KEEP`` (self-distillation: the control
that says whether a gain is Gemma's knowledge or the corpus texts'). It is never trained
here: a missing one is an error. Its samples are written to
``OUT/teacher.jsonl`` and read again on a rerun; ``OUT/teacher.json`` records what they
were made for, and a rerun with other settings (another fold) is refused. ``--texts``:
corpus versions drawn (distinct texts, no labeled run's file or text, repositories of the
fold's training part only).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.training import distill  # noqa: E402
from laser_ci.training.baselines import fit_tabular  # noqa: E402
from laser_ci.training.crossval import LMRecipe  # noqa: E402
from laser_ci.training.folds import fold_of, fold_parts, inner_fold  # noqa: E402
from laser_ci.training.pretrained import ADAPTER_DIR, LoraSettings, PretrainedRecipe  # noqa: E402
from laser_ci.training.train import PRETRAIN_MARKER  # noqa: E402


def teacher_folder(recipe: str, keep: Path, fold: int) -> Path:
    """What the teacher's fold model is read from: its kept adapter (gemma) or its kept fold
    model's laser.json (shipped)."""
    from laser_ci.predictors.lm import CONFIG_NAME

    return keep / f"fold{fold}" / (ADAPTER_DIR if recipe == "gemma" else CONFIG_NAME)


def teacher_model(args: argparse.Namespace, say: Callable[[str], None]) -> Any:
    """The teacher's recipe, reusing its kept fold model; its samples raw (no band scales:
    they are what the student learns, as Gemma's are)."""
    if args.teacher == "gemma":
        return PretrainedRecipe(Path(args.teacher_base), LoraSettings(device=args.device),
                                reuse=True, keep=Path(args.teacher_keep),
                                calibration_examples=0, num_samples=args.samples, log=say)
    # one_fold.py --recipe shipped's settings, so that its kept fold model is reused
    return LMRecipe(Path(args.teacher_base), keep=Path(args.teacher_keep), threads=2,
                    prompt_lines=True, layout="shared-prefix", reuse=True, exact_last=True,
                    samples=args.samples)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_dir")
    ap.add_argument("--teacher", choices=["gemma", "shipped"], default="gemma",
                    help="the teacher's recipe (one_fold.py --recipe)")
    ap.add_argument("--teacher-base", required=True,
                    help="the Gemma transformers folder, or for a shipped teacher the "
                         "label-free base its fold model was fine-tuned from")
    ap.add_argument("--teacher-keep", required=True, help="one_fold.py's --keep of the teacher")
    ap.add_argument("--base", required=True, help="the small model's label-free base")
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--texts", type=int, default=3000)
    ap.add_argument("--samples", type=int, default=4, help="teacher samples per text")
    ap.add_argument("--minutes", type=float, default=10.0, help="training time limit")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--oof-references", action="store_true",
                    help="corpus texts' references out of fold, as the labeled texts' are "
                         "(default: the fold's tabular model, fit on their repositories)")
    ap.add_argument("--device", default="cpu",
                    help="where the teacher decodes and the student trains (cuda on a GPU)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    from laser_ci.training.baselines import text_features
    from laser_ci.training.examples import load_examples

    t0 = time.time()

    def say(line: str) -> None:
        print(f"[{time.time() - t0:7.0f}s] {line}", flush=True)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    f, k = args.fold, args.folds
    inner = inner_fold(f, k)
    examples = load_examples(args.data_dir, history=True)
    folds = [fold_of(e.repo, k) for e in examples]
    train, val = fold_parts(examples, folds, f, k)
    feats = text_features(examples)
    tabular = fit_tabular(train, val, feats)
    say(f"fold {f}: {len(train)} training and {len(val)} val examples; tabular fit")

    rows_file, about_file = out / "teacher.jsonl", out / "teacher.json"
    # what the rows were made for: another fold's rows carry references fit on this fold
    kept = teacher_folder(args.teacher, Path(args.teacher_keep), f)
    about = {"fold": f, "folds": k, "seed": args.seed, "texts": args.texts,
             "samples": args.samples, "teacher_base": args.teacher_base,
             **({"adapter": str(kept)} if args.teacher == "gemma"
                else {"teacher": args.teacher, "model": str(kept)}),
             **({"references": "out of fold"} if args.oof_references else {})}
    if rows_file.is_file():
        made = json.loads(about_file.read_text(encoding="utf-8")) if about_file.is_file() else {}
        if made != about:
            raise SystemExit(f"{rows_file}: made for {made or 'unknown settings'}, not {about}; "
                             "use another --out")
        rows = distill.read_rows(rows_file)
        say(f"read {len(rows)} teacher rows from {rows_file}")
    else:
        if not kept.exists():
            raise SystemExit(f"{kept}: no kept teacher (benchmarks/one_fold.py --recipe "
                             f"{args.teacher} --keep {args.teacher_keep} --fold {f})")
        texts = distill.corpus_texts_for(
            args.data_dir, lambda repo: fold_of(repo, k) not in (f, inner),
            max_texts=args.texts, seed=args.seed, exclude_texts={e.text for e in examples})
        say(f"{len(texts)} corpus texts of {len({t.repo for t in texts})} training repositories")
        model = teacher_model(args, say).fit(train, val, f, k=k, tabular=tabular, feats=feats)
        if args.oof_references:
            refs_c = distill.corpus_references(texts, [*train, *val], k,
                                               tabular.info["params"], feats)
            texts = [t for t, r in zip(texts, refs_c, strict=True) if r is not None]
            model.reference_model = distill.FixedReferences(
                {t.text: r for t, r in zip(texts, [r for r in refs_c if r is not None],
                                           strict=True)})
            say(f"out-of-fold references for {len(texts)} corpus texts")
        rows = distill.teacher_targets(model, texts, log=say)
        distill.write_rows(rows_file, rows)
        about_file.write_text(json.dumps(about, indent=2) + "\n", encoding="utf-8")
        say(f"wrote {rows_file}")

    targets = distill.distilled_texts(rows)
    recipe = LMRecipe(Path(args.base), threads=2, minutes=args.minutes, prompt_lines=True,
                      layout="shared-prefix", device=args.device)
    cfg = replace(recipe.cfg, epochs=args.epochs, patience=args.epochs, select_on="number_loss",
                  seed=args.seed)
    refs = recipe.references(train, val, tabular, k=k, feats=feats)
    marker = distill.fold_marker(
        json.loads((Path(args.base) / PRETRAIN_MARKER).read_text(encoding="utf-8")),
        fold=f, folds=k, teacher={"recipe": args.teacher, "base": args.teacher_base,
                                  "adapter" if args.teacher == "gemma" else "model": str(kept),
                                  "samples_per_text": args.samples},
        texts=len(rows), targets=len(targets))
    say(f"training {args.base} on {len(targets)} teacher targets ({args.minutes} min)")
    log = distill.distill_base(args.base, targets, val, out / "base", cfg, references=refs,
                               reference_model=tabular, marker=marker, device=args.device)
    hist = log["finetune"]["history"]
    say(f"wrote {out / 'base'}: {log['finetune']['steps']} steps, val number loss "
        f"{[round(h['number_loss'], 3) for h in hist]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
