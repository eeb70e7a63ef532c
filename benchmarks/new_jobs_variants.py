"""The variants behind docs/accuracy.md's "What this says" (issue 49).

1. ``--own DEPTH_FOLDER ...``: a job's own runs. For each of two windows of ``--test-days``
   (the earlier one to pick, the later one to confirm), every successful job run of the
   window predicted from the job's runs before it: the median of its last 3 runs (all
   ends, the default's ``recent=``), of its last 20, of its last k successful runs, of all
   of them, and of the last half of them (at least 3). log-MAE per candidate.
2. ``--alpha DEPTH_FOLDER``: a new matrix instance, on the earlier window of the depth
   protocol (names held out): log-MAE of the siblings' evidence when the cold model's
   difference between two instances is carried over in full (``ALPHA`` 1), half or not.
3. ``--residuals GHA_FOLDER``: a workflow new to its repository, on the val repositories
   with the shipped ``tabular``: the correlation of a run's residual (ln truth − ln cold)
   with its repository's earlier successful runs of other workflows, and the log-MAE of
   the shift pooled or per workflow, shrunk n/(n+k).
4. ``--similar GHA_FOLDER``: a workflow new to its repository, every repository, its cold
   prediction by ``tabular`` trained on the other folds (minutes per fold): each other
   workflow's residual weighted by ``similarity ** SIM_POWER`` (``evidence.lent``)
   for a grid of ``SIM_POWER`` and ``SIM_PRIOR``, every run shifted whatever its say
   (the rule before ``MIN_SAY``), and the repository's pooled residual
   (shrunk n/(n+1), the issue's recipe). Per fold of repositories, the candidate with the
   lowest log-MAE on the other folds' successful runs, and its log-MAE on the fold's
   (the held-out figure, with its paired interval against cold); then every candidate on
   all of them (descriptive: the shipped pick's figures there are not held out).
5. ``--say GHA_FOLDER``: when the repository counts as evidence for a workflow new to it,
   every repository, cold predictions as in 4: for thresholds on the lenders' say
   (``evidence.lent``; 0: always, the shipped rule before ``MIN_SAY``), runs under the
   threshold keep the cold prediction and its band, those over it the shifted p50 and a
   band from the other folds' residuals over it. log-MAE, interval score (p10-p90, ln s),
   coverage over and under the threshold, the median p90/p10.
6. ``--unlike GHA_FOLDER``: the workflows new to their repository that no workflow of it is
   alike to (the lenders' say under ``MIN_SAY``: they keep the cold prediction), cold
   predictions as in 4: what else of the repository could move them. The repository's
   pooled residual, shrunk n/(n+k); its level (the median of its other workflows' median
   ln times) as a line ``a + b * (level - ln cold)`` fit on the other folds; one offset
   fit on the other folds. log-MAE each fold by the others' fit, per how many runs the
   repository has, and the correlation of each with the run's residual; last, how narrow
   a band around their cold prediction can be (the other folds' q10/q90) and whether the
   repository's own spread tells which runs are nearer.
7. ``--similar-depth DEPTH_FOLDER``: the same choice for jobs, on the depth protocol's
   earlier window (names held out, then whole workflows): for the ``workflow`` source,
   the workflow's pooled residual (shrunk n/(n+1), the rule before), its jobs lending by
   similarity, or every job of the repository lending (``evidence._from_workflow``, with
   the pooled residual under ``MIN_SAY``); for the ``repository`` source, the residuals
   pooled or weighted by similarity, each job of the other workflows a lender or each
   other workflow one, every job shifted whatever its say (the rule before ``MIN_SAY``).
8. ``--lenders GHA_FOLDER``: other ways to lend a workflow new to its repository the
   repository's runs, cold predictions as in 4, successful runs: the similarity weighted
   by each word's IDF over every run's words (power and prior picked on the other folds);
   where no workflow is alike, each job of the new workflow lent by the jobs of the
   others (each carrying its workflow's residuals, ``evidence.lent``, the mean of the
   jobs' shifts with say over ``MIN_SAY``); or there, a LightGBM correction of the cold
   prediction from what the repository has (its pooled residual and spread, their runs,
   the best IDF-weighted similarity, the say, the cold prediction, how many workflows
   lend and how many words the new one has), fit on the other folds' such runs. log-MAE
   on every run and on those with no alike workflow, each against the shipped rule with
   its paired interval.
9. ``--failed GHA_FOLDER``: the same runs, cold predictions as in 4, successful runs:
   whether the repository's *failed* earlier runs of other workflows lend too (a workflow
   with no successful run lends its failed runs' residuals, or every workflow lends its
   failed runs beside its successful ones; a failed run's residual raised by an offset
   for the time it did not run, the way and the offset picked on the other folds); then
   the ceiling of evidence of the repository for the runs with no alike workflow: their
   error with the median residual of their own repository's such runs subtracted (in
   sample: more than anything observable before the run could know), and of their own
   workflow's, and whether the cold band's width tells which runs are nearer.
10. ``--same DEPTH_FOLDER``: a job with no runs under its own name that has those of the
   same job under another name (a reusable workflow's job run on its own and called,
   ``laser_ci.workflows.same_job``), on the depth protocol (names held out, then whole
   workflows): every held-out job's successful runs predicted with those runs taken as its
   own, against the rule before (the closest evidence of the other jobs), on the earlier
   window (the choice) and the later one; log-MAE, paired by run (95% interval by job
   name), over every held-out job and over those that have such runs.

    python benchmarks/new_jobs_variants.py --own ../shared/data/depth/iree-org+iree \
        --own ../shared/data/depth/autowarefoundation+autoware
    python benchmarks/new_jobs_variants.py --alpha ../shared/data/depth/iree-org+iree
    python benchmarks/new_jobs_variants.py --residuals ../shared/data/gha-runs
    python benchmarks/new_jobs_variants.py --similar ../shared/data/gha-runs
    python benchmarks/new_jobs_variants.py --say ../shared/data/gha-runs
    python benchmarks/new_jobs_variants.py --unlike ../shared/data/gha-runs
    python benchmarks/new_jobs_variants.py --similar-depth ../shared/data/depth/iree-org+iree
    python benchmarks/new_jobs_variants.py --lenders ../shared/data/gha-runs
    python benchmarks/new_jobs_variants.py --failed ../shared/data/gha-runs
    python benchmarks/new_jobs_variants.py --same ../shared/data/depth/iree-org+iree
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.evaluation.new_jobs import DAY, _read_runs, _truth, job_runs_before  # noqa: E402

Past = list[tuple[float, str | None]]


def _succ(h: Past) -> list[float]:
    ok = [s for s, c in h if c == "success"]
    return ok or [s for s, _ in h]


def _last(k: int) -> Callable[[Past], float]:
    return lambda h: float(np.median(_succ(h)[-k:]))


def candidates() -> dict[str, Callable[[Past], float]]:
    out: dict[str, Callable[[Past], float]] = {
        "last3 (default)": lambda h: float(np.median([s for s, _ in h][-3:])),
        "last20": lambda h: float(np.median([s for s, _ in h][-20:])),
    }
    for k in (3, 10, 20, 50):
        out[f"successful last{k}"] = _last(k)
    out["successful all"] = lambda h: float(np.median(_succ(h)))
    out["successful last half"] = lambda h: float(np.median(
        _succ(h)[-max(3, len(_succ(h)) // 2):]))
    return out


def own(folder: str, test_days: float) -> None:
    runs = _read_runs(Path(folder))
    end = runs[-1][0] + 1.0
    for shift in (test_days, 0.0):
        stop = end - shift * DAY
        cut = stop - test_days * DAY
        hist = job_runs_before(runs, cut)
        errs: dict[str, list[float]] = {k: [] for k in candidates()}
        for key, truth in _truth(runs, cut, stop).items():
            h = hist.get(key)
            for s, ok in truth if h else ():
                if ok:
                    for name, f in candidates().items():
                        errs[name].append(abs(math.log(f(h)) - math.log(s)))  # type: ignore[arg-type]
        which = "earlier (pick)" if shift else "later (confirm)"
        print(f"{Path(folder).name}, {which} window, {len(errs['last20'])} successful runs:")
        for name, e in errs.items():
            print(f"  {name:22s} {np.mean(e):.3f}")


def alpha(folder: str, test_days: float) -> None:
    import laser_ci.predictors.evidence as ev
    from laser_ci.evaluation.new_jobs import depth_rows, summarize
    from laser_ci.predictors.choice import load_predictor

    predictor = load_predictor()
    for a in (0.0, 0.5, 1.0):
        ev.ALPHA = a
        rows = depth_rows(folder, predictor, test_days=test_days, shift_days=test_days,
                          holdout="names", offsets={}, own=False)
        s = summarize([r for r in rows if r.success and r.source == "siblings"])
        print(f"{Path(folder).name}, earlier window, ALPHA {a}: new instance {s['n']} runs, "
              f"log-MAE {s['log_mae']:.3f} (cold {s['cold_log_mae']:.3f})")


def residuals(data_dir: str) -> None:
    from laser_ci.predictors.choice import available_predictors
    from laser_ci.training.examples import load_examples
    from laser_ci.training.history import run_time

    ex = [e for e in load_examples(data_dir, kinds=("workflow",), split="val", history=False)
          if e.runtime_s > 0]
    cold = available_predictors()["tabular"].predict([e.text for e in ex])
    res = [math.log(e.runtime_s) - math.log(max(c.p50, 1.0)) for e, c in zip(ex, cold, strict=True)]
    rows = []
    for i, e in enumerate(ex):
        if e.conclusion != "success":
            continue
        t = run_time(e.created_at, e.commit_date) or math.inf
        by_wf: dict[str, list[float]] = {}
        for j, o in enumerate(ex):
            if (o.repo == e.repo and o.workflow_path != e.workflow_path
                    and o.conclusion == "success"
                    and (run_time(o.created_at, o.commit_date) or 0) < t):
                by_wf.setdefault(o.workflow_path, []).append(res[j])
        if by_wf:
            rows.append((res[i], by_wf))
    own_r = np.array([r for r, _ in rows])
    print(f"{len(rows)} successful runs; cold log-MAE {np.mean(np.abs(own_r)):.3f}")
    for how in ("pooled", "per workflow"):
        for k in (1, 3, 10):
            shift = []
            for _r, by in rows:
                if how == "pooled":
                    vals = [x for v in by.values() for x in v]
                else:
                    vals = [float(np.median(v)) for v in by.values()]
                shift.append(len(vals) / (len(vals) + k) * float(np.median(vals)))
            s = np.array(shift)
            print(f"  {how:12s} n/(n+{k:<2d}) log-MAE {np.mean(np.abs(own_r - s)):.3f}  "
                  f"r = {np.corrcoef(own_r, s)[0, 1]:+.3f}")


POWERS = (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
PRIORS = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)


def similar(data_dir: str, folds: int = 5) -> None:
    from laser_ci.evaluation.new_jobs import _fold, _refit_cold, repository_evidence
    from laser_ci.predictors import evidence
    from laser_ci.training.metrics import format_diff, paired_error_diff

    shipped = evidence.SIM_POWER, evidence.SIM_PRIOR
    examples, cold = _refit_cold(data_dir, folds)
    cases = [(i, words, lent) for i, words, lent in repository_evidence(examples, cold)
             if examples[i].conclusion == "success"]
    truth = {i: math.log(examples[i].runtime_s) - math.log(max(cold[i].p50, 1.0))
             for i, _w, _l in cases}

    def errors(cand: tuple[float, float] | None, which: list) -> list[float]:
        out = []
        for i, words, lent in which:
            if cand is None:
                shift = evidence.shrunk_shift([r for _w, rs in lent for r in rs])
            else:
                evidence.SIM_POWER, evidence.SIM_PRIOR = cand
                shift = evidence.lent(words, lent)[0]
            out.append(abs(truth[i] - shift))
        return out

    pairs(examples, cold)
    grid: list[tuple[float, float] | None] = [None, *((p, c) for p in POWERS for c in PRIORS)]
    fold = {i: _fold(examples[i].repo, folds) for i, _w, _l in cases}
    held: list[float] = []
    base: list[float] = []
    groups: list[str] = []
    for f in range(folds):
        train = [c for c in cases if fold[c[0]] != f]
        test = [c for c in cases if fold[c[0]] == f]
        best = min(grid, key=lambda g: float(np.mean(errors(g, train))))
        got = errors(best, test)
        held += got
        cold_errors = [abs(truth[i]) for i, _w, _l in test]
        base += cold_errors
        groups += [examples[i].repo for i, _w, _l in test]
        print(f"fold {f}: picked {best or 'pooled'} on {len(train)} runs; "
              f"{len(test)} runs: {np.mean(got):.3f} (cold {np.mean(cold_errors):.3f})")
    diff = paired_error_diff(held, base, groups)
    print(f"every fold, each by the pick of the others: {np.mean(held):.3f} against cold "
          f"{np.mean(base):.3f} ({len(held)} successful runs), {format_diff(diff)} "
          f"({diff['diff'] / np.mean(base):+.1%}; 95% interval resampling repositories)")
    for g in grid:
        print(f"  {str(g or 'pooled, n/(n+1)'):16s} {np.mean(errors(g, cases)):.3f}")
    evidence.SIM_POWER, evidence.SIM_PRIOR = shipped


SAYS = (0.0, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9)


def _say_scored(least: float, fit: list, test: list) -> list[tuple[bool, float, float, bool, float]]:
    """``test``'s runs with the threshold ``least`` and the band over it from ``fit``'s:
    (over, |error|, interval score, inside, ln width) each (:func:`say`)."""
    from laser_ci.predictors.evidence_bands import band_offsets
    from laser_ci.training.metrics import interval_score_log

    lo, hi = band_offsets([r - s for _g, _p, r, s, w, _b in fit if w >= least])
    out = []
    for _g, _p, r, s, w, band in test:
        e, (a, b) = (r - s, (lo, hi)) if w >= least else (r, band)
        score = interval_score_log(np.array([a]), np.array([b]), np.array([e]))
        out.append((w >= least, abs(e), score, a <= e <= b, b - a))
    return out


def say(data_dir: str, folds: int = 5) -> None:
    from laser_ci.evaluation.new_jobs import _fold, _refit_cold, repository_evidence
    from laser_ci.predictors import evidence
    from laser_ci.predictors.evidence_bands import band_offsets

    examples, cold = _refit_cold(data_dir, folds)
    cases = []  # (fold, repository, residual against cold, shift, say, cold band's (lo, hi))
    for i, words, lent in repository_evidence(examples, cold):
        if examples[i].conclusion == "success":
            c = cold[i]
            mu = math.log(max(c.p50, 1.0))
            cases.append((_fold(examples[i].repo, folds), examples[i].repo,
                          math.log(examples[i].runtime_s) - mu, *evidence.lent(words, lent),
                          (math.log(max(c.p10, 1.0)) - mu, math.log(max(c.p90, 1.0)) - mu)))
    print(f"{len(cases)} successful runs of workflows new to their repository; "
          f"cold log-MAE {np.mean([abs(c[2]) for c in cases]):.3f}")
    print("| say at least | share | log-MAE | interval score | coverage | over | under | "
          "p90/p10 |\n|---:|---:|---:|---:|---:|---:|---:|---:|")
    by_fold = [([c for c in cases if c[0] != f], [c for c in cases if c[0] == f])
               for f in range(folds)]
    for least in SAYS:
        o = np.array([x for fit, test in by_fold for x in _say_scored(least, fit, test)],
                     dtype=float)
        over = o[:, 0] == 1
        cov = [f"{o[m, 3].mean():.0%}" if m.any() else "–" for m in (over, ~over)]
        print(f"| {least:g} | {over.mean():.0%} | {o[:, 1].mean():.3f} | {o[:, 2].mean():.3f} | "
              f"{o[:, 3].mean():.0%} | {cov[0]} | {cov[1]} | {math.exp(np.median(o[:, 4])):.1f}× |")
    # one band for all (least 0): how it holds over the shipped threshold and under it
    split = [(c[4] >= evidence.MIN_SAY, x[3]) for fit, test in by_fold
             for c, x in zip(test, _say_scored(0.0, fit, test), strict=True)]
    alike = [inside for over, inside in split if over]
    rest = [inside for over, inside in split if not over]
    print(f"one band for all: coverage {np.mean(alike):.0%} where the say is "
          f"{evidence.MIN_SAY:g} or more ({len(alike)} runs), {np.mean(rest):.0%} under it")
    # the threshold picked per fold by the interval score on the other folds (each of
    # them scored with the band of the rest), scored on the fold
    held, picks = [], []
    for fit, test in by_fold:
        def score(least: float, fit=fit) -> float:
            return float(np.mean([x[2] for g in sorted({c[0] for c in fit})
                                  for x in _say_scored(least, [c for c in fit if c[0] != g],
                                                       [c for c in fit if c[0] == g])]))

        pick = min(SAYS, key=score)
        picks.append(pick)
        held += _say_scored(pick, fit, test)
    h = np.array(held, dtype=float)
    print(f"picked per fold on the others: {picks}; held out: interval score "
          f"{h[:, 2].mean():.3f}, log-MAE {h[:, 1].mean():.3f}, coverage {h[:, 3].mean():.0%}, "
          f"p90/p10 {math.exp(np.median(h[:, 4])):.1f}×")
    # the shipped band over the threshold: every run weighing the same, or each repository
    over = [c for c in cases if c[4] >= evidence.MIN_SAY]
    res = [c[2] - c[3] for c in over]
    n = {repo: sum(c[1] == repo for c in over) for repo in {c[1] for c in over}}
    for how, weights in (("each run the same", None),
                         ("each repository the same", [1 / n[c[1]] for c in over])):
        lo, hi = band_offsets(res, weights=weights)
        print(f"band over {evidence.MIN_SAY:g}, every fold's runs, {how}: {lo:+.2f} / {hi:+.2f} "
              f"({math.exp(hi - lo):.1f}×), holding {np.mean([lo <= x <= hi for x in res]):.0%} "
              f"of them ({len(res)} runs, {len(n)} repositories; in-sample)")
        # what a repository gets: each left out in turn, the band from the others
        held_cov, widths = [], []
        for repo in n:
            rest = [(c[2] - c[3], 1.0 if weights is None else 1 / n[c[1]])
                    for c in over if c[1] != repo]
            lo, hi = band_offsets([x for x, _w in rest], weights=[w for _x, w in rest])
            held_cov.append(np.mean([lo <= c[2] - c[3] <= hi for c in over if c[1] == repo]))
            widths.append(math.exp(hi - lo))
        print(f"  each repository left out, the band from the others: it holds "
              f"{np.mean(held_cov):.0%} of a repository's runs on average, median width "
              f"{np.median(widths):.1f}×")


def unlike(data_dir: str, folds: int = 5) -> None:
    from laser_ci.evaluation.new_jobs import _fold, _refit_cold, repository_evidence
    from laser_ci.predictors import evidence
    from laser_ci.training.history import run_time

    examples, cold = _refit_cold(data_dir, folds)
    log_t = [math.log(e.runtime_s) for e in examples]
    when = [run_time(e.created_at, e.commit_date) for e in examples]
    rows = []  # (fold, residual, pooled residual, its n, level - ln cold, spread)
    for i, words, lenders in repository_evidence(examples, cold):
        e = examples[i]
        if e.conclusion != "success" or evidence.lent(words, lenders)[1] >= evidence.MIN_SAY:
            continue
        times: dict[str, list[float]] = {}  # the lenders of repository_evidence, by workflow
        for j, o in enumerate(examples):
            if (o.repo == e.repo and o.workflow_path != e.workflow_path
                    and o.conclusion == "success"
                    and (when[i] is None or (when[j] or 0) < when[i])):
                times.setdefault(o.workflow_path, []).append(log_t[j])
        level = float(np.median([np.median(v) for v in times.values()]))
        pooled = [r for _w, rs in lenders for r in rs]
        mu = math.log(max(cold[i].p50, 1.0))
        rows.append((_fold(e.repo, folds), log_t[i] - mu, float(np.median(pooled)),
                     len(pooled), level - mu, float(np.median(np.abs(pooled)))))
    a = np.array(rows, dtype=float)
    fold, res, pooled, n, gap, spread = a.T
    print(f"{len(a)} successful runs of workflows new to their repository, none of its "
          f"workflows alike (say under {evidence.MIN_SAY:g}); cold log-MAE "
          f"{np.mean(np.abs(res)):.3f}")
    print(f"correlation with the run's residual: pooled residual r = "
          f"{np.corrcoef(res, pooled)[0, 1]:+.2f}, level - ln cold r = "
          f"{np.corrcoef(res, gap)[0, 1]:+.2f}")
    grid = [(c, b) for c in np.linspace(-1.0, 1.0, 41) for b in np.linspace(0.0, 1.0, 21)]
    fitted = {"one offset": np.zeros(len(a)), "level line": np.zeros(len(a))}
    for f in range(folds):
        train, test = fold != f, fold == f
        off = float(np.median(res[train]))
        c, b = min(grid, key=lambda g: float(np.mean(np.abs(res[train] - g[0] - g[1] * gap[train]))))
        fitted["one offset"][test] = off
        fitted["level line"][test] = c + b * gap[test]
        print(f"fold {f}: offset {off:+.2f}, level line {c:+.2f} + {b:.2f} * gap")
    shifts = {"cold": np.zeros(len(a)),
              **{f"pooled, n/(n+{k})": n / (n + k) * pooled for k in (1, 3, 10)},
              "pooled, half": 0.5 * pooled, **fitted}
    parts = [("every run", np.ones(len(a), dtype=bool)), ("n < 3", n < 3),
             ("3 <= n < 10", (n >= 3) & (n < 10)), ("n >= 10", n >= 10)]
    print("| shift | " + " | ".join(f"{p} ({m.sum()})" for p, m in parts) + " |")
    print("|---|" + "---:|" * len(parts))
    for name, s in shifts.items():
        print(f"| {name} | " + " | ".join(f"{np.mean(np.abs(res[m] - s[m])):.3f}"
                                         for _p, m in parts) + " |")
    _unlike_band(fold, res, spread, folds)


def _unlike_band(fold: np.ndarray, res: np.ndarray, spread: np.ndarray, folds: int) -> None:
    """How narrow a band around the cold prediction of these runs can be: the q10 and q90
    of the other folds' residuals (each run weighing the same), and whether the
    repository's own spread (the median |residual| of its earlier runs of other workflows)
    tells which runs are nearer (a rank correlation with |residual|)."""
    from scipy.stats import spearmanr

    from laser_ci.predictors.evidence_bands import band_offsets

    inside, widths = np.zeros(len(res), dtype=bool), np.zeros(len(res))
    for f in range(folds):
        lo, hi = band_offsets(list(res[fold != f]))
        inside[fold == f] = (res[fold == f] >= lo) & (res[fold == f] <= hi)
        widths[fold == f] = math.exp(hi - lo)
        print(f"fold {f}: {int((fold == f).sum())} runs, the other folds' band "
              f"{math.exp(hi - lo):.1f}x wide holds {inside[fold == f].mean():.0%}")
    rho = spearmanr(np.abs(res), spread)
    print(f"a band of the other folds' residuals around cold: coverage {inside.mean():.0%}, "
          f"median p90/p10 {np.median(widths):.1f}x; rank correlation of |residual| with "
          f"the repository's spread {rho.statistic:+.2f} (p {rho.pvalue:.2f}, runs as if "
          "independent)")


def _job_blocks(text: str) -> list[str]:
    """A serialized workflow's jobs, each from its ``job:`` line to the next one's."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("job: "):
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
    return ["\n".join(b) for b in blocks] or [text]


