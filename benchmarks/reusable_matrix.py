"""The mutation fuzzer's slowest case, timed on its own: a real workflow whose job ``common``
calls a reusable workflow (opentelemetry-java-instrumentation's
``build-daily-no-build-cache.yml``), given a 256-instance matrix, through the real CLI
(``laser-ci estimate --format json``, the default predictor): 5,686 rows. The cost is
the expansion of every caller's called jobs, their serialization and their features.

    python benchmarks/reusable_matrix.py ../shared/data/gha-runs [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml
from sweep_workflows import estimate_file, labeled_files, write_checkout

from laser_ci.training.examples import load_blobs

REPO = "open-telemetry/opentelemetry-java-instrumentation"
WORKFLOW = ".github/workflows/build-daily-no-build-cache.yml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data_dir")
    ap.add_argument("--instances", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    todo = [t for t in labeled_files(args.data_dir) if t[0] == REPO and t[1] == WORKFLOW]
    if not todo:
        raise SystemExit(f"{REPO} {WORKFLOW} is not in {args.data_dir}")
    _, path, files = todo[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_checkout(root, files, load_blobs(args.data_dir))
        doc = yaml.safe_load((root / path).read_text(encoding="utf-8"))
        doc["jobs"]["common"]["strategy"] = {"matrix": {"a": list(range(args.instances))}}
        (root / path).write_text(yaml.safe_dump(doc), encoding="utf-8")
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            code, _err, _messages, result = estimate_file(root, path)
            times.append(time.perf_counter() - start)
    rows = sum(len(w.get("jobs", [])) for w in result.get("workflows", []))
    print(f"{REPO} {WORKFLOW}, job 'common' with a {args.instances}-instance matrix: "
          f"exit {code}, {rows:,} rows")
    print(f"estimate: {min(times):.2f} s best of {args.repeat} "
          f"({', '.join(f'{t:.2f}' for t in times)})")


if __name__ == "__main__":
    main()
