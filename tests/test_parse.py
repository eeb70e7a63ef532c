"""Tests for the workflow reader (laser_ci.workflows: yamlload, expressions, parse),
pinned against GitHub's documented behaviour and GitHub's own workflow parser.

Sources, cited next to each group below:

* [docs-syntax] github/docs content/actions/reference/workflows-and-actions/workflow-syntax.md
  (``name``, ``on``, ``on.workflow_call.inputs``, ``jobs.<job_id>.*``) and the reusables it
  includes (data/reusables/actions/jobs/*.md).
* [docs-reuse] github/docs content/actions/how-tos/reuse-automations/reuse-workflows.md and
  content/actions/reference/workflows-and-actions/reusing-workflow-configurations.md
  ("YAML anchors and aliases").
* [docs-contexts] github/docs content/actions/reference/workflows-and-actions/contexts.md:
  "If you attempt to dereference a nonexistent property, it will evaluate to an empty string."
* [docs-metadata] github/docs content/actions/reference/workflows-and-actions/metadata-syntax.md
  (composite actions: ``runs.using: composite``, ``runs.steps``, ``inputs.<id>.default``).
* [gh-parser] GitHub's workflow parser, published in github.com/actions/runner under
  src/Sdk/WorkflowParser/: Conversion/YamlObjectReader.cs (YAML 1.2 core schema, 50,000-node
  limit), ObjectTemplating/TemplateReader.cs (duplicate keys), Conversion/MatrixBuilder.cs and
  Conversion/JobNameBuilder.cs (matrix job display names), WorkflowTemplateEvaluator.cs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from laser_ci.workflows.expressions import FullContext
from laser_ci.workflows.model import JobInstance, ReadError, Workflow
from laser_ci.workflows.parse import (
    MAX_CALL_DEPTH,
    display_name,
    matrix_suffix,
    normalize,
    read_paths,
    read_workflows,
    triggers_of,
)
from laser_ci.workflows.references import evaluate_string, substitute
from laser_ci.workflows.yamlload import MAX_DEPTH, MAX_NODES, load_yaml

REPOS = Path(__file__).parent / "fixtures" / "repos"


def read_repo(name: str) -> tuple[dict[str, Workflow], list[ReadError]]:
    root = REPOS / name
    workflows, errors = read_paths([str(root / ".github" / "workflows")], str(root))
    return {wf.path: wf for wf in workflows}, errors


def read_text(text: str, **others: str) -> tuple[Workflow | None, list[ReadError]]:
    """Read one in-memory workflow ``w.yml``; ``others`` are more files (``/`` as ``__``)."""
    files = {"w.yml": text, **{k.replace("__", "/"): v for k, v in others.items()}}
    workflows, errors = read_workflows(files, ["w.yml"])
    return (workflows[0] if workflows else None), errors


def jobs_of(wf: Workflow, job_id: str) -> list[JobInstance]:
    return [j for j in wf.jobs if j.id == job_id]


def names(wf: Workflow) -> list[str]:
    return [j.name for j in wf.jobs]


# --- YAML 1.1 traps -------------------------------------------------------------------------
# [gh-parser] YamlObjectReader.cs: plain scalars are typed by the YAML 1.2 "core" schema:
# null = "" | null | Null | NULL | ~; bool = true|True|TRUE|false|False|FALSE; int = [-+]?[0-9]+
# | 0o[0-7]+ | 0x[0-9a-fA-F]+; float = [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?,
# .inf, .nan; quoted scalars are strings. So `on`/`yes`/`no`/`off` are strings, not booleans.


def test_on_key_stays_the_string_on() -> None:
    wfs, errors = read_repo("yaml-traps")
    wf = wfs[".github/workflows/traps.yml"]
    assert wf.triggers == ["push", "workflow_dispatch"]
    assert isinstance(wf.on, dict) and list(wf.on) == ["push", "workflow_dispatch"]
    assert load_yaml("on: push\n").data == {"on": "push"}
    assert [e for e in errors if e.path.endswith("traps.yml")] == []


def test_yaml_1_1_booleans_are_strings_and_numbers_follow_yaml_1_2() -> None:
    wfs, _ = read_repo("yaml-traps")
    env = wfs[".github/workflows/traps.yml"].env
    assert env["ENABLED"] == "yes"
    assert env["DISABLED"] == "off"
    assert env["NORWAY"] == "NO"
    assert env["ON_VALUE"] == "on"
    assert env["REAL_BOOL"] is True
    # `3.10` is the float 3.1 (the classic "python-version: 3.10" trap); quoted it stays "3.10".
    assert env["VERSION_FLOAT"] == 3.1 and isinstance(env["VERSION_FLOAT"], float)
    assert env["VERSION_STRING"] == "3.10"
    assert env["DECIMAL"] == 10  # YAML 1.1 would read 010 as octal 8
    assert env["OCTAL"] == 8 and env["HEX"] == 31
    assert env["SEXAGESIMAL"] == "1:20"  # YAML 1.1: 80
    assert env["DATE"] == "2024-01-01"  # no timestamp type
    assert env["EMPTY"] is None


@pytest.mark.parametrize(("scalar", "value"), [
    ("y", "y"), ("n", "n"), ("Yes", "Yes"), ("ON", "ON"), ("True", True), ("FALSE", False),
    ("~", None), ("Null", None), ("1_000", "1_000"), ("+12", 12), ("-0x1F", "-0x1F"),
    (".5", 0.5), ("1e3", 1000.0), ("'true'", "true"), ('"12"', "12"), ("0o19", "0o19"),
])
def test_core_schema_scalars(scalar: str, value: Any) -> None:
    data = load_yaml(f"v: {scalar}\n").data
    assert data["v"] == value and type(data["v"]) is type(value)


def test_python_version_float_trap_in_a_matrix_shows_as_github_shows_it() -> None:
    # [gh-parser] MatrixBuilder.cs: the name segment of a number is its text; 3.10 is 3.1.
    wf, errors = read_text("""
