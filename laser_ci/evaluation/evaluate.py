"""``laser-ci eval DATA_DIR``: score every available predictor on a folder of CI history.

The scoring and the report are here; the command's options are in
:mod:`laser_ci.evaluation.eval_command` (it also dispatches ``--folds K`` to
:mod:`laser_ci.evaluation.crossval`, which builds on this module).

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

``--folds K`` scores no shipped file: it cross-validates every trainable predictor by
repository over the whole folder (each trained by its recipe on K - 1 folds, scored on the
held-out one), with the band metrics and paired differences between predictors;
``--write-cards`` stores the result in the cards :mod:`laser_ci.predictors.choice` reads.
See :mod:`laser_ci.evaluation.crossval`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import click

from laser_ci.evaluation.regimes import REGIMES, SUBSETS, example_text, in_subset
from laser_ci.predictors.base import Predictor, Runtime
from laser_ci.training import metrics
from laser_ci.training.examples import Example, summarize

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


def score(
    predictions: Sequence[Runtime], examples: Sequence[Example], bands: bool = False
) -> dict[str, dict[str, Any]]:
    """``{"all": metrics, "success": metrics}`` for one predictor's predictions (``bands``:
    with the band metrics, :func:`laser_ci.training.metrics.compute`)."""
    intervals = metrics.has_intervals(predictions)
    out: dict[str, dict[str, Any]] = {}
    for subset in ("all", "success"):
        idx = [i for i, e in enumerate(examples) if subset == "all" or e.conclusion == "success"]
        out[subset] = metrics.compute(
            [predictions[i] for i in idx], [examples[i].runtime_s for i in idx], intervals,
            bands=bands,
        )
    return out


def score_subsets(
    predictions: Sequence[Runtime], examples: Sequence[Example], bands: bool = False
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{subset: {"all", "success"}}`` for the ``warm``, ``warm-changed`` and ``cold``
    subsets (see the module doc)."""
    out = {}
    for subset in SUBSETS:
        idx = [i for i, e in enumerate(examples) if in_subset(e, subset)]
        out[subset] = score([predictions[i] for i in idx], [examples[i] for i in idx], bands)
    return out


def report_head(examples: Sequence[Example], history: str) -> dict[str, Any]:
    """The report's counts (and, with ``history: prior``, its subsets' sizes)."""
    if history not in REGIMES:
        raise ValueError(f"unknown history regime {history!r}; expected one of {REGIMES}")
    counts = summarize(examples)
    head: dict[str, Any] = {
        "history": history,
        "n": len(examples),
        "n_success": counts["success"],
        "runs": counts["runs"],
        "repos": counts["repos"],
        "fallback": counts["fallback"],
    }
    if history == "prior":
        head["subsets"] = {}
        for subset in SUBSETS:
            members = [e for e in examples if in_subset(e, subset)]
            head["subsets"][subset] = {
                "n": len(members), "n_success": sum(e.conclusion == "success" for e in members)}
    return head


def predictor_entry(preds: Sequence[Runtime], cold: Sequence[Runtime] | None,
                    examples: Sequence[Example], history: str,
                    bands: bool = False) -> dict[str, Any]:
    """One predictor's entry of the report from its predictions in the requested regime
    (``preds``) and, with ``history: prior``, in the ``none`` regime (``cold``)."""
    res: dict[str, Any] = score(preds, examples, bands)
    if history == "prior":
        if cold is None:
            raise ValueError("history prior needs the none regime's predictions too")
        res["subsets"] = score_subsets(preds, examples, bands)
        res["regimes"] = {"none": {**score(cold, examples, bands),
                                   "subsets": score_subsets(cold, examples, bands)}}
    return res


def evaluate(
    predictors: Mapping[str, Predictor], examples: Sequence[Example], history: str = "none"
) -> tuple[dict[str, Any], dict[str, list[Runtime]]]:
    """The report (the ``--format json`` object, less split and kind) and each
    predictor's predictions in the requested regime."""
    report = report_head(examples, history)
    report["predictors"] = {}
    all_preds: dict[str, list[Runtime]] = {}
    texts = [example_text(e, history) for e in examples]
    cold_texts = [e.text for e in examples]
    for name, predictor in predictors.items():
        t0 = time.perf_counter()
        cold = None
        if history == "prior":  # one batch for both regimes (cold examples: same text)
            both = predict_texts(predictor, texts + cold_texts)
            preds, cold = both[: len(texts)], both[len(texts):]
        else:
            preds = predict_texts(predictor, texts)
        all_preds[name] = preds
        res = predictor_entry(preds, cold, examples, history)
        res["seconds"] = round(time.perf_counter() - t0, 2)
        report["predictors"][name] = res
    return report, all_preds


def format_metric(key: str, value: Any) -> str:
    """One table cell: ``-`` for missing, counts as integers, shares as percent, band
    widths as ``12.3x``, the rest with three decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if key == "n":
        return str(value)
    if key in ("within_2x", "coverage"):
        return f"{100 * value:.1f}%"
    if key == "width":
        return f"{value:.1f}x"
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
                out.append(head + [runs] + [format_metric(k, m.get(k)) for k, _ in COLUMNS])
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


def json_safe(value: Any) -> Any:
    """NaN and infinities (e.g. Spearman of a constant predictor) become null in JSON."""
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
