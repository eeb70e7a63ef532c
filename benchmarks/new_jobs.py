"""Jobs a repository has not run yet (issue 49): the evidence the estimate predicts them
from against the cold prediction, per subset ("new instance", "new job", "new workflow in
a known repository"), successful runs first, with paired 95% intervals; and jobs with
history, the default against the median of their earlier successful runs.

    python benchmarks/new_jobs.py [--data ../shared/data/gha-runs]
        [--depth ../shared/data/depth/iree-org+iree ...] [--test-days 3]
        [--holdout names --holdout workflows] [--refit] [--write-bands] [--shipped-bands]
        [--json runs/new_jobs.json]

The protocols are :mod:`laser_ci.evaluation.new_jobs`'s. The shared runs: the val
repositories (never seen by the shipped cold model), bands cross-validated by repository.
The depth data: the last ``--test-days`` days as test, the history the runs before them,
job names (or whole workflows) held out of it in five groups; the bands of the test days
calibrated on the same protocol one window earlier. ``--write-bands`` writes
``model/baselines/evidence_bands.json``: per source the quantiles of every residual measured
here (successful runs; both windows of the depth data, the shared runs' val repositories,
or with ``--refit`` all of them: the shipped bands are ``--refit``'s, since the
``repository`` source counts only where alike workflows ran, 57 runs of 8 val
repositories), each repository weighing the same; the own runs' bands there (``own``,
``own/<n>``) are ``benchmarks/own_runs.py``'s and are kept.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.evaluation.evaluate import json_safe  # noqa: E402
from laser_ci.evaluation.new_jobs import GHA_HELD, depth_report, gha_rows, table  # noqa: E402
from laser_ci.predictors.choice import load_predictor  # noqa: E402
from laser_ci.predictors.evidence_bands import band_offsets, default_file, write_offsets  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


def shipped(folder: str, predictor, test_days: float, holdout: str) -> None:
    from laser_ci.evaluation.new_jobs import depth_rows, summarize
    from laser_ci.predictors.evidence_bands import load_offsets

    rows = depth_rows(folder, predictor, test_days=test_days, holdout=holdout,
                      offsets=load_offsets(), own=False)
    for source in ("siblings", "workflow", "repository", "same"):
        sub = [r for r in rows if r.source == source and r.success]
        if sub:
            s = summarize(sub)
            print(f"{Path(folder).name}, {holdout} held out, shipped bands, {source}: "
                  f"{len(sub)} successful runs, coverage {s['coverage']:.0%}, "
                  f"p90/p10 {s['width']:.1f}×")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(SHARED / "gha-runs"),
                    help="the shared runs ('' to skip)")
    ap.add_argument("--depth", action="append", default=None,
                    help="a per-job history folder (repeatable; default: every folder of "
                         "../shared/data/depth; '' for none)")
    ap.add_argument("--test-days", type=float, default=3.0)
    ap.add_argument("--holdout", action="append", choices=["names", "workflows"], default=None)
    ap.add_argument("--write-bands", action="store_true")
    ap.add_argument("--refit", action="store_true",
                    help="the shared runs: every repository, cold predictions by tabular "
                         "trained on the other folds (minutes per fold) instead of the "
                         "shipped model on the val repositories")
    ap.add_argument("--shipped-bands", action="store_true",
                    help="the depth folders' last days with the shipped bands "
                         "(model/baselines/evidence_bands.json) instead of the earlier "
                         "window's: the coverage a user gets (iree's residuals are among "
                         "those the shipped bands were taken from)")
    ap.add_argument("--json", default=None, help="write the figures here")
    args = ap.parse_args()
    holdouts = args.holdout or ["names", "workflows"]
    depth = [d for d in args.depth if d] if args.depth is not None else sorted(
        str(p) for p in (SHARED / "depth").iterdir() if (p / "runs.jsonl.gz").is_file())
    predictor = load_predictor()
    print(f"predictor: {predictor.name}\n")
    figures: dict[str, object] = {}
    residuals: dict[str, dict[str, list[float]]] = {}  # source -> repository -> residuals

    def keep(rows, repo: str | None = None) -> None:
        """``repo``: the depth folder's (its rows are grouped by job name); else each
        row's group, the repository of a shared run."""
        for r in rows:
            if r.success and r.source in ("siblings", "workflow", "repository", "same"):
                residuals.setdefault(r.source, {}).setdefault(repo or r.group, []).append(
                    math.log(r.truth) - math.log(max(r.pred[1], 1.0)))

    if args.data:
        t0 = time.time()
        rows = gha_rows(args.data, predictor, refit=args.refit)
        keep(rows)
        which = ("every repository, cold from each fold's own tabular" if args.refit
                 else "val repositories, cold from the shipped model")
        text, figs = table(rows, f"{Path(args.data).name}: each run as a workflow new to its "
                                 f"repository ({which}; bands cross-validated by repository)",
                            held=GHA_HELD)
        print(text)
        print(f"({time.time() - t0:.0f} s)\n")
        figures["gha"] = figs
    for folder in depth:
        for holdout in holdouts:
            if args.shipped_bands:
                shipped(folder, predictor, args.test_days, holdout)
                continue
            t0 = time.time()
            early, rows, offsets = depth_report(folder, predictor, test_days=args.test_days,
                                                holdout=holdout)
            keep(early, Path(folder).name)
            keep(rows, Path(folder).name)
            name = Path(folder).name
            text, figs = table(rows, f"{name}: last {args.test_days:g} days, {holdout} held "
                                     f"out of the history (bands from the {args.test_days:g} "
                                     "days before)")
            print(text)
            print(f"offsets from the earlier window: "
                  f"{ {k: (round(a, 3), round(b, 3)) for k, (a, b) in offsets.items()} }")
            print(f"({time.time() - t0:.0f} s)\n")
            figures[f"{name}/{holdout}"] = {"offsets": offsets, **figs}
    if args.write_bands:
        from laser_ci.predictors.evidence_bands import load_offsets

        # each repository counts once: a residual weighs 1 / (its repository's residuals)
        offsets = {s: band_offsets([x for r in by.values() for x in r],
                                   weights=[1 / len(r) for r in by.values() for _x in r])
                   for s, by in residuals.items() if sum(map(len, by.values())) >= 20}
        # the own runs' bands are benchmarks/own_runs.py's: kept as they are
        old = json.loads(default_file().read_text(encoding="utf-8")).get("info", {})
        offsets.update({k: v for k, v in load_offsets().items() if k.startswith("own")})
        info = {s: {"n": {d: len(r) for d, r in by.items()}} for s, by in residuals.items()}
        if "own" in old:
            info["own"] = old["own"]
        info["command"] = ("python benchmarks/new_jobs.py --write-bands"
                           + (" --refit" if args.refit else ""))
        info["from"] = ("successful runs: the shared runs' "
                        + ("repositories, each fold's cold prediction by tabular fit on the "
                           "others," if args.refit else "val repositories")
                        + " (repository) and both windows of each depth folder's held-out "
                          "jobs; each repository weighs the same")
        write_offsets(default_file(), offsets, info)
        print(f"wrote {default_file()}: {offsets}")
    if args.json:
        Path(args.json).write_text(json.dumps(json_safe(figures), indent=1) + "\n")


if __name__ == "__main__":
    main()
