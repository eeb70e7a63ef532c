"""How long a long command stays silent: the seconds from starting ``laser-ci eval`` (or any
command given) to its first line of progress on stderr, median of N starts; the command is
stopped there. Progress is asked for with LASER_CI_PROGRESS=1 (a pipe is no terminal).

    python benchmarks/cli_first_output.py                       # eval on the shared data
    python benchmarks/cli_first_output.py --runs 5 -- eval DIR --predictor median
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "gha-runs"


def first_line_s(args: list[str]) -> tuple[float, str]:
    env = dict(os.environ, LASER_CI_PROGRESS="1", PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "laser_ci", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    took = time.perf_counter() - t0
    proc.kill()
    proc.wait()
    return took, line.rstrip("\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("command", nargs="*", default=["eval", str(DATA)])
    args = ap.parse_args()
    times = []
    for _ in range(args.runs):
        took, line = first_line_s(args.command)
        times.append(took)
    print(f"laser-ci {' '.join(args.command)}: first stderr line after "
          f"{statistics.median(times):.2f} s (median of {args.runs}; "
          f"{min(times):.2f}-{max(times):.2f} s): {line!r}")


if __name__ == "__main__":
    main()
