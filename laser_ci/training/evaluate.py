"""``laser-ci eval DATA_DIR``: score every available predictor on a folder of CI history.

The folder is in the ``gha-runs`` format (see :mod:`laser_ci.training.examples`). By default one example
per run (``--kind workflow``: the whole workflow's text against ``run_time_s``) on the
``val`` repositories; ``--kind job`` scores the per-job examples instead, ``--kind all``
both. Metrics (:mod:`laser_ci.training.metrics`) are given on all examples and on ``success`` ones.

History regimes (``--history``, see :mod:`laser_ci.training.history`):

- ``none`` (default): every text is the cold-start text (``history: none``), as for a
  repository seen for the first time. The report is the one below, with ``"history":
  "none"``.
- ``prior``: each run's history is built from the earlier runs (strictly earlier commit
  date) of the same repository and workflow in the same folder, so the texts of runs with
  earlier runs carry the history block; the others keep the cold text. The same examples
  are also scored in the ``none`` regime, and both regimes on named subsets:

  - ``warm``: examples with at least one earlier run;
  - ``warm-changed``: those whose workflow file changed since the previous run (part of
    ``warm``);
  - ``cold``: examples without earlier runs (same text in both regimes).

JSON (``--format json``)::

    {"split", "kind", "history": "none" | "prior", "n", "n_success", "runs", "repos",
     "fallback",
     "subsets": {"warm": {"n", "n_success"}, "warm-changed": {...}, "cold": {...}},  # prior
     "predictors": {name: {"all": metrics, "success": metrics, "seconds",
                           # prior only: the regime's subsets, and the none regime
                           "subsets": {"warm": {"all", "success"}, "warm-changed": {...},
                                       "cold": {...}},
                           "regimes": {"none": {"all", "success", "subsets"}}}}}

``all``/``success`` (and ``subsets``) at the top of a predictor's entry are always the
requested regime; ``metrics`` is ``{"n", "log_mae", "mae_min", "spearman", "within_2x",
"coverage"}``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import click

from laser_ci.predictors.base import Predictor, Runtime
from laser_ci.training import metrics
from laser_ci.training.examples import KINDS, Example, load_examples, summarize
from laser_ci.training.history import REGIMES, SUBSETS, example_text, in_subset

COLUMNS = (
    ("n", "n"),
    ("log_mae", "log-MAE"),
    ("mae_min", "MAE min"),
    ("spearman", "Spearman"),
    ("within_2x", "within 2x"),
    ("coverage", "p10-p90 cov"),
)
SUBSET_TITLES = {
    "all": "all examples",
    "warm": "examples with earlier runs",
    "warm-changed": "examples with earlier runs whose workflow file changed since the "
                    "previous run",
    "cold": "examples without earlier runs",
}


def predict_texts(predictor: Predictor, texts: Sequence[str]) -> list[Runtime]:
    """Predictions for ``texts``, de-duplicating identical texts."""
    unique = list(dict.fromkeys(texts))
    preds = predictor.predict(unique)
    if len(preds) != len(unique):
        raise ValueError(f"{predictor.name}: {len(preds)} predictions for {len(unique)} texts")
    by_text = dict(zip(unique, preds, strict=True))
    return [by_text[t] for t in texts]


def predict_all(predictor: Predictor, examples: Sequence[Example],
                history: str = "none") -> list[Runtime]:
    """Predictions for every example in a history regime (``none``: the cold ``text``;
    ``prior``: ``text_warm`` where the example has earlier runs)."""
    return predict_texts(predictor, [example_text(e, history) for e in examples])


def score(
    predictions: Sequence[Runtime], examples: Sequence[Example]
) -> dict[str, dict[str, Any]]:
    """``{"all": metrics, "success": metrics}`` for one predictor's predictions."""
    intervals = metrics.has_intervals(predictions)
    out: dict[str, dict[str, Any]] = {}
    for subset in ("all", "success"):
        idx = [i for i, e in enumerate(examples) if subset == "all" or e.conclusion == "success"]
        out[subset] = metrics.compute(
            [predictions[i] for i in idx], [examples[i].runtime_s for i in idx], intervals
        )
    return out


