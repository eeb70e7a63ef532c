"""Compare two decodings of kept fold models on their val parts (a choice made on training folds).

``laser-ci eval --folds K --lm-keep DIR`` keeps each fold's model in ``DIR/foldF``; fold
F's model was fine-tuned on the folds other than F and its val part ``(F + 1) % K``, which
picked its epoch and nothing else. This scores every fold model on its val part's
workflow runs twice, with decoding ``A`` and ``B`` (``laser.json`` ``decoding.sampling``,
the last digit kept whole as shipped), and prints the pooled log-MAE of each and their
paired difference with a 95% interval over repositories, per regime, so a decoding can be
picked without looking at the held-out folds.

    python benchmarks/val_decoding.py --folds-dir runs/cv_lm_sp_folds \\
        [--data ../shared/data/gha-runs] [--a stratified] [--b quantiles] [--samples 16]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.predictors.lm import SAMPLING, LaserModel  # noqa: E402
from laser_ci.training import metrics  # noqa: E402
from laser_ci.training.examples import load_examples  # noqa: E402
from laser_ci.training.folds import fold_of, inner_fold  # noqa: E402
from laser_ci.training.history import example_text, subset_of  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds-dir", required=True)
    ap.add_argument("--data", default="../shared/data/gha-runs")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--a", default="stratified", choices=SAMPLING)
    ap.add_argument("--b", default="quantiles", choices=SAMPLING)
    ap.add_argument("--samples", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    examples = [e for e in load_examples(args.data, history=True) if e.kind == "workflow"
                and e.runtime_s > 0]
    rows: dict[str, list] = {"truth": [], "repo": [], "subset": [], "a_prior": [],
                             "b_prior": [], "a_none": [], "b_none": []}
    for f in range(args.k):
        folder = Path(args.folds_dir) / f"fold{f}"
        val = [e for e in examples if fold_of(e.repo, args.k) == inner_fold(f, args.k)]
        rows["truth"] += [e.runtime_s for e in val]
        rows["repo"] += [e.repo for e in val]
        rows["subset"] += [subset_of(e) for e in val]
        for side in ("a", "b"):
            t = time.perf_counter()
            model = LaserModel(folder, sampling=getattr(args, side), exact_last=True,
                               band_scale={}, num_samples=args.samples, threads=args.threads)
            for regime in ("prior", "none"):
                preds = model.predict([example_text(e, regime) for e in val])
                rows[f"{side}_{regime}"] += [p.p50 for p in preds]
            print(f"fold {f}: {len(val)} val runs, {getattr(args, side)} "
                  f"{time.perf_counter() - t:.0f} s", file=sys.stderr)
    truth, repo = np.asarray(rows["truth"]), np.asarray(rows["repo"])
    subset = np.asarray(rows["subset"])
    print(f"A: {args.a}  B: {args.b}  (val parts of {args.folds_dir}, workflow runs)")
    print(f"{'regime':7s} {'subset':13s} {'n':>5s} {'A':>6s} {'B':>6s}  A - B [95%]")
    for regime in ("prior", "none"):
        a, b = np.asarray(rows[f"a_{regime}"]), np.asarray(rows[f"b_{regime}"])
        for name, pick in (("all", np.ones(len(truth), bool)),
                           ("warm", subset != "cold"), ("warm-changed", subset == "warm-changed"),
                           ("cold", subset == "cold")):
            if regime == "none" and name != "all":
                continue
            d = metrics.paired_log_mae_diff(a[pick], b[pick], truth[pick], repo[pick])
            print(f"{regime:7s} {name:13s} {int(pick.sum()):5d} "
                  f"{metrics.log_mae(a[pick], truth[pick]):6.3f} "
                  f"{metrics.log_mae(b[pick], truth[pick]):6.3f}  "
                  f"{metrics.format_diff(d)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
