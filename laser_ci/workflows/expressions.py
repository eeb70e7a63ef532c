"""GitHub Actions expressions (``${{ ... }}``), evaluated with what is known before a run.

The one evaluator of the project: a lexer and parser for GitHub's grammar and an evaluator
over the contexts known before a run. Everything else (``needs.*`` outputs, ``secrets``,
``steps``, most of ``github``, a matrix computed at run time) is an explicit
:class:`Unknown` that propagates through operators and functions, so a caller can tell a
value GitHub will compute from one only the run knows, and say which references it
depends on.

Grammar and semantics follow GitHub's documentation ("Evaluate expressions in workflows
and actions"):

- literals: ``null``, ``true``/``false``, numbers in any JSON form plus hex (``0xff``),
  octal (``0o10``), ``NaN`` and ``Infinity``, strings in single quotes (``''`` escapes one);
- operators, loosest first: ``||``, ``&&``, ``==``/``!=``, ``<``/``<=``/``>``/``>=``, ``!``,
  then property access ``.name``, index ``[expr]`` and the object filter ``.*``;
  ``&&`` and ``||`` return one of their operands, not a boolean;
- falsy values: ``false``, ``0``, ``-0``, ``''``, ``null`` and ``NaN``; everything else,
  arrays and objects included, is truthy;
- loose equality: values of different types are compared as numbers (``null`` is 0,
  ``true`` 1, a string is parsed as a number, ``''`` is 0, anything else NaN, arrays and
  objects NaN), strings case-insensitively, arrays and objects only by identity; NaN
  equals nothing;
- functions (case-insensitive names): ``contains``, ``startsWith``, ``endsWith``,
  ``format`` (``{0}``; ``{{`` and ``}}`` escape a brace), ``join``, ``toJSON`` (indented by
  two spaces), ``fromJSON``, ``case``, ``hashFiles`` (run time: unknown) and the status
  functions ``always()`` (true), ``cancelled()`` (false: a run is predicted as it runs when
  nobody cancels it), ``success()`` and ``failure()`` (as given by the caller; unknown by
  default);
- context names and property names are case-insensitive; a property a value lacks is
  ``null`` (``''`` in a string), except in a context only known in part (a plain ``dict``:
  the property is unknown) - a :class:`FullContext` is known in full.

Rendering (:func:`to_text`): ``null`` is ``''``, booleans lowercase, integral numbers
without decimals; arrays and objects are written as compact JSON (GitHub refuses to put an
array or object into a string, so this only matters for text we show).

Public functions: :func:`evaluate` (one expression), :func:`interpolate` (a YAML string
with ``${{ }}`` parts), :func:`evaluate_value` (a whole YAML value), :func:`condition` (an
``if:``), :func:`as_written` (an evaluated value with its unknown parts as written),
:func:`unknown_refs`, :func:`display_text`. Values and :class:`Unknown` live in
:mod:`values`, the grammar in :mod:`grammar`, plain-reference substitution in
:mod:`references`. Nothing here raises on bad input: an expression GitHub would reject is
an :class:`Unknown` with ``error`` set.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from laser_ci.workflows.grammar import _parse, _path, _uses_status
from laser_ci.workflows.values import (
    ANY,
    FALSY,
    TRUTHY,
    ExpressionError,
    FullContext,
    Unknown,
    _alternatives,
    _combine,
    _compare,
    _Filtered,
    _lift,
    _merge_open,
    _Partial,
    _refs,
    _to_json,
    _to_number,
    _truth_alternatives,
    as_string,
    equal,
    has_expression,
    is_known,
    to_text,
    truthy,
)

__all__ = [
    "ANY", "FALSY", "TRUTHY", "ExpressionError", "FullContext", "Unknown", "as_string",
    "as_written",
    "condition", "display_text", "equal", "evaluate", "evaluate_value",
    "has_expression", "interpolate", "is_known", "literal_string", "segments",
    "to_text",
    "truthy", "unknown_refs", "written_text",
]

# --- evaluation -----------------------------------------------------------------------------

_STATUS_DEFAULT: dict[str, Any] = {
    "always": True,
    "cancelled": False,
    "success": Unknown(refs=("success()",), options=(True, False), open=None),
    "failure": Unknown(refs=("failure()",), options=(True, False), open=None),
}


class _Evaluator:
    def __init__(self, contexts: Mapping[str, Any], status: Mapping[str, Any] | None) -> None:
        self.contexts = {str(k).lower(): v for k, v in contexts.items()}
        self.status = {**_STATUS_DEFAULT, **(status or {})}
        self.partial: dict[str, _Partial] = {}  # one object per context: `x == x` holds

    def eval(self, node: tuple[Any, ...]) -> Any:
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "name":
            name = str(node[1])
            if name.lower() not in self.contexts:
                return Unknown(refs=(name,))
            value = self.contexts[name.lower()]
            if isinstance(value, dict) and not isinstance(value, (FullContext, _Partial)):
                if name.lower() not in self.partial:
                    self.partial[name.lower()] = _Partial(value)
                    self.partial[name.lower()].name = name
                return self.partial[name.lower()]
            return value
        if kind == "prop":
            return self.access(node, self.eval(node[1]), node[2])
        if kind == "index":
            key = self.eval(node[2])
            if isinstance(key, Unknown):
                obj = self.eval(node[1])
                return _lift(lambda o, k: _index(o, k), [obj, key])
            return self.access(node, self.eval(node[1]), key, index=True)
        if kind == "star":
            obj = self.eval(node[1])
            if isinstance(obj, Unknown):
                return self.unknown_path(node, obj)
            return _star(obj)
        if kind == "not":
            v = self.eval(node[1])
            if not isinstance(v, Unknown):
                return not truthy(v)
            may_t, may_f = _truth_alternatives(v)
            return _combine([x for x, ok in ((True, may_f), (False, may_t)) if ok], None, v.refs)
        if kind in ("and", "or"):
            return self.logic(kind, self.eval(node[1]), self.eval(node[2]))
        if kind == "cmp":
            op = node[1]
            a, b = self.eval(node[2]), self.eval(node[3])
            if isinstance(a, Unknown) or isinstance(b, Unknown):
                return _lift(lambda x, y: _compare(op, x, y), [a, b], boolean=True)
            return _compare(op, a, b)
        if kind == "call":
            return self.call(node)
        raise ExpressionError(f"unknown node {kind}")

    def unknown_path(self, node: tuple[Any, ...], obj: Unknown) -> Unknown:
        path = _path(node)
        return Unknown(refs=(path,) if path else obj.refs)

    def access(self, node: tuple[Any, ...], obj: Any, key: Any, index: bool = False) -> Any:
        if isinstance(obj, Unknown):
            if obj.options and obj.open is None:
                return _lift(lambda o: _index(o, key) if index else _prop(o, key), [obj])
            return self.unknown_path(node, obj)
        if isinstance(obj, _Partial):
            found = _lookup(obj, to_text(key) if index else key)
            if found is _MISSING:
                path = _path(node)
                return Unknown(refs=(path,) if path else ())
            return found
        return _index(obj, key) if index else _prop(obj, key)

    def logic(self, op: str, a: Any, b: Any) -> Any:
        if not isinstance(a, Unknown):
            if op == "and":
                return b if truthy(a) else a
            return a if truthy(a) else b
        may_t, may_f = _truth_alternatives(a)
        values, open_ = _alternatives(a)
        keep_truthy = op == "or"
        kept = [v for v in values if truthy(v) == keep_truthy]
        kept_open = (open_ if open_ in (ANY, TRUTHY if keep_truthy else FALSY) else None)
        if kept_open == ANY:
            kept_open = TRUTHY if keep_truthy else FALSY
        if (may_f if keep_truthy else may_t):
            b_values, b_open = _alternatives(b)
            kept += b_values
            kept_open = _merge_open(kept_open, b_open)
        return _combine(kept, kept_open, _refs(a, b))

    def call(self, node: tuple[Any, ...]) -> Any:
        name, written, arg_nodes = node[1], node[2], node[3]
        if name in self.status:
            if arg_nodes:
                raise ExpressionError(f"{written}() takes no arguments")
            return self.status[name]
        if name == "hashfiles":
            return Unknown(refs=(f"{written}()",), open=ANY)
        if name == "case":
            return self.case(arg_nodes)
        args = [_opaque(self.eval(a)) for a in arg_nodes]
        fn = _FUNCTIONS.get(name)
        if fn is None:
            raise ExpressionError(f"unknown function {written}()")
        lo, hi = _ARITY[name]
        if not lo <= len(args) <= hi:
            raise ExpressionError(f"{written}() takes {lo}" + (f" to {hi}" if hi != lo else "")
                                  + f" arguments, not {len(args)}")
        if not any(isinstance(a, Unknown) for a in args):
            return fn(*args)
        if name == "format" and not isinstance(args[0], Unknown):
            return _format_parts(args)
        if name in ("tojson",):
            return Unknown(refs=_refs(*args), open=TRUTHY)
        return _lift(fn, args, boolean=name in _BOOLEAN_FUNCTIONS)

    def case(self, arg_nodes: Sequence[tuple[Any, ...]]) -> Any:
        if len(arg_nodes) < 3 or len(arg_nodes) % 2 == 0:
            raise ExpressionError("case() takes pairs of a condition and a value, then a default")
        pending: list[Any] = []  # values reachable when earlier conditions were unknown
        pending_open: str | None = None
        refs: list[str] = []
        for i in range(0, len(arg_nodes) - 1, 2):
            cond = self.eval(arg_nodes[i])
            if not isinstance(cond, Unknown):
                if truthy(cond):
                    value = self.eval(arg_nodes[i + 1])
                    if not pending:
                        return value
                    vals, op = _alternatives(value)
                    return _combine(pending + vals, _merge_open(pending_open, op),
                                    tuple(dict.fromkeys(refs + list(_refs(value)))))
                continue
            refs.extend(cond.refs)
            vals, op = _alternatives(self.eval(arg_nodes[i + 1]))
            pending += vals
            pending_open = _merge_open(pending_open, op)
        default = self.eval(arg_nodes[-1])
        if not pending and pending_open is None:
            return default
        vals, op = _alternatives(default)
        return _combine(pending + vals, _merge_open(pending_open, op),
                        tuple(dict.fromkeys(refs + list(_refs(default)))))


_MISSING = object()


def _opaque(value: Any) -> Any:
    """A value as a function sees it whole: unknown when only known in part (a context
    known in part, a structure holding an unknown)."""
    if isinstance(value, Unknown):
        return value
    if isinstance(value, _Partial):
        return Unknown(refs=(value.name or "a context known only in part",))
    if isinstance(value, (dict, list)) and not is_known(value):
        return Unknown(refs=_refs(value))
    return value


def _lookup(obj: Mapping[str, Any], key: Any) -> Any:
    """A property of an object, case-insensitively; ``_MISSING`` when absent."""
    k = str(key).lower() if not isinstance(key, str) else key.lower()
    for name, value in obj.items():
        if str(name).lower() == k:
            return value
    return _MISSING


def _prop(obj: Any, name: Any) -> Any:
    if isinstance(obj, _Filtered):
        out = _Filtered()
        for item in obj:
            v = _prop(item, name)
            if isinstance(v, _Filtered):
                out.extend(v)
            elif v is not None:
                out.append(v)
        return out
    if isinstance(obj, dict):
        found = _lookup(obj, name)
        return None if found is _MISSING else found
    return None


def _index(obj: Any, key: Any) -> Any:
    if isinstance(obj, _Filtered):
        out = _Filtered()
        for item in obj:
            v = _index(item, key)
            if v is not None:
                out.append(v)
        return out
    if isinstance(obj, dict):
        found = _lookup(obj, to_text(key))
        return None if found is _MISSING else found
    if isinstance(obj, list):
        if isinstance(key, (list, dict)):
            return None
        i = _to_number(key)
        if math.isnan(i) or math.isinf(i) or i < 0:
            return None
        i = math.floor(i)
        return obj[i] if i < len(obj) else None
    return None


def _star(obj: Any) -> _Filtered:
    if isinstance(obj, _Filtered):
        out = _Filtered()
        for item in obj:
            out.extend(_star(item))
        return out
    if isinstance(obj, dict):
        return _Filtered(obj.values())
    if isinstance(obj, list):
        return _Filtered(obj)
    return _Filtered()


def _format(fmt: Any, *args: Any) -> str:
    pieces = _format_pieces(as_string(fmt), len(args))
    return "".join(p if isinstance(p, str) else as_string(args[p]) for p in pieces)


def _format_pieces(fmt: str, n_args: int) -> list[str | int]:
    """A format string as literal text and argument indexes; raises on what GitHub rejects."""
    out: list[str | int] = []
    literal: list[str] = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c == "{":
            if fmt.startswith("{{", i):
                literal.append("{")
                i += 2
                continue
            end = fmt.find("}", i)
            digits = fmt[i + 1:end] if end > 0 else ""
            if not digits.isdigit():
                raise ExpressionError(f"format(): invalid format string {fmt!r}")
            index = int(digits)
            if index >= n_args:
                raise ExpressionError(f"format(): {{{index}}} has no argument")
            out.append("".join(literal))
            literal = []
            out.append(index)
            i = end + 1
            continue
        if c == "}":
            if fmt.startswith("}}", i):
                literal.append("}")
                i += 2
                continue
            raise ExpressionError(f"format(): invalid format string {fmt!r}")
        literal.append(c)
        i += 1
    out.append("".join(literal))
    return [p for p in out if p != ""]


def _format_parts(args: Sequence[Any]) -> Any:
    """``format`` with a known format string and unknown arguments: a string known in part."""
    try:
        pieces = _format_pieces(as_string(args[0]), len(args) - 1)
    except ExpressionError as exc:
        return Unknown(refs=_refs(*args), error=str(exc))
    parts: list[Any] = []
    for p in pieces:
        parts.append(p if isinstance(p, str) else _piece(args[p + 1]))
    return _string_of(parts, _refs(*args), text="")


def _join(value: Any, sep: Any = ",") -> str:
    if isinstance(value, list):
        return as_string(sep).join(as_string(v) for v in value)
    return as_string(value)


def _from_json(value: Any) -> Any:
    try:
        return json.loads(to_text(value))
    except (ValueError, RecursionError) as exc:
        raise ExpressionError(f"fromJSON(): not JSON ({type(exc).__name__})") from None


def _text_test(test: Callable[[str, str], bool]) -> Callable[[Any, Any], bool]:
    return lambda a, b: test(as_string(a).casefold(), as_string(b).casefold())


def _contains(search: Any, item: Any) -> bool:
    if isinstance(search, list):
        return any(equal(x, item) for x in search)
    return as_string(item).casefold() in as_string(search).casefold()


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "contains": _contains,
    "startswith": _text_test(lambda a, b: a.startswith(b)),
    "endswith": _text_test(lambda a, b: a.endswith(b)),
    "format": _format,
    "join": _join,
    "tojson": lambda v: _to_json(v),
    "fromjson": _from_json,
}
_ARITY = {"contains": (2, 2), "startswith": (2, 2), "endswith": (2, 2), "format": (1, 10_000),
          "join": (1, 2), "tojson": (1, 1), "fromjson": (1, 1)}
_BOOLEAN_FUNCTIONS = ("contains", "startswith", "endswith")


def _plain(value: Any) -> Any:
    """A result without the evaluator's internal types."""
    if isinstance(value, _Filtered):
        return [_plain(v) for v in value]
    if isinstance(value, _Partial):
        return {k: v for k, v in value.items()}
    return value


