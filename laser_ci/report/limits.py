"""How long a comment or job summary may be (:class:`Limit`), and fitting a rendering into
it: the most detailed one that fits (:func:`fit_detail`), cut with a note as a last resort
(:func:`fit`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Limit:
    """How long a text may be: ``count`` characters, or ``count`` bytes of its UTF-8;
    ``label`` names it and ``rest`` says where the full report is, in the note of a text
    shortened to fit."""

    count: int
    unit: Literal["chars", "bytes"]
    label: str
    rest: str

    def size(self, text: str) -> int:
        return len(text) if self.unit == "chars" else len(text.encode("utf-8"))

    def prefix(self, text: str, n: int) -> str:
        """The longest start of ``text`` of at most ``n`` units (whole characters)."""
        if self.unit == "chars":
            return text[:n]
        return text.encode("utf-8")[:n].decode("utf-8", "ignore")

    def cut_note(self) -> str:
        return f"\n\n> [!NOTE]\n> This report was cut to fit {self.label}. {self.rest}\n"

    def shortened_note(self, what: str) -> str:
        return f"> [!NOTE]\n> Shortened to fit {self.label}: {what}. {self.rest}\n"


# GitHub rejects an issue comment of more than 65,536 characters; the runner drops a step's
# whole $GITHUB_STEP_SUMMARY when it passes 1 MiB (1,048,576 bytes; 1,000,000 leaves room)
COMMENT_LIMIT = Limit(65_536, "chars", "GitHub's 65,536-character limit",
                      "The full report is in the job summary and in the Action's `json` output.")


SUMMARY_LIMIT = Limit(1_000_000, "bytes", "the job summary's 1 MiB limit",
                      "The full report is in the Action's `json` output.")


SHORTENED = {
    1: "instance rows without links, costs per job",
    0: "the instances of each job with several of them are one row",
}


def is_shortened(text: str) -> bool:
    """True when a comment was shortened or cut to fit its limit: the full report needs a
    larger one (the job summary)."""
    return f"to fit {COMMENT_LIMIT.label}" in text


def fit(parts: Sequence[str], limit: Limit) -> str:
    """Joins the parts; cuts at a line boundary with a note when over ``limit``."""
    text = "\n".join(parts)
    if limit.size(text) <= limit.count:
        return text
    note = limit.cut_note()
    budget = limit.count - limit.size(note) - 64  # room for closing tags
    cut = limit.prefix(text, budget)
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
    open_details = cut.count("<details") - cut.count("</details>")
    cut += "\n</details>\n" * max(open_details, 0)
    return cut + note


def fit_detail(render: Any, limit: Limit) -> str:
    """The most detailed rendering that fits ``limit``; cut (with a note) as a last resort."""
    for detail in (2, 1, 0):
        text = render(detail)
        if limit.size(text) <= limit.count:
            return text
    return fit([text], limit)
