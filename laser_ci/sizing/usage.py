"""Sizing advice from measured usage: what a job's earlier runs used (the measure step's
records, :mod:`laser_ci.measure.record`), against the runner it asks for.

Per job, over its measured runs (``HistoryIndex.usage``, oldest first; the last
:data:`MAX_RUNS`), :func:`usage_summary` gives the p50 and p90 of each measure and
``measured_runs``: the ``usage`` of ``estimate --format json``. :func:`usage_advice` turns
it into advice (kind ``usage``), in the PR comment, the table and the JSON:

- **near the memory limit**: the p90 of the peak memory is at least :data:`NEAR_LIMIT` of
  the machine's memory (the records' own total: the runner the job ran on); named with the
  cheapest larger runner that holds the peak with :data:`HEADROOM`, and what it adds a month;
- **disk nearly full**: the lowest free disk of the runs is under :data:`DISK_FREE_MIN` of
  the disk (and under 5 GB);
- **fits a smaller runner**: otherwise, the cheapest catalog runner of the same OS and
  architecture with ``cores >= ceil(p90 of the per-run p95 cores x HEADROOM)``, memory
  ``>= p90 of the peak x HEADROOM``, the job's disk growth x ``HEADROOM`` within the
  runner's SSD, no Docker where the job uses it, a job limit above the p90 runtime (the
  ``ubuntu-slim`` rules of :func:`laser_ci.sizing.advice.cheapest_fit`), when one run costs
  less there; what it saves a month at the workflow's runs per month
  (:mod:`laser_ci.sizing.schedule`), assuming the runtime stays the same (the job used fewer
  cores than the smaller runner has at its p95).

A job without measurements keeps today's arithmetic: its ``usage`` says
``measured_runs: 0`` and its runner advice says the sizing is not measured.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from typing import Any

from laser_ci.measure.record import parse_record, percentile
from laser_ci.predictors.base import Runtime
from laser_ci.sizing.advice import Advice, Needs, cheapest_fit
from laser_ci.sizing.cost import MonthlyRuns, job_cost
from laser_ci.sizing.runners import Runner

MAX_RUNS = 20  # the most recent measured runs that count
HEADROOM = 1.25  # a runner fits when it has 25% more than the measured peak
NEAR_LIMIT = 0.85  # of the machine's memory: a job this close risks being killed
DISK_FREE_MIN = 0.10  # of the disk: less free is "nearly full"
DISK_FREE_FLOOR = 5e9
MEASURES = (
    "cpu_cores_mean", "cpu_cores_p95", "memory_peak_bytes", "memory_total_bytes",
    "memory_above_baseline_bytes", "disk_used_peak_bytes", "disk_added_bytes",
    "disk_free_min_bytes", "disk_total_bytes", "disk_read_bytes", "disk_write_bytes",
    "net_rx_bytes", "net_tx_bytes", "sampler_cpu_cores", "duration_s",
)
NOT_MEASURED = ("no measured usage for this job: sizing from cost arithmetic only (add the "
                "measure step, `laser-ci/measure`, to measure its CPU, memory and disk: "
                "docs/sizing.md)")
GB = 1e9


def _derived(rec: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(rec)
    for key, a, b in (("memory_above_baseline_bytes", "memory_peak_bytes", "memory_baseline_bytes"),
                      ("disk_added_bytes", "disk_used_peak_bytes", "disk_used_baseline_bytes")):
        if isinstance(rec.get(a), (int, float)) and isinstance(rec.get(b), (int, float)):
            out[key] = max(0, rec[a] - rec[b])
    return out


def usage_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"measured_runs": n, measure: {"p50", "p90"}, ...}`` over the last :data:`MAX_RUNS`
    records (a measure no run has is left out); ``{"measured_runs": 0}`` without records.
    ``disk_free_min_bytes`` also has ``min``: the lowest of the runs."""
    recs = [_derived(r) for r in records if r][-MAX_RUNS:]
    out: dict[str, Any] = {"measured_runs": len(recs)}
    for key in MEASURES:
        xs = [float(r[key]) for r in recs if isinstance(r.get(key), (int, float))]
        if xs:
            p50, p90 = percentile(xs, 0.5), percentile(xs, 0.9)
            if key.startswith(("cpu", "sampler")) or key == "duration_s":
                out[key] = {"p50": round(p50, 3), "p90": round(p90, 3)}  # type: ignore[arg-type]
            else:  # bytes: whole numbers
                out[key] = {"p50": round(p50), "p90": round(p90)}  # type: ignore[arg-type]
            if key == "disk_free_min_bytes":
                out[key]["min"] = round(min(xs))
    return out


