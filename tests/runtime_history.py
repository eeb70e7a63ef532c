"""A run history for the ``runtime-matrix`` fixture, in the format ``laser-ci collect`` writes.

The fixture (``tests/fixtures/repos/runtime-matrix``) is a large repository's CI in
miniature: test shards from a matrix a script computes at run time (``Unit Test / <suite>
<k>/<n> on <platform>/current``), reusable workflows nested three deep and workflows that
only run when called. This module invents its history: ``days`` days of runs of
``ci.yml`` on ``main``, each with the jobs GitHub would list and their times. Nothing comes
from real data; times are drawn from a seeded generator, so the folder is the same on
every call.

The shape of the history, as on a real repository:

- about 50 test shards per run (``pkg`` in 12 shards on three platforms, ``api`` on two,
  ``cli`` on one), 5 to 30 minutes each, slower on Windows and macOS;
- the ``api`` suite is split into one more shard from ``split_day`` on (new names, their
  history starts there), and its new last shard on Windows is cancelled in the run where
  it first appears (no time of its own);
- ``docs`` only runs on push; the e2e suites of ``integration`` come from a listing made
  at run time too.

``python tests/runtime_history.py DIR [--days N]`` writes the folder to DIR to look at.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent / "fixtures" / "repos" / "runtime-matrix"
REPO = "octo/monorepo"
WORKFLOW = ".github/workflows/ci.yml"
START = datetime(2024, 5, 1, 6, 0, tzinfo=UTC)
PROFILE = {"n_files": 4210, "total_bytes": 61_000_000,
           "by_ext": {".py": [3100, 52_000_000], ".md": [300, 2_000_000]},
           "top_level": [".github/", "pyproject.toml", "src/", "tests/"]}


@dataclass(frozen=True)
class Suite:
    name: str
    shards: int
    platforms: tuple[str, ...]
    minutes: float  # a shard's typical time on Linux


SUITES = (
    Suite("pkg", 12, ("ubuntu-latest", "windows-latest", "macos-latest"), 14.0),
    Suite("api", 4, ("ubuntu-latest", "windows-latest"), 11.0),
    Suite("cli", 3, ("ubuntu-latest",), 6.0),
)
PLATFORM_FACTOR = {"ubuntu-latest": 1.0, "windows-latest": 1.6, "macos-latest": 1.3}
E2E_SUITES = ("checkout", "login", "search")


def blob_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def fixture_files() -> dict[str, str]:
    """Every ``.github`` file of the fixture, by repo-relative path."""
    out = {}
    for path in sorted((ROOT / ".github").rglob("*")):
        if path.is_file() and path.suffix in (".yml", ".yaml"):
            out[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    return out


def shard_names(day: float, split_day: float, scale: int = 1) -> list[tuple[str, str, float]]:
    """The test shards of a run on ``day``: (display name, platform, typical seconds); the
    last shard of a split suite is named ``<suite> <n>/<n>``."""
    out = []
    for suite in SUITES:
        shards = suite.shards * scale + (1 if suite.name == "api" and day >= split_day else 0)
        for k in range(1, shards + 1):
            for platform in suite.platforms:
                # shards are not even: some test files are slower than others
                spread = 0.6 + 0.8 * ((k * 7919 + len(suite.name)) % 11) / 10
                seconds = suite.minutes * 60 * spread * PLATFORM_FACTOR[platform]
                seconds *= suite.shards * scale / shards  # a split makes each shard shorter
                name = f"Unit Test / {suite.name} {k}/{shards} on {platform}/current"
                out.append((name, platform, seconds))
    return out


def _job(name: str, seconds: float | None, start: datetime, labels: list[str],
         conclusion: str = "success") -> dict[str, Any]:
    if seconds is None:
        return {"name": name, "run_time_s": 0.0, "conclusion": conclusion,
                "runner_labels": labels, "runner_name": None, "started_at": None,
                "completed_at": None}
    end = start + timedelta(seconds=round(seconds))
    return {"name": name, "run_time_s": float(round(seconds)), "conclusion": conclusion,
            "runner_labels": labels, "runner_name": "GitHub Actions 7",
            "started_at": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "completed_at": end.strftime("%Y-%m-%dT%H:%M:%SZ")}


def make_runs(days: float = 28, runs_per_day: int = 2, split_day: float = 20.5,
              seed: int = 14, scale: int = 1) -> list[dict[str, Any]]:
    """The runs of ``ci.yml`` (oldest first) as ``runs.jsonl`` rows. ``scale`` multiplies
    the shard counts (for a repository of several hundred jobs)."""
    rng = random.Random(seed)
    files = fixture_files()
    ids = {path: blob_id(text) for path, text in files.items()}
    rows = []
    n_runs = int(days * runs_per_day)
    for i in range(n_runs):
        day = i / runs_per_day
        when = START + timedelta(days=day)
        drift = 1.0 + 0.08 * math.sin(day / 5)  # the suite grows and shrinks a little
        jobs = [_job("lint", 55 * rng.lognormvariate(0, 0.1), when, ["ubuntu-latest"]),
                _job("Plan test shards", 25 * rng.lognormvariate(0, 0.1), when,
                     ["ubuntu-latest"])]
        first_split = split_day <= day < split_day + 1 / runs_per_day
        shards = {name for name, _, _ in shard_names(day, split_day, scale)}
        new_last = next((n for n in sorted(shards) if n.startswith("Unit Test / api ")
                         and "windows" in n and n.split(" ")[4].split("/")[0]
                         == n.split(" ")[4].split("/")[1]), None)
        for name, platform, seconds in shard_names(day, split_day, scale):
            if first_split and name == new_last:
                jobs.append(_job(name, None, when, [platform], conclusion="cancelled"))
                continue
            jobs.append(_job(name, seconds * drift * rng.lognormvariate(0, 0.12), when,
                             [platform]))
        for arch in ("x64", "arm64"):
            prefix = f"integration ({arch})"
            jobs.append(_job(f"{prefix} / ubuntu-{arch}", 300 * rng.lognormvariate(0, 0.1),
                             when, ["ubuntu-latest"]))
            jobs.append(_job(f"{prefix} / e2e / suites", 20 * rng.lognormvariate(0, 0.1),
                             when, ["ubuntu-latest"]))
            for j, suite in enumerate(E2E_SUITES):
                jobs.append(_job(f"{prefix} / e2e / suite ({suite})",
                                 (120 + 60 * j) * rng.lognormvariate(0, 0.15), when,
                                 ["ubuntu-latest"]))
        jobs.append(_job("docs", 95 * rng.lognormvariate(0, 0.1), when, ["ubuntu-latest"]))
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        rows.append({
            "id": hashlib.sha256(f"{REPO}/{i}".encode()).hexdigest()[:16],
            "repo": REPO, "workflow_path": WORKFLOW, "sha": f"{i:040x}",
            "commit_date": stamp, "event": "push", "branch": "main",
            "conclusion": "success", "attempts": 1,
            "run_time_s": float(sum(j["run_time_s"] for j in jobs)),
            "files": ids, "repo_profile": PROFILE, "jobs": jobs,
        })
    return rows


def write_folder(out: Path, runs: list[dict[str, Any]]) -> Path:
    """``runs`` and the fixture's files as a collected folder at ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    files = fixture_files()

    def dump(name: str, rows: list[dict[str, Any]]) -> None:
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
        (out / f"{name}.jsonl.gz").write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))

    dump("runs", runs)
    dump("blobs", [{"id": blob_id(t), "text": t} for t in files.values()])
    dump("corpus", [{"repo": REPO, "path": p, "blob": blob_id(t)} for p, t in files.items()])
    return out


def latest_names(runs: list[dict[str, Any]]) -> list[str]:
    """The job names of the newest run."""
    return [j["name"] for j in runs[-1]["jobs"]]


if __name__ == "__main__":
    days = float(sys.argv[sys.argv.index("--days") + 1]) if "--days" in sys.argv else 28
    print(write_folder(Path(sys.argv[1]), make_runs(days=days)))
