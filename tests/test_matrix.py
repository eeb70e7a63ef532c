"""Tests for laser_ci.workflows.matrix: GitHub Actions matrix expansion.

The documented cases come from GitHub's "Using a matrix for your jobs" page
(github/docs data/reusables/actions/jobs/*.md).
"""

from __future__ import annotations

import itertools
import random
import time
from typing import Any

import pytest
import yaml

import laser_ci.workflows.matrix as matrix_module
from laser_ci.workflows.expressions import evaluate
from laser_ci.workflows.matrix import MAX_COMBINATIONS, MatrixExpansion, expand_matrix


def _m(text: str) -> Any:
    return yaml.safe_load(text)


# (id, matrix YAML, expected combos in order)
DOC_CASES: list[tuple[str, str, list[dict[str, Any]]]] = [
    (
        "docs-order-version-then-os",
        """
        version: [10, 12, 14]
        os: [ubuntu-latest, windows-latest]
        """,
        [
            {"version": 10, "os": "ubuntu-latest"},
            {"version": 10, "os": "windows-latest"},
            {"version": 12, "os": "ubuntu-latest"},
            {"version": 12, "os": "windows-latest"},
            {"version": 14, "os": "ubuntu-latest"},
            {"version": 14, "os": "windows-latest"},
        ],
    ),
    (
        "docs-single-dimension",
        "version: [10, 12, 14]",
        [{"version": 10}, {"version": 12}, {"version": 14}],
    ),
    (
        "docs-array-of-objects",
        """
        os: [ubuntu-latest, macos-latest]
        node:
          - version: 14
          - version: 20
            env: NODE_OPTIONS=--openssl-legacy-provider
        """,
        [
            {"os": "ubuntu-latest", "node": {"version": 14}},
            {
                "os": "ubuntu-latest",
                "node": {"version": 20, "env": "NODE_OPTIONS=--openssl-legacy-provider"},
            },
            {"os": "macos-latest", "node": {"version": 14}},
            {
                "os": "macos-latest",
                "node": {"version": 20, "env": "NODE_OPTIONS=--openssl-legacy-provider"},
            },
        ],
    ),
    (
        "docs-include-fruit-animal",
        """
        fruit: [apple, pear]
        animal: [cat, dog]
        include:
          - color: green
          - color: pink
            animal: cat
          - fruit: apple
            shape: circle
          - fruit: banana
          - fruit: banana
            animal: cat
        """,
        [
            {"fruit": "apple", "animal": "cat", "color": "pink", "shape": "circle"},
            {"fruit": "apple", "animal": "dog", "color": "green", "shape": "circle"},
            {"fruit": "pear", "animal": "cat", "color": "pink"},
            {"fruit": "pear", "animal": "dog", "color": "green"},
            {"fruit": "banana"},
            {"fruit": "banana", "animal": "cat"},
        ],
    ),
    (
        "docs-include-perl-macos",
        """
        os: [ubuntu-latest]
        perl: ['5.16', '5.20', '5.26', '5.30', latest]
        include:
          - os: macos-latest
            perl: '5.26'
          - os: macos-latest
            perl: latest
        """,
        [
            {"os": "ubuntu-latest", "perl": "5.16"},
            {"os": "ubuntu-latest", "perl": "5.20"},
            {"os": "ubuntu-latest", "perl": "5.26"},
            {"os": "ubuntu-latest", "perl": "5.30"},
            {"os": "ubuntu-latest", "perl": "latest"},
            {"os": "macos-latest", "perl": "5.26"},
            {"os": "macos-latest", "perl": "latest"},
        ],
    ),
    (
        "docs-expand-with-include-npm",
        """
        os: [windows-latest, ubuntu-latest]
        node: [12, 14, 16]
        include:
          - os: windows-latest
            node: 16
            npm: 6
        """,
        [
            {"os": "windows-latest", "node": 12},
            {"os": "windows-latest", "node": 14},
            {"os": "windows-latest", "node": 16, "npm": 6},
            {"os": "ubuntu-latest", "node": 12},
            {"os": "ubuntu-latest", "node": 14},
            {"os": "ubuntu-latest", "node": 16},
        ],
    ),
    (
        "docs-add-with-include-version-17",
        """
        os: [macos-latest, windows-latest, ubuntu-latest]
        version: [12, 14, 16]
        include:
          - os: windows-latest
            version: 17
        """,
        [
            {"os": os, "version": v}
            for os in ("macos-latest", "windows-latest", "ubuntu-latest")
            for v in (12, 14, 16)
        ]
        + [{"os": "windows-latest", "version": 17}],
    ),
    (
        "docs-include-only",
        """
        include:
          - site: production
            datacenter: site-a
          - site: staging
            datacenter: site-b
        """,
        [
            {"site": "production", "datacenter": "site-a"},
            {"site": "staging", "datacenter": "site-b"},
        ],
    ),
    (
        "docs-exclude-partial",
        """
        os: [macos-latest, windows-latest]
        version: [12, 14, 16]
        environment: [staging, production]
        exclude:
          - os: macos-latest
            version: 12
            environment: production
          - os: windows-latest
            version: 16
        """,
        [
            {"os": "macos-latest", "version": 12, "environment": "staging"},
            {"os": "macos-latest", "version": 14, "environment": "staging"},
            {"os": "macos-latest", "version": 14, "environment": "production"},
            {"os": "macos-latest", "version": 16, "environment": "staging"},
            {"os": "macos-latest", "version": 16, "environment": "production"},
            {"os": "windows-latest", "version": 12, "environment": "staging"},
            {"os": "windows-latest", "version": 12, "environment": "production"},
            {"os": "windows-latest", "version": 14, "environment": "staging"},
            {"os": "windows-latest", "version": 14, "environment": "production"},
        ],
    ),
]

