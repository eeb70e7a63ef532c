"""The PR comment and job summary Markdown (laser_ci.report.comment): snapshot and edge cases."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from laser_ci.report import comment
from laser_ci.report.comment import (
    COMMENT_LIMIT,
    MARKER,
    Context,
    diff_results,
    over_timeout,
    render_pr_comment,
    render_summary,
    totals,
)

FIXTURES = Path(__file__).parent / "fixtures" / "action"
CHANGED = [
    ".github/workflows/ci.yml",  # changed: test (3.11) and lint removed, test (3.13), e2e added
    ".github/workflows/release.yml",  # new workflow
    ".github/workflows/deploy.yml",  # removed workflow
    ".github/workflows/nightly.yml",  # unreadable at head: only in errors
]
CTX = Context(repository="octo/app", head_sha="1111111aaaaaaa", base_sha="2222222bbbbbbb")


def _load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture
def head() -> dict:
    return _load("pr_head.json")


WARM = {"test (3.12)": 12, "build": 20, "build docs": 1}  # earlier runs each prediction saw
HISTORY_NOTE = "no completed runs on `main` for `lint.yml`: cold-start predictions for their jobs"


def _with_history(result: dict) -> dict:
    """The result as the Action records it with history: ``history_runs`` on every job
    (None: cold start) and the history block with its notes."""
    result = copy.deepcopy(result)
    for wf in result["workflows"]:
        for job in wf["jobs"]:
            job["history_runs"] = WARM.get(job["name"])
    result["history"] = {"branch": "main", "max_runs": 20, "workflows": 2,
                         "notes": [HISTORY_NOTE]}
    return result


@pytest.fixture
def base() -> dict:
    return _load("pr_base.json")


def _snapshot(name: str, text: str) -> None:
    path = FIXTURES / name
    if os.environ.get("UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), "rerun with UPDATE_SNAPSHOTS=1 to accept"


def test_pr_comment_snapshot(head: dict, base: dict) -> None:
    text = render_pr_comment(_with_history(head), _with_history(base), CHANGED, context=CTX)
    _snapshot("pr_comment.md", text)


def test_summary_snapshot(head: dict) -> None:
    _snapshot("push_summary.md", render_summary(_with_history(head), context=CTX))


def test_warm_and_cold_per_job(head: dict, base: dict) -> None:
    text = render_pr_comment(_with_history(head), base, CHANGED, context=CTX)

    def row(start: str) -> str:
        return next(line for line in text.splitlines() if line.startswith(start))

    assert row("| [test (3.12)]").endswith("| +3m 10s | warm (12 runs) |")
    assert row("| [build]").endswith("| no change | warm (20 runs) |")
    assert row("| [test (3.13)]").endswith("| new job | cold |")
    assert row("| ~~lint~~").endswith("| removed job (was 1m 05s) | – |")  # no prediction
    assert row("| **Docs**").endswith("| 2m 00s | 1m 10s – 3m 20s | warm (1 run) |")  # unchanged
    first = text.split("<details>")[0]
    assert "History: **3 of 6 jobs warm** (predicted with their earlier runs on `main`), 3 cold" \
        in first
    assert f"> [!NOTE]\n> {HISTORY_NOTE}\n" in first
    assert "from the workflow files and, for warm jobs, their earlier runs, before CI runs" in text


def test_all_cold_without_history(head: dict, base: dict) -> None:
    text = render_pr_comment(head, base, CHANGED, context=CTX)  # no history_runs at all
    assert "History: all 6 jobs **cold** (predicted from the workflow files alone)" in text
    assert "warm" not in text and "[!NOTE]" not in text
    assert "from the workflow files alone, before CI runs" in text
    two = dict(head, history={"notes": ["a", "b"]})
    assert "> [!NOTE]\n> - a\n> - b\n" in render_summary(two)


def test_diff_statuses(head: dict, base: dict) -> None:
    diffs = {d.path: d for d in diff_results(head, base, CHANGED)}
    assert {p: d.status for p, d in diffs.items()} == {
        ".github/workflows/ci.yml": "changed",
        ".github/workflows/release.yml": "new",
        ".github/workflows/deploy.yml": "removed",
        ".github/workflows/docs.yml": "unchanged",
    }
    jobs = {j.name: (j.status, j.delta_s) for j in diffs[".github/workflows/ci.yml"].jobs}
    assert jobs == {
        "test (3.12)": ("changed", 190.0),
        "test (3.13)": ("new", 600.0),
        "build": ("changed", 0.0),
        "e2e": ("new", 540.0),
        "lint": ("removed", -65.0),
        "test (3.11)": ("removed", -380.0),
    }
    assert diffs[".github/workflows/ci.yml"].delta("billable_s") == 660.0


def test_headline_has_totals_and_biggest_changes(head: dict, base: dict) -> None:
    text = render_pr_comment(head, base, CHANGED, context=CTX)
    first = text.split("<details>")[0]
    assert text.startswith(MARKER + "\n")
    assert "**3 of 4 workflows changed**" in first
    # billable: head 35m, base = docs 2m (unchanged) + ci 20m + deploy 1m = 23m
    assert "runner time **35m 00s** (+12m 00s)" in first
    assert "longest critical path **20m 35s** (+11m 25s)" in first
    assert "**CI / test (3.13)** new job (10m 00s)" in first
    assert "removed job (was 6m 20s)" in first
    assert text.count("<details") == text.count("</details>")


def test_renamed_workflow_is_matched_to_its_base(head: dict, base: dict) -> None:
    base = copy.deepcopy(base)
    base["workflows"][0]["path"] = ".github/workflows/old-ci.yml"
    renamed = {".github/workflows/old-ci.yml": ".github/workflows/ci.yml"}
    diffs = diff_results(head, base, [".github/workflows/old-ci.yml"], renamed)
    ci = next(d for d in diffs if d.path == ".github/workflows/ci.yml")
    assert ci.status == "changed"
    assert {j.name: j.status for j in ci.jobs}["test (3.12)"] == "changed"


def test_duplicate_job_names_pair_in_order() -> None:
    def wf(*p50s: float) -> dict:
        jobs = [{"name": "x", "runtime_s": {"p10": s, "p50": s, "p90": s}} for s in p50s]
        return {"workflows": [{"path": "w.yml", "name": "W", "jobs": jobs}]}

    (d,) = diff_results(wf(10, 20, 30), wf(10, 25), ["w.yml"])
    assert [(j.status, j.delta_s) for j in d.jobs] == [
        ("changed", 0.0),
        ("changed", -5.0),
        ("new", 30.0),
    ]


def test_no_changed_workflow(head: dict) -> None:
    text = render_pr_comment(head, {"workflows": []}, [], context=CTX)
    assert "**No workflow changed** (3 workflows)" in text
    assert "runner time **35m 00s** (no change)" in text
    assert "Unchanged workflows: 3 workflows, 6 jobs" in text


def test_truncated_to_the_comment_limit(head: dict, base: dict) -> None:
    big = copy.deepcopy(head)
    job = big["workflows"][0]["jobs"][0]
    big["workflows"][0]["jobs"] = [
        dict(job, name=f"shard {i} of a very long matrix with a long name") for i in range(2000)
    ]
    text = render_pr_comment(big, base, CHANGED, context=CTX)
    assert len(text) <= COMMENT_LIMIT.count
    assert text.startswith(MARKER)
    assert "65,536-character limit" in text
    assert text.count("<details") == text.count("</details>")
    full = render_pr_comment(big, base, CHANGED, context=CTX, limit=comment.SUMMARY_LIMIT)
    assert len(full) > COMMENT_LIMIT.count and "65,536" not in full


@pytest.mark.parametrize("name", ["ascii shard name", "テストシャード名前付き"], ids=["ascii", "cjk"])
def test_the_job_summary_fits_its_limit_in_bytes(name: str) -> None:
    # the runner drops a step's whole summary past 1 MiB, counted in bytes: three per CJK
    # character, so a summary counted in characters passed it
    job = {"name": "", "runtime_s": {"p10": 1, "p50": 2, "p90": 3}}
    jobs = [dict(job, name=f"{name} {i} " + name * 8) for i in range(6000)]
    result = {"workflows": [{"path": "w.yml", "name": "W", "jobs": jobs}]}
    text = render_summary(result)
    assert len(text.encode("utf-8")) <= comment.SUMMARY_LIMIT.count
    assert "1 MiB limit" in text and "job summary and" not in text
    assert text.count("<details") == text.count("</details>")


def test_names_cannot_break_the_table() -> None:
    job = {"name": "a|b <script> @org/team", "runtime_s": {"p10": 1, "p50": 2, "p90": 3},
           "runner": {"label": "x`](https://evil)"}}
    result = {"workflows": [{"path": "w.yml", "name": "W @you", "jobs": [job]}]}
    text = render_summary(result)
    assert "a\\|b &lt;script&gt; @&#8203;org/team" in text and "<script>" not in text
    assert "@you" not in text and "@org" not in text
    assert "x\\`\\](https:&#8203;//evil)" in text  # escaped: no code span or link break-out


def test_over_timeout() -> None:
    def job(p90: float, timeout: object) -> dict:
        return {"runtime_s": {"p10": 1, "p50": 2, "p90": p90}, "timeout_minutes": timeout}

    assert over_timeout(job(31 * 60, 30)) == (31.0, 30.0)
    assert over_timeout(job(29 * 60, 30)) is None
    assert over_timeout(job(361 * 60, None)) == (361.0, 360.0)  # GitHub's default
    assert over_timeout(job(999 * 60, "${{ matrix.t }}")) is None  # an expression: unknown


def test_totals(head: dict) -> None:
    t = totals(head)
    assert (t.workflows, t.jobs, t.billable_s, t.critical_path_s) == (3, 6, 2100.0, 1235.0)
