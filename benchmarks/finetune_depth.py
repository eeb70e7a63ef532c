"""Does learning one repository pay (issue 53)? ``laser-ci finetune`` on a per-job history,
scored against the shipped model, issue 49's evidence method and the per-name median.

    nice -n 10 python benchmarks/finetune_depth.py [--depth ../shared/data/depth/iree-org+iree]
        [--test-days 3] [--minutes 20] [--threads 2] [--sizes all|1000,3000,10000,all]
        [--out runs/finetune_depth] [--reuse] [--json runs/finetune_depth.json]
    python benchmarks/finetune_depth.py --pool 0=DIR0,1=DIR1   # new jobs of several groups

The split is :mod:`laser_ci.evaluation.new_jobs`'s depth protocol: the last ``--test-days``
days are the test, the runs before them the history; one of its five groups of job names
(``--held-group``) is held out of the history *and* of the training folder (new jobs). The
training folder (the history less those names; with a size N, its latest runs holding N
job rows) goes through :func:`laser_ci.training.learn.learn_repository` from ``--base``, as
``laser-ci finetune --data TRAIN --base BASE --out DIR`` does, with ``--finetune-minutes``
as its time budget. Every method then predicts the test jobs as ``laser-ci estimate
--model M --history HISTORY`` would (:func:`laser_ci.estimate.estimate_workflows`, the
workflow files of the latest run before the cut, the whole history less the held-out
names): the fine-tuned model, the shipped model (``--base``), and the default predictor
with issue 49's evidence (``load_predictor()``); and the median of each name's earlier
successful runs, where it has some. Scored on the successful test runs, three subsets:

- (i) new jobs: the held-out names;
- (ii) changed: names with history whose serialized job text at the cut differs from
  their text at the first version of their workflow file in the data, or that the first
  version lacks (the repository line of both from the cut's profile: the job's
  configuration changed, not the repository's size);
- (iii) every scored job run of the test days (both of the above and the rest).

"fine-tuned" is the learned folder as ``estimate --model DIR --history`` uses it: a job with
successful runs of its own from them (:mod:`laser_ci.predictors.own_runs`, the folder
carries the shipped bands), the others from the model (with the evidence on top); "its warm
texts" is the model on every job's text, history block included; "no evidence" on the cold
text alone. Paired differences (fine-tuned minus the other) with 95% intervals that
resample job names (:func:`laser_ci.training.metrics.paired_log_mae_diff`), and each
method's p10-p90 coverage.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.evaluation.new_jobs import DAY, _fold, _history_before, _read_runs, _truth, _workflows_at  # noqa: E402
from laser_ci.training.metrics import format_diff, log_mae, paired_log_mae_diff  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEPTH = ROOT.parent / "shared" / "data" / "depth" / "iree-org+iree"


@dataclass
class Split:
    """The depth protocol's split: test window, history, held-out names and the subsets."""

    folder: Path
    runs: list[tuple[float, dict[str, Any]]]
    cut: float
    end: float
    held: set[tuple[str, str]]
    changed: set[tuple[str, str]]
    truth: dict[tuple[str, str], list[tuple[float, bool]]]
    history: Any = None
    workflows: list[Any] = field(default_factory=list)
    profile: Any = None


def _texts(workflows: list[Any], profile: Any, history: Any) -> dict[tuple[str, str], str]:
    """The serialized cold text of every (path, job name) of ``workflows``, matrices computed
    at run time expanded from ``history``'s runs (the first instance of a name)."""
    from laser_ci.text.serialize import serialize_job
    from laser_ci.workflows import runtime_matrix

    out: dict[tuple[str, str], str] = {}
    for wf in workflows:
        wf = runtime_matrix.expand(wf, history.runs_of(wf.path))
        for job in wf.jobs:
            out.setdefault((wf.path, job.name), serialize_job(job, wf, profile))
    return out


def _workflows_first(runs: list[tuple[float, dict[str, Any]]], paths: set[str], folder: Path,
                     ) -> list[Any]:
    """The workflows of ``paths`` at the files of their first run in the data."""
    first: dict[str, float] = {}
    for t, row in runs:
        first.setdefault(str(row.get("workflow_path") or ""), t)
    out = []
    for path in sorted(paths & set(first)):
        out += _workflows_at(runs, first[path] + 1e-3, [path], folder)[0]
    return out


