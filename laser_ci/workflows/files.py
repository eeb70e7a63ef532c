"""The files a workflow is read from: a *file source* keyed by repo-relative paths (a dict
of a run's files, :class:`DiskFiles` over a checkout, the Action's files at a commit), the
repository root of CLI paths and the workflow files they name. Never raises on bad paths:
why a path cannot be read is said in words (:func:`why_unreadable`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from laser_ci.workflows.model import ReadError
from laser_ci.workflows.yamlload import MAX_BYTES

__all__ = ["LOCAL_PREFIXES", "OUT_OF_REPO", "DiskFiles", "FileSource", "as_dot_slash",
           "find_repo_root", "is_local", "local_target", "normalize", "origin_repository",
           "own_repository_target", "root_of",
           "why_unreadable", "workflow_targets"]

OUT_OF_REPO = "a symbolic link out of the repository"
# What asking the file system about a path can raise: OSError (permission denied on a
# folder on the way), RuntimeError (a link loop, Python < 3.13), ValueError (a NUL byte).
_PATH_ERRORS = (OSError, RuntimeError, ValueError)


def _inside(target: Path, root: Path) -> bool:
    return target == root or root in target.parents


class FileSource(Protocol):
    """Repo-relative files; ``None`` for a file it does not have.

    A source may also say why it has no file at a path (``why_missing(path) -> str | None``:
    too large to fetch, a link to something outside the repository); the error then says so
    instead of "no such file".
    """

    def get(self, path: str, /) -> str | bytes | None: ...


class DiskFiles:
    """Repo-relative file access under ``root``; never escapes it, reads at most MAX_BYTES+1."""

    def __init__(self, root: str | os.PathLike[str], *, known_root: bool | None = None) -> None:
        self.root = Path(root).resolve()
        # Whether ``root`` is a repository's root (given, or it holds ``.github``), not a
        # guess: only then is a ``./`` action that is not there known to be missing.
        try:
            self.known_root = (known_root if known_root is not None
                               else (self.root / ".github").is_dir())
        except _PATH_ERRORS:
            self.known_root = False

    def get(self, path: str, /) -> bytes | None:
        try:
            target = (self.root / path).resolve()
            if not _inside(target, self.root) or not target.is_file():  # a fifo would block
                return None
            with open(target, "rb") as fh:
                return fh.read(MAX_BYTES + 1)
        except _PATH_ERRORS:  # unreadable, a link loop, a NUL byte in the name
            return None

    def why_missing(self, path: str, /) -> str | None:
        return why_unreadable(self.root / path, self.root)


def why_unreadable(p: Path, root: Path) -> str | None:
    """``None`` for a regular file that lies in ``root`` (resolved), else why it cannot be
    read as a workflow, in words. Never raises."""
    try:
        if "\0" in str(p):
            raise ValueError("embedded null byte")
        if not os.path.lexists(p):  # nothing there: say so, wherever it was meant to be
            return "no such file or directory"
        target = p.resolve()
        if not _inside(target, root):
            lexical = Path(os.path.abspath(p))
            return OUT_OF_REPO if _inside(lexical, root) or p.is_symlink() \
                else f"outside the repository root {root}"
        if p.is_symlink() and not p.exists():
            return "broken symbolic link"
        if target.is_dir():
            return "a folder, not a workflow file"
        if target.is_file():
            return None if os.access(target, os.R_OK) else "not readable (permission denied)"
        if target.exists():
            return "not a regular file"
        return "no such file or directory"
    except RuntimeError:
        return "a symbolic link loop"
    except ValueError:
        return "not a valid path (a NUL byte in its name)"
    except OSError as exc:
        return f"not readable ({exc.strerror or 'error'})"


LOCAL_PREFIXES = ("./", "$/")
"""How a ``uses:`` names a file of the workflow's own repository: ``./`` (in the workspace,
usually the checkout) and ``$/`` (GitHub's self-repository reference, changelog of
2026-07-30: the workflow's own repository at the exact commit that is running, with no
checkout required; it works wherever ``./`` works)."""


def is_local(uses: str) -> bool:
    """Whether a ``uses:`` value names a file of the workflow's own repository."""
    return uses.startswith(LOCAL_PREFIXES)


def local_target(uses: str) -> str | None:
    """The repo-relative path a local ``uses:`` (``./x``, ``$/x``) names; None otherwise."""
    if not is_local(uses):
        return None
    return normalize(uses[2:].split("@", 1)[0])


def own_repository_target(uses: str, repository: object) -> str | None:
    """The repo-relative path a ``uses: OWNER/REPO/path@ref`` names when ``OWNER/REPO`` is
    the workflow's own ``repository`` (GitHub's names are case-insensitive): GitHub reads
    that file at ``ref``, laser-ci the checkout's; None otherwise (another repository, or
    the repository unknown)."""
    if not isinstance(repository, str) or repository.count("/") != 1:
        return None
    head, at, ref = uses.partition("@")
    parts = head.split("/")  # GitHub's form: OWNER/REPO/.github/workflows/FILE@REF
    if (not at or not ref or len(parts) != 5 or parts[2:4] != [".github", "workflows"]
            or parts[4] in ("", ".", "..") or "/".join(parts[:2]).lower() != repository.lower()):
        return None
    return "/".join(parts[2:])


