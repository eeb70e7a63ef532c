"""The closest evidence a repository has for a job without runs of its own (issue 49).

A job with earlier runs of its own is predicted from them (``own``: the predictor reads its
history block). A job without them is predicted from the closest evidence the repository
has, in this order:

- ``siblings``: other instances of the same job (a matrix, static or computed at run time)
  ran. Each sibling's typical time (the median of its successful runs,
  :func:`typical_runs`) is carried over to this instance by the difference of the cold
  predictions of the two (``ln cold(this) - ln cold(sibling)``, times :data:`ALPHA`): what
  differs between them (runner OS and size, the matrix values its steps read) as the cold
  model sees it. The median over the siblings is the prediction.
- ``workflow``: other jobs of the same workflow ran: the cold prediction shifted by the
  residuals of the repository's jobs that do what this one does, in this workflow or
  another, each weighted by how alike its text is (:func:`lent`, as for ``repository``);
  where none is alike enough (:data:`MIN_SAY`), by the workflow's residual, the median
  of ``ln t - ln cold`` over its other jobs' successful runs, shrunk by ``n / (n + 1)``
  (``n`` runs).
- ``repository``: other workflows of the repository ran: the cold prediction shifted by
  the residuals of their jobs' successful runs, each job's weighted by how alike its
  text is to this job's (:func:`lent`): a job that does what this one does lends its
  residual nearly whole, unlike ones next to nothing. Where the alike jobs have less say
  than the cold prediction (:data:`MIN_SAY`), the job stays cold: its band and advice are
  the cold guess's.
- none (``None``): the cold prediction as the predictor gives it.

Bands: the p10 and p90 are the p50 plus log-space offsets per source, quantiles of the
residuals of that source's predictions on data the method was not fit on
(:mod:`laser_ci.predictors.evidence_bands`, ``model/baselines/evidence_bands.json``,
written by ``benchmarks/new_jobs.py --write-bands``). Without calibrated offsets the band
keeps the cold prediction's width around the new p50.

Everything here works on numbers (ln seconds), not on texts: the estimate
(:mod:`laser_ci.estimate`), ``eval`` and ``benchmarks/new_jobs.py`` share it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from laser_ci.predictors.base import Runtime
from laser_ci.text.history import FAILED, MAX_RUNS, PastRuns

SOURCES = ("own", "siblings", "workflow", "repository")
ALPHA = 1.0  # the share of the cold model's difference between two instances carried over
SIM_POWER = 4.0  # how fast a job's say falls with how unlike it is (lent)
SIM_PRIOR = 0.01  # the cold prediction's own say, in the same units
MIN_SAY = 0.5  # the least say alike jobs need for the repository to count as evidence
COUNTED = 0.1  # evidence runs: of the lenders weighing at least this share of the heaviest
_NOT_WORDS = ("repo:", "file:", "workflow:", "history")  # lines words_of leaves out
_WORD = re.compile(r"[A-Za-z0-9_./@-]+")
MIN_LOG, MAX_LOG = 0.0, math.log(7 * 24 * 3600.0)


def typical_runs(past: PastRuns | None, window: int = MAX_RUNS) -> tuple[float, ...]:
    """The runs that say how long the job takes when it passes: the last ``window`` timed
    runs that succeeded; where no conclusion is known, the last ``window`` timed runs; where
    every known one failed, none (a failing job's time says when it failed)."""
    if past is None:
        return ()
    times = past.runtimes
    ends = past.conclusions if len(past.conclusions) == len(times) else ()
    if not ends or not any(ends):
        kept = [t for t in times if t and t > 0]
    else:
        kept = [t for t, c in zip(times, ends, strict=True)
                if t and t > 0 and c is not None and c not in FAILED]
    return tuple(float(t) for t in kept[-window:])


def shrunk_shift(residuals: Sequence[float]) -> float:
    """``n / (n + 1)`` times the median of ``residuals`` (0 without any): one run moves a
    cold prediction half-way, many runs all the way."""
    n = len(residuals)
    if not n:
        return 0.0
    return n / (n + 1) * float(np.median(np.asarray(residuals, dtype=float)))


@dataclass(frozen=True)
class Item:
    """One job for :func:`resolve`: where it is (``workflow``, ``job_id``), its cold
    prediction (ln seconds), its own typical runs (seconds, oldest first; empty: none) and
    whether it has runs of its own at all (``own``; default: it has typical ones). A job
    whose every run failed has runs of its own (the predictor reads them) but no typical
    ones to lend the others."""

    workflow: str
    job_id: str
    cold_log: float
    runs: tuple[float, ...] = ()
    own: bool | None = None
    traits: frozenset[str] = frozenset()  # what siblings are alike by (:func:`traits_of`)
    words: frozenset[str] = frozenset()  # what the job does (:func:`words_of` of its text)

    @property
    def has_own(self) -> bool:
        return bool(self.runs) if self.own is None else self.own

    @property
    def own_log(self) -> float | None:
        return math.log(float(np.median(self.runs))) if self.runs else None

    def residuals(self) -> list[float]:
        return [math.log(t) - self.cold_log for t in self.runs]


@dataclass(frozen=True)
class Resolved:
    """The evidence a job without runs of its own was predicted from: ``source`` (one of
    :data:`SOURCES` but ``own``; None: cold), the prediction (ln seconds), how many
    earlier runs it rests on and whether every one of them is of other workflows' jobs
    (``elsewhere``: always for ``repository``; for ``workflow`` where the only jobs alike
    enough to count are in other workflows)."""

    source: str | None
    log_p50: float
    runs: int
    elsewhere: bool = field(default=False, compare=False)  # says where, not what: not compared


def _alike(item: Item, others: Sequence[Item]) -> list[Item]:
    best = max(len(item.traits & o.traits) for o in others)
    return [o for o in others if len(item.traits & o.traits) == best]


def words_of(text: str) -> frozenset[str]:
    """What a serialized job (or workflow) does, as a set of words: its runner, container,
    steps, commands, actions and their inputs; not the lines that name the repository, the
    file, the workflow or the history (every job of a repository shares the first, every
    job of a workflow the next two)."""
    kept = "\n".join(line for line in text.splitlines() if not line.startswith(_NOT_WORDS))
    return frozenset(_WORD.findall(kept))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """The Jaccard similarity of two :func:`words_of` sets (0 when both are empty)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def lent(words: frozenset[str],
         others: Sequence[tuple[frozenset[str], Sequence[float]]]) -> tuple[float, float]:
    """How far a job's cold prediction moves (ln seconds) by the residuals of other jobs that
    ran (``others``: each one's :func:`words_of` and its residuals ``ln t - ln cold``), and
    the lenders' say in it: each job's median residual, weighted by
    ``similarity ** SIM_POWER * n / (n + 1)`` (``n`` its runs), the weights' sum plus
    :data:`SIM_PRIOR` the divisor; the say is the weights' sum over that divisor (0: the
    cold prediction alone, near 1: the lenders alone). A job that does what this one does
    (similarity near 1) lends its residual nearly whole; unlike ones (similarity 0.2: a
    weight of 0.0016) leave the cold prediction nearly where it was. Picked on the shared
    runs' training folds, a workflow new to its repository: three folds of five chose
    ``SIM_POWER`` 4 and ``SIM_PRIOR`` 0.01, two 6 and 0.003, a tie over all of them
    (``python benchmarks/new_jobs_variants.py --similar``; the repository's pooled
    residual, shrunk ``n / (n + 1)``, did not carry over there, docs/accuracy.md)."""
    return _lent(_weights(words, [(w, len(r)) for w, r in others]), [r for _w, r in others])


def _lent(weights: Sequence[float], residuals: Sequence[Sequence[float]]) -> tuple[float, float]:
    """:func:`lent` from the lenders' weights (:func:`_weights`) and residuals."""
    num = den = 0.0
    for w, r in zip(weights, residuals, strict=True):
        if w:
            num += w * float(np.median(np.asarray(r, dtype=float)))
            den += w
    return num / (den + SIM_PRIOR), den / (den + SIM_PRIOR)


def _weights(words: frozenset[str], others: Sequence[tuple[frozenset[str], int]]) -> list[float]:
    """Each lender's weight in :func:`lent` (``others``: its words and runs):
    ``similarity ** SIM_POWER * n / (n + 1)``, 0 without runs."""
    return [similarity(words, w) ** SIM_POWER * n / (n + 1) if n else 0.0 for w, n in others]


def counted_runs(words: frozenset[str], others: Sequence[tuple[frozenset[str], int]]) -> int:
    """The runs a :func:`lent` shift rests on (``others``: each lender's words and runs):
    those of the lenders weighing at least :data:`COUNTED` of the heaviest one (at the
    shipped power, at least 56% as alike), not every job of the repository's other
    workflows, most of which lend next to nothing."""
    return sum(n for (_w, n), counted in zip(others, _counted(_weights(words, others)),
                                              strict=True) if counted)


def _counted(weights: Sequence[float]) -> list[bool]:
    """Which lenders :func:`counted_runs` counts, by their :func:`_weights`."""
    top = max(weights, default=0.0)
    return [bool(top) and x >= COUNTED * top for x in weights]


def _from_alike(source: str, item: Item, lenders: Sequence[Item]) -> Resolved | None:
    """``item``'s cold prediction shifted by :func:`lent`, each of ``lenders`` a lender,
    with the runs of :func:`counted_runs` (``elsewhere``: whether every counted one is of
    another workflow); None where their say is under :data:`MIN_SAY`."""
    weights = _weights(item.words, [(o.words, len(o.runs)) for o in lenders])
    shift, say = _lent(weights, [o.residuals() for o in lenders])
    if say < MIN_SAY:
        return None
    counted = _counted(weights)
    return Resolved(source, item.cold_log + shift,
                    sum(len(o.runs) for o, c in zip(lenders, counted, strict=True) if c),
                    all(o.workflow != item.workflow
                        for o, c in zip(lenders, counted, strict=True) if c))


def _from_workflow(item: Item, same: Sequence[Item], every: Sequence[Item]) -> Resolved:
    """``item``, a new job of a workflow whose other jobs ran (``same``), from the jobs of
    the repository that ran (``every``, this workflow's and the others'): its cold
    prediction shifted by :func:`lent`, each of them a lender; where their say is under
    :data:`MIN_SAY`, by the pooled residuals of ``same``, shrunk (:func:`shrunk_shift`).
    (Picked on iree's earlier window, names held out: 0.715 against 1.138 for the pooled
    residual of the workflow alone, the rule before; 1.144 lending from the workflow's
    jobs alone; ``benchmarks/new_jobs_variants.py --similar-depth``; docs/accuracy.md.)"""
    alike = _from_alike("workflow", item, every)
    if alike is not None:
        return alike
    return Resolved("workflow", item.cold_log + shrunk_shift([r for o in same
                                                               for r in o.residuals()]),
                    sum(len(o.runs) for o in same))


def _from_repository(item: Item, others: Sequence[Item]) -> Resolved | None:
    """``item`` from the runs of the jobs of its repository's other workflows (source
    ``repository``): its cold prediction shifted by :func:`lent`, each of those jobs a
    lender, and the runs of :func:`counted_runs`; None where
    their say is under :data:`MIN_SAY` (no job there is alike enough: the item stays cold,
    with the cold band and its advice). (Each other workflow one lender instead, through
    its jobs most alike: better on iree's earlier window for the jobs of single-job
    workflows, 0.556 against 0.799 on 246 runs, worse for whole workflows held out, 0.980
    against 0.811 on 7,424; the repository's pooled residual, 2.078 and 1.038;
    docs/accuracy.md.) Many lenders add up: the jobs of a large repository together
    outweigh :data:`SIM_PRIOR` sooner than a few."""
    return _from_alike("repository", item, others)


def resolve(items: Sequence[Item], alpha: float | None = None) -> list[Resolved | None]:
    """For each item without runs of its own the closest evidence among the others
    (module doc); None for an item with runs of its own (the predictor's history path).
    ``alpha``: :data:`ALPHA` unless given."""
    alpha = ALPHA if alpha is None else alpha
    out: list[Resolved | None] = []
    for i, item in enumerate(items):
        if item.has_own:
            out.append(None)
            continue
        sibs = [o for j, o in enumerate(items) if j != i and o.runs
                and o.workflow == item.workflow and o.job_id == item.job_id]
        if sibs:  # the most alike: the most traits (matrix values, runner, name words) shared
            sibs = _alike(item, sibs)
            logs = [o.own_log + alpha * (item.cold_log - o.cold_log) for o in sibs]  # type: ignore[operator]
            out.append(Resolved("siblings", float(np.median(logs)),
                                sum(len(o.runs) for o in sibs)))
            continue
        same = [o for o in items if o.runs and o.workflow == item.workflow]
        if same:
            out.append(_from_workflow(item, same, [o for o in items if o.runs]))
            continue
        other = [o for o in items if o.runs and o.workflow != item.workflow]
        out.append((_from_repository(item, other) if other else None)
                   or Resolved(None, item.cold_log, 0))
    return out


def traits_of(name: str, matrix: object, runs_on: object) -> frozenset[str]:
    """What instances of one job are alike by: each matrix value (``key=value``), the
    runner (``runs-on=...``) and each word of the display name."""
    out = {f"name:{w}" for w in re.split(r"[^0-9A-Za-z.+_-]+", name) if w}
    if isinstance(matrix, dict):
        out |= {f"matrix:{k}={v!r}" for k, v in matrix.items()}
    out.add(f"runs-on={runs_on!r}")
    labels = runs_on if isinstance(runs_on, list) else [runs_on] if isinstance(runs_on, str) else []
    out |= {f"label:{x}" for x in labels if isinstance(x, str)}
    return frozenset(out)


def runtime_of(resolved: Resolved, cold: Runtime,
               offsets: dict[str, tuple[float, float]] | None) -> Runtime:
    """The runtime of a resolved job: its p50, and the band of its source's calibrated
    ``offsets`` (``{source: (lo, hi)}``, log space); without them the cold band's width
    around the new p50. A cold one (``source`` None) is the cold runtime itself."""
    if resolved.source is None:
        return cold
    mu = min(max(resolved.log_p50, MIN_LOG), MAX_LOG)
    if offsets and resolved.source in offsets:
        lo, hi = offsets[resolved.source]
    else:
        base = math.log(max(cold.p50, 1.0))
        lo = math.log(max(cold.p10, 1.0)) - base
        hi = math.log(max(cold.p90, 1.0)) - base
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    return Runtime(p10=math.exp(max(mu + lo, MIN_LOG)), p50=math.exp(mu),
                   p90=math.exp(min(mu + hi, MAX_LOG)))
