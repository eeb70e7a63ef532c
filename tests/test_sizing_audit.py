"""Sizing as a user relies on it: retired labels, cron counts, the runner catalog against
GitHub's price list (laser_ci.sizing)."""

from __future__ import annotations

import pytest

from laser_ci.predictors.base import Runtime
from laser_ci.sizing.advice import advise
from laser_ci.sizing.runners import resolve_runner


def R(runs_on, matrix=None, visibility="private", **kw):
    return resolve_runner(runs_on, matrix or {}, visibility=visibility, **kw)


# --- retired labels -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "runs_on, matrix, successor",
    [
        ("ubuntu-20.04", None, "ubuntu-24.04"),
        (["Ubuntu-18.04"], None, "ubuntu-24.04"),
        ("windows-2019", None, "windows-2025"),
        ("macos-12", None, "macos-15-intel"),  # Intel: same architecture, not macos-latest
        ("macos-13", None, "macos-15-intel"),
        ("${{ matrix.os }}", {"os": "windows-2019"}, "windows-2025"),
    ],
)
def test_a_retired_label_is_said_to_be_retired_with_the_label_to_use(runs_on, matrix, successor):
    """A retired label is not priced, and the advice (the only place a table shows it) says
    the job fails without running and which label to use, instead of a hung-run timeout."""
    r = R(runs_on, matrix)
    assert r.kind == "unknown" and r.price_per_min is None and r.retired
    assert r.successor == successor and f"`{successor}`" in r.reason
    assert r.to_json()["retired"] is True
    out = advise(Runtime(20, 61, 300), r, None, visibility="private")
    [a] = out  # no "a hung run holds the runner for up to 360 min": there is no runner
    assert a.kind == "runner" and "retired by GitHub" in a.message
    assert "fails without running" in a.message
    assert a.suggested == {"runs-on": successor}
    assert "per run" in a.message  # what it would cost on the current label
    assert "timeout" not in [x.kind for x in advise(None, r, None, visibility="public")]


def test_a_current_label_is_not_retired():
    r = R("ubuntu-latest")
    assert not r.retired and r.successor is None and r.to_json()["retired"] is False


# --- crons --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cron, runs",
    [
        # every other day of the month: days 1, 3, ..., 31 (29 and 31 not in every month)
        ("0 0 */2 * *", 14 + 11.25 / 12 + 7 / 12),  # was 30.44: the `*/2` was ignored
        ("0 0 * * */2", 4 * 30.44 / 7),  # Sun, Tue, Thu, Sat; was 30.44
        ("0 0 */2 * 1", (14 + 11.25 / 12 + 7 / 12) / 7),  # `*...`: both must match
        ("0 5/1 * * *", 19 * 30.44),  # hours 5-23; was 5 o'clock only (30.44)
        ("5/15 * * * *", 4 * 24 * 30.44),
        ("0 0 * * *", 30.44),
        ("0 0 1 * 1", 1 + 30.44 / 7 - 1 / 7),  # both restricted: either matches
    ],
)
def test_cron_day_fields_with_a_step_and_a_start_with_step_one(cron, runs):
    from laser_ci.sizing.schedule import cron_runs_per_month

    assert cron_runs_per_month(cron) == pytest.approx(runs)


# --- advice -------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["ubuntu-latest-gpu-4-cores", "windows-gpu"])
def test_a_gpu_runner_in_a_public_repository_is_not_moved_to_a_runner_without_a_gpu(label):
    """It said: "... where `ubuntu-latest` (4 vCPU, 16 GB) is free" with runs-on
    ubuntu-latest, a runner the job's GPU work cannot run on."""
    r = R(label, visibility="public")
    [a] = [a for a in advise(Runtime(100, 200, 300), r, 30, visibility="public") if a.kind == "runner"]
    assert "runs-on" not in a.suggested
    assert "even in a public repository" in a.message
    assert ("$0.208" if label.startswith("ubuntu") else "$0.408") in a.message  # 4 min billed
    assert "no standard runner has a GPU" in a.message and "is free" not in a.message


def _timeouts(runtime, runs_on, timeout):
    return [a for a in advise(runtime, R(runs_on), timeout, visibility="private") if a.kind == "timeout"]


@pytest.mark.parametrize("runs_on, timeout", [("ubuntu-latest", 400), ("ubuntu-slim", 300)])
def test_a_timeout_is_never_suggested_lower_than_the_one_it_says_is_too_low(runs_on, timeout):
    """p90 past the runner's job limit: it said "`timeout-minutes: 400` is below the predicted
    p90 (416.7 min) ... Suggest `timeout-minutes: 360`" (ubuntu-slim: 300, suggest 15)."""
    long = Runtime(15000, 20000, 25000)  # p90 416.7 min, past 6 hours
    out = _timeouts(long, runs_on, timeout)
    assert not [a for a in out if "below the predicted" in a.message]
    assert all(a.suggested.get("timeout-minutes", 0) <= timeout for a in out)
    assert any("exceeds the" in a.message and "job limit" in a.message for a in out)


