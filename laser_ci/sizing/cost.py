"""cost"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from laser_ci.predictors.base import Runtime
from laser_ci.sizing.catalog import Catalog, load_catalog
from laser_ci.sizing.runners import NOT_PRICED, Runner, _visibility


def billable_minutes(seconds: float) -> int:
    """Minutes GitHub bills for one job: rounded up to the whole minute; >0 s bills >= 1."""
    if seconds <= 0 or math.isnan(seconds):
        return 0
    return max(1, math.ceil(seconds / 60.0 - 1e-9))


def _micro(usd: float) -> int:
    return round(usd * 1_000_000)


def _is_free(runner: Runner, vis: str) -> bool:
    return vis == "public" and runner.free_in_public


def job_cost(runtime_s: float, runner: Runner, *, visibility: str | None = None) -> float | None:
    """USD for one run: billable minutes x price; 0 for standard runners in public
    repositories (larger runners are never free); None when the runner's price is unknown."""
    vis, _ = _visibility(visibility)
    if runner.price_per_min is None:
        return None
    if _is_free(runner, vis):
        return 0.0
    return billable_minutes(runtime_s) * _micro(runner.price_per_min) / 1_000_000


def _affordable_minutes(current: Runner, alternative: Runner, runtime_s: float, vis: str) -> int | None:
    """Whole minutes the alternative may bill and still cost no more than the current runner.
    -1 means any duration (the alternative is free)."""
    cur_price = 0 if _is_free(current, vis) else _micro(current.price_per_min or 0)
    alt_price = 0 if _is_free(alternative, vis) else _micro(alternative.price_per_min or 0)
    if alt_price == 0:
        return -1
    return (billable_minutes(runtime_s) * cur_price) // alt_price


def break_even_speedup(
    current: Runner, alternative: Runner, runtime_s: float, *, visibility: str | None = None
) -> float | None:
    """How many times faster the alternative must run a job that takes ``runtime_s`` on
    ``current`` for it to cost no more, with GitHub's per-minute rounding on both sides.

    Below 1 means the alternative may be that much slower. 0.0: the alternative is free.
    None: it can never cost as little (even one billed minute costs more), or a price is
    unknown. Example: 600 s on Linux 2-core ($0.006) costs $0.060; a 4-core ($0.012) must
    bill at most 5 minutes, so it must be 600/300 = 2.0x faster."""
    if runtime_s <= 0 or current.price_per_min is None or alternative.price_per_min is None:
        return None
    vis, _ = _visibility(visibility)
    m = _affordable_minutes(current, alternative, runtime_s, vis)
    if m == -1:
        return 0.0
    if not m:
        return None
    return runtime_s / (60.0 * m)


@dataclass(frozen=True)
class JobCost:
    """The cost of one run of one job. ``cost_usd`` is at the predicted median; the range is
    at p10/p90; ``if_private_usd`` is what a run free in this public repository would bill
    in a private one."""

    runner: Runner
    billable_minutes: int
    cost_usd: float | None
    range_usd: tuple[float, float] | None
    billed: bool | None  # None when the price is unknown
    if_private_usd: float | None = None
    assumptions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Two keys for a job's JSON object: ``cost_usd`` (number or null) and ``cost``."""
        return {
            "cost_usd": _r(self.cost_usd),
            "cost": {
                "billable_minutes": self.billable_minutes,
                "range_usd": [_r(x) for x in self.range_usd] if self.range_usd else None,
                "billed": self.billed,
                "if_private_usd": _r(self.if_private_usd),
                "assumptions": list(self.assumptions),
            },
        }


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _runs(x: float | None) -> float | int | None:
    """Runs per month as the projection used them: 100 (not 100.0), 2.5 (not 2), 30.44."""
    if x is None:
        return None
    r = round(x, 2)
    return int(r) if r == int(r) else r


