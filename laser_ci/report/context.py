"""Where a comment's result comes from (:class:`Context`: links and the comparison line),
and the marker by which the Action finds its own comment again (:data:`MARKER`,
:func:`marker_for`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from laser_ci.report.markdown import url_path

MARKER = "<!-- laser-ci:sticky-comment -->"


def marker_for(workflows: str) -> str:
    """The marker of the comment for the Action's ``workflows`` input: each laser-ci step
    of a pull request with its own input keeps its own comment (the default's is
    :data:`MARKER`)."""
    if workflows.strip("/") in ("", ".github/workflows"):
        return MARKER
    key = hashlib.sha256(workflows.encode("utf-8")).hexdigest()[:12]
    return f"<!-- laser-ci:sticky-comment workflows={key} -->"


@dataclass(frozen=True)
class Context:
    """Where the result comes from; only used for links and the comparison line."""

    repository: str | None = None
    server_url: str = "https://github.com"
    head_sha: str | None = None
    base_sha: str | None = None
    marker: str = MARKER  # the first line of a PR comment (marker_for)

    def blob_url(self, path: str, line: int | None = None) -> str | None:
        if not (self.repository and self.head_sha):
            return None
        url = (f"{self.server_url.rstrip('/')}/{url_path(self.repository)}/blob/"
               f"{url_path(self.head_sha)}/{url_path(path)}")
        return f"{url}#L{line}" if line else url
