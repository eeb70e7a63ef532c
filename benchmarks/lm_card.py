"""Score a language-model folder on the validation split and write its ``card.json``.

    python benchmarks/lm_card.py --model model/lm --data ../shared/data/gha-runs [--write]
        [--samples N] [--sampling independent|stratified]

Runs what ``laser-ci eval DATA --split val --history prior --predictor laser-lm --model
MODEL`` runs, for both example kinds (``workflow``: one example per run; ``job``), and prints
one JSON object with the figures :mod:`laser_ci.predictors.choice` compares across families
(``val_log_mae``: cold start, workflow runs; ``val_prior_log_mae``: with history), the warm
and warm-changed subsets, the p10-p90 coverage, and (``vs_history_median``) the model's
log-MAE minus the history median's on the warm and warm-changed workflow runs, with a 95%
interval from resampling repositories. ``--write`` also stores it as
``MODEL/card.json`` (not a hashed file of the model), keeping the card's ``cv`` block.
The baselines' card comes from ``benchmarks/baselines.py`` in the same shape, so the two
are comparable.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.predictors.lm import SAMPLING, LaserModel  # noqa: E402
from laser_ci.text.history import parse_history  # noqa: E402
from laser_ci.training.evaluate import evaluate  # noqa: E402
from laser_ci.training.examples import load_examples  # noqa: E402
from laser_ci.training.history import example_text, in_subset  # noqa: E402
from laser_ci.training.metrics import paired_log_mae_diff  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="model/lm")
    ap.add_argument("--data", default="../shared/data/gha-runs")
    ap.add_argument("--write", action="store_true", help="write MODEL/card.json")
    ap.add_argument("--samples", type=int, default=None,
                    help="samples per text (default: the model's laser.json)")
    ap.add_argument("--sampling", choices=SAMPLING, default=None,
                    help="default: the model's laser.json")
    args = ap.parse_args()

    lm = LaserModel(args.model, num_samples=args.samples, sampling=args.sampling)
    predictors = {lm.name: lm}
    val = load_examples(args.data, split="val")
    reports, scored = {}, {}
    t0 = time.perf_counter()
    for kind in ("workflow", "job"):
        examples = [e for e in val if e.kind == kind]
        report, preds = evaluate(predictors, examples, history="prior")
        reports[kind] = report
        scored[kind] = (examples, preds)
    seconds = time.perf_counter() - t0

    def vs_history_median(name: str) -> dict[str, dict[str, float]]:
        out = {}
        for kind, (examples, preds) in scored.items():
            for subset in ("warm", "warm-changed"):
                idx = [i for i, e in enumerate(examples) if in_subset(e, subset)]
                ex = [examples[i] for i in idx]
                medians = [parse_history(example_text(e, "prior"))["median"] for e in ex]
                key = subset if kind == "workflow" else f"job-{subset}"
                out[key] = paired_log_mae_diff(
                    [preds[name][i].p50 for i in idx], medians,
                    [e.runtime_s for e in ex], [e.repo for e in ex])
        return out

    def metric(kind: str, name: str, regime: str, subset: str = "all", runs: str = "all",
               key: str = "log_mae") -> float:
        res = reports[kind]["predictors"][name]
        res = res if regime == "prior" else res["regimes"][regime]
        res = res if subset == "all" else res["subsets"][subset]
        return res[runs][key]

    card = {
        "best": min(predictors, key=lambda n: metric("workflow", n, "none")),
        "predictors": {
            n: {
                "val_log_mae": metric("workflow", n, "none"),
                "val_success_log_mae": metric("workflow", n, "none", runs="success"),
                "val_job_log_mae": metric("job", n, "none"),
                "val_prior_log_mae": metric("workflow", n, "prior"),
                "val_warm_log_mae": metric("workflow", n, "prior", "warm"),
                "val_warm_success_log_mae": metric("workflow", n, "prior", "warm", "success"),
                "val_warm_changed_log_mae": metric("workflow", n, "prior", "warm-changed"),
                "val_job_warm_log_mae": metric("job", n, "prior", "warm"),
                "val_coverage_p10_p90": metric("workflow", n, "none", key="coverage"),
                "val_warm_coverage_p10_p90": metric("workflow", n, "prior", "warm",
                                                    key="coverage"),
                "val_spearman": metric("workflow", n, "none", key="spearman"),
                "vs_history_median": vs_history_median(n),
            }
            for n in predictors
        },
        "metrics": "log-MAE on val, kind workflow unless named job; val_log_mae: --history "
                   "none (cold start); val_prior_log_mae: --history prior; warm: runs with "
                   "earlier runs; warm_changed: and the workflow file changed since the "
                   "previous run; vs_history_median: log-MAE minus the history median's on "
                   "the same examples (job-: per-job examples), 95% interval over "
                   "repositories (benchmarks/lm_card.py)",
        "examples": {k: {"n": r["n"], "subsets": r.get("subsets")} for k, r in reports.items()},
        "decoding": {"samples": lm.num_samples, "sampling": lm.sampling},
        "seconds": round(seconds, 1),
    }
    text = json.dumps(card, indent=1)
    print(text)
    if args.write:
        path = Path(args.model) / "card.json"
        try:  # the cross-validated scores (laser-ci eval --folds --write-cards) stay
            old_cv = json.loads(path.read_text(encoding="utf-8")).get("cv")
        except (OSError, ValueError, AttributeError):
            old_cv = None
        if isinstance(old_cv, dict):
            card["cv"] = old_cv
        path.write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
