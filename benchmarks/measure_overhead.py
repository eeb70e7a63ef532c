"""What the usage sampler costs: CPU per sample and CPU cores while sampling every second.

Two samplers: the Python one behind ``laser-ci measure`` (:mod:`laser_ci.measure.sampler`)
and the Node one the Action's measure step starts (``measure/sampler.js``, when ``node`` is
on PATH). For each: the CPU time of one sample (the mean over ``--samples`` back to back),
and the sampler's CPU cores over ``--seconds`` of sampling every ``--interval`` seconds on
an otherwise idle process (Python: the process's CPU time over the wall time; Node: its own
``process.cpuUsage()`` between its first and last samples, as the post step reports it).

    python benchmarks/measure_overhead.py [--seconds 20] [--interval 1] [--samples 200]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from laser_ci.measure.sampler import Sampler, take_sample  # noqa: E402

NODE_PER_SAMPLE = """
const lib = require(process.argv[1]);
const n = Number(process.argv[2]);
lib.takeSample('/proc', process.cwd());
const c0 = process.cpuUsage();
for (let i = 0; i < n; i++) lib.takeSample('/proc', process.cwd());
const c = process.cpuUsage(c0);
console.log(JSON.stringify({ per_sample_ms: (c.user + c.system) / 1000 / n }));
"""


def _cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def python_sampler(seconds: float, interval: float, samples: int) -> dict[str, float]:
    root, disk = Path("/proc"), os.getcwd()
    take_sample(root, disk)
    c0 = _cpu_s()
    for _ in range(samples):
        take_sample(root, disk)
    per_sample_ms = 1000 * (_cpu_s() - c0) / samples
    s = Sampler(interval)
    s.start()
    time.sleep(seconds)
    rec = s.stop()
    return {"per_sample_ms": per_sample_ms, "sampler_cpu_cores": rec["sampler_cpu_cores"],
            "samples": rec["samples"]}


def node_sampler(node: str, seconds: float, interval: float, samples: int) -> dict[str, float]:
    lib = str(ROOT / "measure" / "lib.js")
    out = subprocess.run([node, "-e", NODE_PER_SAMPLE, lib, str(samples)], capture_output=True,
                         text=True, check=True, timeout=120)
    per_sample = json.loads(out.stdout)["per_sample_ms"]
    with tempfile.TemporaryDirectory() as tmp:
        file, stop = Path(tmp) / "samples.jsonl", Path(tmp) / "stop"
        proc = subprocess.Popen([node, str(ROOT / "measure" / "sampler.js"), str(file),
                                 str(interval), "/proc", tmp, str(stop)])
        time.sleep(seconds)
        stop.write_text("")
        proc.wait(timeout=interval + 10)
        rows = [json.loads(x) for x in file.read_text().splitlines() if x.strip()]
    first, last = rows[0], rows[-1]
    cores = (last["self_cpu_s"] - first["self_cpu_s"]) / max(last["t"] - first["t"], 1e-9)
    return {"per_sample_ms": per_sample, "sampler_cpu_cores": cores, "samples": len(rows)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--samples", type=int, default=200)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores; sampling every {args.interval:g} s for "
          f"{args.seconds:g} s; per-sample CPU over {args.samples} samples")
    rows = [("python (laser-ci measure)", python_sampler(args.seconds, args.interval,
                                                         args.samples))]
    node = shutil.which("node")
    if node:
        rows.append(("node (measure step)", node_sampler(node, args.seconds, args.interval,
                                                         args.samples)))
    else:
        print("node not found: the measure step's sampler is not measured")
    print(f"{'sampler':28s} {'CPU per sample':>15s} {'cores while sampling':>21s} {'samples':>8s}")
    for name, r in rows:
        print(f"{name:28s} {r['per_sample_ms']:12.2f} ms {r['sampler_cpu_cores']:14.5f} "
              f"({100 * r['sampler_cpu_cores']:.3f}%) {r['samples']:8d}")


if __name__ == "__main__":
    main()