def make_split(folder: Path, test_days: float, groups: int, held_group: int) -> Split:
    runs = _read_runs(folder)
    end = runs[-1][0] + 1.0
    cut = end - test_days * DAY
    history = _history_before(folder, runs, cut)
    truth = _truth(runs, cut, end)
    workflows, profile = _workflows_at(runs, cut, history.runs, folder)
    now = _texts(workflows, profile, history)
    keys = [k for k in now if k in truth]
    held = {k for k in keys if _fold(f"{k[0]}|{k[1]}", groups) == held_group}
    first_wfs = _workflows_first(runs, {p for p, _ in keys}, folder)
    before = _texts(first_wfs, profile, history)  # the job's configuration, not the repository's
    changed = {k for k in keys if k not in held and history.for_job(*k) is not None
               and before.get(k) != now[k]}
    gone = {k for k in history.jobs if k in held}
    history = replace(history, jobs={k: v for k, v in history.jobs.items() if k not in gone})
    return Split(folder, runs, cut, end, held, changed, truth, history, workflows, profile)


def write_training(split: Split, out: Path, size: int | None) -> dict[str, int]:
    """The runs before the cut, the held-out names' jobs removed, in the ``collect`` format
    (blobs and corpus linked); with ``size``, only the latest runs holding ``size`` job rows."""
    rows = []
    for t, row in split.runs:
        if t >= split.cut:
            break
        path = str(row.get("workflow_path") or "")
        jobs = [j for j in row.get("jobs") or () if (path, str(j.get("name"))) not in split.held]
        if jobs:
            rows.append({**row, "jobs": jobs})
    if size is not None:
        kept, n = [], 0
        for row in reversed(rows):
            if n >= size:
                break
            kept.append(row)
            n += len(row["jobs"])
        rows = kept[::-1]
    out.mkdir(parents=True, exist_ok=True)
    with gzip.open(out / "runs.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    for name in os.listdir(split.folder):
        if name.startswith(("blobs.", "corpus.")) and not (out / name).exists():
            os.symlink(split.folder.resolve() / name, out / name)
    return {"runs": len(rows), "job_rows": sum(len(r["jobs"]) for r in rows)}


def predictions(split: Split, predictor: Any, own_runs: bool = False,
                ) -> dict[tuple[str, str], dict[str, Any]]:
    """Per scored (path, name): the p50 ``estimate --history`` gives (``p50``), its evidence
    source, and the predictor's p50 on the cold text (``cold``). ``own_runs``: a job with
    runs of its own from them (:mod:`laser_ci.predictors.own_runs`), as ``estimate`` does
    with the shipped model; False, as with ``--model DIR`` (a folder without own bands)."""
    from laser_ci.estimate import estimate_workflows

    result = estimate_workflows(split.workflows, [], predictor, split.profile,
                                history=split.history, own_runs=own_runs)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for wf in result["workflows"]:
        for job in wf["jobs"]:
            key = (wf["path"], job["name"])
            if key in split.truth and key not in out:
                rt = job["runtime_s"]
                out[key] = {"p50": float(rt["p50"]), "p10": float(rt["p10"]),
                            "p90": float(rt["p90"]), "source": job.get("history_source")}
    texts = _texts(split.workflows, split.profile, split.history)
    keys = [k for k in out if k in texts]
    for k, rt in zip(keys, predictor.predict([texts[k] for k in keys]), strict=True):
        out[k]["cold"] = float(rt.p50)
    return out


def medians(split: Split) -> dict[tuple[str, str], float]:
    from laser_ci.predictors.evidence import typical_runs

    out = {}
    for key in split.truth:
        past = split.history.for_job(*key)
        typical = typical_runs(past, window=10**9) if past is not None else []
        if len(typical):
            out[key] = float(np.median(typical))
    return out


def score(split: Split, preds: dict[str, dict[tuple[str, str], dict[str, Any]]],
          median: dict[tuple[str, str], float]) -> tuple[str, dict[str, Any]]:
    """The table: per subset, log-MAE of every method and the fine-tuned model's paired
    differences against each (successful test runs, names resampled)."""
    scored = [k for k in split.truth if all(k in p for p in preds.values())]
    subsets = {"(i) new jobs (held-out names)": [k for k in scored if k in split.held],
               "(ii) configuration changed": [k for k in scored if k in split.changed],
               "(iii) every job run": scored}
    methods = {"fine-tuned": ("finetuned", "p50"), "fine-tuned, no evidence": ("finetuned", "cold"),
               "fine-tuned, its warm texts": ("finetuned_text", "p50"),
               "shipped LM": ("shipped", "p50"), "evidence (issue 49)": ("evidence", "p50")}
    lines = ["| subset | runs | names | " + " | ".join(methods) + " | median | "
             "Δ vs evidence [95%] | Δ vs shipped LM [95%] | Δ vs median [95%] (runs) | "
             "p10-p90 coverage: fine-tuned / evidence |",
             "|---|---:|---:|" + "---:|" * (len(methods) + 1) + "---|---|---|---|"]
    figures: dict[str, Any] = {}
    for name, keys in subsets.items():
        rows = [(k, s) for k in keys for s, ok in split.truth[k] if ok]
        if not rows:
            lines.append(f"| {name} | 0 | 0 |" + " – |" * (len(methods) + 5))
            continue
        truth = [s for _, s in rows]
        groups = [k[1] for k, _ in rows]
        got = {m: [preds[w][k][f] for k, _ in rows] for m, (w, f) in methods.items()}
        fig: dict[str, Any] = {"runs": len(rows), "names": len(set(groups)),
                               **{m: log_mae(p, truth) for m, p in got.items()}}
        for m, w in (("coverage", "finetuned"), ("coverage_evidence", "evidence")):
            fig[m] = float(np.mean([preds[w][k]["p10"] <= t <= preds[w][k]["p90"]
                                    for (k, _), t in zip(rows, truth, strict=True)]))
        fig["vs_evidence"] = paired_log_mae_diff(got["fine-tuned"], got["evidence (issue 49)"],
                                                 truth, groups)
        fig["vs_shipped"] = paired_log_mae_diff(got["fine-tuned"], got["shipped LM"], truth,
                                                groups)
        with_median = [i for i, (k, _) in enumerate(rows) if k in median]
        med = "–"
        vs_med = "–"
        if with_median:
            def sel(xs: list[Any], idx: list[int] = with_median) -> list[Any]:
                return [xs[i] for i in idx]

            m = [median[rows[i][0]] for i in with_median]
            fig["median"] = log_mae(m, sel(truth))
            fig["median_runs"] = len(with_median)
            fig["vs_median"] = paired_log_mae_diff(sel(got["fine-tuned"]), m, sel(truth),
                                                   sel(groups))
            med = f"{fig['median']:.3f}"
            vs_med = f"{format_diff(fig['vs_median'])} ({len(with_median):,})"
        figures[name] = fig
        lines.append(f"| {name} | {len(rows):,} | {fig['names']} | "
                     + " | ".join(f"{fig[m]:.3f}" for m in methods)
                     + f" | {med} | {format_diff(fig['vs_evidence'])} | "
                     f"{format_diff(fig['vs_shipped'])} | {vs_med} | "
                     f"{fig['coverage']:.0%} / {fig['coverage_evidence']:.0%} |")
    return "\n".join(lines) + "\n", figures


def main() -> None:
    from laser_ci.predictors.choice import load_predictor
    from laser_ci.training.finetune import FINETUNE_CONFIG
    from laser_ci.training.learn import learn_repository

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", default=str(DEPTH))
    ap.add_argument("--base", default=str(ROOT / "model" / "lm"))
    ap.add_argument("--test-days", type=float, default=3.0)
    ap.add_argument("--groups", type=int, default=5)
    ap.add_argument("--held-group", type=int, default=0)
    ap.add_argument("--sizes", default="all", help="comma-separated job rows, or all")
    ap.add_argument("--minutes", "--finetune-minutes", dest="minutes", type=float, default=20.0,
                    help="laser-ci finetune --minutes: the whole learning's budget")
    ap.add_argument("--epochs", type=int, default=FINETUNE_CONFIG.epochs)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "runs" / "finetune_depth"))
    ap.add_argument("--reuse", action="store_true",
                    help="score a size's model already in OUT instead of fine-tuning again")
    ap.add_argument("--pool", default=None,
                    help="GROUP=MODEL_DIR,...: no fine-tuning; the new jobs (i) of several "
                         "held-out groups, each predicted by the model fine-tuned without "
                         "them, pooled into one table")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.pool:
        print(pooled(args))
        return
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)

    t0 = time.time()
    split = make_split(Path(args.depth), args.test_days, args.groups, args.held_group)
    print(f"split: cut {time.strftime('%Y-%m-%d %H:%M', time.gmtime(split.cut))} UTC, "
          f"{len(split.truth)} names in the test days, {len(split.held)} held out, "
          f"{len(split.changed)} changed ({time.time() - t0:.0f} s)", flush=True)
    t = time.time()
    fixed = {"shipped": predictions(split, load_predictor(args.base)),
             "evidence": predictions(split, load_predictor(), own_runs=True)}
    median = medians(split)
    print(f"shipped LM and evidence predicted ({time.time() - t:.0f} s)", flush=True)
    out = Path(args.out)
    figures: dict[str, Any] = {"command": " ".join(sys.argv)}
    cfg = replace(FINETUNE_CONFIG, epochs=args.epochs, threads=args.threads)
    for size_arg in args.sizes.split(","):
        size = None if size_arg == "all" else int(size_arg)
        where = out / f"size-{size_arg}"
        model_dir = where / "model"
        data = write_training(split, where / "train", size)
        t = time.time()
        if not (args.reuse and (model_dir / "laser.json").is_file()):
            log = learn_repository(where / "train", args.base, model_dir, cfg, device="cpu",
                                   minutes=args.minutes,
                                   say=lambda line: print(f"  {line}", flush=True))
            info = {"seconds": round(time.time() - t), "data": log["data"],
                    "learned": log["learned"],
                    "log": {k: v for k, v in log.items() if k not in ("config", "learned")}}
            (where / "finetune_info.json").write_text(json.dumps(info, indent=1) + "\n")
        else:
            info = json.loads((where / "finetune_info.json").read_text())
        t = time.time()
        learned = load_predictor(model_dir)
        preds = {"finetuned": predictions(split, learned, own_runs=True),
                 "finetuned_text": predictions(split, learned), **fixed}
        text, figs = score(split, preds, median)
        size_mb = sum(p.stat().st_size for p in model_dir.iterdir() if p.is_file()) / 2**20
        print(f"\n**size {size_arg}: trained on {data['job_rows']:,} job rows "
              f"({data['runs']:,} runs) in {info['seconds'] / 60:.1f} min "
              f"(budget {args.minutes:g} min, {args.threads} threads); its own check on "
              f"its latest runs: {json.dumps(info['learned']['figures'])}; "
              f"model folder {size_mb:.1f} MB; "
              f"scored in {time.time() - t:.0f} s**\n\n{text}", flush=True)
        figures[size_arg] = {"training": data, "finetune": info, "table": figs}
        if args.json:
            from laser_ci.evaluation.evaluate import json_safe

            Path(args.json).write_text(json.dumps(json_safe(figures), indent=1) + "\n")
    print(summary(figures))
    print(f"total {time.time() - t0:.0f} s")


