"""Untrusted text (job and workflow names, file paths, branch names, runner labels: all from
a pull request) written into GitHub-flavoured Markdown so that it reads as itself and
nothing more: no table break, no link (nor a bare URL GitHub links by itself), image, HTML,
entity, @mention or issue reference (which notifies the issue it names), no code span or
blockquote break-out. A zero-width space (``&#8203;``) keeps a name's characters but breaks
what GitHub would recognise. Used by the PR comment (:mod:`laser_ci.report.comment`) and by ``laser-ci
estimate --format markdown`` (:mod:`laser_ci.report.render`)."""

from __future__ import annotations

import re
from urllib.parse import quote

from laser_ci.report.plain import line as _line  # controls, newlines, bidi overrides: a space

_BACKTICKS = re.compile(r"`+")
# where GitHub starts a link or reference of its own: a mention (@you), a bare URL (https://,
# www.), an issue reference (#12, GH-12, owner/repo#12)
_RECOGNISED = re.compile(r"(?<=@)|(?<=:)(?=//)|(?<=\bwww)(?=\.)|(?<=#)(?=\d)|(?<=\bgh-)(?=\d)",
                         re.IGNORECASE)


def _unrecognised(s: str) -> str:
    return _RECOGNISED.sub("&#8203;", s)


def text(s: str) -> str:
    """Inline Markdown text, in a paragraph or a table cell."""
    return _unrecognised(
        _line(s)
        .replace("&", "&amp;")  # an entity (&#64;) would render as what it stands for
        .replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("*", "\\*")
        .replace("_", "\\_")
        .replace("`", "\\`")
        .replace("[", "\\[")
        .replace("]", "\\]")
    )


def html(s: str) -> str:
    """Text inside an HTML element (``<summary>``, ``<code>``, ``<b>``)."""
    return _unrecognised(_line(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def code(s: str, *, table: bool = False) -> str:
    """An inline code span holding ``s`` verbatim: its fence is one backtick longer than the
    longest run of backticks in it (CommonMark), padded with a space where ``s`` starts or
    ends with a backtick or a space (one is stripped from each side when both are there);
    line breaks become spaces, so a span cannot end a line, a list item or a blockquote.
    Inside a span nothing is Markdown, HTML or a mention. In a table cell (``table``) a
    pipe still splits the cell unless escaped, and GitHub removes the escape there."""
    s = _line(s)
    if table:
        s = s.replace("|", "\\|")
    fence = "`" * (max((len(m) for m in _BACKTICKS.findall(s)), default=0) + 1)
    if not s or s[0] in "` " or s[-1] in "` ":
        s = f" {s} "
    return f"{fence}{s}{fence}"


_SPAN = re.compile(r"`([^`]+)`")


def prose(s: str) -> str:
    """A sentence we wrote (advice, an error, an assumption) in which backticks mark code,
    as ``Suggest `timeout-minutes: 15` ``: each marked piece a code span (:func:`code`),
    the rest :func:`text`. What came from the pull request inside it (a runner label, a
    job name) is escaped either way; a backtick of its own only moves where a span ends."""
    s = _line(s)
    out: list[str] = []
    pos = 0
    for m in _SPAN.finditer(s):
        out += [text(s[pos:m.start()]), code(m.group(1))]
        pos = m.end()
    out.append(text(s[pos:]))
    return "".join(out)


def url_path(path: str) -> str:
    """A repository path as a URL path: percent-encoded but for ``/``, so a space, ``)``,
    ``#`` or ``?`` in a file name cannot end a Markdown link or its path early."""
    return quote(path, safe="/")
