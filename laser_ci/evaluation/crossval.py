"""``laser-ci eval DATA_DIR --folds K``: cross-validation by repository.

Every repository is in one of K folds (:func:`laser_ci.evaluation.folds.fold_of`: the hash
the split uses; with K = 5 fold 0 is the ``val`` split). For each fold in turn, every
requested predictor is trained with its shipped recipe on the other K - 1 folds and scored
on the held-out one; the predictions are pooled, so the metrics are over every repository
of the folder. Inside the K - 1 training folds the next fold (:func:`~laser_ci.evaluation.
folds.inner_fold`) plays the part the ``val`` split plays in the shipped recipe (grid
selection and band calibration for the baselines, the best epoch for the language model)
and the other K - 2 that of ``train``; the held-out fold's labels reach no model that
scores it.

Predictors (``--predictor``, repeatable; default: the five baselines, and ``laser-lm``
when ``--lm-base`` is given):

- ``median``, ``tabular`` (with its history part), ``text-linear``, ``history-median`` and
  ``history-recent`` (their fallback: the fold's ``tabular``):
  :func:`laser_ci.training.baselines.fit_baselines`, the recipe of
  ``benchmarks/baselines.py``, on both example kinds of the training folds.
- ``laser-lm``: the shipped model's recipe (:mod:`laser_ci.evaluation.lm_recipe`), fine-tuned
  per fold from ``--lm-base`` (a model pretrained on the unlabeled workflow corpus only:
  ``laser-ci train``; no labels in it, but its corpus includes the held-out repositories'
  workflow files), exported to int8 ONNX and decoded like the shipped model.

Report (``--format json``): the ``laser-ci eval`` report (:mod:`laser_ci.evaluation.evaluate`)
with ``"split": "cv"``, ``"folds": K``, the band metrics in every metrics block (``width``:
median p90/p10; ``interval_score``: :mod:`laser_ci.training.metrics`), and::

    "paired": {"reference": NAME, "pairs": [{"regime", "subset", "runs", "a", "b", "n",
               "diff", "lo", "hi", "groups"}, ...]},
    "cv": {"fold_of", "inner", "recipes", "features_seconds", "jobs", "seconds",
           "folds": [{"fold", "inner", "repos", "n", "train", "val",
                      "seconds": {name: {"fit", "predict"}}}, ...]},
    "lm": {"base", "pretrained", "config"}          # when laser-lm was scored

``pairs``: log-MAE of ``a`` minus that of ``b`` on the same examples (negative: ``a`` is
better), 95% interval from resampling repositories
(:func:`laser_ci.training.metrics.paired_log_mae_diff`), for every pair of predictors in
every regime, subset and conclusion set (``runs``: ``success`` or ``all``).

``--write-cards`` stores the scores in the ``card.json`` of each scored family's model
folder under ``"cv"`` (:func:`laser_ci.evaluation.cv_report.write_cards`);
:mod:`laser_ci.predictors.choice` ranks predictors by them. The tables and the cards are in
:mod:`laser_ci.evaluation.cv_report`.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from laser_ci.evaluation.cv_report import (
    BASELINE_NAMES,
    LM_NAME,
    RUNS,
    describe_cv,
    render_cv_table,
    write_cards,
)
from laser_ci.evaluation.evaluate import json_safe, predict_texts, predictor_entry, report_head
from laser_ci.evaluation.folds import fold_of, fold_parts, inner_fold
from laser_ci.evaluation.lm_recipe import CVError, LMRecipe
from laser_ci.evaluation.regimes import SUBSETS, example_text, in_subset, subset_of
from laser_ci.predictors.base import Predictor, Runtime
from laser_ci.training import metrics
from laser_ci.training.example import Example

TRAINABLE = (*BASELINE_NAMES, LM_NAME)
MIN_FOLDS = 3  # held-out fold, the recipe's val fold, and at least one to train on

__all__ = ["CVError", "LMRecipe", "cross_validate", "eval_cv", "run_folds"]


# --- the folds -----------------------------------------------------------------------------


class _Lines:
    """The progress bar's interface as plain lines (stderr is not a terminal: a log file)."""

    def __init__(self, total: int, desc: str) -> None:
        self.total, self.desc, self.n, self.note, self.t0 = total, desc, 0, "", time.time()

    def set_postfix_str(self, note: str) -> None:
        self.note = note

    def update(self, k: int = 1) -> None:
        self.n += k
        line = f"{self.desc}: {self.n}/{self.total} {self.note} ({time.time() - self.t0:.0f} s)\n"
        sys.stderr.write(line)  # one write: lines of folds run at once do not interleave
        sys.stderr.flush()

    def close(self) -> None:
        pass


