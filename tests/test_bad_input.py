"""`laser-ci estimate` on bad input: one clear error line per problem, never a traceback, and
the good files next to a bad one are still estimated.

Each case writes ``good.yml`` and one bad file into a fresh folder and runs the real CLI
(``laser_ci.cli.main``) in-process with the ``fake_predictor`` fixture (tests/conftest.py).
Expected: exit code 1; stderr has ``error: <file>:<line>: <reason>`` naming the bad file;
no "Traceback"; ``good.yml`` appears in stdout.

GitHub's own reader reports such problems the same way, per file and with a line (e.g.
"(Line: 1, Col: 1): Required property is missing: jobs"; github.com/actions/runner
src/Sdk/WorkflowParser/ObjectTemplating/TemplateReader.cs), and stops alias expansion at
50,000 nodes ("Maximum YAML nodes exceeded", Conversion/YamlObjectReader.cs).
"""

from __future__ import annotations

import json
import os
import re
import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from laser_ci.cli import main
from laser_ci.workflows.yamlload import load_yaml

GOOD = """name: Good
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: make
"""

ERROR_LINE = re.compile(r"^error: (?P<file>[^:]+):(?P<line>\d+): (?P<reason>.+)$")


def billion_laughs() -> str:
    rows = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        rows.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(rows) + "\njobs:\n  j:\n    runs-on: *j\n"


def deep_flow() -> str:
    return "on: push\njobs: " + "[" * 50_000 + "]" * 50_000 + "\n"


def deep_block() -> str:
    body = "".join("  " * (i + 1) + f"k{i}:\n" for i in range(200))
    return "on: push\njobs:\n" + body + "  " * 201 + "leaf\n"


JOB = "    runs-on: ubuntu-latest\n    steps: [{run: echo}]\n"

# (case id, file content, expected line, a word of the reason)
CASES: list[tuple[str, str | bytes, int, str]] = [
    ("invalid-yaml", "on: push\njobs:\n  a:\n    runs-on: [ubuntu\n    steps: x\n", 5, "invalid YAML"),
    ("tab-indent", "on: push\njobs:\n\ta: 1\n", 3, "invalid YAML"),
    ("not-a-mapping", "- on\n- jobs\n", 1, "expected a mapping"),
    ("scalar-document", "just text\n", 1, "expected a mapping"),
    ("no-jobs", "name: x\non: push\n", 1, "no `jobs:`: a workflow needs at least one job"),
    ("jobs-empty", "on: push\njobs: {}\n", 2, "`jobs:` is empty: a workflow needs at least one job"),
    ("jobs-null", "on: push\njobs:\n", 2, "`jobs:` is empty"),
    ("jobs-list", "on: push\njobs:\n  - a\n", 2, "`jobs:` is a list, not a mapping of job ids"),
    ("job-not-a-mapping", "on: push\njobs:\n  a: 3\n", 3, "not a mapping"),
    ("non-utf8", b"on: push\njobs:\n  a:\n    runs-on: caf\xe9\n", 4, "UTF-8"),
    ("utf16", "on: push\njobs: {}\n".encode("utf-16"), 1, "UTF-8"),
    ("nul-byte", "on: push\njobs:\n  a:\n    runs-on: x\x00\n", 4, "special character"),
    ("empty", "", 1, "empty"),
    ("only-comments", "# nothing here\n\n", 1, "empty"),
    ("two-documents", "on: push\n---\njobs: {}\n", 2, "single document"),
    ("python-tag", "on: !!python/object/apply:os.system [echo]\njobs: {}\n", 1, "constructor"),
    ("duplicate-job", f"on: push\njobs:\n  a:\n{JOB}  A:\n{JOB}", 6, "duplicate key"),
    ("needs-missing", f"on: push\njobs:\n  a:\n    needs: ghost\n{JOB}", 3, "does not exist"),
    ("needs-cycle", f"on: push\njobs:\n  a:\n    needs: b\n{JOB}  b:\n    needs: a\n{JOB}", 3, "cycle"),
    ("alias-bomb", billion_laughs(), 5, "alias"),  # e: 9**5 > 50,000 nodes
    ("many-nodes", "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n"
     + "      - run: x\n" * 26_000, 6, "YAML has more than 50,000 nodes"),  # no alias
    ("deep-flow", deep_flow(), 2, "nests deeper"),
    ("deep-block", deep_block(), 65, "nests deeper"),
]


