"""Two cross-validation runs on the same folder, compared example by example.

``laser-ci eval DATA --folds 5 ... --predictions A.jsonl`` writes every scored example's
predictions; this script pairs two such files (the same examples, by ``key``) and prints
the log-MAE of each and their difference with a 95% interval from resampling repositories
(:func:`laser_ci.training.metrics.paired_log_mae_diff`), for every regime, subset and
conclusion set, as the CV report's ``paired`` block does for predictors of one run. Use it
to compare two recipes of one predictor (another decoding, prompt or training set).

    python benchmarks/paired_runs.py A.jsonl B.jsonl [--a laser-lm] [--b laser-lm]
        [--fold F [--folds K]] [--markdown]

``--fold F``: only the runs of fold F's repositories (:func:`laser_ci.training.folds.fold_of`),
for a recipe run on one fold with the other folds' models reused.

Negative differences: ``A`` is better. A difference whose interval spans zero is a tie.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.training import metrics  # noqa: E402
from laser_ci.training.folds import fold_of  # noqa: E402

REGIMES = ("prior", "none")
SUBSETS = ("all", "warm", "warm-changed", "cold")  # warm includes warm-changed


def load(path: str, predictor: str | None) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    names: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            names.add(row["predictor"])
            if predictor is None or row["predictor"] == predictor:
                rows[row["key"]] = row
    if predictor is None and len(names) > 1:
        raise SystemExit(f"{path} holds {', '.join(sorted(names))}: pick one with --a/--b")
    if not rows:
        raise SystemExit(f"{path}: no predictions of {predictor}")
    return rows


def only_fold(rows: dict[str, dict], fold: int, k: int) -> dict[str, dict]:
    """The rows of fold ``fold``'s repositories (of ``k``)."""
    return {key: r for key, r in rows.items() if fold_of(r["repo"], k) == fold}


def in_subset(row: dict, subset: str) -> bool:
    if subset == "all":
        return True
    if subset == "warm":
        return row["subset"] in ("warm", "warm-changed")
    return row["subset"] == subset


def compare(a: dict[str, dict], b: dict[str, dict]) -> list[dict]:
    keys = sorted(set(a) & set(b))
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
                       and (runs == "all" or a[k]["conclusion"] == "success")]
                if not idx:
                    continue
                true = [a[k]["runtime_s"] for k in idx]
                pa = [a[k][regime][1] for k in idx]
                pb = [b[k][regime][1] for k in idx]
                res = metrics.paired_log_mae_diff(pa, pb, true, [a[k]["repo"] for k in idx])
                out.append({"regime": regime, "subset": subset, "runs": runs, "n": len(idx),
                            "a": metrics.log_mae(pa, true), "b": metrics.log_mae(pb, true),
                            "cov_a": _coverage(a, idx, regime), "cov_b": _coverage(b, idx, regime),
                            **res})
    return out


def _coverage(rows: dict[str, dict], idx: list[str], regime: str) -> float:
    return metrics.coverage([rows[k][regime][0] for k in idx], [rows[k][regime][2] for k in idx],
                            [rows[k]["runtime_s"] for k in idx])


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
