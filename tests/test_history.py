from __future__ import annotations

import pytest

from laser_ci.text.history import (
    History,
    config_diff,
    history_lines,
    parse_history,
    relative_history_line,
    split_history_block,
)
from laser_ci.text.numbers import NumberCodec
from laser_ci.training.history import with_history_block


@pytest.mark.parametrize(("value", "seconds"), [
    (312, 312.0), (12.5, 12.5), ("95", 95.0), ("1e3", 1000.0), (0, None), (-30, None),
    (None, None), ("", None), ("n/a", None), ([], None), ({}, None), ("nan", None),
    (float("inf"), None), ("-inf", None), ("1e400", None), (10**400, None),
])
def test_seconds_of_keeps_finite_positive_durations(value: object,
                                                    seconds: float | None) -> None:
    from laser_ci.text.history import seconds_of

    assert seconds_of(value) == seconds


def test_absent_history_is_stated() -> None:
    assert history_lines(None) == ["history: none"]
    assert History.of([]) is None
    assert History.of([0.0, -1.0]) is None  # skipped runs carry no time
    assert History.of([float("inf"), float("nan")]) is None  # nor does a broken record
    assert History.of([float("inf"), 10**400, 60.0]).runtimes == (60.0,)


@pytest.mark.parametrize(
    ("runtimes", "expected"),
    [
        ([473.0], "history: n=1 median=4.73e+02 p10=4.73e+02 p90=4.73e+02 latest=4.73e+02 "
                  "recent=4.73e+02"),
        ([100.0, 200.0, 300.0],
         "history: n=3 median=2.00e+02 p10=1.20e+02 p90=2.80e+02 latest=3.00e+02 "
         "recent=2.00e+02"),
        # recent: the median of the last 3 runs (400), not of all of them (300)
        ([100.0, 200.0, 300.0, 400.0, 500.0],
         "history: n=5 median=3.00e+02 p10=1.40e+02 p90=4.60e+02 latest=5.00e+02 "
         "recent=4.00e+02"),
        ([0.4], "history: n=1 median=1.00e+00 p10=1.00e+00 p90=1.00e+00 latest=1.00e+00 "
                "recent=1.00e+00"),
    ],
)
def test_summary_uses_the_target_notation(runtimes: list[float], expected: str) -> None:
    h = History.of(runtimes, diff=())
    assert history_lines(h) == [expected, "history-config: unchanged"]


def test_only_the_last_runs_count() -> None:
    h = History.of([1000.0] * 5 + [10.0] * 20)
    assert h is not None and h.n == 20 and h.median == 10.0


def test_diff_of_serialized_configs() -> None:
    old = "task: job\njob: t\nhistory: none\nsteps:\n- run: |\n    pytest\nrepo: files=1\n"
    new = ("task: job\njob: t\nhistory: none\nsteps:\n- run: |\n    pytest -n 4\n- uses: a/b@v1\n"
           "repo: files=2\n")
    diff = config_diff(old, new)
    assert diff == ("+ pytest -n 4", "- pytest", "+ - uses: a/b@v1")
    assert config_diff(old, old.replace("files=1", "files=9")) == ()
    lines = history_lines(History.of([60.0], diff))
    assert lines[1] == "history-config: changed +2 -1"
    assert lines[2:] == list(diff)


def test_unknown_config_change() -> None:
    assert history_lines(History.of([60.0]))[1] == "history-config: unknown"


def test_diff_ignores_an_embedded_history_block() -> None:
    a = "job: t\nhistory: n=1\nhistory-config: changed +1 -1\n+ run: x\n- run: y\nruns-on: u\n- uses: a@v1\n"
    b = "job: t\nhistory: none\nruns-on: u\n- uses: a@v1\n"
    assert config_diff(a, b) == ()