def other_lenders(data_dir: str, folds: int = 5) -> None:
    """8. ``--lenders`` (module doc)."""
    import lightgbm as lgb

    from laser_ci.evaluation.new_jobs import _fold, _refit_cold, repository_evidence
    from laser_ci.predictors import evidence
    from laser_ci.training.metrics import format_diff, paired_error_diff

    examples, cold = _refit_cold(data_dir, folds)
    # a lender's text by its repository and words (repository_evidence gives its words)
    text_of = {(e.repo, evidence.words_of(e.text)): e.text for e in examples}
    cases = [c for c in repository_evidence(examples, cold)
             if examples[c[0]].conclusion == "success"]
    res = np.array([math.log(examples[i].runtime_s) - math.log(max(cold[i].p50, 1.0))
                    for i, _w, _l in cases])
    fold = np.array([_fold(examples[i].repo, folds) for i, _w, _l in cases])
    said = [evidence.lent(w, lenders) for _i, w, lenders in cases]
    over = np.array([say >= evidence.MIN_SAY for _s, say in said])
    shipped = np.array([s if o else 0.0 for (s, _say), o in zip(said, over, strict=True)])

    # IDF-weighted Jaccard: a word every workflow has weighs nothing (df over every run's
    # words: no labels)
    n_docs = len(examples)
    df: dict[str, int] = {}
    for e in examples:
        for word in evidence.words_of(e.text):
            df[word] = df.get(word, 0) + 1

    def idf_sim(a: frozenset[str], b: frozenset[str]) -> float:
        def mass(ws: frozenset[str]) -> float:
            return sum(math.log(n_docs / df.get(w, 1)) for w in ws)
        union = mass(a | b)
        return mass(a & b) / union if union else 0.0

    sims = [[idf_sim(w, lw) for lw, _r in lenders] for _i, w, lenders in cases]

    def idf_shift(k: int, power: float, prior: float) -> float:
        weights = [s ** power * len(r) / (len(r) + 1)
                   for s, (_lw, r) in zip(sims[k], cases[k][2], strict=True)]
        num = sum(w * float(np.median(r)) for w, (_lw, r) in zip(weights, cases[k][2],
                                                                 strict=True))
        den = sum(weights)
        return num / (den + prior) if den / (den + prior) >= evidence.MIN_SAY else 0.0

    idf = np.zeros(len(cases))
    for f in range(folds):
        train = [k for k in range(len(cases)) if fold[k] != f]
        best = min(((p, c) for p in POWERS for c in PRIORS), key=lambda g: float(np.mean(
            [abs(res[k] - idf_shift(k, *g)) for k in train])))
        for k in np.flatnonzero(fold == f):
            idf[k] = idf_shift(int(k), *best)
        print(f"fold {f}: IDF-weighted similarity, picked power {best[0]:g}, prior {best[1]:g}")

    # each job of the new workflow lent by each job of the others (their workflow's
    # residuals), where the workflow as a whole has no alike one
    jobs = shipped.copy()
    for k, (i, _w, lenders) in enumerate(cases):
        if over[k]:
            continue
        lent_jobs = [(evidence.words_of(block), r) for lw, r in lenders
                     for block in _job_blocks(text_of.get((examples[i].repo, lw), ""))]
        got = [evidence.lent(evidence.words_of(b), lent_jobs)
               for b in _job_blocks(examples[i].text)]
        jobs[k] = float(np.mean([s if say >= evidence.MIN_SAY else 0.0 for s, say in got]))

    # a learned correction of the cold prediction from what the repository has, fit on the
    # other folds' runs with no alike workflow
    feats = np.array([[float(np.median(pooled := [r for _lw, rs in lenders for r in rs])),
                       len(pooled), float(np.median(np.abs(pooled))),
                       math.log(max(cold[i].p50, 1.0)), max(s_k, default=0.0), say,
                       len(lenders), len(w)]
                      for (i, w, lenders), s_k, (_s, say) in zip(cases, sims, said, strict=True)])
    learned = shipped.copy()
    for f in range(folds):
        fit, held = (fold != f) & ~over, (fold == f) & ~over
        model = lgb.LGBMRegressor(objective="l1", n_estimators=200, learning_rate=0.03,
                                  num_leaves=7, min_child_samples=20, verbose=-1)
        model.fit(feats[fit], res[fit])
        if held.any():
            learned[held] = model.predict(feats[held])

    groups = [examples[i].repo for i, _w, _l in cases]
    print(f"| lenders | every run ({len(cases)}) | no alike workflow ({int((~over).sum())}) "
          "| − shipped [95%] |")
    print("|---|---:|---:|---|")
    for name, shift in [("none (cold)", np.zeros(len(cases))),
                        ("alike workflows, Jaccard (shipped)", shipped),
                        ("alike workflows, IDF-weighted Jaccard", idf),
                        ("shipped, else each job by alike jobs", jobs),
                        ("shipped, else a learned correction (LightGBM)", learned)]:
        err = np.abs(res - shift)
        diff = paired_error_diff(list(err), list(np.abs(res - shipped)), groups)
        print(f"| {name} | {err.mean():.3f} | {err[~over].mean():.3f} | {format_diff(diff)} |")