OTHER_CASES: list[tuple[str, str, list[dict[str, Any]]]] = [
    (
        "three-keys-first-slowest",
        "a: [1, 2]\nb: [x, y]\nc: [true, false]",
        [{"a": a, "b": b, "c": c} for a in (1, 2) for b in ("x", "y") for c in (True, False)],
    ),
    (
        "exclude-single-key-removes-slice",
        "os: [linux, mac]\npy: ['3.11', '3.12']\nexclude:\n  - os: mac",
        [{"os": "linux", "py": "3.11"}, {"os": "linux", "py": "3.12"}],
    ),
    (
        "exclude-mapping-value-by-equality",
        """
        cfg: [{os: linux, cc: gcc}, {os: linux, cc: clang}]
        opt: [O0, O2]
        exclude:
          - cfg: {os: linux, cc: clang}
            opt: O0
        """,
        [
            {"cfg": {"os": "linux", "cc": "gcc"}, "opt": "O0"},
            {"cfg": {"os": "linux", "cc": "gcc"}, "opt": "O2"},
            {"cfg": {"os": "linux", "cc": "clang"}, "opt": "O2"},
        ],
    ),
    (
        "exclude-list-value-by-equality",
        "flags: [[-a], [-a, -b]]\nexclude:\n  - flags: [-a, -b]",
        [{"flags": ["-a"]}],
    ),
    # GitHub compiles each leaf of an entry to `matrix.<path> == <literal>` (MatrixBuilder.cs):
    # its loose `==`, not type-strict equality.
    (
        "exclude-string-matches-number",
        "v: [12, '12', 13, '3.9']\nexclude:\n  - v: 12\n  - v: 3.9",
        [{"v": 13}],
    ),
    (
        "exclude-true-matches-one",
        "v: [1, true, 2]\nexclude:\n  - v: true",
        [{"v": 2}],
    ),
    (
        "exclude-strings-case-insensitive",
        "os: [Ubuntu-Latest, macos-latest]\nexclude:\n  - os: ubuntu-latest",
        [{"os": "macos-latest"}],
    ),
    (
        "exclude-object-leaf-by-leaf",
        """
        cfg: [{os: linux, cc: gcc}, {os: mac, cc: gcc}, {os: linux, cc: clang}]
        exclude:
          - cfg: {os: linux}
        """,
        [{"cfg": {"os": "mac", "cc": "gcc"}}],
    ),
    (
        "exclude-list-leaf-by-leaf",
        "flags: [[-a, -b], [-b]]\nexclude:\n  - flags: [-a]",
        [{"flags": ["-b"]}],
    ),
    (
        "exclude-key-case-insensitive",
        "os: [linux, mac]\nexclude:\n  - OS: mac",
        [{"os": "linux"}],
    ),
    (
        "include-matches-loosely",
        """
        py: ['3.9', '3.12']
        include:
          - py: 3.9
            legacy: true
        """,
        [{"py": "3.9", "legacy": True}, {"py": "3.12"}],
    ),
    (
        "include-key-case-insensitive",
        "os: [linux, mac]\ninclude:\n  - OS: mac\n    big: true",
        [{"os": "linux"}, {"os": "mac", "big": True}],
    ),
    (
        "include-adds-back-excluded",
        """
        os: [linux, mac]
        py: ['3.11', '3.12']
        exclude:
          - os: mac
        include:
          - os: mac
            py: '3.12'
            extra: yes-please
        """,
        [
            {"os": "linux", "py": "3.11"},
            {"os": "linux", "py": "3.12"},
            {"os": "mac", "py": "3.12", "extra": "yes-please"},
        ],
    ),
    (
        "include-later-overwrites-added-key",
        """
        os: [linux, mac]
        include:
          - runner: small
          - os: mac
            runner: big
        """,
        [{"os": "linux", "runner": "small"}, {"os": "mac", "runner": "big"}],
    ),
    (
        "include-does-not-extend-new-combination",
        """
        os: [linux]
        include:
          - os: win
          - os: win
            extra: 1
        """,
        [{"os": "linux"}, {"os": "win"}, {"os": "win", "extra": 1}],
    ),
    (
        "duplicate-values-kept",
        "os: [linux, linux]",
        [{"os": "linux"}, {"os": "linux"}],
    ),
    (
        "include-only-same-keys-not-merged",
        "include:\n  - a: 1\n  - a: 1\n    b: 2",
        [{"a": 1}, {"a": 1, "b": 2}],
    ),
]


