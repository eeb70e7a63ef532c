"""A predictions file as its errors-only form, which can be committed: per example and
regime, the p50's log error and whether the p10-p90 band held the truth, the repository
and example by digest (:func:`laser_ci.training.scored.write_errors`, which says what it
keeps and what it refuses). ``benchmarks/paired_runs.py`` pairs and pools it.

    python benchmarks/keep_errors.py runs/gemma_fix_fold3.jsonl \\
        benchmarks/folds/gemma_fold3.jsonl.gz --predictor laser-gemma \\
        --predictor tabular --predictor history-median
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.training.scored import ScoredError, write_errors  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("predictions")
    ap.add_argument("out", help="the errors file (.gz: compressed)")
    ap.add_argument("--predictor", action="append", required=True,
                    help="a predictor to keep (repeat for more)")
    args = ap.parse_args(argv)
    try:
        n = write_errors(args.predictions, args.out, args.predictor)
    except ScoredError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}: {n} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