def failed_lenders(data_dir: str, folds: int = 5) -> None:
    """9. ``--failed`` (module doc)."""
    from scipy.stats import spearmanr

    from laser_ci.evaluation.new_jobs import _fold, _refit_cold, repository_evidence
    from laser_ci.predictors import evidence
    from laser_ci.training.history import run_time
    from laser_ci.training.metrics import format_diff, paired_error_diff

    examples, cold = _refit_cold(data_dir, folds)
    cases = [c for c in repository_evidence(examples, cold)
             if examples[c[0]].conclusion == "success"]
    log_t = [math.log(e.runtime_s) for e in examples]
    log_c = [math.log(max(c.p50, 1.0)) for c in cold]
    when = [run_time(e.created_at, e.commit_date) for e in examples]
    words = [evidence.words_of(e.text) for e in examples]
    res = np.array([log_t[i] - log_c[i] for i, _w, _l in cases])
    fold = np.array([_fold(examples[i].repo, folds) for i, _w, _l in cases])
    said = [evidence.lent(w, lenders) for _i, w, lenders in cases]
    over = np.array([say >= evidence.MIN_SAY for _s, say in said])
    shipped = np.array([s if o else 0.0 for (s, _say), o in zip(said, over, strict=True)])
    # every earlier run of the repository's other workflows, by workflow: its latest words,
    # its successful and its failed runs' residuals
    by_repo: dict[str, list[int]] = {}
    for j in sorted(range(len(examples)), key=lambda j: (when[j] or -math.inf, j)):
        by_repo.setdefault(examples[j].repo, []).append(j)
    earlier = []
    for i, _w, _l in cases:
        per: dict[str, tuple[list, list, list]] = {}
        for j in by_repo[examples[i].repo]:
            o = examples[j]
            if o.workflow_path != examples[i].workflow_path and (
                    when[i] is None or (when[j] or 0) < when[i]):
                w, ok, failed = per.setdefault(o.workflow_path, ([None], [], []))
                w[0] = words[j]
                (ok if o.conclusion == "success" else failed).append(log_t[j] - log_c[j])
        earlier.append(list(per.values()))

    def shift(k: int, way: str, offset: float) -> float:
        lenders = []
        for (w,), ok, failed in earlier[k]:
            lifted = [r + offset for r in failed]
            got = (ok or lifted) if way == "fill" else ok + lifted
            if got:
                lenders.append((w, got))
        s, say = evidence.lent(words[cases[k][0]], lenders) if lenders else (0.0, 0.0)
        return s if say >= evidence.MIN_SAY else 0.0

    grid = [(way, off) for way in ("fill", "both") for off in (0.0, 0.3, 0.6, 1.0)]
    table = {g: np.array([shift(k, *g) for k in range(len(cases))]) for g in grid}
    picked = np.zeros(len(cases))
    for f in range(folds):
        train = fold != f
        best = min(grid, key=lambda g: float(np.mean(np.abs(res[train] - table[g][train]))))
        picked[fold == f] = table[best][fold == f]
        print(f"fold {f}: picked {best[0]}, offset {best[1]:g}")
    groups = [examples[i].repo for i, _w, _l in cases]
    print(f"| lenders | every run ({len(cases)}) | no alike workflow ({int((~over).sum())}) "
          "| − shipped [95%] |")
    print("|---|---:|---:|---|")
    rows = [("none (cold)", np.zeros(len(cases))), ("successful runs (shipped)", shipped),
            ("failed runs too, picked on the other folds", picked)]
    rows += [(f"failed runs too: {way}, offset {off:g} (all folds)", table[(way, off)])
             for way, off in grid]
    for name, s in rows:
        err = np.abs(res - s)
        diff = paired_error_diff(list(err), list(np.abs(res - shipped)), groups)
        print(f"| {name} | {err.mean():.3f} | {err[~over].mean():.3f} | {format_diff(diff)} |")

    # the ceiling, for the runs with no alike workflow (in sample)
    unlike = np.flatnonzero(~over)
    r = res[unlike]

    def less_own_median(keys: list) -> float:
        med: dict = {}
        for key, x in zip(keys, r, strict=True):
            med.setdefault(key, []).append(x)
        return float(np.mean(np.abs(r - np.array([np.median(med[key]) for key in keys]))))

    repo = [examples[cases[k][0]].repo for k in unlike]
    wf = [(examples[cases[k][0]].repo, examples[cases[k][0]].workflow_path) for k in unlike]
    width = [math.log(cold[cases[k][0]].p90 / cold[cases[k][0]].p10) for k in unlike]
    rho = spearmanr(np.abs(r), width)
    print(f"no alike workflow: {len(r)} runs of {len(set(wf))} workflows of {len(set(repo))} "
          f"repositories; cold {np.mean(np.abs(r)):.3f}, less one median of them all "
          f"{np.mean(np.abs(r - np.median(r))):.3f}, less their repository's median "
          f"{less_own_median(repo):.3f}, less their workflow's {less_own_median(wf):.3f} (in "
          f"sample); rank correlation of |residual| with the cold band's width "
          f"{rho.statistic:+.2f} (p {rho.pvalue:.2f})")


