"""Learning one repository: ``laser-ci finetune --data HISTORY --base MODEL --out DIR``.

A repository's own history (the folder ``laser-ci collect`` writes) is split three ways
(:func:`split_history`):

- **by time**: its latest :data:`HELD_SHARE` of runs (by commit date) are never trained on;
  they pick the epoch and calibrate the model;
- **by job name**: one in :data:`NEW_EVERY` of the job names that ran in that window (none
  of fewer than :data:`NEW_EVERY`; the names are ordered by a hash) is held out of training
  altogether: its latest runs are jobs the model has never seen, what it will be asked
  about when a pull request adds a job;
- the rest, the earlier runs of the other names: what it learns from.

The base (the shipped model) is fine-tuned on that, time-boxed: the whole command fits
``minutes`` (:func:`training_minutes` reserves what it measured the validation pass to
cost, the export and the calibration). The result is exported as the shipped model is
(a static int8 ``model.onnx``, the tokenizer, the base's tabular reference) and
calibrated on the held-back runs (:mod:`laser_ci.training.bands`): per regime, the share
of its correction to its reference that held there (``decoding.shrink``: 0 gives back the
shipped model's own answer, the job's recent runs or the tabular reference) and the band
scale that holds 80% there (``decoding.band_scale``). The cold regime is calibrated on the
held-out names, so its band is a new job's. The shipped evidence bands go with it: a job
with successful runs of its own is still predicted from them
(:mod:`laser_ci.predictors.own_runs`, the best figure there is for it), and the learned
model answers for the jobs without. ``laser.json`` ``learned`` records which
repository and which runs it learned from, and its figures against the base on the runs
it calibrated on (:class:`laser_ci.predictors.learned.LearnedInfo` reads it).

Where at least :data:`MIN_MEASURED_RUNS` of the runs it learns from have usage records
(the measure step's), the model also learns to write the run's CPU, memory and disk after
its runtime (:mod:`laser_ci.text.targets`; ``laser.json`` ``prompt.targets``), and its
figures on the held-back measured runs are recorded beside the runtime's."""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from laser_ci.text.targets import USAGE_TARGETS

HELD_SHARE = 0.2  # the latest runs, never trained on: epoch choice and calibration
NEW_EVERY = 10  # one job name in this many is held out of training (a new job's calibration)
VAL_LOSS_MAX = 1000  # held-back texts whose loss picks the epoch
CAL_WARM_MAX = 1000  # held-back texts with history decoded to calibrate
CAL_NEW_MAX = 800  # held-out names' texts decoded to calibrate the cold regime
EXPORT_RESERVE_S = 150.0  # export, static int8 quantization and its check (2 min on 2 cores)
INT8_CHECK_TEXTS = 400  # held-back texts decoded by the fp32, static and dynamic graphs
INT8_TOLERANCE = 0.02  # log-MAE an int8 graph may lose against fp32 and still ship
CALIBRATION_PROMPTS = 128  # static int8: training prompts that set the activation scales
STATIC_WEIGHTS = "s7"  # as the shipped model's (laser_ci.training.export.quantize_int8)
MIN_MEASURED_RUNS = 20  # job runs with usage records that make the model write usage too


@dataclass(frozen=True)
class HistorySplit:
    """:func:`split_history`'s three parts and what separates them."""

    train: list[Any]
    val: list[Any]  # held back by time, names that were trained on
    new: list[Any]  # held back by time, names held out of training
    cut: tuple[str, str]  # (commit date, run id) of the first held-back run
    new_names: frozenset[tuple[str, str]]


def job_key(e: Any) -> tuple[str, str] | None:
    """(workflow path, job name) of a job example; None for a workflow example."""
    return (e.workflow_path, e.job_name or "") if e.kind == "job" else None


def _name_hash(key: tuple[str, str]) -> int:
    return int.from_bytes(hashlib.sha256(f"{key[0]}|{key[1]}".encode()).digest()[:8], "big")