def test_a_job_predicted_past_the_6_hour_limit_is_told_so():
    """Without `timeout-minutes` it was told nothing: GitHub-hosted jobs stop at 360 min."""
    long = Runtime(15000, 20000, 25000)
    [a] = _timeouts(long, "ubuntu-latest", None)
    assert "exceeds the 360-minute job limit" in a.message and "self-hosted" in a.message
    assert "runs-on" not in a.suggested  # another GitHub-hosted runner has the same limit


def test_a_self_hosted_job_predicted_past_the_default_timeout_is_told_to_set_one():
    """Self-hosted jobs may run 5 days, but without `timeout-minutes` GitHub stops them at
    360 min: a job with a p90 of 417 min was told nothing."""
    long = Runtime(15000, 20000, 25000)
    [a] = _timeouts(long, ["self-hosted", "linux"], None)
    assert "default of 360 min would cancel slow runs" in a.message
    assert a.suggested == {"timeout-minutes": 625}  # 416.7 min x 1.5 -> 625
    assert not _timeouts(Runtime(100, 200, 300), ["self-hosted"], None)[0].message.startswith(
        "No `timeout-minutes`: GitHub's default of")  # a short job: the usual hung-run advice


# --- runs-on forms ------------------------------------------------------------------------


@pytest.mark.parametrize("labels", ["ubuntu-latest", ["windows-latest"], "ubuntu-slim",
                                    "ubuntu-20.04"])
def test_a_standard_label_in_a_runner_group_is_not_priced_as_the_standard_runner(labels):
    """`{group: big, labels: ubuntu-latest}` was priced as ubuntu-latest ($0.006/min, free in
    a public repository); runner groups hold only larger and self-hosted runners."""
    for vis in ("private", "public"):
        r = R({"group": "big", "labels": labels}, visibility=vis)
        assert r.kind == "unknown" and r.price_per_min is None and not r.retired
        assert "runner group `big`" in r.reason and "not in runner groups" in r.reason
    # still: a larger runner's name, or self-hosted labels, in a group
    assert R({"group": "big", "labels": "ubuntu-latest-16-cores"}).sku == "linux_16_core"
    assert R({"group": "g", "labels": ["self-hosted", "linux"]}).kind == "self-hosted"
    assert R({"labels": "ubuntu-latest"}).sku == "linux"  # no group: the standard runner


@pytest.mark.parametrize(("cron", "per_hour"), [
    ("* * * * *", 12), ("*/2 * * * *", 10),  # 0, 6, ..., 54: each 5 or more after the last
    ("0-4 * * * *", 1), ("0,58 * * * *", 1),  # 58 is 2 minutes before the next hour's 0
])
def test_a_cron_more_often_than_every_5_minutes_counts_githubs_shortest_interval(cron, per_hour):
    """GitHub runs a schedule at most once every 5 minutes: `* * * * *` was 43,834 runs a
    month (5x the cost), and the basis did not say it was capped; `0-4` counted 5 an hour."""
    from laser_ci.sizing.schedule import cron_runs_per_month, monthly_runs_from_triggers

    assert cron_runs_per_month(cron) == pytest.approx(per_hour * 24 * 30.44)
    m = monthly_runs_from_triggers(["schedule"], {"schedule": [{"cron": cron}]})
    assert m.runs == pytest.approx(per_hour * 24 * 30.44)
    assert "at most one run every 5 minutes" in m.basis
    plain = monthly_runs_from_triggers(["schedule"], {"schedule": [{"cron": "*/15 * * * *"}]})
    assert "5 minutes" not in plain.basis


def test_a_free_alternative_is_not_given_a_price_ratio():
    """A public repository's larger runner: "`ubuntu-latest` (4 cores, 0.27x the price) is
    free here" gave a price for the free runner."""
    r = R("ubuntu-latest-8-cores", visibility="public")
    [a] = [a for a in advise(Runtime(500, 900, 1200), r, 60, visibility="public")
           if a.message.startswith("Long job")]
    assert "`ubuntu-latest` (4 cores) is free here" in a.message
    assert "0.27x" not in a.message