def same_job(folder: str, test_days: float) -> None:
    """10. ``--same`` (module doc)."""
    from unittest import mock

    # first, the data: each job of a workflow run on its own against the same job called
    # from another workflow (its name ends the caller's), medians of successful runs
    from laser_ci.evaluation.new_jobs import _read_runs, depth_rows, job_runs_before
    from laser_ci.predictors.choice import load_predictor
    from laser_ci.training.metrics import format_diff, paired_log_mae_diff

    every = job_runs_before(_read_runs(Path(folder)), math.inf)
    ok = {k: [t for t, end in v if end == "success"] for k, v in every.items()}
    ratios = []
    for (path, name), times in sorted(ok.items()):
        for (other, called), theirs in sorted(ok.items()):
            if other != path and called.endswith(" / " + name) and times and theirs:
                ratios.append(float(np.median(times) / np.median(theirs)))
                print(f"{path} {name!r}: median {np.median(times):.0f} s on its own, "
                      f"{np.median(theirs):.0f} s as {called!r} of {other}")
    if ratios:
        print(f"{len(ratios)} pairs: on its own / called {min(ratios):.3f} to {max(ratios):.3f}")
    predictor = load_predictor(None)
    before = mock.patch("laser_ci.estimate._same_job_history",
                        lambda pairs, history: (history, [None] * len(pairs)))
    print("| holdout | window | runs | with the same job's runs | before | Δ [95%] "
          "| of them, with such runs | with | before | Δ [95%] |")
    print("|---|---|---:|---:|---:|---|---:|---:|---:|---|")
    for holdout in ("names", "workflows"):
        for window, shift in (("earlier", test_days), ("later", 0.0)):
            kw = {"test_days": test_days, "shift_days": shift, "holdout": holdout,
                  "offsets": {}, "own": False}
            new = [r for r in depth_rows(folder, predictor, **kw) if r.success]
            with before:
                old = [r for r in depth_rows(folder, predictor, **kw) if r.success]
            assert [(r.group, r.truth) for r in new] == [(r.group, r.truth) for r in old]
            same = [k for k, r in enumerate(new) if r.source == "same"]

            def figures(idx: list[int], new=new, old=old) -> str:
                a, b = [new[k] for k in idx], [old[k] for k in idx]
                truth, groups = [r.truth for r in a], [r.group for r in a]
                mae = [float(np.mean([abs(math.log(r.truth) - math.log(max(r.pred[1], 1.0)))
                                      for r in rows])) for rows in (a, b)]
                diff = paired_log_mae_diff([r.pred[1] for r in a], [r.pred[1] for r in b],
                                           truth, groups)
                return f"{mae[0]:.3f} | {mae[1]:.3f} | {format_diff(diff)}"

            print(f"| {holdout} | {window} | {len(new):,} | {figures(list(range(len(new))))} "
                  f"| {len(same):,} | {figures(same) if same else '– | – | –'} |")


