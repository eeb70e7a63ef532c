"""The ``laser-ci eval`` command: options, predictors, output (the report itself:
:mod:`laser_ci.evaluation.evaluate`; ``--folds K``: :mod:`laser_ci.evaluation.crossval`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from laser_ci.evaluation.evaluate import describe, evaluate, json_safe, plot, render_table
from laser_ci.evaluation.regimes import REGIMES
from laser_ci.predictors.base import Predictor
from laser_ci.report import plain
from laser_ci.report.progress import Progress
from laser_ci.training.examples import KINDS, DataError, load_examples
from laser_ci.training.examples import reading_data as _reading_data


def _check_output(option: str, path: str) -> None:
    """An output file whose folder is not there (or cannot be written) is one line and exit
    2 before any work, not a traceback once the scores are computed."""
    parent = Path(path).parent
    if not parent.is_dir():
        what = "not a folder" if parent.exists() else "no such folder"
        reason = f"{parent}: {what}"
    elif not os.access(parent, os.W_OK | os.X_OK):
        reason = f"{parent}: cannot write there"
    else:
        return
    click.echo(plain.line(f"laser-ci: error: {option} {path}: {reason}"), err=True)
    sys.exit(2)


def _eval_cv(data_dir: str, folds: int, **kw: Any) -> None:
    """:func:`laser_ci.evaluation.crossval.eval_cv`; a fold left with nothing to train on is
    a :class:`DataError` naming the folder."""
    from laser_ci.evaluation.crossval import eval_cv
    from laser_ci.training.baselines import NoTrainingData

    try:
        eval_cv(data_dir, folds, **kw)
    except NoTrainingData as exc:
        raise DataError(f"{data_dir}: {exc} in a fold (every repository with examples is in "
                        f"the held-out fold or its val fold): too few repositories for "
                        f"--folds {folds}") from None


@click.command("eval")
@click.argument("data_dir", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--split", type=click.Choice(["train", "val", "all"]), default="val", show_default=True,
    help="Repositories to score (by a hash of owner/name).",
)
@click.option(
    "--kind", type=click.Choice(["workflow", "job", "all"]), default="workflow",
    show_default=True,
    help="One example per run, per job, or both.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
    show_default=True,
)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write predicted vs actual to this PNG.")
@click.option("--model", "model_dir", type=click.Path(file_okay=False), default=None,
              help="Model folder (default: the shipped model/).")
@click.option("--predictor", "only", multiple=True, help="Only these (repeatable).")
@click.option(
    "--history", type=click.Choice(list(REGIMES)), default="none", show_default=True,
    help="prior: each run also sees its earlier runs in DATA_DIR, scored in both regimes.",
)
@click.option("--no-cache", is_flag=True, help="Re-parse the data instead of using the cache.")
@click.option("--folds", type=int, default=None, is_flag=False, flag_value=5, metavar="[K]",
              help="Cross-validate by repository instead (K folds, 5 without a number; "
                   "laser_ci.evaluation.crossval): each predictor trained by its recipe.")
@click.option("--write-cards", is_flag=True,
              help="--folds: store the scores in each family's card.json.")
@click.option("--reference", default=None,
              help="--folds: the predictor the paired differences are against.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="--folds: the baselines' folds trained at once [one per CPU].")
@click.option("--lm-base", type=click.Path(exists=True, file_okay=False), default=None,
              help="--folds: fine-tune laser-lm per fold from this label-free base "
                   "(laser-ci train: OUT/pretrained).")
@click.option("--lm-epochs", type=int, default=None, help="--folds: epochs per fold [1].")
@click.option("--lm-device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
              show_default=True)
@click.option("--lm-threads", type=int, default=None, help="--folds: laser-lm's threads [2].")
@click.option("--lm-minutes", type=float, default=None,
              help="--folds: stop each fold's fine-tuning after this many minutes.")
@click.option("--lm-keep", type=click.Path(file_okay=False), default=None,
              help="--folds: keep each fold's model in DIR/foldF.")
@click.option("--lm-reuse", is_flag=True,
              help="--folds: score the fold models kept in --lm-keep instead of training.")
@click.option("--lm-ship", type=click.Path(file_okay=False), default=None,
              help="--folds: then train the recipe on every repository into DIR.")
@click.option("--predictions", "predictions_path", type=click.Path(dir_okay=False),
              default=None, help="--folds: also write every prediction, one JSON line each.")
@click.option("--new-jobs", is_flag=True,
              help="Score jobs the repository has not run yet (new instance, new job, new "
                   "workflow) against the cold prediction, instead.")
@click.pass_context
def eval_command(
    ctx: click.Context,
    data_dir: str,
    split: str,
    kind: str,
    fmt: str,
    plot_path: str | None,
    model_dir: str | None,
    only: tuple[str, ...],
    history: str,
    no_cache: bool,
    folds: int | None,
    write_cards: bool,
    reference: str | None,
    jobs: int | None,
    lm_base: str | None,
    lm_epochs: int | None,
    lm_device: str,
    lm_threads: int | None,
    lm_minutes: float | None,
    lm_keep: str | None,
    lm_reuse: bool,
    lm_ship: str | None,
    predictions_path: str | None,
    new_jobs: bool,
) -> None:
    """Score every available predictor on DATA_DIR (a folder in the gha-runs format)."""
    from laser_ci.predictors.choice import available_predictors

    if new_jobs:  # laser_ci.evaluation.new_jobs: the evidence for jobs without runs
        from laser_ci.evaluation.new_jobs import eval_new_jobs
        from laser_ci.predictors.choice import load_predictor

        with Progress("eval").stage("scoring jobs the repositories had not run yet"):
            out = eval_new_jobs(data_dir, load_predictor(model_dir), fmt)
        click.echo(out, nl=False)
        return

    cv_only = {"--write-cards": write_cards, "--reference": reference, "--jobs": jobs,
               "--lm-base": lm_base, "--lm-epochs": lm_epochs, "--lm-threads": lm_threads,
               "--lm-minutes": lm_minutes, "--lm-keep": lm_keep, "--lm-reuse": lm_reuse,
               "--lm-ship": lm_ship, "--predictions": predictions_path}
    given = [k for k, v in cv_only.items() if v not in (None, False)] if folds is None else []
    if given:
        raise click.UsageError(f"{', '.join(given)} only go with --folds")
    for option, path in (("--plot", plot_path), ("--predictions", predictions_path)):
        if path:
            _check_output(option, path)
    if folds is not None:
        if ctx.get_parameter_source("split") is not click.core.ParameterSource.DEFAULT:
            raise click.UsageError("--folds cross-validates over the whole folder: no --split")
        with Progress("eval").stage(f"cross-validating over {folds} folds"):
            _reading_data(_eval_cv, data_dir, folds, kind=kind, fmt=fmt, plot_path=plot_path,
                          model_dir=model_dir, only=only, history=history, no_cache=no_cache,
                          write=write_cards, reference=reference, jobs=jobs, lm_base=lm_base,
                          lm_epochs=lm_epochs, lm_device=lm_device, lm_threads=lm_threads,
                          lm_minutes=lm_minutes, lm_keep=lm_keep, lm_reuse=lm_reuse,
                          lm_ship=lm_ship, predictions_path=predictions_path)
        return

    progress = Progress("eval")
    with progress.stage("loading the predictors"):
        predictors: dict[str, Predictor] = dict(available_predictors(model_dir))
    if only:
        missing = [n for n in only if n not in predictors]
        if missing:
            raise click.BadParameter(
                f"unknown predictor(s) {', '.join(missing)}; available: "
                f"{', '.join(predictors) or 'none'}", param_hint="--predictor"
            )
        predictors = {n: predictors[n] for n in only}
    if not predictors and model_dir is not None:  # as estimate says it
        click.echo(plain.line(f"laser-ci: error: no predictors found in {model_dir}: no model "
                              "there (expected baselines/ or a language model folder; see "
                              "--model)"), err=True)
        sys.exit(2)
    if not predictors:
        raise click.ClickException(
            "no predictors found; train them with `python benchmarks/baselines.py`"
        )
    kinds = KINDS if kind == "all" else (kind,)
    with progress.stage(f"reading examples from {data_dir}"):
        examples = _reading_data(load_examples, data_dir, kinds=kinds, split=split,
                                 cache=not no_cache, history=history == "prior")
    if not examples:
        raise click.ClickException(f"no examples in {data_dir} for split={split} kind={kind}")
    report, preds = {}, {}
    for i, (name, predictor) in enumerate(predictors.items(), 1):  # one stage per predictor
        with progress.stage(f"scoring {name} on {len(examples):,} examples", i, len(predictors)):
            one, one_preds = evaluate({name: predictor}, examples, history)
        report = {**one, "predictors": {**report.get("predictors", {}), **one["predictors"]}}
        preds.update(one_preds)
    report = {"split": split, "kind": kind, **report}
    if fmt == "json":
        click.echo(json.dumps(json_safe(report), indent=2, allow_nan=False))
    else:
        click.echo(describe(report) if fmt == "table" else f"_{describe(report)}_\n")
        click.echo(render_table(report, markdown=fmt == "markdown"), nl=False)
    if plot_path:
        plot(plot_path, examples, preds,
             title=f"laser-ci eval: split={split}, kind={kind}, history={history}")
        click.echo(f"wrote {plot_path}", err=True)