@pytest.mark.parametrize(
    ("matrix", "expected"),
    [pytest.param(m, e, id=i) for i, m, e in DOC_CASES + OTHER_CASES],
)
def test_expansion(matrix: str, expected: list[dict[str, Any]]) -> None:
    result = expand_matrix(_m(matrix))
    assert result == MatrixExpansion(combos=expected, dynamic=False, error=None)
    # key order: vector keys first, then include-added keys in order of addition
    assert [list(c) for c in result.combos] == [list(c) for c in expected]


@pytest.mark.parametrize(
    "matrix",
    [
        pytest.param("${{ fromJSON(needs.plan.outputs.matrix) }}", id="whole-matrix"),
        pytest.param({"os": "${{ fromJSON(needs.x.outputs.os) }}"}, id="vector"),
        pytest.param(
            {"os": ["linux"], "py": "${{ fromJSON(inputs.versions) }}", "arch": []},
            id="vector-wins-over-empty-error",
        ),
        pytest.param({"os": ["linux"], "include": "${{ fromJSON(x) }}"}, id="include"),
        pytest.param({"os": ["linux"], "exclude": "${{ fromJSON(x) }}"}, id="exclude"),
        pytest.param({"os": ["linux"], "include": ["${{ fromJSON(x) }}"]}, id="include-item"),
    ],
)
def test_dynamic(matrix: Any) -> None:
    assert expand_matrix(matrix) == MatrixExpansion(combos=[{}], dynamic=True, error=None)