def pairs(examples, cold) -> None:
    """How far one workflow's residual says another's, by how alike the two are: over every
    ordered pair of workflows of one repository with successful runs, the correlation of
    their median residuals, per band of similarity (their latest texts' words)."""
    from laser_ci.predictors import evidence

    res: dict[tuple[str, str], list[float]] = {}
    words: dict[tuple[str, str], frozenset[str]] = {}
    for e, c in zip(examples, cold, strict=True):
        if e.conclusion == "success":
            key = (e.repo, e.workflow_path)
            res.setdefault(key, []).append(math.log(e.runtime_s) - math.log(max(c.p50, 1.0)))
            words[key] = evidence.words_of(e.text)  # examples are in file order: any run's
    med = {k: float(np.median(v)) for k, v in res.items()}
    got = [(evidence.similarity(words[a], words[b]), med[a], med[b])
           for a in med for b in med if a != b and a[0] == b[0]]
    print("pairs of workflows of one repository, the correlation of their median residuals:")
    for lo, hi in ((0.0, 0.1), (0.1, 0.2), (0.2, 0.35), (0.35, 0.5), (0.5, 1.01)):
        sub = np.array([(x, y) for s, x, y in got if lo <= s < hi])
        if len(sub) > 3:
            print(f"  similarity {lo:.2f}-{min(hi, 1):.2f}: {len(sub):4d} pairs, "
                  f"r = {np.corrcoef(sub[:, 0], sub[:, 1])[0, 1]:+.2f}")


