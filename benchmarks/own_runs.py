"""A job's own runs (issue 49, part 5): which window of its successful runs its p50 is the
median of, picked on earlier data, scored held out; and the band of the pick.

Cases: every run with earlier runs of its own, predicted from all of them (conclusions
known):

- the depth folders (``--depth``): for two windows of ``--test-days`` (the earlier one, to
  pick; the later one, held out), every job run of the window from the job's runs before
  the window (as ``laser_ci.evaluation.new_jobs`` cuts them);
- the shared runs (``--data``): every workflow and job example with earlier runs of the
  same workflow (and job name), causal (as ``laser-ci eval --history prior``), in five
  folds by repository.

The rule (:func:`laser_ci.predictors.own_runs.window`): the median of the latest
``max(MIN, ceil(SHARE * n))`` of the job's ``n`` successful runs, at most ``CAP``, over a
grid. The pick minimises the mean over the data sets (each depth folder's earlier window,
the shared runs' training folds pooled) of the log-MAE on successful runs relative to the
default's (``history-recent``: the median of the last 3 runs, any end), so each data set
counts alike; within 0.001 of the least, the rule nearest the default. Held out: each
shared fold with the pick made without it; the depth folders' later windows with the pick
of every earlier window and every shared fold. Against the default
and the median of all earlier successful runs: paired 95% intervals resampling job names
(depth) or repositories (shared runs). Bands: per history-size bucket, quantiles of the
pick's residuals (successful runs) of the other sets (a shared fold: the other folds and
the depth earlier windows; a depth later window: the shared runs and the depth earlier
windows); ``--write-bands`` adds the pooled ones (every set) to
``model/baselines/evidence_bands.json``.

    python benchmarks/own_runs.py [--data ../shared/data/gha-runs]
        [--depth ../shared/data/depth/iree-org+iree ...] [--test-days 3] [--write-bands]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.predictors.evidence_bands import band_offsets  # noqa: E402
from laser_ci.predictors.own_runs import BUCKETS, bucket, own_log_p50, passing_runs  # noqa: E402
from laser_ci.text.history import RECENT_RUNS, PastRuns  # noqa: E402
from laser_ci.training.metrics import coverage, format_diff, log_mae, paired_log_mae_diff  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
MINS = (1, 2, 3, 5, 10)
SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)
CAPS: tuple[int | None, ...] = (None, 10, 20, 50, 100)


@dataclass(frozen=True)
class Case:
    """One scored run: the set it is in (``depth:<name>:earlier``, ``shared:<fold>``), its
    bootstrap group, its job's earlier runs, its truth and whether it succeeded."""

    where: str
    group: str
    past: PastRuns
    truth: float
    success: bool
    kind: str = "job"  # the shared runs: "workflow" (a run's billable time) or "job"
    changed: bool = False  # the shared runs: its workflow file changed since the latest run

    @property
    def ok(self) -> tuple[float, ...]:
        """Its job's earlier successful runs (:func:`passing_runs`), computed once."""
        got = self.__dict__.get("_ok")
        if got is None:
            got = passing_runs(self.past)
            object.__setattr__(self, "_ok", got)
        return got


# --- the cases -----------------------------------------------------------------------------


def depth_cases(folder: str, test_days: float) -> list[Case]:
    from laser_ci.evaluation.new_jobs import DAY, _read_runs, _truth, job_runs_before

    runs = _read_runs(Path(folder))
    end = runs[-1][0] + 1.0
    out = []
    for shift, which in ((test_days, "earlier"), (0.0, "later")):
        stop = end - shift * DAY
        cut = stop - test_days * DAY
        hist = job_runs_before(runs, cut)
        for key, truth in _truth(runs, cut, stop).items():
            h = hist.get(key)
            if not h:
                continue
            ends = tuple(c for _, c in h)
            past = PastRuns(tuple(s for s, _ in h), conclusions=ends if any(ends) else ())
            out += [Case(f"depth:{Path(folder).name}:{which}", key[1], past, s, ok)
                    for s, ok in truth]
    return out


def shared_cases(data: str, folds: int = 5) -> list[Case]:
    """Every example of the shared runs with earlier runs of its own, with all of them."""
    from laser_ci.evaluation.folds import fold_of
    from laser_ci.training.examples import load_examples
    from laser_ci.training.history import causal_groups

    examples = load_examples(data)
    out = []
    for now, past in causal_groups(examples):
        if not past:
            continue
        ends = tuple(examples[p].conclusion or None for p in past)
        pr = PastRuns(tuple(examples[p].runtime_s for p in past),
                      conclusions=ends if any(ends) else ())
        for i in now:
            e = examples[i]
            if e.conclusion in ("skipped", "cancelled"):
                continue
            out.append(Case(f"shared:{fold_of(e.repo, folds)}", e.repo, pr, e.runtime_s,
                            e.conclusion == "success", e.kind, bool(e.changed)))
    return out