on: push
jobs:
  t:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: [3.10, "3.10"]
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
""")
    assert errors == []
    assert names(wf) == ["t (3.1)", "t (3.10)"]
    assert [j.steps[0].with_["python-version"] for j in wf.jobs] == [3.1, "3.10"]


# [docs-reuse] "YAML anchors and aliases": an alias repeats the anchored content.
def test_anchors_and_aliases_repeat_the_content() -> None:
    wfs, _ = read_repo("yaml-traps")
    first, second = wfs[".github/workflows/traps.yml"].jobs
    assert first.runs_on == second.runs_on == "ubuntu-22.04"
    assert first.defaults == second.defaults == {"run": {"shell": "bash", "working-directory": "src"}}
    assert [s.uses for s in second.steps] == ["actions/checkout@v4", None]
    assert second.steps[0].with_ == {"fetch-depth": 0}


@pytest.mark.parametrize(("text", "expected"), [
    # YAML 1.2 section 3.2.2.2: anchors need not be unique; an alias refers to the most
    # recent node with that anchor (PyYAML alone refuses "found duplicate anchor").
    ("a: &x 1\nb: *x\nc: &x [2]\nd: *x\n", {"a": 1, "b": 1, "c": [2], "d": [2]}),
    ("s:\n  - &co {uses: actions/checkout@v4}\n  - *co\nt:\n  - &co {uses: actions/checkout@v5}\n"
     "  - *co\n", {"s": [{"uses": "actions/checkout@v4"}] * 2,
                   "t": [{"uses": "actions/checkout@v5"}] * 2}),
])
def test_an_anchor_defined_again_replaces_the_earlier_one(text: str, expected: Any) -> None:
    result = load_yaml(text)
    assert (result.error, result.data) == (None, expected)


@pytest.mark.parametrize(("text", "error", "line"), [
    ("a: *x\nb: &x 1\n", "invalid YAML: found undefined alias 'x'", 1),
    # The node that defines x again precedes the alias inside it: the alias is that node.
    ("a: &x {k: v}\nb: &x [*x]\n", "YAML alias refers to itself (recursive structure)", 2),
])
def test_aliases_without_a_node_before_them_are_one_line(text: str, error: str, line: int) -> None:
    result = load_yaml(text)
    assert (result.data, result.error, result.error_line) == (None, error, line)


def test_merge_keys_are_reported() -> None:
    # GitHub supports anchors and aliases but not merge keys (`<<:`); this is not stated in
    # the GitHub docs page, only by third parties (e.g. frenck.dev, "GitHub Actions finally
    # supports YAML anchors (but not really)"), so it is reported, not guessed around.
    result = load_yaml("base: &b {a: 1}\njob:\n  <<: *b\n  c: 2\n")
    assert [line for line, _ in result.duplicates] == [3]
    assert "merge keys" in result.duplicates[0][1]


# [gh-parser] TemplateReader.cs: mapping keys compare case-insensitively (OrdinalIgnoreCase);
# a repeated key is an error ("'<key>' is already defined") and its value is skipped.
def test_duplicate_keys_reported_with_line_first_value_kept() -> None:
    wfs, errors = read_repo("yaml-traps")
    dupes = [e for e in errors if e.path == ".github/workflows/dupes.yml"]
    assert [(e.line, e.message) for e in dupes] == [
        (5, "duplicate key 'runs-on' (first at line 4)"),
        (8, "duplicate key 'Build' (first at line 3)"),
    ]
    wf = wfs[".github/workflows/dupes.yml"]
    assert [(j.id, j.runs_on) for j in wf.jobs] == [("build", "ubuntu-latest")]


def test_non_string_keys_become_text() -> None:
    # [gh-parser] TemplateReader.cs: a key that is not a string is converted with ToString().
    assert load_yaml("3.10: a\ntrue: b\n12: c\n").data == {"3.1": "a", "true": "b", "12": "c"}


def test_key_lines_are_remembered() -> None:
    data = load_yaml("a: 1\n\nb:\n  c: 2\n").data
    assert data.line_of("a") == 1 and data.line_of("b") == 3 and data["b"].line_of("c") == 4


def test_alias_expansion_is_bounded_like_github() -> None:
    # [gh-parser] YamlObjectReader.cs: c_maxYamlNodes = 50000 nodes traversed, aliases replayed.
    assert MAX_NODES == 50_000
    rows = "".join(f"k{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 4) + "]\n" for i in range(1, 12))
    result = load_yaml("k0: &a0 [x, y, z, w]\n" + rows)
    assert result.data is None and "alias" in result.error and result.error_line is not None


def test_nesting_is_bounded_with_a_line() -> None:
    text = "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5)) + "  " * (MAX_DEPTH + 5) + "v\n"
    result = load_yaml(text)
    assert result.error == f"YAML nests deeper than {MAX_DEPTH} levels"
    assert 1 < result.error_line <= MAX_DEPTH + 5


# --- expressions ----------------------------------------------------------------------------


def test_expression_substitution_keeps_type_only_for_a_whole_expression() -> None:
    ctx = {"matrix": {"os": ["self-hosted", "gpu"], "n": 2, "ok": True}}
    assert evaluate_string("${{ matrix.os }}", ctx) == ["self-hosted", "gpu"]
    assert evaluate_string("${{ matrix['n'] }}", ctx) == 2
    assert evaluate_string(" ${{ matrix['n'] }} ", ctx) == " 2 "  # text around it: format()
    assert evaluate_string("n=${{ matrix.n }} ok=${{ matrix.OK }}", ctx) == "n=2 ok=true"
    assert evaluate_string("${{ github.sha }}", ctx) == "${{ github.sha }}"
    assert evaluate_string("${{ matrix.n == 2 }}", ctx) == "${{ matrix.n == 2 }}"


def test_two_expressions_in_one_string_are_both_substituted() -> None:
    # Regression: `fullmatch` took "${{ a }}-${{ b }}" for one expression and left it unsolved.
    ctx = {"matrix": {"os": "linux", "arch": "x64"}}
    assert evaluate_string("${{ matrix.os }}-${{ matrix.arch }}", ctx) == "linux-x64"
    assert evaluate_string("${{ matrix.os }}-${{ github.ref }}", ctx) == "linux-${{ github.ref }}"


def test_nonexistent_property_of_a_known_context_is_empty() -> None:
    # [docs-contexts] "If you attempt to dereference a nonexistent property, it will evaluate
    # to an empty string." Only for a context known in full (a static matrix).
    known = {"matrix": FullContext(os="linux")}
    assert evaluate_string("x${{ matrix.extra }}y", known) == "xy"
    assert evaluate_string("${{ matrix.os.deeper }}", known) is None
    assert evaluate_string("x${{ matrix.extra }}y", {"matrix": {"os": "linux"}}) == "x${{ matrix.extra }}y"


def test_substitute_copies_and_keeps_lines() -> None:
    data = load_yaml("a: ${{ inputs.x }}\nb:\n  - ${{ inputs.x }}\n").data
    out = substitute(data, {"inputs": {"x": "v"}})
    assert out == {"a": "v", "b": ["v"]} and out.line_of("b") == 2
    assert data["a"] == "${{ inputs.x }}"


# --- workflow level: name, on, env, defaults, concurrency, permissions ---------------------
# [docs-syntax] `name`: "If you omit name, GitHub displays the workflow file path relative to
# the root of the repository." `on`: an event name, a list of events, or a mapping of events.


def test_workflow_level_fields() -> None:
    wfs, errors = read_repo("matrix-ci")
    assert errors == []
    wf = wfs[".github/workflows/ci.yml"]
    assert wf.name == "CI"
    assert wf.triggers == ["push", "pull_request"]
    assert wf.on == {"push": {"branches": ["main"]}, "pull_request": None}
    assert wf.env == {"FORCE_COLOR": "1"}
    assert wf.defaults == {"run": {"shell": "bash"}}
    assert wf.concurrency == {"group": "ci-${{ github.ref }}", "cancel-in-progress": True}
    assert wf.permissions == {"contents": "read"}
    wfs, _ = read_repo("reusable-chain")
    assert wfs[".github/workflows/test.yml"].name == ".github/workflows/test.yml"


@pytest.mark.parametrize(("on", "triggers"), [
    ("push", ["push"]),
    (["push", "pull_request"], ["push", "pull_request"]),
    ({"schedule": [{"cron": "0 0 * * *"}], "workflow_dispatch": None}, ["schedule", "workflow_dispatch"]),
    (None, []),
])
def test_triggers_of(on: Any, triggers: list[str]) -> None:
    assert triggers_of(on) == triggers


# --- job fields -----------------------------------------------------------------------------
# [docs-syntax] jobs.<job_id>.name / runs-on / container / services / steps[*] (uses, run, with,
# env, shell, working-directory, if, timeout-minutes, continue-on-error) / needs / if /
# timeout-minutes / strategy (fail-fast, max-parallel) / environment / concurrency /
# permissions / defaults / outputs.


def test_all_job_fields_are_read() -> None:
    wfs, _ = read_repo("matrix-ci")
    (job,) = wfs[".github/workflows/fields.yml"].jobs
    assert job.id == "deploy" and job.name == "Deploy to production" and job.line == 5
    assert job.runs_on == "ubuntu-24.04"
    assert job.needs == []
    assert job.if_ == "github.ref == 'refs/heads/main'"
    assert job.timeout_minutes == 45 and job.continue_on_error is False
    assert job.environment == {"name": "production", "url": "https://example.com"}
    assert job.concurrency == {"group": "deploy", "cancel-in-progress": False}
    assert job.permissions == {"contents": "read", "id-token": "write"}
    assert job.defaults == {"run": {"working-directory": "deploy"}}
    assert job.outputs == {"url": "${{ steps.ship.outputs.url }}"}
    assert job.env == {"REGION": "eu-west-1"}
    assert job.container == {"image": "node:20", "options": "--cpus 2"}
    assert job.services == {"redis": {"image": "redis:7", "ports": ["6379:6379"]}}
    assert (job.fail_fast, job.max_parallel) == (True, 1)
    ship, smoke = job.steps
    assert (ship.name, ship.id, ship.uses) == ("Ship", "ship", "./.github/actions/ship")
    assert ship.with_ == {"region": "${{ env.REGION }}"}
    assert ship.env == {"TOKEN": "${{ secrets.TOKEN }}"}
    assert (ship.if_, ship.timeout_minutes, ship.continue_on_error) == ("success()", 20, True)
    assert ship.composite is None  # no action.yml there (it may be created at run time)
    assert smoke.run == "./smoke-test.sh\necho done\n"
    assert (smoke.shell, smoke.working_directory) == ("pwsh", "tests")


def test_strategy_values_see_inputs() -> None:
    # read on its own, a callable workflow's input is its default (a dispatched one's is
    # what the user types: tests/test_dispatch_event.py)
    wf, _ = read_text("""