def _bar(total: int, desc: str, enabled: bool) -> Any:
    """A progress bar on stderr (tqdm on a terminal, plain lines otherwise); None: off."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm comes with the train extra
        return _Lines(total, desc)
    if not sys.stderr.isatty():
        return _Lines(total, desc)
    return tqdm(total=total, desc=desc, file=sys.stderr, dynamic_ncols=True, leave=True)


@dataclass
class FoldPredictions:
    """Pooled predictions (index = position in the scored examples) and per-fold records."""

    prior: dict[str, list[Runtime | None]]
    cold: dict[str, list[Runtime | None]]
    folds: list[dict[str, Any]]
    features_seconds: float = 0.0


@dataclass
class FoldWork:
    """What every fold reads (sent once to each process when folds run in parallel)."""

    examples: Sequence[Example]
    fold: list[int]
    scored: Sequence[int]
    k: int
    names: Sequence[str]
    history: str
    lm: LMRecipe | None
    feats: dict[str, dict[str, float]] | None
    progress: bool
    log: Callable[[str], None] | None


_WORK: FoldWork | None = None


def score_fold(w: FoldWork, f: int) -> tuple[dict[str, Any], list[int],
                                            dict[str, tuple[list[Runtime], list[Runtime]]]]:
    """Train on every fold but ``f``, predict fold ``f``: ``(record, held, predictions)``
    with ``held`` the positions in ``w.scored`` and ``predictions[name] = (prior, cold)``."""
    from laser_ci.training.baselines import NEEDS, fit_baselines, with_needs

    names, k, examples = w.names, w.k, w.examples
    base_names = [n for n in names if n in BASELINE_NAMES]
    inner = inner_fold(f, k)
    train, val = fold_parts(examples, w.fold, f, k)
    held = [j for j, i in enumerate(w.scored) if w.fold[i] == f]
    test = [examples[w.scored[j]] for j in held]
    record: dict[str, Any] = {
        "fold": f, "inner": inner, "repos": len({e.repo for e in test}), "n": len(test),
        "train": len(train), "val": len(val), "seconds": {}}
    # one step per predictor trained, one per predictor scored
    bar = _bar(2 * len(names), f"fold {f + 1}/{k}", w.progress)
    fitted: dict[str, Predictor] = {}
    if base_names:
        order = with_needs(base_names)
        if bar is not None:
            bar.set_postfix_str(f"training {order[0]}")

        def done(name: str) -> None:
            if bar is None:
                return
            if name in names:
                bar.set_postfix_str(f"trained {name}")
                bar.update(1)
            later = order[order.index(name) + 1:]
            bar.set_postfix_str(f"training {later[0]}" if later else "trained")

        fit = fit_baselines(train, val, names=base_names, feats=w.feats, log=w.log, done=done)
        fitted.update(fit.predictors)
        for m in base_names:  # a fallback trained only for m counts in m's time
            extra = sum(fit.seconds[d] for d in NEEDS.get(m, ()) if d not in names)
            record["seconds"][m] = {"fit": round(fit.seconds[m] + extra, 2)}
    out: dict[str, tuple[list[Runtime], list[Runtime]]] = {}
    for m in names:
        if m == LM_NAME:
            assert w.lm is not None
            if bar is not None:
                bar.set_postfix_str(f"fine-tuning {m}")
            t = time.perf_counter()
            fitted[m] = w.lm.fit(train, val, f, k=k, tabular=fitted.get("tabular"),
                                 feats=w.feats)
            record["seconds"][m] = {"fit": round(time.perf_counter() - t, 2)}
            if bar is not None:
                bar.set_postfix_str(f"fine-tuned {m}")
                bar.update(1)
        if bar is not None:
            bar.set_postfix_str(f"scoring {m}")
        t = time.perf_counter()
        texts = [example_text(e, w.history) for e in test]
        if w.history == "prior":
            both = predict_texts(fitted[m], texts + [e.text for e in test]) if test else []
            out[m] = (both[: len(test)], both[len(test):])
        else:
            prior = predict_texts(fitted[m], texts) if test else []
            out[m] = (prior, prior)
        record["seconds"][m]["predict"] = round(time.perf_counter() - t, 2)
        if bar is not None:
            bar.set_postfix_str(f"scored {m}")
            bar.update(1)
    if bar is not None:
        bar.set_postfix_str("done")
        bar.close()
    return record, held, out


def _set_work(work: FoldWork) -> None:
    global _WORK
    _WORK = work


def _pool_fold(f: int) -> tuple[dict[str, Any], list[int],
                                  dict[str, tuple[list[Runtime], list[Runtime]]]]:
    assert _WORK is not None
    return score_fold(_WORK, f)


def default_jobs(k: int) -> int:
    """The baselines' folds trained at once by default: one per CPU this process may use,
    at most K."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(k, cpus))


