"""Evaluation of jobs a repository has not run yet (issue 49): the subsets "new instance",
"new job" and "new workflow in a known repository" (by the evidence a job was predicted
from: ``SUBSETS``; and every held-out job, cold ones too: the ``held`` row and key), each
against the cold prediction.

Two data sets, two protocols (leave-out: the item's own earlier runs hidden, the rest of
the repository's kept):

- the shared runs (``gha-runs``, run-level labels, :func:`gha_rows`): each run of a workflow
  is predicted as a workflow new to its repository, from the cold prediction shifted by
  the residuals of the repository's *earlier* successful runs of its *other* workflows,
  each workflow's by how alike its text is (:func:`laser_ci.predictors.evidence.lent`,
  as the estimate does it for jobs; where none is alike enough, the cold prediction).
  Scored on the repositories the cold model never saw (the ``val`` split of the shipped
  baselines); bands cross-validated by repository (the offsets of a fold are quantiles of
  the other folds' residuals). Its workflows are labeled by run, not by job: the "new
  instance" and "new job" subsets have no examples there.
- the per-job depth data (``depth/<repo>``, :func:`depth_rows`): the history is the runs
  before a cut-off, the truth the successful job runs of the days after it. Job names are
  held out of the history in groups (``holdout="names"``: their siblings and workflow
  known) or whole workflows (``holdout="workflows"``), and every held-out job goes through
  :func:`laser_ci.estimate.estimate_workflows`, as ``estimate --history`` does: its
  ``history_source`` names the subset (``same``: a held-out job that has the runs of the
  same job under another name, :mod:`laser_ci.workflows.same_job`). Bands are calibrated
  on an earlier window (the same protocol one ``test_days`` earlier) and scored on the
  later one. Jobs with history are scored too (``own``): the estimate's p50 (from their
  own runs, :mod:`laser_ci.predictors.own_runs`) against the median of their earlier
  successful runs, the band per history size calibrated on the earlier window.

``benchmarks/new_jobs.py`` prints the tables and writes the shipped bands.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from laser_ci.predictors.base import Predictor, Runtime
from laser_ci.predictors.evidence import MIN_SAY, lent, typical_runs, words_of
from laser_ci.predictors.evidence_bands import band_offsets
from laser_ci.training.metrics import coverage, log_mae, paired_log_mae_diff, width_ratio

SUBSETS = {"siblings": "new instance", "workflow": "new job",
           "repository": "new workflow, alike jobs ran",
           "same": "held out, the same job's runs under another name",
           "own": "jobs with history"}
GHA_HELD = "new workflow in a known repository, alike or not"  # the shared runs' "held" row
DAY = 86400.0


@dataclass(frozen=True)
class Row:
    """One scored run: its bootstrap group (repository, or job name on the depth data), the
    evidence it was predicted from (``source``), whether it succeeded, its truth (seconds),
    the cold prediction and the evidence's prediction (p10, p50, p90, seconds)."""

    group: str
    source: str | None
    success: bool
    truth: float
    cold: tuple[float, float, float]
    pred: tuple[float, float, float]
    base: float | None = None  # own: the median of the job's earlier successful runs
    own_runs: int = 0  # own: how many earlier successful runs (its band's bucket)


def _triple(rt: Runtime) -> tuple[float, float, float]:
    return (rt.p10, rt.p50, rt.p90)


def _fold(key: str, k: int) -> int:
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % k


# --- the shared runs --------------------------------------------------------------------


