"""advice"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from laser_ci.predictors.base import Runtime
from laser_ci.sizing.catalog import Catalog, CatalogEntry, load_catalog
from laser_ci.sizing.cost import _affordable_minutes, _is_free, break_even_speedup, job_cost
from laser_ci.sizing.runners import Runner, _from_entry, _visibility
from laser_ci.workflows.expressions import string_condition

LONG_JOB_S = 600.0  # jobs at least this long (p50) get break-even advice for bigger runners
SHORT_JOB_S = 30.0  # jobs whose p90 is below this are "far below" the 1-minute billing unit
TIMEOUT_HEADROOM = 1.5  # suggested timeout = p90 x this, rounded up to 5 minutes
PredictOn = Callable[[str], "Runtime | None"]
SIZES_NOT_PREDICTED = (  # the estimate's assumption when no ``predict_on`` is given
    "Runtimes on other runner sizes are not predicted: the runs the predictor learned from "
    "are almost all on standard runners, so it cannot tell how a job scales with cores. "
    "The sizing advice gives the speed-up at which another size costs no more."
)


@dataclass(frozen=True)
class Needs:
    """What is known about a job's needs. ``docker``: it uses ``container:``, ``services:``
    or Docker commands, which rules out ``ubuntu-slim``."""

    cores: int | None = None
    ram_gb: float | None = None
    gpu: bool = False
    docker: bool = False


@dataclass(frozen=True)
class Advice:
    """One actionable suggestion. ``message`` is the headline; ``assumptions`` what it rests
    on (reports fold these); ``suggested`` machine-readable values (e.g. ``runs-on``)."""

    kind: str  # "timeout" | "runner" | "slim" | "merge" | "if"
    message: str
    suggested: dict[str, Any] = field(default_factory=dict)
    assumptions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "suggested": self.suggested,
            "assumptions": list(self.assumptions),
        }


def suggest_timeout_minutes(p90_s: float, cap: int | None = None) -> int:
    """``timeout-minutes`` from the predicted p90: p90 x 1.5, up to a multiple of 5, >= 5."""
    m = max(5, 5 * math.ceil(p90_s * TIMEOUT_HEADROOM / 300.0 - 1e-9))
    return min(m, cap) if cap else m


def _fmt_s(s: float) -> str:
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min"


def _usd(x: float) -> str:
    return f"${x:.3f}" if x < 10 else f"${x:,.2f}"


def _minutes_value(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def condition_advice(if_: Any) -> list[Advice]:
    """An ``if:`` that GitHub reads as a non-empty string, so true on every trigger
    (:func:`laser_ci.workflows.expressions.string_condition`; actionlint#272)."""
    why = string_condition(if_)
    if why is None:
        return []
    always = ("GitHub reads it as text, which is always true, so the job runs on every "
              "trigger.")
    fix = {"line break": "`if:` has a line break after its `${{ }}` (a `|` or `>` block "
                         f"keeps one): {always} Write `>-` or `|-`, or the condition on "
                         "one line.",
           "spaces": f"`if:` has spaces around its `${{ }}` inside quotes: {always} "
                     "Remove them.",
           "text": f"`if:` has text outside its `${{ }}`: {always} Put the whole "
                   "condition inside one `${{ }}`, or leave `${{ }}` out."}[why]
    return [Advice("if", fix, {}, ())]


def step_condition_advice(steps: tuple[str, ...]) -> list[Advice]:
    """Steps whose `if:` GitHub reads as text, so they run whenever the steps before them
    succeed: ``if: contains(${{ matrix.os }}, 'ubuntu')`` is ``format()`` of its parts."""
    if not steps:
        return []
    named = ", ".join(f"`{s}`" for s in steps[:3]) + (f" and {len(steps) - 3} more"
                                                       if len(steps) > 3 else "")
    return [Advice("if", f"The `if:` of {named} has a `${{{{ }}}}` with something around "
                   "it (other text, spaces, or the line break a `|` or `>` block keeps): "
                   "GitHub reads it as text, which is always true, so the step always runs "
                   "(and counts in this estimate). Put the whole condition inside one "
                   "`${{ }}` on its own, or leave `${{ }}` out.", {"steps": list(steps)}, ())]


def advise(
    runtime: Runtime | None,
    runner: Runner,
    timeout_minutes: Any,
    *,
    visibility: str | None = None,
    predict_on: PredictOn | None = None,
    needs: Needs | None = None,
    catalog: Catalog | None = None,
    evidence: str | None = "own",
) -> list[Advice]:
    """Timeout, runner-size and short-job advice for one job.

    ``predict_on(label)`` re-predicts the job as if ``runs-on`` were ``label`` (None if it
    cannot); it is called for at most four alternative labels. ``evidence``: what the
    prediction rests on (``history_source``: ``own``, ``siblings``, ``workflow``,
    ``repository``; None: a cold guess from the workflow file alone). The timeout advice
    reads the band calibrated for that evidence; from a cold guess, whose band is tens of
    times wide, it raises no alarm and suggests no value: it says it cannot tell yet."""
    cat = catalog or load_catalog()
    vis, assumed = _visibility(visibility)
    needs = needs or Needs()
    base: list[str] = ["assumes a private repository (visibility not given)"] if assumed else []
    if runner.retired:  # the job never gets a runner: nothing to time out, nothing to size
        return [_retired_advice(runtime, runner, vis, cat, base)]
    if evidence is None and runtime is not None:
        out = _cold_timeout_advice(runtime, runner, timeout_minutes, vis, cat, base)
    else:
        out = _timeout_advice(runtime, runner, timeout_minutes, vis, cat, base)
    if runtime is None or runner.kind not in ("github-hosted", "larger") or runner.os is None:
        return out
    out += _short_job_advice(runtime, runner, vis, predict_on, needs, cat, base)
    out += _needs_advice(runtime, runner, vis, needs, cat, base)
    out += _sizing_advice(runtime, runner, vis, predict_on, cat, base)
    return out


def _retired_advice(
    runtime: Runtime | None, runner: Runner, vis: str, cat: Catalog, base: list[str]
) -> Advice:
    """A label GitHub has removed: the job fails without running. Say so and name the label
    to use instead (and what a run would cost there)."""
    msg = (
        f"`{runner.label}` has been retired by GitHub: the job fails without running "
        "(not priced here)."
    )
    new = cat.by_label(runner.successor) if runner.successor else None
    if new is None:
        return Advice("runner", msg + " Move it to a current runner label.", {}, tuple(base))
    alt = _from_entry(new, runner.successor or new.label, vis)
    msg += f" Use `runs-on: {alt.label}`"
    notes = list(base)
    if runtime is not None:
        cost = job_cost(runtime.p50, alt, visibility=vis)
        if cost is not None:
            msg += f" ({'free in a public repository' if _is_free(alt, vis) else _usd(cost) + ' per run'})"
            notes.append("the cost there assumes the job takes as long as predicted here")
    return Advice("runner", msg + ".", {"runs-on": alt.label}, tuple(notes))


def _timeout_advice(
    runtime: Runtime | None,
    runner: Runner,
    timeout: Any,
    vis: str,
    cat: Catalog,
    base: list[str],
) -> list[Advice]:
    out: list[Advice] = []
    cap = runner.max_job_minutes or cat.default_timeout_minutes
    suggested = suggest_timeout_minutes(runtime.p90, cap) if runtime else None
    why: list[str] = []
    if runtime is not None:
        why = [
            f"suggested = predicted p90 ({_fmt_s(runtime.p90)}) x {TIMEOUT_HEADROOM:g}, rounded "
            "up to 5 minutes, at least 5; assumes the prediction is right about slow runs",
        ]
    if timeout is None:
        limit = min(cap, cat.default_timeout_minutes)
        if runtime is not None and suggested and cap > limit and runtime.p90 > limit * 60:
            # a self-hosted runner may run for days, but GitHub's default stops slow runs
            out.append(
                Advice(
                    "timeout",
                    f"No `timeout-minutes`: GitHub's default of {limit} min would cancel slow "
                    f"runs (predicted p90 {_fmt_s(runtime.p90)}). Suggest "
                    f"`timeout-minutes: {suggested}`.",
                    {"timeout-minutes": suggested},
                    tuple(base + why),
                )
            )
        elif limit <= (suggested or 0):
            pass  # the runner's own limit is already as tight as we would suggest
        else:
            whose = (
                f"the `{runner.label}` job limit"
                if limit < cat.default_timeout_minutes
                else "GitHub's default"
            )
            msg = f"No `timeout-minutes`: a hung run holds the runner for up to {limit} min ({whose})."
            worst = job_cost(limit * 60, runner, visibility=vis)
            if worst:
                msg += f" That is {_usd(worst)} per hung run at list price."
            if suggested:
                msg += f" Suggest `timeout-minutes: {suggested}`."
            sugg = {"timeout-minutes": suggested} if suggested else {}
            out.append(Advice("timeout", msg, sugg, tuple(base + why)))
        return out + _cap_advice(runtime, runner, cap, cat)
    t = _minutes_value(timeout)
    if t is None:
        return out + _cap_advice(runtime, runner, cap, cat)
    # below the p90, unless even the job limit is: the cap advice says so (a "suggested"
    # timeout at the limit would be no higher than this one)
    if runtime is not None and t * 60 < runtime.p90 and suggested is not None and suggested > t:
        if t * 60 < runtime.p50:
            share = "more than half of the runs"
        else:
            share = "more than 1 run in 10"
        out.append(
            Advice(
                "timeout",
                f"`timeout-minutes: {t:g}` is below the predicted "
                f"{'median' if t * 60 < runtime.p50 else 'p90'} "
                f"({_fmt_s(runtime.p50 if t * 60 < runtime.p50 else runtime.p90)}): {share} "
                f"would be cancelled, if the prediction is right. Suggest "
                f"`timeout-minutes: {suggested}`.",
                {"timeout-minutes": suggested},
                tuple(base + why),
            )
        )
    if runner.max_job_minutes is not None and t > cap:
        out.append(
            Advice(
                "timeout",
                f"`timeout-minutes: {t:g}` is above the {cap}-minute job limit of "
                f"`{runner.label}`: GitHub stops the job at {cap} min anyway.",
                {"timeout-minutes": min(cap, suggested or cap)},
            )
        )
    return out + _cap_advice(runtime, runner, cap, cat)


COLD_WHY = ("a cold guess from the workflow file alone (no earlier runs of this job, its "
            "matrix or its workflow, nor of a workflow of this repository alike to it): its "
            "p10-p90 band is tens of times wide")


def _cold_timeout_advice(runtime: Runtime, runner: Runner, timeout: Any, vis: str,
                         cat: Catalog, base: list[str]) -> list[Advice]:
    """The timeout advice of a cold guess. Where its p90 is within the timeout (the one set,
    else GitHub's default or the runner's limit) it is the usual advice (the suggested value
    from its calibrated band, p90 x 1.5: generous, as that band is wide). Where the p90 is
    past it, that is no alarm: "cannot tell yet", with no value to raise it to; a job
    without ``timeout-minutes`` still hears what a hung run costs (a fact, not a
    prediction)."""
    cap = runner.max_job_minutes or cat.default_timeout_minutes
    t = _minutes_value(timeout)
    limit = t if t is not None else min(cap, cat.default_timeout_minutes)
    if runtime.p90 <= min(limit, cap) * 60:
        return _timeout_advice(runtime, runner, timeout, vis, cat, base)
    return _timeout_advice(None, runner, timeout, vis, cat, base) + [Advice(
        "timeout",
        f"Cannot tell yet whether this job fits its {min(limit, cap):g}-minute limit: the "
        f"prediction (p90 {_fmt_s(runtime.p90)}) is a cold guess. Its first runs will "
        "tell, or the runs of a workflow alike to it (`--history`).",
        {}, (*base, COLD_WHY))]


def _cap_advice(runtime: Runtime | None, runner: Runner, cap: int, cat: Catalog) -> list[Advice]:
    """The predicted p90 is past the runner's job limit: no timeout can let slow runs finish.
    A short limit (``ubuntu-slim``) has a way out on a standard runner; GitHub-hosted runners'
    6 hours only a split job or a self-hosted runner (5 days)."""
    if runtime is None or runner.max_job_minutes is None or runtime.p90 <= cap * 60:
        return []
    head = (
        f"The predicted p90 ({_fmt_s(runtime.p90)}) exceeds the {cap}-minute job limit of "
        f"`{runner.label}`: slow runs would be stopped."
    )
    why = ("the prediction for this runner is taken at face value",)
    if cap < cat.default_timeout_minutes:
        std = cat.by_label("ubuntu-latest")
        label = std.label if std else "ubuntu-latest"
        return [Advice("timeout", f"{head} Consider `{label}`.", {"runs-on": label}, why)]
    if runner.kind == "self-hosted":
        return [Advice("timeout", f"{head} Consider splitting the job.", {}, why)]
    return [
        Advice(
            "timeout",
            f"{head} Consider splitting the job, or a self-hosted runner (jobs there may run "
            f"up to {cat.self_hosted_max_job_minutes // 1440} days).",
            {},
            why,
        )
    ]


def _predict(predict_on: PredictOn | None, label: str) -> Runtime | None:
    if predict_on is None:
        return None
    try:
        return predict_on(label)
    except Exception:  # a failed re-prediction only loses the extra detail
        return None


def _short_job_advice(
    runtime: Runtime,
    runner: Runner,
    vis: str,
    predict_on: PredictOn | None,
    needs: Needs,
    cat: Catalog,
    base: list[str],
) -> list[Advice]:
    if runtime.p90 >= SHORT_JOB_S or runner.sku == "linux_slim":
        return []
    free = _is_free(runner, vis)
    price = "free in a public repository" if free else f"{_usd(runner.price_per_min or 0)}"
    head = (
        f"Predicted to finish within {_fmt_s(runtime.p90)} (p90), far below the 1-minute "
        f"billing unit: each run bills a full minute on `{runner.label}` ({price})."
    )
    slim_entry = cat.by_label("ubuntu-slim")
    fits_slim = (
        slim_entry is not None
        and runner.os == "linux"
        and runner.arch == "x64"
        and not runner.gpu
        and not needs.docker
        and not needs.gpu
        and (needs.ram_gb is None or needs.ram_gb <= slim_entry.size(vis)[1])
        and (needs.cores is None or needs.cores <= slim_entry.size(vis)[0])
    )
    if not fits_slim or slim_entry is None:
        return [
            Advice(
                "merge",
                head + " Consider merging it into another job that runs on the same runner.",
                {},
                tuple(
                    base
                    + [
                        "merging saves the runner start-up and the rounding; it adds "
                        "the job's steps to the other job's critical path"
                    ]
                ),
            )
        ]
    slim = _from_entry(slim_entry, slim_entry.label, vis)
    notes = base + [
        f"`ubuntu-slim` is a {slim.cores}-vCPU, {slim.ram_gb:g} GB unprivileged container: no "
        "Docker, no nested containers, fewer preinstalled tools, jobs stopped after "
        f"{slim.max_job_minutes} min; laser-ci only checks `container:`, `services:` and "
        "`docker` in `run:` steps",
    ]
    suggested: dict[str, Any] = {"runs-on": slim.label}
    slim_rt = _predict(predict_on, slim.label)
    if slim_rt is not None:
        suggested["predicted_p90_s"] = round(slim_rt.p90, 1)
        notes.append(f"predicted on `ubuntu-slim`: p90 {_fmt_s(slim_rt.p90)}")
    else:
        notes.append("assumes the job stays about as short on 1 vCPU (not predicted)")
    if free:
        money = "Both are free in a public repository: the gain is a lighter machine, not money."
    else:
        slim_cost = job_cost(slim_rt.p50 if slim_rt else runtime.p50, slim, visibility=vis) or 0
        cur_cost = job_cost(runtime.p50, runner, visibility=vis) or 0
        suggested["saves_usd_per_run"] = round(cur_cost - slim_cost, 4)
        money = f"On `ubuntu-slim` a run would cost {_usd(slim_cost)} instead of {_usd(cur_cost)}."
    return [
        Advice(
            "slim",
            f"{head} Candidate for `runs-on: ubuntu-slim` or for merging into another job. {money}",
            suggested,
            tuple(notes),
        )
    ]


def _fits(e: CatalogEntry, vis: str, needs: Needs) -> bool:
    cores, ram = e.size(vis)
    return (
        (needs.cores is None or cores >= needs.cores)
        and (needs.ram_gb is None or ram >= needs.ram_gb)
        and (e.gpu or not needs.gpu)
        and not (needs.docker and e.container)
    )


def cheapest_fit(
    os: str,
    arch: str,
    needs: Needs,
    *,
    visibility: str | None = None,
    runtime_s: float | None = None,
    catalog: Catalog | None = None,
) -> Runner | None:
    """The cheapest catalog runner of this OS and architecture that meets ``needs`` (and whose
    job limit is above ``runtime_s``), by price per minute, which assumes the job takes about
    as long on each."""
    cat = catalog or load_catalog()
    vis, _ = _visibility(visibility)
    fits = [
        e
        for e in cat.entries
        if e.os == os
        and e.arch == arch
        and _fits(e, vis, needs)
        and (runtime_s is None or e.max_job_minutes * 60 > runtime_s)
    ]
    if not fits:
        return None

    def key(e: CatalogEntry) -> tuple[float, int]:
        free = vis == "public" and e.kind == "standard"
        return (0.0 if free else e.price_per_min, e.size(vis)[0])

    best = min(fits, key=key)
    return _from_entry(best, best.label, vis)


def _needs_advice(
    runtime: Runtime, runner: Runner, vis: str, needs: Needs, cat: Catalog, base: list[str]
) -> list[Advice]:
    if needs.docker and runner.container:  # ubuntu-slim: the job's Docker use cannot work
        std = cat.by_label("ubuntu-latest")
        label = std.label if std else "ubuntu-latest"
        return [
            Advice(
                "runner",
                f"`{runner.label}` runs the job in an unprivileged container without Docker: "
                f"its `container:`, `services:` or Docker commands fail there. Use `{label}`.",
                {"runs-on": label},
                tuple(base + ["Docker use read from `container:`, `services:` and `docker` in "
                              "`run:` steps"]),
            )
        ]
    if needs.cores is None and needs.ram_gb is None and not needs.gpu:
        return []
    if runner.os is None:
        return []
    best = cheapest_fit(
        runner.os, runner.arch or "x64", needs, visibility=vis, runtime_s=runtime.p90, catalog=cat
    )
    short = (
        (needs.ram_gb is not None and (runner.ram_gb or 0) < needs.ram_gb)
        or (needs.cores is not None and (runner.cores or 0) < needs.cores)
        or (needs.gpu and not runner.gpu)
    )
    want = ", ".join(
        x
        for x in (
            f"{needs.cores} cores" if needs.cores else "",
            f"{needs.ram_gb:g} GB RAM" if needs.ram_gb else "",
            "a GPU" if needs.gpu else "",
        )
        if x
    )
    have = f"{runner.cores} cores, {runner.ram_gb:g} GB" if runner.ram_gb else "unknown size"
    notes = tuple(
        base + ["compares list prices per minute; assumes the job takes about as long on either runner"]
    )
    if short:
        if best is None:
            return [
                Advice(
                    "runner",
                    f"The job needs {want}; `{runner.label}` has {have}, and "
                    "no GitHub-hosted runner of this OS fits.",
                    {},
                    notes,
                )
            ]
        return [
            Advice(
                "runner",
                f"The job needs {want}; `{runner.label}` has {have}. The cheapest runner that "
                f"fits is `{best.label}` ({best.cores} cores, {best.ram_gb:g} GB, "
                f"${best.price_per_min:g}/min).",
                {"runs-on": best.label, "sku": best.sku},
                notes,
            )
        ]
    if best is not None and best.sku != runner.sku:
        cur = 0.0 if _is_free(runner, vis) else (runner.price_per_min or 0)
        new = 0.0 if _is_free(best, vis) else (best.price_per_min or 0)
        if new < cur:
            return [
                Advice(
                    "runner",
                    f"`{best.label}` ({best.cores} cores, {best.ram_gb:g} GB) also fits the "
                    f"job's needs ({want}) at ${new:g}/min instead of ${cur:g}/min.",
                    {"runs-on": best.label, "sku": best.sku},
                    notes,
                )
            ]
    return []


def alternatives(
    runner: Runner, *, visibility: str | None = None, catalog: Catalog | None = None
) -> list[Runner]:
    """Runners worth comparing for sizing: the next two bigger and the next smaller machine of
    the same OS and architecture (GPU runners only against GPU runners)."""
    cat = catalog or load_catalog()
    vis, _ = _visibility(visibility)
    if runner.os is None or runner.cores is None:
        return []
    same = {}
    for e in cat.entries:
        if (e.os, e.arch, e.gpu) != (runner.os, runner.arch, runner.gpu) or e.container:
            continue
        cores = e.size(vis)[0]
        if cores == runner.cores:
            continue
        # one machine per size: prefer the standard label (it has a fixed name)
        if cores not in same or (e.kind == "standard" and same[cores].kind != "standard"):
            same[cores] = e
    bigger = [same[c] for c in sorted(same) if c > runner.cores][:2]
    smaller = [same[c] for c in sorted(same, reverse=True) if c < runner.cores][:1]
    return [_from_entry(e, e.label, vis) for e in smaller + bigger]


def _sizing_advice(
    runtime: Runtime,
    runner: Runner,
    vis: str,
    predict_on: PredictOn | None,
    cat: Catalog,
    base: list[str],
) -> list[Advice]:
    out: list[Advice] = []
    cur_cost = job_cost(runtime.p50, runner, visibility=vis) or 0.0
    if runner.kind == "larger" and vis == "public":
        std = next(
            (
                e
                for e in cat.entries
                if e.kind == "standard" and not e.container and (e.os, e.arch) == (runner.os, runner.arch)
            ),
            None,
        )
        if runner.gpu:  # no standard runner has a GPU: nothing free to move to
            out.append(
                Advice(
                    "runner",
                    f"`{runner.label}` is a larger runner with a GPU: {_usd(cur_cost)} per run "
                    "even in a public repository (no standard runner has a GPU).",
                    {},
                    tuple(base),
                )
            )
        elif std is not None:
            cores, ram = std.size(vis)
            out.append(
                Advice(
                    "runner",
                    f"`{runner.label}` is a larger runner: {_usd(cur_cost)} per run even in a "
                    f"public repository, where `{std.label}` ({cores} vCPU, {ram:g} GB) is free. "
                    "Keep it only if the time it saves is worth that.",
                    {"runs-on": std.label},
                    tuple(base),
                )
            )
    if runtime.p50 < LONG_JOB_S:
        return out
    free_now = _is_free(runner, vis)
    alts = [
        a
        for a in alternatives(runner, visibility=vis, catalog=cat)
        if not (free_now and (a.cores or 0) < (runner.cores or 0))  # smaller and paid: pointless
    ]
    if not alts:
        return out
    rows = [_alternative_row(runtime, runner, alt, vis, predict_on, free_now) for alt in alts]
    notes = base + [
        "break-even includes GitHub's per-minute rounding on both runners; more cores help only "
        "as far as the job's work runs in parallel",
    ]
    if any(alt.kind == "larger" for alt in alts):
        notes.append(
            "larger runners need a GitHub Team or Enterprise Cloud plan; their labels "
            "are names your organization chooses (the ones shown are examples)"
        )
    predicted = [r for r in rows if "predicted_p50_s" in r]
    if predicted:
        notes.append(
            "runtimes on the alternatives are the predictor's, re-run with the alternative `runs-on`"
        )
        wins = [
            r
            for r in predicted
            if not free_now
            and r["cost_usd"] <= cur_cost
            and (r["cost_usd"] < cur_cost or r["predicted_p50_s"] < runtime.p50)
        ]
        fast = min(predicted, key=lambda r: (r["predicted_p50_s"], r["cost_usd"]))
        now = f"{_fmt_s(runtime.p50)}, " + ("free" if free_now else f"{_usd(cur_cost)} per run")
        suggested: dict[str, Any] = {"alternatives": rows}
        if wins:
            best = min(wins, key=lambda r: (r["cost_usd"], r["predicted_p50_s"]))
            msg = (
                f"`{best['label']}` is predicted to take {_fmt_s(best['predicted_p50_s'])} "
                f"for {_usd(best['cost_usd'])} per run (now {now}): "
                f"{'cheaper' if best['cost_usd'] < cur_cost else 'same cost'}"
                f"{', faster' if best['predicted_p50_s'] < runtime.p50 else ''}."
            )
            suggested = {"runs-on": best["label"], "alternatives": rows}
        elif fast["predicted_p50_s"] < runtime.p50 * 0.8:
            extra = fast["cost_usd"] - cur_cost
            msg = (
                f"`{fast['label']}` is predicted to take {_fmt_s(fast['predicted_p50_s'])} "
                f"for {_usd(fast['cost_usd'])} per run ({'+' if extra >= 0 else '-'}"
                f"{_usd(abs(extra))}; now {now})."
            )
        else:
            msg = f"No other size is predicted to be cheaper or much faster than `{runner.label}` ({now})."
        out.append(Advice("runner", msg, suggested, tuple(notes)))
        return out
    if free_now:
        return out  # free runner, nothing predicted: a bigger one only buys time, unknown how much
    parts = []
    for r in rows:
        what = f"`{r['label']}` ({r['cores']} cores, {r['price_ratio']:g}x the price)"
        s_ = r["break_even_speedup"]
        if s_ is None:
            parts.append(f"{what} cannot: one billed minute there costs more")
        elif s_ == 0:  # no "0.27x the price": in a public repository it costs nothing
            parts.append(f"`{r['label']}` ({r['cores']} cores) is free here")
        elif s_ >= 1:
            parts.append(f"{what} must bill at most {r['max_billed_minutes']} min ({s_:g}x faster)")
        else:
            parts.append(
                f"{what} costs no more while it bills at most "
                f"{r['max_billed_minutes']} min (up to {1 / s_:.2g}x slower)"
            )
    out.append(
        Advice(
            "runner",
            f"Long job ({_fmt_s(runtime.p50)}, {_usd(cur_cost)} per run on `{runner.label}`). "
            "To cost no more: " + "; ".join(parts) + ". Runtimes on other runners are not "
            "predicted: time one run to check.",
            {"alternatives": rows},
            tuple(notes),
        )
    )
    return out


def _alternative_row(
    runtime: Runtime,
    runner: Runner,
    alt: Runner,
    vis: str,
    predict_on: PredictOn | None,
    free_now: bool,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "label": alt.label,
        "kind": alt.kind,
        "cores": alt.cores,
        "ram_gb": alt.ram_gb,
        "price_per_min_usd": alt.price_per_min,
        "price_ratio": round((alt.price_per_min or 0) / (runner.price_per_min or 1), 2),
    }
    if not free_now:
        m = _affordable_minutes(runner, alt, runtime.p50, vis)
        s_ = break_even_speedup(runner, alt, runtime.p50, visibility=vis)
        row["break_even_speedup"] = None if s_ is None else round(s_, 2)
        row["max_billed_minutes"] = m if m and m > 0 else None
    rt = _predict(predict_on, alt.label)
    if rt is not None:
        row["predicted_p50_s"] = round(rt.p50, 1)
        row["cost_usd"] = job_cost(rt.p50, alt, visibility=vis)
    return row
