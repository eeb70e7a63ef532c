"""Rate limits as GitHub answers them (403 or 429, with ``Retry-After`` or
``X-RateLimit-Reset``, or neither): waited out for at most a minute in all, then a warning
or a cold start, never a job that sleeps past its ``timeout-minutes``."""

from __future__ import annotations

import time

import pytest
from test_action import MARKER, NUMBER, REPO, _add_history, _env, _invoke
from test_action import github as github  # noqa: PLC0414 - the fixture, re-exported

from laser_ci.github.action import RATE_LIMIT_WAIT_S

SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes "
                        "before you try again."}


@pytest.fixture
def slept(monkeypatch):
    """The sleeps of the retries, recorded instead of slept."""
    seconds: list[float] = []
    monkeypatch.setattr(time, "sleep", seconds.append)
    return seconds


def _warnings(output: str) -> list[str]:
    return [x for x in output.splitlines() if x.startswith("::warning")]


@pytest.mark.parametrize("status", [403, 429, 503])
def test_a_long_retry_after_is_not_slept(tmp_path, github, monkeypatch, slept, status):
    # urllib3 slept each Retry-After whole, once per retry: 10 x 900 s, where the quick
    # start's job has timeout-minutes: 10
    github.inject(r"/pulls/7/files", status, SECONDARY, {"Retry-After": "900"}, times=None)
    result = _invoke(_env(tmp_path, github), monkeypatch)

    assert result.exit_code == 0, result.output
    assert sum(slept) <= RATE_LIMIT_WAIT_S
    assert _warnings(result.output) == [
        f"::warning::laser-ci could not estimate the workflows: GitHub API {status}: "
        + SECONDARY["message"]]


def test_rate_limits_are_waited_out_a_minute_in_all(tmp_path, github, monkeypatch, slept):
    # a secondary rate limit without Retry-After waits 60 s before each of 10 retries, on
    # every request: minutes on each workflow's run listing
    _add_history(github)
    github.inject(r"/actions/workflows/[^/]+/runs", 403, SECONDARY, times=None)
    result = _invoke(_env(tmp_path, github), monkeypatch)

    assert result.exit_code == 0, result.output
    assert sum(slept) <= RATE_LIMIT_WAIT_S
    assert github.comments(REPO, NUMBER)[0]["body"].startswith(MARKER)
    assert "history unavailable" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_a_primary_rate_limit_answered_429_is_waited_out(tmp_path, github, monkeypatch,
                                                         slept):
    # GitHub answers a primary rate limit with 403 or 429: a 429 was not retried at all
    # and the estimate was lost, though the limit reset seconds later
    github.inject_rate_limit(r"/pulls/7/files", reset_in=5, status=429, times=1)
    result = _invoke(_env(tmp_path, github), monkeypatch)

    assert result.exit_code == 0, result.output
    assert _warnings(result.output) == []
    assert len(slept) == 1 and 5 <= slept[0] <= 8
    assert len(github.requests_to(r"/pulls/7/files")) == 2
    assert github.comments(REPO, NUMBER)[0]["body"].startswith(MARKER)
