"""Which runners the labeled runs ran on: the evidence a predictor has for runner sizes.

For every labeled run with a runtime, each job instance of its workflow (matrix expanded,
as ``laser-ci estimate`` reads it) has its ``runs-on`` resolved the way the sizing advice
resolves it (:func:`laser_ci.sizing.runners.resolve_runner`). Prints how many job instances,
and how many runs (a run counts once per kind and size it used), fall on each runner kind
and core count. The figure behind :func:`laser_ci.predictors.base.predicts_runner_sizes`:
a model trained on runs that are nearly all on one size per OS cannot say how a job
scales with cores.

    python benchmarks/runner_sizes.py [--data ../shared/data/gha-runs]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.sizing.runners import resolve_runner  # noqa: E402
from laser_ci.training.examples import _runtime, load_blobs, load_runs, run_files  # noqa: E402
from laser_ci.workflows.parse import read_workflows  # noqa: E402


def runner_key(runs_on: object, matrix: dict | None) -> tuple[str, str, str]:
    """(kind, OS, cores) of a job's runner; "?" where the label does not tell."""
    r = resolve_runner(runs_on, matrix)
    return r.kind, r.os or "?", str(r.cores) if r.cores else "?"


def count(data: str) -> tuple[Counter, Counter, int]:
    runs = [r for r in load_runs(data) if _runtime(r.get("run_time_s")) > 0]
    blobs = load_blobs(data, {b for r in runs for b in (r.get("files") or {}).values()})
    jobs: Counter = Counter()
    per_run: Counter = Counter()
    for run in runs:
        path = run["workflow_path"]
        workflows, _ = read_workflows(run_files(run, blobs), [path])
        keys = {runner_key(j.runs_on, j.matrix) for wf in workflows for j in wf.jobs}
        for wf in workflows:
            jobs.update(runner_key(j.runs_on, j.matrix) for j in wf.jobs)
        per_run.update(keys or {("unread", "?", "?")})
    return jobs, per_run, len(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"
                                          / "gha-runs"))
    args = ap.parse_args()
    jobs, per_run, n = count(args.data)
    total = sum(jobs.values())
    print(f"{n} labeled runs with a runtime, {total} job instances")
    print(f"{'kind':14s} {'os':8s} {'cores':>5s} {'jobs':>7s} {'share':>7s} {'runs':>6s}")
    for key in sorted(set(jobs) | set(per_run), key=lambda k: -jobs.get(k, 0)):
        kind, os_, cores = key
        j = jobs.get(key, 0)
        print(f"{kind:14s} {os_:8s} {cores:>5s} {j:7d} {j / max(total, 1):7.1%} "
              f"{per_run.get(key, 0):6d}")


if __name__ == "__main__":
    main()
