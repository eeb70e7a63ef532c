"""The targets a model writes after the runtime: what a job used (issue 53, part 5).

LASER's output is every target of a job in one object, the runtime first. A model learned
from a history that holds usage records (the measure step's, :mod:`laser_ci.measure.record`,
which ``laser-ci collect`` keeps per job run) writes, after the runtime::

    {"runtime_s": "4.73e+02", "cpu_cores": "1.85e+00", "memory_gb": "3.21e+00",
     "disk_gb": "1.20e+00"}

in the runtime's number format (:class:`laser_ci.text.numbers.NumberCodec`), each target's
digits decoded under the same mask with its key prefix-filled
(:meth:`laser_ci.text.tokenize.PromptCodec.target`). The values, from one record:

- ``cpu_cores``: the cores busy at the run's 95th percentile (``cpu_cores_p95``);
- ``memory_gb``: the machine's peak memory in use (``memory_peak_bytes``), in GB;
- ``disk_gb``: what the run added to the disk (peak used less used at the start), in GB.

A record without all three gives none: its run teaches the runtime only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

USAGE_TARGETS = ("cpu_cores", "memory_gb", "disk_gb")  # in the order they are written
GB = 1e9


def _number(record: Mapping[str, Any], key: str) -> float | None:
    v = record.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        return None
    return float(v)


def usage_targets(record: Mapping[str, Any] | None) -> dict[str, float] | None:
    """The usage targets of one usage record (module doc); None unless it has all three."""
    if not isinstance(record, Mapping):
        return None
    cpu = _number(record, "cpu_cores_p95")
    mem = _number(record, "memory_peak_bytes")
    peak, base = _number(record, "disk_used_peak_bytes"), _number(record, "disk_used_baseline_bytes")
    if cpu is None or mem is None or peak is None or base is None:
        return None
    return {"cpu_cores": cpu, "memory_gb": mem / GB, "disk_gb": max(peak - base, 0.0) / GB}
