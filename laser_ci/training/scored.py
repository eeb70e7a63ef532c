"""Scored examples on file: what ``laser-ci eval --predictions`` (and
``benchmarks/one_fold.py``) writes, and the errors-only form that can be kept in the
repository.

A predictions file holds, per scored example and predictor, the example's identity, its
truth and the ``prior`` and ``none`` regimes' (p10, p50, p90)
(:func:`laser_ci.training.crossval.write_predictions`). It carries the dataset's run
times, so it stays under ``runs/``, which no session keeps. Pairing two predictors
(``benchmarks/paired_runs.py``) needs less: per example and regime, the log error of the
p50 and whether the p10-p90 band held the truth, with the repository to resample by. The
errors file (:func:`write_errors`) keeps exactly that, the repository and example named
by a digest and the fold by its number, so one fold's results can be committed and pooled
with the folds of later sessions without the run times leaving the data folder.

    {"key": "3f9c0e1a2b7d4c55", "repo": "a1b2c3d4e5f6", "fold": 3, "subset": "warm",
     "conclusion": "success", "predictor": "tabular", "prior": [0.4121, 1], "none": [...]}
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from laser_ci.training import metrics
from laser_ci.training.folds import fold_of

REGIMES = ("prior", "none")
ERROR_DIGITS = 6  # |ln p50 - ln truth| to 1e-6: far below any difference a table prints
ERRORS_FOLDS = 5  # the K of an errors file's "fold" (laser-ci eval --folds 5)


class ScoredError(ValueError):
    """A scored-examples file that cannot be read or paired."""


@dataclass(frozen=True)
class Scored:
    """One predictor's result on one example, as pairing needs it."""

    key: str  # the example's digest: the same in both forms, so either pairs with either
    repo: str  # what the intervals resample by: the name, or its digest in an errors file
    fold: int | None  # None: not stored (a predictions file: from ``repo`` and K)
    subset: str
    conclusion: str
    errors: Mapping[str, tuple[float, bool]]  # regime -> (|ln p50 - ln truth|, in p10-p90)

    def fold_of(self, k: int) -> int:
        if self.fold is not None:
            if k != ERRORS_FOLDS:
                raise ScoredError(f"an errors file stores folds of {ERRORS_FOLDS}, not {k}")
            return self.fold
        return fold_of(self.repo, k)


def _open(path: str | Path) -> IO[str]:
    p = Path(path)
    if p.suffix == ".gz":
        return gzip.open(p, "rt", encoding="utf-8")
    return p.open(encoding="utf-8")


def _lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with _open(path) as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ScoredError(f"{path}:{n}: not JSON ({exc.msg})") from None
                if not isinstance(row, dict) or "predictor" not in row:
                    raise ScoredError(f"{path}:{n}: not a scored example")
                yield n, row
    except OSError as exc:
        raise ScoredError(f"{path}: {exc.strerror or exc}") from None


def from_prediction(row: Mapping[str, Any]) -> Scored:
    """A predictions-file row (with its truth and bands) as its errors."""
    truth = [row["runtime_s"]]
    errors = {}
    for regime in REGIMES:
        p10, p50, p90 = row[regime]
        errors[regime] = (float(metrics.log_errors([p50], truth)[0]),
                          bool(metrics.inside([p10], [p90], truth)[0]))
    return Scored(digest(str(row["key"]), 16), str(row["repo"]), None, str(row["subset"]),
                  str(row["conclusion"]), errors)


def from_errors(row: Mapping[str, Any]) -> Scored:
    """An errors-file row."""
    errors = {r: (float(row[r][0]), bool(row[r][1])) for r in REGIMES}
    return Scored(str(row["key"]), str(row["repo"]), int(row["fold"]), str(row["subset"]),
                  str(row["conclusion"]), errors)


def load(path: str | Path, predictor: str | None) -> dict[str, Scored]:
    """``predictor``'s rows of a predictions or errors file (plain or ``.gz``), by key;
    ``predictor`` None: the file's only predictor."""
    rows: dict[str, Scored] = {}
    names: set[str] = set()
    for n, row in _lines(path):
        names.add(str(row["predictor"]))
        if predictor is not None and row["predictor"] != predictor:
            continue
        try:
            scored = from_prediction(row) if "runtime_s" in row else from_errors(row)
        except (KeyError, TypeError, ValueError, IndexError):
            raise ScoredError(f"{path}:{n}: a scored example without its fields") from None
        rows[scored.key] = scored
    if predictor is None and len(names) > 1:
        raise ScoredError(f"{path} holds {', '.join(sorted(names))}: pick one with --a/--b")
    if not rows:
        raise ScoredError(f"{path}: no predictions of {predictor}")
    return rows


def digest(text: str, chars: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:chars]


def write_errors(predictions: str | Path, out: str | Path) -> int:
    """Every row of a predictions file as an errors-file row (``.gz`` when ``out`` ends so);
    the number of rows written."""
    n = 0
    opener = gzip.open if Path(out).suffix == ".gz" else open
    with opener(out, "wt", encoding="utf-8") as fh:
        for _, row in _lines(predictions):
            if "runtime_s" not in row:
                raise ScoredError(f"{predictions} is not a predictions file")
            s = from_prediction(row)
            fh.write(json.dumps({
                "key": s.key, "repo": digest(s.repo, 12),
                "fold": fold_of(s.repo, ERRORS_FOLDS), "subset": s.subset,
                "conclusion": s.conclusion, "predictor": row["predictor"],
                **{r: [round(e, ERROR_DIGITS), int(i)] for r, (e, i) in s.errors.items()},
            }) + "\n")
            n += 1
    return n