def gha_rows(data_dir: str | os.PathLike[str], predictor: Predictor, *, split: str = "val",
             folds: int = 5, refit: bool = False) -> list[Row]:
    """Each run of ``split`` with earlier successful runs of other workflows of its
    repository, predicted as a workflow new to the repository (module doc); the band's
    offsets cross-validated over ``folds`` folds of repositories. ``refit``: every
    repository instead, its cold prediction by ``tabular`` trained by the recipe on the
    other folds (:func:`laser_ci.training.baselines.fit_tabular`, needs the train extra;
    minutes per fold); else ``predictor`` on ``split`` (the shipped model never saw the
    ``val`` repositories)."""
    from laser_ci.training.examples import load_examples

    if not refit:
        examples = [e for e in load_examples(data_dir, kinds=("workflow",), split=split,
                                             history=False) if e.runtime_s > 0]
        cold = predictor.predict([e.text for e in examples]) if examples else []
    else:
        examples, cold = _refit_cold(data_dir, folds)
    return _repository_rows(examples, cold, folds)


def _refit_cold(data_dir: str | os.PathLike[str], k: int) -> tuple[list[Any], list[Runtime]]:
    """Every workflow run of the folder and its cold prediction by the fold's own tabular."""
    from laser_ci.evaluation.folds import fold_of, fold_parts
    from laser_ci.training.baselines import fit_tabular
    from laser_ci.training.examples import load_examples

    every = load_examples(data_dir)
    fold = [fold_of(e.repo, k) for e in every]
    examples: list[Any] = []
    cold: list[Runtime] = []
    for f in range(k):
        train, val = fold_parts(every, fold, f, k)
        model = fit_tabular(train, val)
        held = [e for e, g in zip(every, fold, strict=True)
                if g == f and e.kind == "workflow" and e.runtime_s > 0]
        examples += held
        cold += model.predict([e.text for e in held]) if held else []
    return examples, cold


def repository_evidence(examples: Sequence[Any], cold: Sequence[Runtime],
                        ) -> list[tuple[int, frozenset[str],
                                        list[tuple[frozenset[str], list[float]]]]]:
    """For each workflow run with earlier successful runs of other workflows of its
    repository: its index, its words (:func:`laser_ci.predictors.evidence.words_of`) and,
    per such workflow, its words (its latest run's) and the residuals ``ln t - ln cold`` of
    those runs: what :func:`laser_ci.predictors.evidence.lent` takes."""
    from laser_ci.training.history import run_time

    by_repo: dict[str, list[int]] = {}
    for i, e in enumerate(examples):
        by_repo.setdefault(e.repo, []).append(i)
    words = [words_of(e.text) for e in examples]
    times = [run_time(e.created_at, e.commit_date) for e in examples]
    out = []
    for idx in by_repo.values():
        order = sorted(idx, key=lambda i: (times[i] or -math.inf, i))
        for pos, i in enumerate(order):
            e = examples[i]
            when = times[i]
            lenders: dict[str, tuple[frozenset[str], list[float]]] = {}  # per other workflow
            for j in order[:pos]:  # oldest first: a workflow's words are its latest run's
                o = examples[j]
                if (o.workflow_path != e.workflow_path and o.conclusion == "success"
                        and (when is None or (times[j] or 0) < when)):
                    residuals = lenders.get(o.workflow_path, (words[j], []))[1]
                    residuals.append(math.log(o.runtime_s) - math.log(max(cold[j].p50, 1.0)))
                    lenders[o.workflow_path] = (words[j], residuals)
            if lenders:
                out.append((i, words[i], list(lenders.values())))
    return out


def _repository_rows(examples: Sequence[Any], cold: Sequence[Runtime], folds: int) -> list[Row]:
    """Each run of :func:`repository_evidence` as a workflow new to its repository: where
    the alike workflows have a say of :data:`~laser_ci.predictors.evidence.MIN_SAY` or
    more, the cold prediction shifted by them (source ``repository``), the band's offsets
    quantiles of the other folds' such residuals; else the cold prediction (source None)."""
    raw = []  # (example, ln p50 or None: cold)
    for i, words, lenders in repository_evidence(examples, cold):
        shift, say = lent(words, lenders)
        raw.append((i, math.log(max(cold[i].p50, 1.0)) + shift if say >= MIN_SAY else None))
    rows = []
    # folds of their own (the val repositories all lie in one fold of evaluation.folds)
    fold_of = {i: _fold(examples[i].repo, folds) for i, _ in raw}
    for f in range(folds):
        fit = [math.log(examples[i].runtime_s) - mu for i, mu in raw
               if mu is not None and fold_of[i] != f and examples[i].conclusion == "success"]
        lo, hi = band_offsets(fit)
        for i, mu in raw:
            if fold_of[i] == f:
                e = examples[i]
                pred = (_triple(cold[i]) if mu is None else
                        (math.exp(mu + lo), math.exp(mu), math.exp(mu + hi)))
                rows.append(Row(e.repo, None if mu is None else "repository",
                                e.conclusion == "success", e.runtime_s, _triple(cold[i]), pred))
    return rows