def evaluate(expr: str, contexts: Mapping[str, Any] | None = None, *,
             status: Mapping[str, Any] | None = None) -> Any:
    """The value of one expression (the text inside ``${{ }}``), or an :class:`Unknown`.

    ``contexts``: context name -> value; a ``dict`` is known in part (a top-level property
    it lacks is unknown), a :class:`FullContext` in full, an :class:`Unknown` not at all; a
    context not given is unknown. ``status``: results of ``success()``/``failure()``/...
    """
    text = expr.strip()
    written = f"${{{{ {text} }}}}"
    try:
        value = _Evaluator(contexts or {}, status).eval(_parse(text))
    except ExpressionError as exc:
        return Unknown(refs=(written,), text=written, error=str(exc))
    except RecursionError:
        return Unknown(refs=(written,), text=written, error="expression nests too deeply")
    except Exception as exc:  # noqa: BLE001 - the contract is to never raise
        return Unknown(refs=(written,), text=written, error=f"unreadable ({type(exc).__name__})")
    value = _opaque(value)  # a context known in part is not known as a whole
    if isinstance(value, Unknown):
        return value if value.text else replace(value, text=written)
    return _plain(value)


# --- strings with ${{ }} parts --------------------------------------------------------------


def literal_string(text: str) -> str | None:
    """The literal a string that is exactly one ``${{ }}`` of quoted strings stands for
    (``${{ 'Build' }}``: ``Build``; ``${{ 'it''s' }}``: ``it's``), else None. GitHub's
    reader turns such a value into that literal before anything is evaluated
    (``TemplateReader.ParseScalar``), so a job named so still gets its matrix suffix."""
    pieces = segments(text)
    if len(pieces) != 1 or not pieces[0][0]:
        return None
    inner = pieces[0][2].strip()
    if not inner.startswith("'"):
        return None
    out: list[str] = []
    quoted = False
    for i, c in enumerate(inner):
        if c == "'":
            quoted = not quoted
            if quoted and i != 0:
                out.append(c)
        elif not quoted:
            return None
        else:
            out.append(c)
    return None if quoted else "".join(out)


