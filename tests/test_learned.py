"""A learned model folder (issue 53): what its ``learned`` block says, and ``laser-ci
estimate --model DIR`` saying which model predicted, and warning when it learned another
repository than the one estimated."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import LEARNED

from laser_ci.cli import main
from laser_ci.predictors.learned import (
    LearnedFileError,
    check,
    describe,
    learned_info,
    model_words,
    other_repository,
)
from laser_ci.predictors.lm import ModelFileError

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo"


def _folder(tmp_path: Path, learned: Any = None, *, drop: str | None = None) -> Path:
    """A folder whose laser.json is the shipped one's with ``learned`` (absent: none)."""
    config = json.loads((ROOT / "model" / "lm" / "laser.json").read_text(encoding="utf-8"))
    if learned is not None:
        config["learned"] = ({k: v for k, v in learned.items() if k != drop}
                             if isinstance(learned, dict) else learned)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "laser.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


# --- the learned block --------------------------------------------------------------------


def test_the_block_is_read_whole(tmp_path):
    info = learned_info(_folder(tmp_path, LEARNED))
    assert info is not None and info.to_json() == LEARNED
    assert describe(info) == "learned from octo/app's 20,021 job runs up to 2026-01-12"


@pytest.mark.parametrize("folder", ["shipped", "no laser.json", "missing"])
def test_a_folder_that_learned_no_repository_has_no_block(tmp_path, folder):
    path = {"shipped": ROOT / "model" / "lm", "no laser.json": tmp_path,
            "missing": tmp_path / "nope"}[folder]
    assert learned_info(path) is None


@pytest.mark.parametrize(("change", "says"), [
    ({"repository": "octo"}, "repository 'octo': expected OWNER/NAME"),
    ({"repository": None}, "repository None"),
    ({"repository": "octo/app/x"}, "expected OWNER/NAME"),
    ({"job_runs": -1}, "job_runs -1"),
    ({"job_runs": 2.5}, "job_runs 2.5"),
    ({"job_runs": True}, "job_runs True"),
    ({"job_runs": "20021"}, "job_runs '20021'"),
    ({"runs": -3}, "runs -3"),
    ({"last": "last week"}, "last 'last week': expected an ISO 8601 time"),
    ({"last": None}, "last None"),
    ({"first": 20260102}, "first 20260102"),
    ({"created": "2026-13-01"}, "created '2026-13-01'"),
    ({"calibrated_on": [3000]}, "calibrated_on is not an object"),
    ({"calibrated_on": {"job_runs": -1}}, "calibrated_on.job_runs -1"),
    ({"calibrated_on": {"job_runs": 5, "last": "soon"}}, "calibrated_on.last 'soon'"),
    ({"base": "abc"}, "base 'abc'"),
    ({"minutes": -0.5}, "minutes -0.5"),
    ({"minutes": float("inf")}, "minutes inf"),
    ({"minutes": "18"}, "minutes '18'"),
])
def test_a_malformed_block_is_one_line_naming_the_file(tmp_path, change, says):
    folder = _folder(tmp_path, {**LEARNED, **change})
    with pytest.raises(ModelFileError) as err:
        learned_info(folder)
    assert isinstance(err.value, LearnedFileError)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{folder / 'laser.json'}: learned: ")
    assert says in message, message


@pytest.mark.parametrize("required", ["repository", "job_runs", "last"])
def test_the_fields_a_report_says_are_required(tmp_path, required):
    with pytest.raises(LearnedFileError, match=required):
        learned_info(_folder(tmp_path, LEARNED, drop=required))


@pytest.mark.parametrize("optional", ["runs", "first", "calibrated_on", "created", "base",
                                      "minutes"])
def test_the_other_fields_may_be_left_out(tmp_path, optional):
    info = learned_info(_folder(tmp_path, LEARNED, drop=optional))
    assert info is not None and getattr(info, optional) is None


def test_a_block_that_is_not_an_object_or_a_config_that_is_not_json(tmp_path):
    with pytest.raises(LearnedFileError, match="learned: not an object"):
        learned_info(_folder(tmp_path / "a", ["octo/app"]))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "laser.json").write_text("{", encoding="utf-8")
    with pytest.raises(LearnedFileError, match="cannot read model config"):
        learned_info(tmp_path / "b")


@pytest.mark.parametrize(("job_runs", "last", "words"), [
    (0, "2026-01-12T23:59:59Z", "learned from octo/app's 0 job runs up to 2026-01-12"),
    (1, "2026-01-12", "learned from octo/app's 1 job run up to 2026-01-12"),
    (1000, "2026-01-12T00:00:00+00:00", "learned from octo/app's 1,000 job runs up to 2026-01-12"),
])
def test_describe(tmp_path, job_runs, last, words):
    info = learned_info(_folder(tmp_path, {**LEARNED, "job_runs": job_runs, "last": last}))
    assert info is not None and describe(info) == words


