"""The history regimes and subsets ``laser-ci eval`` scores examples in.

A regime is which text of an example a predictor reads: ``none`` (the cold-start text, as
for a repository seen for the first time) or ``prior`` (the text with the history block of
its earlier runs, :mod:`laser_ci.training.history`, where it has any). A subset is which
examples a row of the report is over: ``warm`` (with earlier runs), ``warm-changed`` (and the
workflow file changed since the latest of them) and ``cold`` (without).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from laser_ci.training.example import Example

REGIMES = ("none", "prior")
SUBSETS = ("warm", "warm-changed", "cold")


def example_text(e: Example, regime: str) -> str:
    """The input of example ``e`` in a history regime: ``none`` (cold start: ``text``) or
    ``prior`` (``text_warm`` when the example has earlier runs, else ``text``)."""
    if regime not in REGIMES:
        raise ValueError(f"unknown history regime {regime!r}; expected one of {REGIMES}")
    return e.text_warm if regime == "prior" and e.text_warm is not None else e.text


def subset_of(e: Example) -> str:
    """``warm-changed`` (earlier runs, and the workflow file changed since the latest of
    them), ``warm`` (earlier runs, same file) or ``cold`` (no earlier run). The ``warm``
    subset of ``laser-ci eval`` includes ``warm-changed``."""
    if e.history is None:
        return "cold"
    return "warm-changed" if e.changed else "warm"


def in_subset(e: Example, subset: str) -> bool:
    if subset == "warm":
        return e.history is not None
    if subset == "warm-changed":
        return e.history is not None and bool(e.changed)
    if subset == "cold":
        return e.history is None
    raise ValueError(f"unknown subset {subset!r}; expected one of {SUBSETS}")
