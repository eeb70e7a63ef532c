"""The cross-validated headline rows of every card in a model folder, and the default they pick.

Reads each ``card.json``'s ``cv`` block (written by ``laser-ci eval --folds K --write-cards``
or :func:`laser_ci.evaluation.cv_report.write_cards`) and prints, for every predictor, the rows
of :data:`laser_ci.predictors.choice.HEADLINE` (issue #13's: cold all and successful runs,
warm, workflow changed, per job with history and cold; log-MAE, lower is better), the best
value per row in bold, the rows on which a language model is behind the best baseline
(:func:`laser_ci.predictors.choice.lags_baselines`), and the predictor
:func:`laser_ci.predictors.choice.load_predictor` picks. Point estimates only: the paired
intervals are in the cards' reports (``benchmarks/paired_runs.py`` on the prediction files).

    python benchmarks/headline.py [--model model]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.predictors.baselines import BASELINES  # noqa: E402
from laser_ci.predictors.choice import (  # noqa: E402
    HEADLINE,
    headline_scores,
    lags_baselines,
    load_predictor,
    read_cards,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(Path(__file__).resolve().parent.parent / "model"))
    args = ap.parse_args(argv)
    rows: dict[str, dict[str, float]] = {}
    for card in read_cards(args.model).values():
        rows.update(headline_scores(card))
    if not rows:
        print(f"{args.model}: no card with cross-validated scores", file=sys.stderr)
        return 1
    best_any = {k: min(r[k] for r in rows.values() if k in r) for k in HEADLINE
                if any(k in r for r in rows.values())}
    best_baseline = {k: min(r[k] for n, r in rows.items() if n in BASELINES and k in r)
                     for k in HEADLINE if any(n in BASELINES and k in r for n, r in rows.items())}
    print("| predictor | " + " | ".join(HEADLINE) + " | behind the best baseline on |")
    print("|---|" + "---:|" * len(HEADLINE) + "---|")
    for name, scores in rows.items():
        cells = []
        for key in HEADLINE:
            v = scores.get(key)
            cell = "–" if v is None else f"{v:.4f}"
            cells.append(f"**{cell}**" if v is not None and v == best_any[key] else cell)
        lag = "" if name in BASELINES else ", ".join(lags_baselines(scores, best_baseline)) or "none"
        print(f"| `{name}` | " + " | ".join(cells) + f" | {lag} |")
    print(f"\ndefault predictor: {load_predictor(args.model).name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
