"""Untrusted text (job and workflow names, file paths, runner labels: all from a pull
request) on a terminal or in a CI log, so that it reads as itself and nothing more: one line
each, no escape sequence (colours, cursor moves, window titles, hyperlinks), no line that a
CI runner could take for a workflow command (``::error::``), no text reordered by a
bidirectional override. Used by ``laser-ci estimate``'s table and its error lines, its JSON
(the same characters escaped) and, before its own escaping, by :mod:`laser_ci.report.markdown`."""

from __future__ import annotations

import re

# C0 and C1 controls (ESC, CSI, newlines, tabs), DEL, the Unicode line and paragraph
# separators, and the bidirectional embeddings, overrides and isolates.
_ABOVE_C0 = r"\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(rf"[\x00-\x1f{_ABOVE_C0}]")
# Less C0, which json.dumps escapes in strings (a newline outside them is its indent).
_RAW_IN_JSON = re.compile(f"[{_ABOVE_C0}]")


def line(s: str) -> str:
    """``s`` as one line of plain text: each unsafe character becomes a space."""
    return _UNSAFE.sub(" ", s)


def json_text(dumped: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with each unsafe character that
    ``json.dumps`` leaves raw (DEL, C1 controls, line separators, bidirectional controls) as
    a ``\\uXXXX`` escape: the same JSON value, safe to print (they only occur in strings)."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


def encodes(s: str, encoding: str | None) -> bool:
    """Whether ``s`` can be written to a stream in ``encoding`` as it is."""
    try:
        s.encode(encoding or "utf-8")
    except (UnicodeError, LookupError):
        return False
    return True
