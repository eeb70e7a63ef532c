"""The one expression evaluator (laser_ci.workflows.expressions), table-driven on edge values.

Sources: GitHub's documentation, "Evaluate expressions in workflows and actions" (literals,
operators, loose equality and its number conversions, string comparisons ignoring case,
falsy values, the functions, object filters) and "Contexts reference" (a property a value
lacks is null). Values known only at run time are :class:`Unknown` and propagate.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from laser_ci.workflows.expressions import (
    FullContext,
    Unknown,
    as_written,
    condition,
    display_text,
    evaluate,
    evaluate_value,
    interpolate,
    segments,
    string_condition,
    to_text,
    unknown_refs,
    written_text,
)
from laser_ci.workflows.references import evaluate_string

OBJ = {"Fruits": [{"name": "apple", "n": 1}, {"name": "pear"}, {"n": 3}],
       "cfg": {"os": "linux", "arch": "x64"}}


@pytest.mark.parametrize("expr, expected", [
    # literals
    ("null", None), ("true", True), ("FALSE", False), ("711", 711), ("-9.2", -9.2),
    ("0xff", 255), ("-2.99e-2", -0.0299), ("'It''s open source!'", "It's open source!"),
    ("", None),
    # loose equality: different types compare as numbers
    ("null == 0", True), ("'' == 0", True), ("null == ''", True), ("true == 1", True),
    ("false == 0", True), ("' 123.5 ' == 123.5", True), ("'0xff' == 255", True),
    ("' 0o10 ' == 8", True), ("'abc' == 0", False), ("null == false", True),
    ("'true' == true", False),  # 'true' is not a number: NaN
    ("NaN == NaN", False), ("NaN != NaN", True), ("' NaN ' != NaN", True),
    # strings ignore case; arrays and objects are equal only to themselves
    ("'abc' == 'ABC'", True), ("'abc' != 'ABD'", True),
    ("fromJSON('[]') == fromJSON('[]')", False), ("x == x", True),
    # ordering
    ("'def' > 'ABC'", True), ("'a' < 'B'", True), ("false < true", True), ("1 < '2'", True),
    ("null < 1", True), ("x > x", False), ("fromJSON('[]') < 1", False),
    # && and || return an operand, not a boolean
    ("1 && 'a'", "a"), ("0 && 'a'", 0), ("'' || 'b'", "b"), ("'x' || 'b'", "x"),
    ("null || null", None), ("fromJSON('[]') && 'arrays are truthy'", "arrays are truthy"),
    ("NaN || 'nan is falsy'", "nan is falsy"), ("-0 || 'so is -0'", "so is -0"),
    # precedence: ! before comparisons, comparisons before ==, == before &&, && before ||
    ("!2 < 3", True), ("!(2 < 3)", False), ("1 < 2 == true", True),
    ("true || false && false", True), ("(true || false) && false", False),
    ("1 == 1 && 2 == 3 || 'fallback'", "fallback"),
    # property access and indexing: case-insensitive, a missing property is null
    ("x.fruits[0].name", "apple"), ("x.CFG.OS", "linux"), ("x.cfg['ARCH']", "x64"),
    ("x.cfg.nothing", None), ("x.cfg.os.deeper", None), ("x.fruits[5]", None),
    ("x.fruits[true].name", "pear"), ("x.fruits['1'].name", "pear"),
    ("x.fruits[' 0x01 '].name", "pear"), ("x.fruits['one']", None),
    ("x.fruits[-1]", None), ("x.fruits[null].name", "apple"),
    # object filters
    ("x.fruits.*.name", ["apple", "pear"]), ("x.fruits.*.n", [1, 3]),
    ("x.cfg.*", ["linux", "x64"]), ("x.cfg.os.*", []),
    ("toJSON(x.fruits.*.name)", '[\n  "apple",\n  "pear"\n]'),
    # functions
    ("contains(x.fruits.*.name, 'APPLE')", True), ("contains('Hello world', 'WORLD')", True),
    ("contains(fromJSON('[1, 2]'), '2')", True), ("contains('abc', 'd')", False),
    ("startsWith('Hello', 'he')", True), ("endsWith('Hello', 'LO')", True),
    ("startsWith(null, '')", True),
    ("format('{0}-{1}-{0}', 'a', true)", "a-true-a"), ("format('{{0}}', 'abc')", "{0}"),
    ("format('{{{{0}}}}', 'abc')", "{{0}}"), ("format('}}', 'abc')", "}"),
    ("format('{0}', null)", ""), ("format(null)", ""), ("format('{0}', 1.0)", "1"),
    ("format('{0}', 0.5)", "0.5"),
    ("join(fromJSON('[1, true, null, \"x\"]'))", "1,true,,x"),
    ("join(x.fruits.*.name, ' | ')", "apple | pear"), ("join('abc', '-')", "abc"),
    ("toJSON(null)", "null"), ("toJSON(-0)", "0"), ("toJSON(1.0)", "1"),
    ("toJSON('abc''def')", '"abc\'def"'), ("toJSON(fromJSON('{}'))", "{}"),
    ("toJSON(x.cfg)", '{\n  "os": "linux",\n  "arch": "x64"\n}'),
    ("fromJSON('{\"a\": [1, {\"b\": null}]}').a[1].b", None),
    ("fromJSON('true')", True), ("fromJSON(' 12 ')", 12),
    ("case(false, 'a', 1 == 1, 'b', 'c')", "b"), ("case(false, 'a', 'c')", "c"),
    ("always()", True), ("cancelled()", False),
])
def test_known_values(expr: str, expected: Any) -> None:
    got = evaluate(expr, {"x": OBJ})
    assert not isinstance(got, Unknown), (expr, got)
    if isinstance(expected, float):
        assert isinstance(got, float) and math.isclose(got, expected)
    else:
        assert got == expected and type(got) is type(expected), (expr, got)


@pytest.mark.parametrize("expr", [
    "format('{0')", "format('{1}', 'a')", "format('a}b')", "nosuch(1)", "1 +", "\"double\"",
    "a.", "(1", "fromJSON('{not json')", "contains('a')", "always(1)", "x[*",
])
def test_what_github_rejects_is_unknown_with_an_error(expr: str) -> None:
    got = evaluate(expr, {"x": OBJ})
    assert isinstance(got, Unknown) and got.error, (expr, got)


def test_a_nested_expression_is_bounded() -> None:
    got = evaluate("(" * 500 + "1" + ")" * 500)
    assert isinstance(got, Unknown) and "deep" in (got.error or "")


def test_contexts_known_in_part_in_full_or_not_at_all() -> None:
    # a plain dict is known in part: a property it lacks is only known at run time
    got = evaluate("inputs.os", {"inputs": {"arch": "x64"}})
    assert isinstance(got, Unknown) and got.refs == ("inputs.os",)
    # a FullContext is known in full: a property it lacks is null
    assert evaluate("matrix.extra", {"matrix": FullContext(os="linux")}) is None
    # a context not given at all: unknown, with the whole path as the reference
    got = evaluate("needs.plan.outputs.matrix")
    assert isinstance(got, Unknown) and got.refs == ("needs.plan.outputs.matrix",)
    # context and property names ignore case
    assert evaluate("MATRIX.Os", {"matrix": {"os": "linux"}}) == "linux"
    # a context known in part is not known as a whole (nor is what holds an unknown)
    got = evaluate("toJSON(github)", {"github": {"event_name": "push"}})
    assert isinstance(got, Unknown) and got.refs == ("github",)
    got = evaluate("join(inputs.list)", {"inputs": {"list": ["a", Unknown(refs=("matrix.x",))]}})
    assert isinstance(got, Unknown) and got.refs == ("matrix.x",)
    assert evaluate("toJSON(matrix)", {"matrix": FullContext(os="a")}) == '{\n  "os": "a"\n}'
    # static env, for the fields where GitHub allows it (steps)
    assert evaluate("env.DEPLOY == 'true'", {"env": FullContext(DEPLOY="false")}) is False


@pytest.mark.parametrize("expr, options, open_", [
    ("inputs.x == 'a'", (True, False), None),
    ("!inputs.x", (True, False), None),
    ("contains(inputs.x, 'a')", (True, False), None),
    ("inputs.x && 'big' || 'small'", ("big", "small"), None),
    ("inputs.x || 'fallback'", ("fallback",), "truthy"),
    ("inputs.x && 'when set'", ("when set",), "falsy"),
    ("inputs.x && ''", ("",), "falsy"),
    ("github.event_name == 'push' && 'big' || 'small'", ("big", "small"), None),
    ("fromJSON(needs.plan.outputs.matrix)", (), "any"),
    ("toJSON(inputs.x)", (), "truthy"),
    ("hashFiles('**/lock')", (), "any"),
])
def test_unknowns_propagate_and_keep_what_is_known(expr: str, options: tuple, open_: str | None
                                                   ) -> None:
    got = evaluate(expr, {"inputs": {}})
    assert isinstance(got, Unknown)
    assert got.options == options and got.open == open_, got
    assert got.refs and got.text == f"${{{{ {expr} }}}}"


def test_a_closed_unknown_narrows_to_a_value_when_every_option_agrees() -> None:
    event = Unknown(refs=("github.event_name",), options=("push", "pull_request"), open=None)
    ctx = {"github": {"event_name": event}}
    assert evaluate("github.event_name != 'schedule'", ctx) is True
    assert evaluate("startsWith(github.event_name, 'pu')", ctx) is True
    assert evaluate("github.event_name == 'push' && 'x' || 'x'", ctx) == "x"
    got = evaluate("github.event_name == 'push'", ctx)
    assert isinstance(got, Unknown) and got.options == (True, False)
    # `!` of something always falsy is known
    assert evaluate("!(inputs.x && '')", {"inputs": {}}) is True


def test_strings_with_expressions() -> None:
    assert interpolate("plain") == "plain"
    assert interpolate("${{ matrix.n }}", {"matrix": {"n": 2}}) == 2  # one expression: typed
    assert interpolate(" ${{ matrix.n }} ", {"matrix": {"n": 2}}) == " 2 "  # spaces: format()
    assert interpolate("n=${{ matrix.n }} ok=${{ matrix.ok }}",
                       {"matrix": {"n": 2.0, "ok": True}}) == "n=2 ok=true"
    # `}}` inside a quoted string does not end the expression
    assert interpolate("${{ format('{{0}}', 'x') }}!") == "{0}!"
    assert [s[1] for s in segments("a ${{ 'b}}' }} c ${{ d")] == ["a ", "${{ 'b}}' }}", " c ${{ d"]
    # a part known only at run time: kept as an Unknown with the known pieces around it
    got = interpolate("Build ${{ inputs.kind }} (${{ matrix.os }})",
                      {"inputs": {}, "matrix": {"os": "linux"}})
    assert isinstance(got, Unknown) and got.refs == ("inputs.kind",)
    assert display_text(got) == "Build … (linux)"
    assert written_text(got) == "Build ${{ inputs.kind }} (linux)"
    assert got.open == "truthy"  # text around it: a non-empty string, whatever the value
    # GitHub renders `x && ''` as nothing: the idiom that hides matrix values in a name
    assert interpolate("Unit Test${{ matrix.platform && '' }}", {}) == "Unit Test"


@pytest.mark.parametrize("text, expected", [
    ("${{ fromJSON('[1, 2]') }}", [1, 2]),  # exactly one expression: its value, typed
    (" ${{ fromJSON('[1, 2]') }}", " Array"),  # anything around it: format() of it
    ("${{ 3 }}\n", "3\n"),  # the line break a `|` block scalar ends with
    ("${{ true }} ", "true "),
])
def test_one_expression_keeps_its_type_only_alone(text: str, expected: Any) -> None:
    assert interpolate(text, {}) == expected


@pytest.mark.parametrize("if_, expected", [
    ("${{ false }}", None),
    ("github.event_name == 'push'", None),
    ("${{ false }}\n", "line break"),  # `if: >` or `if: |` over one line
    ("  ${{ false }}\n", "line break"),
    (" ${{ false }} ", "spaces"),  # quoted
    ("${{ a }} && ${{ b }}", "text"),
    ("${{ a }} ${{ b }}", "text"),  # the space: never an empty string
    ("${{ a }}${{ b }}", None),  # may be empty: false
    ("${{ inputs.x }} == 'y'", "text"),
    ("x ${{", None),  # never closed: a literal string, no expression
    (None, None),
    (True, None),
])
def test_string_condition(if_: Any, expected: str | None) -> None:
    assert string_condition(if_) == expected


def test_values_render_as_github_renders_them() -> None:
    assert [to_text(v) for v in (None, True, False, 3.0, 0.5, -0.0, "x")] == \
        ["", "true", "false", "3", "0.5", "0", "x"]
    assert to_text({"a": [1, None]}) == '{"a":[1,null]}'


def test_whole_values_and_what_is_written() -> None:
    value = {"labels": ["self-hosted", "${{ matrix.arch }}", "${{ inputs.pool }}"],
             "group": "${{ inputs.big && 'big' || 'small' }}"}
    got = evaluate_value(value, {"matrix": {"arch": "arm64"}, "inputs": {}})
    assert got["labels"][:2] == ["self-hosted", "arm64"]
    assert isinstance(got["labels"][2], Unknown) and isinstance(got["group"], Unknown)
    assert unknown_refs(got) == ("inputs.pool", "inputs.big")
    assert as_written(got) == {"labels": ["self-hosted", "arm64", "${{ inputs.pool }}"],
                               "group": "${{ inputs.big && 'big' || 'small' }}"}


OK = {"success": True, "failure": False}  # a job without needs: nothing before it failed
AFTER_SKIP = {"success": False, "failure": False, "cancelled": False}  # a need was skipped


@pytest.mark.parametrize("if_, event, status, expected", [
    (None, "push", None, True),
    (False, "push", OK, False),
    ("github.event_name == 'push'", "push", OK, True),
    ("github.event_name == 'push'", "pull_request", OK, False),
    ("${{ github.event_name == 'push' }}", "pull_request", OK, False),
    ("${{ false }}", "push", None, False),
    # without a status function GitHub adds `success() &&`: unknown when needs may fail
    ("true", "push", None, None),
    ("true", "push", OK, True),
    ("github.event_name == 'push'", "pull_request", None, False),  # false either way
    ("always()", "push", None, True),
    ("failure()", "push", OK, False),
    ("failure()", "push", None, None),
    ("cancelled()", "push", None, False),
    ("!cancelled() && github.event_name != 'push'", "push", None, False),
    ("contains(github.event.head_commit.message, '[skip]')", "push", OK, None),
    # text around a ${{ }} makes the condition a string, truthy unless empty, still after
    # GitHub's `success() &&`: a space, or the line break a `|` or `>` block ends with
    ("${{ inputs.x }} and text", "push", OK, True),
    ("${{ inputs.x }} and text", "push", None, None),
    ("${{ inputs.x }} and text", "push", AFTER_SKIP, False),
    ("${{ false }}\n", "push", OK, True),
    (" ${{ false }}", "push", OK, True),
    ("${{ github.event_name == 'push' }}\n", "pull_request", OK, True),
    ("${{ false }} && true", "push", OK, True),
    ("${{ always() }}\n", "push", AFTER_SKIP, True),
    ("${{ '' }}${{ '' }}", "push", OK, False),
    # a YAML boolean or number is read as its text, after success() && as any condition;
    # `${{ 'x' }}` is the literal x; a blank one is success()
    (True, "push", OK, True),
    (True, "push", AFTER_SKIP, False),
    (1, "push", AFTER_SKIP, False),
    ("", "push", OK, True),
    ("", "push", AFTER_SKIP, False),
    ("${{ '' }}", "push", OK, True),
    ("${{ 'false' }}", "push", OK, False),
    ("${{ 'always()' }}", "push", AFTER_SKIP, True),
])
def test_conditions(if_: Any, event: str, status: dict | None, expected: bool | None) -> None:
    got = condition(if_, {"github": {"event_name": event}, "inputs": {}}, status=status)
    if expected is None:
        assert isinstance(got, Unknown) and got.options == (True, False)
    else:
        assert got is expected


def test_the_serialized_text_substitutes_plain_references_only() -> None:
    # The job text is the model's input contract: operators and functions stay as written.
    ctx = {"matrix": {"os": "linux", "n": 2}, "inputs": {"x": Unknown(refs=("matrix.x",))}}
    assert evaluate_string("${{ matrix.os }}-${{ matrix.n == 2 }}", ctx) == \
        "linux-${{ matrix.n == 2 }}"
    assert evaluate_string("${{ matrix }}", ctx) == "${{ matrix }}"
    assert evaluate_string("${{ matrix.n }}\n", ctx) == "2\n"  # a block scalar's: text
    assert evaluate_string("${{ inputs.x }}", ctx) == "${{ inputs.x }}"  # only the run knows
    assert evaluate_string("${{ matrix['os'] }}", ctx) == "linux"


# The reference, written another way: at each `${{`, a regular expression for "up to the
# first `}}` outside single quotes"; an unclosed one makes the rest literal.
_EXPRESSION = re.compile(r"\$\{\{((?:[^'}]|'[^']*'|\}(?!\}))*?)\}\}", re.S)


def _segments_by_regex(text: str) -> list[tuple[bool, str, str]]:
    out: list[tuple[bool, str, str]] = []
    pos = 0
    while (start := text.find("${{", pos)) >= 0 and (m := _EXPRESSION.match(text, start)):
        if start > pos:
            out.append((False, text[pos:start], text[pos:start]))
        out.append((True, m.group(0), m.group(1)))
        pos = m.end()
    if pos < len(text):
        out.append((False, text[pos:], text[pos:]))
    return out


@pytest.mark.parametrize("text", [
    "", "plain", "${{", "${{ }}", "}}${{", "${{ a }}", "x${{a}}y${{b}}z", "${{ 'b}}' }}",
    "${{ 'unclosed }}", "${{ '' }}", "${{ 'it''s' }}}}", "${{ a }} ${{ 'x", "${{${{ a }}}}",
    "${{ '}}' '}}' }} tail", "${{ }'}}", "a '${{ b }}' c", "${{ a }",
])
def test_segments_edge_values(text: str) -> None:
    assert list(segments(text)) == _segments_by_regex(text)


def test_segments_match_the_character_scan_on_random_strings() -> None:
    import random

    rng = random.Random(7)
    alphabet = ["${{", "}}", "'", "}", "{", "$", "a", " "]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 14)))
        assert list(segments(text)) == _segments_by_regex(text), text

