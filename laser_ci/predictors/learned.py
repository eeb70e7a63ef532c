"""What a learned model folder says about itself: which repository's runs it learned from.

``laser-ci finetune --data HISTORY --base MODEL --out DIR`` writes a language-model folder
(:mod:`laser_ci.predictors.lm`) whose ``laser.json`` has a top-level ``learned`` object::

    "learned": {
      "repository": "owner/name",           # the repository whose history it learned
      "job_runs": 20021, "runs": 1339,        # job runs / workflow runs trained on
      "first": "2026-01-02T03:04:05Z",        # the commit dates trained on
      "last": "2026-01-12T00:00:00Z",
      "calibrated_on": {"job_runs": 3000, "first": "...", "last": "..."},  # held back
      "created": "2026-12-07T15:00:00Z",
      "base": "<sha256 of the base model.onnx>",
      "minutes": 18.5
    }

:func:`learned_info` reads it: ``None`` for a folder without one (the shipped model, a
model trained across repositories), a :class:`LearnedFileError` naming the file for a block
that is there but malformed. ``repository``, ``job_runs`` and ``last`` are required (they
are what a report says); the others are checked when present.

:func:`model_json` is the ``model`` object of an estimate result (``{"shipped": true}``, or
the folder and its ``learned`` block), :func:`describe` its one line of words, and
:func:`other_repository` the one-line warning when a model learned one repository's runs
predicts another's jobs.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from laser_ci.predictors.lm import CONFIG_NAME, ModelFileError

REPOSITORY = re.compile(r"[\w.-]+/[\w.-]+")


class LearnedFileError(ModelFileError):
    """A ``learned`` block that is there but cannot be read (one line, naming the file)."""


@dataclass(frozen=True)
class Calibration:
    """The latest runs held back from training, on which the model was calibrated."""

    job_runs: int
    first: str | None = None
    last: str | None = None


@dataclass(frozen=True)
class LearnedInfo:
    """The ``learned`` block of a model folder's ``laser.json``."""

    repository: str
    job_runs: int
    last: str
    runs: int | None = None
    first: str | None = None
    calibrated_on: Calibration | None = None
    created: str | None = None
    base: str | None = None
    minutes: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def last_day(self) -> str:
        """``2026-01-12``: the date of the newest commit it learned from."""
        return _time(self.last, "last").date().isoformat()


def learned_info(model_dir: str | os.PathLike[str]) -> LearnedInfo | None:
    """The ``learned`` block of ``model_dir/laser.json``; None when the folder has no
    ``laser.json`` or it has no ``learned`` key. A ``laser.json`` that cannot be read, or a
    malformed block, raises :class:`LearnedFileError` naming the file."""
    path = Path(model_dir) / CONFIG_NAME
    if not path.is_file():
        return None
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LearnedFileError(f"{path}: cannot read model config: {e}") from e
    if not isinstance(config, dict) or "learned" not in config:
        return None
    try:
        return _parse(config["learned"])
    except (TypeError, ValueError) as e:
        raise LearnedFileError(f"{path}: learned: {e}") from e


def _parse(block: Any) -> LearnedInfo:
    if not isinstance(block, dict):
        raise TypeError(f"not an object: {block!r}")
    repository = block.get("repository")
    if not isinstance(repository, str) or not REPOSITORY.fullmatch(repository):
        raise ValueError(f"repository {repository!r}: expected OWNER/NAME")
    calibrated = block.get("calibrated_on")
    if calibrated is not None:
        if not isinstance(calibrated, dict):
            raise TypeError(f"calibrated_on is not an object: {calibrated!r}")
        calibrated = Calibration(
            job_runs=_count(calibrated.get("job_runs"), "calibrated_on.job_runs"),
            first=_opt_time(calibrated.get("first"), "calibrated_on.first"),
            last=_opt_time(calibrated.get("last"), "calibrated_on.last"))
    base = block.get("base")
    if base is not None and not (isinstance(base, str) and re.fullmatch(r"[0-9a-f]{64}", base)):
        raise ValueError(f"base {base!r}: expected the sha256 of the base model.onnx")
    minutes = block.get("minutes")
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, (int, float))
                                or not 0 <= minutes < float("inf")):
        raise ValueError(f"minutes {minutes!r}: expected a number, 0 or more")
    return LearnedInfo(
        repository=repository,
        job_runs=_count(block.get("job_runs"), "job_runs"),
        last=_required_time(block.get("last"), "last"),
        runs=None if block.get("runs") is None else _count(block["runs"], "runs"),
        first=_opt_time(block.get("first"), "first"),
        calibrated_on=calibrated,
        created=_opt_time(block.get("created"), "created"),
        base=base,
        minutes=None if minutes is None else float(minutes),
    )


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} {value!r}: expected a whole number, 0 or more")
    return value