def usage_from_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, tuple[dict[str, Any], ...]]:
    """Per job name, the usage records in runs ``laser-ci collect`` wrote (oldest first;
    a job's ``usage``, :mod:`laser_ci.github.collect`); malformed ones are left out."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        seen: set[str] = set()
        for job in row.get("jobs") or () if isinstance(row, Mapping) else ():
            if not isinstance(job, Mapping) or not job.get("name") or job["name"] in seen:
                continue
            rec = parse_record(job.get("usage"))
            if rec is not None:
                seen.add(str(job["name"]))
                out.setdefault(str(job["name"]), []).append(rec)
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def _ssd_gb() -> dict[str, float]:
    """Per catalog sku, the SSD GitHub documents for it (``ssd_gb`` in runners.json)."""
    data = json.loads(resources.files("laser_ci.sizing").joinpath("runners.json")
                      .read_text(encoding="utf-8"))
    return {str(e["sku"]): float(e["ssd_gb"]) for e in data.get("runners", [])
            if isinstance(e, dict) and isinstance(e.get("ssd_gb"), (int, float))}


def _gb(x: float) -> str:
    return f"{x / GB:.1f} GB"


def _p90(summary: Mapping[str, Any], key: str) -> float | None:
    v = summary.get(key)
    return float(v["p90"]) if isinstance(v, Mapping) and "p90" in v else None


def _monthly(delta_per_run: float, monthly: MonthlyRuns | None) -> tuple[str, dict[str, Any]]:
    """Words and JSON for a per-run cost difference: a month's when runs per month are known."""
    if monthly is not None and monthly.runs > 0:
        usd = delta_per_run * monthly.runs
        runs = f"{monthly.runs:.0f}" if monthly.runs >= 10 else f"{monthly.runs:.1f}"
        return (f"about ${abs(usd):.2f} a month ({runs} runs a month)", {
            "usd_per_month": round(usd, 2), "runs_per_month": monthly.runs,
            "runs_per_month_basis": monthly.basis})
    return (f"${abs(delta_per_run):.4f} a run", {"usd_per_run": round(delta_per_run, 4)})