on:
  workflow_call:
    inputs:
      parallel: {type: number, default: 3}
jobs:
  j:
    runs-on: ubuntu-latest
    strategy:
      max-parallel: ${{ inputs.parallel }}
      matrix:
        n: [1]
    steps: [{run: echo}]
""")
    assert wf.jobs[0].max_parallel == 3


# [gh-parser] choosing-runner reusables: runs-on is a label, a list of labels, or a
# {group, labels} mapping; it may be an expression over the matrix.
def test_runs_on_forms() -> None:
    wfs, _ = read_repo("matrix-ci")
    wf = wfs[".github/workflows/ci.yml"]
    assert jobs_of(wf, "lint")[0].runs_on == "ubuntu-latest"
    assert [j.runs_on for j in jobs_of(wf, "test")] == [
        "ubuntu-latest", "ubuntu-latest", "windows-latest", "macos-14"]
    assert [j.runs_on for j in jobs_of(wf, "build")] == [
        ["self-hosted", "linux", "x64"], ["self-hosted", "linux", "arm64"]]
    assert [j.runs_on for j in jobs_of(wf, "package")] == [
        {"group": "big-runners", "labels": ["linux", "x64"]},
        {"group": "big-runners", "labels": ["linux", "arm64"]}]


def test_runs_on_whole_expression_keeps_the_matrix_value_type() -> None:
    wf, _ = read_text("""