def test_expression_inside_a_vector_is_just_a_value() -> None:
    result = expand_matrix({"os": ["linux", "${{ inputs.os }}"]})
    assert result.combos == [{"os": "linux"}, {"os": "${{ inputs.os }}"}]
    assert not result.dynamic and result.error is None


@pytest.mark.parametrize("matrix", [None])
def test_no_matrix(matrix: Any) -> None:
    assert expand_matrix(matrix) == MatrixExpansion(combos=[{}], dynamic=False, error=None)


# (id, matrix, expected combos, substring of the error)
ERROR_CASES: list[tuple[str, Any, list[dict[str, Any]], str]] = [
    ("empty-mapping", {}, [{}], "at least one vector"),
    ("empty-include-only", {"include": []}, [{}], "at least one vector"),
    ("empty-vector", {"os": [], "py": [1]}, [{}], "Matrix vector 'os' does not contain any values"),
    (
        "scalar-vector",
        {"os": "linux", "py": [1, 2]},
        [{"os": "linux", "py": 1}, {"os": "linux", "py": 2}],
        "matrix vector 'os' must be a list",
    ),
    ("null-vector", {"os": None}, [{"os": None}], "matrix vector 'os' must be a list"),
    ("string-matrix", "ubuntu-latest", [{}], "matrix must be a mapping"),
    ("int-matrix", 3, [{}], "matrix must be a mapping"),
    ("list-matrix", [{"os": ["a"]}], [{}], "matrix must be a mapping"),
    ("include-not-list", {"os": ["a"], "include": {"x": 1}}, [{"os": "a"}], "'include' must be"),
    (
        "exclude-item-not-mapping",
        {"os": ["a", "b"], "exclude": ["a", {"os": "b"}]},
        [{"os": "a"}],
        "'exclude' entries must be mappings",
    ),
    ("include-item-not-mapping", {"include": [1, {"a": 1}]}, [{"a": 1}], "'include' entries"),
    (
        "all-excluded",
        {"os": ["a", "b"], "exclude": [{"os": "a"}, {"os": "b"}]},
        [{}],
        "no combinations left",
    ),
    (  # GitHub: "Matrix exclude filter must not be empty"
        "empty-exclude-entry",
        {"os": ["a"], "exclude": [{}]},
        [{"os": "a"}],
        "exclude entry must not be empty",
    ),
    (  # GitHub: "Matrix include mapping does not contain any values"
        "empty-include-entry",
        {"os": ["linux", "mac"], "include": [{}]},
        [{"os": "linux"}, {"os": "mac"}],
        "include entry does not contain any values",
    ),
    (  # GitHub: "Matrix exclude key 'arch' does not match any key within the matrix"
        "exclude-unknown-key",
        {"os": ["linux", "mac"], "exclude": [{"arch": "arm"}]},
        [{"os": "linux"}, {"os": "mac"}],
        "exclude key 'arch' does not match any key within the matrix",
    ),
]


@pytest.mark.parametrize(
    ("matrix", "expected", "message"),
    [pytest.param(m, e, msg, id=i) for i, m, e, msg in ERROR_CASES],
)
def test_errors(matrix: Any, expected: list[dict[str, Any]], message: str) -> None:
    result = expand_matrix(matrix)
    assert result.combos == expected
    assert not result.dynamic
    assert result.error is not None and message in result.error


def test_all_excluded_but_include_adds_back() -> None:
    result = expand_matrix({"os": ["a"], "exclude": [{"os": "a"}], "include": [{"os": "a"}]})
    assert result == MatrixExpansion(combos=[{"os": "a"}], dynamic=False, error=None)