def as_dot_slash(uses: str) -> str:
    """``$/x`` written as ``./x``: the same file at the same commit wherever the job reads
    it (the job text the model reads spells a local reference as it was trained on)."""
    return "./" + uses[2:] if uses.startswith("$/") else uses


def normalize(path: str) -> str:
    """Repo-relative POSIX form: no leading ``./``, no trailing slash."""
    parts: list[str] = []
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def find_repo_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` that holds ``.github`` (else ``start``)."""
    try:
        start = start.resolve()
        here = start if start.is_dir() else start.parent
    except _PATH_ERRORS:  # a link loop, a folder it may not enter: read as given
        start = Path(os.path.abspath(start))
        here = start.parent
    for folder in (here, *here.parents):
        try:
            if (folder / ".github").is_dir():
                return folder
        except _PATH_ERRORS:
            continue
    return here


def root_of(paths: Sequence[str], repo_root: str | None = None) -> Path:
    """The repository root for CLI ``paths``: ``repo_root`` when given, else the root
    (:func:`find_repo_root`) of the first path that exists, so that a mistyped path
    (reported on its own) cannot move the root that every other file is read against."""
    if repo_root:
        return Path(repo_root).resolve()
    for arg in paths:
        try:
            if os.path.lexists(arg):
                return find_repo_root(Path(arg))
        except _PATH_ERRORS:
            continue
    return find_repo_root(Path(paths[0]) if paths else Path("."))


def workflow_targets(paths: Iterable[str], repo_root: Path) -> tuple[list[str], list[ReadError]]:
    """Expand CLI paths (files or folders) to repo-relative workflow paths.

    A problem names its file repo-relative when the file lies in the repository, as the
    reader's errors do, so that a file read twice (a target and a called workflow) is one
    line; otherwise as given.
    """
    targets: list[str] = []
    errors: list[ReadError] = []

    def shown(f: Path) -> str:
        try:  # the folder resolved, the file itself not (it may be a link)
            if not os.path.lexists(f):  # not there: as typed, not under a root guessed for it
                return str(f)
            return (f.absolute().parent.resolve() / f.name).relative_to(repo_root).as_posix()
        except _PATH_ERRORS:
            return str(f)

    for arg in paths:
        p = Path(arg)
        try:
            is_dir = p.is_dir()
        except _PATH_ERRORS:
            is_dir = False
        if is_dir:
            try:
                named = sorted(x for x in p.iterdir() if x.suffix in (".yml", ".yaml"))
            except OSError as exc:
                errors.append(ReadError(arg, None, f"folder not readable ({exc.strerror or 'error'})"))
                continue
            if not named:
                errors.append(ReadError(arg, None, "no .yml or .yaml files in this folder"))
        else:
            named = [p]
        for f in named:  # a broken link, a folder or a device named like a workflow: its error
            why = why_unreadable(f, repo_root)
            if why is not None:
                errors.append(ReadError(shown(f), None, why))
            else:
                targets.append(f.resolve().relative_to(repo_root).as_posix())
    return list(dict.fromkeys(targets)), errors


_REMOTE = re.compile(r"""^\s*\[\s*remote\s+"origin"\s*\]\s*$""", re.IGNORECASE)
_SECTION = re.compile(r"^\s*\[")
_URL = re.compile(r"^\s*url\s*=\s*(.+?)\s*$", re.IGNORECASE)
_OWNER_NAME = re.compile(r"[:/]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/*$")


def _git_config(root: Path) -> Path | None:
    """The ``config`` of the git repository at ``root``: ``.git/config``, or for a worktree
    (``.git`` is a file ``gitdir: …``) its common folder's."""
    dot = root / ".git"
    try:
        if dot.is_dir():
            return dot / "config"
        if not dot.is_file():
            return None
        text = dot.read_text(encoding="utf-8", errors="replace")[:4096]
        m = re.match(r"gitdir:\s*(.+?)\s*$", text, re.MULTILINE)
        if m is None:
            return None
        gitdir = (root / m.group(1)).resolve()
        common = gitdir / "commondir"
        if common.is_file():
            gitdir = (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
        return gitdir / "config"
    except _PATH_ERRORS:
        return None


def origin_repository(root: str | os.PathLike[str]) -> str | None:
    """``owner/name`` of the checkout's ``origin`` remote, read from its git config (git is
    not run: the checkout may be a pull request's); None when there is none."""
    config = _git_config(Path(root))
    try:
        if config is None or not config.is_file():
            return None
        lines = config.read_text(encoding="utf-8", errors="replace")[:1_000_000].splitlines()
    except _PATH_ERRORS:
        return None
    inside = False
    for line in lines:
        if _SECTION.match(line):
            inside = bool(_REMOTE.match(line))
        elif inside and (m := _URL.match(line)):
            found = _OWNER_NAME.search(m.group(1).strip().strip('"'))
            return f"{found.group(1)}/{found.group(2)}" if found else None
    return None
