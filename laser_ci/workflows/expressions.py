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
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
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


# --- runs-on and strategy values: GitHub's grammar, with unknowns -----------------------

@dataclass(frozen=True)
class _Unknown:
    """A value that depends on something only known at run time (``inputs``, ``github``...)."""

    refs: tuple[str, ...] = ()
    options: tuple[Any, ...] = ()  # truthy values it may take, as the expression shows them
    open: bool = True  # it may also take values not in ``options``
    text: str = ""


def _refs_text(*us: _Unknown) -> str:
    refs = list(dict.fromkeys(r for u in us for r in u.refs)) or ["an expression"]
    return ", ".join(f"`{r}`" for r in refs)


_EXPR_RE = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_TOKEN_RE = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')"
    r"|(?P<num>0x[0-9a-fA-F]+|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,*])"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_-]*))"
)


def _expand(value: Any, matrix: Mapping[str, Any]) -> Any:
    """Substitute ``${{ }}`` expressions; parts that cannot be known become ``_Unknown``."""
    if isinstance(value, str):
        return _render(value, matrix) if "${{" in value else value
    if isinstance(value, list):
        return [_expand(v, matrix) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, matrix) for k, v in value.items()}
    return value


def _render(text: str, matrix: Mapping[str, Any]) -> Any:
    whole = _EXPR_RE.fullmatch(text.strip())
    if whole:
        v = _evaluate(whole.group(1), matrix)
        return replace(v, text=text.strip()) if isinstance(v, _Unknown) else v
    parts: list[str] = []
    unknown: list[_Unknown] = []
    pos = 0
    for m in _EXPR_RE.finditer(text):
        parts.append(text[pos : m.start()])
        v = _evaluate(m.group(1), matrix)
        if isinstance(v, _Unknown):
            unknown.append(v)
        else:
            parts.append(_to_str(v))
        pos = m.end()
    parts.append(text[pos:])
    if unknown:
        return _Unknown(tuple(r for u in unknown for r in u.refs), text=text)
    return "".join(parts)