def usage_advice(summary: Mapping[str, Any], runner: Runner, runtime: Runtime, *,
                 visibility: str | None, monthly: MonthlyRuns | None = None,
                 docker: bool = False) -> list[Advice]:
    """Advice from measured usage (see the module docstring); empty without measurements or
    without a priced GitHub-hosted runner of known OS, architecture and size."""
    n = int(summary.get("measured_runs") or 0)
    if n == 0:
        return []
    of = f"p90 over {n} measured run{'s' if n != 1 else ''}"
    mem, total = _p90(summary, "memory_peak_bytes"), _p90(summary, "memory_total_bytes")
    cores = _p90(summary, "cpu_cores_p95")
    out: list[Advice] = []
    basis = (f"measured by the measure step on the runner the job ran on ({of}); a runner "
             f"fits with {int(100 * (HEADROOM - 1))}% headroom over the peak")
    near = mem is not None and total and mem >= NEAR_LIMIT * total
    if near:
        bigger = _bigger(runner, mem, visibility, runtime)  # type: ignore[arg-type]
        text = (f"memory peaks at {_gb(mem)} of {_gb(total)} ({of}): near the machine's "  # type: ignore[arg-type]
                "memory, one dependency away from being killed")
        suggested: dict[str, Any] = {"rule": "near-memory", "memory_peak_bytes": mem,
                                     "memory_total_bytes": total}
        if bigger is not None:
            extra = _cost(runtime, bigger, visibility) - _cost(runtime, runner, visibility)
            words, money = _monthly(extra, monthly)
            text += (f"; `{bigger.label}` ({bigger.cores} vCPU, {bigger.ram_gb:g} GB) holds it"
                     + (f", for {words.replace(' a month', ' a month more', 1)}"
                        if extra > 0 else ""))
            suggested.update({"runs-on": bigger.label, **money})
        out.append(Advice("usage", text + ".", suggested, (basis,)))
    free_min = summary.get("disk_free_min_bytes", {}).get("min") \
        if isinstance(summary.get("disk_free_min_bytes"), Mapping) else None
    disk_total = _p90(summary, "disk_total_bytes")
    if free_min is not None and disk_total and free_min < max(DISK_FREE_MIN * disk_total, 0) \
            and free_min < DISK_FREE_FLOOR:
        out.append(Advice("usage", f"disk nearly full: as little as {_gb(free_min)} of "
                          f"{_gb(disk_total)} free during a run (lowest over {n} measured runs)"
                          "; free space early in the job (remove unused toolchains) or use a "
                          "runner with a larger disk.",
                          {"rule": "disk-full", "disk_free_min_bytes": free_min,
                           "disk_total_bytes": disk_total},
                          (basis,)))
    if near or out or mem is None or cores is None:
        return out
    smaller = _smaller(summary, runner, runtime, visibility, docker, mem, cores)
    if smaller is not None:
        saved = _cost(runtime, runner, visibility) - _cost(runtime, smaller, visibility)
        words, money = _monthly(saved, monthly)
        out.append(Advice(
            "usage",
            f"measured: peaks at {_gb(mem)} and {cores:.1f} cores ({of}): fits "
            f"`{smaller.label}` ({smaller.cores} vCPU, {smaller.ram_gb:g} GB), saving {words}.",
            {"rule": "fits-smaller", "runs-on": smaller.label, "memory_peak_bytes": mem,
             "cpu_cores_p95": cores, **money},
            (basis, "assumes the job takes as long there: at its p95 it used fewer cores "
                    "than the smaller runner has", f"prices per minute from the catalog "
                    f"({runner.sku} -> {smaller.sku})")))
    return out


def _cost(runtime: Runtime, runner: Runner, visibility: str | None) -> float:
    return job_cost(runtime.p50, runner, visibility=visibility) or 0.0


def _sizable(runner: Runner) -> bool:
    return (runner.kind in ("github-hosted", "larger") and runner.os is not None
            and runner.arch is not None and runner.price_per_min is not None
            and runner.cores is not None and runner.ram_gb is not None and not runner.gpu)


def _bigger(runner: Runner, mem: float, visibility: str | None,
            runtime: Runtime) -> Runner | None:
    if not _sizable(runner):
        return None
    return cheapest_fit(runner.os, runner.arch,  # type: ignore[arg-type]
                        Needs(cores=runner.cores, ram_gb=mem * HEADROOM / GB, docker=True),
                        visibility=visibility, runtime_s=runtime.p90)


def _smaller(summary: Mapping[str, Any], runner: Runner, runtime: Runtime,
             visibility: str | None, docker: bool, mem: float, cores: float) -> Runner | None:
    if not _sizable(runner):
        return None
    need_cores = max(1, math.ceil(cores * HEADROOM - 1e-9))
    fit = cheapest_fit(runner.os, runner.arch,  # type: ignore[arg-type]
                       Needs(cores=need_cores, ram_gb=mem * HEADROOM / GB, docker=docker),
                       visibility=visibility, runtime_s=runtime.p90)
    if fit is None or fit.label == runner.label or fit.sku == runner.sku:
        return None
    added = _p90(summary, "disk_added_bytes")
    ssd = _ssd_gb().get(fit.sku or "")
    if added is not None and ssd is not None and added * HEADROOM > ssd * GB:
        return None
    if _cost(runtime, fit, visibility) >= _cost(runtime, runner, visibility):
        return None
    return fit