on: push
jobs:
  j:
    runs-on: ${{ matrix.runner }}
    strategy:
      matrix:
        runner: [[self-hosted, gpu], {group: g}]
    steps: [{run: echo}]
""")
    assert [j.runs_on for j in wf.jobs] == [["self-hosted", "gpu"], {"group": "g"}]


def test_matrix_instances_and_substitution() -> None:
    wfs, _ = read_repo("matrix-ci")
    tests = jobs_of(wfs[".github/workflows/ci.yml"], "test")
    assert [j.matrix for j in tests] == [
        {"os": "ubuntu-latest", "python": "3.10"},
        {"os": "ubuntu-latest", "python": "3.12", "coverage": True},
        {"os": "windows-latest", "python": "3.12"},
        {"os": "macos-14", "python": "3.13"},
    ]
    assert all(j.needs == ["lint"] and (j.fail_fast, j.max_parallel) == (False, 4) for j in tests)
    assert [j.steps[1].with_ for j in tests][3] == {"python-version": "3.13"}
    assert tests[0].steps[2].name == "Test on ubuntu-latest / 3.10"
    # [docs-contexts] a key the static matrix lacks is null: rendered as "".
    assert [j.steps[2].run for j in tests] == [
        "pytest --cov=", "pytest --cov=true", "pytest --cov=", "pytest --cov="]


def test_dynamic_matrix_is_one_job_marked_dynamic() -> None:
    wfs, _ = read_repo("matrix-ci")
    (shard,) = jobs_of(wfs[".github/workflows/ci.yml"], "shard")
    assert shard.dynamic_matrix is True and shard.matrix == {}
    assert shard.name == "Shard ${{ matrix.shard }}"  # only known at run time
    assert shard.steps[0].run == "./run-shard.sh ${{ matrix.shard }}"
    wf, _ = read_text("""
