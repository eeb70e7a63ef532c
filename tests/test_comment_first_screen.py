"""The PR comment leads with what to do: its first screen says what the pull request changes
in time (and money) and the one to three things worth doing, before any table; the wording
slips of the tables are gone (the footnote's timeout, a group's count, unchanged jobs)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from laser_ci.report.comment import render_pr_comment
from laser_ci.report.tables import timeout_footnote

ROOT = Path(__file__).resolve().parent.parent
PATH = ".github/workflows/ci.yml"


def _demo_pr() -> Any:
    spec = importlib.util.spec_from_file_location("demo_pr", ROOT / "tools" / "demo_pr.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def demo() -> Any:
    return _demo_pr()


def test_a_pr_that_adds_a_matrix_instance_says_what_changes_and_what_to_do(demo: Any) -> None:
    text = demo.demo_comment("public")
    first = text.splitlines()[:15]
    screen = "\n".join(first)
    assert "<details" not in screen and "| Job |" not in screen  # no table before it
    assert first[1].startswith("### ⏱️ laser-ci: this PR adds ")
    assert first[1].endswith(" of runner time per run")
    assert "**CI / test (ubuntu-24.04-arm, 3.12)** new job" in screen
    assert "runner time **" in screen and "longest critical path" in screen
    assert "**Worth doing**" in screen
    todo = [line[3:] for line in first if line[:3] in ("1. ", "2. ", "3. ")]
    assert 1 <= len(todo) <= 3
    assert todo[0].startswith("Add `timeout-minutes: ") and "**CI / test (…)**" in todo[0]
    # a public repository: standard runners are free, so one line and no cost column
    assert "runs free at list price" in screen
    assert "$0.000" not in text and "Cost (median)" not in text


def test_a_private_repository_gets_the_cost_and_the_billed_minutes(demo: Any) -> None:
    first = "\n".join(demo.demo_comment("private").splitlines()[:15])
    assert "Cost per run **$" in first and "(+$" in first
    assert "billed minutes** (each job rounded up to a whole minute" in first


def test_unchanged_instances_show_no_change(demo: Any) -> None:
    text = demo.demo_comment("public")
    rows = [line for line in text.splitlines() if line.startswith("| [test (")]
    assert len(rows) == 7
    assert sum("new job" in r for r in rows) == 1
    assert all("no change" in r for r in rows if "new job" not in r)


def test_a_group_row_and_its_folded_list_count_the_same_instances() -> None:
    # the row said "8 instances" and its folded list "9 instances" (a removed one counted)
    def shard(i: int) -> dict[str, Any]:
        return _job(f"shard ({i})", 60, f"d{i}", id="shard", group="shard (…)")

    base = _result(*(shard(i) for i in range(9)))
    head = _result(*(shard(i) for i in range(1, 11)))  # one removed, two added
    text = render_pr_comment(head, base, [PATH])
    assert "**shard (…)** · 10 instances (2 new, 1 removed) (below)" in text
    assert "<details><summary>shard (…): 10 instances (2 new, 1 removed)</summary>" in text


def _job(name: str, p50: float, definition: str, **extra: Any) -> dict[str, Any]:
    return {"id": name, "name": name, "label": name, "group": name, "definition": definition,
            "runtime_s": {"p10": p50 / 2, "p50": p50, "p90": p50 * 2}, **extra}


def _result(*jobs: dict[str, Any]) -> dict[str, Any]:
    return {"workflows": [{"path": PATH, "name": "CI", "jobs": list(jobs),
                           "billable_s": sum(j["runtime_s"]["p50"] for j in jobs),
                           "critical_path_s": max(j["runtime_s"]["p50"] for j in jobs)}],
            "errors": []}


def test_a_job_written_the_same_keeps_its_base_prediction() -> None:
    # adding a job moved the neighbour's prediction by 12 s: noise, not a change of lint's
    base = _result(_job("lint", 60, "a"))
    head = _result(_job("lint", 72, "a"), _job("docs", 100, "b"))
    text = render_pr_comment(head, base, [PATH])
    assert "| lint | 1m 00s | 30s – 2m 00s | no change | cold |" in text
    assert "runner time **2m 40s** (+1m 40s)" in text
    # written differently: the change is shown
    edited = render_pr_comment(_result(_job("lint", 72, "c")), base, [PATH])
    assert "| lint | 1m 12s | 36s – 2m 24s | +12s | cold |" in edited


def test_the_timeout_footnote_names_the_timeout_the_job_has() -> None:
    own = {"timeout_minutes": 10}
    none = {"timeout_minutes": None}
    assert timeout_footnote([own]) == "⚠️ the p90 runtime exceeds the job's `timeout-minutes`."
    assert "GitHub's default timeout (360 minutes; the job sets no" in timeout_footnote([none])
    assert "(GitHub's default of 360 where it sets none)" in timeout_footnote([own, none])
    assert "default 360" not in timeout_footnote([own])


def _advised(name: str, p50: float, definition: str, kind: str, suggested: dict[str, Any],
             message: str, **extra: Any) -> dict[str, Any]:
    return _job(name, p50, definition, advice=[{"kind": kind, "message": message,
                                                "suggested": suggested}], **extra)


def test_worth_doing_puts_the_jobs_the_pr_touches_first_and_says_at_most_three() -> None:
    timeout = "No `timeout-minutes`: a hung run holds the runner. Suggest it."
    old = [_advised(f"old{i}", 600, f"o{i}", "timeout", {"timeout-minutes": 20}, timeout)
           for i in range(3)]
    new = _advised("bench", 300, "n", "runner", {"runs-on": "ubuntu-24.04-arm"},
                   "Arm is 37% cheaper for this job. More words.")
    own = _advised("e2e", 900, "e-new", "timeout", {"timeout-minutes": 25},
                   "`timeout-minutes: 10` is below the predicted p90. Suggest 25.",
                   timeout_minutes=10)
    base = _result(*old, _job("e2e", 900, "e-old", timeout_minutes=10))
    head = _result(*old, new, own)
    text = render_pr_comment(head, base, [PATH])
    todo = [line[3:] for line in text.splitlines() if line[:3] in ("1. ", "2. ", "3. ", "4. ")]
    assert len(todo) == 3
    # touched first (e2e edited, bench new), timeouts before runners, then the rest
    assert todo[0] == ("Set `timeout-minutes: 25` on **CI / e2e**: `timeout-minutes: 10` is "
                       "below the predicted p90.")
    assert todo[1] == ("Set `runs-on: ubuntu-24.04-arm` on **CI / bench** (new in this PR): "
                       "Arm is 37% cheaper for this job.")
    assert todo[2].startswith("Add `timeout-minutes: 20` to **CI / old")