# --- the predictions -----------------------------------------------------------------------


def default_p50(past: PastRuns) -> float:
    """``history-recent``: the median of the last 3 timed runs, whatever their end."""
    return float(np.median(np.asarray(past.runtimes[-RECENT_RUNS:], dtype=float)))


def base_p50(c: Case) -> float | None:
    """The median of every earlier successful run (None: none)."""
    return float(np.median(c.ok)) if c.ok else None


_P50: dict[tuple[int, tuple[int, float, int | None]], float] = {}


def rule_p50(c: Case, rule: tuple[int, float, int | None]) -> float:
    """The rule's p50; the default's where the job has no successful run (the estimate
    keeps the predictor's then)."""
    key = (id(c), rule)
    got = _P50.get(key)
    if got is None:
        mu = own_log_p50(c.ok, *rule)
        got = _P50[key] = default_p50(c.past) if mu is None else math.exp(mu)
    return got


RULES = list(itertools.product(MINS, SHARES, CAPS))


def scores(cases: Sequence[Case]) -> dict[tuple[int, float, int | None], float]:
    truth = np.log([c.truth for c in cases])
    return {r: float(np.mean(np.abs(np.log([max(rule_p50(c, r), 1.0) for c in cases])
                                    - truth))) for r in RULES}


def source_of(where: str) -> str:
    """The data set a case set belongs to: ``depth:<name>`` or ``shared``."""
    return where.rsplit(":", 1)[0]


def pick(sets: dict[str, list[Case]]) -> tuple[tuple[int, float, int | None], dict[str, float]]:
    """The rule with the lowest mean over the data sets of ``sets`` (each depth folder, the
    shared runs: every fold given pooled into one) of its log-MAE on successful runs relative
    to the default's; within 0.001 of it, the one nearest the default (a window of 3, no
    cap, the smaller share)."""
    pooled: dict[str, list[Case]] = {}
    for where, cases in sets.items():
        pooled.setdefault(source_of(where), []).extend(c for c in cases if c.success)
    rel: dict[tuple[int, float, int | None], list[float]] = {r: [] for r in RULES}
    for ok in pooled.values():
        if not ok:
            continue
        s = scores(ok)
        d = log_mae([default_p50(c.past) for c in ok], [c.truth for c in ok])
        for r in RULES:
            rel[r].append(s[r] / d)
    mean = {r: float(np.mean(v)) for r, v in rel.items()}
    least = min(mean.values())
    best = min((r for r in RULES if mean[r] <= least + 0.001),
               key=lambda r: (abs(r[0] - 3), r[2] is not None, r[1], -(r[2] or 0)))
    return best, mean


# --- the report ----------------------------------------------------------------------------


def residuals(cases: Sequence[Case], rule: tuple[int, float, int | None]) -> dict[str, list[float]]:
    """ln truth - ln p50 of the successful runs, per band bucket and pooled (``own``)."""
    out: dict[str, list[float]] = {}
    for c in cases:
        runs = c.ok
        if not c.success or not runs:
            continue
        r = math.log(c.truth) - math.log(max(rule_p50(c, rule), 1.0))
        out.setdefault(bucket(len(runs)), []).append(r)
        out.setdefault("own", []).append(r)
    return out


def offsets_of(res: dict[str, list[float]]) -> dict[str, tuple[float, float]]:
    return {k: band_offsets(v) for k, v in res.items() if len(v) >= 20}


