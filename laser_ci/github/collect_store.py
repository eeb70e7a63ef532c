"""The output folder of ``laser-ci collect``: known keys, append-only staging, atomic merges
into the ``.gz`` files and the state file (the format: :mod:`laser_ci.github.collect`)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from laser_ci.github.collect_base import CollectError, _attempt

MERGE_EVERY = 25  # fold staging into the .gz files every N runs (tests monkeypatch it)
STATE_DIR = ".laser-ci-collect"
FILES = ("blobs", "corpus", "runs")  # merge order: what a run refers to comes first


def _lock(path: Path, out: Path) -> Any:
    """Hold an exclusive lock on the folder for this process's lifetime (POSIX only)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    fh = open(path, "a")  # noqa: SIM115 - kept open: the lock lives as long as the Store
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise CollectError(f"another laser-ci collect is writing to {out}") from None
    return fh


# ---- the output folder --------------------------------------------------------------------
class Store:
    """The output folder: known keys, append-only staging, atomic merges, the state file."""

    def __init__(self, out: Path):
        self.out = out
        self.stage = out / STATE_DIR
        try:
            self.stage.mkdir(parents=True, exist_ok=True)
            self._lock = _lock(self.stage / "lock", out)
        except OSError as e:  # read-only, under a file, ...: name the folder given
            raise CollectError(f"cannot write to {out}: {e.strerror or e}") from None
        self.run_ids: set[str] = set()
        self.attempts: dict[str, int] = {}  # row id -> the attempt the folder holds
        self.replaced: set[str] = set()  # row ids whose older row the next merge drops
        self.repos: set[str] = set()  # the repositories the runs are of
        self.blob_ids: set[str] = set()
        self.corpus: set[tuple[str, str, str]] = set()
        for row in self._read_gz("runs"):
            if str(row.get("id")) in self.run_ids:  # a re-run appended by a merge before a
                self.replaced.add(str(row.get("id")))  # kill: the next final merge keeps one
            self.run_ids.add(str(row.get("id")))
            self.attempts[str(row.get("id"))] = _attempt(row.get("attempts"))
            self.repos.add(str(row.get("repo")))
        for row in self._read_gz("blobs"):
            self.blob_ids.add(str(row.get("id")))
        for row in self._read_gz("corpus"):
            self.corpus.add((str(row.get("repo")), str(row.get("path")), str(row.get("blob"))))
        self.state = self._load_state()
        self._handles: dict[str, Any] = {}
        self.recovered = self._recover()
        cache = self.state.setdefault("git_blobs", {})
        self.git_blobs: dict[str, str] = {k: v for k, v in cache.items() if v in self.blob_ids}
        self.state["git_blobs"] = self.git_blobs
        self.pending = 0

    def _gz(self, name: str) -> Path:
        return self.out / f"{name}.jsonl.gz"

    def _part(self, name: str) -> Path:
        return self.stage / f"{name}.jsonl"

    def _read_gz(self, name: str) -> Iterator[dict[str, Any]]:
        path = self._gz(name)
        if not path.exists():
            return
        try:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                for line in fh:
                    if line.strip():
                        yield json.loads(line)
        except (OSError, EOFError, ValueError) as e:
            raise CollectError(f"cannot read {path}: {e}") from None

    def _load_state(self) -> dict[str, Any]:
        path = self.stage / "state.json"
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(data, dict):
                    data.setdefault("repos", {})
                    return data
            except ValueError:
                pass
        return {"version": 1, "repos": {}, "git_blobs": {}}

    def save_state(self) -> None:
        path = self.stage / "state.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)

    def _key(self, name: str, row: dict[str, Any]) -> Any:
        if name == "corpus":
            return (str(row.get("repo")), str(row.get("path")), str(row.get("blob")))
        return str(row.get("id"))

    def _known(self, name: str) -> set[Any]:
        return {"runs": self.run_ids, "blobs": self.blob_ids, "corpus": self.corpus}[name]

    def _recover(self) -> int:
        """Fold staging left by a killed call into the .gz files (complete lines only)."""
        found = 0
        for name in FILES:
            part = self._part(name)
            if not part.exists():
                continue
            text = part.read_bytes().decode("utf-8", "replace")
            lines = []
            known = self._known(name)
            for line in text.split("\n")[:-1]:  # the last piece has no newline: incomplete
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(row, dict):
                    continue
                key = self._key(name, row)
                if name == "runs" and key in known and self.later_attempt(key, row):
                    self.replaced.add(key)  # a re-run staged before the kill
                elif key in known:
                    continue
                known.add(key)
                if name == "runs":
                    self.attempts[key] = _attempt(row.get("attempts"))
                    self.repos.add(str(row.get("repo")))
                lines.append(json.dumps(row, ensure_ascii=False) + "\n")
            if name == "runs":
                found = len(lines)
            self._fold(name, lines)
            part.unlink()
        return found

    def later_attempt(self, key: str, row: dict[str, Any]) -> bool:
        """Whether ``row`` is a later attempt of a run the folder holds (a re-run)."""
        return key in self.attempts and _attempt(row.get("attempts")) > self.attempts[key]

    def _fold(self, name: str, lines: list[str], final: bool = True) -> None:
        """Add ``lines`` to the .gz file. For runs, a ``final`` fold also drops the rows
        re-runs replace (of each such id the last row: its newest attempt); the merges
        during a call only append, so the file is rewritten once a call, not once a merge."""
        if name != "runs" or not self.replaced or not final:
            self._append_gz(name, lines)
            return
        path = self._gz(name)
        new = [json.loads(ln) for ln in lines if ln.strip()]
        # the row each replaced id keeps: its last, in the file then the new lines
        last: dict[str, int] = {}
        for i, row in enumerate(self._read_gz(name)):
            if str(row.get("id")) in self.replaced:
                last[str(row.get("id"))] = i
        for row in new:
            last.pop(str(row.get("id")), None)  # a new line is later than the file's rows
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
            new_ids = {str(row.get("id")) for row in new}
            for i, row in enumerate(self._read_gz(name)):
                key = str(row.get("id"))
                if key in self.replaced and (key in new_ids or last.get(key) != i):
                    continue
                out.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
            for row in new:
                out.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
            out.close()
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
        self.replaced.clear()

    def _append_gz(self, name: str, lines: list[str]) -> None:
        path = self._gz(name)
        if not lines or (path.exists() and not any(lines)):
            return
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "wb") as out:
            if path.exists():
                with open(path, "rb") as old:
                    shutil.copyfileobj(old, out)
            out.write(gzip.compress("".join(lines).encode("utf-8"), compresslevel=6, mtime=0))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)

    def _write(self, name: str, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        fh = self._handles.get(name)
        if fh is None:
            fh = self._handles[name] = open(self._part(name), "a", encoding="utf-8")
        fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        fh.flush()
        os.fsync(fh.fileno())

    def add_run(self, row: dict[str, Any], texts: dict[str, str]) -> int:
        """Stage one run with its new blobs and corpus rows; returns the new blob count."""
        blobs = [{"id": b, "text": t} for b, t in texts.items() if b not in self.blob_ids]
        corpus = [
            {"repo": row["repo"], "path": p, "blob": b}
            for p, b in row["files"].items()
            if (row["repo"], p, b) not in self.corpus
        ]
        self._write("blobs", blobs)
        self._write("corpus", corpus)
        self._write("runs", [row])
        self.blob_ids.update(b["id"] for b in blobs)
        self.corpus.update((c["repo"], c["path"], c["blob"]) for c in corpus)
        if row["id"] in self.run_ids:
            self.replaced.add(row["id"])  # a re-run: its final attempt replaces the row
        self.run_ids.add(row["id"])
        self.attempts[row["id"]] = _attempt(row.get("attempts"))
        self.repos.add(str(row["repo"]))
        self.pending += 1
        if self.pending >= MERGE_EVERY:
            self.merge(final=False)
        return len(blobs)

    def close(self) -> None:
        """Close staging files and release the folder lock (staging stays for recovery)."""
        for fh in self._handles.values():
            fh.close()
        self._handles.clear()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def merge(self, final: bool = True) -> None:
        """Fold staging into the .gz files, then save the state; ``final`` (the end of a
        call) also drops the rows that re-runs replaced."""
        for fh in self._handles.values():
            fh.close()
        self._handles.clear()
        for name in FILES:
            part = self._part(name)
            if part.exists():
                text = part.read_text(encoding="utf-8")
                self._fold(name, [ln + "\n" for ln in text.split("\n") if ln.strip()], final)
                part.unlink()
            elif name == "runs" and final and self.replaced:  # re-runs merged, not yet dropped
                self._fold(name, [], final)
        for name in FILES:  # a call that found no runs still leaves a folder readers take
            if not self._gz(name).exists():
                self._append_gz(name, [""])
        self.pending = 0
        self.save_state()
