"""The shipped language model's recipe, per cross-validation fold and on every repository.

:class:`LMRecipe` is what ``laser-ci eval --folds K --lm-base BASE`` runs for ``laser-lm``
(:mod:`laser_ci.evaluation.crossval`): for each fold, the base (pretrained on the unlabeled
corpus only, ``laser-ci train``) fine-tuned on the other folds' examples
(:func:`laser_ci.training.finetune.finetune_examples` with :data:`~laser_ci.training.config.
FOLD_CONFIG`), the next fold picking the epoch; exported to int8 ONNX and decoded as the
shipped model is: the last digit's distribution kept whole (``exact_last``), then the band
scales and the median's shrink toward the prompt's reference fit per regime on that val
fold (:mod:`laser_ci.training.bands`). A cold text's prompt reads the fold's tabular p50,
out of fold for the training texts (:func:`fold_references`). ``--lm-ship DIR`` runs the
same recipe on every repository (fold 0 picks the epoch) and writes the model with its
weights (:meth:`LMRecipe.ship`); ``model/lm`` is that model, its int8 graph then
re-quantized static with signed 7-bit weights (``benchmarks/int8_check.py``).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from laser_ci.evaluation.folds import DEFAULT_FOLDS, fold_of
from laser_ci.predictors.base import Predictor
from laser_ci.training.config import FOLD_CONFIG, PRETRAIN_MARKER, TrainConfig
from laser_ci.training.example import Example

# what a kept fold model must share with the recipe to be reused (LMRecipe.reuse)
RECIPE_KEYS = ("max_prompt_tokens", "warm_target", "outcome", "cold_reference", "layout",
               "success_only", "kinds", "p_cold", "warm_anchor")


class CVError(ValueError):
    """A cross-validation that cannot run as asked (one readable line)."""


@dataclass
class LMRecipe:
    """Fine-tune ``base`` on a fold's training examples, export int8, load it to score."""

    base: Path
    epochs: int | None = None
    device: str = "auto"
    keep: Path | None = None  # keep each fold's model folder here (else a temporary one)
    threads: int | None = None
    minutes: float | None = None  # fine-tuning time limit per fold (None: none)
    reuse: bool = False  # score the fold folders an earlier run kept in ``keep`` (train the rest)
    cfg: TrainConfig = field(default_factory=lambda: FOLD_CONFIG)
    pretrained: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.base = Path(self.base)
        marker = self.base / PRETRAIN_MARKER
        if not marker.is_file():
            raise CVError(
                f"{self.base}: not a base pretrained on the unlabeled corpus only (no "
                f"{PRETRAIN_MARKER}); a model fine-tuned on labeled runs would carry the "
                "held-out folds' labels. Make one with `laser-ci train`.")
        self.pretrained = json.loads(marker.read_text(encoding="utf-8"))
        if self.pretrained.get("labels"):
            raise CVError(f"{marker}: the base saw labels")
        upd: dict[str, Any] = {}
        if self.epochs is not None:
            upd["epochs"] = self.epochs
        if self.threads is not None:
            upd["threads"] = self.threads
        if self.minutes is not None:
            upd["finetune_minutes"] = self.minutes
        from laser_ci.predictors.lm import CONFIG_NAME, read_config

        # a model-folder base's fine-tune keeps its own warm outputs (network.load_base):
        # one over another history figure than the recipe's is refused
        if (self.base / CONFIG_NAME).is_file():
            own = read_config(self.base, verify=False).get("prompt", {})
            if own.get("warm_anchor", "median") != self.cfg.warm_anchor:
                raise CVError(f"{self.base}: a model folder whose warm outputs are over the "
                              f"history's {own.get('warm_anchor', 'median')}, not its "
                              f"{self.cfg.warm_anchor} as this recipe's")
        if self.reuse and self.keep is None:
            raise CVError("reusing fold models needs the folder they were kept in (--lm-keep)")
        self.cfg = replace(self.cfg, **upd)

    def fit(self, train: Sequence[Example], val: Sequence[Example], fold: int, *,
            k: int = DEFAULT_FOLDS, tabular: Any = None,
            feats: dict[str, dict[str, float]] | None = None) -> Predictor:
        """The fold's model; ``tabular`` is the fold's tabular model (fit on ``train`` and
        ``val``; fit here when None) and the training texts' references come from tabular
        models fit without their own fold (of ``k``)."""
        from laser_ci.predictors.lm import CONFIG_NAME

        if self.keep is not None:
            out = self.keep / f"fold{fold}"
        else:
            out = Path(tempfile.mkdtemp(prefix=f"laser-ci-cv-fold{fold}-"))
        if self.reuse and (out / CONFIG_NAME).is_file():
            self._check_kept(out)
        else:
            self._finetune(train, val, out, k=k, tabular=tabular, feats=feats)
        return self._load(out, val)

    def _load(self, folder: Path, val: Sequence[Example]) -> Predictor:
        """The model in ``folder`` decoded as the shipped one is, its band scales and
        shrinks fit on ``val`` first (and written to its ``laser.json``)."""
        from laser_ci.predictors.lm import LaserModel
        from laser_ci.training.bands import apply, calibrate, write_calibration

        model = LaserModel(folder, band_scale={}, shrink={}, threads=max(1, self.cfg.threads),
                           exact_last=True)
        cal = calibrate(model, val, shrink=True)
        write_calibration(folder, cal, examples=len(val))
        apply(model, cal)  # what LaserModel(folder) now reads from laser.json
        return model

    def _check_kept(self, folder: Path) -> None:
        """A kept fold model is reused only if it was trained with this recipe's prompt and
        codec settings (else its scores would be another recipe's)."""
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
        differ = [key for key in RECIPE_KEYS if kept.get(key) != ours[key]]
        if differ:
            raise CVError(f"{folder}: trained with other {', '.join(differ)} than this recipe "
                          f"({', '.join(f'{k}={kept.get(k)!r}' for k in differ)}); "
                          "fine-tune again (no --lm-reuse) or keep in another --lm-keep")

    def _finetune(self, train: Sequence[Example], val: Sequence[Example], out: Path, *,
                  k: int, tabular: Any = None, feats: dict[str, dict[str, float]] | None = None,
                  include_weights: bool = False) -> None:
        from laser_ci.training import finetune

        if tabular is None:
            from laser_ci.training.baselines import fit_tabular

            tabular = fit_tabular(train, val, feats)
        refs = fold_references(train, val, tabular, k=k, feats=feats)
        # the training loop writes its epoch lines to stdout: keep stdout for the report
        with contextlib.redirect_stdout(sys.stderr):
            finetune.finetune_examples(self.base, train, val, out, self.cfg, device=self.device,
                                       references=refs, reference_model=tabular,
                                       include_weights=include_weights)

    def ship(self, examples: Sequence[Example], out: Path, *, k: int = DEFAULT_FOLDS,
             feats: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
        """The recipe run on every repository, what a shipped model is: fine-tuned on every
        fold but fold 0, whose examples pick the best epoch (and fit the tabular reference's
        hyperparameters), as a fold's model is on its training folds; written to ``out``
        with its weights (``laser-ci finetune`` starts from them). Returns the training log."""
        from laser_ci.predictors.lm import CONFIG_NAME, REFERENCE_DIR

        folds = [fold_of(e.repo, k) for e in examples]
        train = [e for e, g in zip(examples, folds, strict=True) if g != 0]
        val = [e for e, g in zip(examples, folds, strict=True) if g == 0]
        with tempfile.TemporaryDirectory(prefix="laser-ci-ship-") as tmp:
            self._finetune(train, val, Path(tmp), k=k, feats=feats, include_weights=True)
            self._load(Path(tmp), val)  # the band scales, as a fold's
            config = json.loads((Path(tmp) / CONFIG_NAME).read_text(encoding="utf-8"))
            config["decoding"]["exact_last"] = True
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
                "decoding": {"exact_last": True, "calibrate_bands": True, "shrink": True},
                "note": ("fine-tuned per fold from a base pretrained on the unlabeled workflow "
                         "corpus (no labels; the corpus includes the held-out folds' "
                         "repositories' workflow files)")}


def fold_references(train: Sequence[Example], val: Sequence[Example], tabular: Any, *, k: int,
                    feats: dict[str, dict[str, float]] | None = None) -> dict[Any, float]:
    """A fold's training and val texts' references, each from a tabular model with
    ``tabular``'s hyperparameters fit without the text's own fold (of ``k``)."""
    from laser_ci.training.references import out_of_fold_references

    both = [*train, *val]
    return out_of_fold_references(both, [fold_of(e.repo, k) for e in both],
                                  tabular.info["params"], feats=feats)
