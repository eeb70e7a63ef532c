"""Runner catalog lookups, billing rounding, break-even arithmetic and advice (laser_ci.sizing)."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from laser_ci.predictors.base import Runtime
from laser_ci.sizing.advice import Needs, suggest_timeout_minutes
from laser_ci.sizing.advice import advise as _advise
from laser_ci.sizing.catalog import load_catalog
from laser_ci.sizing.cost import (
    billable_minutes,
    break_even_speedup,
    combine,
    cost_assumptions,
    cost_job,
    job_cost,
    summarize,
)
from laser_ci.sizing.runners import resolve_runner
from laser_ci.sizing.schedule import (
    cron_runs_per_month,
    estimate_monthly_runs,
    monthly_runs_from_history,
    monthly_runs_from_triggers,
)

PRIVATE = "private"
PUBLIC = "public"


def R(runs_on, matrix=None, visibility=PRIVATE, **kw):
    return resolve_runner(runs_on, matrix or {}, visibility=visibility, **kw)


# --- catalog ------------------------------------------------------------------------------


def test_catalog_has_date_sources_and_the_2026_prices():
    raw = json.loads(resources.files("laser_ci.sizing").joinpath("runners.json").read_text())
    assert raw["as_of"] and raw["prices_effective"] == "2026-01-01"
    assert all(s["url"].startswith("https://") for s in raw["sources"])
    cat = load_catalog()
    assert cat.by_label("ubuntu-latest").price_per_min == 0.006
    assert cat.by_label("windows-latest").price_per_min == 0.010
    assert cat.by_label("macos-latest").price_per_min == 0.062
    assert cat.by_label("ubuntu-slim").price_per_min == 0.002
    larger = {c: cat.larger("linux", "x64", c).price_per_min for c in (4, 8, 16, 32, 64, 96)}
    assert larger == {4: 0.012, 8: 0.022, 16: 0.042, 32: 0.082, 64: 0.162, 96: 0.252}
    assert cat.larger("linux", "x64", 4, gpu=True).sku == "linux_4_core_gpu"
    assert cat.larger("linux", "arm64", 64).private_size == (64, 208.0)


def test_catalog_labels_are_unique_and_prices_positive():
    cat = load_catalog()
    labels = [label for e in cat.entries for label in e.labels]
    assert len(labels) == len(set(labels))
    assert all(e.price_per_min > 0 for e in cat.entries)
    assert not set(labels) & cat.retired


# --- resolving runs-on --------------------------------------------------------------------


@pytest.mark.parametrize(
    "label, vis, expect",
    [
        ("ubuntu-latest", PUBLIC, ("github-hosted", "linux", "x64", 4, 16.0, 0.006)),
        ("ubuntu-latest", PRIVATE, ("github-hosted", "linux", "x64", 2, 8.0, 0.006)),
        ("ubuntu-latest", None, ("github-hosted", "linux", "x64", 2, 8.0, 0.006)),
        ("ubuntu-latest", "internal", ("github-hosted", "linux", "x64", 2, 8.0, 0.006)),
        ("Ubuntu-22.04", PRIVATE, ("github-hosted", "linux", "x64", 2, 8.0, 0.006)),
        ("ubuntu-24.04-arm", PUBLIC, ("github-hosted", "linux", "arm64", 4, 16.0, 0.005)),
        ("ubuntu-slim", PUBLIC, ("github-hosted", "linux", "x64", 1, 5.0, 0.002)),
        ("windows-latest", PRIVATE, ("github-hosted", "windows", "x64", 2, 8.0, 0.010)),
        ("windows-11-arm", PUBLIC, ("github-hosted", "windows", "arm64", 4, 16.0, 0.008)),
        ("macos-latest", PUBLIC, ("github-hosted", "macos", "arm64", 3, 7.0, 0.062)),
        ("macos-15-intel", PRIVATE, ("github-hosted", "macos", "x64", 4, 14.0, 0.062)),
        ("macos-15-xlarge", PUBLIC, ("larger", "macos", "arm64", 5, 14.0, 0.102)),
        ("macos-latest-large", PUBLIC, ("larger", "macos", "x64", 12, 30.0, 0.077)),
    ],
)
def test_standard_and_fixed_labels(label, vis, expect):
    r = R(label, visibility=vis)
    assert (r.kind, r.os, r.arch, r.cores, r.ram_gb, r.price_per_min) == expect
    assert not r.guessed and r.reason is None


def test_slim_has_a_15_minute_limit_and_is_a_container():
    r = R("ubuntu-slim")
    assert r.max_job_minutes == 15 and r.container


def test_single_label_list_is_the_label():
    assert R(["ubuntu-latest"]).sku == "linux"


def test_self_hosted_labels_priced_at_the_configured_rate():
    r = R(["self-hosted", "Linux", "ARM64"], self_hosted_rate=0.002)
    assert (r.kind, r.os, r.arch, r.price_per_min, r.guessed) == (
        "self-hosted",
        "linux",
        "arm64",
        0.002,
        False,
    )
    assert "self-hosted" in r.reason
    # no rate given: not priced (issue 50), not $0
    assert R(["self-hosted"]).price_per_min is None
    assert R(["self-hosted"]).reason.startswith("not priced: self-hosted or third-party")
    with pytest.raises(ValueError):
        R("ubuntu-latest", self_hosted_rate=-1)


def test_several_labels_without_self_hosted_assume_self_hosted():
    r = R(["ubuntu-latest", "gpu"])
    assert r.kind == "self-hosted" and r.guessed
    assert "single label" in r.reason


def test_groups():
    r = R({"group": "ci-runners"})
    assert r.kind == "unknown" and "runner group `ci-runners`" in r.reason
    r = R({"group": "ci-runners", "labels": ["self-hosted", "linux"]})
    assert r.kind == "self-hosted" and r.os == "linux"
    r = R({"group": "big", "labels": "ubuntu-latest-16-cores"})
    assert (r.kind, r.sku, r.guessed) == ("larger", "linux_16_core", True)
    assert "runner group `big`" in r.reason
    r = R({"group": "linux-8-core"})  # the group name is the only hint
    assert (r.kind, r.sku) == ("larger", "linux_8_core")


def test_matrix_expressions():
    m = {"os": "windows-latest", "cfg": {"runner": "macos-14"}, "ver": "24.04"}
    assert R("${{ matrix.os }}", m).sku == "windows"
    assert R("${{matrix.OS}}", m).sku == "windows"  # property names are case-insensitive
    assert R("${{ matrix.cfg.runner }}", m).sku == "macos"
    assert R("${{ matrix['cfg']['runner'] }}", m).sku == "macos"
    assert R("ubuntu-${{ matrix.ver }}", m).sku == "linux"
    assert R(["${{ matrix.os }}"], m).sku == "windows"
    # a matrix value may itself be a label list or a group mapping
    assert R("${{ matrix.r }}", {"r": ["self-hosted", "x64"]}).kind == "self-hosted"
    assert R("${{ matrix.r }}", {"r": {"group": "g", "labels": ["self-hosted"]}}).kind == ("self-hosted")
    # the common conditional idiom
    expr = "${{ matrix.os == 'windows' && 'windows-latest' || 'ubuntu-latest' }}"
    assert R(expr, {"os": "windows"}).sku == "windows"
    assert R(expr, {"os": "linux"}).sku == "linux"
    assert R('${{ fromJSON(\'["self-hosted", "linux"]\') }}').kind == "self-hosted"
    assert R("${{ format('ubuntu-{0}', matrix.v) }}", {"v": "22.04"}).sku == "linux"


def test_unresolvable_expressions_are_unknown_with_the_reason():
    r = R("${{ matrix.os }}", {})
    assert r.kind == "unknown" and "`matrix.os`" in r.reason and "matrix" in r.reason
    r = R("${{ inputs.runner }}")
    assert r.kind == "unknown" and "`inputs.runner`" in r.reason
    r = R("${{ inputs.runner || 'ubuntu-latest' }}")  # could be anything
    assert r.kind == "unknown" and "another value" in r.reason
    r = R("${{ github.repository == 'o/r' && 'ubuntu-latest-16-cores' || 'ubuntu-latest' }}")
    assert r.kind == "unknown" and "`ubuntu-latest-16-cores`, `ubuntu-latest`" in r.reason
    r = R("${{ inputs.big && 'ubuntu-latest' || 'ubuntu-24.04' }}")  # both: the same machine
    assert (r.kind, r.sku, r.guessed) == ("github-hosted", "linux", True)
    r = R(["self-hosted", "${{ inputs.arch }}"])  # still known to be self-hosted
    assert r.kind == "self-hosted"
    assert R("${{ ) }}").kind == "unknown"  # not an expression we can parse


def test_unknown_retired_and_guessed_labels():
    r = R(None)
    assert r.kind == "unknown" and "no `runs-on`" in r.reason
    r = R("ubuntu-20.04")
    assert r.kind == "unknown" and "retired" in r.reason
    r = R("ubuntu-26.04")  # a new version not yet in the catalog
    assert (r.kind, r.sku, r.guessed) == ("github-hosted", "linux", True)
    assert "not in the runner catalog" in r.reason
    r = R("my-build-box")
    assert r.kind == "unknown" and r.price_per_min is None
    assert r.reason.startswith("not priced: self-hosted or third-party")
    assert "larger runner named by your organization" in r.reason


@pytest.mark.parametrize(
    "name, sku",
    [
        ("ubuntu-latest-4-cores", "linux_4_core"),
        ("ubuntu-22.04-16core", "linux_16_core"),
        ("linux-arm64-8-cores", "linux_8_core_arm"),
        ("windows-latest-8-cores", "windows_8_core"),
        ("windows-11-arm-4-cores", "windows_4_core_arm"),
        ("ubuntu-gpu-t4", "linux_4_core_gpu"),
    ],
)
def test_larger_runner_names_are_read_as_guesses(name, sku):
    r = R(name, visibility=PUBLIC)
    assert (r.kind, r.sku, r.guessed) == ("larger", sku, True)
    assert "name chosen by your organization" in r.reason


def test_a_size_github_does_not_sell_is_unknown():
    r = R("ubuntu-latest-12-cores")
    assert r.kind == "unknown" and r.cores == 12 and "no larger runner" in r.reason


# --- billing rounding ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "seconds, minutes",
    [(0, 0), (-5, 0), (0.1, 1), (59.9, 1), (60, 1), (60.5, 2), (61, 2), (120, 2), (3600, 60)],
)
def test_billable_minutes_round_up_per_job(seconds, minutes):
    assert billable_minutes(seconds) == minutes


def test_job_cost_worked_examples():
    linux = R("ubuntu-latest")
    assert job_cost(61, linux, visibility=PRIVATE) == 0.012  # 2 min x $0.006
    assert job_cost(61, linux, visibility=PUBLIC) == 0.0  # standard runners free in public
    assert job_cost(61, R("windows-latest"), visibility=PRIVATE) == 0.020
    assert job_cost(30, R("macos-latest"), visibility=PRIVATE) == 0.062
    big = R("ubuntu-latest-4-cores", visibility=PUBLIC)
    assert job_cost(61, big, visibility=PUBLIC) == 0.024  # larger runners are never free
    assert job_cost(600, R(["self-hosted"], self_hosted_rate=0.002)) == 0.020
    assert job_cost(61, R("my-build-box")) is None


def test_cost_job_range_free_runs_and_assumptions():
    rt = Runtime(p10=50, p50=61, p90=130)
    c = cost_job(rt, R("ubuntu-latest"), visibility=PRIVATE)
    assert (c.billable_minutes, c.cost_usd, c.range_usd, c.billed) == (2, 0.012, (0.006, 0.018), True)
    assert c.if_private_usd is None
    c = cost_job(rt, R("ubuntu-latest", visibility=PUBLIC), visibility=PUBLIC)
    assert (c.cost_usd, c.billed, c.if_private_usd) == (0.0, False, 0.012)
    c = cost_job(rt, R("ubuntu-latest"), visibility=None)
    assert any("assumes a private repository" in a for a in c.assumptions)
    c = cost_job(rt, R("${{ inputs.runner }}"), visibility=PRIVATE)
    assert c.cost_usd is None and c.billed is None
    j = cost_job(rt, R("ubuntu-latest"), visibility=PRIVATE).to_json()
    assert j["cost_usd"] == 0.012 and j["cost"]["billable_minutes"] == 2


# --- break-even ---------------------------------------------------------------------------


def test_break_even_worked_examples():
    two = R("ubuntu-latest")  # $0.006/min; a 10-minute job costs $0.060
    four, eight, sixteen, thirty_two = (R(f"ubuntu-latest-{n}-cores") for n in (4, 8, 16, 32))
    # 4-core at $0.012 may bill 5 min -> must be 600/300 = 2x faster (= the price ratio)
    assert break_even_speedup(two, four, 600, visibility=PRIVATE) == 2.0
    # 8-core at $0.022: floor(0.060/0.022) = 2 min -> 5x, more than the 3.67x price ratio
    assert break_even_speedup(two, eight, 600, visibility=PRIVATE) == 5.0
    assert break_even_speedup(two, sixteen, 600, visibility=PRIVATE) == 10.0
    # one minute of 32-core ($0.082) already costs more than the whole job ($0.060)
    assert break_even_speedup(two, thirty_two, 600, visibility=PRIVATE) is None
    # 570 s bills 10 min as well: the 4-core must bill 5 min, i.e. be 570/300 = 1.9x faster
    assert break_even_speedup(two, four, 570, visibility=PRIVATE) == pytest.approx(1.9)
    # 61 s bills 2 min ($0.012): a 4-core finishing within 60 s costs the same
    assert break_even_speedup(two, four, 61, visibility=PRIVATE) == pytest.approx(61 / 60)
    # a cheaper, smaller runner may be slower: 16-core -> 8-core for 10 min ($0.420)
    # 8-core may bill floor(0.420/0.022) = 19 min -> 600/1140
    assert break_even_speedup(sixteen, eight, 600, visibility=PRIVATE) == pytest.approx(600 / 1140)


def test_break_even_with_free_runners_and_unknown_prices():
    pub_std = R("ubuntu-latest", visibility=PUBLIC)
    pub_big = R("ubuntu-latest-8-cores", visibility=PUBLIC)
    assert break_even_speedup(pub_std, pub_big, 600, visibility=PUBLIC) is None  # never pays
    assert break_even_speedup(pub_big, pub_std, 600, visibility=PUBLIC) == 0.0  # free anyway
    assert break_even_speedup(R("my-box"), pub_big, 600) is None
    assert break_even_speedup(pub_std, pub_big, 0) is None


# --- totals and monthly runs --------------------------------------------------------------


def test_summarize_and_monthly_projection():
    rt = Runtime(50, 61, 130)
    costs = [
        cost_job(rt, R("ubuntu-latest"), visibility=PRIVATE),  # 0.012
        cost_job(Runtime(20, 30, 40), R("macos-latest"), visibility=PRIVATE),  # 0.062
        cost_job(rt, R("my-box"), visibility=PRIVATE),  # unknown
    ]
    t = summarize(costs, runs=100)
    assert (t.jobs, t.priced_jobs, t.unknown_jobs, t.billable_minutes) == (3, 2, 1, 3)
    assert t.cost_usd == pytest.approx(0.074)
    assert t.monthly_cost_usd == pytest.approx(7.4)
    assert any("unknown runners are not counted" in a for a in t.assumptions)
    j = t.to_json()
    assert j["cost_usd"] == 0.074 and j["cost"]["runs_per_month"] == 100
    assert j["cost"]["unknown_jobs"] == 1 and j["cost"]["monthly_cost_usd"] == 7.4
    # the note gives the count the projection used: 2.5, not 2 (nor 0.4 as 0)
    for given, words in ((2.5, "x 2.5 runs per month"), (0.4, "x 0.4 runs per month"),
                         (1234, "x 1,234 runs per month")):
        assert any(words in a for a in summarize(costs, runs=given).assumptions), given
    pub = summarize([cost_job(rt, R("ubuntu-latest", visibility=PUBLIC), visibility=PUBLIC)])
    assert pub.cost_usd == 0 and pub.if_private_usd == 0.012 and pub.monthly_cost_usd is None
    both = combine([t, pub])
    assert both.jobs == 4 and both.cost_usd == pytest.approx(0.074)
    assert both.monthly_cost_usd is None  # not every part has a projection


def test_combined_totals_say_the_unpriced_jobs_once_with_their_sum():
    """Summed over workflows, the notes that count jobs are one line with the total (3 and
    2 unpriced: "5 job(s) ..."), not one line per workflow; the range note is said once,
    also when no single workflow had two priced jobs."""
    rt = Runtime(50, 61, 130)

    def wf(unpriced: int) -> object:
        return summarize([cost_job(rt, R("ubuntu-latest"), visibility=PRIVATE),
                          *(cost_job(rt, R(f"box-{i}"), visibility=PRIVATE)
                            for i in range(unpriced))], runs=100)

    both = combine([wf(3), wf(2)])
    assert both.unknown_jobs == 5
    assert [a for a in both.assumptions if "unknown runners" in a] == [
        "5 job(s) on unknown runners are not counted"]
    assert sum("the range adds up" in a for a in both.assumptions) == 1
    assert sum("monthly projection" in a for a in both.assumptions) == 1
    assert both.to_json()["cost"]["assumptions"] == list(both.assumptions)
    assert combine([wf(2), wf(2)]).assumptions[0].startswith("4 job(s)")  # not "2" once


@pytest.mark.parametrize(
    "cron, runs",
    [
        ("0 0 * * *", 30.44),
        ("*/15 * * * *", 96 * 30.44),
        ("0 3 * * 1-5", 5 * 30.44 / 7),
        ("30 5 * * MON,WED", 2 * 30.44 / 7),
        ("0 0 1 * *", 1.0),
        ("0 0 31 * *", 7 / 12),
        ("0 0 1 1 *", 1 / 12),
        ("0 */6 * * *", 4 * 30.44),
        ("nonsense", None),
        ("61 * * * *", None),
    ],
)
def test_cron_runs_per_month(cron, runs):
    got = cron_runs_per_month(cron)
    assert got == (None if runs is None else pytest.approx(runs))


def test_monthly_runs_from_triggers_and_history():
    on = {"push": None, "schedule": [{"cron": "0 0 * * *"}, {"cron": "0 12 * * *"}]}
    m = monthly_runs_from_triggers(["push", "schedule"], on)
    assert m.runs == pytest.approx(60.88) and m.lower_bound
    assert "push" in m.basis and "not counted" in m.basis
    only = monthly_runs_from_triggers(["schedule"], {"schedule": [{"cron": "0 0 * * 0"}]})
    assert only.runs == pytest.approx(30.44 / 7) and not only.lower_bound
    assert monthly_runs_from_triggers(["push", "pull_request"], {"push": None}) is None
    assert monthly_runs_from_triggers(["push"], "push") is None
    h = monthly_runs_from_history(60, 30)
    assert h.runs == pytest.approx(60.88) and "history" in h.basis
    assert monthly_runs_from_history(0, 30) is None


def test_estimate_monthly_runs_prefers_given_then_history_then_schedule():
    on = {"push": None, "schedule": [{"cron": "0 0 * * *"}]}
    assert estimate_monthly_runs(["push", "schedule"], on, given=500).runs == 500
    assert estimate_monthly_runs(["push", "schedule"], on, history=(10, 7)).runs == pytest.approx(
        10 * 30.44 / 7
    )
    assert estimate_monthly_runs(["push", "schedule"], on, history=(0, 7)).lower_bound
    assert estimate_monthly_runs(["push"], {"push": None}) is None


def test_cost_assumptions_state_visibility():
    assert "not given" in cost_assumptions(None)[0]
    assert "Public repository" in cost_assumptions(PUBLIC)[0]
    assert not any("not given" in a for a in cost_assumptions(PRIVATE))


# --- advice -------------------------------------------------------------------------------


def advise(runtime, runner, timeout=30, **kw):
    kw.setdefault("visibility", PRIVATE)
    return _advise(runtime, runner, timeout, **kw)


def kinds(advice):
    return [a.kind for a in advice]


def test_suggest_timeout_minutes():
    assert suggest_timeout_minutes(1300) == 35  # 21.7 min x 1.5 = 32.5 -> 35
    assert suggest_timeout_minutes(10) == 5
    assert suggest_timeout_minutes(600) == 15
    assert suggest_timeout_minutes(20000, cap=360) == 360


def test_missing_timeout():
    rt = Runtime(500, 900, 1300)
    [a] = [a for a in advise(rt, R("ubuntu-latest"), None) if a.kind == "timeout"]
    assert a.suggested == {"timeout-minutes": 35}
    assert "360 min" in a.message and "$2.160" in a.message  # 360 x $0.006
    assert any("p90" in x for x in a.assumptions)
    # without a prediction it still flags the missing timeout, with no value to suggest
    [a] = advise(None, R("ubuntu-latest"), None)
    assert a.kind == "timeout" and a.suggested == {}


def test_timeout_below_p90_or_median_and_above_the_limit():
    rt = Runtime(500, 900, 1300)
    [a] = [a for a in advise(rt, R("ubuntu-latest"), 20) if a.kind == "timeout"]
    assert "below the predicted p90" in a.message and a.suggested == {"timeout-minutes": 35}
    [a] = [a for a in advise(rt, R("ubuntu-latest"), "10") if a.kind == "timeout"]
    assert "median" in a.message
    assert not [a for a in advise(rt, R("ubuntu-latest"), 40) if a.kind == "timeout"]
    [a] = [a for a in advise(rt, R("ubuntu-latest"), 600) if a.kind == "timeout"]
    assert "360-minute job limit" in a.message
    assert not [a for a in advise(rt, R("my-box"), 600) if "job limit" in a.message]  # size unknown
    # an expression we cannot evaluate is left alone
    assert not [a for a in advise(rt, R("ubuntu-latest"), "${{ inputs.t }}") if a.kind == "timeout"]


def test_slim_limit():
    out = advise(Runtime(500, 900, 1300), R("ubuntu-slim"), None)
    assert any("15-minute job limit" in a.message for a in out)


def test_short_jobs_are_slim_or_merge_candidates():
    short = Runtime(5, 10, 20)
    [a] = [a for a in advise(short, R("ubuntu-latest")) if a.kind == "slim"]
    assert a.suggested["runs-on"] == "ubuntu-slim"
    assert a.suggested["saves_usd_per_run"] == pytest.approx(0.004)  # $0.006 - $0.002
    assert any("no Docker" in x for x in a.assumptions)
    # what it checks: all three things estimate._needs_docker reads
    assert any("`container:`, `services:` and `docker` in `run:` steps" in x
               for x in a.assumptions)
    pub = advise(short, R("ubuntu-latest", visibility=PUBLIC), visibility=PUBLIC)
    assert "free in a public repository" in next(a for a in pub if a.kind == "slim").message
    assert "merge" in kinds(advise(short, R("ubuntu-latest"), needs=Needs(docker=True)))
    assert "merge" in kinds(advise(short, R("macos-latest")))
    assert "slim" not in kinds(advise(short, R("ubuntu-slim")))
    assert not {"slim", "merge"} & set(kinds(advise(Runtime(20, 40, 70), R("ubuntu-latest"))))


def test_long_job_break_even_advice_without_predictions():
    rt = Runtime(500, 600, 800)
    [a] = [a for a in advise(rt, R("ubuntu-latest")) if a.kind == "runner"]
    rows = {r["label"]: r for r in a.suggested["alternatives"]}
    assert rows["ubuntu-latest-4-cores"]["break_even_speedup"] == 2.0
    assert rows["ubuntu-latest-4-cores"]["max_billed_minutes"] == 5
    assert rows["ubuntu-latest-8-cores"]["break_even_speedup"] == 5.0
    assert "not predicted" in a.message and "runs-on" not in a.suggested
    # free standard runner in a public repository: nothing to say without a prediction
    pub = advise(rt, R("ubuntu-latest", visibility=PUBLIC), visibility=PUBLIC)
    assert "runner" not in kinds(pub)
    # short jobs get no sizing advice
    assert "runner" not in kinds(advise(Runtime(100, 200, 300), R("ubuntu-latest")))


def test_long_job_advice_uses_predictions_on_alternatives():
    rt = Runtime(500, 600, 800)
    seen = []

    def predict_on(label):
        seen.append(label)
        return {"ubuntu-latest-4-cores": Runtime(200, 280, 350)}.get(label)

    [a] = [a for a in advise(rt, R("ubuntu-latest"), predict_on=predict_on) if a.kind == "runner"]
    assert a.suggested["runs-on"] == "ubuntu-latest-4-cores"  # 5 min x $0.012 = $0.060 = now
    assert "$0.060" in a.message
    assert len(seen) <= 4

    def broken(label):
        raise RuntimeError("no model")

    [a] = [a for a in advise(rt, R("ubuntu-latest"), predict_on=broken) if a.kind == "runner"]
    assert "not predicted" in a.message


def test_larger_runner_in_public_repo_is_flagged():
    r = R("ubuntu-latest-16-cores", visibility=PUBLIC)
    out = advise(Runtime(100, 200, 300), r, visibility=PUBLIC)
    [a] = [a for a in out if a.kind == "runner"]
    assert "even in a public repository" in a.message
    assert a.suggested == {"runs-on": "ubuntu-latest"}


def test_needs_pick_the_cheapest_runner_that_fits():
    rt = Runtime(100, 200, 300)
    [a] = [a for a in advise(rt, R("ubuntu-latest"), needs=Needs(ram_gb=12)) if a.kind == "runner"]
    assert a.suggested["runs-on"] == "ubuntu-latest-4-cores"
    big = R("ubuntu-latest-32-cores")
    [a] = [a for a in advise(rt, big, needs=Needs(cores=2, ram_gb=6)) if a.kind == "runner"]
    assert a.suggested["sku"] in ("linux", "linux_2_core_advanced")
    # ubuntu-slim fits 1 core / 2 GB, but not a job predicted to run past its 15-minute limit
    tiny = Needs(cores=1, ram_gb=2)
    [a] = [a for a in advise(rt, R("ubuntu-latest"), needs=tiny) if a.kind == "runner"]
    assert a.suggested["runs-on"] == "ubuntu-slim"
    long = Runtime(900, 1000, 1200)
    assert not [a for a in advise(long, R("ubuntu-latest"), needs=tiny) if "slim" in str(a.suggested)]


def test_unknown_and_self_hosted_runners_get_timeout_advice_only():
    rt = Runtime(5, 10, 20)
    assert kinds(advise(rt, R("my-box"), None)) == ["timeout"]
    assert kinds(advise(rt, R(["self-hosted"]), None)) == ["timeout"]


def test_messages_say_when_visibility_is_assumed():
    out = _advise(Runtime(5, 10, 20), R("ubuntu-latest"), None, visibility=None)
    assert out and all(any("assumes a private repository" in x for x in a.assumptions) for a in out)
    assert all(isinstance(a.to_json()["assumptions"], list) for a in out)
