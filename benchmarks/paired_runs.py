"""Two cross-validation runs on the same folder, compared example by example.

``laser-ci eval DATA --folds 5 ... --predictions A.jsonl`` writes every scored example's
predictions; this script pairs two such files, or their errors-only forms
(``benchmarks/scored.py``; plain or ``.gz``, the same examples, by ``key``) and prints
the log-MAE of each and their difference with a 95% interval from resampling repositories
(:func:`laser_ci.training.metrics.paired_error_diff`), for every regime, subset and
conclusion set, as the CV report's ``paired`` block does for predictors of one run. Use it
to compare two recipes of one predictor (another decoding, prompt or training set).

    python benchmarks/paired_runs.py A.jsonl B.jsonl [--a laser-lm] [--b laser-lm]
        [--fold F [--folds K]] [--markdown]

``--fold F``: only the runs of fold F's repositories (:func:`laser_ci.evaluation.folds.fold_of`),
for a recipe run on one fold with the other folds' models reused.

Folds run in different sessions pool by concatenation, their kept errors files included:
``zcat benchmarks/folds/gemma_fold*.jsonl.gz > runs/gemma_folds.jsonl``, then this script on
that file twice (``--a laser-gemma --b tabular``); the intervals resample the repositories
of every fold together. An errors file resamples repositories by digest, a predictions
file by name: the same n, log-MAE, differences and coverage, intervals that differ by the
bootstrap's draw (a predictions file gives the figures it gave before errors files were
kept).

Negative differences: ``A`` is better. A difference whose interval spans zero is a tie.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # scored.py beside it

import numpy as np  # noqa: E402
from scored import Scored, ScoredError  # noqa: E402
from scored import load as load_scored  # noqa: E402

from laser_ci.training import metrics  # noqa: E402

REGIMES = ("prior", "none")
SUBSETS = ("all", "warm", "warm-changed", "cold")  # warm includes warm-changed


def load(path: str, predictor: str | None) -> dict[str, Scored]:
    try:
        return load_scored(path, predictor)
    except ScoredError as exc:
        raise SystemExit(str(exc)) from None


def only_fold(rows: dict[str, Scored], fold: int, k: int) -> dict[str, Scored]:
    """The rows of fold ``fold``'s repositories (of ``k``)."""
    try:
        return {key: r for key, r in rows.items() if r.fold(k) == fold}
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def in_subset(row: Scored, subset: str) -> bool:
    if subset == "all":
        return True
    if subset == "warm":
        return row.subset in ("warm", "warm-changed")
    return row.subset == subset


def compare(a: dict[str, Scored], b: dict[str, Scored]) -> list[dict]:
    keys = sorted(set(a) & set(b), key=lambda k: a[k].order)
    if len(keys) != len(a) or len(keys) != len(b):
        raise SystemExit(f"the runs scored other examples ({len(a)} and {len(b)}, "
                         f"{len(keys)} in common)")
    out = []
    for regime in REGIMES:
        for subset in SUBSETS:
            if regime == "none" and subset == "cold":
                continue  # the same texts as the prior regime's cold
            for runs in ("success", "all"):
                idx = [k for k in keys if in_subset(a[k], subset)
                       and (runs == "all" or a[k].conclusion == "success")]
                if not idx:
                    continue
                ea = [a[k].errors[regime][0] for k in idx]
                eb = [b[k].errors[regime][0] for k in idx]
                res = metrics.paired_error_diff(ea, eb, [a[k].repo for k in idx])
                out.append({"regime": regime, "subset": subset, "runs": runs, "n": len(idx),
                            "a": float(np.mean(ea)), "b": float(np.mean(eb)),
                            "cov_a": _coverage(a, idx, regime), "cov_b": _coverage(b, idx, regime),
                            **res})
    return out


def _coverage(rows: dict[str, Scored], idx: list[str], regime: str) -> float:
    return float(np.mean([rows[k].errors[regime][1] for k in idx]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--a", dest="pa", default=None, help="predictor of A [its only one]")
    ap.add_argument("--b", dest="pb", default=None, help="predictor of B [its only one]")
    ap.add_argument("--fold", type=int, default=None, help="only this fold's repositories")
    ap.add_argument("--folds", type=int, default=5, help="K of --fold [5]")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    a, b = load(args.a, args.pa), load(args.b, args.pb)
    if args.fold is not None:
        a, b = only_fold(a, args.fold, args.folds), only_fold(b, args.fold, args.folds)
    rows = compare(a, b)
    head = ["regime", "subset", "runs", "n", "A", "B", "A - B [95%]", "p10-p90 cover A / B"]
    lines = [head]
    for r in rows:
        lines.append([r["regime"], r["subset"], r["runs"], str(r["n"]), f"{r['a']:.3f}",
                      f"{r['b']:.3f}", metrics.format_diff(r),
                      f"{r['cov_a']:.1%} / {r['cov_b']:.1%}"])
    print(f"A: {args.a}" + (f" ({args.pa})" if args.pa else ""))
    print(f"B: {args.b}" + (f" ({args.pb})" if args.pb else ""))
    if args.fold is not None:
        print(f"fold {args.fold} of {args.folds} only")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in lines[1:]:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
        for row in lines:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
