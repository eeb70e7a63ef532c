"""Set a shipped language model's decoding: the last digit kept whole, and band scales.

    python benchmarks/calibrate_bands.py --model model/lm [--data ../shared/data/gha-runs]
        [--exact-last | --sampled-last] [--sampling independent|stratified] [--shrink]

What ``laser-ci eval --folds 5 ... --lm-ship DIR`` does
to the model it ships, for a model folder shipped before those options existed: writes
``decoding.exact_last`` (:func:`laser_ci.predictors.decode.sample_numbers`) and, with
``--sampling``, ``decoding.sampling`` into its ``laser.json``, then fits its p10-p90 band
scales (and with ``--shrink`` its shrinks, as the shipped recipe does; without, a model keeps
none) (:mod:`laser_ci.training.bands`) on the examples of fold 0
(:func:`laser_ci.evaluation.folds.fold_of` with K = 5), the examples that picked a shipped
model's epoch, never its training examples, and writes them too. Prints one JSON object:
the values and, on those examples, each regime's log-MAE, coverage and median p90/p10
before and after. Needs the ``train`` extra (the examples' history).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.evaluation.folds import fold_of  # noqa: E402
from laser_ci.predictors.lm import CONFIG_NAME, SAMPLING, LaserModel  # noqa: E402
from laser_ci.training import metrics  # noqa: E402
from laser_ci.training.bands import (  # noqa: E402
    DEFAULT_TARGET,
    fit,
    regime_predictions,
    write_calibration,
)
from laser_ci.training.examples import load_examples  # noqa: E402


def summary(model: LaserModel, by_regime: dict) -> dict[str, dict[str, float]]:
    """Each regime's figures with ``model``'s shrink and band scales applied to its raw
    predictions."""
    out = {}
    for name, reg in by_regime.items():
        preds = [model.finish(r, ref, name) for r, ref in zip(reg.preds, reg.refs, strict=True)]
        truth = reg.truth
        if not truth:
            continue
        out[name] = {"n": len(truth),
                     "log_mae": round(metrics.log_mae([r.p50 for r in preds], truth), 4),
                     "coverage": round(metrics.coverage([r.p10 for r in preds],
                                                        [r.p90 for r in preds], truth), 4),
                     "width": round(metrics.width_ratio([r.p10 for r in preds],
                                                        [r.p90 for r in preds]), 2)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="model/lm")
    ap.add_argument("--data", default="../shared/data/gha-runs")
    last = ap.add_mutually_exclusive_group()
    last.add_argument("--exact-last", dest="exact_last", action="store_true", default=None)
    last.add_argument("--sampled-last", dest="exact_last", action="store_false")
    ap.add_argument("--sampling", choices=SAMPLING, default=None)
    ap.add_argument("--shrink", action="store_true",
                    help="also fit each regime's shrink toward the prompt's reference")
    args = ap.parse_args()

    folder = Path(args.model)
    path = folder / CONFIG_NAME
    if args.exact_last is not None or args.sampling is not None:
        config = json.loads(path.read_text(encoding="utf-8"))
        decoding = config.setdefault("decoding", {})
        if args.exact_last is not None:
            decoding["exact_last"] = args.exact_last
        if args.sampling is not None:
            decoding["sampling"] = args.sampling
        path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    val = [e for e in load_examples(args.data, history=True) if fold_of(e.repo, 5) == 0]
    raw = LaserModel(folder, band_scale={}, shrink={})
    by_regime = regime_predictions(raw, val)
    cal = fit(by_regime, shrink=args.shrink)
    write_calibration(folder, cal, examples=len(val))
    before = summary(raw, by_regime)
    after = summary(LaserModel(folder), by_regime)  # as the folder now reads
    print(json.dumps({"model": str(folder), "exact_last": raw.exact_last,
                      "sampling": raw.sampling, "examples": len(val),
                      "target": DEFAULT_TARGET, "band_scale": cal.band_scale,
                      "shrink": cal.shrink, "before": before, "after": after,
                      "command": "python benchmarks/calibrate_bands.py " + " ".join(sys.argv[1:])},
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
