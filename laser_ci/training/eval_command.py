"""The ``laser-ci eval`` command: options, predictors, output (the report itself:
:mod:`laser_ci.training.evaluate`; ``--folds K``: :mod:`laser_ci.training.crossval`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from laser_ci.predictors.base import Predictor
from laser_ci.predictors.lm import SAMPLING
from laser_ci.report import plain
from laser_ci.report.progress import Progress
from laser_ci.text.tokenize import LAYOUTS, WARM_ANCHORS
from laser_ci.training.evaluate import describe, evaluate, json_safe, plot, render_table
from laser_ci.training.examples import KINDS, DataError, load_examples
from laser_ci.training.examples import reading_data as _reading_data
from laser_ci.training.history import REGIMES


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
    """:func:`laser_ci.training.crossval.eval_cv`; a fold left with nothing to train on is
    a :class:`DataError` naming the folder."""
    from laser_ci.training.baselines import NoTrainingData
    from laser_ci.training.crossval import eval_cv

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
    help="Repositories to score (split by a hash of owner/name, see laser_ci.training.examples).",
)
@click.option(
    "--kind", type=click.Choice(["workflow", "job", "all"]), default="workflow",
    show_default=True,
    help="workflow: one example per run; job: per-job examples; all: both.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
    show_default=True,
)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write predicted vs actual (log-log) to this PNG.")
@click.option("--model", "model_dir", type=click.Path(file_okay=False), default=None,
              help="Model folder (default: the shipped model/).")
@click.option("--predictor", "only", multiple=True,
              help="Only these predictors (repeatable; default: all available).")
@click.option(
    "--history", type=click.Choice(list(REGIMES)), default="none", show_default=True,
    help="none: cold-start texts only; prior: each run also sees its earlier runs in "
         "DATA_DIR (causal), scored in both regimes and on the warm, warm-changed and cold "
         "subsets.",
)
@click.option("--no-cache", is_flag=True, help="Re-parse the data instead of using the cache.")
@click.option(
    "--folds", type=int, default=None, is_flag=False, flag_value=5, metavar="[K]",
    help="Cross-validate by repository over the whole folder instead of scoring the shipped "
         "files: K folds (5 when given without a number; fold 0 is then the val split), each "
         "predictor trained by its recipe on K-1 folds and scored on the held-out one "
         "(laser_ci.training.crossval). Needs the train extra.",
)
@click.option("--write-cards", is_flag=True,
              help="--folds: store the cross-validated scores in each scored family's "
                   "card.json (under \"cv\"; the default predictor is chosen from them).")
@click.option("--reference", default=None,
              help="--folds: the predictor the table's paired differences are against "
                   "(default: the best on successful runs).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="--folds: the baselines' folds trained at once, in separate processes "
                   "[one per CPU, at most K]; laser-lm's folds run one at a time.")
@click.option("--lm-base", type=click.Path(exists=True, file_okay=False), default=None,
              help="--folds: fine-tune laser-lm per fold from this base, pretrained on the "
                   "unlabeled corpus only (laser-ci train --pretrain-only: OUT/pretrained).")
@click.option("--lm-epochs", type=int, default=None,
              help="--folds: fine-tuning epochs per fold [3, the shipped model's].")
@click.option("--lm-device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
              show_default=True, help="--folds: where laser-lm fine-tunes.")
@click.option("--lm-threads", type=int, default=None,
              help="--folds: torch and onnxruntime threads for laser-lm [2].")
@click.option("--lm-minutes", type=float, default=None,
              help="--folds: stop each fold's fine-tuning after this many minutes.")
@click.option("--lm-keep", type=click.Path(file_okay=False), default=None,
              help="--folds: keep each fold's fine-tuned model in DIR/foldF (default: a "
                   "temporary folder).")
@click.option("--lm-prompt-lines", is_flag=True,
              help="--folds: laser-lm's prompts end with the outcome asked for and, without "
                   "history, a tabular reference (the fold's; out of fold for training "
                   "texts); it writes the ratio to that reference.")
@click.option("--lm-warm-reference", is_flag=True,
              help="--folds, with --lm-prompt-lines: texts with history read the fold's "
                   "tabular p50 as their reference too (out of fold for training texts), "
                   "instead of the history median.")
@click.option("--lm-layout", type=click.Choice(LAYOUTS), default=None,
              help="--folds: where laser-lm's prompts put a job's own lines: serial (the "
                   "serializer's order) or shared-prefix (job, runs-on and matrix at the end, "
                   "so a job's body is decoded once for every runner) [serial].")
@click.option("--lm-warm-anchor", type=click.Choice(WARM_ANCHORS), default=None,
              help="--folds: the history figure laser-lm's warm output is the ratio to: "
                   "median (of the last 20 runs) or recent (the median of the last 3) "
                   "[median].")
@click.option("--lm-quantization", type=click.Choice(["dynamic", "static"]), default=None,
              help="--folds: laser-lm's int8 export: dynamic (activation scales per call; "
                   "one job per batch) or static (calibrated on training prompts; jobs side "
                   "by side) [dynamic].")
@click.option("--lm-ship", type=click.Path(file_okay=False), default=None,
              help="--folds: then run laser-lm's recipe on every repository (fold 0 picks "
                   "the epoch) and write that model, with weights, to DIR (e.g. model/lm, "
                   "before --write-cards).")
@click.option("--lm-pairs", type=int, default=None,
              help="--folds: laser-lm also trains on up to N warm texts per run made from "
                   "earlier runs with another configuration, each as if it had been the "
                   "latest (changed configurations from pairs of runs) [0].")
@click.option("--lm-max-prompt-tokens", type=click.IntRange(min=64), default=None,
              help="--folds: laser-lm's prompt budget in tokens [256]; refused above the "
                   "base's pretraining row length (where its marker records it) and for a "
                   "base model folder with another budget.")
@click.option("--lm-samples", type=click.IntRange(min=1), default=None,
              help="--folds: samples per text when scoring laser-lm [the fold model's, 16].")
@click.option("--lm-sampling", type=click.Choice(SAMPLING), default=None,
              help="--folds: how laser-lm's samples are placed when scoring "
                   "(laser_ci.predictors.decode) [the fold model's, stratified].")
@click.option("--lm-calibrate-bands", is_flag=True,
              help="--folds: scale laser-lm's p10-p90 bands, warm, changed and cold apart, so "
                   "they hold 80% of the fold's val part (laser_ci.training.bands).")
@click.option("--lm-shrink", is_flag=True,
              help="--folds, with --lm-calibrate-bands: also move laser-lm's median toward "
                   "its prompt's reference by the share of its correction that held on the "
                   "fold's val part, per regime (laser_ci.training.bands).")
@click.option("--lm-exact-last", is_flag=True,
              help="--folds: decode laser-lm with the last digit's distribution kept whole "
                   "instead of sampled (laser_ci.predictors.decode: exact_last).")
@click.option("--predictions", "predictions_path", type=click.Path(dir_okay=False),
              default=None,
              help="--folds: also write every scored example's predictions, one JSON line "
                   "per example and predictor (benchmarks/paired_runs.py pairs two runs).")
@click.option("--lm-reuse", is_flag=True,
              help="--folds: score the fold models an earlier run kept in --lm-keep instead "
                   "of fine-tuning again (e.g. for another --kind); fine-tune the missing.")
@click.option("--new-jobs", is_flag=True, expose_value=False,
              callback=lambda ctx, _p, v: ctx.meta.__setitem__("laser_ci.new_jobs", v),
              help="Score jobs the repository has not run yet against the cold prediction "
                   "(new instance, new job, new workflow in a known repository: "
                   "laser_ci.training.new_jobs) with the default predictor, instead.")
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
    lm_prompt_lines: bool,
    lm_warm_reference: bool,
    lm_reuse: bool,
    lm_layout: str | None,
    lm_quantization: str | None,
    lm_ship: str | None,
    lm_exact_last: bool,
    predictions_path: str | None,
    lm_pairs: int | None,
    lm_calibrate_bands: bool,
    lm_samples: int | None,
    lm_sampling: str | None,
    lm_shrink: bool,
    lm_max_prompt_tokens: int | None,
    lm_warm_anchor: str | None,
) -> None:
    """Score every available predictor on DATA_DIR (a folder in the gha-runs format)."""
    from laser_ci.predictors.choice import available_predictors

    if ctx.meta.get("laser_ci.new_jobs"):  # issue 49: laser_ci.training.new_jobs
        from laser_ci.predictors.choice import load_predictor
        from laser_ci.training.new_jobs import eval_new_jobs

        click.echo(eval_new_jobs(data_dir, load_predictor(model_dir), fmt), nl=False)
        return

    cv_only = {"--write-cards": write_cards, "--reference": reference, "--jobs": jobs,
               "--lm-base": lm_base,
               "--lm-epochs": lm_epochs, "--lm-threads": lm_threads, "--lm-minutes": lm_minutes,
               "--lm-keep": lm_keep, "--lm-prompt-lines": lm_prompt_lines,
               "--lm-reuse": lm_reuse, "--lm-layout": lm_layout,
               "--lm-quantization": lm_quantization, "--lm-ship": lm_ship,
               "--lm-exact-last": lm_exact_last, "--predictions": predictions_path,
               "--lm-pairs": lm_pairs, "--lm-calibrate-bands": lm_calibrate_bands,
               "--lm-samples": lm_samples, "--lm-warm-reference": lm_warm_reference,
               "--lm-sampling": lm_sampling, "--lm-shrink": lm_shrink,
               "--lm-max-prompt-tokens": lm_max_prompt_tokens, "--lm-warm-anchor": lm_warm_anchor}
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
                    model_dir=model_dir,
                    only=only, history=history, no_cache=no_cache, write=write_cards,
                    reference=reference, jobs=jobs, lm_base=lm_base, lm_epochs=lm_epochs,
                    lm_device=lm_device, lm_threads=lm_threads, lm_minutes=lm_minutes,
                    lm_keep=lm_keep, lm_prompt_lines=lm_prompt_lines, lm_reuse=lm_reuse,
                    lm_layout=lm_layout or "serial", lm_quantization=lm_quantization or "dynamic",
                    lm_ship=lm_ship, lm_exact_last=lm_exact_last,
                    predictions_path=predictions_path, lm_pairs=lm_pairs or 0,
                    lm_calibrate_bands=lm_calibrate_bands, lm_samples=lm_samples,
                    lm_warm_reference=lm_warm_reference, lm_sampling=lm_sampling,
                    lm_shrink=lm_shrink, lm_max_prompt_tokens=lm_max_prompt_tokens,
                    lm_warm_anchor=lm_warm_anchor or "median")
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
