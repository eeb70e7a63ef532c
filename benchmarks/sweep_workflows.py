"""Run ``laser-ci estimate`` on every labeled workflow of a data folder; count crashes.

Each run's files (workflows and local actions at its commit) are written to a temporary
checkout and the real CLI is invoked in-process on the run's workflow file, exactly as a
user would. Prints how many files were read, how many were reported as errors (with the
most common reasons), how many crashed (a traceback: must be 0), and the time taken.
``--corpus``: the unlabeled workflow versions of ``corpus.jsonl`` instead (some 32,000
real files), each alone in its checkout, so a local action or reusable workflow it names
is missing, as in a sparse checkout.

    python benchmarks/sweep_workflows.py ../shared/data/gha-runs [--corpus] [--limit N]

``--checkouts``: the folder holds checkouts (``<owner>+<name>@<commit>/.github``, as
``../shared/data/real-workflows``); each one's ``.github/workflows`` is estimated as a
whole, as a user would (``laser-ci estimate .github/workflows --repo owner/name``), and a
table says per checkout: workflows, jobs, error lines, jobs on runners without a price
(of them set at run time), names that still show ``${{ }}`` though known before the run,
billable time, cost and seconds taken. ``--event NAME`` estimates that trigger's runs.

    python benchmarks/sweep_workflows.py ../shared/data/real-workflows --checkouts

``--schema``: only GitHub's workflow schema (laser_ci/workflows/schema.py) on each file,
the newest version of each repository's file with ``--corpus``: how many files it
refuses and why (for labeled runs, whether the run took any time: GitHub ran it).

    python benchmarks/sweep_workflows.py ../shared/data/gha-runs --corpus --schema
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import re
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


def estimate_checkout(root: Path, *args: str) -> tuple[int, str, dict[str, Any]]:
    """``laser-ci estimate <root>/.github/workflows --repo-root <root> --format json`` in
    process: exit code, stderr and the result. A crash propagates."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main(["estimate", str(root / ".github" / "workflows"), "--repo-root", str(root),
                  "--format", "json", *args], standalone_mode=False)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, err.getvalue(), json.loads(out.getvalue()) if code in (0, 1) else {}


# what only the run knows, named in a `${{ }}` (a matrix value written as an expression
# over a job's outputs, say): such a name is not expected to be known before the run
_RUN_TIME = re.compile(r"\$\{\{[^}]*\b(needs|steps|jobs|secrets|vars|env|runner|job)\.")