# --- the depth data ---------------------------------------------------------------------


def _read_runs(folder: Path) -> list[tuple[float, dict[str, Any]]]:
    from laser_ci.training.examples import load_runs
    from laser_ci.training.history import run_time

    out = []
    for row in load_runs(folder):
        t = run_time(row.get("created_at"), row.get("commit_date"))
        if t is not None:
            out.append((t, row))
    out.sort(key=lambda x: x[0])
    return out


def _history_before(folder: Path, runs: Sequence[tuple[float, dict[str, Any]]], cut: float,
                    ) -> Any:
    """``load_history`` of the runs before ``cut`` (a temporary folder beside the blobs)."""
    from laser_ci.estimate import load_history

    with tempfile.TemporaryDirectory(prefix="laser-ci-newjobs-") as tmp:
        with gzip.open(Path(tmp) / "runs.jsonl.gz", "wt", encoding="utf-8") as fh:
            for t, row in runs:
                if t < cut:
                    fh.write(json.dumps(row) + "\n")
        for name in os.listdir(folder):
            if name.startswith(("blobs.", "corpus.")):
                os.symlink(folder.resolve() / name, Path(tmp) / name)
        return load_history(tmp)


def _workflows_at(runs: Sequence[tuple[float, dict[str, Any]]], cut: float,
                  paths: Iterable[str], folder: Path) -> tuple[list[Any], Any]:
    """The workflows of ``paths`` at the files of their latest run before ``cut``, and the
    repository's profile there."""
    from laser_ci.training.examples import load_blobs
    from laser_ci.workflows.model import RepoProfile
    from laser_ci.workflows.parse import read_workflows

    latest: dict[str, dict[str, Any]] = {}
    for t, row in runs:
        if t < cut:
            latest[str(row.get("workflow_path") or "")] = row
    wanted = {b for p in paths if p in latest for b in (latest[p].get("files") or {}).values()}
    blobs = load_blobs(folder, wanted)
    out, profile = [], None
    for path in sorted(paths):
        row = latest.get(path)
        if row is None:
            continue
        files = {p: blobs[b] for p, b in (row.get("files") or {}).items() if b in blobs}
        try:
            wfs, _errors = read_workflows(files, [path], schema=False)
        except Exception:  # noqa: BLE001 - an unreadable version is left out
            continue
        out += [w for w in wfs if w.path == path]
        profile = RepoProfile.from_json(row.get("repo_profile"))
    return out, profile


def _truth(runs: Sequence[tuple[float, dict[str, Any]]], start: float, end: float,
           ) -> dict[tuple[str, str], list[tuple[float, bool]]]:
    """(seconds, succeeded) of every timed job run in [start, end), by (path, name)."""
    out: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    for t, row in runs:
        if not start <= t < end:
            continue
        for job in row.get("jobs") or ():
            s = job.get("run_time_s")
            if isinstance(s, (int, float)) and s > 0 and job.get("conclusion") not in (
                    "skipped", "cancelled") and job.get("name"):
                out.setdefault((str(row.get("workflow_path")), str(job["name"])), []).append(
                    (float(s), job.get("conclusion") == "success"))
    return out


