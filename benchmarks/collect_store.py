"""How long ``laser-ci collect``'s folder writer takes on a large folder, with and without re-runs.

Writes a folder of 20,000 runs (20 jobs each) through :class:`laser_ci.github.collect.Store`,
then times an incremental call of 500 runs of which 20 are re-runs of collected ones (their
final attempt replaces the row), and one of 500 new runs. The runs file is rewritten once a
call when re-runs replace rows, not at every merge of 25 runs.

    python benchmarks/collect_store.py [--runs 20000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from laser_ci.github.collect import Store  # noqa: E402


def _row(i: int, attempt: int = 1) -> dict[str, Any]:
    jobs = [{"name": f"job {j}", "run_time_s": 100.0, "runner": "ubuntu-latest",
             "steps": ["x" * 40] * 10} for j in range(20)]
    return {"id": f"r{i}", "repo": "o/r", "files": {}, "attempts": attempt, "jobs": jobs}


def _call(out: Path, rows: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    store = Store(out)
    try:
        for row in rows:
            store.add_run(row, {})
        store.merge()
    finally:
        store.close()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20_000)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        first = _call(out, [_row(i) for i in range(args.runs)])
        size = (out / "runs.jsonl.gz").stat().st_size // 1024
        print(f"first call, {args.runs:,} runs: {first:.1f} s, runs file {size:,} KB")
        reruns = [_row(i, 2) if i % 25 == 0 else _row(args.runs + i) for i in range(500)]
        print(f"500 runs, 20 of them re-runs: {_call(out, reruns):.1f} s")
        new = [_row(2 * args.runs + i) for i in range(500)]
        print(f"500 new runs: {_call(out, new):.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
