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
5. **The tabular model's ratio** (only with a ``--predictions`` file whose rows carry the
   ``none`` column: out-of-fold tabular p50s without history, as ``benchmarks/one_fold.py
   --predictions`` writes them). ``recent median * (T(this run) / T(before))**w``: the
   tabular model reads the workflow file, so its ratio estimates what the change did and
   the recent median keeps the level. ``T(before)`` is T of the latest earlier run
   (``latest``) or the median of T over the last ``RECENT_RUNS`` earlier runs
   (``recent``); the form and ``w`` are picked per held-out fold on the other folds'
   changed runs, and the pick is paired against both the history and the recent median.

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


RATIO_W = (0.0, 0.25, 0.5, 0.75, 1.0)
RATIO_FORMS = ("latest", "recent")


Run = tuple[float, str, str | None, str]  # runtime, conclusion, workflow blob, run id


def earlier_runs(examples: Sequence, blobs: dict[str, str | None]) -> list[list[Run]]:
    """Per example: its earlier runs as ``(runtime, conclusion, blob, run id)``, oldest first, the
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
                       blobs.get(examples[p].run_id), examples[p].run_id)
                      for p in past[-MAX_RUNS:]]
    return out


def persistence_median(runs: list[Run], k: int) -> float:
    """The median of the last ``k`` earlier runs that ended as the latest one did."""
    last = runs[-1][1]
    same = [r[0] for r in runs if r[1] == last][-k:]
    return float(np.median(same))


def ratio_reference(recent: float, t_this: float, t_before: float, w: float) -> float:
    """``recent * (t_this / t_before) ** w``, every figure floored at 1 s as the metric
    floors runtimes; ``w = 0`` is the recent median itself."""
    return float(np.exp(np.log(max(recent, 1.0))
                        + w * (np.log(max(t_this, 1.0)) - np.log(max(t_before, 1.0)))))


def tabular_before(runs: list[Run], t: dict[str, float], form: str) -> float | None:
    """T(before): the tabular p50 of the latest earlier run (``latest``) or the median of
    those of the last ``RECENT_RUNS`` (``recent``); None when a run has no T."""
    ids = [r[3] for r in runs[-1 if form == "latest" else -RECENT_RUNS:]]
    if not ids or any(i not in t for i in ids):
        return None
    return float(np.median([t[i] for i in ids]))


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
    mismatch = sum(abs(np.median([r[0] for r in b]) - e.history.median) > 1e-6
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
    same = [i for i in ch if any(r[2] is not None and r[2] == blobs.get(ex[i].run_id)
                                 for r in before[i])]
    print(f"   {len(same)} of {len(ch)} changed runs", end="")
    if same:
        s = np.array(same)
        same_med = np.array([np.median([r[0] for r in before[i]
                                        if r[2] == blobs.get(ex[i].run_id)]) for i in same])
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
        cold: dict[str, float] = {}  # run id -> out-of-fold tabular p50 without history
        with open(args.predictions, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row.get("predictor") == "tabular":
                    tab[row["key"]] = float(row["prior"][1])
                    if row.get("none"):
                        cold[row["key"].rsplit("|", 1)[1]] = float(row["none"][1])
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
        ratio_row(ex, before, cold, recent, med, true, folds, changed, groups, args.folds)
    return 0


def ratio_row(ex: Sequence, before: list[list[Run]], cold: dict[str, float], recent: np.ndarray,
              med: np.ndarray, true: np.ndarray, folds: np.ndarray, changed: np.ndarray,
              groups: list[str], n_folds: int) -> None:
    """Section 5: the recent median times the tabular model's ratio, on the changed runs
    whose run and earlier runs all have a cold tabular p50."""
    print("\n5. recent median * (tabular p50 of this run / of the earlier runs)^w "
          f"({len(cold)} runs with a tabular p50 without history)")
    befores = {f: [tabular_before(b, cold, f) for b in before] for f in RATIO_FORMS}
    m = changed & np.array([e.run_id in cold and all(befores[f][i] is not None
                                                      for f in RATIO_FORMS)
                            for i, e in enumerate(ex)])
    print(f"   {int(m.sum())} of {int(changed.sum())} changed runs have them")
    if not m.any():
        return
    cands = {(f, w): np.array([ratio_reference(recent[i], cold[e.run_id], befores[f][i], w)
                               if m[i] else recent[i] for i, e in enumerate(ex)])
             for f in RATIO_FORMS for w in RATIO_W}
    gm = [groups[i] for i in np.flatnonzero(m)]
    ratio = np.array([cold[ex[i].run_id] / max(befores["latest"][i], 1.0)
                      for i in np.flatnonzero(m)])
    print(f"   T(this) / T(latest earlier run): {np.mean(np.abs(np.log(ratio)) < 1e-6):.0%} "
          "exactly 1; |log ratio| p50 p90 "
          + " ".join(f"{v:.3f}" for v in np.quantile(np.abs(np.log(ratio)), [0.5, 0.9])))
    for (f, w), c in cands.items():
        print(f"   {f}, w={w}: changed {_lmae(c[m], true[m]):.3f}, "
              f"{paired_diff_text(c[m], med[m], true[m], gm)} vs history median, "
              f"{paired_diff_text(c[m], recent[m], true[m], gm)} vs recent median")
    picked, picks = pick_per_fold(cands, true, folds, m, n_folds)
    print(f"   form and w picked per fold on the other folds' changed runs {picks}: changed "
          f"{_lmae(picked[m], true[m]):.3f} (history median {_lmae(med[m], true[m]):.3f}, "
          f"recent median {_lmae(recent[m], true[m]):.3f}); "
          f"{paired_diff_text(picked[m], med[m], true[m], gm)} vs history median, "
          f"{paired_diff_text(picked[m], recent[m], true[m], gm)} vs recent median")


if __name__ == "__main__":
    raise SystemExit(main())
