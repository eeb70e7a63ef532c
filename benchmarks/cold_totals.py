"""Three questions about the cold path (issue 49's "the job-level cold path has room too"),
measured; none changed the product (docs/accuracy.md, "The cold path").

``--totals``: a workflow run's billable time (the shared runs' label, the sum over its jobs)
as ``estimate`` gives it (the sum of its jobs' cold p50s, ``billable_s``) against the same
model's prediction from the workflow's own text, and their blends in log space, on the val
repositories (the shipped model was fit without them); runs of one job and of several,
successful runs and all. With ``--depth DIR`` also a depth folder: each job of its latest
workflow files predicted cold (no history) against the median of its successful runs, its
p50 moved by ``k`` times the workflow's gap (``ln workflow-level - ln sum of jobs``).

``--success-trained``: ``tabular`` (the shipped recipe's configuration) fit on every run or
on successful runs only, five folds by repository, scored on each held-out fold's
successful runs (the figure the comment answers) and on all of them.

``--corpus``: alike workflows of *other* repositories as lenders. Every successful
workflow run's cold prediction (each fold's own ``tabular``) shifted by
:func:`laser_ci.predictors.evidence.lent` (the shipped power and prior), the lenders each
workflow of the repositories the fold's model was fit on (their successful runs'
residuals against their own fold's model, words of their latest run): on every such run,
on the workflows new to a known repository (issue 49's done-when 1; the repository's
alike workflows first, as shipped, then the corpus instead of cold) and, with
``--depth DIR``, on a depth folder's jobs (each job of its latest files, cold, against
the median of its successful runs; every shared repository lends).

    python benchmarks/cold_totals.py --totals [--data ../shared/data/gha-runs]
        [--depth ../shared/data/depth/iree-org+iree]
    python benchmarks/cold_totals.py --success-trained [--data ../shared/data/gha-runs]
    python benchmarks/cold_totals.py --corpus [--data ../shared/data/gha-runs]
        [--depth ../shared/data/depth/iree-org+iree]
"""

from __future__ import annotations

import argparse
import collections
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from laser_ci.training.metrics import format_diff, paired_error_diff  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
BLENDS = (0.0, 0.25, 0.5, 0.75, 1.0)  # the workflow-level prediction's share, in log space


def _row(name: str, truth: np.ndarray, a: np.ndarray, b: np.ndarray, groups: list[str]) -> None:
    """log-MAE of each blend of ``a`` (k=0) and ``b`` (k=1), and b - a with its interval."""
    cells = " | ".join(f"{np.mean(np.abs(truth - ((1 - k) * a + k * b))):.3f}" for k in BLENDS)
    d = paired_error_diff(np.abs(truth - b), np.abs(truth - a), groups)
    print(f"| {name} | {len(truth):,} ({len(set(groups))}) | {cells} | {format_diff(d)} |")


