"""Numbers as tokens: a runtime <-> fixed-length scientific-notation string codec.

A target is written as ``d.dd`` (mantissa in [1.00, 9.99]) followed by ``e``, an exponent
sign and a fixed number of exponent digits, exactly as Python's ``f"{x:.2e}"`` writes it::

    473 s  ->  4.73e+02  ->  generated tokens  4 7 3 + 0 2

Only the digits and the exponent sign are *generated*; the decimal point, the ``e`` and the
JSON skeleton around the number (:meth:`NumberCodec.skeleton`) are known in advance and are
filled in by the decoding loop without spending a forward pass on them (see
:mod:`laser_ci.predictors.decode`). Every generated token is a single character, and each is a single
token of the BPE vocabulary (digits are split by the pre-tokenizer, see
:mod:`laser_ci.text.tokenize`).

The interface follows ``regress_lm.tokenizers`` (google-deepmind/regress-lm):
``num_tokens_per_obj``, ``all_tokens()``, ``to_tokens(value)``, ``from_tokens(tokens)`` and
``possible_next_tokens(prev)``, which drives the decoding mask. Unlike regress-lm's float
tokenizers this codec rounds half-up in decimal (``9.995 -> 1.00e+01``) on the shortest repr
of the float, so exact powers of ten never go through ``log10`` (regress-lm commit c6130db).

Values outside the representable range are clamped: zero and anything below
``1.00e{min_exponent}`` become the smallest value (runtimes below one second round up to
1 s with the default range), anything above ``9.99e{max_exponent}`` (and +inf) becomes the
largest. Negative values and NaN raise :class:`ValueError`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property

DIGITS = tuple("0123456789")
SIGNS = ("+", "-")


@dataclass(frozen=True)
class NumberCodec:
    """Fixed-length scientific notation: ``mantissa_digits`` digits, ``exponent_digits`` digits.

    The defaults cover 1 s to 9.99e5 s (11.5 days) with 3 significant digits and write
    ``4.73e+02``. The exponent sign is always generated (it is a token of the output), but
    with ``min_exponent >= 0`` only ``+`` is legal there, so the decoding loop treats it as a
    known position.
    """

    mantissa_digits: int = 3
    exponent_digits: int = 2
    min_exponent: int = 0
    max_exponent: int = 5
    key: str = "runtime_s"

    def __post_init__(self) -> None:
        if self.mantissa_digits < 1 or self.exponent_digits < 1:
            raise ValueError("need at least one mantissa digit and one exponent digit")
        limit = 10**self.exponent_digits - 1
        if not -limit <= self.min_exponent <= self.max_exponent <= limit:
            raise ValueError(
                f"exponent range [{self.min_exponent}, {self.max_exponent}] does not fit "
                f"{self.exponent_digits} exponent digit(s)"
            )

    # ---- sizes and vocab ------------------------------------------------------------------

    @property
    def num_tokens_per_obj(self) -> int:
        """Generated tokens per number: mantissa digits, exponent sign, exponent digits."""
        return self.mantissa_digits + 1 + self.exponent_digits

    def all_tokens(self) -> list[str]:
        """Every token this codec can emit, sorted (digits, then signs)."""
        return sorted(set(DIGITS) | set(SIGNS))

    @cached_property
    def _exponent_strings(self) -> tuple[str, ...]:
        """Every legal exponent as sign + zero-padded digits, e.g. ``+02``."""
        return tuple(
            self._exponent_str(e) for e in range(self.min_exponent, self.max_exponent + 1)
        )

    def _exponent_str(self, e: int) -> str:
        return ("-" if e < 0 else "+") + str(abs(e)).zfill(self.exponent_digits)

    # ---- limits -----------------------------------------------------------------------------

    @property
    def min_value(self) -> float:
        """The smallest representable value, ``1.00e{min_exponent}``."""
        return float(f"1e{self.min_exponent}")

    @property
    def max_value(self) -> float:
        """The largest representable value, ``9.99e{max_exponent}``."""
        return float("9" * self.mantissa_digits + f"e{self.max_exponent - self.mantissa_digits + 1}")

    # ---- value <-> tokens ---------------------------------------------------------------------

    def to_tokens(self, value: float) -> list[str]:
        """The generated tokens of ``value``: mantissa digits, exponent sign, exponent digits."""
        mantissa, exponent = self._split(value)
        return list(mantissa) + list(self._exponent_str(exponent))

    def from_tokens(self, tokens: Sequence[str]) -> float:
        """The value of a full token sequence; raises :class:`ValueError` if it is not legal."""
        tokens = list(tokens)
        if len(tokens) != self.num_tokens_per_obj:
            raise ValueError(f"expected {self.num_tokens_per_obj} tokens, got {len(tokens)}")
        for i in range(len(tokens)):
            if tokens[i] not in self.possible_next_tokens(tokens[:i]):
                raise ValueError(f"illegal token {tokens[i]!r} at position {i} in {tokens}")
        m = self.mantissa_digits
        mantissa = tokens[0] + "." + "".join(tokens[1:m]) if m > 1 else tokens[0]
        return float(f"{mantissa}e{''.join(tokens[m:])}")

    def possible_next_tokens(self, prev: Sequence[str]) -> list[str]:
        """The legal tokens after ``prev`` (a prefix of the generated tokens), sorted.

        First mantissa digit 1-9, then any digits, then the exponent sign(s) the range allows,
        then the exponent digits that keep the exponent within [min_exponent, max_exponent].
        """
        i = len(prev)
        m = self.mantissa_digits
        if i == 0:
            return list(DIGITS[1:])
        if i < m:
            return list(DIGITS)
        if i >= self.num_tokens_per_obj:
            return []
        done = "".join(prev[m:])
        return sorted({s[len(done)] for s in self._exponent_strings if s.startswith(done)})

    # ---- value <-> string ---------------------------------------------------------------------

    def to_string(self, value: float) -> str:
        """``value`` written as the number string, e.g. ``4.73e+02``."""
        return self.tokens_to_string(self.to_tokens(value))

    def tokens_to_string(self, tokens: Sequence[str]) -> str:
        m = self.mantissa_digits
        mantissa = tokens[0] + ("." + "".join(tokens[1:m]) if m > 1 else "")
        return f"{mantissa}e{''.join(tokens[m:])}"

    def from_string(self, text: str) -> float:
        """Parse a number string written by :meth:`to_string` (strictly: same length, legal)."""
        return self.from_tokens(self.string_to_tokens(text))

    def string_to_tokens(self, text: str) -> list[str]:
        m = self.mantissa_digits
        expected_len = m + (1 if m > 1 else 0) + 2 + self.exponent_digits
        mantissa, sep, exponent = text.partition("e")
        if len(text) != expected_len or sep != "e" or (m > 1 and mantissa[1:2] != "."):
            raise ValueError(f"not a {self.pattern} number: {text!r}")
        return list(mantissa.replace(".", "")) + list(exponent)

    @property
    def pattern(self) -> str:
        """The shape of a number string, e.g. ``d.dde+dd``."""
        m = "d" + ("." + "d" * (self.mantissa_digits - 1) if self.mantissa_digits > 1 else "")
        return f"{m}e+{'d' * self.exponent_digits}"

    # ---- the output skeleton -------------------------------------------------------------------

    def skeleton(self) -> list[str | int]:
        """The whole output as pieces: ``str`` pieces are fixed, ``int`` pieces are the index of
        a generated token. For the defaults::

            ['{"runtime_s": "', 0, '.', 1, 2, 'e', 3, 4, 5, '"}']
        """
        m = self.mantissa_digits
        pieces: list[str | int] = [json.dumps({self.key: ""})[:-2]]  # '{"runtime_s": "'
        pieces.append(0)
        if m > 1:
            pieces.append(".")
            pieces.extend(range(1, m))
        pieces.append("e")
        pieces.extend(range(m, self.num_tokens_per_obj))
        pieces.append('"}')
        return pieces

    def render(self, tokens: Sequence[str]) -> str:
        """The full output text for generated ``tokens``, e.g. ``{"runtime_s": "4.73e+02"}``."""
        return "".join(p if isinstance(p, str) else tokens[p] for p in self.skeleton())

    def parse(self, text: str) -> float:
        """Parse a full output text (strict JSON with exactly the skeleton's key)."""
        obj = json.loads(text)
        if not isinstance(obj, dict) or list(obj) != [self.key] or not isinstance(obj[self.key], str):
            raise ValueError(f"not a {self.key} output: {text!r}")
        return self.from_string(obj[self.key])

    # ---- internals ------------------------------------------------------------------------------

    def _split(self, value: float) -> tuple[str, int]:
        """(mantissa digits without the point, exponent) after rounding and clamping."""
        if isinstance(value, bool):
            raise ValueError(f"not a number: {value!r}")
        if not isinstance(value, (int, float)):
            try:
                value = float(value)  # numpy scalars and the like
            except (TypeError, ValueError) as e:
                raise ValueError(f"not a number: {value!r}") from e
        if isinstance(value, int):
            try:
                value = float(value)
            except OverflowError:  # beyond the largest double: as +inf or -inf
                value = math.inf if value > 0 else -math.inf
        if math.isnan(value):
            raise ValueError("cannot encode NaN")
        if value < 0:
            raise ValueError(f"cannot encode a negative value: {value!r}")
        top = "9" * self.mantissa_digits
        if math.isinf(value):
            return top, self.max_exponent
        if value == 0:
            return "1" + "0" * (self.mantissa_digits - 1), self.min_exponent
        d = Decimal(repr(float(value)))  # shortest repr: 9.995 is 9.995, not 9.99499...
        exponent = d.adjusted()
        quantum = Decimal(1).scaleb(-(self.mantissa_digits - 1))
        mantissa = d.scaleb(-exponent).quantize(quantum, rounding=ROUND_HALF_UP)
        if mantissa >= 10:  # 9.995 -> 10.00 -> 1.00e+1
            mantissa = (mantissa / 10).quantize(quantum, rounding=ROUND_HALF_UP)
            exponent += 1
        if exponent < self.min_exponent:
            return "1" + "0" * (self.mantissa_digits - 1), self.min_exponent
        if exponent > self.max_exponent:
            return top, self.max_exponent
        digits = str(mantissa).replace(".", "")
        assert len(digits) == self.mantissa_digits and digits[0] != "0", (value, digits)
        return digits, exponent


DEFAULT_CODEC = NumberCodec()