BODY = "task: job\njob: test\n{hist}runs-on: ubuntu-latest\nsteps:\n- run: pytest\nrepo: files=3"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("", []),
        ("history: none\n", ["history: none"]),
        ("history: n=3 median=2.00e+02 p10=1.20e+02 p90=2.80e+02 latest=3.00e+02\n"
         "history-config: unchanged\n",
         ["history-config: unchanged",
          "history: n=3 p10=1.20e+02 p90=2.80e+02 latest=3.00e+02 median=2.00e+02"]),
        ("history: n=1 median=6.00e+01 p10=6.00e+01 p90=6.00e+01 latest=6.00e+01\n"
         "history-config: changed +1 -1\n+ run: pytest -n 4\n- run: pytest\n",
         ["history-config: changed +1 -1", "+ run: pytest -n 4", "- run: pytest",
          "history: n=1 p10=6.00e+01 p90=6.00e+01 latest=6.00e+01 median=6.00e+01"]),
    ],
)
def test_split_history_block_moves_the_median_last(block: str, expected: list[str]) -> None:
    body, lines = split_history_block(BODY.format(hist=block))
    assert body == BODY.format(hist="")  # the step "- run: pytest" is not taken for a diff
    assert lines == expected


def test_split_history_block_of_a_rendered_block() -> None:
    text = BODY.format(hist="history: none\n")
    warm = with_history_block(text, History.of([100, 200, 300], ["+ run: make"]))
    body, lines = split_history_block(warm)
    assert body == BODY.format(hist="")
    assert lines[0] == "history-config: changed +1 -0" and lines[1] == "+ run: make"
    assert lines[-1].endswith("median=2.00e+02")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("task: job\nhistory: n=3 median=2.00e+02 p10=1.20e+02 p90=2.80e+02 latest=3.00e+02\n",
         {"n": 3, "median": 200.0, "p10": 120.0, "p90": 280.0, "latest": 300.0}),
        ("task: job\nhistory: none\nsteps:\n", None),
        ("task: job\nsteps:\n- run: echo history: n=1 median=5\n", None),  # not the block
        ("history: n=2 median=nan latest=4.00e+00\n", None),
        ("history: n=2 median=3.00e+00 latest=oops\n", {"n": 2, "median": 3.0}),
    ],
)
def test_parse_history(text: str, expected: dict | None) -> None:
    assert parse_history(text) == expected


RATIO_CODEC = NumberCodec(min_exponent=-2)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("history: n=3 p10=1.20e+02 p90=2.80e+02 latest=3.00e+02 median=2.00e+02",
         "history: n=3 p10=6.00e-01 p90=1.40e+00 latest=1.50e+00 median=2.00e+02"),
        ("history: n=1 p10=4.73e+02 p90=4.73e+02 latest=4.73e+02 median=4.73e+02",
         "history: n=1 p10=1.00e+00 p90=1.00e+00 latest=1.00e+00 median=4.73e+02"),
        # a ratio beyond the codec's range is clamped to it
        ("history: n=2 p10=1.00e+00 p90=9.00e+04 latest=1.00e+00 median=9.00e+02",
         "history: n=2 p10=1.00e-02 p90=1.00e+02 latest=1.00e-02 median=9.00e+02"),
        ("history: n=2 p10=3.00e+00 p90=9.00e+00 latest=3.00e+00 median=6.00e+00",
         "history: n=2 p10=5.00e-01 p90=1.50e+00 latest=5.00e-01 median=6.00e+00"),
        ("history: none", "history: none"),
        ("history: n=2 latest=3.00e+02", "history: n=2 latest=3.00e+02"),  # no median
    ],
)
def test_relative_history_line(line: str, expected: str) -> None:
    assert relative_history_line(line, RATIO_CODEC.to_string) == expected


def test_relative_history_line_centered() -> None:
    line = "history: n=3 p10=1.20e+02 p90=2.80e+02 latest=3.00e+02 median=2.00e+02"
    assert relative_history_line(line, RATIO_CODEC.to_string, 10.0) == (
        "history: n=3 p10=6.00e+00 p90=1.40e+01 latest=1.50e+01 median=2.00e+02")
