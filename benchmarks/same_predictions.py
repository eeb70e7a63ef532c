"""Do the shipped model and baselines still give the same predictions? (issue 48)

Runs every shipped predictor (``model/``: the baselines and laser-lm) on

- ``demo``: the demo's workflows (``examples/demo/.github/workflows``) through the code
  path of ``laser-ci estimate --format json`` (:func:`laser_ci.estimate.estimate_paths`),
  each job's p10/p50/p90 as the predictor returned them (before the report rounds them);
- ``val``: the ``val`` split of a gha-runs folder as ``laser-ci eval`` builds it
  (:func:`laser_ci.training.examples.load_examples`, workflow and job examples, with
  history), each example's text in both history regimes (``none``: the cold text;
  ``prior``: the text with its earlier runs), de-duplicated by text.

and writes (``--write FILE``) or compares (``--check FILE``) a compact JSON of the
predictions: ``{part: {predictor: {item: [p10, p50, p90]}}}``, an item being the job's
``path#id/label`` (demo) or the sha-256 of the text, 16 digits (val). ``--check`` exits 1
when any item differs by more than ``--rtol`` (relative, default 1e-6), is missing or is
new, and prints how many differ.

    PYTHONPATH=$PWD python benchmarks/same_predictions.py --write benchmarks/reference/predictions.json
    PYTHONPATH=$PWD python benchmarks/same_predictions.py --check benchmarks/reference/predictions.json
    PYTHONPATH=$PWD python benchmarks/same_predictions.py --check FILE --parts demo   # seconds

``--val-limit N`` keeps the first N val texts of each predictor (in the data's order), so
that a smaller reference can be committed. The examples are read without the cache
(``--cache`` to use it), so a change to the text code shows.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo" / ".github" / "workflows"
DATA = Path("/work/shared/data/gha-runs")
PARTS = ("demo", "val")

Preds = dict[str, dict[str, list[float]]]  # predictor -> item -> [p10, p50, p90]


class _Recorder:
    """A predictor that passes every call on and keeps each text's raw prediction."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name = inner, inner.name
        self.seen: list[tuple[str, Any]] = []

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def predict(self, texts: Sequence[str]) -> list[Any]:
        out = self.inner.predict(texts)
        self.seen.extend(zip(texts, out, strict=True))
        return out


def _triple(rt: Any) -> list[float]:
    """p10, p50, p90 to 10 significant digits (10,000 times finer than the tolerance)."""
    return [float(f"{float(v):.10g}") for v in (rt.p10, rt.p50, rt.p90)]


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def demo_predictions(predictors: dict[str, Any]) -> Preds:
    """Each predictor's raw runtime for every demo job, by ``path#id/label``."""
    from laser_ci.estimate import estimate_paths

    out: Preds = {}
    for name, predictor in predictors.items():
        rec = _Recorder(predictor)
        result = estimate_paths([str(DEMO)], predictor=rec)
        by_text = {_key(t): _triple(rt) for t, rt in rec.seen}
        jobs = [(wf["path"], j) for wf in result["workflows"] for j in wf["jobs"]]
        if len(jobs) != len(rec.seen):
            raise SystemExit(f"{name}: {len(rec.seen)} texts predicted for {len(jobs)} jobs")
        items: dict[str, list[float]] = {}
        for (path, job), (text, _rt) in zip(jobs, rec.seen, strict=True):
            items[f"{Path(path).name}#{job['id']}/{job.get('label')}"] = by_text[_key(text)]
        out[name] = items
    return out


def val_texts(data: Path, cache: bool) -> list[str]:
    """Every distinct text ``laser-ci eval --split val --kind all --history prior`` feeds a
    predictor (both regimes), in the data's order."""
    from laser_ci.evaluation.regimes import example_text
    from laser_ci.training.examples import KINDS, load_examples

    examples = load_examples(data, kinds=KINDS, split="val", cache=cache, history=True)
    texts = [example_text(e, regime) for e in examples for regime in ("none", "prior")]
    return list(dict.fromkeys(texts))


