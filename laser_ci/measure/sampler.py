"""A sampler of the whole machine, Linux ``/proc``: a background thread reads, every
``interval_s``, the CPU time of all cores (``/proc/stat``), memory in use
(``/proc/meminfo``: ``MemTotal - MemAvailable``), the file system of ``disk_path``
(``os.statvfs``), the bytes read and written by whole disks (``/proc/diskstats``) and
received and sent by network interfaces other than ``lo`` (``/proc/net/dev``).

Each read is a few small files: on a 2-core machine one sample costs about a millisecond of
CPU, so a sample a second is about 0.1% of a core (``benchmarks/measure_overhead.py``). The
sampler measures its own cost, its process's CPU time over the wall time
(``sampler_cpu_cores``), so the figure is in every record.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from laser_ci.measure.record import KIND, VERSION, percentile

SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own size


@dataclass(frozen=True)
class Sample:
    t: float  # time.monotonic()
    cpu_busy: int | None  # jiffies, all cores
    cpu_total: int | None
    mem_used: int | None
    mem_total: int | None
    disk_used: int | None
    disk_free: int | None
    disk_total: int | None
    disk_read: int | None  # bytes since boot
    disk_write: int | None
    net_rx: int | None
    net_tx: int | None
    mem_source: str = "meminfo"  # or "cgroup": a memory limit below the machine's


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None


def read_cpu(root: Path) -> tuple[int, int] | None:
    """``(busy, total)`` jiffies of all cores from ``stat``; iowait counts as idle."""
    text = _read(root / "stat")
    if not text:
        return None
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            try:
                v = [int(x) for x in parts[1:9]]
            except ValueError:
                return None
            v += [0] * (8 - len(v))
            idle = v[3] + v[4]  # idle + iowait
            total = sum(v)  # user nice system idle iowait irq softirq steal (guest is in user)
            return total - idle, total
    return None


def read_memory(root: Path) -> tuple[int, int] | None:
    """``(used, total)`` bytes from ``meminfo``: used = MemTotal - MemAvailable."""
    text = _read(root / "meminfo")
    if not text:
        return None
    kb: dict[str, int] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            kb[name.strip()] = int(parts[0])
    if "MemTotal" not in kb:
        return None
    avail = kb.get("MemAvailable")
    if avail is None:  # kernels before 3.14
        avail = kb.get("MemFree", 0) + kb.get("Buffers", 0) + kb.get("Cached", 0)
    return (kb["MemTotal"] - avail) * 1024, kb["MemTotal"] * 1024


def _whole_disk(name: str, sys_block: Path) -> bool:
    if name.startswith(("loop", "ram", "zram", "dm-", "md", "sr", "fd", "nbd")):
        return False
    return (sys_block / name).exists() if sys_block.exists() else not name[-1:].isdigit()


def read_disk_io(root: Path, sys_block: Path = Path("/sys/block")) -> tuple[int, int] | None:
    """``(read, written)`` bytes since boot, summed over whole disks (not partitions,
    loop or device-mapper devices, which would count the same bytes twice)."""
    text = _read(root / "diskstats")
    if text is None:
        return None
    rd = wr = 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 10 or not _whole_disk(parts[2], sys_block):
            continue
        try:
            rd += int(parts[5]) * SECTOR
            wr += int(parts[9]) * SECTOR
        except ValueError:
            continue
    return rd, wr


def read_net(root: Path) -> tuple[int, int] | None:
    """``(received, sent)`` bytes since boot over interfaces other than ``lo``."""
    text = _read(root / "net" / "dev")
    if text is None:
        return None
    rx = tx = 0
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        parts = rest.split()
        if name.strip() == "lo" or len(parts) < 9:
            continue
        try:
            rx += int(parts[0])
            tx += int(parts[8])
        except ValueError:
            continue
    return rx, tx


def read_fs(path: str) -> tuple[int, int, int] | None:
    """``(used, free, total)`` bytes of the file system holding ``path``; free is what an
    unprivileged process can still write."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    total = st.f_blocks * st.f_frsize
    return total - st.f_bfree * st.f_frsize, st.f_bavail * st.f_frsize, total