def report(name: str, cases: Sequence[Case], rule: tuple[int, float, int | None],
           offsets: dict[str, tuple[float, float]]) -> dict[str, object]:
    """The rule against the default and the base on ``cases`` (successful, then all runs)."""
    from laser_ci.predictors.own_runs import offsets_for

    out: dict[str, object] = {}
    for which in ("successful", "all"):
        sub = [c for c in cases if (c.success or which == "all") and c.ok]
        if not sub:
            continue
        truth = [c.truth for c in sub]
        groups = [c.group for c in sub]
        mine = [rule_p50(c, rule) for c in sub]
        default = [default_p50(c.past) for c in sub]
        base = [base_p50(c) for c in sub]
        band = [offsets_for(len(c.ok), offsets) or (0.0, 0.0) for c in sub]
        lo = [p * math.exp(b[0]) for p, b in zip(mine, band, strict=True)]
        hi = [p * math.exp(b[1]) for p, b in zip(mine, band, strict=True)]
        f = {"n": len(sub), "groups": len(set(groups)), "own": log_mae(mine, truth),
             "default": log_mae(default, truth), "base": log_mae(base, truth),  # type: ignore[arg-type]
             "vs_default": paired_log_mae_diff(mine, default, truth, groups),
             "vs_base": paired_log_mae_diff(mine, base, truth, groups),  # type: ignore[arg-type]
             "default_vs_base": paired_log_mae_diff(default, base, truth, groups),  # type: ignore[arg-type]
             "coverage": coverage(lo, hi, truth),
             "width": float(np.median(np.exp(np.subtract([b[1] for b in band],
                                                         [b[0] for b in band]))))}
        out[which] = f
        print(f"| {name} | {which} | {f['n']:,} ({f['groups']}) | {f['own']:.3f} | "
              f"{f['default']:.3f} | {f['base']:.3f} | {format_diff(f['vs_default'])} | "
              f"{format_diff(f['vs_base'])} | {format_diff(f['default_vs_base'])} | "
              f"{f['coverage']:.0%} | {f['width']:.1f}× |")
    return out


