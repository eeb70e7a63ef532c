"""benchmarks/sweep_workflows.py on gha-mini: the labeled runs' files and the corpus's,
hostile versions among them, go through the real CLI with no traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import bench
import gha_mini
import pytest

HOSTILE = {
    "bad-yaml": "jobs: [unclosed\n",
    "not-a-mapping": "- just\n- a list\n",
    "missing-action": ("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                       "      - uses: ./.github/actions/absent\n"),
    "missing-called": "on: push\njobs:\n  a:\n    uses: ./.github/workflows/absent.yml\n",
}


def _module():
    return bench.load("sweep_workflows")


@pytest.fixture
def data(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    shutil.copytree(gha_mini.MINI, d)
    with (d / "blobs.jsonl").open("a", encoding="utf-8") as blobs, \
            (d / "corpus.jsonl").open("a", encoding="utf-8") as corpus:
        for name, text in HOSTILE.items():
            blobs.write(json.dumps({"id": f"hostile-{name}", "text": text}) + "\n")
            corpus.write(json.dumps({"repo": "hostile/repo", "blob": f"hostile-{name}",
                                     "path": f".github/workflows/{name}.yml"}) + "\n")
    return d


def test_corpus_sweep_counts_errors_without_crashing(data: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    mod = _module()
    todo = mod.corpus_files(str(data))
    assert {label for label, _, _ in todo} >= {"hostile/repo"}
    assert all(len(files) == 1 for _, _, files in todo)  # each file alone in its checkout
    assert mod.main_([str(data), "--corpus"]) == 0
    out = capsys.readouterr().out
    assert "crashes (tracebacks): 0" in out
    assert f"workflow files: {len(todo)} " in out
    reported = int(out.split("reported errors (exit 1): ")[1].split("\n")[0])
    assert reported >= 2  # the invalid YAML and the list at least
    assert "invalid YAML" in out


def test_labeled_sweep_dedupes_file_versions(data: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    mod = _module()
    todo = mod.labeled_files(str(data))
    runs = [json.loads(line) for line in (data / "runs.jsonl").read_text().splitlines()]
    versions = {(r["repo"], r["files"].get(r["workflow_path"], r["sha"])) for r in runs}
    assert len(todo) == len(versions) < len(runs)
    assert mod.main_([str(data), "--limit", "3"]) == 0
    assert "workflow files: 3 " in capsys.readouterr().out


def test_schema_sweep_names_the_refused_files(data: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with (data / "blobs.jsonl").open("a", encoding="utf-8") as blobs, \
            (data / "corpus.jsonl").open("a", encoding="utf-8") as corpus:
        blobs.write(json.dumps({"id": "typo", "text": "on: push\njobs:\n  a: {runs_on: x}\n"}) + "\n")
        corpus.write(json.dumps({"repo": "typo/repo", "blob": "typo",
                                 "path": ".github/workflows/typo.yml"}) + "\n")
    assert _module().main_([str(data), "--corpus", "--schema"]) == 0
    out = capsys.readouterr().out
    assert "typo/repo .github/workflows/typo.yml:3: not a valid workflow" in out
    assert "refused by the schema: " in out


@pytest.mark.usefixtures("fake_predictor")
def test_checkout_sweep_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "me+it@abc" / ".github"
    (root / "workflows").mkdir(parents=True)
    (root / "actions" / "setup").mkdir(parents=True)
    (root / "actions" / "setup" / "action.yml").write_text(
        "runs:\n  using: composite\n  steps: [{run: echo, shell: bash}]\n")
    (root / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ${{ github.repository == 'me/it' && 'depot-x' "
        "|| 'ubuntu-latest' }}\n    steps: [{uses: $/.github/actions/setup}]\n"
        "  b: {runs-on: ubuntu-latest, steps: [{run: x}]}\n")
    assert _module().main_([str(tmp_path), "--checkouts"]) == 0
    out = capsys.readouterr().out
    assert "| me+it@abc | 1 | 2 | 0 | 1 (0) | 0 |" in out  # depot-x: not priced
    assert "crashes (tracebacks): 0" in out
    assert "`$/` read as `./` in me+it@abc: jobs 2 / 2" in out and ": equal" in out
