"""Hostile versions of real workflow files through ``laser-ci estimate``; count crashes.

A mutation fuzzer on top of ``benchmarks/sweep_workflows.py``: for each sampled labeled
workflow file (with the other files of its run's commit, so local actions and called
workflows resolve), ``--mutations`` seeded mutations, each run through the real CLI
in-process as a user would run it:

- **tree mutations** of the parsed file: a node anywhere (``on``, a job, ``runs-on``,
  ``strategy.matrix``, a step, ``with``, ``env``, ``needs``, ``services``, ...) replaced
  by a value of another type (null, bool, numbers, lists, mappings, a 10,000-character
  string, ``${{ }}`` expressions, non-ASCII text, newlines); a key or item deleted; an
  unknown key added; ``needs`` naming the job itself or a missing job; a 3 × 100-value
  matrix; ``include``/``exclude`` of odd shapes;
- **text mutations**: the file cut at a random byte, a random byte inserted, a line
  doubled.

Each result is also rendered as every text it is shown as (``--format table`` and
``markdown``, the Action's job summary and PR comment), so a hostile name that reaches a
renderer is exercised too.

Printed: runs, how many read cleanly (exit 0), how many reported one-line errors (exit 1,
grouped by reason), other exit codes, crashes (an exception escaping the CLI or a
traceback on stderr: must be 0), runs slower than ``--slow`` seconds, and the time. Each
crashing file is written to ``--crashes`` with its mutation, so it can be replayed with
``laser-ci estimate FILE``.

    python benchmarks/mutate_workflows.py ../shared/data/gha-runs [--files 150]
        [--mutations 8] [--seed 1] [--crashes runs/mutate_crashes]
"""

from __future__ import annotations

import argparse
import collections
import copy
import random
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sweep_workflows import (  # noqa: E402
    estimate_file,
    labeled_files,
    print_counts,
    write_checkout,
)

from laser_ci.report.comment import render_pr_comment, render_summary  # noqa: E402
from laser_ci.report.render import render  # noqa: E402
from laser_ci.training.examples import load_blobs  # noqa: E402

Path_ = tuple[Any, ...]  # keys and list indexes from the document's root

HOSTILE_VALUES: tuple[Any, ...] = (
    None, True, False, 0, -1, 3.5, 1e308, "", [], [None, 1, "x", {}, []], {},
    {"a": {"b": [1, {"c": None}]}}, "x" * 10_000, "${{ fromJSON(needs.setup.outputs.matrix) }}",
    "${{ matrix.os }}", "${{", "}}", "${{ fromJSON('[1, 2, 3]') }}",
    "${{ github.event.pull_request.title }}", "🚀 ünïcödé ジョブ", "a\nb\nc", "*", "-1",
    "ubuntu-latest,windows-latest", ["self-hosted", None, 3],
)


