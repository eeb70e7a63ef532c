"""Folds by repository for cross-validation (``laser-ci eval --folds K``).

A repository's fold comes from the same hash as its split
(:func:`laser_ci.training.example.split_of`): ``h = int(sha256(owner/name)[:8], 16)``, then
``fold = (h % 100) * K // 100``. Every repository is in exactly one fold, whatever folder
it appears in, and with ``K = 5`` fold 0 is exactly the ``val`` split (``h % 100 < 20``), so
the five folds are ``val`` and four slices of ``train``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

DEFAULT_FOLDS = 5
MAX_FOLDS = 100  # h % 100 has 100 values: more folds would leave some empty


def repo_digest(repo: str) -> str:
    """SHA-256 of ``owner/name`` in hex: its first 8 digits place the repository."""
    return hashlib.sha256(repo.encode("utf-8")).hexdigest()


def fold_of(repo: str, k: int = DEFAULT_FOLDS) -> int:
    """The fold (0 .. ``k`` - 1) of a repository."""
    return fold_of_digest(repo_digest(repo), k)


def fold_of_digest(digest: str, k: int = DEFAULT_FOLDS) -> int:
    """The fold of the repository whose :func:`repo_digest` starts with ``digest`` (8 hex
    digits at least): where only the digest is kept (``benchmarks/scored.py``)."""
    if not 2 <= k <= MAX_FOLDS:
        raise ValueError(f"folds must be between 2 and {MAX_FOLDS}, not {k}")
    return (int(digest[:8], 16) % 100) * k // 100


def assign_folds(repos: Iterable[str], k: int = DEFAULT_FOLDS) -> dict[str, int]:
    """``{repo: fold}`` for every distinct repository."""
    return {r: fold_of(r, k) for r in dict.fromkeys(repos)}


def inner_fold(fold: int, k: int) -> int:
    """The training fold that plays ``val``'s part (hyperparameters, band calibration,
    the LM's best epoch) in the recipe run for held-out ``fold``: the next one."""
    return (fold + 1) % k




def fold_parts(items: Sequence[T], folds: Sequence[int], fold: int, k: int) -> tuple[list[T], list[T]]:
    """``(train, val)`` of the recipe run for held-out ``fold``: the items of every fold
    but ``fold`` and its :func:`inner_fold`, and those of the inner fold (``folds``: each
    item's fold of ``k``)."""
    inner = inner_fold(fold, k)
    train = [x for x, g in zip(items, folds, strict=True) if g not in (fold, inner)]
    val = [x for x, g in zip(items, folds, strict=True) if g == inner]
    return train, val
