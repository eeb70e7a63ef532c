"""monthly runs"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from laser_ci.sizing.cost import MonthlyRuns

DAYS_PER_MONTH = 30.44
MIN_INTERVAL_MINUTES = 5  # GitHub: "the shortest interval you can run scheduled workflows"


_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DOWS = {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}


def _cron_field(text: str, lo: int, hi: int, names: Mapping[str, int] | None = None) -> set[int]:
    values: set[int] = set()
    for part in text.lower().split(","):
        step, stepped = 1, "/" in part
        if stepped:
            part, s = part.split("/", 1)
            step = int(s)
            if step < 1:
                raise ValueError("bad step")
        if part in ("*", ""):
            a, b = lo, hi
        elif "-" in part:
            x, y = part.split("-", 1)
            a, b = _cron_value(x, names), _cron_value(y, names)
        else:  # ``5/15`` is 5, 20, 35, 50 (and ``5/1`` 5 to the end), as in cron
            a = _cron_value(part, names)
            b = hi if stepped else a
        if a < lo or b > hi or a > b:
            raise ValueError("out of range")
        values.update(range(a, b + 1, step))
    return values


def _cron_value(text: str, names: Mapping[str, int] | None) -> int:
    if names and text[:3] in names:
        return names[text[:3]]
    return int(text)


def cron_runs_per_month(cron: str) -> float | None:
    """Average runs per month of a 5-field cron schedule (None when it cannot be parsed)."""
    fields = cron.split()
    if len(fields) != 5:
        return None
    try:
        minutes = _cron_field(fields[0], 0, 59)
        hours = _cron_field(fields[1], 0, 23)
        dom = _cron_field(fields[2], 1, 31)
        months = _cron_field(fields[3], 1, 12, _MONTHS)
        dow = {d % 7 for d in _cron_field(fields[4], 0, 7, _DOWS)}
    except ValueError:
        return None
    share = {29: 11.25 / 12, 30: 11 / 12, 31: 7 / 12}  # share of months that have the day
    dom_days = DAYS_PER_MONTH if len(dom) == 31 else sum(share.get(d, 1.0) for d in dom)
    dow_days = len(dow) * DAYS_PER_MONTH / 7
    dom_star, dow_star = fields[2].startswith("*"), fields[4].startswith("*")
    if dom_star or dow_star:
        # cron's rule: when either day field starts with `*`, a day must match both. A bare
        # `*` matches every day, so the other field counts alone; `*/2` still halves.
        days = dom_days * len(dow) / 7
    else:  # both restricted: cron runs when either matches
        days = min(DAYS_PER_MONTH, dom_days + dow_days - dom_days * len(dow) / 7)
    return _per_hour(minutes) * len(hours) * days * len(months) / 12


def _per_hour(minutes: set[int]) -> int:
    """Runs an hour of these minutes, as GitHub runs a schedule at most once every 5 minutes:
    each minute at least 5 after the last one run, round the hour (``* * * * *``: 12 an
    hour, not 60; ``0-4 * * * *``: 1, not 5)."""
    kept: list[int] = []
    for m in sorted(minutes):
        if not kept or m - kept[-1] >= MIN_INTERVAL_MINUTES:
            kept.append(m)
    if len(kept) > 1 and kept[0] + 60 - kept[-1] < MIN_INTERVAL_MINUTES:
        kept.pop()  # too close to the next hour's first run
    return len(kept)


def _more_often_than_github_runs(cron: str) -> bool:
    fields = cron.split()
    try:
        minutes = _cron_field(fields[0], 0, 59)
    except (ValueError, IndexError):
        return False
    return _per_hour(minutes) < len(minutes)


def monthly_runs_from_triggers(triggers: Sequence[str], on: Any) -> MonthlyRuns | None:
    """A rough count of runs per month from ``on:``. Only ``schedule`` can be counted from
    the file; push / pull_request runs depend on activity (see
    :func:`monthly_runs_from_history`), so with those the count is a lower bound."""
    crons: list[str] = []
    if isinstance(on, dict):
        sched = on.get("schedule")
        for item in sched if isinstance(sched, list) else []:
            if isinstance(item, dict) and isinstance(item.get("cron"), str):
                crons.append(item["cron"])
    if not crons:
        return None
    per = [cron_runs_per_month(c) for c in crons]
    known = [(c, n) for c, n in zip(crons, per, strict=True) if n is not None]
    if not known:
        return None
    runs = sum(n for _, n in known)
    others = sorted({t for t in triggers if t != "schedule"})
    basis = "schedule " + ", ".join(f"`{c}` ~{n:.0f}/month" for c, n in known)
    fast = [c for c, _ in known if _more_often_than_github_runs(c)]
    if fast:
        basis += (f"; {', '.join(f'`{c}`' for c in fast)} counted at most one run every "
                  f"{MIN_INTERVAL_MINUTES} minutes, GitHub's shortest schedule interval")
    basis += "; GitHub may delay or skip scheduled runs under load"
    if len(known) < len(crons):
        basis += f"; {len(crons) - len(known)} cron expression(s) not understood"
    if others:
        basis += f"; runs from {', '.join(others)} not counted (they depend on activity)"
    return MonthlyRuns(runs, basis, lower_bound=bool(others) or len(known) < len(crons))


def monthly_runs_from_history(run_count: int, span_days: float) -> MonthlyRuns | None:
    """Runs per month extrapolated from collected history: ``run_count`` runs over
    ``span_days`` days."""
    if run_count <= 0 or span_days <= 0:
        return None
    runs = run_count * DAYS_PER_MONTH / span_days
    return MonthlyRuns(runs, f"{run_count} runs in {span_days:g} days of collected history")


def estimate_monthly_runs(
    triggers: Sequence[str],
    on: Any,
    *,
    given: float | None = None,
    history: tuple[int, float] | None = None,
) -> MonthlyRuns | None:
    """Runs per month for a workflow: ``given`` (``--runs-per-month``) if set, else collected
    ``history`` as ``(run_count, span_days)``, else the schedule in ``on`` (a lower bound when
    other triggers exist); None when none of these says anything."""
    if given is not None:
        return MonthlyRuns(float(given), f"given: {given:g} runs per month")
    if history is not None:
        from_history = monthly_runs_from_history(*history)
        if from_history is not None:
            return from_history
    return monthly_runs_from_triggers(triggers, on)