def node_paths(doc: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every node's path below the root, depth first (mapping keys, then list indexes)."""
    out: list[Path_] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((*prefix, k))
            out.extend(node_paths(v, (*prefix, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.append((*prefix, i))
            out.extend(node_paths(v, (*prefix, i)))
    return out


def get_at(doc: Any, path: Path_) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _parent(doc: Any, path: Path_) -> tuple[Any, Any]:
    return get_at(doc, path[:-1]), path[-1]


def replace_node(doc: Any, rng: random.Random) -> str:
    paths = node_paths(doc)
    if not paths:
        return "nothing to replace"
    path = rng.choice(paths)
    value = copy.deepcopy(rng.choice(HOSTILE_VALUES))
    parent, key = _parent(doc, path)
    parent[key] = value
    return f"replace {_show(path)} with {_short(value)}"


def delete_node(doc: Any, rng: random.Random) -> str:
    paths = node_paths(doc)
    if not paths:
        return "nothing to delete"
    path = rng.choice(paths)
    parent, key = _parent(doc, path)
    del parent[key]
    return f"delete {_show(path)}"


def add_key(doc: Any, rng: random.Random) -> str:
    maps = [()] + [p for p in node_paths(doc) if isinstance(get_at(doc, p), dict)]
    path = rng.choice(maps)
    get_at(doc, path)["x-unknown-" + str(rng.randrange(1000))] = rng.choice(HOSTILE_VALUES)
    return f"add an unknown key under {_show(path)}"


def _pick_job(doc: Any, rng: random.Random) -> tuple[Any, dict[Any, Any]] | str:
    """A random job's id and mapping, or why there is none."""
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not isinstance(jobs, dict) or not jobs:
        return "no jobs"
    job_id = rng.choice(list(jobs))
    job = jobs[job_id]
    return (job_id, job) if isinstance(job, dict) else "job not a mapping"


def bad_needs(doc: Any, rng: random.Random) -> str:
    picked = _pick_job(doc, rng)
    if isinstance(picked, str):
        return picked
    job_id, job = picked
    job["needs"] = rng.choice([job_id, "ghost-job", [job_id, "ghost-job"], [[job_id]], {job_id: 1}])
    return f"needs of {job_id!r} set to {_short(job['needs'])}"


def odd_matrix(doc: Any, rng: random.Random) -> str:
    picked = _pick_job(doc, rng)
    if isinstance(picked, str):
        return picked
    job_id, job = picked
    matrix = rng.choice([
        {"a": list(range(100)), "b": list(range(100)), "c": list(range(100))},
        {"include": {"os": "x"}}, {"include": [1, None, "x", {"os": None}]},
        {"exclude": [{"nope": 1}], "os": ["a"]}, {"os": []}, {"os": None},
        {"os": [{"nested": [1, 2]}, ["list"]]}, {"include": [], "exclude": []},
        "${{ fromJSON(needs.plan.outputs.shards) }}", {"os": "${{ fromJSON('[1,2]') }}"},
        [1, 2, 3],
    ])
    job["strategy"] = {"matrix": copy.deepcopy(matrix), "max-parallel": rng.choice([0, -1, "x", 2])}
    return f"matrix of {job_id!r} set to {_short(matrix)}"


TREE: tuple[Callable[[Any, random.Random], str], ...] = (
    replace_node, replace_node, replace_node, delete_node, add_key, bad_needs, odd_matrix,
)


def truncate(text: str, rng: random.Random) -> tuple[str, str]:
    raw = text.encode("utf-8")
    at = rng.randrange(len(raw) + 1)
    return raw[:at].decode("utf-8", "ignore"), f"cut at byte {at}"


def insert_byte(text: str, rng: random.Random) -> tuple[str, str]:
    at = rng.randrange(len(text) + 1)
    ch = rng.choice(["\x00", "\t", ":", "{", "[", "&", "*", "!", "%", "\"", "'", "|", ">", "#", "\ufeff"])
    return text[:at] + ch + text[at:], f"insert {ch!r} at {at}"


def double_line(text: str, rng: random.Random) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text, "no line to double"
    i = rng.randrange(len(lines))
    return "".join(lines[: i + 1] + lines[i:]), f"double line {i + 1}"


TEXT = (truncate, insert_byte, double_line)


def mutate(text: str, rng: random.Random) -> tuple[str, str]:
    """One mutation of a workflow file's text: a tree mutation of its parsed form (when it
    parses to a mapping) two times in three, else a text mutation."""
    if rng.random() < 2 / 3:
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError:
            doc = None
        if isinstance(doc, dict):
            if True in doc:  # YAML 1.1 reads the key `on` as true; GitHub reads a string
                doc["on"] = doc.pop(True)
            what = rng.choice(TREE)(doc, rng)
            return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), what
    fn = rng.choice(TEXT)
    return fn(text, rng)


def _show(path: Path_) -> str:
    return ".".join(str(p) for p in path) or "<root>"


def _short(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= 60 else r[:57] + "..."


def render_all(result: dict[str, Any], workflow_path: str) -> None:
    """Every text the result is shown as: the table and Markdown of ``laser-ci estimate``,
    the Action's job summary and its PR comment (the file as changed); a crash propagates."""
    render(result, "table")
    render(result, "markdown")
    render_summary(result)
    render_pr_comment(result, {"workflows": []}, [workflow_path])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--files", type=int, default=150, help="distinct labeled workflow files")
    ap.add_argument("--mutations", type=int, default=8, help="mutations of each file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--slow", type=float, default=5.0, help="count runs slower than this (s)")
    ap.add_argument("--crashes", default="runs/mutate_crashes",
                    help="folder the crashing files are written to")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    todo = labeled_files(args.data_dir)
    todo = rng.sample(todo, min(args.files, len(todo)))
    blobs = load_blobs(args.data_dir, {b for _, _, files in todo for b in files.values()})

    codes: collections.Counter[int] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    crashes: list[str] = []
    slow: list[str] = []
    kinds: collections.Counter[str] = collections.Counter()
    runs = 0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, workflow_path, files) in enumerate(todo):
            original = blobs.get(files.get(workflow_path, ""))
            if original is None:
                continue
            root = Path(tmp) / str(i)
            write_checkout(root, files, blobs)
            for j in range(args.mutations):
                text, what = mutate(original, rng)
                kinds[what.split(" ")[0]] += 1
                (root / workflow_path).write_text(text, encoding="utf-8")
                runs += 1
                t0 = time.perf_counter()
                try:
                    code, err, messages, result = estimate_file(root, workflow_path)
                    crash = err if "Traceback" in err else None
                    render_all(result, workflow_path)
                except Exception:  # noqa: BLE001 - counting crashes is the point
                    code, messages, crash = -1, [], traceback.format_exc()
                took = time.perf_counter() - t0
                if took > args.slow:
                    slow.append(f"{label} {workflow_path} [{what}]: {took:.1f} s")
                if crash is not None:
                    out = Path(args.crashes)
                    out.mkdir(parents=True, exist_ok=True)
                    name = f"{i}-{j}.yml"
                    (out / name).write_text(f"# {label} {workflow_path}: {what}\n{text}",
                                            encoding="utf-8")
                    crashes.append(f"{out / name} [{what}]\n{crash}")
                    continue
                codes[code] += 1
                for m in messages:
                    reasons[m.split(":")[0][:60]] += 1
    elapsed = time.perf_counter() - start
    print(f"workflow files: {len(todo)}, mutated runs: {runs} (seed {args.seed})")
    print("mutations: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    print(f"runs slower than {args.slow:g} s: {len(slow)}")
    print_counts(codes, reasons, crashes, elapsed, runs, "run")
    for s in slow[:5]:
        print(f"slow: {s}")
    for c in crashes[:5]:
        print(c, file=sys.stderr)
    return 1 if crashes or slow else 0


if __name__ == "__main__":
    sys.exit(main())
