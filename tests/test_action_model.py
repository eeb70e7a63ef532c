"""The Action's ``model`` input end to end against the fake GitHub (issue 53): a
repository's learned model predicts its pull requests, and whatever keeps it from being used
(a fork, no folder, another repository's model, an unreadable one) is a notice and the
shipped model, never a failed step. The models are real (the shipped language model with a
``learned`` block, conftest.learned_model), loaded as the Action loads them."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from conftest import LEARNED
from test_action import (
    EVENT,
    HEAD_TREE,
    NUMBER,
    REPO,
    ROOT,
    _env,
    _outputs,
    _pinned,
    _push_checkout,
    _yaml,
)
from test_action import github as github  # noqa: PLC0414 - the fixture, re-exported

from laser_ci.github.action import Settings, action_command
from laser_ci.github.model_input import cache_prefix, fork_of
from laser_ci.predictors.choice import load_predictor

WORDS = "learned from octo/app's 20,021 job runs up to 2026-01-12"
NOTICE = "::notice title=laser-ci%3A shipped model::laser-ci: model: "


def _event(head_repo: str | None) -> dict:
    """The fixture's pull request event with its head in ``head_repo`` (None: a fork
    deleted since; the fixture's own is the fork contributor/app)."""
    event = copy.deepcopy(EVENT)
    event["pull_request"]["head"]["repo"] = (
        None if head_repo is None else dict(event["pull_request"]["head"]["repo"],
                                            full_name=head_repo, fork=head_repo != REPO))
    return event


SAME_REPO = _event(REPO)


def _run(env: dict, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("LASER_CI_MODEL_DIR", raising=False)  # the checkout's model/
    monkeypatch.delenv("LASER_CI_LEARNED_MODEL_DIR", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return CliRunner().invoke(action_command, [], catch_exceptions=False)


def _result(tmp_path: Path) -> dict:
    return json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))


def _notices(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(NOTICE)]


@pytest.mark.parametrize("given", ["folder", "learned"])
def test_a_pr_is_predicted_by_the_repositorys_learned_model(tmp_path, github, monkeypatch,
                                                           learned_model, given):
    folder = learned_model()
    extra = ({"LASER_CI_MODEL": str(folder)} if given == "folder" else
             {"LASER_CI_MODEL": "learned", "LASER_CI_LEARNED_MODEL_DIR": str(folder)})
    result = _run(_env(tmp_path, github, SAME_REPO, LASER_CI_FAIL_ON_ERROR="true", **extra),
                  monkeypatch)

    assert result.exit_code == 0, result.output
    assert _notices(result.output) == []
    (comment,) = github.comments(REPO, NUMBER)
    assert f"(predictor `laser-lm`, model {WORDS})" in comment["body"]
    assert "The shipped model predicted" not in comment["body"]
    data = _result(tmp_path)
    assert data["predictor"] == "laser-lm"
    assert data["model"] == {"shipped": False, "folder": str(folder), "learned": LEARNED,
                             "input": "learned" if given == "learned" else str(folder)}
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").strip() == comment["body"].strip()


def test_a_push_is_predicted_by_the_learned_model_too(tmp_path, monkeypatch, learned_model):
    ws, event_path = _push_checkout(tmp_path, HEAD_TREE)
    env = {
        "GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": "http://127.0.0.1:9",  # never called
        "GITHUB_WORKSPACE": str(ws), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"), "RUNNER_TEMP": str(tmp_path / "temp"),
        "LASER_CI_MODEL": "learned", "LASER_CI_LEARNED_MODEL_DIR": str(learned_model()),
    }
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    result = _run(env, monkeypatch)
    assert result.exit_code == 0, result.output
    assert _notices(result.output) == []
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert f"(predictor `laser-lm`, model {WORDS})" in summary


