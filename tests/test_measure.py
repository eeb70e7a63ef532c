"""laser-ci measure and the /proc sampler behind it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from laser_ci.measure.record import parse_record, percentile, table
from laser_ci.measure.sampler import (
    Sampler,
    read_cpu,
    read_disk_io,
    read_memory,
    read_net,
    summarize,
    take_sample,
)

ROOT = Path(__file__).resolve().parent.parent
MB400 = 400 * 2**20
BUSY = """
import time
b = b'x' * (400 * 2**20)   # touched: every page resident
t = time.process_time()
while time.process_time() - t < 3:   # 3 s of one core's time, however long that takes
    pass
"""


def _fake_proc(root: Path, busy: int, total: int, avail_kb: int, rd: int, rx: int) -> None:
    (root / "net").mkdir(parents=True, exist_ok=True)
    idle = total - busy
    (root / "stat").write_text(f"cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0\n")
    (root / "meminfo").write_text(f"MemTotal:       16000000 kB\nMemFree:  100 kB\n"
                                  f"MemAvailable:   {avail_kb} kB\n")
    (root / "diskstats").write_text(
        f"   8       0 sda 10 0 {rd} 5 20 0 {2 * rd} 9 0 0 0\n"
        f"   8       1 sda1 10 0 {rd} 5 20 0 {2 * rd} 9 0 0 0\n"
        f"   7       0 loop0 10 0 999 5 20 0 999 9 0 0 0\n")
    (root / "net" / "dev").write_text(
        "Inter-|   Receive                            |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes\n"
        f"    lo: 5000 1 0 0 0 0 0 0 5000 1 0 0 0 0 0 0\n"
        f"  eth0: {rx} 1 0 0 0 0 0 0 {rx // 2} 1 0 0 0 0 0 0\n")


def test_readers_on_a_fake_proc(tmp_path: Path) -> None:
    _fake_proc(tmp_path, busy=300, total=1000, avail_kb=12000000, rd=100, rx=4000)
    assert read_cpu(tmp_path) == (300, 1000)
    assert read_memory(tmp_path) == (4000000 * 1024, 16000000 * 1024)
    # whole disks only (sda1 is a partition of sda, loop0 a loop device): 100 sectors read
    assert read_disk_io(tmp_path, sys_block=tmp_path / "none") == (100 * 512, 200 * 512)
    assert read_net(tmp_path) == (4000, 2000)  # lo left out


def test_summary_of_fake_samples(tmp_path: Path) -> None:
    samples = []
    # 3 samples: 0 -> +50% busy -> +100% busy of all cores; memory 4 GB, 6 GB, 5 GB used
    for busy, total, avail, rd, rx in ((0, 0, 12000000, 0, 0), (500, 1000, 10000000, 10, 100),
                                        (1500, 2000, 11000000, 30, 300)):
        _fake_proc(tmp_path, busy, total, avail, rd, rx)
        samples.append(take_sample(tmp_path, str(tmp_path)))
    rec = summarize(samples, 1.0)
    n = os.cpu_count() or 1
    assert rec["cpu_cores_mean"] == pytest.approx(0.75 * n)
    assert rec["memory_baseline_bytes"] == 4000000 * 1024
    assert rec["memory_peak_bytes"] == 6000000 * 1024
    assert rec["disk_read_bytes"] == 30 * 512 and rec["net_rx_bytes"] == 300
    assert rec["missing"] == [] and rec["samples"] == 3
    assert parse_record(rec) is not None


def test_missing_proc_files_are_listed(tmp_path: Path) -> None:
    s = Sampler(0.05, root=tmp_path / "nothing", disk_path=str(tmp_path))
    s.start()
    rec = s.stop()
    assert "cpu_cores_mean" in rec["missing"] and "memory_peak_bytes" in rec["missing"]
    assert rec["disk_used_peak_bytes"] is not None  # statvfs does not need /proc
    assert "not measured" in table(rec)


def test_parse_record_keeps_only_what_is_well_formed() -> None:
    assert parse_record({"kind": "other", "samples": 3}) is None
    assert parse_record({"kind": "laser-ci-usage", "samples": 0}) is None
    rec = parse_record({"kind": "laser-ci-usage", "samples": 4, "memory_peak_bytes": -1,
                        "cpu_cores_mean": True, "cpu_cores_p95": 1.5, "job": "x" * 999,
                        "missing": ["disk_read_bytes", 3]})
    assert rec is not None
    assert "memory_peak_bytes" not in rec and "cpu_cores_mean" not in rec
    assert rec["cpu_cores_p95"] == 1.5 and len(rec["job"]) == 200
    assert rec["missing"] == ["disk_read_bytes"]
    assert percentile([1, 2, 3, 4], 0.5) == 2.5 and percentile([], 0.5) is None


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="reads /proc (Linux)")
def test_measure_a_command_that_holds_400_mb_and_one_core() -> None:
    """The issue's done-when: 400 MB within 10%, one core busy 3 s, and the sampler's
    overhead under 1% of a core. The machine running the tests is shared (5 test runs on 2
    cores; its used memory moves by hundreds of MB while they run), so the 400 MB is the
    command's own peak RSS and the core its own CPU time (3 s of it); the machine-wide
    figures are checked for what no neighbour can change (a peak at or over the baseline,
    at least the command's share of the CPU). ``laser-ci measure`` prints both."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "laser_ci", "measure", "--format", "json",
                          "--", sys.executable, "-c", BUSY],
                         capture_output=True, text=True, env=env, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    assert abs(rec["command_rss_peak_bytes"] - MB400) < 0.1 * MB400
    assert abs(rec["command_memory_peak_bytes"] - MB400) < 0.1 * MB400  # sampled, summed
    assert rec["memory_peak_bytes"] >= rec["memory_baseline_bytes"] > 0
    assert 2.9 < rec["command_cpu_s"] < 4.5  # 3 s busy, plus Python's start and the 400 MB
    assert 0 < rec["command_cpu_cores"] <= 1.1  # one core at most (less when others run)
    # the machine includes the command: its mean cores are at least the command's
    assert rec["cpu_cores_mean"] >= 0.8 * rec["command_cpu_s"] / rec["duration_s"]
    assert rec["sampler_cpu_cores"] < 0.01
    assert rec["samples"] >= 4 and rec["exit_code"] == 0
    for key in ("cpu_cores_p95", "memory_total_bytes", "disk_used_peak_bytes",
                "disk_free_min_bytes", "net_rx_bytes", "os", "duration_s"):
        assert key in rec


