"""Train the baselines from scratch, tune them on ``val``, ship them, print the eval table.

    python benchmarks/baselines.py [--data ../shared/data/gha-runs] [--out model/baselines]

Needs the ``train`` extra (LightGBM, scikit-learn). Steps:

1. Examples from the data folder (:func:`laser_ci.training.examples.load_examples`, both kinds, with
   their causal history: :mod:`laser_ci.training.history`), split by repository
   (:func:`laser_ci.training.examples.split_of`). Everything is fit on ``train`` only.
2. The recipe, :func:`laser_ci.training.baselines.fit_baselines` (its module doc gives every
   step): ``median``, ``tabular`` (a cold part and a history-anchored warm part),
   ``text-linear``, ``history-median`` and ``history-recent``, hyperparameters chosen and
   bands calibrated on ``val``. ``laser-ci eval DATA --folds K`` runs the same function once
   per held-out fold.
3. Writes ``median.json``, ``tabular.{json,npz}``, ``text_linear.{json,npz}``,
   ``history_median.json``, ``history_recent.json`` and ``card.json`` (val metrics in both
   history regimes, chosen parameters, best predictor) to ``--out``, reloads them with numpy only and prints
   ``laser-ci eval``'s tables for ``val`` (workflow and job, ``--history prior``: both
   regimes and the warm, warm-changed and cold subsets). A ``"cv"`` block already in the
   card (``laser-ci eval --folds K --write-cards``) is kept when it was computed with the
   same recipe and text code (its ``fingerprint``), and dropped otherwise: re-run the eval.

Deterministic: fixed seeds, one thread. About four minutes on one core.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from laser_ci.evaluation.cv_report import recipe_fingerprint  # noqa: E402
from laser_ci.evaluation.evaluate import describe, evaluate, json_safe, render_table  # noqa: E402
from laser_ci.predictors.baselines import load_baselines  # noqa: E402
from laser_ci.training.baselines import fit_baselines, text_features  # noqa: E402
from laser_ci.training.examples import load_examples, summarize  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "gha-runs"))
    ap.add_argument("--out", default=str(ROOT / "model" / "baselines"))
    ap.add_argument("--no-cache", action="store_true", help="re-parse the data")
    ap.add_argument("--quiet", action="store_true", help="only the final tables")
    ap.add_argument("--markdown", action="store_true", help="tables in markdown")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    t_start = time.perf_counter()
    examples = load_examples(args.data, cache=not args.no_cache)
    train = [e for e in examples if e.split == "train"]
    val = [e for e in examples if e.split == "val"]
    log(f"data: {summarize(examples)}; train {summarize(train)}; val {summarize(val)} "
        f"({time.perf_counter() - t_start:.1f}s)")

    # features of every text once, inside tabular's time (as before the recipe moved)
    t0 = time.perf_counter()
    feats = text_features(examples)
    feats_seconds = time.perf_counter() - t0
    fit = fit_baselines(train, val, feats=feats, log=log)
    timings = dict(fit.seconds)
    timings["tabular"] += feats_seconds
    median, tabular, text, history_median, history_recent = (fit.predictors[n] for n in (
        "median", "tabular", "text-linear", "history-median", "history-recent"))

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for p in (median, tabular, text, history_median, history_recent):
        p.save(out)

    # reload from disk (numpy only) and score exactly as `laser-ci eval --history prior` does
    shipped = load_baselines(out)
    reports = {}
    for kind in ("workflow", "job"):
        subset = [e for e in val if e.kind == kind]
        report, _ = evaluate(shipped, subset, history="prior")
        reports[kind] = {"split": "val", "kind": kind, **report}

    def metric(kind: str, name: str, regime: str, subset: str, runs: str = "all") -> float:
        res = reports[kind]["predictors"][name]
        res = res if regime == "prior" else res["regimes"][regime]
        res = res if subset == "all" else res["subsets"][subset]
        return res[runs]["log_mae"]

    val_scores = {n: metric("workflow", n, "none", "all") for n in shipped}
    prior_scores = {n: metric("workflow", n, "prior", "all") for n in shipped}
    best = min(val_scores, key=lambda n: (val_scores[n], prior_scores[n], n))
    card = {
        "best": best,
        "predictors": {
            n: {
                "val_log_mae": val_scores[n],
                "val_success_log_mae": metric("workflow", n, "none", "all", "success"),
                "val_job_log_mae": metric("job", n, "none", "all"),
                "val_prior_log_mae": prior_scores[n],
                "val_warm_log_mae": metric("workflow", n, "prior", "warm"),
                "val_warm_success_log_mae": metric("workflow", n, "prior", "warm", "success"),
                "val_warm_changed_log_mae": metric("workflow", n, "prior", "warm-changed"),
                "val_job_warm_log_mae": metric("job", n, "prior", "warm"),
                "train_seconds": round(timings[n], 1),
            }
            for n in shipped
        },
        "metrics": "log-MAE on val, kind workflow unless named job; val_log_mae: --history "
                   "none (cold start); val_prior_log_mae: --history prior; warm: runs with "
                   "earlier runs; warm_changed: and the workflow file changed since the "
                   "previous run",
        "history": {"policy": "earlier runs (strictly earlier commit date) of the same repo, "
                              "workflow and job name, all conclusions, last 20",
                    "val_workflow": reports["workflow"]["subsets"],
                    "val_job": reports["job"]["subsets"]},
        "data": {"train": summarize(train), "val": summarize(val)},
        "split": "sha256(owner/name)[:8] % 100 < 20 -> val (laser_ci.training.examples.split_of)",
        "tabular": tabular.info,
        "tabular-warm": {k: v for k, v in tabular.warm.info.items() if k != "grid"},
        "text-linear": text.info,
        "history-median": history_median.info,
        "history-recent": history_recent.info,
        "val_metrics": {k: json_safe(r) for k, r in reports.items()},
        "tuning": fit.tuning,
    }
    card_path = out / "card.json"
    old_cv = _old_cv(card_path)
    if old_cv is not None:
        if old_cv.get("fingerprint") == recipe_fingerprint():
            card["cv"] = old_cv
        else:
            log("dropped the card's cross-validated scores (the recipe or the text code changed): "
                "re-run `laser-ci eval DATA --folds 5 --history prior --write-cards`")
    card_path.write_text(json.dumps(json_safe(card), indent=1) + "\n", encoding="utf-8")

    sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
    log(f"wrote {out}: " + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in sizes.items())
        + f" (total {sum(sizes.values()) / 1024:.0f} KiB)")
    log("training time: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())
        + f"; total {time.perf_counter() - t_start:.1f}s")
    for kind in ("workflow", "job"):
        print(describe(reports[kind]))
        print(render_table(reports[kind], markdown=args.markdown))
    print(f"best: {best}")
    return 0


def _old_cv(path: Path) -> dict[str, Any] | None:
    try:
        cv = json.loads(path.read_text(encoding="utf-8")).get("cv")
    except (OSError, ValueError, AttributeError):
        return None
    return cv if isinstance(cv, dict) else None


if __name__ == "__main__":
    sys.exit(main())