def run_estimate(*args: str) -> Result:
    return CliRunner().invoke(main, ["estimate", *args])


def assert_clean_failure(result: Result) -> None:
    """Exit 1 through sys.exit, never an exception escaping, never a traceback."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output and "Traceback" not in result.stderr


def error_lines(result: Result) -> list[re.Match[str]]:
    lines = [x for x in result.stderr.splitlines() if x.startswith("error: ")]
    matches = [ERROR_LINE.match(x) for x in lines]
    assert all(matches), lines  # every error line is `error: <file>:<line>: <reason>`
    return [m for m in matches if m]


@pytest.mark.usefixtures("fake_predictor")
@pytest.mark.parametrize(("content", "line", "reason"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_file_next_to_a_good_one(tmp_path: Path, content: str | bytes, line: int,
                                     reason: str) -> None:
    (tmp_path / "good.yml").write_text(GOOD)
    bad = tmp_path / "bad.yml"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    start = time.perf_counter()
    result = run_estimate(str(tmp_path), "--format", "json")
    elapsed = time.perf_counter() - start
    assert elapsed < 5, f"took {elapsed:.1f}s"
    assert_clean_failure(result)
    (err,) = error_lines(result)
    assert err["file"] == "bad.yml"
    assert int(err["line"]) == line
    assert reason in err["reason"]
    out = json.loads(result.stdout)
    good = [wf for wf in out["workflows"] if wf["path"] == "good.yml"]
    assert len(good) == 1 and [j["id"] for j in good[0]["jobs"]] == ["build"]
    assert out["errors"] == [{"path": "bad.yml", "line": line, "message": err["reason"]}]


@pytest.mark.usefixtures("fake_predictor")
def test_a_needs_cycle_has_no_critical_path(tmp_path: Path) -> None:
    """A `needs` cycle is an error line naming the file and the first job's line; GitHub
    runs none of the jobs, so the critical path is unknown (`?`, JSON null), not the
    length of a chain with the cycle broken somewhere."""
    (tmp_path / "good.yml").write_text(GOOD)
    (tmp_path / "bad.yml").write_text(
        f"on: push\njobs:\n  x:\n{JOB}  a:\n    needs: [x, c]\n{JOB}  b:\n    needs: a\n{JOB}"
        f"  c:\n    needs: b\n{JOB}")
    result = run_estimate(str(tmp_path), "--format", "json")
    assert_clean_failure(result)
    (err,) = error_lines(result)
    assert (err["file"], err["line"], err["reason"]) == ("bad.yml", "6", "`needs` cycle: a -> c -> b -> a")
    by_path = {wf["path"]: wf for wf in json.loads(result.stdout)["workflows"]}
    assert by_path["bad.yml"]["critical_path_s"] is None
    assert by_path["good.yml"]["critical_path_s"] > 0
    table = run_estimate(str(tmp_path))
    assert "  critical path ? (its `needs` form a cycle) · runner time" in table.stdout


@pytest.mark.usefixtures("fake_predictor")
def test_ten_megabyte_file(tmp_path: Path) -> None:
    (tmp_path / "good.yml").write_text(GOOD)
    with open(tmp_path / "huge.yml", "w") as fh:
        fh.write("on: push\njobs:\n  a:\n    runs-on: x\n    env:\n")
        row = "      K{:07d}: " + "v" * 80 + "\n"
        for i in range(10 * 1024 * 1024 // 96):
            fh.write(row.format(i))
    start = time.perf_counter()
    result = run_estimate(str(tmp_path))  # default table output
    assert time.perf_counter() - start < 5
    assert_clean_failure(result)
    (err,) = error_lines(result)
    assert (err["file"], err["line"]) == ("huge.yml", "1")
    assert "larger than 2 MB" in err["reason"]
    assert "good.yml" in result.stdout and "huge.yml" not in result.stdout


def test_alias_bomb_is_refused_quickly_in_bounded_memory() -> None:
    tracemalloc.start()
    start = time.perf_counter()
    try:
        loaded = load_yaml(billion_laughs())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 5
    assert loaded.data is None and "alias" in (loaded.error or "")
    assert peak < 20 * 1024 * 1024


@pytest.mark.usefixtures("fake_predictor")
def test_reusable_workflow_cycle(tmp_path: Path) -> None:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "good.yml").write_text(GOOD)
    (workflows / "caller.yml").write_text("on: push\njobs:\n  go:\n    uses: ./.github/workflows/a.yml\n")
    (workflows / "a.yml").write_text("on: workflow_call\njobs:\n  x:\n    uses: ./.github/workflows/b.yml\n")
    (workflows / "b.yml").write_text("on: workflow_call\njobs:\n  y:\n    uses: ./.github/workflows/a.yml\n")
    result = run_estimate(str(workflows), "--format", "json")
    assert_clean_failure(result)
    errors = error_lines(result)
    assert errors and all(e["reason"].startswith("reusable workflow cycle") for e in errors)
    assert {(e["file"], e["line"]) for e in errors} <= {
        (".github/workflows/a.yml", "3"), (".github/workflows/b.yml", "3")}
    paths = [wf["path"] for wf in json.loads(result.stdout)["workflows"]]
    assert ".github/workflows/good.yml" in paths


@pytest.mark.usefixtures("fake_predictor")
def test_good_folder_exits_zero(tmp_path: Path) -> None:
    (tmp_path / "good.yml").write_text(GOOD)
    result = run_estimate(str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "good.yml" in result.stdout and result.stderr == ""


@pytest.mark.usefixtures("fake_predictor")
def test_nonexistent_path(tmp_path: Path) -> None:
    result = run_estimate(str(tmp_path / "nope.yml"))
    assert_clean_failure(result)
    assert "error: " in result.stderr and "nope.yml" in result.stderr
    assert "no such file" in result.stderr


@pytest.mark.usefixtures("fake_predictor")
@pytest.mark.parametrize(("make", "in_folder", "named"), [
    (lambda p: p.symlink_to(p.parent / "gone.yml"), "odd.yml: broken symbolic link",
     "odd.yml: broken symbolic link"),
    (Path.mkdir, "odd.yml: a folder, not a workflow file",
     "{arg}: no .yml or .yaml files in this folder"),  # a folder named: as given
    (os.mkfifo, "odd.yml: not a regular file", "odd.yml: not a regular file"),  # open() blocks
], ids=["broken-link", "folder", "fifo"])
def test_a_workflow_name_that_is_not_a_file(tmp_path: Path, make, in_folder: str, named: str) -> None:
    """In a folder, and named on the command line: one line naming it (repo-relative), the
    rest estimated."""
    (tmp_path / "good.yml").write_text(GOOD)
    make(tmp_path / "odd.yml")
    odd = str(tmp_path / "odd.yml")
    for args, expected in (([str(tmp_path)], in_folder), ([str(tmp_path / "good.yml"), odd], named)):
        result = run_estimate(*args)
        assert_clean_failure(result)
        assert "good.yml" in result.stdout
        lines = [x for x in result.stderr.splitlines() if "odd.yml" in x]
        assert lines == ["error: " + expected.format(arg=odd)], result.stderr


@pytest.mark.usefixtures("fake_predictor")
def test_a_link_out_of_the_repository_is_not_followed(tmp_path: Path) -> None:
    """A workflow, or a called one, linked to a file outside the checkout: never read."""
    outside = tmp_path / "outside.yml"
    outside.write_text(GOOD.replace("build:", "secret_job:"))
    repo = tmp_path / "repo"
    wf = repo / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "link.yml").symlink_to(outside)
    (wf / "ci.yml").write_text("on: push\njobs:\n  call:\n    uses: ./.github/workflows/link.yml\n"
                               "  ok:\n" + JOB)
    result = run_estimate(str(wf), "--repo-root", str(repo))
    assert_clean_failure(result)
    assert "secret_job" not in result.output
    assert " ok " in result.stdout
    assert result.stderr.splitlines() == [
        "error: .github/workflows/link.yml: a symbolic link out of the repository",
        "error: .github/workflows/ci.yml:3: cannot read called workflow .github/workflows/link.yml",
    ]


@pytest.mark.usefixtures("fake_predictor")
def test_links_that_lead_nowhere_are_one_line_each_as_target_and_as_called(tmp_path: Path) -> None:
    """A link loop, a broken link out of the repository, a link to a folder outside it and a
    NUL byte in a called path: each is one error line, whether it is a workflow in the
    folder or called by one, and the rest is estimated (these used to raise)."""
    repo = tmp_path / "repo"
    wf = repo / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "loop.yml").symlink_to("loop.yml")
    (wf / "broken_out.yml").symlink_to(tmp_path / "nowhere" / "x.yml")
    (wf / "outdir.yml").symlink_to(tmp_path)
    calls = "".join(f"  c{i}:\n    uses: {u}\n" for i, u in enumerate(
        ["./.github/workflows/loop.yml", "./.github/workflows/broken_out.yml",
         "./.github/workflows/outdir.yml", '"./.github/workflows/a\\0.yml"']))
    (wf / "caller.yml").write_text("on: push\njobs:\n" + calls + "  ok:\n" + JOB)
    for args in ([str(wf)], [str(wf / "loop.yml"), str(wf / "caller.yml")]):
        result = run_estimate(*args, "--repo-root", str(repo))
        assert_clean_failure(result)
        assert " ok " in result.stdout
        lines = result.stderr.splitlines()
        for name, reason in [("loop.yml", "a symbolic link loop"),
                             ("broken_out.yml", "a symbolic link out of the repository"),
                             ("outdir.yml", "a symbolic link out of the repository"),
                             ("a .yml", "not a valid path (a NUL byte in its name)")]:
            about = [x for x in lines if x.startswith(f"error: .github/workflows/{name}:")]
            assert about == [f"error: .github/workflows/{name}: {reason}"], lines
        assert len([x for x in lines if "cannot read called workflow" in x]) == 4, lines


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads past file permissions")
@pytest.mark.usefixtures("fake_predictor")
def test_a_called_workflow_behind_a_folder_it_may_not_enter(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "locked").mkdir()
    (repo / ".github" / "locked" / "a.yml").write_text(GOOD)
    (repo / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  c:\n    uses: ./.github/locked/a.yml\n  ok:\n" + JOB)
    (repo / ".github" / "locked").chmod(0o644)  # readable, not searchable
    try:
        result = run_estimate(str(repo / ".github" / "workflows"))
    finally:
        (repo / ".github" / "locked").chmod(0o755)
    assert_clean_failure(result)
    assert "error: .github/locked/a.yml: not readable (Permission denied)" in result.stderr


@pytest.mark.usefixtures("fake_predictor")
def test_hostile_names_reach_the_terminal_as_one_plain_line(tmp_path: Path) -> None:
    """Escape sequences and newlines in a file name or a job name (a PR writes both) print as
    spaces, on a terminal too (``color=True``: click keeps escapes for a TTY), so they can
    neither drive the terminal nor start a line a CI runner reads as a workflow command."""
    (tmp_path / "a\n::error::x.yml").write_text(
        GOOD.replace("  build:\n", '  build:\n    name: "b\\e]0;title\\a\\n::warning::w"\n'))
    (tmp_path / "bad\x1b[2J.yml").write_text("on: push\njobs: [\n")
    result = CliRunner().invoke(main, ["estimate", str(tmp_path)], color=True)
    assert_clean_failure(result)
    for out in (result.stdout, result.stderr):
        assert "\x1b" not in out and "\x07" not in out
        assert not [x for x in out.splitlines() if x.startswith("::")], out
    assert "a ::error::x.yml" in result.stdout and "b ]0;title  ::warning::w" in result.stdout
    assert result.stderr.startswith("error: bad [2J.yml:3: invalid YAML")


@pytest.mark.usefixtures("fake_predictor")
def test_folder_without_workflows(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hi")
    result = run_estimate(str(tmp_path))
    assert_clean_failure(result)
    assert "no .yml or .yaml files" in result.stderr


@pytest.mark.usefixtures("fake_predictor")
@pytest.mark.parametrize("root_file", [None, "action.yml"])
def test_a_repository_root_means_its_workflows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               root_file: str | None) -> None:
    """`laser-ci estimate .` at a checkout (or a repository root given by path) estimates
    its .github/workflows; a root's own .yml (an action.yml) is no workflow."""
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "good.yml").write_text(GOOD)
    if root_file:
        (tmp_path / root_file).write_text("name: An action\nruns: {using: composite, steps: []}\n")
    monkeypatch.chdir(tmp_path)
    for arg in (".", str(tmp_path)):
        result = run_estimate(arg, "--format", "json")
        assert result.exit_code == 0, result.output
        assert result.stderr == ""
        paths = [wf["path"] for wf in json.loads(result.stdout)["workflows"]]
        assert paths == [".github/workflows/good.yml"]


