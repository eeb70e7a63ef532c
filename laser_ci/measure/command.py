"""``laser-ci measure [--format json] -- COMMAND``: the usage record of one command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import click

from laser_ci.measure.record import table
from laser_ci.measure.sampler import Sampler


def _children_cpu_s() -> tuple[float, int]:
    """CPU seconds of the waited-for children so far, and the largest peak RSS (bytes)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime, _bytes_of(ru.ru_maxrss)


def _own_peak() -> int:
    """The peak resident memory of this process's address space so far (bytes, ``VmHWM``).
    A child's peak as ``getrusage`` keeps it includes the memory it was forked with, before
    it ran the command: at most this. (Not ``getrusage(RUSAGE_SELF)``: that keeps the peak
    of whatever this process was forked from, a test runner's hundreds of MB.)"""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    import resource

    return _bytes_of(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _bytes_of(maxrss: int) -> int:
    return int(maxrss) * (1 if sys.platform == "darwin" else 1024)  # kB on Linux


@click.command("measure", context_settings={"ignore_unknown_options": True,
                                            "allow_interspersed_args": False})
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="How to print the usage record (on stderr for a table, "
              "stdout for JSON).")
@click.option("--interval", "interval_s", type=click.FloatRange(min=0.05), default=1.0,
              show_default=True, help="Seconds between samples.")
@click.option("--disk", "disk_path", type=click.Path(exists=True, file_okay=False),
              default=None, help="A folder on the file system to measure (default: the "
              "current folder).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def measure_command(fmt: str, interval_s: float, disk_path: str | None,
                    command: tuple[str, ...]) -> None:
    """Run COMMAND and measure the machine while it runs: CPU cores, memory, disk, disk
    and network bytes, sampled every second, plus the command's own CPU time and peak
    memory. COMMAND runs as given (no shell); its exit status is this command's.

    The record is the one the Action's measure step writes for a job (docs/sizing.md).
    Linux only: it reads /proc.

    \b
        laser-ci measure -- make test
        laser-ci measure --format json -- pytest -x > usage.json
    """
    if not os.path.exists("/proc/stat"):
        raise click.ClickException("laser-ci measure reads /proc: Linux only (the Action's "
                                   "measure step also runs on macOS and Windows)")
    sampler = Sampler(interval_s, disk_path=disk_path)
    cpu0, _ = _children_cpu_s()
    forked_with = _own_peak()
    sampler.start()
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(list(command))
        sampler.follow = proc.pid
    except OSError as e:
        sampler.stop()
        click.echo(f"laser-ci: error: cannot run {command[0]}: {e.strerror or e}", err=True)
        sys.exit(1)
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        code = proc.wait()
    wall = max(time.monotonic() - t0, 1e-9)
    rec = sampler.stop()
    cpu1, rss = _children_cpu_s()
    rec["command"] = " ".join(command)[:200]
    rec["exit_code"] = code if code >= 0 else 128 - code
    rec["command_cpu_s"] = round(cpu1 - cpu0, 3)
    rec["command_cpu_cores"] = round((cpu1 - cpu0) / wall, 4)
    # at most the memory the command's process was forked with: getrusage cannot tell
    # the command's own peak apart from that (null), as for `true` or `sleep`
    forked_with = max(forked_with, _own_peak())  # it may have grown before the fork
    rec["command_rss_peak_bytes"] = rss if rss > forked_with else None
    if fmt == "json":
        click.echo(json.dumps(rec, indent=2, sort_keys=True))
    else:
        click.echo(table(rec), err=True)
    sys.exit(rec["exit_code"])
