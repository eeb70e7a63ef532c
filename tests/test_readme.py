"""The README is for users: short, the `uses:` block near the top, no lab notes, its links
resolve, and its example output is what `laser-ci estimate examples/demo` prints."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from laser_ci.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
LINES = README.splitlines()


def test_short_with_the_uses_block_near_the_top() -> None:
    assert len(LINES) <= 350
    first = [n for n, line in enumerate(LINES, 1) if "uses: laser-ci/laser-ci@v1" in line]
    assert first and first[0] <= 60


def test_no_lab_notes() -> None:
    for n, line in enumerate(LINES, 1):
        assert not re.search(r"\bsession\b|\blever\b|--lm-|--write-cards|\bgit `?[0-9a-f]{7}\b",
                             line, re.I), f"README.md:{n}: {line}"


def test_its_links_resolve() -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README):
        if target.startswith("http"):
            continue
        assert (ROOT / target).exists(), target


def test_the_example_output_is_what_the_cli_prints(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    block = README.split("On the bundled example")[1].split("```\n", 2)[1]
    shown = block.split("```")[0].splitlines()
    result = CliRunner().invoke(main, ["estimate", "examples/demo"])
    assert result.exit_code == 0, result.output
    printed = result.stdout.splitlines()
    assert len(shown) == len(printed)
    for want, got in zip(shown, printed, strict=True):
        if want.endswith(" ..."):  # a long line, cut in the README
            assert got.startswith(want[:-4]), (want, got)
        else:
            assert want == got
