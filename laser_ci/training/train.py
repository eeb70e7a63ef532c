"""The ``laser-ci train`` and ``laser-ci finetune`` commands.

``laser-ci train --data DIR --out OUT`` pretrains the shipped recipe's label-free base
(:mod:`laser_ci.training.pretrain`; ``torchrun --nproc-per-node N -m laser_ci train ...``
runs it data-parallel); ``laser-ci eval DIR --folds 5 --lm-base OUT/pretrained --lm-ship
MODEL`` then fine-tunes it. ``laser-ci finetune --data COLLECTED_DIR --base MODEL --out DIR``
learns one repository's history from a shipped model (:mod:`laser_ci.training.learn`).
torch is imported inside the commands only: ``laser-ci --help`` works without it."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from laser_ci.report.progress import Progress
from laser_ci.training.config import SIZES, TrainConfig
from laser_ci.training.examples import reading_data
from laser_ci.training.finetune import FINETUNE_CONFIG
from laser_ci.training.pretrain import run_pretrain


def _check_out(option: str, path: str) -> None:
    """An output folder that cannot be made (under a file, or where it may not write) is
    one line and exit 2 before any work."""
    from laser_ci.report import plain

    near = Path(path)
    while not near.exists() and near.parent != near:
        near = near.parent
    if near.is_dir() and os.access(near, os.W_OK | os.X_OK):
        return
    reason = f"{near}: not a folder" if not near.is_dir() else f"{near}: cannot write there"
    click.echo(plain.line(f"laser-ci: error: {option} {path}: {reason}"), err=True)
    sys.exit(2)


def _cfg_from(base: TrainConfig, **kw: Any) -> TrainConfig:
    return replace(base, **{k: v for k, v in kw.items() if v is not None})


def _runtime(f: Any) -> Any:
    opts = [
        click.option("--seed", type=int, default=None, help="[0]"),
        click.option("--threads", type=click.IntRange(min=1), default=None, help="CPU threads."),
        click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
                     show_default=True),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


@click.command("train")
@click.option("--data", "data_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="A gha-runs style folder: its corpus.jsonl.gz and blobs are read.")
@click.option("--out", "out_dir", default="runs/base", show_default=True,
              type=click.Path(file_okay=False), help="Writes OUT/pretrained and a report.")
@click.option("--corpus-split", type=click.Choice(["all", "train"]), default="all",
              show_default=True, help="The repositories whose corpus files are read.")
@click.option("--size", type=click.Choice(sorted(SIZES)), default=None, help="[small]")
@click.option("--vocab-size", type=click.IntRange(min=1), default=None, help="[8192]")
@click.option("--pretrain-steps", type=click.IntRange(min=1), default=None, help="[820]")
@click.option("--pretrain-minutes", type=click.FloatRange(min=0), default=None,
              help="Stop after this many minutes, 0: no limit [22].")
@click.option("--pretrain-seq-len", type=click.IntRange(min=8), default=None,
              help="Tokens per packed row [512].")
@click.option("--pretrain-batch-size", type=click.IntRange(min=1), default=None, help="[8]")
@click.option("--pretrain-lr", type=click.FloatRange(min=0), default=None, help="[1e-3]")
@click.option("--mixed-precision", type=click.Choice(["no", "bf16", "fp16"]), default=None,
              help="[no]")
@_runtime
def train_command(data_dir: str, out_dir: str, corpus_split: str, device: str,
                  **kw: Any) -> None:
    """Pretrain the language model's base on the unlabeled workflow corpus (no labels); the
    shipped recipe then fine-tunes it with `laser-ci eval --folds 5 --lm-base
    OUT/pretrained --lm-ship DIR`."""
    cfg = _cfg_from(TrainConfig(), **kw)
    _check_out("--out", out_dir)
    with Progress("train").stage("pretraining on the unlabeled corpus"):
        log = reading_data(run_pretrain, data_dir, out_dir, cfg, device=device,
                           corpus_split=corpus_split)
    if int(os.environ.get("RANK", "0")) == 0:  # one summary under torchrun / accelerate
        click.echo(json.dumps({k: log.get(k) for k in ("parameters", "tokenizer", "pretrain",
                                                       "seconds")}, indent=2))


@click.command("finetune")
@click.option("--data", "data_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="One repository's history, as `laser-ci collect` writes it.")
@click.option("--base", "base_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="A model folder with weights.safetensors (the shipped model).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False))
@click.option("--minutes", type=click.FloatRange(min=0), default=20.0, show_default=True,
              help="The whole command's time budget, export and calibration included "
                   "(0: no limit).")
@click.option("--finetune-minutes", "legacy_minutes", type=click.FloatRange(min=0),
              default=None, hidden=True)
@click.option("--repo", "repository", default=None, metavar="OWNER/NAME",
              help="The repository the history is of [read from the history].")
@click.option("--epochs", type=click.IntRange(min=1), default=None, help="[3]")
@click.option("--batch-size", type=click.IntRange(min=1), default=None, help="[8]")
@click.option("--lr", type=click.FloatRange(min=0), default=None, help="[2e-4]")
@click.option("--patience", type=click.IntRange(min=0), default=None,
              help="Epochs without a better validation loss before stopping [1].")
@_runtime
def finetune_command(data_dir: str, base_dir: str, out_dir: str, device: str, minutes: float,
                     legacy_minutes: float | None, repository: str | None, **kw: Any) -> None:
    """Learn one repository's own history: the shipped model fine-tuned on its earlier
    runs, checked and calibrated on its latest ones, written as a model folder for
    `laser-ci estimate --model DIR` and the Action's `model:` input."""
    from laser_ci.training.learn import learn_repository, summary_lines

    if kw.get("threads") is None:
        kw["threads"] = max(1, min(os.cpu_count() or 1, 4))
    cfg = _cfg_from(FINETUNE_CONFIG, **kw)
    _check_out("--out", out_dir)
    progress = Progress("finetune")
    with progress.stage(f"learning {data_dir} from {base_dir}"):
        log = reading_data(learn_repository, data_dir, base_dir, out_dir, cfg, device=device,
                           minutes=legacy_minutes if legacy_minutes is not None else minutes,
                           repository=repository, say=progress.note)
    for line in summary_lines(log, out_dir):
        click.echo(line)
