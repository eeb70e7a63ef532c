"""Time ``laser-ci estimate`` on a folder of 100 jobs, model load included, and its peak memory.

Builds a temporary repository whose workflows expand to exactly 100 job instances, then
runs the real CLI in a fresh process (so model loading is counted) a few times and prints
the wall time (median of the runs) and the peak resident memory; then, in this process, how
many texts each predictor call got and how long it took (the jobs, then the runtimes on
other runners that the sizing advice asks for).

    python benchmarks/estimate_100.py [--data ../shared/data/gha-runs] [--model DIR] [--repeat 5]
        [--runners ubuntu-slim,ubuntu-latest-4-cores] [--jobs 100] [--history DIR]

``--jobs 300 --model DIR`` is issue 53's check of a learned model folder (``laser-ci
finetune --out DIR``): loading it and predicting 300 jobs.

``--history DIR`` (a folder ``laser-ci collect`` wrote, such as a depth folder) times
``estimate --history DIR`` on that repository's latest workflow files (every job of them,
``--jobs`` aside): reading a busy repository's runs included.

With ``--data``, the workflows are real ones from that folder (distinct files taken in a
fixed order until 100 jobs); otherwise a synthetic matrix CI is used. Run it pinned to two
cores to match a GitHub runner: ``taskset -c 0,1 python benchmarks/estimate_100.py``.

How many other-runner runtimes the advice asks for depends on the predictions (short jobs
are asked on ``ubuntu-slim``, long ones on larger runners), so two models can differ there;
a predictor that does not claim to know runner sizes (none of the shipped ones:
:func:`laser_ci.predictors.base.predicts_runner_sizes`) is asked for none;
``--runners`` also times, in this process after the estimate, one call that predicts every
job on each of those labels, whatever the advice asked (the worst case the sizing can add).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the checkout this measures

SYNTHETIC = """name: CI {i}
on: [push, pull_request]
jobs:
  test:
    runs-on: ${{{{ matrix.os }}}}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        python: ["3.9", "3.10", "3.11", "3.12", "3.13"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{{{ matrix.python }}}}
      - run: |
          pip install -e ".[test]"
          pytest -n auto tests/ -k "not slow and shard{i}"
