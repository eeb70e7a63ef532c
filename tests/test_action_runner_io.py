"""What the Action writes for the runner ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY, the JSON
result) when the runner's files are not as expected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_action import MARKER, NUMBER, REPO, _env, _invoke, _outputs
from test_action import github as github  # noqa: PLC0414 - the fixture, re-exported


def _lines(output: str, kind: str) -> list[str]:
    return [x for x in output.splitlines() if x.startswith(f"::{kind}")]


@pytest.mark.parametrize("broken", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_a_runner_file_that_cannot_be_written_is_one_warning(tmp_path, github, monkeypatch,
                                                             broken):
    # a path in a folder that is gone ended the step with a traceback, after the comment
    # was posted, and the other files were not written
    env = _env(tmp_path, github, **{broken: str(tmp_path / "gone" / "file")})
    result = _invoke(env, monkeypatch)

    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    (warning,) = _lines(result.output, "warning")
    what = "the step outputs" if broken == "GITHUB_OUTPUT" else "the job summary"
    assert warning.startswith(f"::warning::laser-ci could not write {what}: ")
    assert github.comments(REPO, NUMBER)[0]["body"].startswith(MARKER)
    if broken == "GITHUB_OUTPUT":
        assert MARKER in (tmp_path / "summary.md").read_text(encoding="utf-8")
    else:
        data = json.loads(Path(_outputs(tmp_path)["json"]).read_text(encoding="utf-8"))
        assert data["comment"]["status"] == "created"

    failed = _invoke(dict(env, LASER_CI_FAIL_ON_ERROR="true"), monkeypatch)
    assert failed.exit_code == 1
    assert "::error::laser-ci: 1 problem(s); fail-on-error is true" in failed.output


def test_the_summary_of_a_failed_estimate_that_cannot_be_written(tmp_path, github,
                                                                 monkeypatch):
    github.inject(r"/pulls/7/files", 404, {"message": "Not Found"}, times=None)
    env = _env(tmp_path, github, GITHUB_STEP_SUMMARY=str(tmp_path))  # a folder
    result = _invoke(env, monkeypatch)

    assert result.exit_code == 0, result.output
    assert [x.split(":")[4] for x in _lines(result.output, "warning")] == [
        "laser-ci could not estimate the workflows", "laser-ci could not write the job summary"]
