"""Values of GitHub Actions expressions: what an expression evaluates to (null, booleans,
numbers, strings, arrays, objects), GitHub's truthiness, loose equality and comparison,
rendering as text, and :class:`Unknown`, a value only the run knows, with what it depends
on (see :mod:`laser_ci.workflows.expressions`, the evaluator)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

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


PartialContext = _Partial
"""A value known in part, anywhere in a context (``github.event``): what it lacks is unknown."""


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