def test_measure_returns_the_command_exit_code_and_prints_a_table() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "laser_ci", "measure", "--interval", "0.1",
                          "--", sys.executable, "-c", "import sys; sys.exit(3)"],
                         capture_output=True, text=True, env=env, timeout=60, check=False)
    assert out.returncode == 3
    assert "sampler overhead" in out.stderr and out.stdout == ""
    bad = subprocess.run([sys.executable, "-m", "laser_ci", "measure", "--",
                          "/nonexistent/tool"], capture_output=True, text=True, env=env,
                         timeout=60, check=False)
    assert bad.returncode == 1 and "cannot run /nonexistent/tool" in bad.stderr


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc (Linux)")
@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="reads /proc (Linux)")
def test_a_small_command_has_no_peak_rss_of_the_fork() -> None:
    """getrusage keeps a child's peak with the memory it was forked with (laser-ci's own,
    tens of MB): for a command smaller than that the figure is not the command's, so null
    (it read 17 MB for `sleep`)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "laser_ci", "measure", "--format", "json",
                          "--interval", "0.05", "--", "sleep", "0.2"],
                         capture_output=True, text=True, env=env, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["command_rss_peak_bytes"] is None


def test_tree_rss_sums_a_process_and_its_children() -> None:
    from laser_ci.measure.sampler import tree_rss

    child = subprocess.Popen([sys.executable, "-c",
                              "import subprocess, sys, time\n"
                              "b = b'x' * (50 * 2**20)\n"
                              "p = subprocess.Popen([sys.executable, '-c', "
                              "\"b = b'y' * (80 * 2**20); import time; time.sleep(30)\"])\n"
                              "time.sleep(30)\n"], start_new_session=True)
    try:
        rss = 0
        for _ in range(100):  # until both hold their memory
            import time

            time.sleep(0.1)
            rss = tree_rss(Path("/proc"), child.pid) or 0
            if rss > 130 * 2**20:
                break
        assert 130 * 2**20 < rss < 200 * 2**20
    finally:
        import signal

        os.killpg(child.pid, signal.SIGKILL)  # the child and its child
        child.wait()
    assert tree_rss(Path("/proc"), 2**22 + 12345) is None  # no such process


def test_a_tighter_cgroup_memory_limit_is_the_machines_memory(tmp_path: Path) -> None:
    """In a container (ubuntu-slim, a job's container: with a limit) the memory a job can
    use is its cgroup's, not the VM's /proc/meminfo."""
    proc, cg = tmp_path / "proc", tmp_path / "cgroup"
    _fake_proc(proc, busy=0, total=0, avail_kb=12000000, rd=0, rx=0)
    (proc / "self").mkdir()
    (proc / "self" / "cgroup").write_text("0::/actions/job\n")
    (cg / "actions" / "job").mkdir(parents=True)
    (cg / "memory.max").write_text("max\n")
    (cg / "actions" / "memory.max").write_text("5000000000\n")
    (cg / "actions" / "memory.current").write_text("3000000000\n")
    (cg / "actions" / "memory.stat").write_text("anon 1\ninactive_file 1000000000\nfile 5\n")
    (cg / "actions" / "job" / "memory.max").write_text("max\n")
    s = Sampler(0.05, root=proc, disk_path=str(tmp_path), cgroup_root=cg)
    s.start()
    rec = s.stop()
    assert rec["memory_source"] == "cgroup"
    assert rec["memory_total_bytes"] == 5_000_000_000
    assert rec["memory_peak_bytes"] == 2_000_000_000  # less the reclaimable page cache
    # a limit above the machine's memory changes nothing
    (cg / "actions" / "memory.max").write_text("99000000000\n")
    s = Sampler(0.05, root=proc, disk_path=str(tmp_path), cgroup_root=cg)
    s.start()
    rec = s.stop()
    assert rec["memory_source"] == "meminfo" and rec["memory_total_bytes"] == 16000000 * 1024
    assert parse_record(rec)["memory_source"] == "meminfo"
