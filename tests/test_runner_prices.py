"""Runners GitHub does not sell are not priced unless the user gives their prices
(issue 50, problem 7), and the CLI options that say what the run is: ``--repo``,
``--event``, ``--runner-prices``; the checkout's ``origin`` remote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from laser_ci.cli import main
from laser_ci.sizing.cost import load_runner_prices
from laser_ci.sizing.runners import NOT_PRICED, resolve_runner
from laser_ci.workflows.files import origin_repository


@pytest.mark.parametrize("label", [
    "electron-arc-centralus-linux-amd64-32core",  # Actions Runner Controller
    "garm-ubuntu-22.04-8core",  # GARM
    "depot-ubuntu-22.04-16",  # Depot
    "github-windows-2025-x86_64-8",  # a name GitHub does not document
    "blacksmith-4vcpu-ubuntu-2204",
])
def test_third_party_pools_are_not_priced(label: str) -> None:
    r = resolve_runner(label)
    assert r.price_per_min is None and r.reason is not None
    assert r.reason.startswith(NOT_PRICED)


def test_self_hosted_not_priced_unless_a_rate_is_given() -> None:
    assert resolve_runner(["self-hosted", "linux"]).price_per_min is None
    assert resolve_runner(["self-hosted", "linux"], self_hosted_rate=0.01).price_per_min == 0.01


def test_given_prices_price_them() -> None:
    prices = {"Electron-ARC-centralus-linux-amd64-32core": 0.05, "self-hosted": 0.002}
    r = resolve_runner("electron-arc-centralus-linux-amd64-32core", runner_prices=prices)
    assert (r.price_per_min, r.kind, r.cores, r.guessed) == (0.05, "self-hosted", 32, False)
    assert resolve_runner(["self-hosted", "linux"], runner_prices=prices).price_per_min == 0.002
    # GitHub's own labels keep GitHub's price
    assert resolve_runner("ubuntu-latest", runner_prices={"ubuntu-latest": 9}).price_per_min == 0.006


def test_catalog_and_name_guesses_unchanged() -> None:
    assert resolve_runner("ubuntu-latest").price_per_min == 0.006
    guessed = resolve_runner("ubuntu-latest-8-cores")
    assert guessed.guessed and guessed.price_per_min is not None


def test_runner_prices_file(tmp_path: Path) -> None:
    (tmp_path / "p.yml").write_text("depot-ubuntu-22.04-16: 0.004\nself-hosted: 0\n")
    assert load_runner_prices(tmp_path / "p.yml") == {"depot-ubuntu-22.04-16": 0.004,
                                                     "self-hosted": 0.0}
    (tmp_path / "p.json").write_text(json.dumps({"a": 0.5}))
    assert load_runner_prices(tmp_path / "p.json") == {"a": 0.5}
    (tmp_path / "bad.yml").write_text("a: 1\nb: cheap\n")
    with pytest.raises(ValueError, match=r"bad.yml:2: `b`"):
        load_runner_prices(tmp_path / "bad.yml")


@pytest.mark.parametrize("price", ["1e308", ".nan", "-1", "1001"])
def test_a_price_out_of_range_is_one_line(tmp_path: Path, price: str) -> None:
    (tmp_path / "p.yml").write_text(f"a: 1\nb: {price}\n")
    with pytest.raises(ValueError, match=r"p.yml:2: `b`: the price must be a number of USD "
                                         r"per minute, 0 to 1000"):
        load_runner_prices(tmp_path / "p.yml")


@pytest.mark.usefixtures("fake_predictor")
@pytest.mark.parametrize("option, value, ok", [
    ("--runs-per-month", "nan", False), ("--runs-per-month", "inf", False),
    ("--runs-per-month", "1e7", True), ("--runs-per-month", "1.1e7", False),
    ("--self-hosted-rate", "nan", False), ("--self-hosted-rate", "1e308", False),
    ("--self-hosted-rate", "1000", True), ("--self-hosted-rate", "-0.1", False),
])
def test_cli_numbers_out_of_range_are_a_usage_error(tmp_path: Path, option: str, value: str,
                                                     ok: bool) -> None:
    folder = _repo(tmp_path, POOLS)
    out = CliRunner().invoke(main, ["estimate", str(folder / ".github/workflows"),
                                    option, value])
    assert out.exit_code == (0 if ok else 2), out.output
    assert ok or f"Invalid value for '{option}'" in out.output


def _repo(tmp_path: Path, text: str) -> Path:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "w.yml").write_text(text)
    return tmp_path


def _json(folder: Path, *args: str) -> dict:
    out = CliRunner().invoke(main, ["estimate", str(folder / ".github/workflows"),
                                    "--format", "json", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


POOLS = """\
on: [push, pull_request]
jobs:
  build:
    runs-on: ${{ github.event_name == 'pull_request' && 'ubuntu-latest' || 'depot-ubuntu-22.04-16' }}
    steps: [{run: make}]
  big:
    runs-on: ${{ github.repository == 'me/it' && 'electron-arc-linux-amd64-32core' || 'ubuntu-latest' }}
    steps: [{run: make}]
