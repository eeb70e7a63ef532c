"""The predictor interface: serialized job text in, runtime distribution out.

Every predictor (baselines, the language model) implements :class:`Predictor`. The CLI,
the Action and ``laser-ci eval`` only ever talk to this interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Runtime:
    """A predicted runtime distribution in seconds: the median and the p10-p90 band."""

    p10: float
    p50: float
    p90: float

    def to_json(self) -> dict[str, float]:
        return {"p10": round(self.p10, 1), "p50": round(self.p50, 1), "p90": round(self.p90, 1)}


class Predictor(Protocol):
    """Anything that maps serialized texts (see :mod:`laser_ci.text.serialize`) to runtimes."""

    name: str

    def predict(self, texts: Sequence[str]) -> list[Runtime]: ...