def _children(root: Path, pid: int) -> list[int] | None:
    """The child processes of ``pid`` (every thread's ``children`` file); None when the
    kernel has no such files (no CONFIG_PROC_CHILDREN)."""
    out: list[int] = []
    try:
        tasks = list(os.scandir(root / str(pid) / "task"))
    except OSError:
        return []  # ended
    for task in tasks:
        try:
            out += [int(x) for x in (Path(task.path) / "children").read_text().split()]
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            continue
    return out


def _all_children(root: Path) -> dict[int, list[int]]:
    """Every process's children, from each ``/proc/<pid>/stat``'s parent (a full scan)."""
    kids: dict[int, list[int]] = {}
    try:
        entries = [e.name for e in os.scandir(root) if e.name.isdigit()]
    except OSError:
        return kids
    for name in entries:
        try:
            stat = (root / name / "stat").read_text(encoding="ascii", errors="replace")
            ppid = int(stat[stat.rfind(")") + 2:].split()[1])  # the name may hold ") "
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    return kids


def tree_rss(root: Path, pid: int) -> int | None:
    """The resident memory of ``pid`` and all its descendants, in bytes (``statm``), or
    None when ``pid`` has ended. The tree is walked through ``children`` files (its cost
    grows with the command's processes), else found by a scan of every process."""
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    scanned: dict[int, list[int]] | None = None
    total, todo, seen, found = 0, [pid], set(), False
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            total += int((root / str(p) / "statm").read_text().split()[1]) * page
            found = True
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile
        kids = _children(root, p) if scanned is None else scanned.get(p, [])
        if kids is None:
            scanned = _all_children(root)
            kids = scanned.get(p, [])
        todo += kids
    return total if found else None


def cgroup_dir(root: Path, fs_root: Path = Path("/sys/fs/cgroup")) -> Path | None:
    """This process's cgroup (v2: the ``0::`` line of ``/proc/self/cgroup``) under
    ``fs_root``; None without cgroup v2."""
    for line in (_read(root / "self" / "cgroup") or "").splitlines():
        if line.startswith("0::"):
            return fs_root / line[3:].strip().lstrip("/")
    return None


def read_cgroup_memory(cgroup: Path, fs_root: Path = Path("/sys/fs/cgroup")
                       ) -> tuple[int, int] | None:
    """``(used, limit)`` bytes of the tightest memory limit (``memory.max``) on ``cgroup``
    and its parents up to ``fs_root`` (a container: ``ubuntu-slim``, a job's
    ``container:`` with a limit); used = ``memory.current`` less reclaimable page cache
    (``inactive_file`` of ``memory.stat``). None when no cgroup there has a limit."""
    best: tuple[Path, int] | None = None
    cur = cgroup
    while True:
        limit = (_read(cur / "memory.max") or "").strip()
        if limit.isdigit() and (best is None or int(limit) < best[1]):
            best = (cur, int(limit))
        if cur == fs_root or fs_root not in cur.parents:
            break
        cur = cur.parent
    if best is None:
        return None
    try:
        current = int((_read(best[0] / "memory.current") or "").strip())
    except ValueError:
        return None
    inactive = 0
    for line in (_read(best[0] / "memory.stat") or "").splitlines():
        name, _, value = line.partition(" ")
        if name == "inactive_file" and value.strip().isdigit():
            inactive = int(value)
    return max(0, current - inactive), best[1]


def take_sample(root: Path, disk_path: str, cgroup: Path | None = None,
                cgroup_root: Path = Path("/sys/fs/cgroup")) -> Sample:
    cpu = read_cpu(root)
    mem = read_memory(root)
    source = "meminfo"
    limited = read_cgroup_memory(cgroup, cgroup_root) if cgroup is not None else None
    if limited is not None and (mem is None or limited[1] < mem[1]):
        mem, source = limited, "cgroup"
    fs = read_fs(disk_path)
    # a fake /proc (tests) has no /sys/block beside it: partitions are told by their digit
    dio = read_disk_io(root, Path("/sys/block") if root == Path("/proc") else root / "sys-block")
    net = read_net(root)
    return Sample(time.monotonic(), *(cpu or (None, None)), *(mem or (None, None)),
                  *(fs or (None, None, None)), *(dio or (None, None)), *(net or (None, None)),
                  source)


