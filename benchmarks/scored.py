"""Scored examples on file: what ``laser-ci eval --predictions`` writes, and the
errors-only form that can be kept in the repository (``benchmarks/paired_runs.py`` pairs
either; the kept fold files of the levers tried are gone with them, ``model/lm/EXPERIMENTS.md``).

A predictions file holds, per scored example and predictor, the example's identity, its
truth and the ``prior`` and ``none`` regimes' (p10, p50, p90)
(:func:`laser_ci.evaluation.crossval.write_predictions`). It carries the dataset's run
times, so it stays under ``runs/``, which no session keeps. Pairing two predictors
(``benchmarks/paired_runs.py``) needs less: per example and regime, the log error of the
p50 and whether the p10-p90 band held the truth, with the repository to resample by. The
errors file (:func:`write_errors`) keeps exactly that, so one fold's results can be
committed and pooled with the folds of later sessions:

    {"key": "3f9c0e1a2b7d4c55", "repo": "a1b2c3d4e5f6", "subset": "warm",
     "conclusion": "success", "predictor": "tabular", "prior": [0.4121, 1], "none": [...]}

What it does not keep:

* **Run times.** An error is |ln p50 - ln truth| and the p50 is not kept, so a run time
  can be read back only where the p50 is known. It is for a predictor whose p50 is the same
  on every example (``median``: the training median, which the shipped baselines publish),
  so such a predictor is refused (:class:`ScoredError`); only the predictors asked for are
  written.
* **Names, in the clear.** The repository and the example are unsalted SHA-256 digests
  (``repo``: the first 12 hex digits of :func:`laser_ci.evaluation.folds.repo_digest`, whose
  first 8 also give the fold for any K). They are pseudonyms: whoever has a list of
  candidate names can test them. Rows are sorted by ``key``, not kept in the data's order.

A predictions file's intervals resample repositories by name, an errors file's by digest:
the same repositories in another order, so the two forms give the same n, log-MAE,
differences and coverage, and intervals that differ by the bootstrap's draw.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import os
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from laser_ci.evaluation.folds import fold_of, fold_of_digest, repo_digest
from laser_ci.training import metrics

REGIMES = ("prior", "none")
ERROR_DIGITS = 6  # |ln p50 - ln truth| to 1e-6: far below any difference a table prints
KEY_DIGITS, REPO_DIGITS = 16, 12
FIELDS = ("key", "repo", "subset", "conclusion", "predictor", *REGIMES)  # an errors row
_READ_ERRORS = (OSError, EOFError, zlib.error, UnicodeDecodeError)


class ScoredError(ValueError):
    """A scored-examples file that cannot be read, written or paired."""


@dataclass(frozen=True)
class Scored:
    """One predictor's result on one example, as pairing needs it."""

    key: str  # the example's digest: the same in both forms, so either pairs with either
    order: str  # what rows are sorted by: the key in the clear, or its digest
    repo: str  # what intervals resample by: the name, or its digest in an errors file
    digest: bool  # repo is a digest (an errors file)
    subset: str
    conclusion: str
    errors: Mapping[str, tuple[float, bool]]  # regime -> (|ln p50 - ln truth|, in p10-p90)

    def fold(self, k: int) -> int:
        """The example's fold of ``k`` (:func:`laser_ci.evaluation.folds.fold_of`)."""
        return fold_of_digest(self.repo, k) if self.digest else fold_of(self.repo, k)


