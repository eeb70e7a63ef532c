"""Calibrated p10-p90 offsets per evidence source (:mod:`laser_ci.predictors.evidence`).

``evidence_bands.json`` in a baselines folder (``model/baselines/``)::

    {"offsets": {"siblings": [lo, hi], "workflow": [lo, hi], "repository": [lo, hi],
                 "same": [lo, hi],
                 "own": [lo, hi], "own/1": [lo, hi], "own/3": ..., ...},
     "info": {"<source>": {"n": ..., "from": "..."}, "command": "..."}}

(``same``: the band of a job predicted from the runs of the same job under another name,
:mod:`laser_ci.workflows.same_job`; ``own`` and ``own/<least runs>``: the band of a job's
own runs per history size, :mod:`laser_ci.predictors.own_runs`, written by
``benchmarks/own_runs.py --write-bands``.)

``lo`` and ``hi`` are log-space quantiles (0.1 and 0.9) of ``ln truth - ln p50`` of that
source's predictions on data the method was not fit on (``benchmarks/new_jobs.py
--write-bands``: cross-validated by repository on the shared runs, by time and job name on
the depth data). A missing or unreadable file means no calibrated offsets: the estimate
then keeps the cold band's width (:func:`laser_ci.predictors.evidence.runtime_of`).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

FILE = "evidence_bands.json"
SOURCES = ("siblings", "workflow", "repository", "same")


def band_offsets(residuals: Any, lo: float = 0.1, hi: float = 0.9,
                 weights: Any = None) -> tuple[float, float]:
    """(q_lo, q_hi) of log residuals ``ln truth - ln p50``, lo at most 0 and hi at least 0;
    with ``weights`` (one per residual, positive), quantiles of the weighted sample: the
    smallest residual whose cumulative weight reaches the share (numpy's ``inverted_cdf``
    where the weights are equal)."""
    r = np.asarray(list(residuals), dtype=float)
    if not len(r):
        return 0.0, 0.0
    if weights is None:
        q_lo, q_hi = np.quantile(r, [lo, hi])
    else:
        w = np.asarray(list(weights), dtype=float)
        if w.shape != r.shape or not (w > 0).all():
            raise ValueError("band_offsets: one positive weight per residual")
        order = np.argsort(r, kind="stable")
        cum = np.cumsum(w[order])
        # a share reached up to rounding counts as reached (weights of 1/3 sum to 0.99999...)
        at = np.searchsorted(cum, np.array([lo, hi]) * cum[-1] * (1 - 1e-9), side="left")
        q_lo, q_hi = r[order][np.minimum(at, len(r) - 1)]
    return float(min(q_lo, 0.0)), float(max(q_hi, 0.0))


def default_file(model_dir: str | os.PathLike[str] | None = None) -> Path:
    from laser_ci.predictors.choice import default_model_dir

    root = Path(model_dir) if model_dir is not None else default_model_dir()
    return root / "baselines" / FILE if (root / "baselines").is_dir() else root / FILE


def load_offsets(path: str | os.PathLike[str] | None = None) -> dict[str, tuple[float, float]]:
    """``{source: (lo, hi)}`` from ``path`` (default: the shipped model's); ``{}`` when the
    file is missing or does not hold offsets (an entry that is not two finite numbers with
    lo <= 0 <= hi is left out)."""
    p = Path(path) if path is not None else default_file()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    offsets = data.get("offsets") if isinstance(data, dict) else None
    out: dict[str, tuple[float, float]] = {}
    for source, pair in (offsets.items() if isinstance(offsets, dict) else ()):
        if (_known(source) and isinstance(pair, list) and len(pair) == 2
                and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                        and math.isfinite(x) for x in pair) and pair[0] <= 0 <= pair[1]):
            out[source] = (float(pair[0]), float(pair[1]))
    return out


def _known(key: str) -> bool:
    """An evidence source, or the own runs' band (``own``, ``own/<least runs>``,
    :mod:`laser_ci.predictors.own_runs`)."""
    return key in SOURCES or key == "own" or (
        key.startswith("own/") and key[4:].isdigit() and int(key[4:]) > 0)


def write_offsets(path: str | os.PathLike[str], offsets: dict[str, tuple[float, float]],
                  info: dict[str, Any]) -> None:
    data = {"offsets": {s: [round(lo, 4), round(hi, 4)] for s, (lo, hi) in offsets.items()},
            "info": info}
    Path(path).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
