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
:func:`unknown_refs`, :func:`display_text`; and, for the serialized job text whose contract
predates this evaluator, :func:`substitute`/:func:`evaluate_string`, which replace plain
references (``matrix.os``, ``inputs['x']``) only.

Nothing here raises on bad input: an expression GitHub would reject is an :class:`Unknown`
with ``error`` set.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import product
from typing import Any

__all__ = [
    "ANY", "FALSY", "TRUTHY", "ExpressionError", "FullContext", "Unknown", "as_string",
    "as_written",
    "condition", "display_text", "equal", "evaluate", "evaluate_string", "evaluate_value",
    "has_expression", "interpolate", "is_known", "literal_string", "segments", "substitute",
    "to_text",
    "truthy", "unknown_refs", "written_text",
]

ANY, TRUTHY, FALSY = "any", "truthy", "falsy"
MAX_OPTIONS = 16  # known alternatives an Unknown keeps before it is just "any value"
MAX_PRODUCT = 64  # combinations of alternatives an operator or function is tried on
MAX_EXPRESSION = 20_000  # characters; GitHub's own limit is 21,000 for a whole value
MAX_NESTING = 100


class ExpressionError(ValueError):
    """An expression GitHub would reject (syntax, an unknown function, a bad format string)."""


class FullContext(dict):  # type: ignore[type-arg]
    """A context whose every property is known: a property it lacks is null, not unknown."""


class _Partial(dict):  # type: ignore[type-arg]
    """A context known in part: a top-level property it lacks is unknown."""

    name = ""


class _Filtered(list):  # type: ignore[type-arg]
    """The array an object filter (``.*``) makes: a property access maps over its items."""


@dataclass(frozen=True, eq=False)
class Unknown:
    """A value only known at run time.

    ``refs``: what it depends on, as written (``matrix.platform``, ``needs.plan.outputs.x``).
    ``options``: values it is known to be able to take. ``open``: whether it may also take
    other values, and of which truthiness: None (it is one of ``options``), ``"any"``,
    ``"truthy"`` or ``"falsy"``. ``text``: the source it came from (``${{ ... }}``).
    ``parts``: for a string known in part, its pieces: literal strings and Unknowns.
    ``error``: why GitHub would reject the expression, when it would.
    """

    refs: tuple[str, ...] = ()
    options: tuple[Any, ...] = ()
    open: str | None = ANY
    text: str = ""
    parts: tuple[Any, ...] = ()
    error: str | None = None


# --- values ---------------------------------------------------------------------------------


def has_expression(value: Any) -> bool:
    return isinstance(value, str) and "${{" in value


def is_known(value: Any) -> bool:
    """True when ``value`` holds no :class:`Unknown` anywhere."""
    return not any(True for _ in _unknowns(value))


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "string"


def truthy(v: Any) -> bool:
    """GitHub's truthiness of a known value."""
    if isinstance(v, float) and math.isnan(v):
        return False
    if isinstance(v, (list, dict)):
        return True
    return v not in (None, False, 0, "")


def _number_text(x: float | int) -> str:
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return repr(x)


def to_text(value: Any) -> str:
    """How a value is written into a string: null empty, booleans lowercase, integral numbers
    without decimals, arrays and objects as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=False, default=str)
    if isinstance(value, Unknown):
        return value.text
    return str(value)


def as_string(value: Any) -> str:
    """A value converted to a string inside an expression, as GitHub converts it
    (``EvaluationResult.ConvertToString`` in github.com/actions/runner): null empty, booleans
    lowercase, numbers in .NET's ``G15`` format (``1E+15``, ``0.3``), arrays ``Array`` and
    objects ``Object``. What ``format()``, ``join()``, the string tests and a ``${{ }}``
    inside a longer string write; :func:`to_text` is for showing values as data."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _g15(_float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return "Array"
    if isinstance(value, Mapping):
        return "Object"
    return to_text(value)


