"""The figures the model card quotes of distillation's teacher rows (``OUT/teacher.jsonl`` of
``benchmarks/distill_fold.py``) and of the corpus they were drawn from:

    python benchmarks/teacher_rows.py runs/distill_fold0/teacher.jsonl
    python benchmarks/teacher_rows.py runs/distill_oof_fold0/teacher.jsonl \\
        --against runs/distill_fold0/teacher.jsonl
    python benchmarks/teacher_rows.py --data ../shared/data/gha-runs --fold 0 --fold 1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.training import distill  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows", nargs="?")
    ap.add_argument("--against", help="rows of the same texts with other references")
    ap.add_argument("--data", help="count the corpus versions instead")
    ap.add_argument("--fold", type=int, action="append", default=[])
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args(argv)
    if args.data:
        from laser_ci.training.examples import load_corpus, load_runs
        from laser_ci.training.folds import fold_of, inner_fold

        used = distill.labeled_blobs(load_runs(args.data))
        corpus = load_corpus(args.data)
        blobs = {str(r["blob"]) for r in corpus}
        print(f"corpus: {len(blobs)} distinct versions, {len(blobs & used)} run by a labeled "
              f"run, {len(blobs - used)} not")
        for f in args.fold:
            skip = (f, inner_fold(f, args.folds))
            n = len({str(r["blob"]) for r in corpus
                     if fold_of(str(r["repo"]), args.folds) not in skip
                     and str(r["blob"]) not in used})
            print(f"fold {f}: {n} unused versions in its training repositories")
        return 0
    rows = distill.read_rows(args.rows)
    ratio = np.array([np.log(np.median(r["samples"]) / r["reference"]) for r in rows
                      if r["reference"]])
    spread = np.array([r["samples"][-1] / r["samples"][0] for r in rows if r["samples"][0] > 0])
    print(f"{args.rows}: {len(rows)} texts of {len({r['repo'] for r in rows})} repositories; "
          f"log(teacher median / reference) mean {ratio.mean():+.3f} sd {ratio.std():.3f}; "
          f"highest / lowest sample, median {np.median(spread):.1f}x")
    if args.against:
        other = {r["blob"]: r for r in distill.read_rows(args.against)}
        both = [(r, other[r["blob"]]) for r in rows if r["blob"] in other]
        ref = np.array([abs(np.log(a["reference"] / b["reference"])) for a, b in both])
        med = np.array([abs(np.log(np.median(a["samples"]) / np.median(b["samples"])))
                        for a, b in both])
        print(f"against {args.against}: {len(both)} shared texts; reference differs by a "
              f"median |log| {np.median(ref):.2f} ({np.exp(np.median(ref)):.2f}x); teacher "
              f"median moves by a mean |log| {med.mean():.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
