"""docs/comment.png: a screenshot of the comment laser-ci writes on the demo pull request
(tools/demo_pr.py: examples/demo with one matrix instance added), rendered as GitHub shows
it: laser-ci's Markdown -> HTML (Python-Markdown, with GitHub-like CSS) -> headless Chromium.

    apt-get install -y chromium && pip install markdown
    python tools/screenshot.py [--out docs/comment.png] [--html comment.html]

Nothing of it runs in CI; the PNG is committed, and this makes it again.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from demo_pr import demo_comment  # noqa: E402

WIDTH, HEIGHT = 860, 680  # a PR conversation's comment column; the comment, collapsed

CSS = """
body { margin: 0; background: #ffffff; font-family: -apple-system, BlinkMacSystemFont,
  "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; font-size: 14px; line-height: 1.5;
  color: #1f2328; }
.comment { margin: 16px; border: 1px solid #d1d9e0; border-radius: 6px; }
.header { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px;
  border-radius: 6px 6px 0 0; color: #59636e; }
.header b { color: #1f2328; }
.bot { font-size: 12px; border: 1px solid #d1d9e0; border-radius: 2em; padding: 0 7px;
  margin-left: 4px; }
.body { padding: 16px; }
h3 { font-size: 1.25em; margin: 0 0 16px; font-weight: 600; }
p, ol, ul, table, blockquote, details { margin: 0 0 16px; }
ol, ul { padding-left: 2em; }
li + li { margin-top: .25em; }
code { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, monospace;
  font-size: 85%; background: rgba(129, 139, 152, .12); border-radius: 6px;
  padding: .2em .4em; }
a { color: #0969da; text-decoration: none; }
table { border-collapse: collapse; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; }
tr:nth-child(2n) { background: #f6f8fa; }
blockquote { padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
summary { cursor: pointer; }
sub { font-size: 75%; color: #59636e; }
"""


def to_html(markdown_text: str) -> str:
    """The comment's Markdown as a page: GitHub's comment frame around it."""
    import markdown  # Python-Markdown: pip install markdown

    text = re.sub(r"<details( open)?>", lambda m: f'<details{m.group(1) or ""} markdown="1">',
                  markdown_text)
    body = markdown.markdown(text, extensions=["tables", "md_in_html", "sane_lists"])
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<style>{CSS}</style></head><body><div class='comment'>"
        "<div class='header'><b>github-actions</b><span class='bot'>bot</span> commented"
        "</div>"
        f"<div class='body'>{body}</div></div></body></html>"
    )


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("screenshot: no Chromium found: apt-get install -y chromium")


def screenshot(page: Path, out: Path, width: int = WIDTH, height: int = HEIGHT) -> None:
    with tempfile.TemporaryDirectory(prefix="laser-ci-shot-") as profile:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu",
               "--hide-scrollbars", f"--user-data-dir={profile}",
               "--force-device-scale-factor=1", f"--window-size={width},{height}",
               f"--screenshot={out}", page.as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or not out.is_file():
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise SystemExit(f"screenshot: chromium failed: {html.unescape(tail)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "comment.png")
    ap.add_argument("--html", type=Path, help="also keep the rendered page here")
    ap.add_argument("--visibility", choices=["public", "private"], default="private",
                    help="the demo repository's visibility (private: costs are shown)")
    args = ap.parse_args()
    page_html = to_html(demo_comment(args.visibility))
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "comment.html"
        page.write_text(page_html, encoding="utf-8")
        if args.html:
            args.html.write_text(page_html, encoding="utf-8")
        screenshot(page, args.out.resolve())
    print(f"screenshot: wrote {args.out}")


if __name__ == "__main__":
    main()