def test_bad_option_exits_2(tmp_path: Path) -> None:
    result = run_estimate("--no-such-option", str(tmp_path))
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    result = run_estimate("--format", "xml", str(tmp_path))
    assert result.exit_code == 2


@pytest.mark.usefixtures("fake_predictor")
def test_a_mistyped_first_path_does_not_move_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "actions" / "setup").mkdir(parents=True)
    (repo / ".github" / "actions" / "setup" / "action.yml").write_text(
        "runs:\n  using: composite\n  steps:\n    - run: make deps\n      shell: bash\n")
    ci = repo / ".github" / "workflows" / "ci.yml"
    ci.write_text("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
                  "      - uses: ./.github/actions/setup\n      - run: make test\n")
    alone = run_estimate(str(ci), "--format", "json")
    assert alone.exit_code == 0, alone.output
    typo = run_estimate(str(tmp_path / "typo.yml"), str(ci), "--format", "json")
    assert_clean_failure(typo)
    assert typo.stderr.splitlines() == [f"error: {tmp_path / 'typo.yml'}: no such file or directory"]
    # The same workflow, read against the same root: its path and text are unchanged.
    assert json.loads(typo.stdout)["workflows"] == json.loads(alone.stdout)["workflows"]
    assert json.loads(typo.stdout)["workflows"][0]["path"] == ".github/workflows/ci.yml"


