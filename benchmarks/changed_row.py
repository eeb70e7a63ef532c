"""What else the runs whose workflow file changed since the previous run can be predicted
from: four references that use no model, against the median of the last 20 earlier runs.

The warm-changed row of ``laser-ci eval --history prior`` (issue #13: the language model's
interval against the history median there must lie below zero). For every labeled example
with earlier runs (causal history, as ``eval --history prior`` builds it):

1. **Same configuration before.** How many changed runs have an earlier run (of the last
   20) whose workflow file had the same blob, and the median of those runs against the
   history median on them.
2. **By conclusion.** The changed row's log-MAE of the history median and of the recent
   median (the last ``RECENT_RUNS``, the warm reference the shipped model states), split by
   the run's final conclusion.
3. **Outcome persistence.** The median of the last ``k`` earlier runs that ended the way
   the latest earlier run ended (a run ends like its predecessor more often than not),
   ``k`` picked per held-out fold on the other folds.
4. **Blend with the tabular model** (only with ``--predictions``, the file
   ``laser-ci eval --folds N --history prior --predictor tabular --predictions FILE``
   writes: out-of-fold tabular p50s). ``median^(1-w) * tabular^w``, ``w`` picked per
   held-out fold on the other folds' changed runs.

Every difference is paired against the history median on the same runs, with the 95%
interval of a bootstrap over repositories (:func:`laser_ci.training.metrics.paired_log_mae_diff`).

    python benchmarks/changed_row.py [--data ../shared/data/gha-runs] [--folds 5]
        [--predictions runs/base_workflow.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.text.history import MAX_RUNS, RECENT_RUNS  # noqa: E402
from laser_ci.training.examples import load_examples, load_runs, workflow_blobs  # noqa: E402
from laser_ci.training.folds import fold_of  # noqa: E402
from laser_ci.training.history import history_key, parse_time  # noqa: E402
from laser_ci.training.metrics import log_mae as _lmae  # noqa: E402
from laser_ci.training.metrics import paired_diff_text  # noqa: E402

PERSIST_K = (1, 3, 5, 10, MAX_RUNS)
BLEND_W = (0.0, 0.1, 0.2, 0.3, 0.5)


Run = tuple[float, str, str | None]  # runtime, conclusion, workflow blob


def earlier_runs(examples: Sequence, blobs: dict[str, str | None]) -> list[list[Run]]:
    """Per example: its earlier runs as ``(runtime, conclusion, blob)``, oldest first, the
    last ``MAX_RUNS`` of them: the same rule as :func:`laser_ci.training.history.causal_histories`
    (strictly earlier commit date, one example per run)."""
    groups: dict[tuple, list[tuple[float, str, int]]] = {}
    for i, e in enumerate(examples):
        when = parse_time(e.commit_date)
        if when is not None and e.runtime_s > 0:
            groups.setdefault(history_key(e), []).append((when, e.run_id, i))
    out: list[list[Run]] = [[] for _ in examples]
    for members in groups.values():
        members.sort()
        for when, _, i in members:
            first_of_run: dict[str, int] = {}  # run id -> its first example strictly before ``when``
            for w, run, p in members:
                if w < when:
                    first_of_run.setdefault(run, p)
            past = list(first_of_run.values())  # oldest first: members are sorted
            out[i] = [(examples[p].runtime_s, examples[p].conclusion,
                       blobs.get(examples[p].run_id)) for p in past[-MAX_RUNS:]]
    return out


def persistence_median(runs: list[Run], k: int) -> float:
    """The median of the last ``k`` earlier runs that ended as the latest one did."""
    last = runs[-1][1]
    same = [r for r, c, _ in runs if c == last][-k:]
    return float(np.median(same))


def pick_per_fold(cands: dict, true: np.ndarray, folds: np.ndarray, mask: np.ndarray,
                  n_folds: int) -> tuple[np.ndarray, list]:
    """Per held-out fold, the candidate with the lowest log-MAE on the other folds' ``mask``
    rows, applied to the held-out fold; returns the picked predictions and the picks."""
    picked = np.zeros(len(true))
    picks = []
    for f in range(n_folds):
        train, held = (folds != f) & mask, folds == f
        if not held.any():
            continue
        best = min(cands, key=lambda c: (_lmae(cands[c][train], true[train]), c))
        picked[held] = cands[best][held]
        picks.append(best)
    return picked, picks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"
                                          / "gha-runs"))
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--predictions", help="eval --predictions file with out-of-fold tabular rows")
    args = ap.parse_args(argv)
    every = load_examples(args.data, kinds=("workflow",))
    blobs = workflow_blobs(load_runs(Path(args.data)))
    runs_before = earlier_runs(every, blobs)
    idx = [i for i, e in enumerate(every) if e.history is not None and e.runtime_s > 0]
    if not idx:
        print(f"{args.data}: no workflow examples with earlier runs", file=sys.stderr)
        return 1
    ex = [every[i] for i in idx]
    before = [runs_before[i] for i in idx]
    mismatch = sum(abs(np.median([r for r, _, _ in b]) - e.history.median) > 1e-6
                   for e, b in zip(ex, before, strict=True))
    true = np.array([e.runtime_s for e in ex])
    groups = [e.repo for e in ex]
    folds = np.array([fold_of(e.repo, args.folds) for e in ex])
    changed = np.array([bool(e.changed) for e in ex])
    warm = np.ones(len(ex), dtype=bool)
    med = np.array([e.history.median for e in ex])
    recent = np.array([float(np.median(e.history.runtimes[-RECENT_RUNS:])) for e in ex])
    print(f"workflow runs with earlier runs: {len(ex)}, {int(changed.sum())} where the workflow "
          f"changed ({mismatch} whose rebuilt earlier runs disagree with the history line)")
    ch = np.flatnonzero(changed)
    gch = [groups[i] for i in ch]

    print("\n1. an earlier run (of the last 20) with the same workflow blob as this run:")
    same = [i for i in ch if any(b is not None and b == blobs.get(ex[i].run_id)
                                 for _, _, b in before[i])]
    print(f"   {len(same)} of {len(ch)} changed runs", end="")
    if same:
        s = np.array(same)
        same_med = np.array([np.median([r for r, _, b in before[i] if b == blobs.get(ex[i].run_id)])
                             for i in same])
        print(f": median of those runs {_lmae(same_med, true[s]):.3f} vs history median "
              f"{_lmae(med[s], true[s]):.3f}")
    else:
        print()

    print("\n2. changed runs by final conclusion: runs | history median | recent median "
          f"(last {RECENT_RUNS})")
    for c, n in Counter(ex[i].conclusion for i in ch).most_common():
        s = np.array([i for i in ch if ex[i].conclusion == c])
        print(f"   {c}: {n} | {_lmae(med[s], true[s]):.3f} | {_lmae(recent[s], true[s]):.3f}")
    q = np.quantile(np.log(np.maximum(true[ch], 1)) - np.log(np.maximum(med[ch], 1)),
                    [0.1, 0.25, 0.5, 0.75, 0.9])
    print("   log(true / history median), p10 p25 p50 p75 p90: " + " ".join(f"{v:+.2f}" for v in q))

    print("\n3. median of the last k earlier runs that ended as the latest earlier run did")
    agree = np.mean([ex[i].conclusion == before[i][-1][1] for i in range(len(ex))])
    agree_ch = np.mean([ex[i].conclusion == before[i][-1][1] for i in ch])
    print(f"   a run ends as the latest earlier run did: {agree:.0%} of warm runs, "
          f"{agree_ch:.0%} of changed runs")
    pers = {k: np.array([persistence_median(b, k) for b in before]) for k in PERSIST_K}
    for k in PERSIST_K:
        print(f"   k={k}: warm {_lmae(pers[k], true):.3f} ({paired_diff_text(pers[k], recent, true, groups)} "
              f"vs recent), changed {_lmae(pers[k][ch], true[ch]):.3f} "
              f"({paired_diff_text(pers[k][ch], med[ch], true[ch], gch)} vs history median)")
    picked, picks = pick_per_fold(pers, true, folds, warm, args.folds)
    print(f"   k picked per fold on the other folds' warm runs {picks}: warm "
          f"{_lmae(picked, true):.3f} vs recent {_lmae(recent, true):.3f}, "
          f"{paired_diff_text(picked, recent, true, groups)}; changed {_lmae(picked[ch], true[ch]):.3f} vs "
          f"history median {_lmae(med[ch], true[ch]):.3f}, "
          f"{paired_diff_text(picked[ch], med[ch], true[ch], gch)}")

    if args.predictions:
        tab: dict[str, float] = {}
        with open(args.predictions, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row.get("predictor") == "tabular":
                    tab[row["key"]] = float(row["prior"][1])
        keys = [f"{e.repo}|{e.workflow_path}|{e.kind}|{e.job_name or ''}|{e.run_id}" for e in ex]
        have = np.array([k in tab for k in keys])
        print(f"\n4. history median^(1-w) * out-of-fold tabular p50^w ({int(have.sum())} of "
              f"{len(ex)} warm runs have a tabular prediction)")
        if have.any():
            tb = np.array([tab.get(k, 1.0) for k in keys])
            for name, ref in (("history median", med), ("recent median", recent)):
                cands = {w: np.exp((1 - w) * np.log(np.maximum(ref, 1)) + w * np.log(np.maximum(tb, 1)))
                         for w in BLEND_W}
                m = have & changed
                gm = [groups[i] for i in np.flatnonzero(m)]
                for w in BLEND_W:
                    print(f"   {name}, w={w}: changed {_lmae(cands[w][m], true[m]):.3f}, "
                          f"{paired_diff_text(cands[w][m], med[m], true[m], gm)}"
                          " vs history median")
                picked, picks = pick_per_fold(cands, true, folds, m, args.folds)
                print(f"   {name}, w picked per fold on the other folds' changed runs {picks}: "
                      f"changed {_lmae(picked[m], true[m]):.3f}, "
                      f"{paired_diff_text(picked[m], med[m], true[m], gm)}"
                      " vs history median")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
