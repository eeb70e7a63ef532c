"""How many of a job's earlier runs its warm prediction should take the median of.

For every labeled example with earlier runs (causal history, as ``laser-ci eval --history
prior`` builds it), the median of the last ``k`` earlier runs for each ``k`` of
``--window``. Per held-out fold of a ``--folds``-fold split by repository, the window is
picked on the other folds alone (lowest log-MAE on their warm runs), then scored on the
held-out fold against the median of the last 20 runs (the history line's ``median=``), with
the 95% interval of the paired difference (bootstrap over repositories,
:func:`laser_ci.training.metrics.paired_log_mae_diff`), on warm runs and on the runs whose
workflow file changed since the latest earlier run. The figures behind
:data:`laser_ci.text.history.RECENT_RUNS` (the ``recent=`` field).

    python benchmarks/history_window.py [--data ../shared/data/gha-runs] [--kind workflow]
        [--folds 5] [--window 1 --window 3 ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.evaluation.folds import fold_of  # noqa: E402
from laser_ci.text.history import MAX_RUNS  # noqa: E402
from laser_ci.training.examples import KINDS, load_examples  # noqa: E402
from laser_ci.training.metrics import paired_diff_text  # noqa: E402

WINDOWS = (1, 2, 3, 5, 10, MAX_RUNS)


def window_medians(runtimes: tuple[float, ...], windows: tuple[int, ...]) -> dict[int, float]:
    """The median of the last ``k`` runtimes for each ``k`` (all of them when fewer)."""
    r = np.asarray(runtimes, dtype=float)
    return {k: float(np.median(r[-k:])) for k in windows}


def _lmae(pred: np.ndarray, true: np.ndarray) -> float:
    return float(np.mean(np.abs(np.log(np.maximum(pred, 1.0)) - np.log(np.maximum(true, 1.0)))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"
                                          / "gha-runs"))
    ap.add_argument("--kind", choices=KINDS, default="workflow")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--window", type=int, action="append",
                    help=f"runs the median is over (repeatable) [{', '.join(map(str, WINDOWS))}]")
    args = ap.parse_args(argv)
    windows = tuple(sorted(set(args.window or WINDOWS) | {MAX_RUNS}))
    examples = [e for e in load_examples(args.data, kinds=(args.kind,))
                if e.history is not None and e.runtime_s > 0]
    if not examples:
        print(f"{args.data}: no {args.kind} examples with earlier runs", file=sys.stderr)
        return 1
    folds = np.array([fold_of(e.repo, args.folds) for e in examples])
    changed = np.array([bool(e.changed) for e in examples])
    true = np.array([e.runtime_s for e in examples])
    groups = [e.repo for e in examples]
    med = {k: np.array([window_medians(e.history.runtimes, windows)[k] for e in examples])
           for k in windows}
    print(f"{args.kind} runs with earlier runs: {len(examples)} "
          f"({int(changed.sum())} where the workflow changed)")
    print("log-MAE of the median of the last k runs, every fold:")
    print("  " + "  ".join(f"k={k}: {_lmae(med[k], true):.3f}" for k in windows))
    print(f"\nfold | picked on the other folds (their log-MAE per k) | held out: picked, "
          f"k={MAX_RUNS}, difference [95%]; changed: the same")
    picked = np.zeros(len(examples))
    for f in range(args.folds):
        train, held = folds != f, folds == f
        if not held.any():
            continue
        scores = {k: _lmae(med[k][train], true[train]) for k in windows}
        best = min(scores, key=lambda k: (scores[k], k))
        picked[held] = med[best][held]
        ch = held & changed
        g = [groups[i] for i in np.flatnonzero(held)]
        gc = [groups[i] for i in np.flatnonzero(ch)]
        print(f"{f} | k={best} ({', '.join(f'{k}: {s:.3f}' for k, s in scores.items())}) | "
              f"{held.sum()} runs: {_lmae(med[best][held], true[held]):.3f}, "
              f"{_lmae(med[MAX_RUNS][held], true[held]):.3f}, "
              f"{paired_diff_text(med[best][held], med[MAX_RUNS][held], true[held], g)}; "
              f"changed {ch.sum()}: "
              + (f"{_lmae(med[best][ch], true[ch]):.3f}, {_lmae(med[MAX_RUNS][ch], true[ch]):.3f}, "
                 f"{paired_diff_text(med[best][ch], med[MAX_RUNS][ch], true[ch], gc)}" if ch.any() else "-"))
    print(f"\nall folds, each with its own pick: warm {_lmae(picked, true):.3f} vs "
          f"{_lmae(med[MAX_RUNS], true):.3f}, {paired_diff_text(picked, med[MAX_RUNS], true, groups)}")
    if changed.any():
        gc = [groups[i] for i in np.flatnonzero(changed)]
        print(f"  workflow changed: {_lmae(picked[changed], true[changed]):.3f} vs "
              f"{_lmae(med[MAX_RUNS][changed], true[changed]):.3f}, "
              f"{paired_diff_text(picked[changed], med[MAX_RUNS][changed], true[changed], gc)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