def score_subsets(
    predictions: Sequence[Runtime], examples: Sequence[Example]
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{subset: {"all", "success"}}`` for the ``warm``, ``warm-changed`` and ``cold``
    subsets (see the module doc)."""
    out = {}
    for subset in SUBSETS:
        idx = [i for i, e in enumerate(examples) if in_subset(e, subset)]
        out[subset] = score([predictions[i] for i in idx], [examples[i] for i in idx])
    return out


def evaluate(
    predictors: Mapping[str, Predictor], examples: Sequence[Example], history: str = "none"
) -> tuple[dict[str, Any], dict[str, list[Runtime]]]:
    """The report (the ``--format json`` object, less split and kind) and each
    predictor's predictions in the requested regime."""
    if history not in REGIMES:
        raise ValueError(f"unknown history regime {history!r}; expected one of {REGIMES}")
    counts = summarize(examples)
    report: dict[str, Any] = {
        "history": history,
        "n": len(examples),
        "n_success": counts["success"],
        "runs": counts["runs"],
        "repos": counts["repos"],
        "fallback": counts["fallback"],
    }
    if history == "prior":
        report["subsets"] = {}
        for subset in SUBSETS:
            members = [e for e in examples if in_subset(e, subset)]
            report["subsets"][subset] = {
                "n": len(members), "n_success": sum(e.conclusion == "success" for e in members)}
    report["predictors"] = {}
    all_preds: dict[str, list[Runtime]] = {}
    texts = [example_text(e, history) for e in examples]
    cold_texts = [e.text for e in examples]
    for name, predictor in predictors.items():
        t0 = time.perf_counter()
        if history == "prior":  # one batch for both regimes (cold examples: same text)
            both = predict_texts(predictor, texts + cold_texts)
            preds, cold = both[: len(texts)], both[len(texts):]
        else:
            preds = predict_texts(predictor, texts)
        all_preds[name] = preds
        res: dict[str, Any] = score(preds, examples)
        if history == "prior":
            res["subsets"] = score_subsets(preds, examples)
            res["regimes"] = {"none": {**score(cold, examples),
                                       "subsets": score_subsets(cold, examples)}}
        res["seconds"] = round(time.perf_counter() - t0, 2)
        report["predictors"][name] = res
    return report, all_preds


def _fmt(key: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if key == "n":
        return str(value)
    if key in ("within_2x", "coverage"):
        return f"{100 * value:.1f}%"
    if key == "mae_min":
        return f"{value:.2f}"
    return f"{value:.3f}"


def rows(report: Mapping[str, Any], subset: str = "all",
         regimes: Sequence[str] | None = None) -> list[list[str]]:
    """Table rows ``[predictor, (history,) runs, metrics...]`` of one subset; with
    ``regimes``, one row pair per regime and a history column."""
    out = []
    for name, res in report["predictors"].items():
        for regime in regimes or (None,):
            block = res if regime in (None, report.get("history")) else res["regimes"][regime]
            if subset != "all":
                block = block["subsets"][subset]
            for runs in ("all", "success"):
                m = block[runs]
                head = [name] if regime is None else [name, regime]
                out.append(head + [runs] + [_fmt(k, m.get(k)) for k, _ in COLUMNS])
    return out


def _table(header: list[str], body: list[list[str]], n_text: int, markdown: bool) -> list[str]:
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join(["---"] * n_text + ["---:"] * (len(header) - n_text)) + "|"]
        return lines + ["| " + " | ".join(r) + " |" for r in body]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < n_text else c.rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths, strict=True)))

    return [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in body]


def render_table(report: Mapping[str, Any], markdown: bool = False) -> str:
    """The metrics table; with ``history: prior`` one table per subset (``all``, ``warm``,
    ``warm-changed``, ``cold``), each predictor in both regimes (``cold``: one regime)."""
    metric_titles = [title for _, title in COLUMNS]
    if report.get("history", "none") != "prior":
        header = ["predictor", "runs"] + metric_titles
        return "\n".join(_table(header, rows(report), 2, markdown)) + "\n"
    header = ["predictor", "history", "runs"] + metric_titles
    blocks = []
    for subset in ("all", *SUBSETS):
        regimes = ("prior",) if subset == "cold" else ("prior", "none")
        n = report["n"] if subset == "all" else report["subsets"][subset]["n"]
        title = f"{subset}: {n} {SUBSET_TITLES[subset]}"
        title = f"**{title}**\n" if markdown else title
        blocks.append("\n".join([title, *_table(header, rows(report, subset, regimes), 3,
                                                markdown)]))
    return "\n\n".join(blocks) + "\n"


def describe(report: Mapping[str, Any]) -> str:
    history = report.get("history", "none")
    text = (
        f"split={report.get('split')} kind={report.get('kind')} history={history}: "
        f"{report['n']} examples ({report['n_success']} success) from {report['runs']} runs "
        f"in {report['repos']} repos; {report['fallback']} fallback texts (unreadable "
        f"workflow file)"
    )
    if history == "prior":
        sub = report["subsets"]
        text += (f"; {sub['warm']['n']} with earlier runs ({sub['warm-changed']['n']} of them "
                 f"after a workflow file change), {sub['cold']['n']} without")
    return text