def cost_job(runtime: Runtime, runner: Runner, *, visibility: str | None = None) -> JobCost:
    """Cost of one run at the predicted p50 (and p10-p90), with the assumptions behind it."""
    vis, assumed = _visibility(visibility)
    minutes = billable_minutes(runtime.p50)
    notes: list[str] = []
    if assumed:
        notes.append("assumes a private repository (visibility not given)")
    if runner.price_per_min is None:
        notes.append(runner.reason if runner.reason and runner.reason.startswith(NOT_PRICED)
                     else f"no price: {runner.reason}" if runner.reason
                     else "no price: unknown runner")
        return JobCost(runner, minutes, None, None, None, None, tuple(notes))
    cost = job_cost(runtime.p50, runner, visibility=vis) or 0.0
    lo = job_cost(runtime.p10, runner, visibility=vis) or 0.0
    hi = job_cost(runtime.p90, runner, visibility=vis) or 0.0
    if_private = None
    if _is_free(runner, vis):
        if_private = job_cost(runtime.p50, runner, visibility="private")
        notes.append(
            "standard runners are free in public repositories; `if_private_usd` prices the "
            "same minutes at the private rate (private machines are smaller, so runs would "
            "likely take longer)"
        )
    elif runner.kind == "larger" and vis == "public":
        notes.append("larger runners are billed in public repositories too")
    if runner.kind == "self-hosted":
        notes.append(f"self-hosted minutes priced at ${runner.price_per_min:g}/min (configurable)")
    elif runner.kind in ("github-hosted", "larger") and not _is_free(runner, vis):
        notes.append(
            f"{minutes} min (p50 rounded up to whole minutes) x ${runner.price_per_min:g}/min "
            f"list price ({runner.sku}); included minutes of your plan are not subtracted"
        )
    if runner.guessed and runner.reason:
        notes.append(runner.reason)
    billed = not _is_free(runner, vis) and runner.price_per_min > 0
    return JobCost(runner, minutes, cost, (lo, hi), billed, if_private, tuple(notes))


@dataclass(frozen=True)
class MonthlyRuns:
    """A rough number of workflow runs per month and how it was obtained."""

    runs: float
    basis: str
    lower_bound: bool = False


@dataclass(frozen=True)
class Totals:
    """Sums over the jobs of a workflow (or a PR). ``cost_usd`` excludes unpriced jobs; it
    (and ``range_usd``) is None when there are jobs and none of them has a price: unknown,
    not $0."""

    jobs: int
    priced_jobs: int
    billable_minutes: int
    cost_usd: float | None
    range_usd: tuple[float, float] | None
    if_private_usd: float | None
    runs_per_month: float | None = None
    runs_basis: str | None = None
    monthly_cost_usd: float | None = None
    assumptions: tuple[str, ...] = ()
    runs_lower_bound: bool = False  # the runs (and the monthly cost) leave some runs out

    @property
    def unknown_jobs(self) -> int:
        return self.jobs - self.priced_jobs

    def to_json(self) -> dict[str, Any]:
        """Two keys for a workflow's (or PR's) JSON object: ``cost_usd`` and ``cost``."""
        return {
            "cost_usd": _r(self.cost_usd),
            "cost": {
                "jobs": self.jobs,
                "priced_jobs": self.priced_jobs,
                "unknown_jobs": self.unknown_jobs,
                "billable_minutes": self.billable_minutes,
                "range_usd": [_r(x) for x in self.range_usd] if self.range_usd else None,
                "if_private_usd": _r(self.if_private_usd),
                "runs_per_month": _runs(self.runs_per_month),
                "runs_per_month_basis": self.runs_basis,
                "runs_per_month_lower_bound": self.runs_lower_bound,
                "monthly_cost_usd": _r(self.monthly_cost_usd),
                "assumptions": list(self.assumptions),
            },
        }


MAX_RATE = 1000.0  # USD per minute: no runner costs more (GitHub's dearest, ~0.5); above, a typo
MAX_RUNS_PER_MONTH = 1e7  # a run every quarter second