def job_runs_before(runs: Sequence[tuple[float, dict[str, Any]]], cut: float,
                    ) -> dict[tuple[str, str], list[tuple[float, str | None]]]:
    """(seconds, conclusion) of every timed job run before ``cut``, oldest first, by
    (path, name): one per name and run, skipped and cancelled runs left out."""
    out: dict[tuple[str, str], list[tuple[float, str | None]]] = {}
    for t, row in runs:
        if t >= cut:
            continue
        seen: set[str] = set()
        for j in row.get("jobs") or ():
            s, name = j.get("run_time_s"), j.get("name")
            if (name in seen or not isinstance(s, (int, float)) or s <= 0
                    or j.get("conclusion") in ("skipped", "cancelled")):
                continue
            seen.add(name)
            out.setdefault((str(row["workflow_path"]), str(name)), []).append(
                (float(s), j.get("conclusion")))
    return out


def depth_rows(folder: str | os.PathLike[str], predictor: Predictor, *, test_days: float = 3.0,
               shift_days: float = 0.0, holdout: str = "names", groups: int = 5,
               offsets: dict[str, tuple[float, float]] | None = None,
               own: bool = True) -> list[Row]:
    """The held-out jobs of the ``test_days`` before the data's end (less ``shift_days``),
    each predicted through :func:`laser_ci.estimate.estimate_workflows` from the history
    before them with its name (``holdout="names"``) or workflow (``"workflows"``) held out,
    in ``groups`` groups; with ``own``, the jobs with history too (module doc)."""
    from laser_ci.estimate import estimate_workflows
    from laser_ci.text.serialize import serialize_job
    from laser_ci.workflows import runtime_matrix

    folder = Path(folder)
    runs = _read_runs(folder)
    end = runs[-1][0] - shift_days * DAY + 1.0
    cut = end - test_days * DAY
    history = _history_before(folder, runs, cut)
    truth = _truth(runs, cut, end)
    workflows, profile = _workflows_at(runs, cut, history.runs, folder)
    expanded = [runtime_matrix.expand(wf, history.runs_of(wf.path)) for wf in workflows]
    pairs = [(wf.path, job) for wf in expanded for job in wf.jobs]
    cold_rt = predictor.predict([serialize_job(job, wf, profile) for wf in expanded
                                 for job in wf.jobs]) if pairs else []
    cold = {}
    for (path, job), rt in zip(pairs, cold_rt, strict=True):
        cold.setdefault((path, job.name), rt)
    keys = [k for k in dict.fromkeys((p, j.name) for p, j in pairs) if k in truth]
    rows: list[Row] = []

    def score(result: dict[str, Any], chosen: set[tuple[str, str]], hist: Any) -> None:
        for wf in result["workflows"]:
            seen: set[str] = set()
            for job in wf["jobs"]:
                key = (wf["path"], job["name"])
                if key not in chosen or job["name"] in seen:
                    continue
                seen.add(job["name"])
                rt = job["runtime_s"]
                source = job.get("history_source")
                base, n = None, 0
                if source == "own" and job.get("history_as"):  # held out: not its own runs
                    source, n = "same", int(job.get("history_runs") or 0)
                elif source == "own":
                    typical = typical_runs(hist.for_job(*key), window=10**9)
                    base = float(np.median(typical)) if typical else None
                    n = len(typical)
                for seconds, ok in truth[key]:
                    rows.append(Row(key[1], source, ok, seconds, _triple(cold[key]),
                                    (rt["p10"], rt["p50"], rt["p90"]), base, n))

    for g in range(groups):
        if holdout == "names":
            held = {k for k in keys if _fold(f"{k[0]}|{k[1]}", groups) == g}
        elif holdout == "workflows":
            held = {k for k in keys if _fold(k[0], groups) == g}
        else:
            raise ValueError(f"holdout: {holdout!r} (names or workflows)")
        if not held:
            continue
        gone = {k for k in history.jobs if (k in held if holdout == "names"
                                             else k[0] in {p for p, _ in held})}
        hist = replace(history, jobs={k: v for k, v in history.jobs.items() if k not in gone})
        result = estimate_workflows(workflows, [], predictor, profile, history=hist,
                                    offsets=offsets)
        score(result, held, hist)
    if own:
        result = estimate_workflows(workflows, [], predictor, profile, history=history,
                                    offsets=offsets)
        score(result, {k for k in keys if history.for_job(*k) is not None}, history)
        rows = [r for r in rows if r.source != "own" or r.base is not None]
    return rows