def _to_str(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return str(v)


def _evaluate(expr: str, matrix: Mapping[str, Any]) -> Any:
    try:
        return _Parser(expr, matrix).parse()
    except (ValueError, IndexError, TypeError):
        return _Unknown((f"${{{{ {expr.strip()} }}}}",))


def _truthy(v: Any) -> bool:
    if isinstance(v, float) and math.isnan(v):
        return False
    return v not in (None, False, 0, "")


def _num(v: Any) -> float:
    if v is None:
        return 0.0
    if isinstance(v, (bool, int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return 0.0
        try:
            return float(int(s, 16)) if s.lower().startswith("0x") else float(s)
        except ValueError:
            return math.nan
    return math.nan


def _compare(op: str, a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        x: Any = a.casefold()
        y: Any = b.casefold()
    elif isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        if op in ("==", "!="):
            return (a is b) == (op == "==")
        return False
    else:
        x, y = _num(a), _num(b)
    return {
        "==": x == y,
        "!=": x != y,
        "<": x < y,
        "<=": x <= y,
        ">": x > y,
        ">=": x >= y,
    }[op]


class _Parser:
    """A small evaluator for GitHub Actions expressions; only ``matrix`` is known."""

    def __init__(self, text: str, matrix: Mapping[str, Any]):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN_RE.match(text, pos)
            if not m or m.end() == pos:
                raise ValueError(f"bad expression near {text[pos:]!r}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0
        self.matrix = matrix

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        tok = self.tokens[self.i]
        if expected is not None and tok[1] != expected:
            raise ValueError(f"expected {expected!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        v = self.or_()
        if self.i != len(self.tokens):
            raise ValueError("trailing tokens")
        return v

    def or_(self) -> Any:
        a = self.and_()
        while self.peek() == "||":
            self.take()
            b = self.and_()
            if isinstance(a, _Unknown):  # a's truthy values, else b
                a = _Unknown(a.refs + _refs(b), a.options + _options(b), a.open or _open(b))
            elif not _truthy(a):
                a = b
        return a

    def and_(self) -> Any:
        a = self.cmp()
        while self.peek() == "&&":
            self.take()
            b = self.cmp()
            if isinstance(a, _Unknown):  # a falsy value, else b
                a = _Unknown(a.refs + _refs(b), _options(b), _open(b))
            elif _truthy(a):
                a = b
        return a

    def cmp(self) -> Any:
        a = self.unary()
        while self.peek() in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            b = self.unary()
            if isinstance(a, _Unknown) or isinstance(b, _Unknown):
                a = _Unknown(_refs(a) + _refs(b))
            else:
                a = _compare(op, a, b)
        return a

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            v = self.unary()
            return _Unknown(v.refs) if isinstance(v, _Unknown) else not _truthy(v)
        return self.postfix()

    def postfix(self) -> Any:
        value, path = self.primary()
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                kind, name = self.take()
                if name == "*":
                    return _Unknown((f"{path}.*",))
                if kind != "id":
                    raise ValueError("expected a property name")
                key: Any = name
                path = f"{path}.{name}"
            else:
                key = self.or_()
                self.take("]")
                path = f"{path}[{key!r}]"
            value = _index(value, key, path)
        return value

    def primary(self) -> tuple[Any, str]:
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'"), text
        if kind == "num":
            return (float(int(text, 16)) if text.lower().startswith("0x") else float(text)), text
        if text == "(":
            v = self.or_()
            self.take(")")
            return v, "(...)"
        if kind != "id":
            raise ValueError(f"unexpected {text!r}")
        low = text.lower()
        if low in ("true", "false"):
            return low == "true", text
        if low == "null":
            return None, text
        if self.peek() == "(":
            self.take()
            args: list[Any] = []
            while self.peek() != ")":
                args.append(self.or_())
                if self.peek() == ",":
                    self.take()
            self.take(")")
            return _call(low, args), f"{text}()"
        if low == "matrix":
            return dict(self.matrix), "matrix"
        return _Unknown((text,)), text


def _refs(v: Any) -> tuple[str, ...]:
    return v.refs if isinstance(v, _Unknown) else ()


def _options(v: Any) -> tuple[Any, ...]:
    if isinstance(v, _Unknown):
        return v.options
    return (v,) if _truthy(v) else ()


def _open(v: Any) -> bool:
    return v.open if isinstance(v, _Unknown) else False


def _index(value: Any, key: Any, path: str) -> Any:
    if isinstance(value, _Unknown):
        return _Unknown((path,))
    if isinstance(key, _Unknown):
        return _Unknown(key.refs)
    if isinstance(value, dict):
        for k, v in value.items():
            if str(k).lower() == str(key).lower():
                return v
        if path.startswith("matrix"):
            return _Unknown((path,))  # not in this combination (or a dynamic matrix)
        return None
    if isinstance(value, list) and isinstance(key, (int, float)) and not isinstance(key, bool):
        i = int(key)
        return value[i] if 0 <= i < len(value) else None
    return None


def _call(name: str, args: list[Any]) -> Any:
    unknown = [a for a in args if isinstance(a, _Unknown)]
    if unknown:
        return _Unknown(tuple(r for u in unknown for r in u.refs))
    if name == "fromjson" and len(args) == 1 and isinstance(args[0], str):
        return json.loads(args[0])
    if name == "tojson" and len(args) == 1:
        return json.dumps(args[0])
    if name == "format" and args and isinstance(args[0], str):
        return (
            re.sub(r"\{(\d+)\}", lambda m: _to_str(args[int(m.group(1)) + 1]), args[0])
            .replace("{{", "{")
            .replace("}}", "}")
        )
    if name in ("contains", "startswith", "endswith") and len(args) == 2:
        a, b = args
        if name == "contains" and isinstance(a, list):
            return any(_compare("==", x, b) for x in a)
        a, b = _to_str(a).casefold(), _to_str(b).casefold()
        return {"contains": b in a, "startswith": a.startswith(b), "endswith": a.endswith(b)}[name]
    if name == "join" and args and isinstance(args[0], list):
        sep = _to_str(args[1]) if len(args) > 1 else ","
        return sep.join(_to_str(x) for x in args[0])
    return _Unknown((f"{name}()",))