def similar_depth(folder: str, test_days: float,
                  holdouts: tuple[str, ...] = ("names", "workflows")) -> None:
    from laser_ci.evaluation.new_jobs import depth_rows
    from laser_ci.predictors import evidence
    from laser_ci.predictors.choice import load_predictor
    from laser_ci.training.metrics import log_mae

    predictor = load_predictor()
    shipped = evidence._from_workflow, evidence._from_repository

    def pooled(item, others):  # the pooled residual of ``others``, shrunk n/(n+1)
        return item.cold_log + evidence.shrunk_shift([r for o in others for r in o.residuals()])

    def per_job(item, others):  # each job of ``others`` lends (before MIN_SAY)
        return item.cold_log + evidence.lent(item.words,
                                             [(o.words, o.residuals()) for o in others])[0]

    def weighted(item, others):  # each other workflow lends once, through its jobs most alike
        lenders: dict[str, tuple[float, frozenset[str], list[float]]] = {}
        for o in others:
            sim = evidence.similarity(item.words, o.words)
            best = lenders.get(o.workflow)
            if best is None or sim > best[0]:
                lenders[o.workflow] = (sim, o.words, o.residuals())
            elif sim == best[0]:
                best[2].extend(o.residuals())
        return item.cold_log + evidence.lent(
            item.words, [(w, r) for _s, w, r in lenders.values()])[0]

    def of_workflow(f):  # a new job of a known workflow from its workflow's jobs alone
        return lambda item, same, every: evidence.Resolved("workflow", f(item, same), 0)

    for name, for_workflow, for_repository in [
            ("workflow pooled, repository per job (the rule before)", of_workflow(pooled),
             per_job),
            ("repository's jobs lend to both (shipped)", shipped[0], per_job),
            ("workflow's jobs lend, repository per job", of_workflow(per_job), per_job),
            ("pooled, both", of_workflow(pooled), pooled),
            ("workflow pooled, repository per workflow", of_workflow(pooled), weighted)]:
        for holdout in holdouts:
            evidence._from_workflow = for_workflow
            evidence._from_repository = (  # every one lends (the variants have no MIN_SAY)
                lambda item, others, f=for_repository:
                evidence.Resolved("repository", f(item, others), 0))
            try:
                rows = depth_rows(folder, predictor, test_days=test_days,
                                  shift_days=test_days, holdout=holdout, offsets={}, own=False)
            finally:
                evidence._from_workflow, evidence._from_repository = shipped
            for source in ("workflow", "repository"):
                sub = [r for r in rows if r.source == source and r.success]
                if sub:
                    truth = [r.truth for r in sub]
                    print(f"{Path(folder).name} earlier window, {holdout} held out, {name}: "
                          f"{source} {len(sub)} runs: "
                          f"{log_mae([r.pred[1] for r in sub], truth):.3f} "
                          f"(cold {log_mae([r.cold[1] for r in sub], truth):.3f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--own", action="append", default=[])
    ap.add_argument("--alpha", action="append", default=[])
    ap.add_argument("--residuals", default=None)
    ap.add_argument("--similar", default=None)
    ap.add_argument("--say", default=None)
    ap.add_argument("--unlike", default=None)
    ap.add_argument("--lenders", default=None)
    ap.add_argument("--failed", default=None)
    ap.add_argument("--same", action="append", default=[])
    ap.add_argument("--similar-depth", action="append", default=[])
    ap.add_argument("--test-days", type=float, default=3.0)
    args = ap.parse_args()
    for folder in args.own:
        own(folder, args.test_days)
    for folder in args.alpha:
        alpha(folder, args.test_days)
    if args.residuals:
        residuals(args.residuals)
    if args.similar:
        similar(args.similar)
    if args.say:
        say(args.say)
    if args.unlike:
        unlike(args.unlike)
    if args.lenders:
        other_lenders(args.lenders)
    if args.failed:
        failed_lenders(args.failed)
    for folder in args.same:
        same_job(folder, args.test_days)
    for folder in args.similar_depth:
        similar_depth(folder, args.test_days)


if __name__ == "__main__":
    main()