@pytest.mark.parametrize("rt", [Runtime(5, 10, 20), Runtime(60, 120, 300)])
def test_a_job_using_docker_on_ubuntu_slim_is_told_it_cannot(rt):
    """`ubuntu-slim` is a container without Docker: a job with `services:` there got no
    advice at all."""
    from laser_ci.sizing.advice import Needs

    out = advise(rt, R("ubuntu-slim"), 10, visibility="private", needs=Needs(docker=True))
    [a] = [a for a in out if a.kind == "runner"]
    assert "without Docker" in a.message and a.suggested == {"runs-on": "ubuntu-latest"}
    assert not [a for a in advise(rt, R("ubuntu-slim"), 10, visibility="private")
                if "without Docker" in a.message]


# --- the catalog against GitHub's price list (shared/docs/anchors.md, section 5) ----------


def test_every_catalog_price_and_size_is_githubs_2026_list():
    from laser_ci.sizing.catalog import load_catalog

    cat = load_catalog()
    assert cat.prices_effective == "2026-01-01"
    assert dict(cat.included_minutes) == {"free": 2000, "pro": 3000, "free-org": 2000,
                                          "team": 3000, "enterprise-cloud": 50000}
    standard = {  # label: (price, public (cores, GB), private (cores, GB))
        "ubuntu-latest": (0.006, (4, 16), (2, 8)), "ubuntu-24.04": (0.006, (4, 16), (2, 8)),
        "ubuntu-22.04": (0.006, (4, 16), (2, 8)),
        "ubuntu-24.04-arm": (0.005, (4, 16), (2, 8)), "ubuntu-22.04-arm": (0.005, (4, 16), (2, 8)),
        "ubuntu-slim": (0.002, (1, 5), (1, 5)),
        "windows-latest": (0.010, (4, 16), (2, 8)), "windows-2025": (0.010, (4, 16), (2, 8)),
        "windows-2025-vs2026": (0.010, (4, 16), (2, 8)), "windows-2022": (0.010, (4, 16), (2, 8)),
        "windows-11-arm": (0.008, (4, 16), (2, 8)),
        "macos-latest": (0.062, (3, 7), (3, 7)), "macos-14": (0.062, (3, 7), (3, 7)),
        "macos-15": (0.062, (3, 7), (3, 7)), "macos-26": (0.062, (3, 7), (3, 7)),
        "macos-15-intel": (0.062, (4, 14), (4, 14)), "macos-26-intel": (0.062, (4, 14), (4, 14)),
    }
    for label, (price, pub, priv) in standard.items():
        e = cat.by_label(label)
        assert (e.kind, e.price_per_min, e.public_size, e.private_size) == (
            "standard", price, pub, priv), label
    assert cat.by_label("ubuntu-slim").max_job_minutes == 15
    for label in ("macos-latest-large", "macos-15-large"):
        assert (cat.by_label(label).price_per_min, cat.by_label(label).public_size) == (0.077, (12, 30))
    for label in ("macos-latest-xlarge", "macos-15-xlarge"):
        assert (cat.by_label(label).price_per_min, cat.by_label(label).public_size) == (0.102, (5, 14))
    larger = {
        ("linux", "x64"): {2: 0.006, 4: 0.012, 8: 0.022, 16: 0.042, 32: 0.082, 64: 0.162, 96: 0.252},
        ("windows", "x64"): {4: 0.022, 8: 0.042, 16: 0.082, 32: 0.162, 64: 0.322, 96: 0.552},
        ("linux", "arm64"): {2: 0.005, 4: 0.008, 8: 0.014, 16: 0.026, 32: 0.050, 64: 0.098},
        ("windows", "arm64"): {2: 0.008, 4: 0.014, 8: 0.026, 16: 0.050, 32: 0.098, 64: 0.194},
    }
    ram = {2: 8, 4: 16, 8: 32, 16: 64, 32: 128, 64: 256, 96: 384}
    for (os, arch), prices in larger.items():
        for cores, price in prices.items():
            e = cat.larger(os, arch, cores)
            gb = 208 if (arch, cores) == ("arm64", 64) else ram[cores]
            assert (e.price_per_min, e.public_size) == (price, (cores, gb)), (os, arch, cores)
    assert cat.larger("linux", "x64", 4, gpu=True).price_per_min == 0.052
    assert cat.larger("windows", "x64", 4, gpu=True).price_per_min == 0.102
    assert cat.larger("linux", "x64", 4, gpu=True).public_size == (4, 28)
    # standard runners (arm64 and ubuntu-slim too) are free in public repositories; larger never
    from laser_ci.sizing.cost import job_cost

    for label in standard:
        assert job_cost(61, R(label, visibility="public"), visibility="public") == 0.0
    for label in ("macos-latest-xlarge", "ubuntu-latest-8-cores", "ubuntu-gpu"):
        assert job_cost(61, R(label, visibility="public"), visibility="public") > 0