@pytest.mark.parametrize(
    ("matrix", "total"),
    [
        pytest.param({"a": list(range(16)), "b": list(range(16))}, 256, id="exactly-256"),
        pytest.param({"a": list(range(16)), "b": list(range(17))}, 272, id="272"),
        pytest.param(
            {"a": list(range(16)), "b": list(range(16)), "include": [{"a": 99}]},
            257,
            id="include-pushes-over",
        ),
        pytest.param(
            {"a": list(range(20)), "b": list(range(15)), "exclude": [{"a": 0}, {"a": 1}]},
            270,
            id="exclude-still-over",
        ),
        pytest.param(
            {"a": list(range(20)), "b": list(range(15)), "exclude": [{"a": i} for i in range(4)]},
            240,
            id="exclude-brings-under",
        ),
    ],
)
def test_limit(matrix: dict[str, Any], total: int) -> None:
    result = expand_matrix(matrix)
    assert len(result.combos) == min(total, MAX_COMBINATIONS)
    if total > MAX_COMBINATIONS:
        assert result.error == (
            f"matrix expands to {total} combinations; GitHub's limit is {MAX_COMBINATIONS}"
        )
    else:
        assert result.error is None
    assert result.combos == _reference(matrix)[:MAX_COMBINATIONS]


def test_huge_product_is_fast_and_truncated() -> None:
    matrix: dict[str, Any] = {f"k{i}": list(range(10)) for i in range(10)}
    start = time.perf_counter()
    result = expand_matrix(matrix)
    assert time.perf_counter() - start < 1.0
    assert result.error is not None and "10000000000 combinations" in result.error
    assert len(result.combos) == MAX_COMBINATIONS
    assert result.combos[0] == {f"k{i}": 0 for i in range(10)}
    assert result.combos[-1] == {**{f"k{i}": 0 for i in range(7)}, "k7": 2, "k8": 5, "k9": 5}


def test_huge_product_with_dead_prefix_is_fast() -> None:
    # every a=x combination is excluded by two excludes on the last key: the generator must
    # skip the whole 10**10 subtree instead of walking it
    matrix: dict[str, Any] = {"a": ["x", "y"], **{f"k{i}": list(range(10)) for i in range(10)}}
    matrix["z"] = [1, 2]
    matrix["exclude"] = [{"a": "x", "z": 1}, {"a": "x", "z": 2}]
    matrix["include"] = [{"a": "x", "z": 1, "note": "back"}]
    start = time.perf_counter()
    result = expand_matrix(matrix)
    assert time.perf_counter() - start < 1.0
    assert result.error is not None and f"{2 * 10**10 + 1} combinations" in result.error
    assert result.combos[0]["a"] == "y"
    assert len(result.combos) == MAX_COMBINATIONS


@pytest.mark.parametrize(
    "garbage",
    [
        0,
        1.5,
        True,
        b"bytes",
        object(),
        [1, [2, [3]]],
        {"os": {"nested": {"deep": [1, 2]}}},
        {1: [1, 2], None: [3], False: "x"},
        {"include": "not an expression"},
        {"exclude": [[{"os": "a"}]], "os": ["a"]},
        {"include": [None, {}], "exclude": None},
        {"os": [object(), float("nan")]},
        {"os": [1], "include": [{1: 2}]},
        {f"k{i}": [i] for i in range(3000)},
    ],
)
def test_garbage_never_raises(garbage: Any) -> None:
    result = expand_matrix(garbage)
    assert isinstance(result, MatrixExpansion)
    assert isinstance(result.combos, list) and result.combos
    assert all(isinstance(c, dict) for c in result.combos)
    assert len(result.combos) <= MAX_COMBINATIONS


def test_many_single_value_keys_expand() -> None:
    matrix = {f"k{i}": [i] for i in range(3000)}
    result = expand_matrix(matrix)
    assert result.error is None
    assert result.combos == [{f"k{i}": i for i in range(3000)}]