@pytest.mark.parametrize(("estimated", "warns"), [
    ("octo/app", False), ("Octo/App", False),  # GitHub's names are case-insensitive
    ("octo/app2", True), ("other/app", True), (None, False), ("", False),
])
def test_another_repository_is_a_warning(tmp_path, estimated, warns):
    info = learned_info(_folder(tmp_path, LEARNED))
    warning = other_repository(info, estimated)
    assert (warning is not None) == warns
    if warns:
        assert "octo/app's runs" in warning and f"{estimated}'s" in warning


@pytest.mark.parametrize(("model", "words"), [
    (None, None), ({"shipped": True}, None), ("garbage", None),
    ({"shipped": False, "folder": "m", "learned": None}, "from the folder m"),
    ({"shipped": False, "folder": "m", "learned": LEARNED},
     "learned from octo/app's 20,021 job runs up to 2026-01-12"),
])
def test_the_words_of_a_model_object(model, words):
    assert model_words(model) == words


def test_the_learning_workflows_check(tmp_path):
    """learn/action.yml checks the folder before saving it: learned, and this repository."""
    folder = _folder(tmp_path / "ok", LEARNED)
    assert check(folder, "octo/app") == ("laser-ci learned from octo/app's 20,021 job runs "
                                         "up to 2026-01-12 in 18.5 minutes.\n")
    with pytest.raises(LearnedFileError, match="other/app's"):
        check(folder, "other/app")
    with pytest.raises(LearnedFileError, match="no learned block"):
        check(_folder(tmp_path / "shipped"), "octo/app")


# --- laser-ci estimate --model ------------------------------------------------------------


def _estimate(*args: str) -> Result:
    return CliRunner().invoke(main, ["estimate", *args, str(DEMO)])


def test_estimate_says_which_learned_model_predicted(learned_model):
    folder = learned_model()
    result = _estimate("--model", str(folder), "--repo", "octo/app", "--format", "json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert data["predictor"] == "laser-lm"
    assert data["model"] == {"shipped": False, "folder": str(folder), "learned": LEARNED}
    assert all(j["runtime_s"]["p50"] > 0 for wf in data["workflows"] for j in wf["jobs"])

    md = _estimate("--model", str(folder), "--repo", "octo/app", "--format", "markdown")
    assert md.exit_code == 0, md.output
    assert md.stdout.splitlines()[-1] == ("<sub>predictor: laser-lm · model learned from "
                                          "octo/app's 20,021 job runs up to 2026-01-12</sub>")
    table = _estimate("--model", str(folder), "--repo", "octo/app")
    assert table.stdout.splitlines()[-2:] == [
        "predictor: laser-lm", "model: learned from octo/app's 20,021 job runs up to 2026-01-12"]


def test_estimate_warns_when_the_model_learned_another_repository(learned_model):
    folder = learned_model()
    result = _estimate("--model", str(folder), "--repo", "other/app", "--format", "json")
    assert result.exit_code == 0, result.output  # used all the same: the user asked for it
    (line,) = result.stderr.splitlines()
    assert line == (f"warning: --model {folder}: the model learned octo/app's runs, and the "
                    "workflows are other/app's: its corrections are for octo/app's jobs")
    data = json.loads(result.stdout)
    assert data["predictor"] == "laser-lm" and data["model"]["warning"] in line


@pytest.mark.parametrize(("origin", "env", "warns"), [
    ("octo/app", "other/app", False),  # the checkout's origin comes first
    ("other/app", "octo/app", True),
    (None, "other/app", True),  # no origin: $GITHUB_REPOSITORY
    (None, "octo/app", False),
    (None, None, False),  # unknown: nothing to compare
])
def test_the_repository_estimated_without_repo(tmp_path, monkeypatch, learned_model, origin,
                                               env, warns):
    checkout = tmp_path / "checkout"
    shutil.copytree(DEMO / ".github", checkout / ".github")
    if origin:
        (checkout / ".git").mkdir()
        (checkout / ".git" / "config").write_text(
            f'[remote "origin"]\n\turl = https://github.com/{origin}.git\n', encoding="utf-8")
    if env:
        monkeypatch.setenv("GITHUB_REPOSITORY", env)
    else:
        monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    result = CliRunner().invoke(main, ["estimate", "--model", str(learned_model()),
                                       "--format", "json", str(checkout)])
    assert result.exit_code == 0, result.output
    assert ("warning" in json.loads(result.stdout)["model"]) == warns
    assert (result.stderr != "") == warns


def test_estimate_without_model_is_the_shipped_one_and_says_nothing_more(fake_predictor):
    result = _estimate("--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == {"shipped": True}
    table = _estimate()
    assert not any(line.startswith("model:") for line in table.stdout.splitlines())


def test_estimate_with_a_malformed_block_is_one_error_line(tmp_path):
    folder = tmp_path / "lm"
    shutil.copytree(ROOT / "model" / "lm", folder, ignore=shutil.ignore_patterns(
        "weights.safetensors", "*.md"))
    config = json.loads((folder / "laser.json").read_text(encoding="utf-8"))
    config["learned"] = {**LEARNED, "job_runs": "many"}
    (folder / "laser.json").write_text(json.dumps(config), encoding="utf-8")
    result = _estimate("--model", str(folder))
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"laser-ci: error: {folder / 'laser.json'}: learned: job_runs 'many'")