def pooled(args: argparse.Namespace) -> str:
    """``--pool``: the held-out names of every group given, each group's runs predicted by
    its own fine-tuned model and by the other methods on its own history (module doc)."""
    from laser_ci.predictors.choice import load_predictor

    truth: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    preds: dict[str, dict[tuple[str, str], dict[str, Any]]] = {
        "finetuned": {}, "finetuned_text": {}, "shipped": {}, "evidence": {}}
    shipped, default = load_predictor(args.base), load_predictor()
    first = None
    for part in args.pool.split(","):
        group, model_dir = part.split("=", 1)
        split = make_split(Path(args.depth), args.test_days, args.groups, int(group))
        first = first or split
        learned = load_predictor(model_dir)
        got = {"finetuned": predictions(split, learned, own_runs=True),
               "finetuned_text": predictions(split, learned),
               "shipped": predictions(split, shipped),
               "evidence": predictions(split, default, own_runs=True)}
        for k in split.held:
            truth[k] = split.truth[k]
            for method, p in got.items():
                if k in p:
                    preds[method][k] = p[k]
    assert first is not None
    merged = replace(first, truth=truth, held=set(truth), changed=set())
    text, _ = score(merged, preds, {})
    return f"**new jobs of groups {args.pool}, pooled**\n\n{text}"


def summary(figures: dict[str, Any]) -> str:
    """One line per size: what it learned from, and the fine-tuned model's log-MAE and
    paired difference against the evidence on each subset."""
    names = ["(i) new jobs (held-out names)", "(ii) configuration changed",
             "(iii) every job run"]
    lines = ["| learned from | job rows | minutes | " + " | ".join(
        f"{n.split(' ')[0]} fine-tuned (evidence) | {n.split(' ')[0]} Δ [95%]" for n in names)
        + " |", "|---|---:|---:|" + "---:|---|" * len(names)]
    for size, fig in figures.items():
        if not isinstance(fig, dict):
            continue
        table = fig["table"]
        cells = []
        for n in names:
            t = table.get(n)
            cells += ([f"{t['fine-tuned']:.3f} ({t['evidence (issue 49)']:.3f})",
                       format_diff(t["vs_evidence"])] if t else ["–", "–"])
        lines.append(f"| {size} | {fig['training']['job_rows']:,} | "
                     f"{fig['finetune']['seconds'] / 60:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