def _time(value: Any, name: str) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"{name} {value!r}: expected an ISO 8601 time")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{name} {value!r}: expected an ISO 8601 time") from None


def _required_time(value: Any, name: str) -> str:
    _time(value, name)
    return str(value)


def _opt_time(value: Any, name: str) -> str | None:
    if value is None:
        return None
    _time(value, name)
    return str(value)


# --- what a report says -------------------------------------------------------------------


def describe(info: LearnedInfo) -> str:
    """``learned from owner/name's 20,021 job runs up to 2026-01-12``."""
    runs = f"{info.job_runs:,} job run{'' if info.job_runs == 1 else 's'}"
    return f"learned from {info.repository}'s {runs} up to {info.last_day}"


def model_json(model_dir: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The ``model`` object of an estimate result: ``{"shipped": true}`` for the model
    shipped with laser-ci (``model_dir`` None), else ``{"shipped": false, "folder": ...,
    "learned": {...} | null}``. Raises :class:`LearnedFileError` for a malformed block."""
    if model_dir is None:
        return {"shipped": True}
    info = learned_info(model_dir)
    return {"shipped": False, "folder": str(model_dir),
            "learned": None if info is None else info.to_json()}


def info_of(model: Any) -> LearnedInfo | None:
    """The :class:`LearnedInfo` of a ``model`` object :func:`model_json` wrote (None for a
    model that learned no repository, or an object that is not one)."""
    block = model.get("learned") if isinstance(model, dict) else None
    try:
        return _parse(block) if block is not None else None
    except (TypeError, ValueError):
        return None


def model_words(model: Any) -> str | None:
    """One line saying which model predicted, from a result's ``model`` object; None for the
    shipped model (the reports say nothing then)."""
    if not isinstance(model, dict) or model.get("shipped", True):
        return None
    info = info_of(model)
    return describe(info) if info is not None else f"from the folder {model.get('folder')}"


def other_repository(info: LearnedInfo | None, repository: str | None) -> str | None:
    """The warning when ``info`` learned another repository than ``repository`` (the one
    estimated; compared case-insensitively, as GitHub does); None when they match or
    either is unknown."""
    if info is None or not repository or info.repository.lower() == repository.lower():
        return None
    return (f"the model learned {info.repository}'s runs, and the workflows are "
            f"{repository}'s: its corrections are for {info.repository}'s jobs")


def check(model_dir: str | os.PathLike[str], repository: str) -> str:
    """One Markdown line for the learning workflow's job summary, once ``model_dir`` is
    known to have learned ``repository``; a :class:`LearnedFileError` otherwise (nothing
    else is saved to the cache: the Action would not use it)."""
    info = learned_info(model_dir)
    if info is None:
        raise LearnedFileError(f"{Path(model_dir) / CONFIG_NAME}: no learned block")
    warning = other_repository(info, repository)
    if warning:
        raise LearnedFileError(f"{Path(model_dir) / CONFIG_NAME}: {warning}")
    took = f" in {info.minutes:.1f} minutes" if info.minutes is not None else ""
    return f"laser-ci {describe(info)}{took}.\n"


if __name__ == "__main__":  # python -m laser_ci.predictors.learned DIR OWNER/NAME (learn/action.yml)
    import sys

    try:
        sys.stdout.write(check(sys.argv[1], sys.argv[2]))
    except (IndexError, LearnedFileError) as exc:
        sys.exit(f"laser-ci: {exc if not isinstance(exc, IndexError) else 'usage: DIR OWNER/NAME'}")