on: push
jobs:
  j:
    runs-on: ubuntu-latest
    strategy:
      matrix: ${{ fromJSON(needs.setup.outputs.matrix) }}
    steps: [{run: echo}]
""")
    assert [(j.name, j.dynamic_matrix) for j in wf.jobs] == [("j", True)]


# --- display names ----------------------------------------------------------------------------
# [docs-syntax] jobs.<job_id>.name: "a name for the job, which is displayed in the GitHub UI".
# [gh-parser] MatrixBuilder.cs / JobNameBuilder.cs: the default name is the job name (or id)
# plus " (v1, v2)", the scalar leaves of the matrix *vectors* (include-added keys are merged
# after the name is built; an include that matched nothing shows all its values), nulls and
# empty strings skipped, cut to 100 characters. WorkflowTemplateEvaluator.cs: a name with an
# expression is evaluated after the strategy (no suffix) and falls back to the default when
# empty. The suffix on a plain name is also described by ChristopherHX/runner.server PR #78.


def test_display_names_of_the_matrix_ci() -> None:
    wfs, _ = read_repo("matrix-ci")
    assert names(wfs[".github/workflows/ci.yml"]) == [
        "lint",
        "Test (ubuntu-latest, 3.10)",
        "Test (ubuntu-latest, 3.12)",  # coverage came from include: not in the name
        "Test (windows-latest, 3.12)",
        "Test (macos-14, 3.13)",  # an include that matched nothing
        "Build linux-x64",  # name with an expression: evaluated, no suffix
        "Build linux-arm",
        "package (x64, -O2)",  # no name: job id; nested values flattened, "" and null skipped
        "package (arm64)",
        "plan",
        "Shard ${{ matrix.shard }}",
    ]


def test_display_name_rules() -> None:
    combo = {"os": "linux", "py": 3.1, "flag": True}
    assert display_name("build", None, {}, {}) == "build"
    assert display_name("build", "", combo, {}) == "build (linux, 3.1, true)"
    assert display_name("build", "Build", combo, {}) == "Build (linux, 3.1, true)"
    assert display_name("build", "Build ${{ matrix.os }}", combo, {}) == "Build linux"
    assert display_name("build", "Build ${{ inputs.kind }}", {}, {"kind": "release"}) == "Build release"
    assert display_name("build", "${{ matrix.none }}", FullContext(combo), {}) == "build (linux, 3.1, true)"
    assert display_name("build", "Build", combo, {}, suffix_keys=["os"]) == "Build (linux)"
    assert display_name("build", 42, {}, {}) == "42"
    assert matrix_suffix({"a": "", "b": None}) == ""
    assert matrix_suffix({"cfg": {"os": "linux", "tags": ["a", "", "b"]}}) == " (linux, a, b)"


def test_values_written_into_a_name_as_github_converts_them() -> None:
    """EvaluationResult.ConvertToString: an object is `Object`, an array `Array`, a number
    in .NET's G15 format; in ``format()`` and ``join()`` too."""
    wf, _ = read_text("""
on: push
jobs:
  j:
    name: >-
      Test ${{ matrix.cfg }} ${{ matrix.flags }} ${{ matrix.big }}
      ${{ format('{0}', matrix.x) }} ${{ join(matrix.cfgs, '+') }}
    runs-on: ubuntu-latest
    strategy:
      matrix:
        cfg: [{os: linux}]
        flags: [[-a]]
        big: [1.0e+15]
        x: [0.30000000000000004]
        cfgs: [[{a: 1}, {b: 2}]]
    steps: [{run: echo}]
""")
    assert names(wf) == ["Test Object Array 1E+15 0.3 Object+Object"]


@pytest.mark.parametrize(("name", "shown"), [
    ("${{ 'Build' }}", "Build (linux)"),  # a literal to GitHub's reader: suffixed
    ("${{ 'it''s' }}", "it's (linux)"),
    ("${{ '' }}", "j (linux)"),
    ("${{ ' ' }}", "  (linux)"),  # a literal, not empty
    ("${{ format(' ') }}", " "),  # evaluated, not empty: kept (only an empty name falls back)
    ("${{ matrix.none }}", "j (linux)"),
    ("${{ 'Build' }} ${{ matrix.os }}", "Build linux"),
])
def test_names_github_reads_as_literals(name: str, shown: str) -> None:
    """TemplateReader.ParseScalar turns a value that is only a quoted string in ``${{ }}``
    into that literal; WorkflowTemplateEvaluator.EvaluateJobName falls back to the default
    name only when the evaluated name is empty (IsNullOrEmpty)."""
    combo = FullContext({"os": "linux"})
    assert display_name("j", name, combo, {}) == shown