def totals(data: str, depth: str | None) -> None:
    from laser_ci.estimate import estimate_files
    from laser_ci.predictors.choice import load_predictor
    from laser_ci.training.examples import load_blobs, load_examples, load_runs, run_files
    from laser_ci.workflows.model import RepoProfile

    predictor = load_predictor()
    examples = [e for e in load_examples(data, kinds=("workflow",), split="val", history=False)
                if e.runtime_s > 0]
    runs = {str(r.get("id")): r for r in load_runs(data)}
    blobs = load_blobs(data)
    whole = [p.p50 for p in predictor.predict([e.text for e in examples])]
    rows = []  # (repo, success, jobs, ln truth, ln sum of jobs, ln workflow-level)
    for e, w in zip(examples, whole, strict=True):
        run = runs[e.run_id]
        result = estimate_files(run_files(run, blobs), [e.workflow_path], predictor=predictor,
                                profile=RepoProfile.from_json(run.get("repo_profile")))
        wf = next((x for x in result["workflows"] if x["path"] == e.workflow_path), None)
        if wf is None or not wf["jobs"]:
            continue
        rows.append((e.repo, e.conclusion == "success", len(wf["jobs"]), math.log(e.runtime_s),
                     math.log(max(wf["billable_s"], 1.0)), math.log(max(w, 1.0))))
    print(f"**{Path(data).name}, val repositories: a run's billable time** ({len(rows):,} "
          f"runs; {predictor.name})\n")
    print("| runs | n (repos) | " + " | ".join(
        "sum of jobs" if k == 0 else "workflow text" if k == 1 else f"blend {k}"
        for k in BLENDS) + " | workflow text − sum [95%] |")
    print("|---|---:|" + "---:|" * len(BLENDS) + "---|")
    for name, keep in (("several jobs, successful", lambda r: r[2] > 1 and r[1]),
                       ("several jobs, all", lambda r: r[2] > 1),
                       ("one job, successful", lambda r: r[2] == 1 and r[1]),
                       ("one job, all", lambda r: r[2] == 1)):
        sub = [r for r in rows if keep(r)]
        if sub:
            t, a, b = (np.array([r[i] for r in sub]) for i in (3, 4, 5))
            _row(name, t, a, b, [r[0] for r in sub])
    if depth:
        _depth_jobs(depth, predictor)


def _latest_jobs(folder: str, predictor) -> tuple[list[tuple[str, str, float, str]],
                                                 dict[str, Any]]:
    """Each job of the depth folder's latest workflow files with successful runs: its
    workflow's path, its name, the ln median of those runs and its cold text; and those
    files (``workflows``, ``profile``) with ``estimate``'s ``result`` of them."""
    import tempfile

    from laser_ci.estimate import estimate_paths
    from laser_ci.text.serialize import serialize_job
    from laser_ci.training.examples import load_runs
    from laser_ci.workflows.parse import read_paths
    from laser_ci.workflows.repo_profile import profile_dir

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from estimate_100 import from_history

    job_times: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    for r in load_runs(folder):
        for j in r.get("jobs") or []:
            if isinstance(j, dict) and j.get("conclusion") == "success" and j.get("run_time_s"):
                job_times[(str(r.get("workflow_path")), str(j.get("name")))].append(
                    float(j["run_time_s"]))
    with tempfile.TemporaryDirectory() as tmp:
        from_history(Path(tmp), folder)
        paths = [str(Path(tmp) / ".github" / "workflows")]
        result = estimate_paths(paths, repo_root=tmp, predictor=predictor)
        workflows, _ = read_paths(paths, tmp)
        profile = profile_dir(Path(tmp))
    rows = []
    for wf in workflows:
        for job in wf.jobs:
            times = job_times.get((wf.path, job.name))
            if times:
                rows.append((wf.path, job.name, math.log(float(np.median(times))),
                             serialize_job(job, wf, profile)))
    return rows, {"workflows": workflows, "profile": profile, "result": result}


def _depth_jobs(folder: str, predictor) -> None:
    from laser_ci.text.serialize import serialize_workflow

    jobs, got = _latest_jobs(folder, predictor)
    truth = {(path, name): y for path, name, y, _t in jobs}
    workflows = got["workflows"]
    whole = {w.path: p.p50 for w, p in zip(
        workflows, predictor.predict([serialize_workflow(w, got["profile"]) for w in workflows]),
        strict=True)}
    rows = []  # (job name, ln truth, ln p50, the workflow's gap)
    for wf in got["result"]["workflows"]:
        p50s = [j["runtime_s"]["p50"] for j in wf["jobs"]]
        if not p50s or wf["path"] not in whole:
            continue
        gap = math.log(max(whole[wf["path"]], 1.0)) - math.log(max(sum(p50s), 1.0))
        for job, p50 in zip(wf["jobs"], p50s, strict=True):
            if (wf["path"], job["name"]) in truth:
                rows.append((job["name"], truth[(wf["path"], job["name"])],
                             math.log(max(p50, 1.0)), gap))
    print(f"\n**{Path(folder).name}: each job of the latest files, cold, against the median of "
          f"its successful runs** ({len(rows)} jobs)\n")
    print("| jobs | n (names) | " + " | ".join(f"moved {k}× the gap" for k in BLENDS)
          + " | whole gap − none [95%] |")
    print("|---|---:|" + "---:|" * len(BLENDS) + "---|")
    t, a, gap = (np.array([r[i] for r in rows]) for i in (1, 2, 3))
    _row("every job", t, a, a + gap, [r[0] for r in rows])