def split_history(examples: Sequence[Any], held_share: float = HELD_SHARE,
                  new_every: int | None = None) -> HistorySplit:
    """The module doc's split of a repository's examples (in any order): the held-out names
    are those with the smallest hash of their name, so the same history splits the same
    way; one in ``new_every`` (default :data:`NEW_EVERY`; 0: none)."""
    runs = sorted({(e.commit_date, e.run_id) for e in examples})
    if not runs:
        return HistorySplit([], [], [], ("", ""), frozenset())
    cut = runs[min(int(len(runs) * (1 - held_share)), len(runs) - 1)]
    late = [e for e in examples if (e.commit_date, e.run_id) >= cut]
    names = sorted({k for e in late if (k := job_key(e)) is not None}, key=_name_hash)
    every = NEW_EVERY if new_every is None else new_every
    new_names = frozenset(names[:len(names) // every] if every > 0 else ())  # smallest hashes
    train = [e for e in examples if (e.commit_date, e.run_id) < cut
             and job_key(e) not in new_names]
    val = [e for e in late if job_key(e) not in new_names]
    new = [e for e in late if job_key(e) in new_names]
    return HistorySplit(train, val, new, cut, new_names)


def training_minutes(budget_min: float, elapsed_s: float, val_pass_s: float,
                     decode_s_per_text: float, calibration_texts: int) -> float:
    """Minutes the training loop may take so that the command ends within ``budget_min``
    (0: no limit, returns 0): what is left after ``elapsed_s``, one more validation pass,
    the export and decoding ``calibration_texts`` twice (learned and base). At least one
    minute: a budget too small to learn anything still writes a model."""
    if budget_min <= 0:
        return 0.0
    reserve = val_pass_s + EXPORT_RESERVE_S + 2 * decode_s_per_text * calibration_texts
    return max(1.0, (budget_min * 60 - elapsed_s - reserve) / 60)


def _log_mae(p50: Sequence[float], truth: Sequence[float]) -> float | None:
    """:func:`laser_ci.training.metrics.log_mae`, None (not NaN: it goes to JSON) without
    examples."""
    from laser_ci.training.metrics import log_mae

    return log_mae(p50, truth) if len(truth) else None


def _figures(preds: Sequence[Any], examples: Sequence[Any]) -> dict[str, Any]:
    """log-MAE of the medians (successful runs: what the comment answers) and p10-p90
    coverage, over ``examples`` predicted as ``preds``."""
    from laser_ci.training.metrics import coverage

    ok = [i for i, e in enumerate(examples) if e.conclusion == "success"] or list(
        range(len(examples)))
    truth = [examples[i].runtime_s for i in ok]
    band = [preds[i] for i in ok]
    return {"runs": len(ok), "log_mae": _log_mae([r.p50 for r in band], truth),
            "coverage": coverage([r.p10 for r in band], [r.p90 for r in band], truth)
            if ok else None}


def usage_figures(model_dir: Path, held: Sequence[Any], train: Sequence[Any],
                  threads: int) -> dict[str, Any]:
    """Part 5's check: on the held-back runs that were measured (at most
    :data:`CAL_WARM_MAX`), the log-MAE of each usage target's p50 as the learned model writes
    it after its own runtime, against the median of the measured runs it learned from
    (what one would guess for any job without it); values under 0.01 count as 0.01."""
    import numpy as np

    from laser_ci.predictors.lm import LaserModel
    from laser_ci.training.metrics import log_mae

    measured = _sample([e for e in held if e.usage], CAL_WARM_MAX, 0)
    out: dict[str, Any] = {"runs": len(measured)}
    if not measured:
        return out
    model = LaserModel(model_dir, threads=threads)
    texts = [e.text_warm or e.text for e in measured]
    got = model.predict_usage(texts, model.predict(texts))
    for key in model.prompt.targets:
        truth = [e.usage[key] for e in measured]
        typical = float(np.median([e.usage[key] for e in train if e.usage]))
        out[key] = {"learned": round(log_mae([g[key]["p50"] for g in got], truth, 0.01), 4),
                    "median of measured runs": round(log_mae([typical] * len(truth), truth,
                                                             0.01), 4)}
    return out


@dataclass
class Calibrated:
    """What :func:`calibrate_learned` fit and measured."""

    band_scale: dict[str, float]
    shrink: dict[str, float]
    figures: dict[str, Any]


def calibrate_learned(model_dir: Path, base_dir: Path, warm: Sequence[Any],
                      new: Sequence[Any], threads: int) -> Calibrated:
    """Fit the learned model's shrink and band scale per regime on held-back texts
    (``warm``: examples with their history block, ``new``: held-out names, their cold
    text; fall back to ``warm``'s cold texts when no name was held out), store them in its
    ``laser.json``, and measure it against the base on the same texts (each with its own
    calibration: the base's shipped one)."""
    from laser_ci.predictors.lm import BAND_REGIMES, LaserModel, text_regime
    from laser_ci.training.bands import Regime, apply, fit, write_calibration

    cold = list(new) if new else list(warm)
    texts = [e.text_warm for e in warm] + [e.text for e in cold]
    examples = list(warm) + cold
    learned = LaserModel(model_dir, threads=threads)
    raw = learned.predict_raw(texts)
    by_regime = {name: Regime() for name in BAND_REGIMES}
    regimes = [text_regime(t) for t in texts]
    for (r, ref), e, reg in zip(raw, examples, regimes, strict=True):
        by_regime[reg].preds.append(r)
        by_regime[reg].refs.append(ref)
        by_regime[reg].truth.append(e.runtime_s)
    cal = fit(by_regime, shrink=True)
    write_calibration(model_dir, cal, examples=len(texts))
    apply(learned, cal)  # as laser.json now says
    base = LaserModel(base_dir, threads=threads)
    mine = [learned.finish(r, ref, reg) for (r, ref), reg in zip(raw, regimes, strict=True)]
    theirs = base.predict(texts)
    figures: dict[str, Any] = {}
    parts = {"with history": [i for i in range(len(warm))],
             "new jobs" if new else "without history": list(range(len(warm), len(texts)))}
    for name, idx in parts.items():
        if not idx:
            continue
        sub = [examples[i] for i in idx]
        figures[name] = {"learned": _figures([mine[i] for i in idx], sub),
                         "base": _figures([theirs[i] for i in idx], sub)}
    return Calibrated(cal.band_scale, cal.shrink, figures)


def pick_graph(log_mae: dict[str, float | None], tolerance: float = INT8_TOLERANCE) -> str:
    """The graph to ship from the log-MAE of ``fp32``, ``static`` and ``dynamic``: the first
    int8 one within ``tolerance`` of fp32 (any when fp32 has no figure), else ``fp32``."""
    ref = log_mae.get("fp32")
    for name in ("static", "dynamic"):
        got = log_mae.get(name)
        if ref is None or (got is not None and got <= ref + tolerance):
            return name
    return "fp32"


def int8_check(out: Path, texts: Sequence[str], truth: Sequence[float],
               threads: int) -> dict[str, Any]:
    """Decode ``texts`` with the fp32 graph the export kept, the static int8 ``model.onnx``
    and a dynamic int8 graph made from the fp32 one, and ship the first of static, dynamic
    whose log-MAE (raw medians, on ``truth``) is within :data:`INT8_TOLERANCE` of fp32's,
    else fp32. The graphs not shipped are removed; ``laser.json`` ``checks.int8`` says what
    was measured. (A fine-tuned model's activations are not the base's: its int8 graph is
    checked, not assumed.)"""
    import shutil

    from laser_ci.predictors.lm import CONFIG_NAME, MODEL_FILE, LaserModel
    from laser_ci.training.export import quantize_int8, sha256_file

    fp32, dynamic = out / "model.fp32.onnx", out / "model.dynamic.onnx"
    quantize_int8(fp32, dynamic)
    got: dict[str, float | None] = {}
    for name, file in (("fp32", fp32.name), ("static", MODEL_FILE), ("dynamic", dynamic.name)):
        m = LaserModel(out, model_file=file, threads=threads, verify=False)
        got[name] = _log_mae([r.p50 for r, _ in m.predict_raw(list(texts))], list(truth))
    shipped = pick_graph(got)
    path = out / CONFIG_NAME
    config = json.loads(path.read_text(encoding="utf-8"))
    if shipped != "static":
        shutil.copyfile(dynamic if shipped == "dynamic" else fp32, out / MODEL_FILE)
        config["files"][MODEL_FILE] = sha256_file(out / MODEL_FILE)
        config["model"].pop("static_weights", None)
        if shipped == "dynamic":
            config["model"]["quantization"] = "dynamic"
        else:
            config["model"]["int8"] = False
            config["model"].pop("quantization", None)
    for f in (fp32, dynamic):
        f.unlink(missing_ok=True)
        config["files"].pop(f.name, None)
    report = {"texts": len(texts), "log_mae": {k: None if v is None else round(v, 4)
                                                 for k, v in got.items()},
              "tolerance": INT8_TOLERANCE, "shipped": shipped}
    config.setdefault("checks", {})["int8"] = report
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return report


def _sample(items: Sequence[Any], n: int, seed: int) -> list[Any]:
    return list(items) if len(items) <= n else random.Random(seed).sample(list(items), n)


def _ship_evidence_bands(out: Path) -> None:
    """The shipped evidence bands (:mod:`laser_ci.predictors.evidence_bands`) into the
    learned folder, hashed in its ``laser.json``: ``estimate --model DIR`` then predicts a
    job with runs of its own from them (:mod:`laser_ci.predictors.own_runs`) as the shipped
    model does, and lends evidence to a new job with the same bands. The learned model
    answers for the texts nothing closer answers for."""
    import shutil

    from laser_ci.predictors.evidence_bands import FILE, default_file
    from laser_ci.predictors.lm import CONFIG_NAME
    from laser_ci.training.export import sha256_file

    src = default_file()
    if not src.is_file():
        return
    shutil.copyfile(src, out / FILE)
    path = out / CONFIG_NAME
    config = json.loads(path.read_text(encoding="utf-8"))
    config["files"][FILE] = sha256_file(out / FILE)
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def _write_learned(out: Path, info: dict[str, Any]) -> None:
    from laser_ci.predictors.lm import CONFIG_NAME

    path = out / CONFIG_NAME
    config = json.loads(path.read_text(encoding="utf-8"))
    config["learned"] = info
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def _one_repository(examples: Sequence[Any], given: str | None) -> tuple[str, list[Any]]:
    """The repository the history is of and its examples: ``given`` (``--repo``) picks one
    of several; a history of several without it is an error (learning is per repository)."""
    repos = sorted({e.repo for e in examples if e.repo})
    if given:
        mine = [e for e in examples if e.repo == given] if len(repos) > 1 else list(examples)
        if not mine:
            raise click.ClickException(f"--repo {given}: not in the history "
                                       f"({', '.join(repos[:3])}{', ...' if len(repos) > 3 else ''})")
        return given, mine
    if len(repos) != 1:
        raise click.ClickException(
            f"the history holds {len(repos)} repositories ({', '.join(repos[:3])}"
            f"{', ...' if len(repos) > 3 else ''}); learning is per repository: pick one "
            "with --repo")
    return repos[0], list(examples)


def learn_repository(data_dir: str | os.PathLike[str], base_dir: str | os.PathLike[str],
                     out_dir: str | os.PathLike[str], cfg: Any, *, minutes: float = 20.0,
                     device: str = "auto", repository: str | None = None,
                     say: Callable[[str], None] = lambda _s: None) -> dict[str, Any]:
    """Learn one repository's history (module doc); returns the report also written to
    ``out_dir/train_report.json``. ``say``: one line per stage (progress)."""
    from laser_ci.predictors.lm import load_reference, prompt_references, read_config
    from laser_ci.text.numbers import NumberCodec
    from laser_ci.text.tokenize import load_tokenizer
    from laser_ci.training.config import base_prompt, prompt_codec
    from laser_ci.training.examples import load_examples
    from laser_ci.training.export import export_model
    from laser_ci.training.finetune import with_history_texts
    from laser_ci.training.loops import (
        _accelerator,
        calibration_ids,
        evaluate_loss,
        finetune_loop,
        make_items,
    )
    from laser_ci.training.network import load_model
    from laser_ci.training.references import attach_reference

    t0 = time.time()
    base = Path(base_dir)
    base_cfg = read_config(base)
    try:
        cfg = replace(cfg, **base_prompt(base_cfg))
    except ValueError as exc:
        raise click.ClickException(f"{base}: {exc}") from None
    codec = NumberCodec(**base_cfg["codec"])
    acc = _accelerator(cfg, device)
    tok = load_tokenizer(base / "tokenizer.json")
    model = load_model(base)
    model.to(acc.device)
    examples = [e for e in load_examples(data_dir, kinds=cfg.kinds, cache=False)
                if e.runtime_s > 0]
    repo, examples = _one_repository(examples, repository)
    if len(examples) < 5:
        raise click.ClickException(f"{data_dir}: only {len(examples)} labeled examples")
    split = split_history(examples)
    if not split.train or not split.val:
        raise click.ClickException(f"{data_dir}: too few runs to hold the latest back "
                                   f"({len({e.run_id for e in examples})} runs)")
    say(f"{repo}: {len(examples):,} job and workflow runs; learning from "
        f"{len(split.train):,}, holding back the latest {len(split.val) + len(split.new):,} "
        f"({len(split.new_names)} job names held out as new jobs)")
    measured = sum(getattr(e, "usage", None) is not None for e in split.train)
    if measured >= MIN_MEASURED_RUNS:  # part 5: CPU, memory and disk after the runtime
        cfg = replace(cfg, targets=USAGE_TARGETS)
        say(f"{measured:,} of them with usage records: learning {', '.join(USAGE_TARGETS)} "
            "after the runtime")
    reference_model = load_reference(base) if cfg.cold_reference else None
    refs = None
    if reference_model is not None:
        from laser_ci.training.references import reference_key

        refs = {reference_key(e): r for e, r in zip(
            examples, prompt_references(reference_model, [e.text for e in examples]),
            strict=True)}
    val_loss = _sample(split.val, VAL_LOSS_MAX, cfg.seed)
    train_texts, val_texts = with_history_texts(split.train, val_loss, cfg, refs)
    prompt = prompt_codec(tok, codec, cfg)
    train_items = make_items(train_texts, prompt)
    val_items = make_items(val_texts, prompt)
    log: dict[str, Any] = {"config": asdict(cfg), "base": str(base), "repository": repo,
                           "data": {"train": len(train_items), "val": len(val_items),
                                    "held_back": len(split.val) + len(split.new),
                                    "new_names": len(split.new_names)}}
    t = time.time()
    log["val_before"] = evaluate_loss(model, val_items, prompt.pad_id, cfg.batch_size * 2,
                                      acc.device)
    val_pass_s = time.time() - t
    cal_warm = _sample([e for e in split.val if e.text_warm is not None], CAL_WARM_MAX,
                       cfg.seed)
    cal_new = _sample(split.new, CAL_NEW_MAX, cfg.seed)
    decode_s = _decode_seconds_per_text(base, cal_warm[:20], cfg.threads)
    # the usage check decodes its texts once per target and once for the runtime, with the
    # learned model alone (halved: training_minutes counts each calibration text twice)
    usage_texts = min(sum(bool(e.usage) for e in split.val + split.new), CAL_WARM_MAX) * (
        1 + len(cfg.targets)) // 2 if cfg.targets else 0
    budget = training_minutes(minutes, time.time() - t0, val_pass_s, decode_s,
                              len(cal_warm) + len(cal_new or cal_warm) + usage_texts)
    log["budget"] = {"minutes": minutes, "before_training_s": round(time.time() - t0, 1),
                     "val_pass_s": round(val_pass_s, 1), "decode_s_per_text": round(decode_s, 4),
                     "training_minutes": round(budget, 2)}
    cfg = replace(cfg, finetune_minutes=budget)
    say(f"training for up to {budget:.1f} min" if budget else "training (no time limit)")
    best = finetune_loop(model, train_items, val_items, cfg, acc, prompt.pad_id, log)
    model = acc.unwrap_model(model)
    if best is not None:
        model.load_state_dict(best)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    say("exporting the int8 model")
    t = time.time()
    export_model(model.to("cpu").float().eval(), tok, out,
                 max_prompt_tokens=cfg.max_prompt_tokens, codec=codec,
                 warm_target=cfg.warm_target, num_samples=cfg.num_samples, int8=True,
                 calibration=calibration_ids(train_items, CALIBRATION_PROMPTS, cfg.seed),
                 static_weights=STATIC_WEIGHTS, include_weights=False, layout=cfg.layout,
                 warm_anchor=cfg.warm_anchor, targets=cfg.targets, validate=False,
                 keep_fp32=True,
                 extra={"decoding": dict(base_cfg.get("decoding") or {})})
    attach_reference(out, outcome=cfg.outcome, reference=reference_model)
    _ship_evidence_bands(out)
    check = _sample(cal_new, INT8_CHECK_TEXTS // 2, cfg.seed) + _sample(
        cal_warm, INT8_CHECK_TEXTS - min(len(cal_new), INT8_CHECK_TEXTS // 2), cfg.seed)
    log["int8_check"] = int8_check(out, [e.text_warm or e.text for e in check],
                                   [e.runtime_s for e in check], max(cfg.threads, 1))
    say(f"int8 check: {log['int8_check']['shipped']} graph shipped "
        f"({json.dumps(log['int8_check']['log_mae'])})")
    log["export_seconds"] = round(time.time() - t, 1)
    say(f"calibrating on the {len(cal_warm) + len(cal_new):,} latest runs it did not learn from")
    t = time.time()
    cal = calibrate_learned(out, base, cal_warm, cal_new, max(cfg.threads, 1))
    log["calibration"] = {"band_scale": cal.band_scale, "shrink": cal.shrink,
                          "figures": cal.figures, "seconds": round(time.time() - t, 1)}
    dates = sorted(e.commit_date for e in split.train)
    late = sorted(e.commit_date for e in split.val + split.new)
    info = {
        "repository": repo,
        "job_runs": sum(e.kind == "job" for e in split.train),
        "runs": len({e.run_id for e in split.train}),
        "first": dates[0], "last": dates[-1],
        "calibrated_on": {"job_runs": sum(e.kind == "job" for e in split.val + split.new),
                          "runs": len({e.run_id for e in split.val + split.new}),
                          "first": late[0], "last": late[-1],
                          "new_job_names": len(split.new_names)},
        "figures": cal.figures,
        **({"usage": {"targets": list(cfg.targets), "measured_job_runs": measured,
                      "figures": usage_figures(out, split.val + split.new, split.train,
                                               max(cfg.threads, 1))}}
           if cfg.targets else {}),
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "base": base_cfg["files"]["model.onnx"],
        "minutes": round((time.time() - t0) / 60, 1),
    }
    _write_learned(out, info)
    log["learned"] = info
    log["seconds"] = round(time.time() - t0, 1)
    (out / "train_report.json").write_text(json.dumps(log, indent=2) + "\n")
    return log


def _decode_seconds_per_text(model_dir: Path, examples: Sequence[Any], threads: int) -> float:
    """Seconds the base takes per held-back text with its history (a few, timed): what
    the calibration's decoding will cost, per text."""
    from laser_ci.predictors.lm import LaserModel

    if not examples:
        return 0.05
    m = LaserModel(model_dir, threads=max(threads, 1))
    t = time.time()
    m.predict_raw([e.text_warm for e in examples])
    return (time.time() - t) / len(examples)


def summary_lines(log: dict[str, Any], out_dir: str | os.PathLike[str]) -> list[str]:
    """What ``laser-ci finetune`` prints: what it learned from, its figures against the
    base on the runs it held back, and the folder."""
    info = log["learned"]
    size = sum(p.stat().st_size for p in Path(out_dir).rglob("*") if p.is_file()) / 2**20
    lines = [f"learned {info['repository']} from {info['job_runs']:,} job runs "
             f"({info['first'][:10]} to {info['last'][:10]}) in {info['minutes']:.1f} min",
             f"checked on its latest {info['calibrated_on']['job_runs']:,} job runs "
             f"({info['calibrated_on']['first'][:10]} to "
             f"{info['calibrated_on']['last'][:10]}), successful runs, log-MAE "
             "(lower is better) and p10-p90 coverage:"]
    for part, fig in info["figures"].items():
        mine, theirs = fig["learned"], fig["base"]
        if mine["log_mae"] is None:
            continue
        lines.append(f"  {part}: {mine['log_mae']:.3f} against the shipped model's "
                     f"{theirs['log_mae']:.3f} ({mine['runs']:,} runs; coverage "
                     f"{mine['coverage']:.0%})")
    usage = info.get("usage")
    if usage:
        figs = usage["figures"]
        lines.append(f"it also writes {', '.join(usage['targets'])} after the runtime "
                     f"(learned from {usage['measured_job_runs']:,} measured job runs; "
                     f"checked on {figs['runs']:,}" + "".join(
                         f"; {k}: log-MAE {f['learned']:.3f} against "
                         f"{f['median of measured runs']:.3f} for their median"
                         for k, f in figs.items() if isinstance(f, dict)) + ")")
    lines.append(f"wrote {out_dir} ({size:.1f} MB): laser-ci estimate --model {out_dir} "
                 "--history HISTORY")
    return lines