def checkout_row(name: str, result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """One table row: what the estimate of one checkout's workflows says."""
    workflows = [w for w in result.get("workflows", ()) if not w.get("called_only")]
    jobs = [j for w in workflows for j in w["jobs"]]
    billing = [j for j in jobs if j.get("runs_on_events") != [] and not j["runner"].get("retired")]
    unpriced = [j for j in billing if j.get("cost_usd") is None and not j.get("remote_workflow")]
    raw = [j for j in jobs if "${{" in j["name"] and not (j.get("run_time") or {}).get("name")
           and not _RUN_TIME.search(j["name"])]
    return {"checkout": name, "workflows": len(workflows), "jobs": len(jobs),
            "errors": len(result.get("errors", ())), "unpriced": len(unpriced),
            "run_time_runner": sum(1 for j in unpriced if (j.get("run_time") or {}).get("runs-on")),
            "raw_names": len(raw), "billable_h": sum(w.get("billable_s") or 0 for w in workflows) / 3600,
            "cost_usd": sum(w.get("cost_usd") or 0 for w in workflows), "seconds": seconds,
            "raw_examples": [j["name"] for j in raw[:3]],
            "error_lines": [f"{e['path']}:{e['line']}: {e['message']}" for e in result.get("errors", ())]}


def dot_slash_check(root: Path, args: list[str]) -> str | None:
    """For a checkout whose files use ``$/``: the jobs and billable time of its workflows,
    and of a copy with every ``$/`` written ``./`` (they must be equal); None without any."""
    files = [p for p in (root / ".github").rglob("*") if p.is_file()]
    if not any("$/" in p.read_text(encoding="utf-8", errors="replace") for p in files):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / root.name
        for p in files:
            target = copy / p.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(p.read_text(encoding="utf-8", errors="replace").replace("$/", "./"),
                              encoding="utf-8")
        figures = []
        for where in (root, copy):
            _code, _err, result = estimate_checkout(where, *args)
            row = checkout_row(where.name, result, 0.0)
            figures.append((row["jobs"], round(row["billable_h"] * 3600, 1), round(row["cost_usd"], 3)))
    (a, b) = figures
    return (f"jobs {a[0]} / {b[0]}, billable {a[1]} s / {b[1]} s, cost ${a[2]} / ${b[2]}: "
            + ("equal" if a == b else "DIFFERENT"))


def sweep_checkouts(folder: str, extra: list[str]) -> int:
    """The table of :func:`checkout_row` over every checkout in ``folder``; 1 on a crash."""
    rows, crashes = [], []
    for root in sorted(p for p in Path(folder).iterdir() if (p / ".github" / "workflows").is_dir()):
        owner_name = root.name.split("@", 1)[0].replace("+", "/", 1)
        start = time.perf_counter()
        try:
            code, err, result = estimate_checkout(root, "--repo", owner_name, *extra)
        except Exception:  # noqa: BLE001 - counting crashes is the point
            crashes.append(f"{root.name}\n{traceback.format_exc()}")
            continue
        if "Traceback" in err or code not in (0, 1):
            crashes.append(f"{root.name} (exit {code})\n{err}")
        rows.append(checkout_row(root.name, result, time.perf_counter() - start))
    print("| checkout | workflows | jobs | error lines | jobs without a price (set at run time) "
          "| `${{ }}` names known before the run | billable | cost per run | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['checkout']} | {r['workflows']} | {r['jobs']} | {r['errors']} | "
              f"{r['unpriced']} ({r['run_time_runner']}) | {r['raw_names']} | "
              f"{r['billable_h']:.1f} h | ${r['cost_usd']:.2f} | {r['seconds']:.1f} |")
    total = {k: sum(r[k] for r in rows) for k in ("workflows", "jobs", "errors", "unpriced",
                                                   "raw_names", "seconds")}
    print(f"| **all {len(rows)}** | {total['workflows']} | {total['jobs']} | {total['errors']} | "
          f"{total['unpriced']} | {total['raw_names']} | | | {total['seconds']:.1f} |")
    print(f"crashes (tracebacks): {len(crashes)}")
    for root in sorted(p for p in Path(folder).iterdir() if (p / ".github" / "workflows").is_dir()):
        same = dot_slash_check(root, ["--repo", root.name.split("@", 1)[0].replace("+", "/", 1),
                                      *extra])
        if same is not None:
            print(f"`$/` read as `./` in {root.name}: {same}")
    for r in rows:
        for line in r["error_lines"]:
            print(f"  error: {r['checkout']}: {line}")
        for name in r["raw_examples"]:
            print(f"  raw name: {r['checkout']}: {name}")
    for c in crashes[:3]:
        print(c, file=sys.stderr)
    return 1 if crashes else 0


def schema_sweep(todo: list[Todo], blobs: dict[str, str], ran: dict[int, bool]) -> int:
    """GitHub's workflow schema alone on each file of ``todo``: files refused and why."""
    from laser_ci.workflows.schema import check_workflow
    from laser_ci.workflows.yamlload import load_yaml

    reasons: collections.Counter[str] = collections.Counter()
    refused, checked, refused_ran = [], 0, 0
    start = time.perf_counter()
    for i, (label, path, files) in enumerate(todo):
        data = load_yaml(blobs.get(files.get(path, ""), "")).data
        if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
            continue
        checked += 1
        errors = check_workflow(path, data)
        if errors:
            refused.append(f"{label} {errors[0]}")
            refused_ran += ran.get(i, False)
        for e in errors:
            words = e.message.split(": ", 2)[-1]
            reasons[re.sub(r"`[^`]*`", "`…`", re.sub(r"^jobs\.[^.:]+", "jobs.<id>", words))] += 1
    print(f"workflow files checked: {checked}; refused by the schema: {len(refused)}"
          + (f" (of them with a run that took time: {refused_ran})" if ran else "")
          + f"; {time.perf_counter() - start:.1f} s")
    for reason, k in reasons.most_common(12):
        print(f"  {k:5d}  {reason}")
    for line in refused[:30]:
        print(f"  {line}")
    return 0


def main_(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir")
    ap.add_argument("--corpus", action="store_true",
                    help="the unlabeled corpus's workflow versions, not the labeled runs'")
    ap.add_argument("--limit", type=int, default=0, help="only the first N distinct files")
    ap.add_argument("--checkouts", action="store_true",
                    help="data_dir holds checkouts (<owner>+<name>@<commit>/.github): a table")
    ap.add_argument("--event", help="with --checkouts: estimate the runs of this trigger")
    ap.add_argument("--schema", action="store_true",
                    help="only GitHub's workflow schema; with --corpus each file's newest version")
    args = ap.parse_args(argv)
    if args.checkouts:
        return sweep_checkouts(args.data_dir, ["--event", args.event] if args.event else [])

    todo = corpus_files(args.data_dir) if args.corpus else labeled_files(args.data_dir)
    ran: dict[int, bool] = {}
    if args.schema and args.corpus:  # the newest version of each file (the corpus's order)
        todo = list({(label, path): (label, path, files) for label, path, files in todo}.values())
    elif args.schema:
        took = {(r["repo"], r["files"].get(r["workflow_path"])): bool(r.get("run_time_s"))
                for r in load_runs(args.data_dir)}
        ran = {i: took.get((label, files.get(path)), False)
               for i, (label, path, files) in enumerate(todo)}
    if args.limit:
        todo = todo[: args.limit]
    blobs = load_blobs(args.data_dir, {b for _, _, files in todo for b in files.values()})
    if args.schema:
        return schema_sweep(todo, blobs, ran)

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
