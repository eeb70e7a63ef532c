"""benchmarks/mutate_workflows.py: its mutations change what they say they change, are
the same for the same seed, and its run on gha-mini goes through the real CLI with no
crash; a file that makes the CLI crash is counted and written out."""

from __future__ import annotations

import random
from pathlib import Path

import bench
import gha_mini
import pytest
import yaml

DOC = {
    "on": {"push": None},
    "jobs": {
        "build": {"runs-on": "ubuntu-latest", "steps": [{"run": "make"}, {"uses": "a/b@v1"}]},
        "test": {"needs": "build", "runs-on": "ubuntu-latest", "steps": [{"run": "pytest"}]},
    },
}
TEXT = yaml.safe_dump(DOC, sort_keys=False)


def _module():
    return bench.load("mutate_workflows")


def test_node_paths_reach_every_node() -> None:
    paths = _module().node_paths(DOC)
    assert ("on",) in paths and ("jobs", "build", "steps", 1, "uses") in paths
    assert len(paths) == len(set(paths)) == 16  # 2 under on, 1 + 7 + 6 under jobs


@pytest.mark.parametrize("name", ["replace_node", "delete_node", "add_key", "bad_needs",
                                  "odd_matrix"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_tree_mutation_changes_the_document(name: str, seed: int) -> None:
    mod = _module()
    doc = yaml.safe_load(TEXT)
    what = getattr(mod, name)(doc, random.Random(seed))
    assert doc != DOC, what
    if name == "bad_needs":
        job = what.split("'")[1]
        assert doc["jobs"][job]["needs"] in (job, "ghost-job", [job, "ghost-job"], [[job]],
                                             {job: 1})
    if name == "odd_matrix":
        assert any("strategy" in j for j in doc["jobs"].values())


def test_replace_node_puts_the_value_at_the_path_it_names() -> None:
    mod = _module()
    for seed in range(20):
        doc = yaml.safe_load(TEXT)
        what = mod.replace_node(doc, random.Random(seed))
        shown = what.removeprefix("replace ").split(" with ")[0]
        path = tuple(int(p) if p.isdigit() else p for p in shown.split("."))
        value = mod.get_at(doc, path)
        assert what.endswith(mod._short(value)), what


@pytest.mark.parametrize(("fn", "check"), [
    ("truncate", lambda old, new: old.startswith(new)),
    ("insert_byte", lambda old, new: len(new) == len(old) + 1),
    ("double_line", lambda old, new: len(new.splitlines()) == len(old.splitlines()) + 1),
])
def test_text_mutations(fn: str, check) -> None:
    for seed in range(10):
        new, _ = getattr(_module(), fn)(TEXT, random.Random(seed))
        assert check(TEXT, new)


def test_mutate_is_deterministic_for_a_seed() -> None:
    mod = _module()
    a = [mod.mutate(TEXT, random.Random(7)) for _ in range(3)]
    b = [mod.mutate(TEXT, random.Random(7)) for _ in range(3)]
    assert a == b
    # the key `on` stays `on` through the YAML 1.1 round trip
    rng = random.Random(0)
    outs = [mod.mutate(TEXT, rng)[0] for _ in range(30)]
    assert not any(o.startswith("true:") or "\ntrue:" in o for o in outs)


def test_runs_on_the_fixture_without_a_crash(capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path) -> None:
    rc = _module().main([str(gha_mini.MINI), "--files", "6", "--mutations", "5", "--seed", "3",
                         "--crashes", str(tmp_path / "crashes")])
    out = capsys.readouterr().out
    assert "crashes (tracebacks): 0" in out, out
    runs = int(out.split("mutated runs: ")[1].split(" ")[0])
    assert runs >= 10
    ok = int(out.split("read cleanly (exit 0): ")[1].split("\n")[0])
    bad = int(out.split("reported errors (exit 1): ")[1].split("\n")[0])
    assert ok + bad == runs
    assert rc == 0
    assert not (tmp_path / "crashes").exists()


def test_a_crash_is_counted_and_written_out(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    mod = _module()

    def boom(root: Path, workflow_path: str) -> tuple[int, str, list[str], dict]:
        raise RuntimeError("boom")

    monkeypatch.setattr(mod, "estimate_file", boom)
    rc = mod.main([str(gha_mini.MINI), "--files", "1", "--mutations", "2",
                   "--crashes", str(tmp_path / "crashes")])
    captured = capsys.readouterr()
    assert rc == 1
    assert "crashes (tracebacks): 2" in captured.out
    assert "RuntimeError: boom" in captured.err
    written = sorted((tmp_path / "crashes").iterdir())
    assert len(written) == 2 and written[0].read_text().startswith("# ")