def _own_vs_default(sub: Sequence[tuple[Case, tuple[Any, ...]]]) -> dict[str, Any]:
    """The cases' own-rule and default log-MAE and their paired difference (95%, cases'
    groups resampled)."""
    truth = [c.truth for c, _ in sub]
    groups = [c.group for c, _ in sub]
    mine = [rule_p50(c, r) for c, r in sub]  # type: ignore[arg-type]
    default = [default_p50(c.past) for c, _ in sub]
    return {"n": len(sub), "groups": len(set(groups)), "own": log_mae(mine, truth),
            "default": log_mae(default, truth),
            "vs_default": paired_log_mae_diff(mine, default, truth, groups)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(SHARED / "gha-runs"), help="the shared runs ('' to skip)")
    ap.add_argument("--depth", action="append", default=None,
                    help="a per-job history folder (repeatable; default: every folder of "
                         "../shared/data/depth)")
    ap.add_argument("--test-days", type=float, default=3.0)
    ap.add_argument("--write-bands", action="store_true")
    ap.add_argument("--json", default=None, help="write the figures here")
    args = ap.parse_args(argv)
    depth = [d for d in args.depth if d] if args.depth is not None else sorted(
        str(p) for p in (SHARED / "depth").iterdir() if (p / "runs.jsonl.gz").is_file())
    cases: list[Case] = []
    for folder in depth:
        cases += depth_cases(folder, args.test_days)
    if args.data:
        cases += shared_cases(args.data)
    sets: dict[str, list[Case]] = {}
    for c in cases:
        sets.setdefault(c.where, []).append(c)
    for k, v in sorted(sets.items()):
        print(f"{k}: {len(v):,} runs ({sum(c.success for c in v):,} successful)")
    earlier = {k: v for k, v in sets.items() if k.endswith(":earlier")}
    shared = {k: v for k, v in sets.items() if k.startswith("shared:")}
    rule, mean = pick({**earlier, **shared})
    print(f"\npicked on every earlier window and every shared fold: MIN={rule[0]} "
          f"SHARE={rule[1]} CAP={rule[2]}")
    top = sorted(mean, key=mean.get)[:8]  # type: ignore[arg-type]
    print("  best rules (mean log-MAE relative to the default): "
          + ", ".join(f"{r}: {mean[r]:.3f}" for r in top))
    print(f"  the last 3 successful runs (3, 0.0, None): {mean[(3, 0.0, None)]:.3f}")
    figures: dict[str, object] = {"rule": list(rule)}
    shown = [(3, 0.0, None), (10, 0.0, None), (20, 0.0, None), (1, 1.0, None), rule,
             (3, 0.5, None), (3, 0.5, 10)]
    shown = list(dict.fromkeys(shown))
    print("\nlog-MAE on successful runs per case set (every shared fold pooled), rules as "
          "(MIN, SHARE, CAP); (3, 0.0, None) is the last 3 successful runs, (1, 1.0, None) "
          "all of them:")
    print("\n| set | runs | default | " + " | ".join(map(str, shown)) + " |")
    print("|---|---:|---:|" + "---:|" * len(shown))
    for k, v in sorted({**{n: c for n, c in sets.items() if not n.startswith("shared:")},
                        "shared": [c for cs in shared.values() for c in cs]}.items()):
        ok = [c for c in v if c.success]
        truth = [c.truth for c in ok]
        print(f"| {k} | {len(ok):,} | {log_mae([default_p50(c.past) for c in ok], truth):.3f} | "
              + " | ".join(f"{log_mae([rule_p50(c, r) for c in ok], truth):.3f}" for r in shown)
              + " |")
    print("\n| held out | runs | n (groups) | own | default | earlier successful median | "
          "own − default [95%] | own − median [95%] | default − median [95%] | coverage | "
          "p90/p10 |")
    print("|---|---|---:|---:|---:|---:|---|---|---|---:|---:|")
    for k, held in sorted(sets.items()):
        if k.endswith(":earlier"):
            continue
        others = {n: v for n, v in {**earlier, **shared}.items() if n != k}
        r = pick(others)[0] if k.startswith("shared:") else rule
        res: dict[str, list[float]] = {}
        for v in others.values():
            for b, x in residuals(v, r).items():
                res.setdefault(b, []).append(x)  # type: ignore[arg-type]
        offs = offsets_of({b: [y for x in xs for y in x] for b, xs in res.items()})  # type: ignore[misc]
        figures[k] = {"rule": list(r), "offsets": offs, **report(f"{k} {r}", held, r, offs)}
    pooled = [c for k, v in shared.items() for c in v]
    held_rules = {k: figures[k]["rule"] for k in shared}  # type: ignore[index]
    print(f"\nshared runs, each fold with its own pick {held_rules}:")
    per = []
    for k, v in shared.items():
        r = tuple(figures[k]["rule"])  # type: ignore[index]
        per += [(c, r) for c in v]
    for which in ("successful", "all"):
        sub = [(c, r) for c, r in per if (c.success or which == "all") and c.ok]
        fig = _own_vs_default(sub)
        print(f"  {which}: {fig['n']:,} runs ({fig['groups']} repositories): own "
              f"{fig['own']:.3f}, default {fig['default']:.3f}, "
              f"own − default {format_diff(fig['vs_default'])}")
        figures[f"shared/{which}"] = fig
    del pooled
    print("\nthe README's warm rows (`laser-ci eval --folds 5 --history prior`: one example "
          "per run, its workflow's earlier runs), each fold with its own pick; own where the "
          "run has earlier successful runs, else the default:")
    print("\n| kind | runs | regime | n (repositories) | own | default | own − default [95%] |")
    print("|---|---|---|---:|---:|---:|---|")
    for kind, which, regime in itertools.product(("workflow", "job"), ("successful", "all"),
                                                 ("warm", "workflow changed")):
        sub = [(c, r) for c, r in per if c.kind == kind and (c.success or which == "all")
               and (c.changed or regime == "warm")]
        if not sub:
            continue
        fig = _own_vs_default(sub)
        print(f"| {kind} | {which} | {regime} | {fig['n']:,} ({fig['groups']}) | "
              f"{fig['own']:.3f} | {fig['default']:.3f} | {format_diff(fig['vs_default'])} |")
        figures[f"shared/{kind}/{which}/{regime}"] = fig
    res = {}
    for v in sets.values():
        for b, x in residuals(v, rule).items():
            res.setdefault(b, []).extend(x)
    offs = offsets_of(res)
    print(f"\npooled bands (every set): "
          f"{ {k: (round(a, 3), round(b, 3), len(res[k])) for k, (a, b) in sorted(offs.items())} }")
    if args.write_bands:
        from laser_ci.predictors.evidence_bands import default_file, load_offsets, write_offsets

        path = default_file()
        data = json.loads(path.read_text(encoding="utf-8"))
        kept = {k: v for k, v in load_offsets(path).items() if not k.startswith("own")}
        info = data.get("info") or {}
        info["own"] = {"n": {k: len(res[k]) for k in offs}, "rule": list(rule),
                       "command": "python benchmarks/own_runs.py --write-bands",
                       "from": "successful runs with earlier successful runs of their own: "
                               "both windows of each depth folder and every shared run"}
        write_offsets(path, {**kept, **offs}, info)
        print(f"wrote {path}")
    if args.json:
        from laser_ci.evaluation.evaluate import json_safe

        Path(args.json).write_text(json.dumps(json_safe(figures), indent=1, default=str) + "\n")
    _ = BUCKETS
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
