"""The grammar of GitHub Actions expressions: a lexer and a parser into tuples
(``("lit", value)``, ``("ctx", name)``, ``("prop", node, name)``, ``("index", node, node)``,
``("call", name, args)``, operators), cached per text (see
:mod:`laser_ci.workflows.expressions`)."""

from __future__ import annotations

import math
import re
from typing import Any

from laser_ci.workflows.values import MAX_EXPRESSION, MAX_NESTING, ExpressionError, _number_text

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
