"""Plain references only (``matrix.os``, ``inputs['x']``): substituted in the serialized
job text, whose contract predates the evaluator (see :mod:`laser_ci.workflows.expressions`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from laser_ci.workflows.expressions import _MISSING, _lookup, segments
from laser_ci.workflows.grammar import _parse
from laser_ci.workflows.values import ExpressionError, FullContext, _unknowns, to_text

# --- plain references only: the serialized text's contract -----------------------------------


def _reference_keys(node: tuple[Any, ...]) -> tuple[str, list[str]] | None:
    """``(context, [key, ...])`` of a plain reference (``inputs['x'].y``), else None."""
    keys: list[str] = []
    while node[0] in ("prop", "index"):
        if node[0] == "prop":
            keys.append(str(node[2]))
        elif node[2][0] == "lit" and isinstance(node[2][1], str):
            keys.append(node[2][1])
        else:
            return None
        node = node[1]
    if node[0] != "name" or not keys:
        return None
    return str(node[1]), keys[::-1]


def _reference_value(inner: str, contexts: Mapping[str, Any]) -> Any:
    """The value of a plain reference to one of ``contexts`` (``matrix.os``), or ``_MISSING``
    for any other expression and for a reference whose value is not known: a property a
    context lacks is unknown, unless the context is a :class:`FullContext` (then null)."""
    try:
        ref = _reference_keys(_parse(inner.strip()))
    except ExpressionError:
        return _MISSING
    if ref is None:
        return _MISSING
    name, keys = ref
    value = next((v for k, v in contexts.items() if str(k).lower() == name.lower()), None)
    if not isinstance(value, dict):
        return _MISSING
    absent = None if isinstance(value, FullContext) else _MISSING
    for key in keys:
        if not isinstance(value, dict):
            return absent
        found = _lookup(value, key)
        if found is _MISSING:
            return absent
        value = found
    return _MISSING if any(True for _ in _unknowns(value)) else value


def evaluate_string(text: str, context: Mapping[str, Any]) -> Any:
    """Substitute the plain references of ``context`` in one string (``matrix.os``,
    ``inputs['x']``); every other expression stays as written.

    A string that is exactly one such reference keeps the value's type; otherwise values
    are written as text. This is the substitution of the serialized job text (the model's
    input contract): operators and functions are left for :func:`evaluate`.
    """
    if "${{" not in text:
        return text
    pieces = segments(text)
    exprs = [p for p in pieces if p[0]]
    if len(exprs) == 1 and len(pieces) == 1:
        value = _reference_value(exprs[0][2], context)
        return text if value is _MISSING else value
    out: list[str] = []
    for is_expr, source, inner in pieces:
        if not is_expr:
            out.append(source)
            continue
        value = _reference_value(inner, context)
        out.append(source if value is _MISSING else to_text(value))
    return "".join(out)


def substitute(value: Any, context: Mapping[str, Any], _depth: int = 0) -> Any:
    """A copy of ``value`` with :func:`evaluate_string` applied to every string."""
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
