"""The cross-validated report as tables, and as the ``cv`` block of the model cards.

:func:`render_cv_table` and :func:`describe_cv` print ``laser-ci eval --folds K``'s report
(:mod:`laser_ci.evaluation.crossval`); :func:`write_cards` stores it in each scored family's
``card.json`` (``--write-cards``), where :mod:`laser_ci.predictors.choice` reads it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from laser_ci.evaluation.evaluate import SUBSET_TITLES, _table, format_metric, json_safe
from laser_ci.evaluation.regimes import SUBSETS
from laser_ci.training import metrics

LM_NAME = "laser-lm"
BASELINE_NAMES = ("median", "tabular", "text-linear", "history-median", "history-recent")

CV_COLUMNS = (
    ("n", "n"),
    ("log_mae", "log-MAE"),
    ("within_2x", "within 2x"),
    ("coverage", "p10-p90 cov"),
    ("width", "width p90/p10"),
    ("interval_score", "interval score"),
)
RUNS = ("success", "all")  # successful runs are the headline: how long until it passes


# --- tables --------------------------------------------------------------------------------


def _block(res: Mapping[str, Any], report: Mapping[str, Any], regime: str,
           subset: str) -> Mapping[str, Any]:
    block = res if regime == report.get("history") else res["regimes"][regime]
    return block if subset == "all" else block["subsets"][subset]


def versus(report: Mapping[str, Any], a: str, b: str, regime: str, subset: str,
           runs: str) -> dict[str, Any] | None:
    """The paired difference ``a`` minus ``b`` (either order in the report's pairs)."""
    for p in report.get("paired", {}).get("pairs", []):
        if (p["regime"], p["subset"], p["runs"]) != (regime, subset, runs):
            continue
        if (p["a"], p["b"]) == (a, b):
            return dict(p)
        if (p["a"], p["b"]) == (b, a):  # the bootstrap's quantiles mirror exactly
            return {**p, "a": a, "b": b, "diff": -p["diff"], "lo": -p["hi"], "hi": -p["lo"]}
    return None


def render_cv_table(report: Mapping[str, Any], markdown: bool = False) -> str:
    """One table per subset (``all``; with ``prior`` also warm, warm-changed, cold): each
    predictor in each regime, successful runs first; under it the paired differences
    against the reference; then the wall time per fold."""
    history = report.get("history", "none")
    ref = report["paired"]["reference"]
    titles = [t for _, t in CV_COLUMNS]
    blocks = []
    for subset in ("all", *(SUBSETS if history == "prior" else ())):
        regimes = (history,) if history != "prior" or subset == "cold" else ("prior", "none")
        n = report["n"] if subset == "all" else report["subsets"][subset]["n"]
        title = f"{subset}: {n} {SUBSET_TITLES[subset]}"
        body = []
        for name, res in report["predictors"].items():
            for regime in regimes:
                block = _block(res, report, regime, subset)
                for runs in RUNS:
                    m = block[runs]
                    body.append([name, regime, runs] + [format_metric(k, m.get(k)) for k, _ in CV_COLUMNS])
        lines = [f"**{title}**" if markdown else title]
        lines += _table(["predictor", "history", "runs"] + titles, body, 3, markdown)
        if len(report["predictors"]) > 1:
            groups: dict[str, Any] = {}
            diffs = []
            for name in report["predictors"]:
                for regime in regimes:
                    if name == ref:
                        continue
                    cells = []
                    for runs in RUNS:
                        p = versus(report, name, ref, regime, subset, runs)
                        groups.setdefault(runs, (p or {}).get("groups"))
                        cells.append(metrics.format_diff(p))
                    diffs.append([name, regime] + cells)
            head = (f"log-MAE minus {ref}'s (same history) on the same examples, with a 95% "
                    f"interval from resampling repositories ({groups.get('success')} with "
                    f"successful runs, {groups.get('all')} in all); negative: better than {ref}")
            lines += ["", f"_{head}_" if markdown else head]
            lines += _table(["predictor", "history", "success", "all"], diffs, 2, markdown)
        blocks.append("\n".join(lines))
    blocks.append(render_fold_times(report, markdown))
    return "\n\n".join(blocks) + "\n"


def render_fold_times(report: Mapping[str, Any], markdown: bool = False) -> str:
    """Wall time per fold: each predictor's training (fit) and scoring (predict) seconds."""
    names = list(report["predictors"])
    header = ["fold", "repos", "scored", "train", "val"] + [f"{n} fit+predict s" for n in names]
    body = []
    for r in report["cv"]["folds"]:
        body.append([str(r["fold"]), str(r["repos"]), str(r["n"]), str(r["train"]), str(r["val"])]
                    + [f"{r['seconds'][n]['fit']:.1f}+{r['seconds'][n]['predict']:.1f}"
                       for n in names])
    total = report["cv"]["seconds"]
    title = (f"wall time per fold, seconds (train/val: the recipe's parts of the training "
             f"folds); features {report['cv']['features_seconds']:.1f} s; the baselines' "
             f"folds {report['cv'].get('jobs', 1)} at once; total {total:.1f} s")
    return "\n".join([f"_{title}_" if markdown else title,
                      *_table(header, body, 1, markdown)])


def describe_cv(report: Mapping[str, Any]) -> str:
    history = report.get("history", "none")
    text = (f"cv: {report['folds']} folds by repository over all {report['repos']} repos; "
            f"kind={report.get('kind')} history={history}: {report['n']} examples "
            f"({report['n_success']} success) from {report['runs']} runs; "
            f"{report['fallback']} fallback texts")
    if history == "prior":
        sub = report["subsets"]
        text += (f"; {sub['warm']['n']} with earlier runs ({sub['warm-changed']['n']} of them "
                 f"after a workflow file change), {sub['cold']['n']} without")
    if "lm" in report:
        text += (f"\n{LM_NAME}: fine-tuned per fold from {report['lm']['base']}, pretrained on "
                 "the unlabeled workflow corpus only (no labels; the corpus includes the "
                 "held-out repositories' workflow files)")
    return text


# --- cards ---------------------------------------------------------------------------------


def _sources_digest(paths: Iterable[Path]) -> str:
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for p in sorted(set(paths)):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def recipe_fingerprint() -> str:
    """A digest of the code the baselines' cross-validated figures depend on: the recipe,
    the predictors, the features and every module that turns a run into text."""
    from laser_ci.training.examples import _text_sources

    root = Path(__file__).resolve().parents[1]
    extra = [root / "training" / "baselines.py", root / "predictors" / "baselines.py",
             root / "predictors" / "trees.py",
             root / "predictors" / "features.py", root / "evaluation" / "folds.py",
             root / "training" / "history.py"]
    return _sources_digest([*_text_sources(), *extra])


def summary(reports: Mapping[str, Mapping[str, Any]], name: str) -> dict[str, float]:
    """Flat log-MAE keys of one predictor over the stored reports (``"workflow/prior"``
    ...): ``[job_][prior_][warm_|warm_changed_|cold_][success_]log_mae``, plus the band
    metrics of all examples. ``log_mae`` (cold start, workflow runs, all conclusions) and
    ``prior_log_mae`` are what :mod:`laser_ci.predictors.choice` compares."""
    out: dict[str, float] = {}
    for key, rep in sorted(reports.items()):
        kind, history = key.split("/")
        res = rep.get("predictors", {}).get(name)
        if res is None:
            continue
        k = "" if kind == "workflow" else f"{kind}_"
        for regime in (history, "none") if history == "prior" else (history,):
            block = res if regime == history else res["regimes"][regime]
            r = "prior_" if regime == "prior" else ""
            for subset in ("all", *(SUBSETS if history == "prior" else ())):
                if subset == "cold" and regime != history:
                    continue
                b = block if subset == "all" else block["subsets"][subset]
                s = "" if subset == "all" else subset.replace("-", "_") + "_"
                for runs in RUNS:
                    c = "success_" if runs == "success" else ""
                    v = b[runs].get("log_mae")
                    if metrics.is_number(v):
                        out[f"{k}{r}{s}{c}log_mae"] = v
                    if subset == "all":
                        for m in ("within_2x", "coverage", "width", "interval_score"):
                            v = b[runs].get(m)
                            if metrics.is_number(v):
                                out[f"{k}{r}{c}{m}"] = v
    return out


def _compact(report: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    keep = ("folds", "kind", "history", "n", "n_success", "runs", "repos", "fallback", "subsets",
            "paired", "cv", "lm", "command")
    out = {k: report[k] for k in keep if k in report}
    out["predictors"] = {n: v for n, v in report["predictors"].items() if n in names}
    return out


def write_cards(report: Mapping[str, Any], families: Sequence[tuple[str, Path]],
                command: str, data_dir: str) -> list[Path]:
    """Store the cross-validated scores of ``report`` in each family's ``card.json``
    (``families``: ``(family, folder)`` as :func:`laser_ci.predictors.choice.find_families`
    gives them) under ``"cv"``::

        "cv": {"folds": K, "data": {"path", "digest"}, "fingerprint": ..., "note": ...,
               "predictors": {name: summary keys},
               "reports": {"workflow/prior": the report, ...}}

    A report of another kind or history is added beside the stored ones; a different K,
    data folder or (baselines) fingerprint starts the block afresh. Returns the cards
    written."""

    scored = list(report["predictors"])
    written = []
    for family, folder in families:
        if not _family_names({"new": {"predictors": report["predictors"]}}, family):
            continue
        path = folder / "card.json"
        card = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        fingerprint = recipe_fingerprint() if family == "baselines" else \
            _lm_fingerprint(report.get("lm") or {})
        cv = card.get("cv") if isinstance(card.get("cv"), dict) else {}
        data = {"path": data_dir, "digest": data_digest(data_dir)}
        if (cv.get("folds"), (cv.get("data") or {}).get("digest"), cv.get("fingerprint")) != (
                report["folds"], data["digest"], fingerprint):
            cv = {}
        reports = dict(cv.get("reports") or {})
        reports[f"{report['kind']}/{report['history']}"] = _compact(
            {**report, "command": command}, scored)
        cv = {
            "folds": report["folds"],
            "data": data,
            "fingerprint": fingerprint,
            "note": ("cross-validated by repository (laser-ci eval --folds): each fold's "
                     "models trained by the recipe on the other folds; the figures describe "
                     "the recipe, not the shipped files"
                     + ("; laser-lm fine-tuned per fold from a base pretrained on the "
                        "unlabeled workflow corpus only (no labels)" if family == "lm" else "")),
            "predictors": {n: summary(reports, n) for n in _family_names(reports, family)},
            "reports": reports,
        }
        card["cv"] = cv
        path.write_text(json.dumps(json_safe(card), indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written


def _family_names(reports: Mapping[str, Mapping[str, Any]], family: str) -> list[str]:
    """The predictors of ``family`` scored in any of ``reports``, in order."""
    from laser_ci.predictors.baselines import BASELINES

    names: dict[str, None] = {}
    for rep in reports.values():
        for n in rep.get("predictors", {}):
            if (family == "baselines" and n in BASELINES) or (family == "lm" and n == LM_NAME):
                names[n] = None
    return list(names)


def _lm_fingerprint(lm: Mapping[str, Any]) -> str:
    blob = json.dumps({"base": lm.get("base"), "config": lm.get("config")}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def data_digest(data_dir: str | Path) -> str:
    """Which data set a report is of: the names and sizes of its runs and blobs files."""
    from laser_ci.training.examples import _data_file

    h = hashlib.sha256()
    for stem in ("runs", "blobs"):
        p = _data_file(data_dir, stem, required=False)
        if p is not None:
            h.update(f"{p.name}:{p.stat().st_size}|".encode())
    return h.hexdigest()[:16]