_RANGE_NOTE = ("the range adds up per-job p10 and p90 costs, so it is wider than the likely "
               "range of the total")
_UNKNOWN_NOTE = re.compile(r"\d+ job\(s\) on unknown runners are not counted")


def _count_notes(jobs: int, priced: int) -> list[str]:
    """The notes that follow from how many jobs there are and how many have a price: said
    once with the numbers of the whole (a sum of workflows says its total once)."""
    notes = []
    if priced < jobs:
        notes.append(f"{jobs - priced} job(s) on unknown runners are not counted")
    if priced > 1:
        notes.append(_RANGE_NOTE)
    return notes


def summarize(costs: Iterable[JobCost], *, runs: MonthlyRuns | float | None = None) -> Totals:
    """Totals for one workflow run; with ``runs`` (per month) a monthly projection."""
    costs = list(costs)
    priced = [c for c in costs if c.cost_usd is not None]
    total = sum(_micro(c.cost_usd or 0) for c in priced) / 1e6
    lo = sum(_micro(c.range_usd[0]) for c in priced if c.range_usd) / 1e6
    hi = sum(_micro(c.range_usd[1]) for c in priced if c.range_usd) / 1e6
    frees = [c for c in priced if c.if_private_usd is not None]
    if_private = None
    if frees:
        if_private = (
            sum(_micro(c.if_private_usd or 0) for c in frees)
            + sum(_micro(c.cost_usd or 0) for c in priced if c.if_private_usd is None)
        ) / 1e6
    notes = _count_notes(len(costs), len(priced))
    if isinstance(runs, (int, float)):
        runs = MonthlyRuns(float(runs), f"given: {runs:g} runs per month")
    unknown = bool(costs) and not priced  # no price for any job: unknown, not $0
    monthly = None
    if runs is not None and not unknown:
        monthly = round(total * runs.runs, 6)
        notes.append(f"monthly projection: cost per run x {_runs(runs.runs):,} runs per month; "
                     f"{runs.basis}")
    return Totals(
        jobs=len(costs),
        priced_jobs=len(priced),
        billable_minutes=sum(c.billable_minutes for c in priced),
        cost_usd=None if unknown else total,
        range_usd=None if unknown else (lo, hi),
        if_private_usd=if_private,
        runs_per_month=None if runs is None else runs.runs,
        runs_basis=None if runs is None else runs.basis,
        runs_lower_bound=runs is not None and runs.lower_bound,
        monthly_cost_usd=monthly,
        assumptions=tuple(notes),
    )


def combine(totals: Iterable[Totals]) -> Totals:
    """Totals over several workflows (a PR): sums; monthly only where every part has one;
    the runs per month (and their basis) where every part has the same (``--runs-per-month``).
    The notes on how many jobs have no price (and on the range) are said once, for the sum."""
    ts = list(totals)
    jobs, priced = sum(t.jobs for t in ts), sum(t.priced_jobs for t in ts)
    rest = [a for t in ts for a in t.assumptions
            if a != _RANGE_NOTE and not _UNKNOWN_NOTE.fullmatch(a)]
    monthly = [t.monthly_cost_usd for t in ts]
    runs = {(t.runs_per_month, t.runs_basis) for t in ts}
    same_runs = runs.pop() if len(runs) == 1 else (None, None)
    known = [t for t in ts if t.cost_usd is not None and t.range_usd is not None]
    privs = [t.if_private_usd if t.if_private_usd is not None else t.cost_usd or 0.0
             for t in known]
    unknown = not known and any(t.jobs for t in ts)  # no price for any job
    return Totals(
        jobs=jobs,
        priced_jobs=priced,
        billable_minutes=sum(t.billable_minutes for t in ts),
        cost_usd=None if unknown else round(sum(t.cost_usd or 0.0 for t in known), 6),
        range_usd=None if unknown else (round(sum(t.range_usd[0] for t in known if t.range_usd), 6),
                                        round(sum(t.range_usd[1] for t in known if t.range_usd), 6)),
        if_private_usd=(round(sum(privs), 6) if any(t.if_private_usd is not None for t in ts) else None),
        runs_per_month=same_runs[0],
        runs_basis=same_runs[1],
        runs_lower_bound=any(t.runs_lower_bound for t in ts if t.monthly_cost_usd is not None),
        monthly_cost_usd=(
            round(sum(m for m in monthly if m is not None), 6)
            if ts and all(m is not None for m in monthly)
            else None
        ),
        assumptions=tuple(dict.fromkeys([*_count_notes(jobs, priced), *rest])),
    )


