"""``laser-ci eval DATA_DIR --folds K``: cross-validation by repository.

Every repository is in one of K folds (:func:`laser_ci.training.folds.fold_of`: the hash
the split uses; with K = 5 fold 0 is the ``val`` split). For each fold in turn, every
requested predictor is trained with its shipped recipe on the other K - 1 folds and scored
on the held-out one; the predictions are pooled, so the metrics are over every repository
of the folder. Inside the K - 1 training folds the next fold (:func:`~laser_ci.training.
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
- ``laser-lm``: fine-tuned per fold from ``--lm-base`` (a model pretrained on the
  unlabeled workflow corpus only: ``laser-ci train --pretrain-only``; no labels in it, but
  its corpus includes the held-out repositories' workflow files) with the options of the
  shipped model's last stage (:data:`LM_FOLD_CONFIG`, ``--lm-epochs``), exported to int8
  ONNX in a temporary folder and decoded like the shipped model.

Report (``--format json``): the ``laser-ci eval`` report (:mod:`laser_ci.training.evaluate`)
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
folder under ``"cv"`` (:func:`write_cards`); :mod:`laser_ci.predictors.choice` ranks
predictors by them.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from laser_ci.predictors.base import Predictor, Runtime
from laser_ci.training import metrics
from laser_ci.training.evaluate import (
    SUBSET_TITLES,
    _table,
    format_metric,
    json_safe,
    predict_texts,
    predictor_entry,
    report_head,
)
from laser_ci.training.example import Example
from laser_ci.training.folds import DEFAULT_FOLDS, fold_of, fold_parts, inner_fold
from laser_ci.training.history import SUBSETS, example_text, in_subset, subset_of
from laser_ci.training.train import PRETRAIN_MARKER, TrainConfig, held_out_fold

LM_NAME = "laser-lm"
BASELINE_NAMES = ("median", "tabular", "text-linear", "history-median", "history-recent")
TRAINABLE = (*BASELINE_NAMES, LM_NAME)
MIN_FOLDS = 3  # held-out fold, the recipe's val fold, and at least one to train on


class CVError(ValueError):
    """A cross-validation that cannot run as asked (one readable line)."""


CV_COLUMNS = (
    ("n", "n"),
    ("log_mae", "log-MAE"),
    ("within_2x", "within 2x"),
    ("coverage", "p10-p90 cov"),
    ("width", "width p90/p10"),
    ("interval_score", "interval score"),
)
RUNS = ("success", "all")  # successful runs are the headline: how long until it passes


# the options of the shipped model's last stage (model/lm/MODEL_CARD.md, "Training", stage 3:
# --max-prompt-tokens 256 --epochs 3 --patience 3 --batch-size 32 --lr 3e-4 --threads 2
# --scale-aug 1.0 --select-on warm_number_loss --warm-target ratio); no decoding of val
LM_FOLD_CONFIG = TrainConfig(max_prompt_tokens=256, epochs=3, patience=3, batch_size=32,
                             lr=3e-4, threads=2, scale_aug=1.0, select_on="warm_number_loss",
                             warm_target="ratio", pretrain_steps=0, max_val_decode=0)


# --- the language model per fold -----------------------------------------------------------

# what a kept fold model must share with the recipe to be reused (LMRecipe.reuse)
RECIPE_KEYS = ("max_prompt_tokens", "warm_target", "outcome", "cold_reference", "layout",
               "quantization", "success_only", "kinds", "history_mode", "p_cold", "pairs",
               "warm_reference", "warm_anchor")


def cold_targets_only(marker: dict[str, Any]) -> bool:
    """Whether a base's marker says it was trained on cold targets alone: a teacher's
    samples on corpus versions (:mod:`laser_ci.training.distill`), which carry no history,
    so its warm outputs were never trained over either anchor and any recipe may set it."""
    labels = marker.get("labels")
    return isinstance(labels, dict) and labels.get("from") == "teacher"


@dataclass
class LMRecipe:
    """Fine-tune ``base`` on a fold's training examples, export int8, load it to score."""

    base: Path
    epochs: int | None = None
    device: str = "auto"
    keep: Path | None = None  # keep each fold's model folder here (else a temporary one)
    threads: int | None = None
    minutes: float | None = None  # fine-tuning time limit per fold (None: none)
    # the prompt ends with `outcome:` and, for cold texts, a tabular `reference:` (the fold's
    # own tabular model, shipped in the fold's folder; training texts' references out of fold)
    prompt_lines: bool = False
    # with prompt_lines: warm texts read the fold's tabular warm p50 as their reference too
    # (out of fold in training), and the output is the ratio to it (TrainConfig.warm_reference)
    warm_reference: bool = False
    layout: str = "serial"  # the prompt layout (laser_ci.text.tokenize)
    warm_anchor: str = "median"  # the history figure a warm ratio is over (TrainConfig.warm_anchor)
    quantization: str = "dynamic"  # the int8 export (laser_ci.training.export.quantize_int8)
    pairs: int = 0  # changed configurations from pairs of runs (TrainConfig.pairs)
    # the prompt's token budget (None: the fold config's, 256); more needs a base whose
    # pretraining rows were at least this long (checked where its marker records them), or
    # its positions past them are untrained (the output's few tokens still go past)
    max_prompt_tokens: int | None = None
    reuse: bool = False  # score the fold folders an earlier run kept in ``keep`` (train the rest)
    # decoding (not training): the last digit's distribution kept whole (decode.sample_numbers)
    exact_last: bool = False
    # p10-p90 band scales fit on the fold's val part (laser_ci.training.bands); else none
    calibrate_bands: bool = False
    # with calibrate_bands: the median's shrink toward the prompt's reference, fit on the
    # val part too (laser_ci.training.bands.shrink_factor); else none
    shrink: bool = False
    samples: int | None = None  # samples per text (None: the fold model's laser.json)
    sampling: str | None = None  # how they are placed (None: the fold model's laser.json)
    cfg: Any = None
    pretrained: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.base = Path(self.base)
        marker = self.base / PRETRAIN_MARKER
        if not marker.is_file():
            raise CVError(
                f"{self.base}: not a base pretrained on the unlabeled corpus only (no "
                f"{PRETRAIN_MARKER}); a model fine-tuned on labeled runs would carry the "
                "held-out folds' labels. Make one with `laser-ci train --pretrain-only`.")
        self.pretrained = json.loads(marker.read_text(encoding="utf-8"))
        if self.pretrained.get("labels") and held_out_fold(self.pretrained) is None:
            raise CVError(f"{marker}: the base saw labels")
        cfg = self.cfg or LM_FOLD_CONFIG
        upd: dict[str, Any] = {}
        if self.epochs is not None:
            upd["epochs"] = self.epochs
        if self.threads is not None:
            upd["threads"] = self.threads
        if self.minutes is not None:
            upd["finetune_minutes"] = self.minutes
        if self.prompt_lines:
            upd.update(outcome=True, cold_reference="tabular")
        if self.warm_reference:
            if not self.prompt_lines:
                raise CVError("a warm reference needs the prompt lines (--lm-prompt-lines)")
            upd["warm_reference"] = "tabular"
        if self.layout != "serial":
            upd["layout"] = self.layout
        if self.warm_anchor != "median":
            upd["warm_anchor"] = self.warm_anchor
        if self.quantization != "dynamic":
            upd["quantization"] = self.quantization
        if self.pairs:
            upd["pairs"] = self.pairs
        from laser_ci.predictors.lm import CONFIG_NAME, read_config

        # a model-folder base's fine-tune keeps its own prompt budget and warm outputs
        # (train.load_base): a recipe asking for others is refused, not silently overridden
        own = (read_config(self.base, verify=False).get("prompt", {})
               if (self.base / CONFIG_NAME).is_file() else None)
        if self.max_prompt_tokens is not None:
            seq_len = self.pretrained.get("seq_len")  # older bases did not say
            if isinstance(seq_len, int) and seq_len < self.max_prompt_tokens:
                raise CVError(f"{self.base}: pretrained on {seq_len}-token rows, so its "
                              f"positions past {seq_len} are untrained; a "
                              f"{self.max_prompt_tokens}-token prompt needs a base pretrained "
                              f"with --pretrain-seq-len {self.max_prompt_tokens} or more")
            if own is not None and own.get("max_prompt_tokens") != self.max_prompt_tokens:
                raise CVError(f"{self.base}: a model folder with a "
                              f"{own.get('max_prompt_tokens')}-token prompt, which its "
                              f"fine-tune keeps; it cannot make a "
                              f"{self.max_prompt_tokens}-token recipe")
            upd["max_prompt_tokens"] = self.max_prompt_tokens
        own_anchor = self.warm_anchor if own is None else own.get("warm_anchor", "median")
        if own_anchor != self.warm_anchor and not cold_targets_only(self.pretrained):
            raise CVError(f"{self.base}: a model folder whose warm outputs are over the "
                          f"history's {own_anchor}; it cannot make a recipe over its "
                          f"{self.warm_anchor} (--lm-warm-anchor {own_anchor})")
        if self.reuse and self.keep is None:
            raise CVError("reusing fold models needs the folder they were kept in (--lm-keep)")
        if self.shrink and not self.calibrate_bands:
            raise CVError("the shrink is fit with the band scales (--lm-calibrate-bands)")
        self.cfg = replace(cfg, **upd)

    def fit(self, train: Sequence[Example], val: Sequence[Example], fold: int, *,
            k: int = DEFAULT_FOLDS, tabular: Any = None,
            feats: dict[str, dict[str, float]] | None = None) -> Predictor:
        """The fold's model; with ``prompt_lines``, ``tabular`` is the fold's tabular model
        (fit on ``train`` and ``val``; fit here when None) and the training texts'
        references come from tabular models fit without their own fold (of ``k``)."""
        from laser_ci.predictors.lm import CONFIG_NAME

        self._check_fold(fold, k)
        if self.keep is not None:
            out = self.keep / f"fold{fold}"
        else:
            out = Path(tempfile.mkdtemp(prefix=f"laser-ci-cv-fold{fold}-"))
        if self.reuse and (out / CONFIG_NAME).is_file():
            self._check_kept(out)
        else:
            self._finetune(train, val, out, k=k, tabular=tabular, feats=feats)
        return self._load(out, val)

    def _check_fold(self, fold: int | None, k: int) -> None:
        """A base that saw one fold's training labels (a distilled base, :mod:`laser_ci.
        training.distill`) scores that fold only, and never makes a shipped model."""
        own = held_out_fold(self.pretrained)
        if own is None:
            return
        if fold is None or own != (fold, k):
            what = "a shipped model" if fold is None else f"fold {fold} of {k}"
            raise CVError(f"{self.base}: distilled from a teacher trained without fold "
                          f"{own[0]} of {own[1]} only; it cannot make {what}")

    def _load(self, folder: Path, val: Sequence[Example]) -> Predictor:
        """The model in ``folder`` decoded as this recipe decodes; with ``calibrate_bands``,
        its band scales (and with ``shrink`` its shrinks) fit on ``val`` first (and written to
        its ``laser.json``)."""
        from laser_ci.predictors.lm import LaserModel
        from laser_ci.training.bands import apply, calibrate, write_calibration

        threads = max(1, self.cfg.threads)
        kw = {"threads": threads, "exact_last": self.exact_last, "num_samples": self.samples,
              "sampling": self.sampling}
        model = LaserModel(folder, band_scale={}, shrink={}, **kw)
        if not self.calibrate_bands:
            return model
        cal = calibrate(model, val, shrink=self.shrink)
        write_calibration(folder, cal, examples=len(val))
        # what LaserModel(folder) now reads from laser.json, without opening the model again
        apply(model, cal)
        return model

    def _check_kept(self, folder: Path) -> None:
        """A kept fold model is reused only if it was trained with this recipe's prompt,
        codec and export settings (else its scores would be another recipe's)."""
        try:
            report = json.loads((folder / "train_report.json").read_text(encoding="utf-8"))
            kept = report["config"]
        except (OSError, ValueError, KeyError) as exc:
            raise CVError(f"{folder}: no training config to check for reuse ({exc})") from exc
        kept_base = report.get("base")  # a fold fine-tuned from another base is another model
        if kept_base is not None and Path(kept_base).resolve() != self.base.resolve():
            raise CVError(f"{folder}: fine-tuned from {kept_base}, not {self.base}; fine-tune "
                          "again (no --lm-reuse) or keep in another --lm-keep")
        ours = json.loads(json.dumps(asdict(self.cfg)))  # tuples as the JSON's lists
        defaults = json.loads(json.dumps(asdict(TrainConfig())))  # what older runs left out
        differ = [key for key in RECIPE_KEYS if kept.get(key, defaults[key]) != ours[key]]
        if differ:
            raise CVError(f"{folder}: trained with other {', '.join(differ)} than this recipe "
                          f"({', '.join(f'{k}={kept.get(k, defaults[k])!r}' for k in differ)}); "
                          "fine-tune again (no --lm-reuse) or keep in another --lm-keep")

    def references(self, train: Sequence[Example], val: Sequence[Example], tabular: Any, *,
                   k: int, feats: dict[str, dict[str, float]] | None = None) -> dict[Any, float]:
        """:func:`fold_references`, warm ones too for a ``warm_reference`` recipe."""
        return fold_references(train, val, tabular, k=k, feats=feats,
                               warm=bool(self.cfg.warm_reference))

    def _finetune(self, train: Sequence[Example], val: Sequence[Example], out: Path, *,
                  k: int, tabular: Any = None, feats: dict[str, dict[str, float]] | None = None,
                  include_weights: bool = False) -> None:
        from laser_ci.training.train import finetune_examples

        refs = None
        if self.cfg.cold_reference:
            if tabular is None:
                from laser_ci.training.baselines import fit_tabular

                tabular = fit_tabular(train, val, feats)
            refs = self.references(train, val, tabular, k=k, feats=feats)
        # the training loop writes its epoch lines to stdout: keep stdout for the report
        with contextlib.redirect_stdout(sys.stderr):
            finetune_examples(self.base, train, val, out, self.cfg, device=self.device,
                              references=refs, reference_model=tabular,
                              include_weights=include_weights)

    def ship(self, examples: Sequence[Example], out: Path, *, k: int = DEFAULT_FOLDS,
             feats: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
        """The recipe run on every repository, what a shipped model is: fine-tuned on every
        fold but fold 0, whose examples pick the best epoch (and fit the tabular reference's
        hyperparameters), as a fold's model is on its training folds; written to ``out``
        with its weights (``laser-ci finetune`` starts from them). Returns the training log."""
        from laser_ci.predictors.lm import CONFIG_NAME, REFERENCE_DIR

        self._check_fold(None, k)
        folds = [fold_of(e.repo, k) for e in examples]
        train = [e for e, g in zip(examples, folds, strict=True) if g != 0]
        val = [e for e, g in zip(examples, folds, strict=True) if g == 0]
        with tempfile.TemporaryDirectory(prefix="laser-ci-ship-") as tmp:
            self._finetune(train, val, Path(tmp), k=k, feats=feats, include_weights=True)
            self._load(Path(tmp), val)  # the band scales, as a fold's
            config = json.loads((Path(tmp) / CONFIG_NAME).read_text(encoding="utf-8"))
            config["decoding"]["exact_last"] = self.exact_last
            if self.sampling:
                config["decoding"]["sampling"] = self.sampling
            config["training"] = {**config.get("training", {}), "recipe": self.describe(),
                                  "train": len(train), "val": len(val), "folds": k}
            log = json.loads((Path(tmp) / "train_report.json").read_text(encoding="utf-8"))
            out.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(out / REFERENCE_DIR, ignore_errors=True)
            for name in config["files"]:
                dst = out / name
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(tmp) / name, dst)
            (out / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n")
        return log

    def describe(self) -> dict[str, Any]:
        return {"base": str(self.base), "pretrained": self.pretrained,
                "config": asdict(self.cfg),
                "decoding": {"exact_last": self.exact_last,
                             "calibrate_bands": self.calibrate_bands,
                             **({"shrink": True} if self.shrink else {}),
                             **({"samples": self.samples} if self.samples else {}),
                             **({"sampling": self.sampling} if self.sampling else {})},
                "note": self._note()}

    def _note(self) -> str:
        note = ("fine-tuned per fold from a base pretrained on the unlabeled workflow corpus "
                "(no labels; the corpus includes the held-out folds' repositories' workflow "
                "files)")
        own = held_out_fold(self.pretrained)
        if own is not None:  # a distilled base (_check_fold): one fold's labels, via a teacher
            note += (f", then trained on a teacher's samples; the teacher saw the labels of "
                     f"every fold but {own[0]} of {own[1]}")
        return note


def fold_references(train: Sequence[Example], val: Sequence[Example], tabular: Any, *, k: int,
                    feats: dict[str, dict[str, float]] | None = None,
                    warm: bool = False) -> dict[Any, float]:
    """A fold's training and val texts' references, each from a tabular model with
    ``tabular``'s hyperparameters fit without the text's own fold (of ``k``); with
    ``warm``, the texts with history too (from ``tabular``'s warm part)."""
    from laser_ci.training.references import out_of_fold_references

    both = [*train, *val]
    warm_params = None
    if warm:
        if tabular.warm is None:
            raise CVError("a warm reference needs a tabular model with a warm part")
        warm_params = {**tabular.warm.info["params"], "anchor": tabular.warm.anchor}
    return out_of_fold_references(both, [fold_of(e.repo, k) for e in both],
                                  tabular.info["params"], warm_params=warm_params, feats=feats)


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
    if LM_NAME in names and isinstance(lm, LMRecipe):
        for f in range(k):  # a base for one fold only fails before any fold is trained
            lm._check_fold(f, k)
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
    if lm_part and lm is not None and lm.cfg.cold_reference:
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
                   "(laser_ci.training.folds.fold_of; K = 5: fold 0 is the val split)",
        "inner": "the recipe's val part is the next fold ((f + 1) % K), its train part the "
                 "other K - 2 training folds (laser_ci.training.folds.inner_fold)",
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
        return ("laser_ci.training.train.finetune_examples from --lm-base, the options of "
                "the shipped model's last stage (laser_ci.training.crossval.LM_FOLD_CONFIG)")
    return "laser_ci.training.baselines.fit_baselines (benchmarks/baselines.py's recipe)"


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
             root / "predictors" / "features.py", root / "training" / "folds.py",
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


# --- the command -----------------------------------------------------------------------------


def eval_cv(data_dir: str, k: int, *, kind: str, fmt: str, plot_path: str | None,
            model_dir: str | None, only: Sequence[str], history: str, no_cache: bool,
            write: bool, reference: str | None, jobs: int | None, lm_base: str | None,
            lm_epochs: int | None,
            lm_device: str, lm_threads: int | None, lm_minutes: float | None,
            lm_keep: str | None, lm_prompt_lines: bool = False,
            lm_reuse: bool = False, lm_layout: str = "serial",
            lm_quantization: str = "dynamic", lm_ship: str | None = None,
            lm_exact_last: bool = False, predictions_path: str | None = None,
            lm_pairs: int = 0, lm_calibrate_bands: bool = False,
            lm_samples: int | None = None, lm_warm_reference: bool = False,
            lm_sampling: str | None = None, lm_shrink: bool = False,
            lm_max_prompt_tokens: int | None = None, lm_warm_anchor: str = "median") -> None:
    """``laser-ci eval DATA_DIR --folds K``: see the module doc."""
    import click

    from laser_ci.training.evaluate import plot
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
                          minutes=lm_minutes, prompt_lines=lm_prompt_lines, reuse=lm_reuse,
                          layout=lm_layout, quantization=lm_quantization,
                          exact_last=lm_exact_last, pairs=lm_pairs,
                          calibrate_bands=lm_calibrate_bands, samples=lm_samples,
                          warm_reference=lm_warm_reference, sampling=lm_sampling,
                          shrink=lm_shrink, max_prompt_tokens=lm_max_prompt_tokens,
                          warm_anchor=lm_warm_anchor)
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
        if lm.prompt_lines:
            parts.append("--lm-prompt-lines")
        if lm.warm_reference:
            parts.append("--lm-warm-reference")
        if lm.layout != "serial":
            parts += ["--lm-layout", lm.layout]
        if lm.warm_anchor != "median":
            parts += ["--lm-warm-anchor", lm.warm_anchor]
        if lm.quantization != "dynamic":
            parts += ["--lm-quantization", lm.quantization]
        if lm.exact_last:
            parts.append("--lm-exact-last")
        if lm.pairs:
            parts += ["--lm-pairs", str(lm.pairs)]
        if lm.max_prompt_tokens is not None:
            parts += ["--lm-max-prompt-tokens", str(lm.max_prompt_tokens)]
        if lm.calibrate_bands:
            parts.append("--lm-calibrate-bands")
        if lm.shrink:
            parts.append("--lm-shrink")
        if lm.samples:
            parts += ["--lm-samples", str(lm.samples)]
        if lm.sampling:
            parts += ["--lm-sampling", lm.sampling]
    return " ".join(parts + ["--write-cards"])


def data_digest(data_dir: str | Path) -> str:
    """Which data set a report is of: the names and sizes of its runs and blobs files."""
    from laser_ci.training.examples import _data_file

    h = hashlib.sha256()
    for stem in ("runs", "blobs"):
        p = _data_file(data_dir, stem, required=False)
        if p is not None:
            h.update(f"{p.name}:{p.stat().st_size}|".encode())
    return h.hexdigest()[:16]
