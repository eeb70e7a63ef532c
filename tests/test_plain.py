"""laser_ci.report.plain: untrusted names as one safe line of terminal text."""

from __future__ import annotations

import json

import pytest

from laser_ci.report.plain import _UNSAFE, json_text, line


@pytest.mark.parametrize(("raw", "shown"), [
    ("test (ubuntu-latest, 3.12)", "test (ubuntu-latest, 3.12)"),
    ("", ""),
    ("a\n::error::owned", "a ::error::owned"),           # no workflow command on its own line
    ("a\r\n::add-mask::x", "a  ::add-mask::x"),
    ("x\x1b[31mred\x1b[0m", "x [31mred [0m"),            # no colour, no cursor move
    ("x\x1b]0;title\x07", "x ]0;title "),                # no window title (OSC ... BEL)
    ("x\x9b31m", "x 31m"),                               # the 8-bit CSI
    ("tab\there", "tab here"),
    ("nul\x00del\x7f", "nul del "),
    ("para\u2028graph\u2029", "para graph "),
    ("abc\u202egnp.exe", "abc gnp.exe"),                  # no right-to-left override
    ("\u2066isolate\u2069", " isolate "),
    ("日本語 · Ünïcödé — ok", "日本語 · Ünïcödé — ok"),    # printable text is kept
    ("עברית", "עברית"),                                   # right-to-left text is kept
])
def test_line(raw: str, shown: str) -> None:
    assert line(raw) == shown
    assert "\n" not in line(raw) and "\x1b" not in line(raw)


def test_below_0xa0_exactly_the_printable_characters_are_kept() -> None:
    for cp in range(0xa0):
        c = chr(cp)
        assert line(c) == (c if c.isprintable() else " "), hex(cp)


@pytest.mark.parametrize("value", [
    "x\x9b31m", "nel\x85", "ls\u2028ps\u2029", "abc\u202egnp", "\u2066i\u2069", "del\x7f",
    "esc\x1b[2J\nnl", "plain ü 日本", "",
])
def test_json_text_keeps_the_value_and_prints_no_unsafe_character(value: str) -> None:
    doc = {"name": value, "jobs": [{"label": value}]}
    text = json_text(json.dumps(doc, indent=2, ensure_ascii=False))
    assert json.loads(text) == doc
    assert not _UNSAFE.search(text.replace("\n", ""))  # newlines: the indent's
    assert ("ü" in text) == ("ü" in value)  # printable text stays readable, not escaped