def _literal(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _leaves(value: Any, path: str) -> list[str]:
    """GitHub's filter expressions for one entry value (MatrixFilter in MatrixBuilder.cs)."""
    if isinstance(value, dict):
        return [e for k, v in value.items() for e in _leaves(v, f"{path}[{_literal(k)}]")]
    if isinstance(value, list):
        return [e for i, v in enumerate(value) for e in _leaves(v, f"{path}[{i}]")]
    return [f"{path} == {_literal(value)}"]


def _same(combo_value: Any, wanted: Any) -> bool:
    """The entry value matches: every leaf expression is true, evaluated by the expression
    engine as GitHub evaluates the expressions it compiles."""
    return all(evaluate(e, {"matrix": {"v": combo_value}}) is True
               for e in _leaves(wanted, "matrix['v']"))


def _reference(matrix: dict[str, Any]) -> list[dict[str, Any]]:
    """Naive, materialising implementation of the documented rules."""
    keys = [k for k in matrix if k not in ("include", "exclude")]
    combos = (
        [
            dict(zip(keys, vals, strict=True))
            for vals in itertools.product(*(matrix[k] for k in keys))
        ]
        if keys
        else []
    )
    for ex in matrix.get("exclude") or []:
        combos = [c for c in combos if not all(k in c and _same(c[k], v) for k, v in ex.items())]
    originals = combos
    new = []
    for inc in matrix.get("include") or []:
        hit = False
        for c in originals:
            if all(_same(c[k], v) for k, v in inc.items() if k in keys):
                c.update((k, v) for k, v in inc.items() if k not in keys)
                hit = True
        if not hit:
            new.append(dict(inc))
    return originals + new


def _random_entry(rng: random.Random, keys: list[str], pool: list[Any], extra: bool) -> dict:
    chosen = rng.sample(keys, rng.randint(1, len(keys)))
    entry: dict[str, Any] = {k: rng.choice(pool) for k in chosen}
    if extra and rng.random() < 0.7:
        entry[rng.choice(["x", "y"])] = rng.randint(0, 9)
    return entry


def test_matches_naive_reference_on_random_matrices() -> None:
    rng = random.Random(1234)
    pool: list[Any] = ["a", "b", 1, 2, True, {"m": 1}]
    for _ in range(400):
        keys = [f"k{i}" for i in range(rng.randint(1, 4))]
        matrix: dict[str, Any] = {k: rng.choices(pool, k=rng.randint(1, 4)) for k in keys}
        matrix["exclude"] = [
            _random_entry(rng, keys, pool, False) for _ in range(rng.randint(0, 4))
        ]
        matrix["include"] = [_random_entry(rng, keys, pool, True) for _ in range(rng.randint(0, 4))]
        expected = _reference(matrix)
        result = expand_matrix(matrix)
        if expected:
            assert result.combos == expected[:MAX_COMBINATIONS], matrix
            assert result.error is None
        else:
            assert result.combos == [{}] and result.error is not None


def test_too_complex_reports_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matrix_module, "_MAX_STATES", 10)
    matrix = {"a": [1, 2, 3], "b": [1, 2, 3], "exclude": [{"a": 1, "b": 2}, {"a": 2}]}
    result = expand_matrix(matrix)
    assert result.combos == [{}]
    assert result.error == "matrix is too complex to expand statically"


def test_an_include_of_many_keys_on_many_combinations_is_fast() -> None:
    # each added key was looked up by a scan of the combination's keys: 256 x 3,000 x 3,000
    matrix = {"v": list(range(256)), "include": [{f"k{i}": 1 for i in range(3000)}]}
    start = time.perf_counter()
    result = expand_matrix(matrix)
    assert time.perf_counter() - start < 2.0
    assert len(result.combos) == 256 and all(len(c) == 3001 for c in result.combos)
    assert result.combos[5]["v"] == 5 and result.combos[5]["k2999"] == 1


def test_an_include_key_differing_only_in_case_overwrites_the_added_one() -> None:
    result = expand_matrix({"os": ["a"], "include": [{"Big": 1}, {"BIG": 2}]})
    assert result.combos == [{"os": "a", "Big": 2}]