def cost_assumptions(
    visibility: str | None = None, self_hosted_rate: float = 0.0, catalog: Catalog | None = None
) -> list[str]:
    """The assumptions behind every cost figure, for a folded "assumptions" section."""
    cat = catalog or load_catalog()
    vis, assumed = _visibility(visibility)
    out = [
        f"Prices: GitHub list prices effective {cat.prices_effective} (runner catalog as of "
        f"{cat.as_of}); each job is rounded up to whole minutes, at least 1.",
        "Costs are at the predicted median (p50) runtime; ranges at p10-p90.",
        "Included minutes of your plan (2,000-50,000 per month) are not subtracted; larger "
        "runners never use them.",
        (f"Self-hosted minutes are priced at ${self_hosted_rate:g}/min (given)."
         if self_hosted_rate else "Runners GitHub does not sell (self-hosted, third-party "
         "pools such as Actions Runner Controller, GARM or Depot, labels GitHub does not "
         "document) are not priced unless their prices are given (--runner-prices)."),
        "Larger Linux/Windows runners are named by your organization; sizes and prices read "
        "from names like `ubuntu-latest-8-cores` are guesses (marked ~).",
    ]
    if assumed:
        out.insert(
            0,
            "Repository visibility not given: costed as private (standard runners "
            "would be free in a public repository).",
        )
    elif vis == "public":
        out.insert(
            0,
            "Public repository: standard GitHub-hosted runners are free and sized "
            "4 vCPU / 16 GB (Linux, Windows).",
        )
    return out




def load_runner_prices(path: str | os.PathLike[str]) -> dict[str, float]:
    """Prices of runners GitHub does not sell, from a JSON or YAML file mapping each runner
    label to USD per minute (``{"electron-arc-linux-amd64-32core": 0.05}``); a line naming
    the file and what is wrong (ValueError) when it is not that."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"runner prices {path}: {exc.strerror or exc}") from exc
    return parse_runner_prices(raw, str(path))


def parse_runner_prices(raw: str | bytes, path: str) -> dict[str, float]:
    """:func:`load_runner_prices` of a file's text; ``path`` names it in errors."""
    from laser_ci.workflows.yamlload import load_yaml

    loaded = load_yaml(raw)  # YAML 1.2 reads JSON as well
    if loaded.error:
        where = f"{path}:{loaded.error_line}" if loaded.error_line else str(path)
        raise ValueError(f"runner prices {where}: {loaded.error}")
    data = loaded.data
    if not isinstance(data, dict):
        raise ValueError(f"runner prices {path}: expected a mapping of runner label to USD "
                         "per minute")
    out: dict[str, float] = {}
    for label, price in data.items():
        if isinstance(price, bool) or not isinstance(price, int | float) \
                or not math.isfinite(price) or not 0 <= price <= MAX_RATE:
            line = data.line_of(label) if hasattr(data, "line_of") else None
            where = f"{path}:{line}" if line else str(path)
            raise ValueError(f"runner prices {where}: `{label}`: the price must be a number "
                             f"of USD per minute, 0 to {MAX_RATE:g}, not {price!r}")
        out[str(label).strip().lower()] = float(price)
    return out