def _float(x: int | float) -> float:
    """``x`` as a double, as GitHub holds every number: an integer too large is infinite."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _g15(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return "0" if x == 0 else format(x, ".15G")


def _to_number(v: Any) -> float:
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return _float(v)
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return 0.0
        return _parse_number(s)
    return math.nan


_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _parse_number(s: str) -> float:
    sign = -1.0 if s.startswith("-") else 1.0
    body = s[1:] if s[:1] in "+-" else s
    low = body.lower()
    try:
        if low.startswith("0x"):
            return sign * _float(int(body[2:], 16))
        if low.startswith("0o"):
            return sign * _float(int(body[2:], 8))
    except ValueError:
        return math.nan
    if body == "Infinity":
        return sign * math.inf
    if body == "NaN":
        return math.nan
    return float(s) if _NUMBER.fullmatch(s) else math.nan


def _same(a: Any, b: Any) -> bool:
    """Identical values (same kind, same value): for keeping options distinct."""
    if _kind(a) != _kind(b):
        return False
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def equal(a: Any, b: Any) -> bool:
    """GitHub's ``a == b``: strings case-insensitively, other kinds compared as numbers
    (``'3.9' == 3.9``, ``true == 1``, ``null == 0``); arrays and objects only to themselves."""
    ka, kb = _kind(a), _kind(b)
    if ka == kb:
        if ka == "null":
            return True
        if ka == "string":
            return str(a).casefold() == str(b).casefold()
        if ka in ("array", "object"):
            return a is b
        if ka == "number":
            return _float(a) == _float(b)
        return bool(a == b)
    return _to_number(a) == _to_number(b)


def _compare(op: str, a: Any, b: Any) -> bool:
    if op == "==":
        return equal(a, b)
    if op == "!=":
        return not equal(a, b)
    ka, kb = _kind(a), _kind(b)
    x: Any
    y: Any
    if ka == kb == "string":
        x, y = str(a).casefold(), str(b).casefold()
    elif ka in ("array", "object") or kb in ("array", "object"):
        return False
    else:
        x, y = _to_number(a), _to_number(b)
    if op == "<":
        return bool(x < y)
    if op == "<=":
        return bool(x <= y)
    if op == ">":
        return bool(x > y)
    return bool(x >= y)


def _to_json(value: Any, indent: str = "") -> str:
    """``toJSON``: GitHub's layout (two-space indent, ``"key": value``), integral numbers
    without decimals."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(str(k))}: {_to_json(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + _to_json(v, inner) for v in value) + "\n" + indent + "]"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return json.dumps(_number_text(value))
        return _number_text(0 if value == 0 else value)
    return json.dumps(str(value), ensure_ascii=False)


# --- lexer and parser -----------------------------------------------------------------------

_TOKEN = re.compile(
    r"(?P<str>'(?:[^']|'')*')"
    r"|(?P<num>[+-]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
    r"|Infinity)(?![A-Za-z0-9_]))"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,*])"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_-]*)"
)