"""


def synthetic(root: Path, jobs: int = 100) -> None:
    wf = root / ".github" / "workflows"
    wf.mkdir(parents=True)
    for i in range(jobs // 10):  # workflows of 10 matrix instances each
        (wf / f"ci{i}.yml").write_text(SYNTHETIC.format(i=i), encoding="utf-8")


def from_data(root: Path, data_dir: str, jobs: int = 100) -> None:
    from laser_ci.training.examples import load_blobs, load_runs
    from laser_ci.workflows.parse import read_workflows

    runs = load_runs(data_dir)
    blobs = load_blobs(data_dir)
    wf_dir = root / ".github" / "workflows"
    wf_dir.mkdir(parents=True)
    total, seen = 0, set()
    for run in sorted(runs, key=lambda r: r["id"]):
        blob = run["files"].get(run["workflow_path"])
        if blob in seen or blob not in blobs:
            continue
        seen.add(blob)
        files = {p: blobs.get(b) for p, b in run["files"].items()}
        workflows, errors = read_workflows(files, [run["workflow_path"]])
        n = sum(len(w.jobs) for w in workflows)
        if errors or n == 0 or total + n > jobs or any(
                "./" in (s.uses or "") for w in workflows for j in w.jobs for s in j.steps):
            continue
        (wf_dir / f"wf{len(seen)}.yml").write_text(blobs[blob], encoding="utf-8")
        total += n
        if total == jobs:
            return
    raise SystemExit(f"could only collect {total} jobs from {data_dir}")


def from_history(root: Path, history: str) -> str:
    """The files of each workflow's latest run in the collected folder ``history``, written
    under ``root``; returns the repository (``owner/name``)."""
    from laser_ci.training.examples import load_blobs, load_runs

    runs = load_runs(history)
    latest = {r.get("workflow_path"): r for r in runs}  # the folder is in run order
    files = {p: b for r in latest.values() for p, b in (r.get("files") or {}).items()}
    blobs = load_blobs(history, set(files.values()))
    for path, blob in files.items():
        if blob in blobs:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(blobs[blob], encoding="utf-8")
    return str(runs[-1].get("repo") or "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="take real workflows from this data folder")
    ap.add_argument("--model", help="model folder (default: the shipped one)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=100,
                    help="job instances (a multiple of 10 for the synthetic CI) [100]")
    ap.add_argument("--runners", default="",
                    help="comma-separated runner labels: also time every job on each")
    ap.add_argument("--history", help="a collected folder: time `estimate --history` on "
                                      "its repository's latest workflows")
    args = ap.parse_args()

    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cmd = [sys.executable, "-m", "laser_ci", "estimate", str(root / ".github/workflows"),
               "--format", "json"]
        if args.history:
            cmd += ["--history", args.history, "--repo", from_history(root, args.history)]
        elif args.data:
            from_data(root, args.data, args.jobs)
        else:
            synthetic(root, args.jobs)
        if args.model:
            cmd += ["--model", args.model]
        # as an installed laser-ci runs: with its modules' bytecode (pip compiles it when it
        # installs; a PYTHONDONTWRITEBYTECODE shell would compile every module on every run)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["OMP_NUM_THREADS"] = "2"
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "laser_ci")],
                       check=False, env=env)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            times.append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                print(proc.stderr, file=sys.stderr)
                return 1
        result = json.loads(proc.stdout)
        calls = predictor_calls(root, args.model, [r for r in args.runners.split(",") if r],
                                args.history)
    jobs = sum(len(w["jobs"]) for w in result["workflows"])
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"predictor: {result['predictor']}")
    print(f"jobs estimated: {jobs}")
    print(f"cores available: {len(os.sched_getaffinity(0))}")
    print(f"wall time, model load included: median {statistics.median(times):.2f} s "
          f"(min {min(times):.2f}, max {max(times):.2f}, {len(times)} runs)")
    print(f"peak memory (max RSS of a run): {peak_mb:.0f} MB")
    print("predictor calls (one more run, in this process): " + ", ".join(
        f"{n} texts in {s:.2f} s" for n, s, _, _ in calls))
    for n, _, st, fwd in calls:
        if st is not None:  # the language model's decoding (laser_ci.predictors.decode)
            print(f"  {n} texts: {st.forward_passes} forward passes; {st.prefill_tokens} prompt "
                  f"tokens fed ({st.prefixes} shared prefixes computed), {st.shared_tokens} "
                  f"read from a shared prefix's cache; {st.step_tokens} tokens fed in the "
                  f"sampling steps; {fwd:.2f} s in the forward passes "
                  f"({1e6 * fwd / (st.prefill_tokens + st.step_tokens):.0f} µs "
                  f"per token fed)")
    return 0


def predictor_calls(root: Path, model: str | None, runners: list[str] | None = None,
                    history: str | None = None) -> list[tuple[int, float, Any, float]]:
    """(texts, seconds) of each predictor call of one estimate: the jobs' own predictions,
    then the runtimes on other runners that the sizing advice asks for; then, with
    ``runners``, one call for every job on each of those labels. The third item is the
    language model's decoding stats of the call (None for other predictors), the fourth
    the seconds spent in its forward passes. ``history``: a collected folder, read first
    (its time printed)."""
    from laser_ci.estimate import estimate_paths, load_history

    index = None
    if history:
        start = time.perf_counter()
        index = load_history(history)
        print(f"history read in this process: {time.perf_counter() - start:.2f} s")
    from laser_ci.predictors.choice import load_predictor

    start = time.perf_counter()
    predictor = load_predictor(model)
    print(f"model load in this process: {time.perf_counter() - start:.2f} s")
    calls: list[tuple[int, float, Any, float]] = []
    predict = predictor.predict
    decoder = getattr(predictor, "decoder", None)
    in_model = [0.0]  # seconds inside the language model's forward passes
    if decoder is not None:
        forward = decoder.forward

        def timed_forward(*args):
            t = time.perf_counter()
            out = forward(*args)
            in_model[0] += time.perf_counter() - t
            return out

        decoder.forward = timed_forward

    def timed(texts):
        start, in_model[0] = time.perf_counter(), 0.0
        out = predict(texts)
        calls.append((len(texts), time.perf_counter() - start,
                      getattr(predictor, "last_stats", None), in_model[0]))
        return out

    predictor.predict = timed  # type: ignore[method-assign]
    estimate_paths([str(root / ".github" / "workflows")], predictor=predictor, history=index)
    if runners:
        from dataclasses import replace

        from laser_ci.text.serialize import serialize_job
        from laser_ci.workflows.files import find_repo_root
        from laser_ci.workflows.parse import read_workflows
        from laser_ci.workflows.repo_profile import profile_dir

        top = find_repo_root(root / ".github" / "workflows")
        paths = sorted((root / ".github" / "workflows").glob("*.yml"))
        files = {str(p.relative_to(top)): p.read_text(encoding="utf-8") for p in paths}
        workflows, _ = read_workflows(files, list(files))
        profile = profile_dir(top)  # the texts as `estimate` writes them
        timed([serialize_job(replace(job, runs_on=label), wf, profile)
               for wf in workflows for job in wf.jobs for label in runners])
    return calls


if __name__ == "__main__":
    sys.exit(main())
