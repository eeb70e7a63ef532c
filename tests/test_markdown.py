"""laser_ci.report.markdown: untrusted text written into Markdown reads as itself.

Code spans are checked against the CommonMark rule they rely on: a span opened by a run of
n backticks ends at the next run of exactly n, and one space is stripped from each side
when the content both starts and ends with one."""

from __future__ import annotations

import re

import pytest

from laser_ci.report import markdown
from laser_ci.report.comment import Context, render_pr_comment
from laser_ci.report.render import render_markdown


def _span_content(span: str) -> str:
    """What a CommonMark reader shows for ``span``, or an AssertionError if the span does
    not run from its first character to its last."""
    fence = re.match(r"`+", span)
    assert fence, span
    n = len(fence.group())
    closing = [m for m in re.finditer(r"`+", span[n:]) if len(m.group()) == n]
    assert closing and n + closing[0].end() == len(span), f"the span ends early: {span!r}"
    inner = span[n:-n]
    if len(inner) >= 2 and inner[0] == inner[-1] == " " and inner.strip():
        inner = inner[1:-1]
    return inner


@pytest.mark.parametrize(("text", "shown"), [
    ("main", "main"),
    ("a`b", "a`b"),                      # one backtick inside: a fence of two
    ("a``b`c", "a``b`c"),                # the longest run is 2: a fence of three
    ("`start", "`start"),                # a leading backtick is padded away from the fence
    ("end`", "end`"),
    (" both ", " both "),                # spaces on both sides survive the strip
    ("line\nbreak\r\n", "line break  "),  # no line break: a list item or quote cannot end
    ("a <!-- x --> @you [l](u)", "a <!-- x --> @you [l](u)"),  # verbatim, nothing rendered
    ("", "  "),                          # an empty span cannot be written: spaces
])
def test_code_span_shows_the_text(text: str, shown: str) -> None:
    span = markdown.code(text)
    assert "\n" not in span and "\r" not in span
    assert _span_content(span) == shown


def test_code_span_in_a_table_escapes_the_pipe() -> None:
    assert markdown.code("a|b", table=True) == "`a\\|b`"
    assert markdown.code("a|b") == "`a|b`"


@pytest.mark.parametrize(("text", "expected"), [
    ("a|b", "a\\|b"),
    ("<img src=x>", "&lt;img src=x&gt;"),
    ("@org/team", "@&#8203;org/team"),
    ("[x](https://evil)", "\\[x\\](https:&#8203;//evil)"),
    # GitHub links these by itself: a bare URL, an issue reference (it notifies the issue)
    ("https://evil.example/login", "https:&#8203;//evil.example/login"),
    ("HTTP://x www.evil.com WWW.x", "HTTP:&#8203;//x www&#8203;.evil.com WWW&#8203;.x"),
    ("fixes #12, GH-3 and o/r#4", "fixes #&#8203;12, GH-&#8203;3 and o/r#&#8203;4"),
    ("C# shard-#a", "C# shard-#a"),  # no reference: left as it is
    # an entity would render as the character it stands for: an @ after all
    ("&#64;you &x40; AT&T", "&amp;#&#8203;64;you &amp;x40; AT&amp;T"),
    ("*b* _i_ `c`", "\\*b\\* \\_i\\_ \\`c\\`"),
    ("two\nlines\ttab", "two lines tab"),
    ("back\\slash", "back\\\\slash"),
    ("csi\x9b2J rtl\u202etxt.exe iso\u2066x\u2069", "csi 2J rtl txt.exe iso x "),
])
def test_text(text: str, expected: str) -> None:
    assert markdown.text(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("</summary><img src=x onerror=y>", "&lt;/summary&gt;&lt;img src=x onerror=y&gt;"),
    ("a & b @you\n", "a &amp; b @&#8203;you "),
    ("https://x #5 www.y", "https:&#8203;//x #&#8203;5 www&#8203;.y"),
])
def test_html(text: str, expected: str) -> None:
    assert markdown.html(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # our sentences: what backticks mark is a code span, the rest text
    ("No `timeout-minutes`: suggest `timeout-minutes: 15`.",
     "No `timeout-minutes`: suggest `timeout-minutes: 15`."),
    ("`timeout-minutes: 5`–`15` for *all*", "`timeout-minutes: 5`–`15` for \\*all\\*"),
    ("no marks @you", "no marks @&#8203;you"),
    ("a lone ` backtick", "a lone \\` backtick"),
    # a pull request's label inside a span: a backtick of its own cannot break out
    ("`x` @you [x](https://evil) `` has been retired",
     "`x` @&#8203;you \\[x\\](https:&#8203;//evil) \\`\\` has been retired"),
    ("`a|b` <b>", "`a|b` &lt;b&gt;"),
    ("` padded `", "`  padded  `"),
])
def test_prose(text: str, expected: str) -> None:
    assert markdown.prose(text) == expected


@pytest.mark.parametrize(("path", "expected"), [
    (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
    (".github/workflows/we ird).yml", ".github/workflows/we%20ird%29.yml"),
    ("a#b?c.yml", "a%23b%3Fc.yml"),
])
def test_url_path(path: str, expected: str) -> None:
    assert markdown.url_path(path) == expected


EVIL_PATH = ".github/workflows/a` @you [x](https://evil) `\n# heading.yml"
EVIL_BRANCH = "ma`in @you"


def _result() -> dict:
    job = {"name": "j", "runtime_s": {"p10": 1, "p50": 2, "p90": 3}, "line": 3,
           "history_runs": 3, "runner": {"label": "ubuntu-latest"}}
    return {"predictor": "x",
            "workflows": [{"path": ".github/workflows/we ird).yml", "name": "W", "jobs": [job],
                           "critical_path_s": 2, "billable_s": 2}],
            "errors": [{"path": EVIL_PATH, "line": 2, "message": "invalid YAML"}],
            "history": {"branch": EVIL_BRANCH, "max_runs": 20, "workflows": 1, "notes": []}}


def test_pr_comment_paths_and_branch_cannot_break_out() -> None:
    ctx = Context(repository="octo/app", head_sha="1111111aaaaaaa", base_sha="2222222bbbbbbb")
    text = render_pr_comment(_result(), {"workflows": []}, [".github/workflows/we ird).yml"],
                             context=ctx)
    error_line = next(x for x in text.splitlines() if "invalid YAML" in x)
    span = error_line.removeprefix("> - ").removesuffix(": invalid YAML")
    assert _span_content(span) == EVIL_PATH.replace("\n", " ") + ":2"
    assert "\n# heading" not in text                       # the newline did not end the quote
    branch = re.search(r"earlier runs on (`+.*?`+)\)", text)
    assert branch and _span_content(branch.group(1)) == EVIL_BRANCH
    assert "/blob/1111111aaaaaaa/.github/workflows/we%20ird%29.yml#L3)" in text


def test_estimate_markdown_paths_cannot_break_out() -> None:
    text = render_markdown(_result())
    error_line = next(x for x in text.splitlines() if "invalid YAML" in x)
    span = error_line.removeprefix("- ").removesuffix(": invalid YAML")
    assert _span_content(span) == EVIL_PATH.replace("\n", " ") + ":2"
    assert "\n# heading" not in text