def plot(
    path: str,
    examples: Sequence[Example],
    predictions: Mapping[str, Sequence[Runtime]],
    title: str = "",
) -> None:
    """Predicted vs actual on log-log axes, one colour per predictor, y = x and the 2x band."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise click.ClickException(
            "--plot needs matplotlib: pip install 'laser-ci[train]'"
        ) from exc
    import numpy as np

    true = np.maximum([e.runtime_s for e in examples], 1.0)
    fig, ax = plt.subplots(figsize=(7, 6.5), dpi=120)
    lo = float(true.min()) if len(true) else 1.0
    hi = float(true.max()) if len(true) else 10.0
    for name, preds in predictions.items():
        p = np.maximum([r.p50 for r in preds], 1.0)
        if len(p):
            lo, hi = min(lo, float(p.min())), max(hi, float(p.max()))
        ax.scatter(true, p, s=7, alpha=0.45, label=name, edgecolors="none")
    lo, hi = lo / 1.5, hi * 1.5
    xs = np.geomspace(lo, hi, 50)
    ax.plot(xs, xs, color="black", lw=1, label="y = x")
    ax.fill_between(xs, xs / 2, xs * 2, color="grey", alpha=0.15, label="within 2x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("actual runtime (s)")
    ax.set_ylabel("predicted runtime, p50 (s)")
    ax.set_title(title or "laser-ci eval")
    ax.legend(loc="upper left", fontsize=8, markerscale=2)
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


@click.command("eval")
@click.argument("data_dir", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--split", type=click.Choice(["train", "val", "all"]), default="val", show_default=True,
    help="Repositories to score (split by a hash of owner/name, see laser_ci.training.examples).",
)
@click.option(
    "--kind", type=click.Choice(["workflow", "job", "all"]), default="workflow",
    show_default=True,
    help="workflow: one example per run; job: per-job examples; all: both.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
    show_default=True,
)
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write predicted vs actual (log-log) to this PNG.")
@click.option("--model", "model_dir", type=click.Path(file_okay=False), default=None,
              help="Model folder (default: the shipped model/).")
@click.option("--predictor", "only", multiple=True,
              help="Only these predictors (repeatable; default: all available).")
@click.option(
    "--history", type=click.Choice(list(REGIMES)), default="none", show_default=True,
    help="none: cold-start texts only; prior: each run also sees its earlier runs in "
         "DATA_DIR (causal), scored in both regimes and on the warm, warm-changed and cold "
         "subsets.",
)
@click.option("--no-cache", is_flag=True, help="Re-parse the data instead of using the cache.")
def eval_command(
    data_dir: str,
    split: str,
    kind: str,
    fmt: str,
    plot_path: str | None,
    model_dir: str | None,
    only: tuple[str, ...],
    history: str,
    no_cache: bool,
) -> None:
    """Score every available predictor on DATA_DIR (a folder in the gha-runs format)."""
    from laser_ci.predictors.choice import available_predictors

    predictors: dict[str, Predictor] = dict(available_predictors(model_dir))
    if only:
        missing = [n for n in only if n not in predictors]
        if missing:
            raise click.ClickException(
                f"unknown predictor(s) {', '.join(missing)}; available: "
                f"{', '.join(predictors) or 'none'}"
            )
        predictors = {n: predictors[n] for n in only}
    if not predictors:
        raise click.ClickException(
            "no predictors found; train them with `python benchmarks/baselines.py`"
        )
    kinds = KINDS if kind == "all" else (kind,)
    examples = load_examples(data_dir, kinds=kinds, split=split, cache=not no_cache,
                             history=history == "prior")
    if not examples:
        raise click.ClickException(f"no examples in {data_dir} for split={split} kind={kind}")
    report, preds = evaluate(predictors, examples, history)
    report = {"split": split, "kind": kind, **report}
    if fmt == "json":
        click.echo(json.dumps(_finite(report), indent=2, allow_nan=False))
    else:
        click.echo(describe(report) if fmt == "table" else f"_{describe(report)}_\n")
        click.echo(render_table(report, markdown=fmt == "markdown"), nl=False)
    if plot_path:
        plot(plot_path, examples, preds,
             title=f"laser-ci eval: split={split}, kind={kind}, history={history}")
        click.echo(f"wrote {plot_path}", err=True)


def _finite(value: Any) -> Any:
    """NaN (e.g. Spearman of a constant predictor) becomes null in JSON."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