"""


@pytest.mark.usefixtures("fake_predictor")
def test_cli_repo_event_and_prices(tmp_path: Path) -> None:
    folder = _repo(tmp_path, POOLS)
    build, big = _json(folder)["workflows"][0]["jobs"]
    assert build["runs_on"] == "ubuntu-latest"  # the pull request's run
    assert build["runs_on_by_event"] == {"push": "depot-ubuntu-22.04-16",
                                         "pull_request": "ubuntu-latest"}
    assert big["runner"]["kind"] == "unknown" and big["run_time"]["runs-on"]
    build, big = _json(folder, "--repo", "me/it", "--event", "push")["workflows"][0]["jobs"]
    assert build["runs_on"] == "depot-ubuntu-22.04-16" and build["cost_usd"] is None
    assert big["runs_on"] == "electron-arc-linux-amd64-32core" and big["cost_usd"] is None
    (tmp_path / "prices.json").write_text('{"electron-arc-linux-amd64-32core": 0.1}')
    _build, big = _json(folder, "--repo", "me/it", "--runner-prices",
                        str(tmp_path / "prices.json"))["workflows"][0]["jobs"]
    assert big["runner"]["price_per_min_usd"] == 0.1 and big["cost_usd"] is not None


@pytest.mark.usefixtures("fake_predictor")
def test_cli_reads_the_origin_remote(tmp_path: Path) -> None:
    folder = _repo(tmp_path, POOLS)
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://github.com/x/y\n'
        '[remote "origin"]\n\turl = git@github.com:me/it.git\n')
    assert origin_repository(folder) == "me/it"
    _build, big = _json(folder)["workflows"][0]["jobs"]
    assert big["runs_on"] == "electron-arc-linux-amd64-32core"
    out = CliRunner().invoke(main, ["estimate", str(folder), "--repo", "nope"])
    assert out.exit_code == 2 and "OWNER/NAME" in out.output


def test_origin_of_a_worktree(tmp_path: Path) -> None:
    main_git = tmp_path / "main" / ".git"
    (main_git / "worktrees" / "w").mkdir(parents=True)
    (main_git / "config").write_text('[remote "origin"]\n  url = https://github.com/a/b.git\n')
    (main_git / "worktrees" / "w" / "commondir").write_text("../..\n")
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / ".git").write_text(f"gitdir: {main_git / 'worktrees' / 'w'}\n")
    assert origin_repository(tmp_path / "w") == "a/b"
    assert origin_repository(tmp_path) is None


def test_action_settings(tmp_path: Path) -> None:
    """The Action: GITHUB_REPOSITORY, a pull request's event read as its pull_request run
    with its payload, and the runner-prices input inline or as a file."""
    from laser_ci.github.action import Settings, SettingsError, _sizing

    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 1, "labels": []}}))
    env = {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
           "GITHUB_REPOSITORY": "me/it", "GITHUB_WORKSPACE": str(tmp_path),
           "LASER_CI_RUNNER_PRICES": "depot-ubuntu-22.04-16: 0.004\nGARM-big: 0.1\n"}
    sizing = _sizing(Settings.from_env(env))
    assert (sizing.repository, sizing.event) == ("me/it", "pull_request")
    assert sizing.event_payload == {"pull_request": {"number": 1, "labels": []}}
    assert sizing.runner_prices == {"depot-ubuntu-22.04-16": 0.004, "garm-big": 0.1}
    (tmp_path / "prices.json").write_text('{"x": 1}')
    env["LASER_CI_RUNNER_PRICES"] = "prices.json"
    env["GITHUB_EVENT_NAME"] = "pull_request_target"
    sizing = _sizing(Settings.from_env(env))
    assert (sizing.runner_prices, sizing.event, sizing.event_payload) == ({"x": 1.0},
                                                                         "pull_request", None)
    env["LASER_CI_RUNNER_PRICES"] = "missing.json"
    with pytest.raises(SettingsError, match="missing.json"):
        _sizing(Settings.from_env(env))


@pytest.mark.usefixtures("fake_predictor")
def test_event_says_which_run_a_skipped_job_is_skipped_in(tmp_path: Path) -> None:
    folder = _repo(tmp_path, "on: [push, pull_request]\njobs:\n  p:\n"
                             "    if: github.event_name == 'push'\n    runs-on: ubuntu-latest\n"
                             "    steps: [{run: make}]\n")
    out = CliRunner().invoke(main, ["estimate", str(folder), "--event", "pull_request"])
    assert "its `if:` is false on `pull_request`, the trigger estimated" in out.stdout
    out = CliRunner().invoke(main, ["estimate", str(folder)])
    assert "runs only on `push`" in out.stdout


@pytest.mark.usefixtures("fake_predictor")
@pytest.mark.parametrize(("workflow", "event", "said"), [
    ("on: [push, pull_request]\njobs:\n"
     "  p: {if: github.event_name == 'pull_request', runs-on: ubuntu-latest, steps: [{run: x}]}\n"
     "  d: {if: github.event_name == 'push', runs-on: ubuntu-latest, steps: [{run: make}]}\n",
     None, True),
    # a push runs both: the totals are that run's (review of this change)
    ("on: [push, pull_request]\njobs:\n  a: {runs-on: ubuntu-latest, steps: [{run: make}]}\n"
     "  d: {if: github.event_name == 'push', runs-on: ubuntu-latest, steps: [{run: make}]}\n",
     None, False),
    ("on: [push, pull_request]\njobs:\n  a: {runs-on: ubuntu-latest, steps: [{run: make}]}\n"
     "  d: {if: github.event_name == 'push', runs-on: ubuntu-latest, steps: [{run: make}]}\n",
     "pull_request", False),
    ("on: [push, pull_request]\njobs:\n  a: {runs-on: ubuntu-latest, steps: [{run: make}]}\n"
     "  d: {if: github.event_name == 'push', runs-on: ubuntu-latest, steps: [{run: make}]}\n",
     "push", False),
    ("on: push\njobs:\n  d: {if: github.event_name == 'push', runs-on: ubuntu-latest, "
     "steps: [{run: make}]}\n", None, False),
    ("on: [push, pull_request]\njobs:\n  a: {runs-on: ubuntu-latest, steps: [{run: make}]}\n",
     None, False),
])
def test_totals_of_jobs_no_one_run_has_together_say_so(tmp_path: Path, workflow: str,
                                                      event: str | None, said: bool) -> None:
    """Without --event, a workflow's totals add a push-only job to the pull request's
    jobs: the table and markdown say so, and how to total one trigger's run."""
    folder = _repo(tmp_path, workflow)
    picked = ["--event", event] if event else []
    table = CliRunner().invoke(main, ["estimate", str(folder), *picked])
    assert table.exit_code == 0, table.output
    assert ("  totals add the jobs of every trigger, which no one run has together "
            "(`--event NAME` totals one trigger's run)" in table.stdout.splitlines()) == said
    md = CliRunner().invoke(main, ["estimate", str(folder), "--format", "markdown", *picked])
    assert ("The totals add the jobs of every trigger" in md.stdout) == said