@lru_cache(maxsize=8192)
def segments(text: str) -> tuple[tuple[bool, str, str], ...]:
    """``text`` as ``(is_expression, source, inner)`` pieces. An expression ends at the first
    ``}}`` outside a single-quoted string; an unclosed ``${{`` is literal text. Cached: the
    same strings recur in every matrix instance and every caller of a reusable workflow."""
    out: list[tuple[bool, str, str]] = []
    pos = 0
    while True:
        start = text.find("${{", pos)
        if start < 0:
            break
        i, end = start + 3, -1
        close = text.find("}}", i)
        while close >= 0:  # the next `}}` ends it unless a quote opens before it
            quote = text.find("'", i, close)
            if quote < 0:
                end = close
                break
            i = text.find("'", quote + 1) + 1  # past the quoted string; 0: never closed
            if i == 0:
                break
            if close < i:  # that `}}` was quoted: the next one (each stretch scanned once)
                close = text.find("}}", i)
        if end < 0:
            break
        if start > pos:
            out.append((False, text[pos:start], text[pos:start]))
        out.append((True, text[start:end + 2], text[start + 3:end]))
        pos = end + 2
    if pos < len(text):
        out.append((False, text[pos:], text[pos:]))
    return tuple(out)


def _piece(value: Any) -> Any:
    """A value put into a string: its text, or an Unknown when its text is not known."""
    value = _opaque(value)
    if not isinstance(value, Unknown):
        return as_string(value)
    if value.parts:
        return value
    values, open_ = _alternatives(value)
    texts = {as_string(v) for v in values}
    # Every known value renders the same and any other is a falsy value of a run-time
    # reference: taken as empty (null and '' render empty; `x && ''` is written to print
    # nothing whatever x is).
    if len(texts) == 1 and (open_ is None or (open_ == FALSY and texts == {""})):
        return texts.pop()
    return value