# --- the tables ---------------------------------------------------------------------------


def depth_report(folder: str | os.PathLike[str], predictor: Predictor, *,
                 test_days: float = 3.0, holdout: str = "names",
                 ) -> tuple[list[Row], list[Row], dict[str, tuple[float, float]]]:
    """The depth protocol with its bands: the rows of the window one ``test_days`` earlier
    (the calibration), those of the last ``test_days`` with the bands calibrated on the
    earlier ones (jobs with history too, with ``holdout="names"``), and those offsets."""
    kw: dict[str, Any] = {"test_days": test_days, "holdout": holdout, "offsets": {}}
    early = depth_rows(folder, predictor, shift_days=test_days, own=holdout == "names", **kw)
    offsets = calibrate(early)
    rows = rebanded(depth_rows(folder, predictor, own=holdout == "names", **kw), offsets)
    return early, rows, offsets


def is_depth(data_dir: str | os.PathLike[str]) -> bool:
    """Whether a data folder holds per-job history of one repository (its runs list their
    jobs): the depth protocol; else the shared runs' (module doc)."""
    from laser_ci.training.examples import load_runs

    rows = load_runs(data_dir)
    return bool(rows) and len({r.get("repo") for r in rows}) == 1 and all(
        isinstance(r.get("jobs"), list) for r in rows[:50])


def eval_new_jobs(data_dir: str, predictor: Predictor, fmt: str = "table",
                  test_days: float = 3.0) -> str:
    """``laser-ci eval DATA_DIR --new-jobs``: the tables of the subsets (markdown, or the
    figures as JSON with ``fmt="json"``) on ``data_dir`` by its protocol."""
    from laser_ci.evaluation.evaluate import json_safe

    parts, figures = [], {}
    if is_depth(data_dir):
        for holdout in ("names", "workflows"):
            _early, rows, offsets = depth_report(data_dir, predictor, test_days=test_days,
                                                 holdout=holdout)
            text, figs = table(rows, f"{Path(data_dir).name}: last {test_days:g} days, "
                                     f"{holdout} held out of the history (bands from the "
                                     f"{test_days:g} days before)")
            parts.append(text)
            figures[holdout] = {"offsets": offsets, **figs}
    else:
        text, figs = table(gha_rows(data_dir, predictor),
                           f"{Path(data_dir).name}: each run as a workflow new to its "
                           "repository (val repositories, bands cross-validated by repository)",
                           held=GHA_HELD)
        parts.append(text)
        figures["repository"] = figs
    if fmt == "json":
        return json.dumps(json_safe(figures), indent=1) + "\n"
    return "\n".join(parts)


def calibrate(rows: Sequence[Row], success_only: bool = True) -> dict[str, tuple[float, float]]:
    """Per evidence source, the (p10, p90) offsets of ``ln truth - ln p50`` of ``rows``; of
    jobs with history (``own``) also per history-size bucket
    (:func:`laser_ci.predictors.own_runs.bucket`), of those with earlier successful runs."""
    from laser_ci.predictors.own_runs import bucket

    res: dict[str, list[float]] = {}
    for x in rows:
        if x.source is None or not (x.success or not success_only):
            continue
        if x.source == "own" and not x.own_runs:
            continue
        r = math.log(x.truth) - math.log(max(x.pred[1], 1.0))
        res.setdefault(x.source, []).append(r)
        if x.source == "own":
            res.setdefault(bucket(x.own_runs), []).append(r)
    return {k: band_offsets(r) for k, r in res.items() if len(r) >= 20}


