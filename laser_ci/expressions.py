"""Static evaluation of the ``${{ ... }}`` expressions that are known before a run.

Only plain references to ``matrix.*`` and ``inputs.*`` (dotted or ``['key']`` form) are
evaluated; anything else (``github.*``, ``needs.*``, functions, operators) is left as
written, because its value only exists at run time.

A reference to a property that is not in a context is left as written too, unless the
context is a :class:`FullContext` (every property known, e.g. a static matrix): then it is
null, rendered as an empty string, as GitHub documents ("If you attempt to dereference a
nonexistent property, it will evaluate to an empty string").
"""

from __future__ import annotations

import json
import re
from typing import Any

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.DOTALL)
_REF = re.compile(
    r"^(matrix|inputs)((?:\.[A-Za-z_][A-Za-z0-9_-]*|\[\s*'[^']*'\s*\]|\[\s*\"[^\"]*\"\s*\])+)$"
)
_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[\s*'([^']*)'\s*\]|\[\s*\"([^\"]*)\"\s*\]")
_MISSING = object()


class FullContext(dict):  # type: ignore[type-arg]
    """A context whose every property is known: a property it lacks is null, not unknown."""


def has_expression(value: Any) -> bool:
    return isinstance(value, str) and "${{" in value


def to_text(value: Any) -> str:
    """How GitHub renders a value inside a string: booleans lowercase, objects as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=False, default=str)
    return str(value)


def _lookup(expr: str, context: dict[str, dict[str, Any]]) -> Any:
    m = _REF.match(expr)
    if not m:
        return _MISSING
    value: Any = context.get(m.group(1))
    if value is None:
        return _MISSING
    absent = None if isinstance(value, FullContext) else _MISSING
    for part in _PART.finditer(m.group(2)):
        key = next(g for g in part.groups() if g is not None)
        if not isinstance(value, dict):
            return absent
        # GitHub's context keys are case-insensitive.
        found = _MISSING
        for k, v in value.items():
            if str(k).lower() == key.lower():
                found = v
                break
        if found is _MISSING:
            return absent
        value = found
    return value


def evaluate_string(text: str, context: dict[str, dict[str, Any]]) -> Any:
    """Substitute known references in one string.

    A string that is exactly one known expression keeps the value's type (so
    ``runs-on: ${{ matrix.os }}`` may become a list); otherwise values are rendered as text.
    """
    if "${{" not in text:
        return text
    stripped = text.strip()
    first = EXPR.match(stripped)
    # The whole string is one expression only if the first ``${{ }}`` ends where it ends
    # (``fullmatch`` would let ``.*?`` swallow ``a }}-${{ b`` and match two expressions).
    if first and first.end() == len(stripped):
        value = _lookup(first.group(1), context)
        return text if value is _MISSING else value

    def repl(m: re.Match[str]) -> str:
        value = _lookup(m.group(1), context)
        return m.group(0) if value is _MISSING else to_text(value)

    return EXPR.sub(repl, text)


def substitute(value: Any, context: dict[str, dict[str, Any]], _depth: int = 0) -> Any:
    """Return a copy of ``value`` with known references substituted in every string."""
    if _depth > 64:
        return value
    if isinstance(value, str):
        return evaluate_string(value, context)
    if isinstance(value, dict):
        out = type(value)() if type(value) is not dict else {}
        if hasattr(value, "lines"):
            out.lines = dict(value.lines)  # type: ignore[attr-defined]
        for k, v in value.items():
            out[k] = substitute(v, context, _depth + 1)
        return out
    if isinstance(value, list):
        return [substitute(v, context, _depth + 1) for v in value]
    return value
