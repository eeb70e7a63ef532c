"""Run ``laser-ci estimate`` on every labeled workflow of a data folder; count crashes.

Each run's files (workflows and local actions at its commit) are written to a temporary
checkout and the real CLI is invoked in-process on the run's workflow file, exactly as a
user would. Prints how many files were read, how many were reported as errors (with the
most common reasons), how many crashed (a traceback: must be 0), and the time taken.
``--corpus``: the unlabeled workflow versions of ``corpus.jsonl`` instead (some 32,000
real files), each alone in its checkout, so a local action or reusable workflow it names
is missing, as in a sparse checkout.

    python benchmarks/sweep_workflows.py ../shared/data/gha-runs [--corpus] [--limit N]
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import sys
import tempfile
import time
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from laser_ci.cli import main
from laser_ci.training.examples import load_blobs, load_corpus, load_runs

Todo = tuple[str, str, dict[str, str]]  # label, workflow path, {path: blob id}


def labeled_files(data_dir: str) -> list[Todo]:
    """One entry per distinct repository and workflow file version a labeled run ran, with
    every file of its commit."""
    seen: set[tuple[str, str]] = set()
    todo = []
    for run in load_runs(data_dir):
        key = (run["repo"], run["files"].get(run["workflow_path"], run["sha"]))
        if key not in seen:
            seen.add(key)
            todo.append((run["repo"], run["workflow_path"], run["files"]))
    return todo


def corpus_files(data_dir: str) -> list[Todo]:
    """One entry per distinct repository, path and blob of the unlabeled corpus."""
    seen: set[tuple[str, str, str]] = set()
    todo = []
    for row in load_corpus(data_dir):
        key = (row["repo"], row["path"], row["blob"])
        if key not in seen:
            seen.add(key)
            todo.append((row["repo"], row["path"], {row["path"]: row["blob"]}))
    return todo


def write_checkout(root: Path, files: dict[str, str], blobs: dict[str, str]) -> None:
    """Write a run's files (``{path: blob id}``) under ``root``; blobs not in ``blobs`` are
    left out, as in a sparse checkout."""
    for path, blob_id in files.items():
        text = blobs.get(blob_id)
        if text is None:
            continue
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def estimate_file(root: Path, workflow_path: str) -> tuple[int, str, list[str], dict[str, Any]]:
    """``laser-ci estimate <root>/<workflow_path> --repo-root <root> --format json``
    in-process: its exit code, its stderr, the messages of the errors it reported and the
    result it printed. An
    exception escaping the CLI (a crash) propagates."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main(["estimate", str(root / workflow_path), "--repo-root", str(root),
                  "--format", "json"], standalone_mode=False)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    result = json.loads(out.getvalue()) if code in (0, 1) else {}
    messages = [e["message"] for e in result["errors"]] if code == 1 else []
    return code, err.getvalue(), messages, result


def print_counts(codes: collections.Counter[int], reasons: collections.Counter[str],
                 crashes: list[str], elapsed: float, n: int, unit: str) -> None:
    """The exit codes, crashes, time and the most common error reasons of a sweep."""
    print(f"read cleanly (exit 0): {codes[0]}")
    print(f"reported errors (exit 1): {codes[1]}")
    print(f"other exit codes: {sum(v for k, v in codes.items() if k not in (0, 1))}")
    print(f"crashes (tracebacks): {len(crashes)}")
    print(f"time: {elapsed:.1f} s ({1000 * elapsed / max(n, 1):.1f} ms per {unit})")
    print("most common error reasons:")
    for reason, k in reasons.most_common(12):
        print(f"  {k:5d}  {reason}")


def main_(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--corpus", action="store_true",
                    help="the unlabeled corpus's workflow versions, not the labeled runs'")
    ap.add_argument("--limit", type=int, default=0, help="only the first N distinct files")
    args = ap.parse_args(argv)

    todo = corpus_files(args.data_dir) if args.corpus else labeled_files(args.data_dir)
    if args.limit:
        todo = todo[: args.limit]
    blobs = load_blobs(args.data_dir, {b for _, _, files in todo for b in files.values()})

    codes: collections.Counter[int] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    crashes: list[str] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, workflow_path, files) in enumerate(todo):
            root = Path(tmp) / str(i)
            write_checkout(root, files, blobs)
            try:
                code, err, messages, _ = estimate_file(root, workflow_path)
            except Exception:  # noqa: BLE001 - counting crashes is the point
                crashes.append(f"{label} {workflow_path}\n{traceback.format_exc()}")
                continue
            codes[code] += 1
            if "Traceback" in err:
                crashes.append(f"{label} {workflow_path}\n{err}")
            for m in messages:
                reasons[m.split(":")[0][:60]] += 1
    elapsed = time.perf_counter() - start
    print(f"workflow files: {len(todo)} (distinct repo + file version)")
    print_counts(codes, reasons, crashes, elapsed, len(todo), "file")
    for c in crashes[:3]:
        print(c, file=sys.stderr)
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main_())