def _bad_block(tmp_path: Path, learned_model) -> Path:
    folder = tmp_path / "bad"
    shutil.copytree(learned_model(), folder)
    config = json.loads((folder / "laser.json").read_text(encoding="utf-8"))
    config["learned"]["job_runs"] = "lots"
    (folder / "laser.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def _not_learned(tmp_path: Path, learned_model) -> Path:
    folder = tmp_path / "plain"
    shutil.copytree(learned_model(), folder)
    config = json.loads((folder / "laser.json").read_text(encoding="utf-8"))
    del config["learned"]
    (folder / "laser.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


# case -> (event, `model` input, the folder laser-ci is given, what the notice says)
FALLBACKS = {
    "no such folder": (SAME_REPO, "path", lambda t, m: t / "nope",
                       lambda t, m: f"no model folder at {t / 'nope'}"),
    "a cache miss": (SAME_REPO, "learned", lambda t, m: t / "temp" / "laser-ci-model",
                     lambda t, m: "no learned model of octo/app in the Actions cache (key "
                                  "laser-ci-model-octo/app-…): the weekly learning workflow "
                                  "saves one, docs/learning.md"),
    "another repository's": (SAME_REPO, "path", lambda t, m: m(repository="other/app"),
                             lambda t, m: f"{m(repository='other/app')} learned other/app's "
                                          "runs, not octo/app's"),
    "a fork": (EVENT, "path", lambda t, m: m(),
               lambda t, m: "this pull request comes from a fork (its head is "
                            "contributor/app), whose run may find a model that this "
                            "repository's schedule did not write"),
    "a fork, cached": (EVENT, "learned", lambda t, m: m(),
                       lambda t, m: "this pull request comes from a fork (its head is "
                                    "contributor/app)"),
    "a deleted fork": (_event(None), "path", lambda t, m: m(),
                       lambda t, m: "this pull request comes from a fork (its head "
                                    "repository is gone)"),
    "a malformed block": (SAME_REPO, "path", _bad_block,
                          lambda t, m: f"{t / 'bad' / 'laser.json'}: learned: job_runs 'lots'"),
    "no model in it": (SAME_REPO, "path", lambda t, m: t,
                       lambda t, m: f"{t}: ModelNotFoundError: no model found in {t}"),
    "a cached folder that learned nothing": (
        SAME_REPO, "learned", _not_learned,
        lambda t, m: f"the folder restored from the Actions cache learned no repository "
                     f"({t / 'plain'})"),
}


@pytest.mark.parametrize("case", list(FALLBACKS))
def test_a_model_that_cannot_be_used_is_a_notice_and_the_shipped_model(
        tmp_path, github, monkeypatch, learned_model, case):
    event, given, folder_of, says = FALLBACKS[case]
    folder = folder_of(tmp_path, learned_model)
    extra = ({"LASER_CI_MODEL": str(folder)} if given == "path" else
             {"LASER_CI_MODEL": "learned", "LASER_CI_LEARNED_MODEL_DIR": str(folder)})
    # fail-on-error: true, and still exit 0: a model not used is a note, not a problem
    result = _run(_env(tmp_path, github, event, LASER_CI_FAIL_ON_ERROR="true", **extra),
                  monkeypatch)

    assert result.exit_code == 0, result.output
    why = says(tmp_path, learned_model)
    (notice,) = _notices(result.output)
    assert notice.startswith(NOTICE + why) and notice.endswith("; the shipped model predicts")
    data = _result(tmp_path)
    assert data["predictor"] == load_predictor(None).name != "laser-lm"
    assert data["model"]["shipped"] is True and data["model"]["fallback"].startswith(why)
    assert data["model"]["input"] == ("learned" if given == "learned" else str(folder))
    # the footer of the comment (a fork's read-only token: of the job summary) says so
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    footer = summary.strip().splitlines()[-1]
    assert footer.startswith("<sub>The shipped model predicted, not the `model` input: ")
    assert "model learned from" not in summary


def test_without_a_model_input_nothing_is_said(tmp_path, github, monkeypatch):
    result = _run(_env(tmp_path, github, SAME_REPO), monkeypatch)
    assert result.exit_code == 0, result.output
    assert _notices(result.output) == []
    assert _result(tmp_path)["model"] == {"shipped": True}
    body = github.comments(REPO, NUMBER)[0]["body"]
    assert "model learned" not in body and "The shipped model predicted" not in body


@pytest.mark.parametrize(("head", "repository", "fork"), [
    ("octo/app", "octo/app", None),
    ("Octo/App", "octo/app", None),  # GitHub's names are case-insensitive
    ("contributor/app", "octo/app", "its head is contributor/app"),
    (None, "octo/app", "its head repository is gone"),
    ("octo/app", None, "its head is octo/app"),  # the repository unknown: not trusted
])
def test_which_pull_requests_are_from_forks(head, repository, fork):
    pr = _event(head)["pull_request"]
    assert fork_of(pr, repository) == fork
    assert fork_of(None, repository) is None  # no pull request: a push, a schedule


def test_the_model_settings(tmp_path):
    s = Settings.from_env({"LASER_CI_MODEL": "learned", "RUNNER_TEMP": "/rt"})
    assert (s.model, s.model_from_cache) == (Path("/rt/laser-ci-model"), True)
    s = Settings.from_env({"LASER_CI_MODEL": "learned", "RUNNER_TEMP": "/rt",
                           "LASER_CI_LEARNED_MODEL_DIR": "/elsewhere"})
    assert (s.model, s.model_from_cache) == (Path("/elsewhere"), True)
    s = Settings.from_env({"LASER_CI_MODEL": "Learned", "RUNNER_TEMP": "/rt"})
    assert (s.model, s.model_from_cache) == (Path("/rt/laser-ci-model"), True)
    s = Settings.from_env({"LASER_CI_MODEL": "./learned"})  # a folder named so
    assert (s.model, s.model_from_cache) == (Path("learned"), False)
    assert (Settings.from_env({}).model, Settings.from_env({}).model_from_cache) == (None, False)


# --- action.yml: the restore step; the learning action and its workflow ---------------------


def _ev(text: str, values: dict[str, str]) -> str:
    return re.sub(r"\$\{\{ *([\w.-]+) *\}\}", lambda m: values[m.group(1)], text)


def test_action_yml_restores_the_learned_model_where_laser_ci_reads_it():
    steps = _yaml(ROOT / "action.yml")["runs"]["steps"]
    by_id = {s.get("id"): s for s in steps}
    restore, run = by_id["learned-model"], by_id["run"]
    assert steps.index(restore) < steps.index(run)
    cache = by_id["cache"]["uses"]
    assert restore["uses"] == cache.replace("actions/cache@", "actions/cache/restore@")
    assert _pinned(restore["uses"])
    assert "inputs.model == 'learned'" in restore["if"]
    # skipped on a fork's pull request (laser-ci says why in a notice)
    assert "github.event.pull_request.head.repo.full_name == github.repository" in restore["if"]
    values = {"runner.temp": "/rt", "github.repository": REPO, "github.run_id": "99"}
    assert _ev(restore["with"]["path"], values) == "/rt/laser-ci-model"
    assert _ev(run["env"]["LASER_CI_LEARNED_MODEL_DIR"], values) == "/rt/laser-ci-model"
    assert run["env"]["LASER_CI_MODEL"] == "${{ inputs.model }}"
    (prefix,) = _ev(restore["with"]["restore-keys"], values).splitlines()
    assert prefix == cache_prefix(REPO) == "laser-ci-model-octo/app-"
    # its own key never names an entry the learning workflow saved (…-<its run id>)
    key = _ev(restore["with"]["key"], values)
    assert key.startswith(prefix) and not re.fullmatch(r"laser-ci-model-octo/app-\d+", key)


LEARN = ROOT / "learn" / "action.yml"
EXAMPLE = ROOT / "examples" / "learn" / "laser-ci-learn.yml"


@pytest.mark.parametrize("path", [ROOT / "action.yml", LEARN], ids=["action", "learn"])
def test_composite_steps_get_inputs_only_through_env(path):
    """No ``${{ }}`` inside any ``run:``: an input (a token, a path) reaches a script as an
    environment variable, never pasted into its text."""
    action = _yaml(path)
    assert action["runs"]["using"] == "composite"
    runs = 0
    for step in action["runs"]["steps"]:
        if "run" in step:
            runs += 1
            assert step.get("shell") == "bash"
            assert "${{" not in step["run"], (step.get("name"), "inputs reach run: through env:")
        else:
            assert _pinned(step["uses"]), step["uses"]
    assert runs >= 2


def test_the_learning_action_saves_where_the_action_restores():
    action = _yaml(LEARN)
    steps = action["runs"]["steps"]
    names = [s.get("name") for s in steps]
    values = {"runner.temp": "/rt", "github.repository": REPO, "github.run_id": "99",
              "github.run_attempt": "1", "inputs.github-token": "t", "inputs.max-runs": "400",
              "inputs.minutes": "20", "steps.python.outputs.python-path": "/py"}
    install, collect, learn = (next(s for s in steps if s.get("id") == i or s.get("name") == i)
                               for i in ("Install laser-ci and its train extra", "collect",
                                         "learn"))
    # torch: the CPU wheel, pinned as the train extra pins it, before the extra
    pins = re.findall(r'"torch==([\d.]+)"', (ROOT / "pyproject.toml").read_text())
    torch_line = next(line for line in install["run"].splitlines() if "torch==" in line)
    assert pins and f"torch=={pins[0]} --index-url https://download.pytorch.org/whl/cpu" in torch_line
    assert install["run"].index("torch==") < install["run"].index("[train]")
    assert "laser-ci\" collect \"$GITHUB_REPOSITORY\"" in collect["run"]
    assert collect["env"]["GITHUB_TOKEN"] == "${{ inputs.github-token }}"
    assert "finetune --data \"$LASER_CI_RUNS\" --base \"$GITHUB_ACTION_PATH/../model/lm\"" in learn["run"]
    assert "--minutes \"$LASER_CI_MINUTES\"" in learn["run"]
    assert (ROOT / "model" / "lm" / "weights.safetensors").is_file()  # the base it names
    save = steps[names.index("Save the learned model")]
    restore = _yaml(ROOT / "action.yml")["runs"]["steps"]
    restore = next(s for s in restore if s.get("id") == "learned-model")
    assert save["uses"] == restore["uses"].replace("/restore@", "/save@")
    assert _ev(save["with"]["path"], values) == _ev(learn["env"]["LASER_CI_OUT"], values) \
        == "/rt/laser-ci-model"
    key = _ev(save["with"]["key"], values)
    assert key == _ev(learn["env"]["LASER_CI_KEY"], values) == "laser-ci-model-octo/app-99"
    assert key.startswith(_ev(restore["with"]["restore-keys"], values).strip())
    assert steps.index(learn) < names.index("Save the learned model")


def test_the_example_learning_workflow():
    wf = yaml.load(EXAMPLE.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    assert set(wf["on"]) == {"schedule", "workflow_dispatch"} and wf["on"]["schedule"][0]["cron"]
    assert wf["permissions"] == {}
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"actions": "read", "contents": "read"}
    (step,) = job["steps"]
    assert step["uses"].startswith("laser-ci/laser-ci/learn@")
    assert step["with"]["minutes"] == _yaml(LEARN)["inputs"]["minutes"]["default"] == "20"


def test_the_example_learning_workflow_reads_clean():
    """Our own parser and GitHub's workflow schema find nothing wrong with it."""
    result = CliRunner().invoke(
        __import__("laser_ci.cli", fromlist=["main"]).main,
        ["estimate", "--format", "json", str(EXAMPLE.parent)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["errors"] == []
    (wf,) = data["workflows"]
    assert [j["name"] for j in wf["jobs"]] == ["learn job runtimes"]


# --- the learning action's scripts, run as the runner runs them ---------------------------


def _fake_bin(tmp_path: Path, laser_ci: str) -> Path:
    """A venv's bin folder as the install step leaves it: ``laser-ci`` is the script
    ``laser_ci`` (bash), ``python`` this interpreter with this checkout importable."""
    import os
    import sys

    bin_dir = tmp_path / "venv-bin"
    bin_dir.mkdir()
    (bin_dir / "laser-ci").write_text("#!/bin/bash\n" + laser_ci, encoding="utf-8")
    (bin_dir / "python").write_text(
        f'#!/bin/bash\nPYTHONPATH="{ROOT}" exec "{sys.executable}" "$@"\n', encoding="utf-8")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    (tmp_path / "temp").mkdir(exist_ok=True)
    (tmp_path / "temp" / "laser-ci-learn-bin").write_text(str(bin_dir) + "\n", encoding="utf-8")
    assert os.access(bin_dir / "laser-ci", os.X_OK)
    return bin_dir


def _run_step(step: dict, tmp_path: Path, values: dict[str, str]):
    import os
    import subprocess

    env = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(tmp_path / "temp"),
           "GITHUB_REPOSITORY": REPO, "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_ACTION_PATH": str(ROOT / "learn")}
    env.update({k: _ev(v, values) for k, v in step.get("env", {}).items()})
    return subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True, text=True)


def _learn_values(tmp_path: Path) -> dict[str, str]:
    return {"runner.temp": str(tmp_path / "temp"), "github.repository": REPO,
            "github.run_id": "99", "github.run_attempt": "1", "inputs.github-token": "tok",
            "inputs.max-runs": "400", "inputs.minutes": "20"}


# collect's exit status (and whether it left runs) -> the step's exit status, and a warning
COLLECT = [
    (0, False, 0, False),
    (1, True, 0, True),  # GitHub failed part way: learn from what was collected
    (1, False, 1, False),  # nothing collected: nothing to learn from
    (2, True, 2, False),  # bad usage is never papered over
    (130, True, 130, False),
]


@pytest.mark.parametrize(("status", "has_runs", "exit_code", "warns"), COLLECT)
def test_the_collect_step(tmp_path, status, has_runs, exit_code, warns):
    step = next(s for s in _yaml(LEARN)["runs"]["steps"] if s.get("id") == "collect")
    runs = tmp_path / "temp" / "laser-ci-runs"
    _fake_bin(tmp_path, f'echo "$@" > "{tmp_path}/args"\necho "$GITHUB_TOKEN" > "{tmp_path}/token"\n'
                        + (f'mkdir -p "{runs}" && echo x > "{runs}/runs.jsonl.gz"\n' if has_runs else "")
                        + f"exit {status}\n")
    done = _run_step(step, tmp_path, _learn_values(tmp_path))
    assert done.returncode == exit_code, done.stderr
    assert ("::warning title=laser-ci learn::" in done.stdout) == warns
    assert (tmp_path / "args").read_text().split() == ["collect", REPO, "--out", str(runs),
                                                       "--max-runs", "400"]
    assert (tmp_path / "token").read_text().strip() == "tok"


@pytest.mark.parametrize("repository", [REPO, "other/app"])
def test_the_learn_step_saves_only_a_model_of_this_repository(tmp_path, learned_model,
                                                              repository):
    step = next(s for s in _yaml(LEARN)["runs"]["steps"] if s.get("id") == "learn")
    out = tmp_path / "temp" / "laser-ci-model"
    out.mkdir(parents=True)
    (out / "stale").write_text("from an earlier run", encoding="utf-8")
    made = learned_model(repository=repository)
    _fake_bin(tmp_path, f'echo "$@" > "{tmp_path}/args"\n'
                        f'test ! -e "{out}/stale" && cp -r "{made}" "{out}"\n')
    done = _run_step(step, tmp_path, _learn_values(tmp_path))
    args = (tmp_path / "args").read_text().split()
    assert args == ["finetune", "--data", str(tmp_path / "temp" / "laser-ci-runs"), "--base",
                    str(ROOT / "learn" / ".." / "model" / "lm"), "--out", str(out),
                    "--minutes", "20"]
    outputs = (tmp_path / "output.txt")
    if repository == REPO:
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "summary.md").read_text() == f"laser-ci {WORDS} in 18.5 minutes.\n"
        assert outputs.read_text().splitlines() == [f"model={out}",
                                                    "key=laser-ci-model-octo/app-99"]
    else:  # the save step after it does not run: the Action would not use it
        assert done.returncode == 1
        assert "learned other/app's runs" in done.stderr
        assert not outputs.exists()


def test_the_docs_show_the_example_workflow_as_it_is():
    """docs/learning.md's copy of the workflow is the example file's (comments aside)."""
    doc = (ROOT / "docs" / "learning.md").read_text(encoding="utf-8")
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    shown = yaml.load(re.sub(r"(?m)^   ", "", block), Loader=yaml.BaseLoader)
    assert shown == yaml.load(EXAMPLE.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
