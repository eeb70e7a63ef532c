"""A repository's size and language profile, the way the training data records it.

``by_ext`` maps a file's extension (its name when it has none, e.g. ``Dockerfile``,
``.nojekyll``) to ``(file count, bytes)``, top 20 by count; ``top_level`` lists the
root's entries, folders with a trailing ``/``.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path, PurePosixPath

from laser_ci.workflows.model import RepoProfile

MAX_FILES = 200_000


def ext_key(path: str) -> str:
    name = PurePosixPath(path).name
    suffix = PurePosixPath(name).suffix
    return suffix if suffix and suffix != name else name


def _git_files(root: Path) -> list[str] | None:
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True,
                             timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    files = [f for f in out.decode("utf-8", "replace").split("\0") if f]
    return files or None


def _walk_files(root: Path) -> list[str]:
    files: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        rel = Path(folder).relative_to(root)
        files.extend((rel / n).as_posix() for n in names)
        if len(files) >= MAX_FILES:
            break
    return files


def profile_from_files(files: list[tuple[str, int]]) -> RepoProfile:
    """Build a profile from (repo-relative path, size in bytes) pairs."""
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    top: set[str] = set()
    for path, size in files:
        key = ext_key(path)
        counts[key] += 1
        sizes[key] += size
        head, sep, _ = path.partition("/")
        top.add(head + "/" if sep else head)
    by_ext = {k: (n, sizes[k]) for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:20]}
    return RepoProfile(n_files=len(files), total_bytes=sum(s for _, s in files), by_ext=by_ext,
                       top_level=tuple(sorted(top)))


def profile_dir(root: str | os.PathLike[str]) -> RepoProfile | None:
    """Profile a checkout (tracked files when it is a git work tree)."""
    base = Path(root)
    if not base.is_dir():
        return None
    names = _git_files(base) or _walk_files(base)
    pairs: list[tuple[str, int]] = []
    for name in names[:MAX_FILES]:
        try:
            pairs.append((name, (base / name).stat().st_size))
        except OSError:
            continue
    return profile_from_files(pairs) if pairs else None