def digest(text: str, chars: int) -> str:
    """The first ``chars`` hex digits of SHA-256 of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:chars]


def _lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    p = Path(path)
    try:
        with p.open("rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            binary: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
            for n, line in enumerate(io.TextIOWrapper(binary, encoding="utf-8"), 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ScoredError(f"{path}:{n}: not JSON ({exc.msg})") from None
                if not isinstance(row, dict) or "predictor" not in row:
                    raise ScoredError(f"{path}:{n}: not a scored example")
                yield n, row
    except _READ_ERRORS as exc:
        what = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise ScoredError(f"{path}: cannot be read ({what})") from None


def from_prediction(row: Mapping[str, Any]) -> Scored:
    """A predictions-file row (with its truth and bands) as its errors."""
    truth = [float(row["runtime_s"])]
    errors = {}
    for regime in REGIMES:
        p10, p50, p90 = (float(x) for x in row[regime])
        errors[regime] = (float(metrics.log_errors([p50], truth)[0]),
                          bool(metrics.inside([p10], [p90], truth)[0]))
    key = str(row["key"])
    return Scored(digest(key, KEY_DIGITS), key, str(row["repo"]), False, str(row["subset"]),
                  str(row["conclusion"]), errors)


def from_errors(row: Mapping[str, Any]) -> Scored:
    """An errors-file row."""
    errors = {}
    for r in REGIMES:
        err, hit = row[r]
        if not (metrics.is_number(err) and err >= 0 and hit in (0, 1)):
            raise ValueError(f"{r}: {row[r]!r}")
        errors[r] = (float(err), bool(hit))
    key, repo = str(row["key"]), str(row["repo"])
    int(repo[:8], 16)  # a digest, or ValueError
    return Scored(key, key, repo, True, str(row["subset"]), str(row["conclusion"]), errors)


def _scored(path: str | Path, n: int, row: Mapping[str, Any]) -> Scored:
    try:
        return from_prediction(row) if "runtime_s" in row else from_errors(row)
    except (KeyError, TypeError, ValueError, IndexError):
        raise ScoredError(f"{path}:{n}: a scored example without its fields") from None


def load(path: str | Path, predictor: str | None) -> dict[str, Scored]:
    """``predictor``'s rows of a predictions or errors file (plain or gzip), by key;
    ``predictor`` None: the file's only predictor."""
    rows: dict[str, Scored] = {}
    names: set[str] = set()
    for n, row in _lines(path):
        names.add(str(row["predictor"]))
        if predictor is not None and row["predictor"] != predictor:
            continue
        scored = _scored(path, n, row)
        rows[scored.key] = scored
    if predictor is None and len(names) > 1:
        raise ScoredError(f"{path} holds {', '.join(sorted(names))}: name the one to use")
    if not rows:
        raise ScoredError(f"{path}: no scored examples"
                          + (f" of {predictor}" if predictor is not None else ""))
    return rows


def errors_rows(predictions: str | Path, predictors: Sequence[str]) -> list[dict[str, Any]]:
    """The errors-file rows of ``predictors``' rows of a predictions file, sorted by key.
    Refused: a file that is not a predictions file, a predictor it lacks, and a predictor
    whose p50 is the same on every example (its errors would give the run times back)."""
    if not predictors:
        raise ScoredError("no predictor to keep")
    out: list[dict[str, Any]] = []
    p50s: dict[str, dict[str, set[float]]] = {name: {r: set() for r in REGIMES}
                                              for name in predictors}
    count = dict.fromkeys(predictors, 0)
    for n, row in _lines(predictions):
        if "runtime_s" not in row:
            raise ScoredError(f"{predictions}:{n}: not a predictions file's row")
        name = str(row["predictor"])
        if name not in p50s:
            continue
        s = _scored(predictions, n, row)
        count[name] += 1
        for r in REGIMES:
            p50s[name][r].add(round(math.log(max(float(row[r][1]), 1.0)), ERROR_DIGITS))
        out.append({
            "key": s.key, "repo": repo_digest(s.repo)[:REPO_DIGITS], "subset": s.subset,
            "conclusion": s.conclusion, "predictor": name,
            **{r: [round(e, ERROR_DIGITS), int(hit)] for r, (e, hit) in s.errors.items()},
        })
    for name in predictors:
        if not count[name]:
            raise ScoredError(f"{predictions}: no scored examples of {name}")
        if count[name] > 1 and any(len(p50s[name][r]) == 1 for r in REGIMES):
            raise ScoredError(f"{predictions}: {name} predicts the same on every example; "
                              "its errors would give the run times back")
    out.sort(key=lambda r: (r["key"], r["predictor"]))
    return out


def write_errors(predictions: str | Path, out: str | Path, predictors: Sequence[str]) -> int:
    """``predictors``' rows of a predictions file as an errors file (:func:`errors_rows`),
    gzip (byte for byte the same on a rerun) when ``out`` ends in ``.gz``; the rows
    written. Nothing is written unless all of it is."""
    target = Path(out)
    try:
        if target.exists() and target.resolve() == Path(predictions).resolve():
            raise ScoredError(f"{out}: the errors file would replace its predictions file")
    except OSError as exc:
        raise ScoredError(f"{out}: {exc.strerror or exc}") from None
    rows = errors_rows(predictions, predictors)
    data = "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")
    if target.suffix == ".gz":
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
            gz.write(data)
        data = buf.getvalue()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.{os.getpid()}.tmp"  # the umask's mode
        try:
            tmp.write_bytes(data)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise ScoredError(f"{out}: cannot be written ({exc.strerror or exc})") from None
    return len(rows)