def _lex(text: str) -> list[tuple[str, str]]:
    """Tokens as ``(kind, text)``: kind is ``str``, ``num``, ``id`` or the operator itself."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _TOKEN.match(text, pos)
        if not m:
            raise ExpressionError(f"unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        tok = m.group(kind)
        after_value = bool(tokens) and (tokens[-1][0] in ("id", "str", "num")
                                        or tokens[-1][0] in (")", "]"))
        if kind == "num" and tok.startswith(".") and after_value:
            tokens.append((".", "."))  # `a.5`: a property access, not the number .5
            pos += 1
            continue
        if kind == "num" and tok[0] in "+-" and after_value:
            raise ExpressionError(f"unexpected {tok[0]!r}")  # GitHub has no + or - operator
        tokens.append((tok if kind == "op" else kind, tok))
        pos = m.end()
    return tokens


class _Parser:
    """Recursive descent over GitHub's grammar, to a small tuple AST."""

    def __init__(self, text: str) -> None:
        if len(text) > MAX_EXPRESSION:
            raise ExpressionError("expression too long")
        self.tokens = _lex(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def take(self, kind: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise ExpressionError("unexpected end of expression")
        tok = self.tokens[self.i]
        if kind is not None and tok[0] != kind:
            raise ExpressionError(f"expected {kind!r}, found {tok[1]!r}")
        self.i += 1
        return tok

    def parse(self) -> tuple[Any, ...]:
        if not self.tokens:
            return ("lit", None)  # `${{ }}` is null
        node = self.or_()
        if self.i != len(self.tokens):
            raise ExpressionError(f"unexpected {self.tokens[self.i][1]!r}")
        return node

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ExpressionError("expression nests too deeply")

    def or_(self) -> tuple[Any, ...]:
        self.nest()
        node = self.and_()
        while self.peek() == "||":
            self.take()
            node = ("or", node, self.and_())
        self.depth -= 1
        return node

    def and_(self) -> tuple[Any, ...]:
        node = self.eq()
        while self.peek() == "&&":
            self.take()
            node = ("and", node, self.eq())
        return node

    def eq(self) -> tuple[Any, ...]:
        node = self.rel()
        while self.peek() in ("==", "!="):
            op = self.take()[0]
            node = ("cmp", op, node, self.rel())
        return node

    def rel(self) -> tuple[Any, ...]:
        node = self.unary()
        while self.peek() in ("<", "<=", ">", ">="):
            op = self.take()[0]
            node = ("cmp", op, node, self.unary())
        return node

    def unary(self) -> tuple[Any, ...]:
        if self.peek() == "!":
            self.take()
            self.nest()
            node = ("not", self.unary())
            self.depth -= 1
            return node
        return self.postfix()

    def postfix(self) -> tuple[Any, ...]:
        node = self.primary()
        while self.peek() in (".", "["):
            if self.take()[0] == ".":
                kind, name = self.take()
                if kind == "*":
                    node = ("star", node)
                elif kind == "id":
                    node = ("prop", node, name)
                else:
                    raise ExpressionError(f"expected a property name, found {name!r}")
            else:
                if self.peek() == "*":
                    self.take()
                    node = ("star", node)
                else:
                    node = ("index", node, self.or_())
                self.take("]")
        return node

    def primary(self) -> tuple[Any, ...]:
        kind, text = self.take()
        if kind == "str":
            return ("lit", text[1:-1].replace("''", "'"))
        if kind == "num":
            return ("lit", _literal_number(text))
        if kind == "(":
            node = self.or_()
            self.take(")")
            return node
        if kind != "id":
            raise ExpressionError(f"unexpected {text!r}")
        low = text.lower()
        if self.peek() == "(":
            self.take()
            args: list[tuple[Any, ...]] = []
            while self.peek() != ")":
                args.append(self.or_())
                if self.peek() == ",":
                    self.take()
                elif self.peek() != ")":
                    raise ExpressionError("expected ',' or ')' in a function call")
            self.take(")")
            return ("call", low, text, tuple(args))
        if low in ("true", "false"):
            return ("lit", low == "true")
        if low == "null":
            return ("lit", None)
        if low == "nan":
            return ("lit", math.nan)
        if low == "infinity":
            return ("lit", math.inf)
        return ("name", text)


def _literal_number(text: str) -> int | float:
    low = text.lower().lstrip("+-")
    sign = -1 if text.startswith("-") else 1
    if low.startswith("0x"):
        return sign * int(low[2:], 16)
    if low.startswith("0o"):
        return sign * int(low[2:], 8)
    if low == "infinity":
        return sign * math.inf
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    return float(text)


_PARSED: dict[str, tuple[Any, ...] | ExpressionError] = {}


def _parse(text: str) -> tuple[Any, ...]:
    """The AST of one expression (cached); raises :class:`ExpressionError`."""
    hit = _PARSED.get(text)
    if hit is None:
        try:
            hit = _Parser(text).parse()
        except ExpressionError as exc:
            hit = exc
        except (RecursionError, ValueError) as exc:
            hit = ExpressionError(f"unreadable expression ({type(exc).__name__})")
        if len(_PARSED) > 20_000:
            _PARSED.clear()
        _PARSED[text] = hit
    if isinstance(hit, ExpressionError):
        raise hit
    return hit


def _path(node: tuple[Any, ...]) -> str | None:
    """``matrix.os``, ``inputs['x']``, ``fruits.*.name``: a node that only walks a context."""
    kind = node[0]
    if kind == "name":
        return str(node[1])
    if kind == "prop":
        base = _path(node[1])
        return None if base is None else f"{base}.{node[2]}"
    if kind == "star":
        base = _path(node[1])
        return None if base is None else f"{base}.*"
    if kind == "index" and node[2][0] == "lit" and isinstance(node[2][1], (str, int, float)):
        base = _path(node[1])
        key = node[2][1]
        return None if base is None else f"{base}[{key!r}]" if isinstance(key, str) else (
            f"{base}[{_number_text(key)}]")
    return None


def _uses_status(node: Any) -> bool:
    if not isinstance(node, tuple) or not node:
        return False
    if node[0] == "call" and node[1] in ("success", "failure", "always", "cancelled"):
        return True
    return any(_uses_status(x) for x in node[1:] if isinstance(x, tuple)) or (
        node[0] == "call" and any(_uses_status(a) for a in node[3]))


# --- unknown values -------------------------------------------------------------------------


def _alternatives(v: Any) -> tuple[list[Any], str | None]:
    """The known values ``v`` may take and the truthiness of the others it may take."""
    if isinstance(v, Unknown):
        return list(v.options), v.open
    return [v], None


def _refs(*values: Any) -> tuple[str, ...]:
    out: list[str] = []
    for v in values:
        for u in _unknowns(v):
            out.extend(u.refs)
    return tuple(dict.fromkeys(out))


def _unknowns(value: Any, depth: int = 0) -> Iterator[Unknown]:
    if depth > 64:
        return
    if isinstance(value, Unknown):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _unknowns(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _unknowns(v, depth + 1)


def _merge_open(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None or a == b:
        return a
    return ANY


def _combine(values: Sequence[Any], open_: str | None, refs: tuple[str, ...],
             error: str | None = None) -> Any:
    """One value when ``values`` hold a single known option and nothing else is possible;
    else an :class:`Unknown`."""
    options: list[Any] = []
    for v in values:
        if not any(_same(v, o) for o in options):
            options.append(v)
    if len(options) > MAX_OPTIONS:
        options, open_ = [], ANY
    if open_ is None and len(options) == 1 and error is None:
        return options[0]
    return Unknown(refs=refs, options=tuple(options), open=open_, error=error)


def _truth_alternatives(v: Any) -> tuple[bool, bool]:
    """(may be truthy, may be falsy)."""
    values, open_ = _alternatives(v)
    may_t = any(truthy(x) for x in values) or open_ in (ANY, TRUTHY)
    may_f = any(not truthy(x) for x in values) or open_ in (ANY, FALSY)
    return may_t, may_f


def _lift(fn: Callable[..., Any], args: Sequence[Any], open_result: str | None = ANY, *,
          boolean: bool = False) -> Any:
    """``fn`` over every combination of the known alternatives of ``args``. When some
    argument may be another value, so may the result: of truthiness ``open_result``, or, for
    a ``boolean`` function, true or false."""
    alts = [_alternatives(a) for a in args]
    refs = _refs(*args)
    is_open = any(o is not None for _, o in alts)
    count = 1
    for vals, _ in alts:
        count *= len(vals)
    results: list[Any] = []
    if count <= MAX_PRODUCT:
        for combo in product(*(vals for vals, _ in alts)):
            try:
                results.append(fn(*combo))
            except ExpressionError as exc:
                return Unknown(refs=refs, open=ANY, error=str(exc))
    else:
        is_open = True
    if boolean:
        if is_open:
            results += [True, False]
        return _combine(results, None, refs)
    return _combine(results, open_result if is_open else None, refs)


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
