"""One labeled example (a serialized job or workflow and its runtime), and the split by
repository it belongs to."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from laser_ci.text.history import History

VAL_PERCENT = 20
KINDS = ("job", "workflow")
SPLITS = ("train", "val", "all")


@dataclass(frozen=True)
class Example:
    """One labeled text: a serialized job or workflow and its measured runtime in seconds."""

    text: str
    runtime_s: float
    repo: str
    workflow_path: str
    conclusion: str
    kind: str  # "job" | "workflow"
    commit_date: str
    run_id: str
    sha: str
    job_name: str | None = None  # the job's display name for kind "job"
    fallback: bool = False  # workflow could not be read: text serializes the raw file
    event: str | None = None
    history: History | None = None  # earlier runs (laser_ci.training.history); None: none
    text_warm: str | None = None  # the text with the history block; None: no earlier runs
    changed: bool | None = None  # workflow file changed since the latest earlier run
    created_at: str | None = None  # when the run began (collect writes it; orders runs)
    usage: dict[str, float] | None = None  # what the run used (laser_ci.text.targets)

    @property
    def split(self) -> str:
        return split_of(self.repo)

    @property
    def prior_text(self) -> str:
        """The input with history when there is any (``text_warm``), else ``text``."""
        return self.text_warm if self.text_warm is not None else self.text


def split_of(repo: str) -> str:
    """``"val"`` for about 20% of repositories (by SHA-256 of ``owner/name``), else ``"train"``."""
    h = int(hashlib.sha256(repo.encode("utf-8")).hexdigest()[:8], 16)
    return "val" if h % 100 < VAL_PERCENT else "train"


def in_split(repo: str, split: str) -> bool:
    if split == "all":
        return True
    if split not in ("train", "val"):
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    return split_of(repo) == split


def filter_split(examples: Iterable[Example], split: str) -> list[Example]:
    return [e for e in examples if in_split(e.repo, split)]


