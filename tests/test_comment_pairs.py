"""The PR comment on before/after pairs shaped like real pull requests (small hand-written
results of ``laser-ci estimate --format json``): what a reader sees in the headline and the
tables must agree with the totals."""

from __future__ import annotations

from typing import Any

from laser_ci.report.comment import render_pr_comment

PATH = ".github/workflows/ci.yml"


def _job(name: str, p50: float, **extra: Any) -> dict[str, Any]:
    job = {"id": name, "name": name, "label": name, "group": name,
           "runtime_s": {"p10": p50 / 4, "p50": p50, "p90": p50 * 4}}
    job.update(extra)
    return job


def _result(*jobs: dict[str, Any], path: str = PATH, name: str = "CI",
            errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    never = [j for j in jobs if j.get("runs_on_events") == []]
    billable = sum(j["runtime_s"]["p50"] for j in jobs if j not in never)
    wf = {"path": path, "name": name, "jobs": list(jobs), "billable_s": billable,
          "critical_path_s": max((j["runtime_s"]["p50"] for j in jobs if j not in never),
                                 default=0.0)}
    return {"predictor": "history-recent", "workflows": [wf], "errors": errors or []}


def _headline(text: str) -> str:
    return text.split("<details")[0]


def test_a_job_that_never_runs_changes_nothing_in_the_biggest_changes() -> None:
    # spring-projects/sts4 2c77f6d -> 2724480: a new workflow whose purge_cache job's `if:`
    # is false on every trigger was listed as "new job (1m 08s)", and a job turned off by
    # its `if:` showed "no change", while the billable time (which leaves such jobs out)
    # said otherwise
    base = _result(_job("build", 60), _job("deploy", 300))
    head = _result(_job("build", 60), _job("deploy", 300, runs_on_events=[]),
                   _job("purge_cache", 600, runs_on_events=[]))
    text = render_pr_comment(head, base, [PATH])
    first = _headline(text)
    assert "runner time **1m 00s** (-5m 00s)" in first
    assert "**CI / deploy** -5m 00s" in first
    assert "purge" not in first
    assert "| deploy | 5m 00s | 1m 15s – 20m 00s | -5m 00s | cold |" in text


def test_a_workflow_unreadable_at_one_end_is_not_called_new_or_removed() -> None:
    # jbangdev/jbang 5c99b2f -> 7ba44a7 fixes invalid YAML in publish-packages.yml: the
    # comment called the file a "new workflow", and nothing said it was there, unreadable;
    # chat2db/Chat2DB bf04330 -> e2bdf7c comments all of test_linux.yml out: "removed"
    bad = [{"path": PATH, "line": 23, "message": "invalid YAML: could not find expected ':'"}]
    fixed = render_pr_comment(_result(_job("build", 60)),
                              {"workflows": [], "errors": bad}, [PATH])
    assert "<code>.github/workflows/ci.yml</code> (unreadable at base):" in fixed
    assert "(new workflow)" not in fixed
    broken = render_pr_comment({"workflows": [], "errors": bad}, _result(_job("build", 60)),
                               [PATH])
    assert "<code>.github/workflows/ci.yml</code> (unreadable at head):" in broken
    assert "(removed workflow)" not in broken
    added = render_pr_comment(_result(_job("build", 60)), {"workflows": [], "errors": []}, [PATH])
    assert "(new workflow):" in added


def test_the_same_advice_on_the_instances_of_a_small_matrix_is_one_line() -> None:
    # pulumi/pulumi-gcp 5c40fc0 -> bc73e89: each of five workflows has test and build_sdk
    # over 5 languages; the advice said the same timeout line once per instance (50 lines)
    msg = ("No `timeout-minutes`: a hung run holds the runner for up to 360 min (GitHub's "
           "default). That is $7.920 per hung run at list price. Suggest `timeout-minutes: {}`.")
    jobs = [_job(f"test ({lang})", 900, id="test", group="test (…)",
                 runner={"label": "ubuntu-latest"}, cost_usd=0.12,
                 advice=[{"kind": "timeout", "message": msg.format(185 + 5 * (i == 4))}])
            for i, lang in enumerate(("nodejs", "python", "dotnet", "go", "java"))]
    jobs.append(_job("lint", 60, advice=[{"kind": "timeout", "message": msg.format(5)}]))
    text = render_pr_comment(_result(*jobs), _result(*jobs), [PATH])
    advice = text.split("**Advice**")[1].split("</details>")[0].strip().splitlines()
    assert advice == [
        "- CI / test (…) (5 instances): `timeout` 5 of them, e.g. test (nodejs): No "
        "`timeout-minutes`: a hung run holds the runner for up to 360 min (GitHub's "
        "default). That is $7.920 per hung run at list price. Suggest "
        "`timeout-minutes: 185`–`190`.",
        "- CI / lint: `timeout` No `timeout-minutes`: a hung run holds the runner for up to "
        "360 min (GitHub's default). That is $7.920 per hung run at list price. Suggest "
        "`timeout-minutes: 5`.",
    ]
    # the runner table keeps one row per instance below GROUP_MIN
    assert "| CI / test (nodejs) |" in text and "| CI / test (java) |" in text


def test_adjacent_run_time_parts_of_a_name_are_one_hole() -> None:
    # line/armeria b8eb810 -> d328e27: the 8 instances of `build-${{ matrix.on }}-jdk-${{
    # matrix.java }}${{ matrix.min-java && ... }}${{ matrix.leak && '-leak' || '' }}...`
    # folded under "build-…-jdk-………………", one hole per expression
    jobs = [_job(f"build-self-hosted-jdk-{v}", 480, id="build", group="build-…-jdk-………………")
            for v in range(8, 16)]
    text = render_pr_comment(_result(*jobs), _result(*jobs), [PATH])
    assert "**build-…-jdk-…** · 8 instances (below)" in text
    assert "<summary>build-…-jdk-…: 8 instances</summary>" in text
    assert "……" not in text
    from laser_ci.report.jobs import hide_expressions
    assert hide_expressions("x-${{ a }}${{ b }} ${{ c }}") == "x-… …"


def test_a_grouped_job_is_one_of_the_biggest_changes() -> None:
    # adoptium/installer 3fd483d -> c6b8867 without linux.yml at the head: the 32 instances
    # of "Check … on … … …" (-1h 03m, one row in the table) were the headline's biggest
    # changes as three of its instances, "removed job (was 1m 58s)" each
    def shards(p50: float) -> list[dict[str, Any]]:
        return [_job(f"shard ({i})", p50, id="shard", group="shard (…)") for i in range(10)]

    base = _result(_job("lint", 60), *shards(120))
    head = _result(_job("lint", 120), *shards(150))
    first = _headline(render_pr_comment(head, base, [PATH]))
    assert ("Biggest changes: **CI / shard (…)** (10 instances) +5m 00s · **CI / lint** +1m 00s"
            "\n") in first
    gone = _headline(render_pr_comment(_result(_job("lint", 60)), base, [PATH]))
    assert "**CI / shard (…)** removed job, 10 instances (was Σ 20m 00s)" in gone
    # its row in the table: the instances gone, not "0 instances (10 removed)"
    table = render_pr_comment(_result(_job("lint", 60)), base, [PATH])
    assert "**shard (…)** · 10 instances removed" in table and "· 0 instances" not in table
    added = _headline(render_pr_comment(base, _result(_job("lint", 60)), [PATH]))
    assert "**CI / shard (…)** new job, 10 instances (Σ 20m 00s)" in added


def test_a_renamed_workflow_says_its_old_path() -> None:
    # JabRef/jabref afb9e76 -> 2afd1f6 renames check-links.yaml to check-links.yml and
    # cleanup_pr.yml to cleanup-pr.yml: the blocks named the new path alone, so "no change"
    # beside a file the PR's diff shows as moved read as a mistake
    old = ".github/workflows/cleanup_pr.yml"
    base = _result(_job("cleanup", 16), path=old)
    text = render_pr_comment(_result(_job("cleanup", 16)), base, [old, PATH],
                             renamed={old: PATH})
    assert ("<code>.github/workflows/ci.yml</code> (renamed from "
            "<code>.github/workflows/cleanup_pr.yml</code>): critical path 16s (no change)") in text


def test_a_removed_job_that_never_ran_is_not_said_to_have_taken_time() -> None:
    # a removed job whose `if:` was false on every trigger said "removed job (was 1m 27s)":
    # it took no time at the base, and the totals left it out
    base = _result(_job("build", 60), _job("nightly", 87, runs_on_events=[]), _job("old", 30))
    head = _result(_job("build", 60))
    text = render_pr_comment(head, base, [PATH])
    row = next(line for line in text.splitlines() if "~~nightly~~" in line)
    assert "removed job |" in row and "was" not in row
    assert "removed job (was 30s)" in next(line for line in text.splitlines() if "~~old~~" in line)


def test_a_job_calling_a_remote_workflow_names_it_as_its_runner() -> None:
    # adoptium/installer's codefreeze job calls a remote reusable workflow: the assumed
    # runner cell said "–"
    remote = _job("codefreeze", 20, remote_workflow="adoptium/.github/.github/workflows/cf.yml@main",
                  runner={"label": None}, cost_usd=None)
    text = render_pr_comment(_result(remote, _job("build", 60, runner={"label": "ubuntu-latest"},
                                                  cost_usd=0.006)), None, [PATH])
    row = next(line for line in text.splitlines() if line.startswith("| CI / codefreeze"))
    assert "reusable `adoptium/.github/.github/workflows/cf.yml@main`" in row