def _string_of(parts: Sequence[Any], refs: tuple[str, ...], text: str) -> Any:
    """A string from pieces; an :class:`Unknown` with ``parts`` when some are unknown."""
    merged: list[Any] = []
    for p in parts:
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        elif p != "":
            merged.append(p)
    if all(isinstance(p, str) for p in merged):
        return "".join(merged)
    literal = any(isinstance(p, str) and p for p in merged)
    return Unknown(refs=refs, open=TRUTHY if literal else ANY, text=text, parts=tuple(merged))


def interpolate(text: str, contexts: Mapping[str, Any] | None = None, *,
                status: Mapping[str, Any] | None = None) -> Any:
    """The value of a YAML string that may hold ``${{ }}`` expressions.

    A string that is exactly one expression keeps the value's type (so ``runs-on:
    ${{ matrix.os }}`` may be a list); otherwise the parts are written into one string,
    spaces and line breaks around a single expression included: GitHub's reader makes
    ``' ${{ x }}'`` and a block scalar's ``${{ x }}\n`` a ``format()`` of it
    (``TemplateReader.ParseScalar``). Unknown parts make an :class:`Unknown` whose
    ``parts`` hold the pieces.
    """
    if "${{" not in text:
        return text
    pieces = segments(text)
    exprs = [p for p in pieces if p[0]]
    if not exprs:
        return text
    if len(pieces) == 1:
        value = evaluate(exprs[0][2], contexts, status=status)
        return replace(value, text=text) if isinstance(value, Unknown) else value
    parts: list[Any] = []
    for is_expr, source, inner in pieces:
        if not is_expr:
            parts.append(source)
            continue
        value = evaluate(inner, contexts, status=status)
        piece = _piece(value)
        parts.append(replace(piece, text=source) if isinstance(piece, Unknown) else piece)
    return _string_of(parts, _refs(*(p for p in parts if isinstance(p, Unknown))), text)