def test_a_matrix_job_that_never_runs_is_one_unexpanded_check() -> None:
    """GitHub skips a job whose `if:` is false before it expands the matrix: one check, the
    name as written (`native Z3 (${{ matrix.os }})`, actions/runner#952), a plain name
    without its suffix. A job that may run on some trigger is expanded as before."""
    wf, _ = read_text("""
on: push
jobs:
  z3:
    if: github.event_name == 'release'
    name: native Z3 (${{ matrix.os }})
    runs-on: ${{ matrix.os }}
    strategy: {matrix: {os: [ubuntu-latest, macos-15]}}
    steps: [{run: make}]
  plain:
    if: false
    runs-on: ubuntu-latest
    strategy: {matrix: {py: ['3.11', '3.12']}}
    steps: [{run: make}]
  runs:
    if: github.event_name == 'push'
    runs-on: ubuntu-latest
    strategy: {matrix: {py: ['3.11', '3.12']}}
    steps: [{run: make}]
""")
    assert wf is not None
    assert names(wf) == ["native Z3 (${{ matrix.os }})", "plain", "runs (3.11)", "runs (3.12)"]
    z3 = wf.jobs[0]
    assert z3.events == () and z3.matrix == {} and z3.run_time == {} and z3.name_parts == ()


def test_long_names_are_cut_to_100_characters() -> None:
    name = display_name("j", "x" * 90, {"os": "ubuntu-latest"}, {})
    assert len(name) == 100 and name.endswith("...")


def test_include_only_matrix_shows_every_value() -> None:
    wf, _ = read_text("""
on: push
jobs:
  j:
    name: Job
    runs-on: ubuntu-latest
    strategy:
      matrix:
        include:
          - {os: linux, extra: fast}
          - {os: mac}
    steps: [{run: echo}]
""")
    assert names(wf) == ["Job (linux, fast)", "Job (mac)"]


def test_an_excluded_combination_included_back_shows_every_value() -> None:
    """It matched no combination left after the exclude, so it is a new one: all its values
    are in the name (MatrixBuilder.GetUnmatchedVectors), its vectors first; an include
    that does match adds nothing to the name, also when it matches loosely."""
    wf, _ = read_text("""
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        os: [linux, mac]
        py: ['3.9', '3.12']
        exclude:
          - os: mac
            py: '3.12'
        include:
          - big: true
            os: mac
            py: '3.12'
          - py: 3.9
            legacy: yes
    steps: [{run: echo}]
""")
    assert names(wf) == ["test (linux, 3.9)", "test (linux, 3.12)", "test (mac, 3.9)",
                         "test (mac, 3.12, true)"]
    assert [j.matrix.get("legacy") for j in wf.jobs] == ["yes", None, "yes", None]


def test_nested_matrix_names() -> None:
    wfs, _ = read_repo("reusable-chain")
    release = wfs[".github/workflows/release.yml"]
    assert "Build (windows) / test / run-tests (2)" in names(release)


# --- reusable workflows -----------------------------------------------------------------------
# [docs-reuse] "Calling a reusable workflow": `uses: ./.github/workflows/x.yml` (local) or
# `{owner}/{repo}/.github/workflows/{filename}@{ref}`; inputs come from `with:`; "If a default
# parameter is not set, the default value of the input is false for a boolean, 0 for a number,
# and "" for a string" [docs-syntax]; matrix jobs may call a reusable workflow; "You can
# connect a maximum of four levels of workflows ... Loops in the workflow tree are not
# permitted." The checks list names a called job "<caller job name> / <called job name>":
# not in the docs; described in actions/runner issue #1917 ("<parent_job_name> /
# <reusable_workflow_name>").


def test_local_reusable_chain_is_nested() -> None:
    wfs, errors = read_repo("reusable-chain")
    assert errors == []
    release = wfs[".github/workflows/release.yml"]
    assert [(j.id, j.name) for j in release.jobs] == [
        ("prepare", "prepare"),
        ("build/compile", "Build (linux) / Compile linux"),
        ("build/test/run-tests", "Build (linux) / test / run-tests (1)"),
        ("build/test/run-tests", "Build (linux) / test / run-tests (2)"),
        ("build/compile", "Build (windows) / Compile windows"),
        ("build/test/run-tests", "Build (windows) / test / run-tests (1)"),
        ("build/test/run-tests", "Build (windows) / test / run-tests (2)"),
        ("publish", "publish"),
        ("scan", "scan"),
        ("notify", "notify"),
    ]
    compile_linux = release.jobs[1]
    # with: substituted into ${{ inputs.* }}; `runner` from its default; `level` (type
    # number, no default) is 0.
    assert compile_linux.runs_on == "ubuntu-22.04"
    assert compile_linux.steps[0].run == "make TARGET=linux OPT=true LEVEL=0"
    assert compile_linux.needs == ["prepare"]
    assert compile_linux.matrix == {"target": "linux"}
    assert compile_linux.called_workflow == ".github/workflows/build.yml"
    shard = release.jobs[3]
    assert shard.steps[0].run == "./test.sh unit-linux 2"
    assert shard.needs == ["prepare", "build/compile"]
    assert shard.matrix == {"target": "linux", "shard": 2}
    # The innermost file that defines the job, whose line `line` is.
    assert (shard.called_workflow, shard.line) == (".github/workflows/test.yml", 8)


def test_remote_reusable_workflow_is_opaque() -> None:
    wfs, _ = read_repo("reusable-chain")
    (scan,) = jobs_of(wfs[".github/workflows/release.yml"], "scan")
    assert scan.remote_workflow == "octo-org/security/.github/workflows/scan.yml@v2"
    assert scan.with_ == {"level": "high"} and scan.steps == [] and scan.runs_on is None