def rebanded(rows: Sequence[Row], offsets: dict[str, tuple[float, float]]) -> list[Row]:
    """``rows`` with the bands of ``offsets`` around their p50 (sources without: kept; jobs
    with history: their bucket's, :func:`laser_ci.predictors.own_runs.offsets_for`)."""
    from laser_ci.predictors.own_runs import offsets_for

    out = []
    for r in rows:
        band = (offsets_for(r.own_runs, offsets) if r.source == "own" and r.own_runs
                else offsets.get(r.source) if r.source is not None else None)
        if band is not None:
            lo, hi = band
            p50 = r.pred[1]
            r = replace(r, pred=(p50 * math.exp(lo), p50, p50 * math.exp(hi)))
        out.append(r)
    return out


def summarize(rows: Sequence[Row]) -> dict[str, Any]:
    """log-MAE, coverage and p90/p10 width of the evidence and of the cold prediction, and
    the paired difference (evidence - cold, 95% interval by resampling ``group``)."""
    truth = [r.truth for r in rows]
    p = [r.pred for r in rows]
    c = [r.cold for r in rows]
    out = {"n": len(rows), "groups": len({r.group for r in rows}),
           "log_mae": log_mae([x[1] for x in p], truth),
           "cold_log_mae": log_mae([x[1] for x in c], truth),
           "coverage": coverage([x[0] for x in p], [x[2] for x in p], truth),
           "cold_coverage": coverage([x[0] for x in c], [x[2] for x in c], truth),
           "width": width_ratio([x[0] for x in p], [x[2] for x in p]),
           "cold_width": width_ratio([x[0] for x in c], [x[2] for x in c]),
           "diff": paired_log_mae_diff([x[1] for x in p], [x[1] for x in c], truth,
                                       [r.group for r in rows]) if rows else None}
    base = [r.base for r in rows]
    if rows and all(b is not None for b in base):
        out["base_log_mae"] = log_mae(base, truth)  # type: ignore[arg-type]
        out["vs_base"] = paired_log_mae_diff([x[1] for x in p], base, truth,  # type: ignore[arg-type]
                                             [r.group for r in rows])
    return out


def table(rows: Sequence[Row], title: str, held: str = "every job held out",
          ) -> tuple[str, dict[str, Any]]:
    """A markdown table per subset, successful runs first, then all runs; and its figures.
    ``held``: the name of the row of every held-out job whatever its evidence (cold ones
    too), where there are several sources."""
    from laser_ci.training.metrics import format_diff

    lines = [f"**{title}**", "",
             "| subset | runs | n | groups | log-MAE | cold | Δ vs cold [95%] | coverage "
             "(cold) | p90/p10 (cold) | earlier successful median | Δ vs it [95%] |",
             "|---|---|---:|---:|---:|---:|---|---|---|---:|---|"]
    figures: dict[str, Any] = {}
    for which in ("successful", "all"):
        for source, name in [*SUBSETS.items(), ("held", held)]:
            sub = [r for r in rows if (r.source == source or (source == "held"
                                                               and r.source != "own"))
                   and (r.success or which == "all")]
            if not sub or (source == "held" and len({r.source for r in sub}) < 2
                           and sub[0].source in SUBSETS):
                continue  # none, or the same rows as the one subset above
            s = summarize(sub)
            figures[f"{source}/{which}"] = s
            base = (f"{s['base_log_mae']:.3f} | {format_diff(s['vs_base'])}"
                    if "base_log_mae" in s else "– | –")
            lines.append(
                f"| {name} | {which} | {s['n']:,} | {s['groups']} | {s['log_mae']:.3f} | "
                f"{s['cold_log_mae']:.3f} | {format_diff(s['diff'])} | {s['coverage']:.0%} "
                f"({s['cold_coverage']:.0%}) | {s['width']:.1f}× ({s['cold_width']:.1f}×) | "
                f"{base} |")
    if not figures:  # e.g. one workflow, held out whole: no other workflow to learn from
        return f"**{title}**\n\n(no held-out job with a scored run)\n", figures
    return "\n".join(lines) + "\n", figures