def run_folds(
    examples: Sequence[Example],
    scored: Sequence[int],
    k: int,
    names: Sequence[str],
    history: str,
    *,
    lm: LMRecipe | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> FoldPredictions:
    """Train every predictor of ``names`` once per fold on the other folds of ``examples``
    (all kinds) and predict the held-out fold's examples among ``scored`` (indices into
    ``examples``) in the ``history`` regime and, with ``prior``, also cold. The baselines'
    folds run ``jobs`` at once in spawned processes (they are single-threaded); the language
    model's folds run one at a time, after them."""
    from laser_ci.training.baselines import text_features

    if k < MIN_FOLDS:
        raise CVError(f"cross-validation needs at least {MIN_FOLDS} folds, not {k}")
    if LM_NAME in names and lm is None:
        raise CVError(f"{LM_NAME} needs a base to fine-tune from (--lm-base)")
    n = len(scored)
    out = FoldPredictions({m: [None] * n for m in names}, {m: [None] * n for m in names}, [])
    t0 = time.perf_counter()
    feats = (text_features(examples)
             if {"tabular", "history-median", "history-recent"} & set(names) else None)
    out.features_seconds = round(time.perf_counter() - t0, 2)
    folds = [fold_of(e.repo, k) for e in examples]
    jobs = max(1, min(jobs, k))
    # the baselines (single-threaded) fold by fold in `jobs` processes, then the language
    # model one fold at a time (it uses the cores itself)
    lm_part = {LM_NAME} & set(names)
    if lm_part and lm is not None:
        # the language model's cold reference is the fold's tabular model: train it (and
        # what needs it) once, in the language model's pass, rather than once in each pass
        from laser_ci.training.baselines import NEEDS

        lm_part |= {n for n in names if n == "tabular" or "tabular" in NEEDS.get(n, ())}
    parts = [[n for n in names if n not in lm_part], [n for n in names if n in lm_part]]
    results: list[tuple[dict[str, Any], list[int], dict[str, Any]]] = []
    for part, part_jobs in zip(parts, (jobs, 1), strict=True):
        if not part:
            continue
        work = FoldWork(examples, folds, scored, k, part, history, lm, feats, progress, log)
        if part_jobs == 1:
            results += [score_fold(work, f) for f in range(k)]
            continue
        import multiprocessing

        # spawned, not forked: a parent that has loaded torch or OpenMP is not fork-safe
        with multiprocessing.get_context("spawn").Pool(
                part_jobs, initializer=_set_work, initargs=(work,)) as pool:
            results += pool.map(_pool_fold, range(k), chunksize=1)
    records: dict[int, dict[str, Any]] = {}
    for record, held, preds in results:
        for m, (prior, cold) in preds.items():
            for j, p, c in zip(held, prior, cold, strict=True):
                out.prior[m][j], out.cold[m][j] = p, c
        if record["fold"] in records:
            records[record["fold"]]["seconds"].update(record["seconds"])
        else:
            records[record["fold"]] = record
    out.folds = [records[f] for f in range(k)]
    for r in out.folds:  # the predictors in the order asked for
        r["seconds"] = {m: r["seconds"][m] for m in names}
    return out


# --- the report ----------------------------------------------------------------------------


def paired(
    preds: Mapping[str, Sequence[Runtime]],
    cold: Mapping[str, Sequence[Runtime]] | None,
    examples: Sequence[Example],
    history: str,
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Paired log-MAE differences of every pair of predictors (``a`` before ``b`` in
    ``preds``' order) on the same examples: in the requested regime on every subset, and
    with ``prior`` also in the ``none`` regime (not on ``cold``: same texts)."""
    names = list(preds)
    regimes: list[tuple[str, Mapping[str, Sequence[Runtime]]]] = [(history, preds)]
    if history == "prior" and cold is not None:
        regimes.append(("none", cold))
    out = []
    for regime, block in regimes:
        subsets = ["all"]
        if history == "prior":
            subsets += [s for s in SUBSETS if regime == history or s != "cold"]
        for subset in subsets:
            members = [i for i, e in enumerate(examples)
                       if subset == "all" or in_subset(e, subset)]
            for runs in RUNS:
                idx = [i for i in members if runs == "all" or examples[i].conclusion == "success"]
                true = [examples[i].runtime_s for i in idx]
                groups = [examples[i].repo for i in idx]
                for a, b in itertools.combinations(names, 2):
                    res = metrics.paired_log_mae_diff(
                        [block[a][i].p50 for i in idx], [block[b][i].p50 for i in idx], true,
                        groups, n_boot=n_boot, seed=seed)
                    out.append({"regime": regime, "subset": subset, "runs": runs, "a": a,
                                "b": b, "n": len(idx), **res})
    return out


def pick_reference(report: Mapping[str, Any]) -> str:
    """The predictor with the lowest log-MAE on successful runs (all examples, requested
    regime); ties by all runs, then the name."""
    def key(name: str) -> tuple[float, float, str]:
        res = report["predictors"][name]
        s, a = res["success"]["log_mae"], res["all"]["log_mae"]
        return (s if metrics.is_number(s) else math.inf,
                a if metrics.is_number(a) else math.inf, name)

    return min(report["predictors"], key=key)


def cross_validate(
    examples: Sequence[Example],
    k: int,
    names: Sequence[str],
    *,
    kinds: Sequence[str] = ("workflow",),
    history: str = "none",
    lm: LMRecipe | None = None,
    reference: str | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> tuple[dict[str, Any], dict[str, list[Runtime]], dict[str, list[Runtime]]]:
    """The cross-validated report (module doc) and each predictor's pooled predictions in
    the requested regime, and in the ``none`` regime (the same as the first with
    ``history="none"``). ``examples``: every example of the folder, both kinds, with
    history; training uses them all, scoring those of ``kinds``."""
    t0 = time.perf_counter()
    scored = [i for i, e in enumerate(examples) if e.kind in kinds]
    if not scored:
        raise CVError(f"no examples of kind {', '.join(kinds)}")
    folds = run_folds(examples, scored, k, names, history, lm=lm, progress=progress, log=log,
                      jobs=jobs)
    ex = [examples[i] for i in scored]
    report: dict[str, Any] = {"split": "cv", "folds": k, **report_head(ex, history)}
    report["predictors"] = {}
    preds: dict[str, list[Runtime]] = {}
    cold: dict[str, list[Runtime]] = {}
    for name in names:
        p, c = folds.prior[name], folds.cold[name]
        if any(r is None for r in p) or any(r is None for r in c):
            raise AssertionError(f"{name}: an example was not predicted in any fold")
        preds[name], cold[name] = p, c  # type: ignore[assignment]
        entry = predictor_entry(preds[name], cold[name] if history == "prior" else None,
                                ex, history, bands=True)
        fit_s = sum(r["seconds"][name]["fit"] for r in folds.folds)
        pred_s = sum(r["seconds"][name]["predict"] for r in folds.folds)
        entry["seconds"] = round(fit_s + pred_s, 2)
        entry["fold_seconds"] = [r["seconds"][name] for r in folds.folds]
        report["predictors"][name] = entry
    if reference is not None and reference not in names:
        raise CVError(f"reference {reference!r} is not among the predictors {list(names)}")
    report["paired"] = {"reference": reference or pick_reference(report),
                        "pairs": paired(preds, cold, ex, history) if len(names) > 1 else []}
    report["cv"] = {
        "fold_of": "(int(sha256(owner/name)[:8], 16) % 100) * K // 100 "
                   "(laser_ci.evaluation.folds.fold_of; K = 5: fold 0 is the val split)",
        "inner": "the recipe's val part is the next fold ((f + 1) % K), its train part the "
                 "other K - 2 training folds (laser_ci.evaluation.folds.inner_fold)",
        "recipes": {n: recipe_name(n) for n in names},
        "features_seconds": folds.features_seconds,
        "jobs": max(1, min(jobs, k)),  # the baselines' folds at once (laser-lm: one)
        "seconds": round(time.perf_counter() - t0, 1),
        "folds": folds.folds,
    }
    if lm is not None and LM_NAME in names:
        report["lm"] = lm.describe()
    return report, preds, cold


def write_predictions(path: str | Path, examples: Sequence[Example],
                      preds: Mapping[str, Sequence[Runtime]],
                      cold: Mapping[str, Sequence[Runtime]]) -> int:
    """One JSON line per scored example and predictor (``--predictions``): the example's
    identity, subset and truth, and the ``prior`` and ``none`` regimes' (p10, p50, p90).
    Two runs on the same folder pair up by ``key`` (``benchmarks/paired_runs.py``)."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for name in preds:
            for i, e in enumerate(examples):
                row = {"key": f"{e.repo}|{e.workflow_path}|{e.kind}|{e.job_name or ''}|{e.run_id}",
                       "repo": e.repo, "subset": subset_of(e), "conclusion": e.conclusion,
                       "runtime_s": e.runtime_s, "predictor": name,
                       "prior": [preds[name][i].p10, preds[name][i].p50, preds[name][i].p90],
                       "none": [cold[name][i].p10, cold[name][i].p50, cold[name][i].p90]}
                fh.write(json.dumps(json_safe(row)) + "\n")
                n += 1
    return n


def recipe_name(name: str) -> str:
    if name == LM_NAME:
        return ("laser_ci.training.finetune.finetune_examples from --lm-base, the shipped "
                "model's recipe (laser_ci.evaluation.lm_recipe)")
    return "laser_ci.training.baselines.fit_baselines (benchmarks/baselines.py's recipe)"


# --- the command -----------------------------------------------------------------------------


def eval_cv(data_dir: str, k: int, *, kind: str, fmt: str, plot_path: str | None,
            model_dir: str | None, only: Sequence[str], history: str, no_cache: bool,
            write: bool, reference: str | None, jobs: int | None, lm_base: str | None,
            lm_epochs: int | None = None, lm_device: str = "auto",
            lm_threads: int | None = None, lm_minutes: float | None = None,
            lm_keep: str | None = None, lm_reuse: bool = False, lm_ship: str | None = None,
            predictions_path: str | None = None) -> None:
    """``laser-ci eval DATA_DIR --folds K``: see the module doc."""
    import click

    from laser_ci.evaluation.evaluate import plot
    from laser_ci.training.examples import KINDS, load_examples

    if k < MIN_FOLDS:
        raise click.UsageError(f"--folds needs at least {MIN_FOLDS} (held-out, the recipe's "
                               f"val, and one to train on)")
    names = list(dict.fromkeys(only)) if only else \
        [*BASELINE_NAMES, *([LM_NAME] if lm_base else [])]
    unknown = [n for n in names if n not in TRAINABLE]
    if unknown:
        raise click.BadParameter(f"unknown predictor(s) {', '.join(unknown)} for --folds; "
                                 f"trainable: {', '.join(TRAINABLE)}", param_hint="--predictor")
    lm = None
    if LM_NAME in names:
        if not lm_base:
            raise click.UsageError(f"--predictor {LM_NAME} with --folds needs --lm-base")
        try:
            lm = LMRecipe(Path(lm_base), epochs=lm_epochs, device=lm_device,
                          keep=Path(lm_keep) if lm_keep else None, threads=lm_threads,
                          minutes=lm_minutes, reuse=lm_reuse)
        except CVError as exc:
            raise click.ClickException(str(exc)) from exc
    elif lm_base:
        raise click.UsageError(f"--lm-base given but {LM_NAME} is not among the predictors")
    if lm_ship and lm is None:  # before the cross-validation, not after it
        raise click.UsageError(f"--lm-ship needs --predictor {LM_NAME} and --lm-base")
    if reference is not None and reference not in names:
        raise click.UsageError(f"--reference {reference} is not among the predictors")
    try:
        import lightgbm  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError as exc:
        if set(names) & set(BASELINE_NAMES):
            raise click.ClickException(
                "--folds trains the baselines: pip install 'laser-ci[train]'") from exc
    kinds = KINDS if kind == "all" else (kind,)
    examples = load_examples(data_dir, cache=not no_cache, history=True)
    if not any(e.kind in kinds for e in examples):
        raise click.ClickException(f"no examples in {data_dir} for kind={kind}")
    try:
        report, preds, cold = cross_validate(
            examples, k, names, kinds=kinds, history=history, lm=lm, reference=reference,
            jobs=jobs if jobs is not None else default_jobs(k))
    except CVError as exc:
        raise click.ClickException(str(exc)) from exc
    report = {"split": "cv", "folds": k, "kind": kind, **report}
    if fmt == "json":
        click.echo(json.dumps(json_safe(report), indent=2, allow_nan=False))
    else:
        markdown = fmt == "markdown"
        click.echo(describe_cv(report) if not markdown else f"_{describe_cv(report)}_\n")
        click.echo(render_cv_table(report, markdown=markdown), nl=False)
    if predictions_path:
        n = write_predictions(predictions_path, [e for e in examples if e.kind in kinds],
                              preds, cold)
        click.echo(f"wrote {n} predictions to {predictions_path}", err=True)
    if plot_path:
        scored = [e for e in examples if e.kind in kinds]
        plot(plot_path, scored, preds,
             title=f"laser-ci eval: {k}-fold cv, kind={kind}, history={history}")
        click.echo(f"wrote {plot_path}", err=True)
    if lm_ship and lm is not None:
        from laser_ci.training.baselines import text_features

        log = lm.ship(examples, Path(lm_ship), k=k, feats=text_features(examples))
        click.echo(f"wrote the recipe's model, trained on every repository, to {lm_ship} "
                   f"({log.get('seconds')} s)", err=True)
    if write:
        from laser_ci.predictors.choice import find_families

        command = _command_line(data_dir, k, kind, history, names, lm)
        written = write_cards(report, find_families(model_dir), command, data_dir)
        for path in written:
            click.echo(f"wrote cross-validated scores to {path}", err=True)
        if not written:
            click.echo("no card written: the model folder holds none of the scored families",
                       err=True)


def _command_line(data_dir: str, k: int, kind: str, history: str, names: Sequence[str],
                  lm: LMRecipe | None) -> str:
    """The command that made a report, spelled out (for the card)."""
    parts = ["laser-ci", "eval", data_dir, "--folds", str(k), "--kind", kind, "--history",
             history]
    for n in names:
        parts += ["--predictor", n]
    if lm is not None:
        parts += ["--lm-base", str(lm.base), "--lm-epochs", str(lm.cfg.epochs),
                  "--lm-device", lm.device]
        if lm.cfg.finetune_minutes:
            parts += ["--lm-minutes", str(lm.cfg.finetune_minutes)]
    return " ".join(parts + ["--write-cards"])
