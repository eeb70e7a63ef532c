"""Table tests for the number codec (in the style of regress-lm's tokenizers_test)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from laser_ci.text.numbers import DEFAULT_CODEC, NumberCodec

codec = DEFAULT_CODEC


@pytest.mark.parametrize(
    ("value", "text", "decoded"),
    [
        (473, "4.73e+02", 473.0),
        (473.4, "4.73e+02", 473.0),
        (0, "1.00e+00", 1.0),  # clamp to the smallest representable
        (0.0, "1.00e+00", 1.0),
        (0.3, "1.00e+00", 1.0),  # sub-second
        (0.999, "1.00e+00", 1.0),
        (1e-300, "1.00e+00", 1.0),
        (5e-324, "1.00e+00", 1.0),  # smallest subnormal
        (1, "1.00e+00", 1.0),
        (1.0, "1.00e+00", 1.0),
        (1.004, "1.00e+00", 1.0),
        (1.005, "1.01e+00", 1.01),  # half-up on the decimal repr
        (9.99, "9.99e+00", 9.99),
        (9.994, "9.99e+00", 9.99),
        (9.995, "1.00e+01", 10.0),  # rounds up into the next decade
        (10, "1.00e+01", 10.0),
        (10.0, "1.00e+01", 10.0),
        (99.95, "1.00e+02", 100.0),
        (100, "1.00e+02", 100.0),
        (999.5, "1.00e+03", 1000.0),
        (1000, "1.00e+03", 1000.0),
        (1000.0, "1.00e+03", 1000.0),
        (1e4, "1.00e+04", 1e4),
        (1e5, "1.00e+05", 1e5),
        (3600, "3.60e+03", 3600.0),
        (21600, "2.16e+04", 21600.0),
        (12345, "1.23e+04", 12300.0),
        (12355, "1.24e+04", 12400.0),
        (999000, "9.99e+05", 999000.0),  # the largest representable
        (999400, "9.99e+05", 999000.0),
        (999500, "9.99e+05", 999000.0),  # would round to 1.00e+06: clamp
        (1e6, "9.99e+05", 999000.0),  # beyond: clamp
        (1e300, "9.99e+05", 999000.0),
        (math.inf, "9.99e+05", 999000.0),
        (np.float32(473.0), "4.73e+02", 473.0),
        (np.int64(60), "6.00e+01", 60.0),
    ],
)
def test_round_trip(value, text, decoded):
    tokens = codec.to_tokens(value)
    assert len(tokens) == codec.num_tokens_per_obj == 6
    assert codec.tokens_to_string(tokens) == text
    assert codec.to_string(value) == text
    assert codec.from_tokens(tokens) == decoded
    assert codec.from_string(text) == decoded
    assert float(text) == decoded  # the string is a plain float literal
    out = codec.render(tokens)
    assert out == '{"runtime_s": "' + text + '"}'
    assert json.loads(out) == {"runtime_s": text}
    assert codec.parse(out) == decoded


@pytest.mark.parametrize("value", [math.nan, -1, -0.5, -math.inf, "abc", None, True])
def test_invalid_values_raise(value):
    with pytest.raises(ValueError):
        codec.to_tokens(value)


def test_negative_zero_is_zero():
    assert codec.to_string(-0.0) == "1.00e+00"


def test_limits():
    assert codec.min_value == 1.0
    assert codec.max_value == 999000.0
    assert codec.to_string(codec.max_value) == "9.99e+05"
    assert codec.to_string(codec.min_value) == "1.00e+00"


@pytest.mark.parametrize(
    ("prev", "expected"),
    [
        ("", "123456789"),
        ("4", "0123456789"),
        ("47", "0123456789"),
        ("473", "+"),  # min_exponent >= 0: only "+"
        ("473+", "0"),
        ("473+0", "012345"),
        ("473+05", ""),
    ],
)
def test_possible_next_tokens(prev, expected):
    assert codec.possible_next_tokens(list(prev)) == list(expected)


@pytest.mark.parametrize(
    ("kw", "prev", "expected"),
    [
        ({"min_exponent": -12, "max_exponent": 15}, "123", "+-"),
        ({"min_exponent": -12, "max_exponent": 15}, "123+", "01"),
        ({"min_exponent": -12, "max_exponent": 15}, "123+1", "012345"),
        ({"min_exponent": -12, "max_exponent": 15}, "123+0", "0123456789"),
        ({"min_exponent": -12, "max_exponent": 15}, "123-", "01"),
        ({"min_exponent": -12, "max_exponent": 15}, "123-1", "012"),
        ({"min_exponent": -3, "max_exponent": -1}, "123", "-"),
        ({"min_exponent": -3, "max_exponent": -1, "exponent_digits": 1}, "123-", "123"),
        ({"mantissa_digits": 1, "exponent_digits": 1, "max_exponent": 9}, "", "123456789"),
        ({"mantissa_digits": 1, "exponent_digits": 1, "max_exponent": 9}, "5", "+"),
    ],
)
def test_possible_next_tokens_other_ranges(kw, prev, expected):
    assert NumberCodec(**kw).possible_next_tokens(list(prev)) == list(expected)


@pytest.mark.parametrize(
    ("kw", "value", "text"),
    [
        ({"min_exponent": -3, "max_exponent": 3}, 0.5, "5.00e-01"),
        ({"min_exponent": -3, "max_exponent": 3}, 0.0001, "1.00e-03"),
        ({"min_exponent": -3, "max_exponent": 3}, 0.001, "1.00e-03"),
        ({"min_exponent": -3, "max_exponent": 3}, 0.00999, "9.99e-03"),
        ({"min_exponent": -3, "max_exponent": 3}, 0.0099951, "1.00e-02"),
        ({"mantissa_digits": 1, "exponent_digits": 1, "max_exponent": 9}, 473, "5e+2"),
        ({"mantissa_digits": 1, "exponent_digits": 1, "max_exponent": 9}, 9.5, "1e+1"),
        ({"mantissa_digits": 5, "exponent_digits": 3, "max_exponent": 100}, 1e99, "1.0000e+099"),
    ],
)
def test_other_formats(kw, value, text):
    c = NumberCodec(**kw)
    assert c.to_string(value) == text
    assert c.from_string(text) == float(text)


def test_bad_configs():
    with pytest.raises(ValueError):
        NumberCodec(exponent_digits=1, max_exponent=10)
    with pytest.raises(ValueError):
        NumberCodec(min_exponent=3, max_exponent=2)


@pytest.mark.parametrize(
    "tokens", ["073+02", "47a+02", "473-02", "473+06", "473+0", "473+023", "473002", ""]
)
def test_from_tokens_rejects_illegal(tokens):
    with pytest.raises(ValueError):
        codec.from_tokens(list(tokens))


@pytest.mark.parametrize(
    "text", ["4.73e+2", "4.73e2", "47.3e+01", "4.7e+002", "4,73e+02", '{"x": "4.73e+02"}']
)
def test_from_string_rejects_other_shapes(text):
    with pytest.raises(ValueError):
        codec.from_string(text) if not text.startswith("{") else codec.parse(text)


def test_skeleton():
    assert codec.skeleton() == ['{"runtime_s": "', 0, ".", 1, 2, "e", 3, 4, 5, '"}']
    slots = [p for p in codec.skeleton() if isinstance(p, int)]
    assert slots == list(range(codec.num_tokens_per_obj))


def test_every_legal_sequence_round_trips():
    """Walk every path the mask allows: each one decodes, and re-encodes to itself."""
    c = NumberCodec(min_exponent=-2, max_exponent=3, mantissa_digits=2)
    n = 0
    for mantissa in itertools.product(*(c.possible_next_tokens(list(p)) for p in ["", "1"])):
        stack = [list(mantissa)]
        while stack:
            prev = stack.pop()
            nxt = c.possible_next_tokens(prev)
            if not nxt:
                value = c.from_tokens(prev)
                assert c.to_tokens(value) == prev
                n += 1
                continue
            stack.extend(prev + [t] for t in nxt)
    assert n == 90 * 6


def test_monotone_on_a_log_grid():
    grid = np.logspace(0, 5.99, 2000)
    decoded = [codec.from_string(codec.to_string(v)) for v in grid]
    assert all(a <= b for a, b in itertools.pairwise(decoded))
    rel = np.abs(np.array(decoded) - grid) / grid
    assert rel.max() <= 0.005 + 1e-12  # 3 significant digits: half a unit in the last place


@pytest.mark.parametrize(("value", "text"), [
    (10**400, "9.99e+05"),  # an int no double holds: +inf, the largest value
    (2**1024, "9.99e+05"),
    (10**308, "9.99e+05"),
    (0, "1.00e+00"),
])
def test_integers_too_large_for_a_double_clamp(value, text):
    """An integer beyond the largest double is clamped like +inf; it raised OverflowError
    ('int too large to convert to float'), which is not the ValueError the codec raises."""
    assert codec.to_string(value) == text
    with pytest.raises(ValueError):
        codec.to_string(-(10**400))
