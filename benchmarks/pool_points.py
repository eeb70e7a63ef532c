"""Point estimates over every fold of a recipe run fold by fold: the kept folds' errors
files and, for folds whose predictions are gone, the rows a model card records, pooled by
runs-weighted mean.

A fold run with ``one_fold.py --errors`` is kept (``benchmarks/folds/``) and pairs with
the others with intervals (``paired_runs.py``). A fold run before files were kept survives
only as the card's rounded rows, which can be copied into a recorded file (a ``.json`` of
``entries``, ``recorded()``). This script prints, per headline row (warm, workflow
changed, cold; workflow runs, all conclusions), each entry's log-MAE and their mean
weighted by runs, (sum of n_i * x_i) / (sum of n_i). Point estimates only: a recorded
fold has no per-run errors, so nothing here has an interval. Gemma's five folds are all
kept files since fold 1's rerun, so for them:

    python benchmarks/pool_points.py benchmarks/folds/gemma_fold*.jsonl.gz \\
        --predictor laser-gemma --predictor tabular --predictor history-median [--markdown]

Refused, one line each: a fold both recorded and kept (or kept twice), a kept file
without a predictor asked for, a recorded file without its fields. A predictor that an
entry does not give on a row (``history-median`` cold: it is ``tabular`` there) pools to
``-`` on that row.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from laser_ci.training.scored import Scored, ScoredError  # noqa: E402
from laser_ci.training.scored import load as load_scored  # noqa: E402

ROWS = ("warm", "workflow changed", "cold")


@dataclass(frozen=True)
class Entry:
    """One fold or several, as a kept file or as recorded: per row, runs and log-MAE."""

    name: str
    folds: tuple[int, ...]
    runs: dict[str, int]  # row -> runs
    mae: dict[str, dict[str, float]]  # row -> predictor -> log-MAE


def row_errors(rows: dict[str, Scored], row: str) -> list[float]:
    """The p50 log errors of a headline row: warm and workflow changed as scored with the
    runs' history (``prior``), cold as every run scored without it (``none``)."""
    if row == "cold":
        return [r.errors["none"][0] for r in rows.values()]
    subsets = ("warm", "warm-changed") if row == "warm" else ("warm-changed",)
    return [r.errors["prior"][0] for r in rows.values() if r.subset in subsets]


def kept(path: str, predictors: Sequence[str], k: int) -> Entry:
    """A kept errors file (or a predictions file) as an entry."""
    by = {p: load_scored(path, p) for p in predictors}
    first = by[predictors[0]]
    for p, rows in by.items():
        if rows.keys() != first.keys():
            raise ScoredError(f"{path}: {p} scored other runs than {predictors[0]}")
    folds = tuple(sorted({r.fold(k) for r in first.values()}))
    runs = {row: len(row_errors(first, row)) for row in ROWS}
    mae = {row: {p: float(np.mean(row_errors(by[p], row))) for p in predictors
                 if runs[row]} for row in ROWS}
    return Entry(Path(path).name, folds, runs, mae)


def recorded(path: str) -> list[Entry]:
    """A recorded file's entries: ``{"entries": [{"folds", "source", "rows"}]}``."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        out = []
        for n, e in enumerate(doc["entries"]):
            rows = e["rows"]
            out.append(Entry(f"{Path(path).name}[{n}]", tuple(int(f) for f in e["folds"]),
                             {row: int(rows[row]["runs"]) for row in ROWS},
                             {row: {p: float(v) for p, v in rows[row].items() if p != "runs"}
                              for row in ROWS}))
        return out
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScoredError(f"{path}: {exc}") from None
    except (KeyError, TypeError, ValueError):
        raise ScoredError(f"{path}: a recorded entry without its fields") from None


def pool(entries: Sequence[Entry], predictors: Sequence[str]) -> Entry:
    """The runs-weighted mean of the entries, per row and predictor; a predictor missing
    from an entry's row is missing from the pooled row. Refused: a fold in two entries."""
    seen: dict[int, str] = {}
    for e in entries:
        for f in e.folds:
            if f in seen:
                raise ScoredError(f"fold {f} is in both {seen[f]} and {e.name}")
            seen[f] = e.name
    runs = {row: sum(e.runs[row] for e in entries) for row in ROWS}
    mae: dict[str, dict[str, float]] = {}
    for row in ROWS:
        mae[row] = {}
        for p in predictors:
            if runs[row] and all(p in e.mae[row] for e in entries if e.runs[row]):
                mae[row][p] = sum(e.runs[row] * e.mae[row].get(p, 0.0)
                                  for e in entries) / runs[row]
    return Entry("pooled", tuple(sorted(seen)), runs, mae)


def table(entries: Sequence[Entry], pooled: Entry, predictors: Sequence[str]) -> list[list[str]]:
    lines = [["row", "entry", "folds", "runs", *predictors]]
    for row in ROWS:
        for e in [*entries, pooled]:
            lines.append([row, e.name, ", ".join(map(str, e.folds)), f"{e.runs[row]:,}",
                          *(f"{e.mae[row][p]:.3f}" if p in e.mae[row] else "-"
                            for p in predictors)])
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+",
                    help="a recorded .json, or a kept errors (or predictions) file")
    ap.add_argument("--predictor", action="append", required=True,
                    help="a predictor to pool (repeat for more)")
    ap.add_argument("--folds", type=int, default=5, help="K of the cross-validation [5]")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    try:
        entries: list[Entry] = []
        for f in args.files:
            entries += recorded(f) if f.endswith(".json") else [
                kept(f, args.predictor, args.folds)]
        pooled = pool(entries, args.predictor)
    except ScoredError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    lines = table(entries, pooled, args.predictor)
    if args.markdown:
        print("| " + " | ".join(lines[0]) + " |")
        print("|" + "---|" * len(lines[0]))
        for line in lines[1:]:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
        for line in lines:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
