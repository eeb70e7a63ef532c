"""A repository at one commit, read through GitHub's REST API without a checkout: the files
the Action parses."""

from __future__ import annotations

import base64
import re
from typing import Any

from laser_ci.workflows.model import RepoProfile
from laser_ci.workflows.yamlload import MAX_BYTES, TOO_LARGE

_YAML = (".yml", ".yaml")
_NOT_A_FILE = "a symbolic link to something that is not a file of the repository"
# `./x` and `$/x` (the workflow's own repository at the running commit): files of the
# commit the Action reads, base and head alike
_LOCAL_USES = re.compile(r"""^[\s-]*uses\s*:\s*['"]?[.$]/([^\s'"#@]*)""", re.MULTILINE)


class Fetched(dict[str, bytes]):
    """The files read so far, and why some paths gave no file (``why_missing``)."""

    def __init__(self) -> None:
        super().__init__()
        self.unreadable: dict[str, str] = {}

    def why_missing(self, path: str) -> str | None:
        return self.unreadable.get(path)


class RefFiles:
    """The repository at one commit, read through the REST API and never checked out.

    One git-trees call lists every path (for the repository profile the predictor reads, and
    to know which files exist); the contents API then reads only the workflow files and the
    local reusable workflows and actions they use.
    """

    def __init__(self, repo: Any, ref: str) -> None:
        self.repo, self.ref = repo, ref
        self.files = Fetched()
        self.tree: dict[str, int] | None = None  # path -> size; None: unknown (listing failed)
        self.blobs: dict[str, str] = {}  # path -> blob sha, from the same listing
        self._missing: set[str] = set()
        self._deps: dict[str, set[str]] = {}

    def load_tree(self) -> None:
        from github import GithubException

        try:
            tree = self.repo.get_git_tree(self.ref, recursive=True)
        except GithubException as exc:
            if exc.status in (404, 409, 422):  # unknown or empty: fall back to contents
                return
            raise
        entries = [e for e in tree.tree if e.type == "blob"]
        self.tree = {e.path: int(e.size or 0) for e in entries}
        self.blobs = {e.path: str(e.sha) for e in entries}
        if getattr(tree, "raw_data", {}).get("truncated"):
            self.tree = None  # a huge repository: the listing is partial, do not trust it
            self.blobs = {}

    def changed_since(self, other: RefFiles) -> set[str] | None:
        """The paths whose file differs from ``other``'s (added, removed or edited), from
        the two trees' blob shas; None when either listing is unknown."""
        if self.tree is None or other.tree is None:
            return None
        paths = self.blobs.keys() | other.blobs.keys()
        return {p for p in paths if self.blobs.get(p) != other.blobs.get(p)}

    def profile(self) -> RepoProfile | None:
        if not self.tree:
            return None
        from laser_ci.workflows.repo_profile import MAX_FILES, profile_from_files

        return profile_from_files(list(self.tree.items())[:MAX_FILES])

    def get(self, path: str) -> bytes | None:
        if path in self.files:
            return self.files[path]
        if path in self._missing or (self.tree is not None and path not in self.tree):
            return None
        if self.tree is not None and self.tree[path] > MAX_BYTES:
            return self._unreadable(path, TOO_LARGE)
        from github import GithubException

        try:
            content = self.repo.get_contents(path, ref=self.ref)
        except GithubException as exc:
            if exc.status == 404:
                self._missing.add(path)
                return None
            raise
        if isinstance(content, list):  # a folder
            self._missing.add(path)
            return None
        if content.type != "file":
            # A link the API does not follow (to a folder, or out of the repository), or a
            # submodule, which a folder listing without the tree calls a "file".
            return self._unreadable(path, _NOT_A_FILE if content.type == "symlink"
                                    else f"a {content.type}, not a workflow file")
        if int(content.size or 0) > MAX_BYTES:
            return self._unreadable(path, TOO_LARGE)
        if content.encoding == "base64":
            data = content.decoded_content
        else:  # over 1 MB the contents API leaves the content out ("encoding": "none")
            blob = self.repo.get_git_blob(content.sha)
            data = base64.b64decode(blob.content) if blob.encoding == "base64" else blob.content.encode()
        self.files[path] = data
        return data

    def _unreadable(self, path: str, why: str) -> None:
        self._missing.add(path)
        self.files.unreadable[path] = why
        return None

    def listdir(self, folder: str) -> list[str]:
        if self.tree is not None:
            prefix = folder.rstrip("/") + "/"
            return sorted(p for p in self.tree if p.startswith(prefix) and "/" not in p[len(prefix) :])
        from github import GithubException

        try:
            entries = self.repo.get_contents(folder, ref=self.ref)
        except GithubException as exc:
            if exc.status == 404:
                return []
            raise
        if not isinstance(entries, list):
            return [entries.path]
        return sorted(e.path for e in entries if e.type in ("file", "symlink"))

    def with_deps(self, path: str) -> bool:
        """Reads ``path`` and, transitively, the local files it ``uses:``; False if absent."""
        if self.get(path) is None:
            return False
        todo = [path]
        while todo:
            p = todo.pop()
            if p in self._deps:
                continue
            deps: set[str] = set()
            for dep in local_uses(self.files.get(p, b"")):
                if dep.endswith(_YAML):
                    found = dep if self.get(dep) is not None else None
                else:
                    prefix = f"{dep}/" if dep else ""
                    found = next(
                        (
                            c
                            for c in (f"{prefix}action.yml", f"{prefix}action.yaml")
                            if self.get(c) is not None
                        ),
                        None,
                    )
                if found:
                    deps.add(found)
                    todo.append(found)
            self._deps[p] = deps
        return True

    def touches(self, path: str, changed: set[str]) -> bool:
        """Whether ``path`` or any local file it uses (transitively) is in ``changed``."""
        seen: set[str] = set()
        todo = [path]
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            if p in changed:
                return True
            todo.extend(self._deps.get(p, ()))
        return False


def local_uses(content: bytes) -> list[str]:
    text = content.decode("utf-8", errors="replace")
    out = []
    for m in _LOCAL_USES.finditer(text):
        dep = m.group(1).strip().rstrip("/")
        if dep.startswith("./"):
            dep = dep[2:]
        if ".." not in dep.split("/"):
            out.append(dep)
    return out


def is_workflow(path: str, workflows: str) -> bool:
    if workflows.endswith(_YAML):
        return path == workflows
    return path.endswith(_YAML) and path.rsplit("/", 1)[0] == workflows


def list_workflows(src: RefFiles, workflows: str) -> list[str]:
    if workflows.endswith(_YAML):
        return [workflows] if src.get(workflows) is not None else []
    return [p for p in src.listdir(workflows) if is_workflow(p, workflows)]


