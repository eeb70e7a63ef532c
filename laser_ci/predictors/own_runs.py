"""A job's own runs, used well (issue 49, part 5): its p50 from its full past, not from the
last three runs of the history block.

The figure the PR comment answers is "how long until it passes", so the runs that count are
the job's successful ones (:func:`passing_runs`). Its p50 is the median of the latest
:func:`window` of them: a window that grows with how many there are, so a quiet
repository's job (three runs) is read from all three and a busy one's from enough of them
that one slow afternoon does not move it. ``MIN_RUNS``, ``SHARE`` and ``MAX_WINDOW`` were
picked on the earlier days of the depth data and the shared runs' training folds
(``benchmarks/own_runs.py``, docs/accuracy.md). A job whose every known run failed has no
such figure: :func:`own_runtime` gives None and the predictor's own warm prediction stands.
A ``--model`` folder whose evidence bands have no ``own`` entries (:func:`has_bands`: a
language-model folder without ``evidence_bands.json``) keeps its predictor's warm
predictions throughout; a folder ``laser-ci finetune`` writes carries the shipped bands,
so its jobs with runs of their own are predicted from them as the default's are.

The band: the p50 times log-space offsets per history size (:func:`bucket`, keys
``own/<least runs>`` of ``model/baselines/evidence_bands.json``), quantiles of the rule's
residuals on data it was not picked on. Works on numbers only: the estimate, ``eval`` and
the benchmarks share it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from laser_ci.predictors.base import Runtime
from laser_ci.text.history import PastRuns

MIN_RUNS = 3  # the window is never shorter (unless the job has fewer runs)
SHARE = 0.5  # else the latest half of its successful runs
MAX_WINDOW: int | None = 100  # and never longer than this (None: no cap)
BUCKETS = (1, 3, 10, 50)  # the least successful runs of each band bucket


def window(n: int, min_runs: int = MIN_RUNS, share: float = SHARE,
           cap: int | None = MAX_WINDOW) -> int:
    """How many of a job's latest ``n`` successful runs its p50 is the median of: at least
    ``min_runs``, else ``share`` of them (rounded up), at most ``cap``; never more than
    ``n`` (0 for none)."""
    if n <= 0:
        return 0
    w = max(min_runs, math.ceil(share * n))
    if cap is not None:
        w = min(w, cap)
    return max(1, min(n, w))


def passing_runs(past: PastRuns | None) -> tuple[float, ...]:
    """The job's timed runs that succeeded, oldest first; where no run's end is known, all
    its timed runs; where every known end is a failure, none."""
    from laser_ci.predictors.evidence import typical_runs

    return typical_runs(past, window=10**9)


def own_log_p50(runs: tuple[float, ...], min_runs: int = MIN_RUNS, share: float = SHARE,
                cap: int | None = MAX_WINDOW) -> float | None:
    """ln of the median of the latest :func:`window` of ``runs`` (seconds, oldest first);
    None without any."""
    w = window(len(runs), min_runs, share, cap)
    if not w:
        return None
    return math.log(max(float(np.median(np.asarray(runs[-w:], dtype=float))), 1.0))


def bucket(n: int) -> str:
    """The band key of a job with ``n`` successful runs: ``own/<b>``, ``b`` the largest of
    :data:`BUCKETS` at most ``n``."""
    return f"own/{max((b for b in BUCKETS if b <= n), default=BUCKETS[0])}"


def offsets_for(n: int, offsets: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
    """The calibrated (lo, hi) of a job with ``n`` successful runs: its bucket's, else the
    pooled ``own``; None when ``offsets`` has neither."""
    return offsets.get(bucket(n)) or offsets.get("own")


def own_runtime(past: PastRuns | None, offsets: Mapping[str, tuple[float, float]],
                warm: Runtime | None) -> tuple[Runtime, int] | None:
    """The runtime of a job from its own runs, and how many successful runs it rests on;
    None where it has none (``warm``, the predictor's prediction, stands). The band is the
    calibrated one of its history size (``offsets``); without one, ``warm``'s width around
    the new p50 (None without ``warm`` either: ask again with the predictor's, which
    ``laser-ci estimate`` computes only for the jobs this leaves)."""
    runs = passing_runs(past)
    mu = own_log_p50(runs)
    if mu is None:
        return None
    band = offsets_for(len(runs), offsets)
    if band is None:
        if warm is None:
            return None
        base = math.log(max(warm.p50, 1.0))
        band = (math.log(max(warm.p10, 1.0)) - base, math.log(max(warm.p90, 1.0)) - base)
    lo, hi = min(band[0], 0.0), max(band[1], 0.0)
    return Runtime(p10=math.exp(mu + lo), p50=math.exp(mu), p90=math.exp(mu + hi)), len(runs)


def has_bands(offsets: Mapping[str, tuple[float, float]]) -> bool:
    """Whether ``offsets`` (a model folder's evidence bands) calibrate the own runs' band:
    a model folder without them keeps its predictor's warm predictions."""
    return any(k == "own" or k.startswith("own/") for k in offsets)
