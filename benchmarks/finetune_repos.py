"""``laser-ci finetune`` on single repositories never seen in training: before and after.

    python benchmarks/finetune_repos.py --model model/lm --data ../shared/data/gha-runs \
        [--repo owner/name ...] [--epochs 5]

For each repository (default: five validation repositories with the most runs), writes its
runs and blobs to a temporary folder in the ``gha-runs`` format (what ``laser-ci collect``
writes), fine-tunes the model on the earliest 80% of its runs and tests on the latest 20%
(:func:`laser_ci.training.finetune.run_finetune`). Prints one row per repository: examples, the
shipped model's log-MAE on the test runs before and after fine-tuning (texts with the
history block, as in use), the median of each test run's earlier runs (the peers'
method) on the same runs, and the wall time.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.training.example import split_of
from laser_ci.training.examples import load_blobs, load_examples, load_runs
from laser_ci.training.finetune import FINETUNE_CONFIG, run_finetune  # noqa: E402


def write_repo(data: str, repo: str, runs: list[dict], out: Path) -> Path:
    mine = [r for r in runs if r.get("repo") == repo]
    blobs = load_blobs(data, {b for r in mine for b in (r.get("files") or {}).values()})
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("runs", mine), ("blobs", [{"id": k, "text": v} for k, v in blobs.items()])):
        with gzip.open(out / f"{name}.jsonl.gz", "wt", encoding="utf-8") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)
    return out


def history_median_mae(folder: Path) -> float:
    """log-MAE of the earlier runs' median on the latest 20% of runs (those with history)."""
    ex = [e for e in load_examples(folder, cache=False) if e.runtime_s > 0]
    runs = sorted({(e.commit_date, e.run_id) for e in ex})
    cut = runs[int(len(runs) * 0.8)]
    test = [e for e in ex if (e.commit_date, e.run_id) >= cut and e.history is not None]
    if not test:
        return float("nan")
    y = np.log(np.maximum([e.runtime_s for e in test], 1.0))
    p = np.log(np.maximum([e.history.median for e in test], 1.0))
    return float(np.abs(p - y).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="model/lm")
    ap.add_argument("--data", default="../shared/data/gha-runs")
    ap.add_argument("--repo", action="append", default=None)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    runs = load_runs(args.data)
    repos = args.repo
    if not repos:
        counts = collections.Counter(str(r.get("repo")) for r in runs
                                     if split_of(str(r.get("repo"))) == "val")
        repos = [r for r, _ in counts.most_common(5)]
    cfg = replace(FINETUNE_CONFIG, epochs=args.epochs, threads=args.threads,
                  max_val_decode=10_000)
    print(f"{'repository':36} {'train/test':>10} {'before':>7} {'after':>7} "
          f"{'history median':>14} {'seconds':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for repo in repos:
            folder = write_repo(args.data, repo, runs, Path(tmp) / repo.replace("/", "__"))
            t = time.perf_counter()
            log = run_finetune(folder, args.model, Path(tmp) / "out", cfg, device="cpu")
            secs = time.perf_counter() - t
            print(f"{repo:36} {log['data']['train']:>4}/{log['data']['val']:<5} "
                  f"{log['eval_before']['log_mae']:7.2f} {log['eval']['int8']['log_mae']:7.2f} "
                  f"{history_median_mae(folder):14.2f} {secs:7.0f}", flush=True)


if __name__ == "__main__":
    main()