@pytest.mark.usefixtures("fake_predictor")
def test_a_path_that_is_not_there_is_named_as_typed(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # with no path there, the root fell back to the path's folder, and the line named
    # only the last part ('nothere'), relative to that guess
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "elsewhere" / "nothere"
    result = run_estimate(str(missing))
    assert_clean_failure(result)
    assert result.stderr.splitlines() == [f"error: {missing}: no such file or directory"]


@pytest.mark.usefixtures("fake_predictor")
@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_a_name_the_terminal_cannot_encode_is_printed_escaped(tmp_path: Path, fmt: str) -> None:
    """A CJK or emoji job name on a cp1252 console (Windows, output redirected): escaped,
    not a UnicodeEncodeError traceback; JSON stays the same value."""
    (tmp_path / "ci.yml").write_text('on: push\njobs:\n  t:\n    name: "测试 🚀"\n'
                                     "    runs-on: ubuntu-latest\n    steps:\n      - run: x\n",
                                     encoding="utf-8")
    result = CliRunner(charset="cp1252").invoke(
        main, ["estimate", str(tmp_path / "ci.yml"), "--format", fmt])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "Traceback" not in result.stderr
    if fmt == "json":
        assert json.loads(result.stdout)["workflows"][0]["jobs"][0]["name"] == "测试 🚀"
    else:
        assert "\\u6d4b\\u8bd5 \\U0001f680" in result.stdout


@pytest.mark.usefixtures("fake_predictor")
def test_an_integer_too_large_for_a_double_is_infinite_not_an_abort(tmp_path: Path) -> None:
    """GitHub holds numbers as doubles: a 400-digit integer in a name or an exclude is
    Infinity, not an OverflowError that stopped the whole estimate."""
    big = "9" * 400
    (tmp_path / "ci.yml").write_text(
        "on: push\njobs:\n  b:\n    name: Build ${{ matrix.n }}\n    runs-on: ubuntu-latest\n"
        f"    strategy:\n      matrix:\n        n: [{big}, 1]\n        exclude: [{{n: 1}}]\n"
        "    steps: [{run: make}]\n")
    result = run_estimate(str(tmp_path / "ci.yml"), "--format", "json")
    assert result.exit_code == 0, result.output
    (job,) = json.loads(result.stdout)["workflows"][0]["jobs"]
    assert job["name"] == "Build Infinity"


@pytest.mark.usefixtures("fake_predictor")
def test_a_loose_workflow_file_is_not_told_its_local_actions_are_missing(tmp_path: Path) -> None:
    """A workflow file outside any repository (no .github above it): the root is a guess,
    so its ./ actions are not known to be missing; with --repo-root they are."""
    (tmp_path / "ci.yml").write_text("on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n"
                                     "    steps:\n      - uses: ./.github/actions/setup\n")
    assert run_estimate(str(tmp_path / "ci.yml")).exit_code == 0
    given = run_estimate(str(tmp_path / "ci.yml"), "--repo-root", str(tmp_path))
    assert given.exit_code == 1 and "local action ./.github/actions/setup not found" in given.stderr
