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


def predicts_runner_sizes(predictor: object) -> bool:
    """Whether ``predictor``'s runtime for a job re-serialized with another runner size is a
    prediction of how the job scales, so that the sizing advice may quote it.

    A predictor says so with a true ``runner_sizes`` attribute. None of the shipped ones
    does: of the labeled runs they learn from, 18 of 4,227 ran on a larger runner (28 of
    21,180 job instances; ``python benchmarks/runner_sizes.py``), so none has seen how a job
    scales with cores. With history their runtime on another size is the history's
    (``history-recent`` states the same time on every runner), and cold it comes from a
    label they never saw. The advice then states the break-even speed-up instead."""
    return bool(getattr(predictor, "runner_sizes", False))