def success_trained(data: str) -> None:
    from laser_ci.evaluation.folds import fold_of
    from laser_ci.training.baselines import Tabular, log_y, text_features
    from laser_ci.training.examples import load_examples

    examples = [e for e in load_examples(data, history=False) if e.runtime_s > 0]
    fold = np.array([fold_of(e.repo, 5) for e in examples])
    feats = text_features(examples)
    cfg = {"objective": "regression_l1", "num_leaves": 3, "rounds": 400, "min_repos": 3}
    y = log_y(examples)
    success = np.array([e.conclusion == "success" for e in examples])
    kind = np.array([e.kind for e in examples])
    pred = {"every run": np.zeros(len(examples)), "successful runs": np.zeros(len(examples))}
    for f in range(5):
        train, test = np.where(fold != f)[0], np.where(fold == f)[0]
        for name, idx in (("every run", train), ("successful runs", train[success[train]])):
            tab = Tabular([examples[i] for i in idx], feats)
            names, model = tab.fit(cfg)
            pred[name][test] = model.predict(tab.matrix([examples[i] for i in test], names))
    print(f"**{Path(data).name}: tabular fit on every run or on successful runs only "
          "(each fold held out in turn)**\n")
    print("| scored on | n (repos) | fit on every run | fit on successful runs | "
          "successful − every [95%] | per fold (every / successful) |")
    print("|---|---:|---:|---:|---|---|")
    for name, keep in (("successful workflow runs", success & (kind == "workflow")),
                       ("successful job runs", success & (kind == "job")),
                       ("every workflow run", kind == "workflow"),
                       ("every job run", kind == "job")):
        idx = np.where(keep)[0]
        a = np.abs(y[idx] - pred["every run"][idx])
        b = np.abs(y[idx] - pred["successful runs"][idx])
        groups = [examples[i].repo for i in idx]
        folds = " ".join(f"{a[fold[idx] == f].mean():.3f}/{b[fold[idx] == f].mean():.3f}"
                         for f in range(5))
        print(f"| {name} | {len(idx):,} ({len(set(groups))}) | {a.mean():.3f} | {b.mean():.3f} "
              f"| {format_diff(paired_error_diff(b, a, groups))} | {folds} |")