def test_called_workflow_read_on_its_own_uses_input_defaults() -> None:
    wfs, _ = read_repo("reusable-chain")
    assert [j.steps[0].run for j in wfs[".github/workflows/test.yml"].jobs] == [
        "./test.sh all 1", "./test.sh all 2"]
    build = wfs[".github/workflows/build.yml"]
    # A required input has no value until a caller passes one: left as written.
    assert build.jobs[0].name == "Compile ${{ inputs.target }}"


def test_with_expression_known_only_at_run_time_is_left_as_written() -> None:
    wf, errors = read_text("""
on: push
jobs:
  call:
    uses: ./.github/workflows/r.yml
    with:
      os: ${{ github.event.inputs.os }}
""", **{".github__workflows__r.yml": """
on:
  workflow_call:
    inputs:
      os: {type: string, default: ubuntu-latest}
jobs:
  inner:
    runs-on: ${{ inputs.os }}
    steps: [{run: echo}]
"""})
    assert errors == []
    assert wf.jobs[0].runs_on == "${{ inputs.os }}"


def test_called_workflow_must_be_reusable_and_declare_its_inputs() -> None:
    # [docs-reuse] "For a workflow to be reusable, the values for on must include
    # workflow_call"; [docs-syntax] "If a caller workflow passes an input that is not
    # specified in the called workflow, this results in an error."
    _, errors = read_text("""
on: push
jobs:
  call:
    uses: ./.github/workflows/r.yml
    with:
      typo: 1
""", **{".github__workflows__r.yml": """
on: push
jobs:
  inner:
    runs-on: ubuntu-latest
    steps: [{run: echo}]
"""})
    messages = [(e.path, e.line, e.message) for e in errors]
    assert ("w.yml", 4, "job 'call' calls .github/workflows/r.yml, which is not reusable: "
                        "its `on` has no `workflow_call`") in messages
    assert ("w.yml", 4, "job 'call' passes input 'typo', which .github/workflows/r.yml does "
                        "not declare") in messages


def test_required_input_not_passed_is_reported() -> None:
    _, errors = read_text("""
on: push
jobs:
  call:
    uses: ./.github/workflows/r.yml
""", **{".github__workflows__r.yml": """
on:
  workflow_call:
    inputs:
      target: {type: string, required: true}
jobs:
  inner:
    runs-on: ubuntu-latest
    steps: [{run: echo}]
"""})
    assert [e.message for e in errors] == [
        "job 'call' does not pass input 'target', which .github/workflows/r.yml requires"]


def _chain(levels: int) -> dict[str, str]:
    files = {"w.yml": "on: push\njobs:\n  c:\n    uses: ./.github/workflows/l1.yml\n"}
    for i in range(1, levels):
        files[f".github/workflows/l{i}.yml"] = (
            f"on: workflow_call\njobs:\n  c:\n    uses: ./.github/workflows/l{i + 1}.yml\n")
    files[f".github/workflows/l{levels}.yml"] = (
        "on: workflow_call\njobs:\n  leaf:\n    runs-on: ubuntu-latest\n    steps: [{run: echo}]\n")
    return files


def test_four_levels_of_workflows_allowed_five_rejected() -> None:
    workflows, errors = read_workflows(_chain(MAX_CALL_DEPTH - 1), ["w.yml"])
    assert errors == [] and [j.id for j in workflows[0].jobs] == ["c/c/c/leaf"]
    assert [j.name for j in workflows[0].jobs] == ["c / c / c / leaf"]
    _, errors = read_workflows(_chain(MAX_CALL_DEPTH), ["w.yml"])
    assert len(errors) == 1 and "nest deeper than 4 levels" in errors[0].message
    assert errors[0].path == ".github/workflows/l3.yml" and errors[0].line == 3


# --- composite actions ----------------------------------------------------------------------
# [docs-metadata] a composite action has `runs.using: composite` and `runs.steps`; its
# metadata file is action.yml or action.yaml; `inputs.<id>.default` applies when the step's
# `with` does not set the input. [docs-syntax] `uses: ./path` is a directory of the
# workflow's repository.


_COMPOSITE = "runs:\n  using: composite\n  steps:\n    - {uses: ./act/inner}\n"


@pytest.mark.parametrize(("before", "files", "error"), [
    ("", {}, ("w.yml", 6)),
    ("      - uses: actions/checkout@v4\n", {}, ("w.yml", 7)),
    ("      - run: git clone https://example.com/act.git act\n", {}, None),
    ("      - {uses: actions/checkout@v4, with: {repository: o/act, path: act}}\n", {}, None),
    ("      - uses: actions/download-artifact@v4\n", {}, None),
    ("", {"act__x__Dockerfile": "FROM alpine\n"}, None),
    ("", {"act__x__action.yaml": "runs: {using: node20, main: i.js}\n"}, None),
    # a composite action's own local action is looked for where the composite says
    ("", {"act__x__action.yml": _COMPOSITE}, ("act/x/action.yml", 4)),
], ids=["nothing-before", "checkout-of-itself", "a-script", "another-repository", "a-download",
        "docker-action", "action-yaml", "missing-inside-a-composite"])