@pytest.mark.usefixtures("fake_predictor")
def test_totals_of_a_workflow_without_the_event_asked_say_it_lacks_it(tmp_path: Path) -> None:
    """--event pull_request, and a scheduled workflow whose jobs differ by trigger: the line
    said to pass --event, which the user had."""
    folder = _repo(tmp_path, "on: [schedule, workflow_dispatch]\njobs:\n"
                             "  a: {if: github.event_name == 'workflow_dispatch', "
                             "runs-on: ubuntu-latest, steps: [{run: make}]}\n"
                             "  d: {if: github.event_name == 'schedule', runs-on: ubuntu-latest, "
                             "steps: [{run: make}]}\n")
    out = CliRunner().invoke(main, ["estimate", str(folder), "--event", "pull_request"])
    assert ("  totals add the jobs of every trigger, which no one run has together (it has no "
            "`pull_request` trigger)") in out.stdout.splitlines()


@pytest.mark.usefixtures("fake_predictor")
@pytest.mark.parametrize("event, warned", [("push", False), ("pull_request", False),
                                           ("bogus", True), ("schedule", True)])
def test_an_event_no_workflow_has_is_one_warning(tmp_path: Path, event: str,
                                                 warned: bool) -> None:
    folder = _repo(tmp_path, POOLS)  # on: [push, pull_request]
    out = CliRunner().invoke(main, ["estimate", str(folder / ".github/workflows"),
                                    "--event", event])
    assert out.exit_code == 0, out.output
    assert out.stderr.splitlines() == ([
        f"warning: --event {event}: no workflow estimated here has this trigger; each is "
        "estimated for every trigger it has"] if warned else [])


@pytest.mark.usefixtures("fake_predictor")
def test_a_runner_per_trigger_names_the_trigger_whose_runner_only_the_run_knows(
        tmp_path: Path) -> None:
    """deno's linux-aarch64 build: `ubuntu-24.04` on a pull request, on a push a runner
    that depends on the branch; the note named the pull request's alone."""
    folder = _repo(tmp_path, "on: [push, pull_request]\njobs:\n  b:\n    runs-on: ${{ "
                             "github.event_name == 'pull_request' && 'ubuntu-24.04' || "
                             "(github.ref == 'refs/heads/main' && 'big-box' || 'ubuntu-latest') }}\n"
                             "    steps: [{run: make}]\n")
    out = CliRunner().invoke(main, ["estimate", str(folder)])
    assert out.exit_code == 0, out.output
    assert ("  note: b: runner per trigger: `ubuntu-24.04` on `pull_request`, set at run time "
            "on `push` (shown: `pull_request`; --event picks one)") in out.stdout.splitlines()