def evaluate_value(value: Any, contexts: Mapping[str, Any] | None = None, *,
                   status: Mapping[str, Any] | None = None, _depth: int = 0) -> Any:
    """A copy of a YAML value with every string evaluated (:func:`interpolate`); parts only
    known at run time are :class:`Unknown`. Mapping keys are kept as written."""
    if _depth > 64:
        return value
    if isinstance(value, str):
        return interpolate(value, contexts, status=status) if "${{" in value else value
    if isinstance(value, list):
        return [evaluate_value(v, contexts, status=status, _depth=_depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: evaluate_value(v, contexts, status=status, _depth=_depth + 1)
                for k, v in value.items()}
    return value


def condition(value: Any, contexts: Mapping[str, Any] | None = None, *,
              status: Mapping[str, Any] | None = None) -> bool | Unknown:
    """Whether an ``if:`` lets a job or step run: True, False or an :class:`Unknown`.

    ``if:`` may omit ``${{ }}``; without a status function GitHub adds ``success() &&``.
    A ``${{ }}`` with anything around it, even a space or the line break a ``|`` or ``>``
    block scalar ends with, makes the condition a string (``format('{0}\n', false)``), so
    it holds whenever that string is not empty (actionlint#272). A missing ``if`` (None)
    is True.
    """
    if value is None:
        return True
    if isinstance(value, (bool, int, float)):
        value = to_text(value)  # a YAML `true` or `1` is read as its text (still success() &&)
    if isinstance(value, str):
        # `${{ 'x' }}` is the literal x before anything (TemplateReader.ParseScalar), and a
        # blank condition is success() (WorkflowTemplateConverter.ConvertToIfCondition)
        literal = literal_string(value)
        value = value if literal is None else literal
        value = value if value.strip() else "success()"
    if isinstance(value, Unknown):
        result: Any = value
    elif not isinstance(value, str):
        result = value
    else:
        pieces = segments(value) if "${{" in value else []
        whole = len(pieces) == 1
        if pieces and not whole:
            result = interpolate(value, contexts, status=status)  # a string: truthy if not ''
            inners = [inner for is_expr, _, inner in pieces if is_expr]
        else:
            inner = pieces[0][2] if whole else value
            result = evaluate(inner, contexts, status=status)
            inners = [inner]
        try:
            uses_status = any(_uses_status(_parse(inner.strip())) for inner in inners)
        except ExpressionError:
            uses_status = True
        if not uses_status:
            success = {**_STATUS_DEFAULT, **(status or {})}["success"]
            result = _Evaluator({}, status).logic("and", success, result)
    if not isinstance(result, Unknown):
        return truthy(result)
    may_t, may_f = _truth_alternatives(result)
    if may_t != may_f:
        return may_t
    return Unknown(refs=result.refs, options=(True, False), open=None, text=result.text,
                   error=result.error)


def string_condition(value: Any) -> str | None:
    """Why an ``if:`` is a string that GitHub takes as true, not the condition it spells:
    ``"line break"`` (one ``${{ }}`` with the line break a ``|`` or ``>`` block keeps, and
    maybe spaces, around it), ``"spaces"`` (only spaces around it, as in ``' ${{ x }}'``)
    or ``"text"`` (``${{ }}`` among other text, as in ``${{ a }} && ${{ b }}``); None for a
    condition GitHub evaluates, and for ``${{ a }}${{ b }}``, whose text may be empty."""
    if not isinstance(value, str) or "${{" not in value:
        return None
    pieces = segments(value)
    exprs = sum(1 for is_expr, _, _ in pieces if is_expr)
    around = "".join(source for is_expr, source, _ in pieces if not is_expr)
    if not exprs or not around:
        return None
    if exprs > 1 or around.strip():
        return "text"
    return "line break" if "\n" in around else "spaces"


# --- after evaluation -----------------------------------------------------------------------


def as_written(value: Any, _depth: int = 0) -> Any:
    """``value`` with each :class:`Unknown` replaced by the text it was written as."""
    if isinstance(value, Unknown):
        return value.text
    if _depth > 64:
        return value
    if isinstance(value, list):
        return [as_written(v, _depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: as_written(v, _depth + 1) for k, v in value.items()}
    return value


def unknown_refs(value: Any) -> tuple[str, ...]:
    """The run-time references ``value`` depends on, in order of appearance."""
    return _refs(value)


def display_text(value: Any, hole: str = "…") -> str:
    """Text to show for a value: known parts as GitHub renders them, each part only known at
    run time as ``hole``."""
    if isinstance(value, Unknown):
        if value.parts:
            return "".join(p if isinstance(p, str) else display_text(p, hole) for p in value.parts)
        return hole
    if isinstance(value, list):
        return ", ".join(display_text(v, hole) for v in value)
    return to_text(value)


def written_text(value: Any) -> str:
    """A string value as far as it is known: known parts rendered, the expressions of the
    unknown ones as written (``linux-${{ inputs.arch }}``)."""
    if isinstance(value, Unknown):
        if value.parts:
            return "".join(p if isinstance(p, str) else p.text for p in value.parts)
        return value.text
    return to_text(value)

