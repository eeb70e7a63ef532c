"""The demo pull request: ``examples/demo`` at its base, and at its head with one matrix
instance added to the ``test`` job (``ubuntu-24.04-arm``, Python 3.12). Its comment is what
``tests/test_comment_first_screen.py`` checks and what ``tools/screenshot.py`` renders.

    python tools/demo_pr.py [--visibility public|private]   # prints the comment's Markdown
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from laser_ci.estimate import SizingOptions, estimate_paths  # noqa: E402
from laser_ci.report.comment import Context, render_pr_comment  # noqa: E402

DEMO = ROOT / "examples" / "demo"
CHANGED = ".github/workflows/ci.yml"
ADDED = '          - os: ubuntu-24.04-arm\n            python: "3.12"\n'
CONTEXT = Context(repository="octo/demo", head_sha="4f1c2a9e0b7d", base_sha="9b3e7c1d5a20")


def head_text() -> str:
    """ci.yml at the PR's head: the matrix's ``include`` gets one more entry."""
    text = (DEMO / CHANGED).read_text(encoding="utf-8")
    anchor = "            experimental: true\n"
    if anchor not in text:
        raise SystemExit(f"{DEMO / CHANGED}: the demo's matrix changed; update tools/demo_pr.py")
    return text.replace(anchor, anchor + ADDED, 1)


def _estimate(folder: Path, visibility: str | None) -> dict[str, Any]:
    cwd = os.getcwd()
    try:
        os.chdir(folder)
        return estimate_paths([".github/workflows"], repo_root=str(folder),
                              sizing=SizingOptions(visibility, None, 0.0))
    finally:
        os.chdir(cwd)


def demo_pr(visibility: str | None = "public") -> tuple[dict[str, Any], dict[str, Any]]:
    """``(head, base)`` estimates of the demo pull request."""
    with tempfile.TemporaryDirectory() as tmp:
        base, head = Path(tmp, "base"), Path(tmp, "head")
        shutil.copytree(DEMO, base)
        shutil.copytree(DEMO, head)
        (head / CHANGED).write_text(head_text(), encoding="utf-8")
        return _estimate(head, visibility), _estimate(base, visibility)


def demo_comment(visibility: str | None = "public") -> str:
    head, base = demo_pr(visibility)
    return render_pr_comment(head, base, [CHANGED], context=CONTEXT)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--visibility", choices=["public", "private"], default="public")
    sys.stdout.write(demo_comment(ap.parse_args().visibility))
