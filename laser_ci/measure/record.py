"""The usage record: one JSON object per measured job run (or command).

Written by :mod:`laser_ci.measure.sampler` (``laser-ci measure``) and by the Action's
``measure`` step (``measure/sampler.js``, the same keys), read back by ``laser-ci collect``
and the Action's history fetch (:func:`parse_record` keeps what is well formed). Keys::

    version, kind ("laser-ci-usage"), os ("linux", "darwin", "win32"), interval_s,
    samples, duration_s, started_at, ended_at (ISO 8601 UTC), cpu_count,
    cpu_cores_mean, cpu_cores_p95        cores busy on the whole machine, per interval
    memory_baseline_bytes                used at the start (total - available)
    memory_peak_bytes, memory_total_bytes
    memory_source                        "meminfo" (the machine), or "cgroup" where a
                                         memory limit is tighter (a container: used is
                                         memory.current less inactive page cache)
    disk_used_baseline_bytes, disk_used_peak_bytes, disk_free_min_bytes, disk_total_bytes
                                         the file system measured
    disk_read_bytes, disk_write_bytes, net_rx_bytes, net_tx_bytes  over the run
    sampler_cpu_cores                    the sampler's own CPU time / wall time
    missing                              the keys this OS could not measure (their value: null)

``laser-ci measure`` adds ``command``, ``exit_code``, ``command_cpu_s`` (the CPU time of the
command's process tree), ``command_cpu_cores`` (that over its wall time),
``command_rss_peak_bytes`` (the largest resident set of one of its processes; null where
it is no more than what its process was forked with) and
``command_memory_peak_bytes`` (the peak of its process tree's resident memory, summed, as
sampled). The Action adds ``job``, ``run_id``, ``run_attempt``, ``runner_name`` and
``runner_os``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

KIND = "laser-ci-usage"
VERSION = 1
NUMBERS = (
    "interval_s", "samples", "duration_s", "cpu_count",
    "cpu_cores_mean", "cpu_cores_p95",
    "memory_baseline_bytes", "memory_peak_bytes", "memory_total_bytes",
    "disk_used_baseline_bytes", "disk_used_peak_bytes", "disk_free_min_bytes",
    "disk_total_bytes",
    "disk_read_bytes", "disk_write_bytes", "net_rx_bytes", "net_tx_bytes",
    "sampler_cpu_cores", "command_cpu_s", "command_cpu_cores", "command_rss_peak_bytes",
    "command_memory_peak_bytes",
    "run_id", "run_attempt", "exit_code",
)
TEXTS = ("kind", "os", "started_at", "ended_at", "job", "runner_name", "runner_os",
         "memory_source")
MAX_TEXT = 200


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) by linear interpolation, as numpy's default; None when empty."""
    xs = sorted(values)
    if not xs:
        return None
    pos = (len(xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return value


def parse_record(obj: Any) -> dict[str, Any] | None:
    """The well-formed part of a usage record read from elsewhere (an artifact, a collected
    row): known numbers that are finite and not negative, short texts, ``missing`` as a list
    of names. None when it is not a record (not an object, another ``kind``, no samples)."""
    if not isinstance(obj, dict) or obj.get("kind") != KIND:
        return None
    out: dict[str, Any] = {"kind": KIND, "version": VERSION}
    for key in NUMBERS:
        x = _number(obj.get(key))
        if x is not None:
            out[key] = x
    for key in TEXTS:
        if isinstance(obj.get(key), str):
            out[key] = obj[key][:MAX_TEXT]
    missing = obj.get("missing")
    if isinstance(missing, list):
        out["missing"] = [str(m)[:60] for m in missing if isinstance(m, str)][:40]
    if not out.get("samples"):
        return None
    return out


def _bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n:.0f} B"


def _cores(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def table(rec: dict[str, Any]) -> str:
    """The record as aligned lines for a terminal."""
    base, peak = rec.get("memory_baseline_bytes"), rec.get("memory_peak_bytes")
    rows = [
        ("duration", f"{rec.get('duration_s', 0):.1f} s, {rec.get('samples', 0)} samples "
                     f"every {rec.get('interval_s', 0):g} s"),
        ("CPU (machine)", f"mean {_cores(rec.get('cpu_cores_mean'))}, "
                          f"p95 {_cores(rec.get('cpu_cores_p95'))} of "
                          f"{rec.get('cpu_count', '?')} cores"),
    ]
    if "command_cpu_cores" in rec:
        rows.append(("CPU (command)", f"{_cores(rec.get('command_cpu_cores'))} cores "
                                      f"({rec.get('command_cpu_s', 0):.2f} s of CPU)"))
    rows.append(("memory", f"peak {_bytes(peak)}, baseline {_bytes(base)}, "
                           f"peak above baseline "
                           f"{_bytes(None if peak is None or base is None else peak - base)}, "
                           f"total {_bytes(rec.get('memory_total_bytes'))}"))
    if "command_rss_peak_bytes" in rec:
        rows.append(("memory (command)",
                     f"process tree peak {_bytes(rec.get('command_memory_peak_bytes'))}, "
                     f"largest process peak RSS {_bytes(rec.get('command_rss_peak_bytes'))}"))
    rows += [
        ("disk", f"used peak {_bytes(rec.get('disk_used_peak_bytes'))}, "
                 f"free min {_bytes(rec.get('disk_free_min_bytes'))}"),
        ("disk I/O", f"read {_bytes(rec.get('disk_read_bytes'))}, "
                     f"written {_bytes(rec.get('disk_write_bytes'))}"),
        ("network", f"received {_bytes(rec.get('net_rx_bytes'))}, "
                    f"sent {_bytes(rec.get('net_tx_bytes'))}"),
        ("sampler overhead", f"{rec.get('sampler_cpu_cores') or 0:.4f} cores "
                             f"({100 * (rec.get('sampler_cpu_cores') or 0):.2f}% of a core)"),
    ]
    if rec.get("missing"):
        rows.append(("not measured", ", ".join(rec["missing"])))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)