def corpus(data: str, depth: str | None, k: int = 5) -> None:
    from laser_ci.evaluation.folds import fold_of
    from laser_ci.evaluation.new_jobs import _refit_cold, repository_evidence
    from laser_ci.predictors import evidence
    from laser_ci.training.history import run_time

    examples, cold = _refit_cold(data, k)
    ln_cold = [math.log(max(c.p50, 1.0)) for c in cold]
    words = [evidence.words_of(e.text) for e in examples]
    # each workflow of each repository with successful runs: its fold, latest words, residuals
    lenders: dict[tuple[str, str], tuple[int, float, frozenset[str], list[float]]] = {}
    for i, e in enumerate(examples):
        if e.conclusion == "success":
            key = (e.repo, e.workflow_path)
            when = run_time(e.created_at, e.commit_date) or -math.inf
            f, last, w, res = lenders.get(key, (fold_of(e.repo, k), -math.inf, words[i], []))
            res.append(math.log(e.runtime_s) - ln_cold[i])
            lenders[key] = (f, when, words[i], res) if when >= last else (f, last, w, res)
    by_fold = {f: [(w, res) for g, _t, w, res in lenders.values() if g != f] for f in range(k)}

    def shift(i: int) -> float:
        return evidence.lent(words[i], by_fold[fold_of(examples[i].repo, k)])[0]

    ok = [i for i, e in enumerate(examples) if e.conclusion == "success"]
    truth = {i: math.log(examples[i].runtime_s) - ln_cold[i] for i in ok}
    moved = {i: shift(i) for i in ok}
    print(f"**{Path(data).name}: a cold prediction shifted by alike workflows of other "
          f"repositories** ({len(lenders)} workflows lend, those of the other folds; "
          "successful runs, each fold's own tabular)\n")
    print("| runs | n (repos) | as shipped | with the corpus | corpus − shipped [95%] |")
    print("|---|---:|---:|---:|---|")

    def row(name: str, idx: list[int], shipped: dict[int, float], other: dict[int, float]) -> None:
        a = np.array([abs(truth[i] - shipped.get(i, 0.0)) for i in idx])
        b = np.array([abs(truth[i] - other.get(i, 0.0)) for i in idx])
        groups = [examples[i].repo for i in idx]
        d = paired_error_diff(b, a, groups)
        print(f"| {name} | {len(idx):,} ({len(set(groups))}) | {a.mean():.3f} | {b.mean():.3f} "
              f"| {format_diff(d)} ({d['diff'] / a.mean():+.1%}) |")

    row("every successful workflow run: cold, or the corpus", ok, {}, moved)
    alike, unlike = {}, []
    for i, w, lent in repository_evidence(examples, cold):
        if examples[i].conclusion == "success":
            got, say = evidence.lent(w, lent)
            if say >= evidence.MIN_SAY:
                alike[i] = got
            else:
                unlike.append(i)
    known = sorted([*alike, *unlike])
    row("new workflow, no alike one ran: cold, or the corpus", unlike, {}, moved)
    row("new workflow in a known repository: the repository's alike workflows, else cold "
        "(shipped) or else the corpus", known, alike, {**moved, **alike})
    row("the same: cold, or the corpus (the other half of the comparison)", known, {}, moved)
    if depth:
        from laser_ci.predictors.choice import load_predictor

        predictor = load_predictor()
        every = [(w, res) for _g, _t, w, res in lenders.values()]
        rows, _ = _latest_jobs(depth, predictor)
        pred = predictor.predict([t for *_k, t in rows])
        y = np.array([r[2] for r in rows])
        c = np.array([math.log(max(p.p50, 1.0)) for p in pred])
        s = np.array([evidence.lent(evidence.words_of(t), every)[0] for *_k, t in rows])
        a, b = np.abs(y - c), np.abs(y - c - s)
        d = paired_error_diff(b, a, [r[1] for r in rows])
        print(f"\n{Path(depth).name}: {len(rows)} jobs of its latest files, cold, against the "
              f"median of each one's successful runs ({predictor.name}): cold {a.mean():.3f}, "
              f"shifted by the corpus {b.mean():.3f}, {format_diff(d)} (mean shift "
              f"{s.mean():+.2f})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(SHARED / "gha-runs"))
    ap.add_argument("--depth", help="also a depth folder's jobs (--totals)")
    ap.add_argument("--totals", action="store_true")
    ap.add_argument("--success-trained", action="store_true")
    ap.add_argument("--corpus", action="store_true")
    args = ap.parse_args()
    if not (args.totals or args.success_trained or args.corpus):
        ap.error("say --totals, --success-trained or --corpus")
    if args.totals:
        totals(args.data, args.depth)
    if args.success_trained:
        success_trained(args.data)
    if args.corpus:
        corpus(args.data, args.depth)
    return 0


if __name__ == "__main__":
    sys.exit(main())
