"""Job coverage on a large repository's shape: how many job names are predicted under their
exact name, and how close the per-job predictions are.

The repository is the ``runtime-matrix`` fixture (``tests/fixtures/repos/runtime-matrix``:
~50 test shards per run from a matrix a script computes at run time, reusable workflows
nested three deep, workflows that only run when called) with a history invented by
``tests/runtime_history.py`` in the format ``laser-ci collect`` writes (per-job times).
The first ``--history-days`` days are the history given to ``laser-ci estimate --history``;
the days after are "the next week", whose per-job medians are the truth.

Printed:

- the share of the job names of the history's latest run predicted under their exact name,
  with history (run-time matrices expanded) and without it (names known from the files);
- the share of the next week's job names predicted under their exact name;
- per-job log-MAE (|ln p50 - ln next-week median|, seconds clipped to >= 1) of the
  history-aware prediction beside the per-name history median (the median of that name's
  last 20 runs), on the names both predict, and of the cold-start prediction on the names
  it can match.

With ``--data-dir`` (the shared ``gha-runs`` folder, read in place, never copied), also
how many labeled workflow files there compute a matrix at run time and how many table rows
of theirs show a raw ``${{ }}`` (the data set has no per-job times, so per-job coverage
cannot be measured there).

    python benchmarks/job_coverage.py [--predictor default|median] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import runtime_history as rh  # noqa: E402

from laser_ci.estimate import estimate_paths, load_history  # noqa: E402
from laser_ci.predictors.base import Runtime  # noqa: E402
from laser_ci.text.history import MAX_RUNS, HistoryIndex  # noqa: E402


class HistoryMedian:
    """The per-name history median as a predictor (cold: one global guess)."""

    name = "history-median"

    def predict(self, texts: list[str]) -> list[Runtime]:
        from laser_ci.text.history import parse_history

        out = []
        for t in texts:
            h = parse_history(t)
            p50 = h["median"] if h else 300.0
            out.append(Runtime(p50 / 2, p50, p50 * 2))
        return out


def _log_err(pred: float, true: float) -> float:
    return abs(math.log(max(pred, 1.0)) - math.log(max(true, 1.0)))


def _predicted(result: dict[str, Any]) -> dict[str, float]:
    return {j["name"]: j["runtime_s"]["p50"] for w in result["workflows"]
            if w["path"] == rh.WORKFLOW for j in w["jobs"]}


def _medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    times: dict[str, list[float]] = {}
    for run in runs:
        for job in run["jobs"]:
            if job["run_time_s"] > 0:
                times.setdefault(job["name"], []).append(job["run_time_s"])
    return {n: statistics.median(v) for n, v in times.items()}


def fixture(predictor: Any, days: float, history_days: float, runs_per_day: int) -> None:
    runs = rh.make_runs(days=days, runs_per_day=runs_per_day, split_day=history_days - 0.5)
    past = [r for r in runs if r["commit_date"] < _stamp(history_days)]
    future = [r for r in runs if r["commit_date"] >= _stamp(history_days)]
    workflows = str(rh.ROOT / ".github" / "workflows")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        index = load_history(rh.write_folder(Path(tmp) / "collected", past))
        warm = estimate_paths([workflows], repo_root=str(rh.ROOT), predictor=predictor,
                              history=index)
        elapsed = time.perf_counter() - t0
    static = HistoryIndex(jobs=index.jobs, workflows=index.workflows, source=index.source)
    unexpanded = estimate_paths([workflows], repo_root=str(rh.ROOT), predictor=predictor,
                                history=static)  # the history without the runs' job lists
    cold = estimate_paths([workflows], repo_root=str(rh.ROOT), predictor=predictor)

    latest = rh.latest_names(past)
    got, got_static = _predicted(warm), _predicted(unexpanded)
    truth = _medians(future)
    print(f"fixture: {len(past)} runs of history ({history_days:g} days), {len(future)} runs "
          f"after; {len(latest)} jobs in the latest run, {len(truth)} job names after")
    print(f"  latest run's job names predicted under their exact name: "
          f"{_share(latest, got)} with history (run-time matrices expanded); "
          f"{_share(latest, got_static)} from the workflow files' names alone")
    print(f"  next week's job names predicted under their exact name: {_share(truth, got)} "
          f"(from the files' names alone: {_share(truth, got_static)})")

    hist_median = {}
    for name in truth:
        past_runs = index.for_job(rh.WORKFLOW, name)
        if past_runs is not None and past_runs.runtimes:
            hist_median[name] = statistics.median(past_runs.runtimes[-MAX_RUNS:])
    both = [n for n in truth if n in got and n in hist_median]
    ours = [_log_err(got[n], truth[n]) for n in both]
    base = [_log_err(hist_median[n], truth[n]) for n in both]
    print(f"  per-job log-MAE on the {len(both)} names both predict: "
          f"{predictor.name} with history {statistics.mean(ours):.3f}, "
          f"per-name history median {statistics.mean(base):.3f}")
    only_ours = [n for n in truth if n in got and n not in hist_median]
    if only_ours:
        errs = [_log_err(got[n], truth[n]) for n in only_ours]
        print(f"  names without a history of their own ({len(only_ours)}, predicted from "
              f"their siblings): log-MAE {statistics.mean(errs):.3f}")
    cold_got = _predicted(cold)
    cold_names = [n for n in truth if n in cold_got]
    if cold_names:
        errs = [_log_err(cold_got[n], truth[n]) for n in cold_names]
        print(f"  cold start (no history): {len(cold_names)} names matched, "
              f"log-MAE {statistics.mean(errs):.3f}")
    print(f"  estimate with history: {elapsed:.2f} s for {len(got)} jobs (history read included)")


def _stamp(day: float) -> str:
    from datetime import timedelta

    return (rh.START + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _share(names: Any, predicted: dict[str, float]) -> str:
    names = list(names)
    hit = sum(1 for n in names if n in predicted)
    return f"{hit}/{len(names)} ({100 * hit / max(len(names), 1):.0f}%)"


def data_set(data_dir: str) -> None:
    """Labeled workflows of a gha-runs folder with a matrix computed at run time."""
    from laser_ci.estimate import estimate_files
    from laser_ci.report.render import render
    from laser_ci.training.examples import load_blobs, load_runs
    from laser_ci.workflows.parse import read_workflows

    runs = load_runs(data_dir)
    blobs = load_blobs(data_dir)
    seen: set[tuple[str, str]] = set()
    files_n = dynamic = rows = raw = 0
    predictor = HistoryMedian()
    for run in runs:
        path = run["workflow_path"]
        key = (run["repo"], run["files"].get(path, ""))
        if key in seen:
            continue
        seen.add(key)
        files = {p: blobs[b] for p, b in run["files"].items() if b in blobs}
        if "${{" not in files.get(path, ""):
            continue
        files_n += 1
        workflows, _ = read_workflows(files, [path])
        if not any(j.dynamic_matrix for w in workflows for j in w.jobs):
            continue
        dynamic += 1
        table = render(estimate_files(files, [path], predictor=predictor), "table")
        body = [line for line in table.splitlines() if line.startswith("  ")
                and not line.lstrip().startswith(("note:", "advice", "critical path", "job "))]
        rows += len(body)
        raw += sum(1 for line in body if "${{" in line)
    print(f"{data_dir}: {len(seen)} distinct labeled workflow files, {dynamic} with a matrix "
          f"computed at run time ({files_n} use expressions at all); their tables: {rows} "
          f"rows, {raw} showing a raw ${{{{ }}}}. No per-job times in this data set: per-job "
          "coverage is measured on the fixture only.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--predictor", choices=["default", "median"], default="default",
                    help="default: the shipped model (laser_ci.predictors.choice); median: "
                         "the per-name history median itself")
    ap.add_argument("--days", type=float, default=28)
    ap.add_argument("--history-days", type=float, default=21)
    ap.add_argument("--runs-per-day", type=int, default=2)
    ap.add_argument("--data-dir", help="also look at a gha-runs folder (read in place)")
    args = ap.parse_args()
    if args.predictor == "default":
        from laser_ci.predictors.choice import load_predictor

        predictor = load_predictor()
    else:
        predictor = HistoryMedian()
    fixture(predictor, args.days, args.history_days, args.runs_per_day)
    if args.data_dir:
        data_set(args.data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
