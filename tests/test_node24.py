"""Every action the Action and this repository's workflows use is pinned by its full commit
SHA, with its version in a comment, at a release that runs on Node 24 (GitHub forced Node 24
from June 2026 and removed Node 20 from its runners on 2026-09-16).

Where the pins come from (no network here; the stored GitHub index, two sources each):
- actions/checkout v6.0.2 de0fac2e…: pinned "# v6.0.2" in many public workflows; checkout
  runs on node24 from v5.0.0.
- actions/setup-python v6.2.0 a309ff8b…: pypa/gh-action-pypi-publish#408 and
  apache/airflow#64021 (v5.6.0 -> v6.2.0, "Node 20 -> Node 24"); node24 from v6.0.0.
- actions/cache v5.0.3 cdf6c1fa…: pinned "# v5.0.3" in many public workflows; the v5.0.0
  release notes: "actions/cache@v5 runs on the Node.js 24 runtime" (v4.3.0 is the last
  node20 release).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# the Actions, this repository's workflows, and the example workflows the docs tell users to
# copy (they use this repository's own actions at a release tag, as the README does)
FILES = [ROOT / "action.yml", ROOT / "learn" / "action.yml",
         *sorted((ROOT / ".github" / "workflows").glob("*.y*ml")),
         *sorted((ROOT / "examples" / "learn").glob("*.y*ml"))]
OWN = "laser-ci/laser-ci"

# the last major of each action whose releases run on Node 20 (or older)
NODE20_MAJORS = {
    "actions/checkout": 4,
    "actions/setup-python": 5,
    "actions/cache": 4,
    "actions/upload-artifact": 4,
    "actions/download-artifact": 4,
    "actions/setup-node": 4,
    "actions/github-script": 7,
}
# commits of known Node 20 releases (a SHA pinned with a misleading version comment)
NODE20_SHAS = {
    "11bd71901bbe5b1630ceea73d27597364c9af683": "actions/checkout v4.2.2",
    "a26af69be951a213d495a4c3e4e4022e16d87065": "actions/setup-python v5.6.0",
    "5a3ec84eff668545956fd18022155c47e93e2684": "actions/cache v4.2.3",
}
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>[^\s#]+)\s*(?:#\s*(?P<comment>.*))?$")
VERSION = re.compile(r"\bv(?P<major>\d+)(?:\.\d+){0,2}\b")


def uses_lines(text: str) -> list[tuple[int, str, str]]:
    """``(line number, ref, comment)`` of every ``uses:`` of a workflow or action file."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        m = USES.match(line)
        if m:
            out.append((n, m.group("ref"), (m.group("comment") or "").strip()))
    return out


def problems(text: str) -> list[str]:
    """What is wrong with the ``uses:`` pins of one file, one line each."""
    found = []
    for n, ref, comment in uses_lines(text):
        if ref.startswith("./") or ref.startswith("docker://"):
            continue  # this repository's own action or workflow; a container
        action, _, pin = ref.partition("@")
        action = "/".join(action.split("/")[:2])  # owner/repo of owner/repo/path
        if action == OWN:
            continue  # laser-ci's own actions, in an example: the user pins the release
        if not re.fullmatch(r"[0-9a-f]{40}", pin):
            found.append(f"line {n}: {ref} is not pinned by a full commit SHA")
            continue
        if pin in NODE20_SHAS:
            found.append(f"line {n}: {ref} is {NODE20_SHAS[pin]}, a Node 20 release")
            continue
        v = VERSION.search(comment)
        if v is None:
            found.append(f"line {n}: {ref} has no version in a comment (# vX.Y.Z)")
            continue
        last20 = NODE20_MAJORS.get(action)
        if last20 is not None and int(v.group("major")) <= last20:
            found.append(f"line {n}: {action} {v.group(0)} runs on Node 20")
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_action_is_a_node24_release_pinned_by_sha(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert problems(text) == []


def test_the_files_use_actions() -> None:
    """The check reads something: the Action's and CI's pins are found."""
    refs = [ref for p in FILES for _, ref, _ in uses_lines(p.read_text(encoding="utf-8"))]
    assert any(r.startswith("actions/setup-python@") for r in refs)
    assert any(r.startswith("actions/cache@") for r in refs)
    assert any(r.startswith("actions/checkout@") for r in refs)


@pytest.mark.parametrize("line, why", [
    ("      uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0",
     "a Node 20 release"),
    ("      uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v6.2.0",
     "a Node 20 release"),  # a Node 20 commit under a Node 24 version comment
    ("      uses: actions/cache@0123456789abcdef0123456789abcdef01234567 # v4.3.0",
     "runs on Node 20"),
    ("      - uses: actions/checkout@v4", "not pinned by a full commit SHA"),
    ("      - uses: actions/checkout@v6", "not pinned by a full commit SHA"),
    ("      - uses: actions/checkout@de0fac2e4500dabe0009e67214ff5f5447ce83dd",
     "no version in a comment"),
])
def test_a_node20_or_unpinned_action_fails(line: str, why: str) -> None:
    found = problems(f"steps:\n{line}\n")
    assert len(found) == 1 and why in found[0]


def test_a_node24_pin_passes() -> None:
    text = ("steps:\n      - uses: actions/checkout@de0fac2e4500dabe0009e67214ff5f5447ce83dd # v6.0.2\n"
            "      - uses: ./\n")
    assert problems(text) == []