def with_usage(advice: Sequence[Advice], summary: Mapping[str, Any]) -> list[Advice]:
    """``advice`` with, where the job has no measurements, :data:`NOT_MEASURED` among the
    assumptions of its runner advice (kinds ``runner`` and ``slim``), and what a model
    learned from the repository's measured runs predicts it will use, where one did
    (``predicted``: :func:`predicted_words`)."""
    if summary.get("measured_runs"):
        return list(advice)
    notes = (NOT_MEASURED,) + ((words,) if (words := predicted_words(summary)) else ())
    return [replace(a, assumptions=(*a.assumptions, *notes))
            if a.kind in ("runner", "slim") else a for a in advice]


def predicted_advice(summary: Mapping[str, Any], runner: Runner) -> list[Advice]:
    """For a job without measurements whose predicted peak memory (``predicted``, the p90
    of a learned model, :func:`predicted_words`) is near the runner's memory: a word to
    measure it before relying on that runner. Nothing otherwise: a prediction alone moves
    no job to another runner."""
    got = summary.get("predicted")
    mem = got.get("memory_gb") if isinstance(got, Mapping) else None
    if summary.get("measured_runs") or not isinstance(mem, Mapping) or not runner.ram_gb:
        return []
    p90 = float(mem.get("p90") or 0.0)
    if p90 < NEAR_LIMIT * runner.ram_gb:
        return []
    return [Advice("usage", f"predicted to peak at {p90:.1f} GB of memory, near the "
                   f"{runner.ram_gb:g} GB of `{runner.label}`: measure it (the measure step) "
                   "before relying on this runner.",
                   {"rule": "predicted-near-memory", "memory_gb_p90": round(p90, 2),
                    "ram_gb": runner.ram_gb}, (predicted_words(summary),))]


def predicted_words(summary: Mapping[str, Any]) -> str:
    """The usage a learned model predicts for a job without measurements, in words (its p90
    of each target, :mod:`laser_ci.text.targets`); empty without a prediction."""
    got = summary.get("predicted")
    if not isinstance(got, Mapping):
        return ""
    said = []
    for key, unit in (("cpu_cores", "cores"), ("memory_gb", "GB of memory"),
                      ("disk_gb", "GB of disk added")):
        band = got.get(key)
        if isinstance(band, Mapping) and isinstance(band.get("p90"), (int, float)):
            said.append(f"{band['p90']:.1f} {unit}")
    if not said:
        return ""
    return (f"predicted, not measured: up to {', '.join(said)} (p90 of `{got.get('model')}`, "
            "learned from this repository's measured runs)")


def usage_line(jobs: Sequence[Mapping[str, Any]]) -> str:
    """One line for the report over the jobs of an estimate (their JSON): how many are
    measured and what the measurements say, and how many a learned model predicts; empty
    when none is either."""
    measured = [j for j in jobs if isinstance(j.get("usage"), Mapping)
                and j["usage"].get("measured_runs")]
    predicted = sum(isinstance(j.get("usage"), Mapping) and "predicted" in j["usage"]
                    for j in jobs)
    if not measured:
        return (f"Usage: **{predicted} of {len(jobs)} job{'s' if len(jobs) != 1 else ''} "
                "predicted** by the model learned from this repository's measured runs"
                ) if predicted else ""
    rules: dict[str, int] = {}
    for job in measured:
        for a in job.get("advice") or ():
            rule = a.get("suggested", {}).get("rule") if isinstance(a, Mapping) else None
            if a.get("kind") == "usage" and isinstance(rule, str):
                rules[rule] = rules.get(rule, 0) + 1
    words = {"near-memory": "near its runner's memory", "disk-full": "with its disk nearly full",
             "fits-smaller": "fits a cheaper runner"}
    said = [f"{n} {words[r]}" for r, n in rules.items() if r in words]
    n = len(jobs)
    return (f"Usage: **{len(measured)} of {n} job{'s' if n != 1 else ''} measured** (CPU, "
            "memory and disk of their earlier runs)" + (": " + ", ".join(said) + " (see the "
                                                        "advice)" if said else "")
            + (f"; {predicted} predicted by the model learned from them" if predicted else ""))