def _self_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Sampler:
    """Samples the machine in a daemon thread between :meth:`start` and :meth:`stop`;
    :meth:`stop` returns the usage record. ``root``: the ``/proc`` to read (tests)."""

    def __init__(self, interval_s: float = 1.0, *, root: str | Path = "/proc",
                 disk_path: str | None = None, cgroup_root: str | Path = "/sys/fs/cgroup"):
        if interval_s <= 0:
            raise ValueError("the interval must be positive")
        self.interval_s = interval_s
        self.root = Path(root)
        self.disk_path = disk_path or os.getcwd()
        self.cgroup_root = Path(cgroup_root)
        self.cgroup = cgroup_dir(self.root, self.cgroup_root)
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = self._wall0 = self._cpu0 = 0.0
        self.follow: int | None = None  # a process whose tree's memory is sampled too
        self.tree_rss: list[int] = []

    def start(self) -> None:
        self._wall0, self._t0, self._cpu0 = time.time(), time.monotonic(), _self_cpu_s()
        self.samples.append(self._sample())  # the baseline
        self._thread = threading.Thread(target=self._loop, name="laser-ci-sampler", daemon=True)
        self._thread.start()

    def _sample(self) -> Sample:
        return take_sample(self.root, self.disk_path, self.cgroup, self.cgroup_root)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.samples.append(self._sample())
            if self.follow is not None:
                rss = tree_rss(self.root, self.follow)
                if rss:
                    self.tree_rss.append(rss)

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.samples.append(self._sample())  # the end
        wall = max(time.monotonic() - self._t0, 1e-9)
        rec = summarize(self.samples, self.interval_s)
        rec["sampler_cpu_cores"] = round((_self_cpu_s() - self._cpu0) / wall, 5)
        rec["started_at"] = _iso(self._wall0)
        rec["ended_at"] = _iso(self._wall0 + wall)
        rec["duration_s"] = round(wall, 3)
        if self.follow is not None:
            rec["command_memory_peak_bytes"] = max(self.tree_rss) if self.tree_rss else None
        return rec


def _delta(samples: list[Sample], attr: str) -> int | None:
    vals = [getattr(s, attr) for s in samples if getattr(s, attr) is not None]
    return max(0, vals[-1] - vals[0]) if len(vals) >= 2 else None


def summarize(samples: list[Sample], interval_s: float) -> dict[str, Any]:
    """The record's figures from the samples (the first is the baseline)."""
    cpu_count = os.cpu_count() or 1
    cores: list[float] = []
    for a, b in zip(samples, samples[1:], strict=False):
        if None in (a.cpu_busy, a.cpu_total, b.cpu_busy, b.cpu_total):
            continue
        total = b.cpu_total - a.cpu_total  # type: ignore[operator]
        if total > 0:
            cores.append(cpu_count * (b.cpu_busy - a.cpu_busy) / total)  # type: ignore[operator]
    mem = [s.mem_used for s in samples if s.mem_used is not None]
    used = [s.disk_used for s in samples if s.disk_used is not None]
    free = [s.disk_free for s in samples if s.disk_free is not None]
    rec: dict[str, Any] = {
        "kind": KIND,
        "version": VERSION,
        "os": sys.platform,
        "interval_s": interval_s,
        "samples": len(samples),
        "cpu_count": cpu_count,
        "cpu_cores_mean": round(sum(cores) / len(cores), 4) if cores else None,
        "cpu_cores_p95": round(percentile(cores, 0.95), 4) if cores else None,  # type: ignore[arg-type]
        "memory_baseline_bytes": mem[0] if mem else None,
        "memory_peak_bytes": max(mem) if mem else None,
        "memory_total_bytes": next((s.mem_total for s in samples if s.mem_total), None),
        "memory_source": samples[0].mem_source if samples else None,
        "disk_used_baseline_bytes": used[0] if used else None,
        "disk_used_peak_bytes": max(used) if used else None,
        "disk_free_min_bytes": min(free) if free else None,
        "disk_total_bytes": next((s.disk_total for s in samples if s.disk_total), None),
        "disk_read_bytes": _delta(samples, "disk_read"),
        "disk_write_bytes": _delta(samples, "disk_write"),
        "net_rx_bytes": _delta(samples, "net_rx"),
        "net_tx_bytes": _delta(samples, "net_tx"),
    }
    rec["missing"] = sorted(k for k, v in rec.items() if v is None)
    return rec
