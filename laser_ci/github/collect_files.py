"""The workflow files and local actions of a commit, for ``laser-ci collect``: the git tree,
then each CI file's contents (a file already seen, by git blob sha, is not read again)."""

from __future__ import annotations

import base64
from typing import Any

from laser_ci.github.collect_base import (
    CI_DIRS,
    GitHubError,
    _as_list,
    _raw,
    _Skip,
    blob_id,
    is_ci_file,
    repo_profile,
)


class FileReader:
    """Mixed into :class:`laser_ci.github.collect.Collector` (``self.api``, ``self.store``,
    ``self.echo``)."""

    api: Any
    store: Any
    echo: Any

    def files_at(
        self, repo: Any, full: str, sha: str
    ) -> tuple[dict[str, str], dict[str, str], dict[str, Any] | None]:
        """``({path: blob id}, {blob id: text} of new blobs, repo_profile)`` at a commit."""
        try:
            tree = self.api.call(
                lambda: _raw(repo.get_git_tree(sha, recursive=True)),
                f"git tree of {full}@{sha[:7]}",
            )
        except GitHubError as e:
            if e.status in (404, 409, 422):
                raise _Skip("commit not found") from None
            raise
        entries = [e for e in tree.get("tree") or [] if isinstance(e, dict)]
        profile: dict[str, Any] | None = None
        if tree.get("truncated"):
            wanted = self.list_ci_dirs(repo, full, sha)
        else:
            profile = repo_profile(entries)
            wanted = [
                (str(e["path"]), str(e["sha"]))
                for e in entries
                if e.get("type") == "blob" and is_ci_file(str(e.get("path", "")))
            ]
        files: dict[str, str] = {}
        texts: dict[str, str] = {}
        for path, git_sha in sorted(wanted):
            bid = self.store.git_blobs.get(git_sha)
            if bid is None:
                text = self.read_file(repo, full, path, sha)
                if text is None:
                    continue
                bid = blob_id(text)
                texts[bid] = text
                self.store.git_blobs[git_sha] = bid
            files[path] = bid
        return files, texts, profile

    def list_ci_dirs(self, repo: Any, full: str, sha: str) -> list[tuple[str, str]]:
        """The CI files through directory listings (for trees too big to list at once)."""
        out: list[tuple[str, str]] = []
        todo = [d.rstrip("/") for d in CI_DIRS]
        while todo:
            d = todo.pop()
            try:
                listing = self.api.call(
                    lambda d=d: _as_list(repo.get_contents(d, ref=sha)),
                    f"contents of {full}/{d}@{sha[:7]}",
                )
            except GitHubError as e:
                if e.status == 404:
                    continue
                raise
            for raw in listing:
                if raw.get("type") == "dir":
                    todo.append(str(raw["path"]))
                elif raw.get("type") == "file" and is_ci_file(str(raw.get("path", ""))):
                    out.append((str(raw["path"]), str(raw["sha"])))
        return out

    def read_file(self, repo: Any, full: str, path: str, sha: str) -> str | None:
        def fetch() -> str | None:
            items = _as_list(repo.get_contents(path, ref=sha))
            raw = items[0] if len(items) == 1 else {}
            if raw.get("encoding") != "base64" or not isinstance(raw.get("content"), str):
                return None
            return base64.b64decode(raw["content"]).decode("utf-8", errors="replace")

        try:
            text = self.api.call(fetch, f"{full}/{path}@{sha[:7]}")
        except GitHubError as e:
            if e.status == 404:
                return None
            raise
        if text is None:
            self.echo(f"{full}: {path}@{sha[:7]}: no inline content (too large?), left out")
        return text
