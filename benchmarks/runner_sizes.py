"""Which runners the labeled runs ran on: the evidence a predictor has for runner sizes.

For every labeled run with a runtime, each job instance of its workflow (matrix expanded,
as ``laser-ci estimate`` reads it) has its ``runs-on`` resolved the way the sizing advice
resolves it (:func:`laser_ci.sizing.runners.resolve_runner`). Prints how many job instances,
and how many runs (a run counts once per kind and size it used), fall on each runner kind
and core count. The figure behind :func:`laser_ci.predictors.base.predicts_runner_sizes`:
a model trained on runs that are nearly all on one size per OS cannot say how a job
scales with cores. Then what that does to a shipped predictor (``--model``, default
``model/baselines``, its default predictor): the bundled example's jobs
(``examples/demo``), cold, re-serialized on each of ``--labels``, and the median ratio of
their p50 to the p50 on the job's own runner (the figures the sizing advice quoted as
predictions before :func:`laser_ci.predictors.base.predicts_runner_sizes`).

    python benchmarks/runner_sizes.py [--data ../shared/data/gha-runs] [--model DIR]
        [--labels ubuntu-latest-4-cores,ubuntu-latest-8-cores,ubuntu-latest-16-cores]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.predictors.choice import load_predictor  # noqa: E402
from laser_ci.sizing.runners import resolve_runner  # noqa: E402
from laser_ci.text.history import seconds_of  # noqa: E402
from laser_ci.text.serialize import serialize_job  # noqa: E402
from laser_ci.training.examples import load_blobs, load_runs, run_files  # noqa: E402
from laser_ci.workflows.parse import DiskFiles, read_workflows, workflow_targets  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def runner_key(runs_on: object, matrix: dict | None) -> tuple[str, str, str]:
    """(kind, OS, cores) of a job's runner; "?" where the label does not tell."""
    r = resolve_runner(runs_on, matrix)
    return r.kind, r.os or "?", str(r.cores) if r.cores else "?"


def count(data: str) -> tuple[Counter, Counter, int]:
    runs = [r for r in load_runs(data) if seconds_of(r.get("run_time_s")) is not None]
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


def size_ratios(model: str | None, labels: list[str]) -> tuple[str, int, dict[str, float]]:
    """(predictor name, jobs, median p50 ratio per label) over the example's Linux jobs."""
    demo = ROOT / "examples" / "demo"
    targets, _ = workflow_targets([str(demo / ".github" / "workflows")], demo)
    workflows, _ = read_workflows(DiskFiles(demo), targets)
    jobs = [(j, wf) for wf in workflows for j in wf.jobs
            if resolve_runner(j.runs_on, j.matrix).os == "linux"]
    predictor = load_predictor(model)
    own = [r.p50 for r in predictor.predict([serialize_job(j, wf, None) for j, wf in jobs])]
    ratios = {}
    for label in labels:
        texts = [serialize_job(replace(j, runs_on=label), wf, None) for j, wf in jobs]
        got = [r.p50 for r in predictor.predict(texts)]
        ratios[label] = statistics.median(g / o for g, o in zip(got, own, strict=True))
    return predictor.name, len(jobs), ratios


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"
                                          / "gha-runs"))
    ap.add_argument("--model", help="model folder (default: the shipped default predictor)")
    ap.add_argument("--labels", default="ubuntu-latest-4-cores,ubuntu-latest-8-cores,"
                    "ubuntu-latest-16-cores")
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
    name, n_jobs, ratios = size_ratios(args.model, args.labels.split(","))
    print(f"\n{name}, the example's {n_jobs} Linux jobs, cold: median p50 on a label / p50 on "
          "the job's own runner")
    for label, ratio in ratios.items():
        print(f"  {label:28s} {ratio:.3f}")


if __name__ == "__main__":
    main()