def val_predictions(predictors: dict[str, Any], texts: list[str]) -> Preds:
    from laser_ci.evaluation.evaluate import predict_texts

    out: Preds = {}
    for name, predictor in predictors.items():
        t0 = time.perf_counter()
        preds = predict_texts(predictor, texts)
        out[name] = {_key(t): _triple(rt) for t, rt in zip(texts, preds, strict=True)}
        print(f"val: {name}: {len(texts)} texts in {time.perf_counter() - t0:.0f} s",
              file=sys.stderr)
    return out


def collect(parts: Sequence[str], data: Path, val_limit: int | None, cache: bool,
            model_dir: str | None) -> dict[str, Preds]:
    from laser_ci.predictors.choice import available_predictors

    predictors = dict(sorted(available_predictors(model_dir).items()))
    if not predictors:
        raise SystemExit(f"no predictors in {model_dir or 'model/'}")
    out: dict[str, Preds] = {}
    if "demo" in parts:
        out["demo"] = demo_predictions(predictors)
    if "val" in parts:
        texts = val_texts(data, cache)
        if val_limit is not None:
            texts = texts[:val_limit]
        out["val"] = val_predictions(predictors, texts)
    return out


def _close(a: float, b: float, rtol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-12)


def compare(reference: dict[str, Preds], current: dict[str, Preds],
            rtol: float = 1e-6) -> tuple[int, int, list[str]]:
    """``(items compared, items that differ, examples of differences)`` over the parts and
    predictors of ``current`` (a predictor or item on one side only differs); with
    ``val_limit`` set in the reference, only its items are asked for."""
    n = bad = 0
    shown: list[str] = []
    for part, preds in current.items():
        ref_part = reference.get(part, {})
        for name in sorted(set(preds) | set(ref_part)):
            mine, theirs = preds.get(name, {}), ref_part.get(name, {})
            for item in sorted(set(mine) | set(theirs)):
                n += 1
                a, b = mine.get(item), theirs.get(item)
                same = a is not None and b is not None and all(
                    _close(x, y, rtol) for x, y in zip(a, b, strict=True))
                if not same:
                    bad += 1
                    if len(shown) < 10:
                        shown.append(f"{part}/{name}/{item}: reference {b}, now {a}")
    return n, bad, shown


def _read(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", type=Path, help="write the predictions to FILE")
    what.add_argument("--check", type=Path, help="compare with FILE (written by --write)")
    ap.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    ap.add_argument("--data", type=Path, default=DATA, help="gha-runs folder [%(default)s]")
    ap.add_argument("--val-limit", type=int, default=None,
                    help="only the first N val texts (--check: the reference's)")
    ap.add_argument("--model", default=None, help="model folder [the shipped model/]")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--cache", action="store_true", help="read val from the examples cache")
    args = ap.parse_args(argv)

    reference: dict[str, Any] = {}
    val_limit = args.val_limit
    if args.check is not None:
        reference = _read(args.check)
        if val_limit is None:
            val_limit = reference.get("meta", {}).get("val_limit")
    t0 = time.perf_counter()
    current = collect(args.parts, args.data, val_limit, args.cache, args.model)
    if args.write is not None:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        doc = {"meta": {"val_limit": val_limit, "data": str(args.data)}, **current}
        args.write.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n",
                              encoding="utf-8")
        n = sum(len(items) for part in current.values() for items in part.values())
        print(f"wrote {n} predictions of {len(next(iter(current.values())))} predictors to "
              f"{args.write} in {time.perf_counter() - t0:.0f} s")
        return 0
    n, bad, shown = compare({k: v for k, v in reference.items() if k != "meta"}, current,
                            args.rtol)
    for line in shown:
        print(line)
    print(f"{bad} of {n} predictions differ from {args.check} (rtol {args.rtol:g}; parts "
          f"{', '.join(args.parts)}) in {time.perf_counter() - t0:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