def test_a_missing_local_action_is_an_error_unless_a_step_may_have_made_it(
        before: str, files: dict[str, str], error: tuple[str, int] | None) -> None:
    """GitHub fails the job: "Can't find 'action.yml', 'action.yaml' or 'Dockerfile' under
    ...". Not reported where an earlier step may have put it there."""
    wf, errors = read_text("on: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n"
                           f"{before}      - uses: ./act/x\n", **files)
    assert wf is not None
    found = [(e.path, e.line) for e in errors if "not found" in e.message]
    assert found == ([error] if error else []), errors


def test_local_composite_action_steps_are_inlined() -> None:
    wfs, errors = read_repo("composite-action")
    assert errors == []
    (web,) = wfs[".github/workflows/web.yml"].jobs
    checkout, setup, js, runtime, test = web.steps
    assert checkout.composite is None
    assert str(setup.with_["version"]) == "18"
    node, install, inner = setup.composite
    assert node.uses == "actions/setup-node@v4"
    assert str(node.with_["node-version"]) == "18"  # the step's `with`, from the matrix
    assert node.with_["cache"] == "npm"  # the action input's default
    assert (install.run, install.shell) == ("npm ci --cache npm", "bash")
    assert inner.uses == "./.github/actions/inner"  # action.yaml, nested
    assert [s.run for s in inner.composite] == ["echo inner"]
    assert js.composite is None  # a JavaScript action: nothing to inline
    assert runtime.composite is None  # not in the repository at parse time
    assert test.run == "npm test"


# --- reading from a file source -------------------------------------------------------------


def test_read_workflows_over_a_dict_source_and_normalized_paths() -> None:
    assert normalize("./.github//workflows/../workflows/x.yml") == ".github/workflows/x.yml"
    workflows, errors = read_workflows({"a/b.yml": b"on: push\njobs:\n  j:\n    runs-on: x\n"},
                                       ["./a/b.yml", "missing.yml"])
    assert [wf.path for wf in workflows] == ["a/b.yml"]
    assert [(e.path, e.message) for e in errors] == [("missing.yml", "no such file")]


# --- work bound -------------------------------------------------------------------------------


def test_a_huge_job_times_a_big_matrix_is_read_as_one_job() -> None:
    # Not GitHub behaviour: a bound of this reader, so that a 2 MB file stays seconds of work.
    env = "".join(f"      K{i}: v{i}\n" for i in range(2000))
    wf, errors = read_text(
        "on: push\njobs:\n  small:\n    runs-on: x\n    steps: [{run: echo}]\n"
        "  big:\n    needs: small\n    runs-on: x\n    strategy:\n      matrix:\n"
        "        a: [" + ", ".join(map(str, range(16))) + "]\n"
        "        b: [" + ", ".join(map(str, range(16))) + "]\n"
        "    env:\n" + env + "    steps: [{run: echo}]\n")
    assert [(e.line, e.message.split(":")[0]) for e in errors] == [(6, "job 'big'")]
    assert "too many to expand" in errors[0].message
    assert [(j.id, j.name, j.needs) for j in wf.jobs] == [("small", "small", []),
                                                         ("big", "big", ["small"])]
    assert len(wf.jobs[1].env) == 2000


def test_a_reader_of_past_runs_skips_the_schema_and_loads_each_text_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``schema=False`` (the history reader, which drops the errors) reads the same jobs
    without checking the file against GitHub's schema; a text read again, by any reader of
    the process, is not loaded again, and what the first read built is left as it was."""
    import laser_ci.workflows.parse as parse

    text = ("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stratgy: {}\n"
            "    strategy:\n      matrix:\n        py: ['3.11', '3.12']\n"
            "    steps:\n      - run: echo ${{ matrix.py }}\n  b:\n    needs: a\n"
            "    uses: ./.github/workflows/called.yml\n")
    called = "on: workflow_call\njobs:\n  c:\n    runs-on: ubuntu-latest\n    steps: [{run: make}]\n"
    files = {".github/workflows/w.yml": text, ".github/workflows/called.yml": called}
    parse._loaded.cache_clear()
    checked, errors = read_workflows(files, [".github/workflows/w.yml"])
    assert any("stratgy" in e.message for e in errors)
    loads = []
    monkeypatch.setattr(parse, "load_yaml", lambda raw: loads.append(raw) or load_yaml(raw))
    for _ in range(2):
        unchecked, quiet = read_workflows(files, [".github/workflows/w.yml"], schema=False)
        assert unchecked == checked and not quiet
    assert loads == []  # both files were loaded by the first read
    assert [j.name for j in checked[0].jobs] == ["a (3.11)", "a (3.12)", "b / c"]
    big = text + "#" * parse._KEPT_BYTES  # a file too large to keep is loaded each time
    read_workflows({**files, ".github/workflows/w.yml": big}, [".github/workflows/w.yml"])
    assert loads == [big]
