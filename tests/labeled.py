"""A labeled text as the fine-tuning code reads it (``make_items``): the fields of
:class:`laser_ci.training.example.Example` it uses, for tests that train a tiny model."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Ex:
    text: str
    runtime_s: float
    kind: str = "job"
    conclusion: str = "success"
    repo: str = "o/r"
    text_warm: str | None = None
