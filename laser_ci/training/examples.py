"""Training and evaluation examples from CI history in the ``gha-runs`` format.

A data folder (the shared ``gha-runs`` set, or anything ``laser-ci collect`` writes) holds
gzip-compressed (or plain) JSON Lines files:

- ``runs.jsonl[.gz]``: one labeled workflow run: ``id``, ``repo``, ``workflow_path``, ``sha``,
  ``commit_date``, ``event``, ``branch``, ``conclusion``, ``run_time_s`` (the label: summed job
  seconds), ``files`` (``{path: blob id}`` for every workflow/action file at that commit),
  ``repo_profile`` and optionally ``jobs`` (``[{"name", "run_time_s", "conclusion", ...}]``,
  per-job timings written by ``collect``).
- ``blobs.jsonl[.gz]``: ``{"id", "text"}`` file texts.
- ``corpus.jsonl[.gz]``: ``{"repo", "path", "blob"}`` unlabeled workflow versions.

:func:`load_examples` turns every run with ``run_time_s > 0`` into examples of two kinds:

- ``workflow``: one per run; text = ``serialize_workflow``; label = ``run_time_s``. Runs whose
  workflow file cannot be read (invalid YAML, ...) still give a ``workflow`` example whose
  text is a fallback serialization of the raw file (``Example.fallback`` is True), so every
  run is evaluated.
- ``job``: one per run whose workflow expands to exactly one job instance (then
  ``run_time_s`` is that job's runtime), plus, for runs with collected ``jobs``, one per
  reader job instance whose display name equals a collected job name (label: that job's
  ``run_time_s``; ``conclusion``: that job's conclusion when given).

History (:mod:`laser_ci.training.history`): every example also carries its causal history,
the earlier runs (strictly earlier ``commit_date``) of the same repository, workflow file,
kind and job display name: ``history`` (None without earlier runs), ``changed`` (the
workflow file's blob differs from the latest earlier run's) and ``text_warm`` (the text
serialized with the history block; ``text`` is always the cold-start text, ``history:
none``). ``load_examples(..., history=False)`` leaves the three fields None.

Splits are by repository, never by row: :func:`split_of` hashes ``owner/name`` with SHA-256
and sends the repository to ``val`` when the first 8 hex digits, as an integer, mod 100 are
below 20 (about 20% of repositories; on the shared set 74 of 326 labeled repos, 1,081 of
4,227 runs). The split of a repository never changes, whatever folder it appears in.

Parsing and serializing every run takes a while, so :func:`load_examples` caches its result
under ``$LASER_CI_CACHE`` (default ``~/.cache/laser-ci``), keyed by the data files' sizes and
mtimes and by the source of the modules that produce the text (the 8 newest caches are
kept); ``cache=False`` skips it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TypeVar

from laser_ci.measure.record import parse_record
from laser_ci.text.targets import usage_targets
from laser_ci.training.example import KINDS, Example, filter_split

_CACHE_VERSION = 3  # 3: a job's usage targets
T = TypeVar("T")


# --- splits ------------------------------------------------------------------------------


# --- raw files ---------------------------------------------------------------------------


def _data_file(data_dir: str | os.PathLike[str], stem: str, required: bool = True) -> Path | None:
    d = Path(data_dir)
    for name in (f"{stem}.jsonl.gz", f"{stem}.jsonl"):
        p = d / name
        if p.is_file():
            return p
    if required:
        raise FileNotFoundError(f"{d}: no {stem}.jsonl.gz or {stem}.jsonl")
    return None


class DataError(ValueError):
    """A data file that cannot be read: its path (and line) and what is wrong with it."""


def _iter_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a JSON Lines file; a row that is not UTF-8, not JSON or not an object,
    and a file that cannot be read or unpacked, is a :class:`DataError` naming it."""
    return (row for _n, row in _numbered_rows(path))


def _numbered_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, row)`` of :func:`_iter_jsonl`."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:  # type: ignore[operator]
            for n, raw in enumerate(f, 1):
                try:
                    line = raw.decode("utf-8").strip()
                except UnicodeDecodeError as exc:
                    raise DataError(f"{path}:{n}: not UTF-8 (byte 0x{raw[exc.start]:02x} "
                                    f"at column {exc.start + 1})") from None
                if not line:
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{path}:{n}: not JSON ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise DataError(f"{path}:{n}: not a JSON object")
                yield n, row
    except (OSError, EOFError, zlib.error) as exc:
        what = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise DataError(f"{path}: cannot be read ({what})") from None


def reading_data(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` for a command: a data folder without its runs file, or a data
    file that cannot be read, is one line (``laser-ci: error: <path>: <reason>``) and exit 2,
    not a traceback (``LASER_CI_DEBUG`` shows it)."""
    import sys

    import click

    from laser_ci.report import plain

    try:
        return fn(*args, **kwargs)
    except (FileNotFoundError, DataError) as exc:
        if os.environ.get("LASER_CI_DEBUG"):
            raise
        click.echo(plain.line(f"laser-ci: error: {exc}"), err=True)
        sys.exit(2)


def load_runs(data_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every row of ``runs.jsonl[.gz]`` as a dict (file ``files`` map still blob ids); a
    row whose fields cannot be used is a :class:`DataError` naming its line."""
    return [row for _n, row in numbered_runs(data_dir)[1]]


def numbered_runs(data_dir: str | os.PathLike[str],
                  ) -> tuple[Path, list[tuple[int, dict[str, Any]]]]:
    """:func:`load_runs` with the file's path and each row's line number, for a reader
    that checks more of a row and names its line."""
    path = _data_file(data_dir, "runs")
    assert path is not None
    rows = list(_numbered_rows(path))
    for n, row in rows:
        _check_run(path, n, row)
    return path, rows


def _check_run(path: Path, n: int, row: dict[str, Any]) -> None:
    """A :class:`DataError` for a runs row the examples cannot be made from: ``files`` not
    an object of path -> blob id, a ``repo_profile`` that cannot be read."""
    from laser_ci.workflows.model import RepoProfile

    files = row.get("files")
    if files is not None and not (isinstance(files, dict) and all(
            b is None or isinstance(b, str) for b in files.values())):  # None: not recorded
        raise DataError(f"{path}:{n}: files is not an object of path -> blob id "
                        f"({_short(files)})")
    try:
        RepoProfile.from_json(row.get("repo_profile"))
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise DataError(f"{path}:{n}: repo_profile cannot be read ({exc})") from None


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_blobs(
    data_dir: str | os.PathLike[str], ids: Iterable[str] | None = None
) -> dict[str, str]:
    """Blob texts by id; only ``ids`` when given (the blob file is large)."""
    path = _data_file(data_dir, "blobs", required=False)
    if path is None:
        return {}
    wanted = set(ids) if ids is not None else None
    out: dict[str, str] = {}
    for n, row in _numbered_rows(path):
        bid = str(row.get("id"))
        if wanted is None or bid in wanted:
            text = row.get("text")
            if text is not None and not isinstance(text, str):
                raise DataError(f"{path}:{n}: text is not a string ({_short(text)})")
            out[bid] = text or ""
    return out


def _check_blobs(data_dir: Path, needed: set[str], blobs: dict[str, str]) -> None:
    """The file texts the runs name must all be there: without them every such run would
    become a text without its workflow, silently."""
    missing = needed - blobs.keys()
    if not missing:
        return
    path = _data_file(data_dir, "blobs")  # no blobs file at all: FileNotFoundError
    raise DataError(f"{path}: {len(missing):,} of the {len(needed):,} file texts the runs "
                    f"name are not there (e.g. {min(missing)})")


def load_corpus(data_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Rows of ``corpus.jsonl[.gz]`` (``repo``, ``path``, ``blob``); empty when absent."""
    path = _data_file(data_dir, "corpus", required=False)
    return list(_iter_jsonl(path)) if path else []


def run_files(run: dict[str, Any], blobs: dict[str, str]) -> dict[str, str]:
    """The run's ``{path: text}`` with blob ids resolved (unknown blobs are left out)."""
    files = run.get("files") or {}
    return {p: blobs[b] for p, b in files.items() if b in blobs}


# --- examples ----------------------------------------------------------------------------


def fallback_text(path: str, raw: str | None, profile: Any = None) -> str:
    """Text for a workflow the reader could not read: the serializer's raw form if it has
    one, else ``task: workflow`` followed by the raw file."""
    try:
        from laser_ci.text import serialize

        for name in ("serialize_raw", "serialize_raw_workflow", "serialize_unparsed"):
            fn = getattr(serialize, name, None)
            if callable(fn):
                return fn(path, raw or "", profile)
    except ImportError:
        pass
    return f"task: workflow\npath: {path}\n{raw or ''}".rstrip() + "\n"


def examples_from_run(
    run: dict[str, Any],
    files: dict[str, str],
    kinds: Sequence[str] = KINDS,
    read_cache: dict[Any, Any] | None = None,
    renderers: list[Any] | None = None,
    *,
    with_texts: bool = True,
) -> list[Example]:
    """The examples one run gives (none when ``run_time_s <= 0``). ``read_cache`` shares
    reader results between runs with the same files (keyed by path and blob ids), and the
    texts serialized from them (a run of the same files and repository profile has the
    same texts: a busy repository's thousands of runs serialize each version once). With
    ``renderers``, one function per example is appended to it: ``history -> text``, the
    example's job or workflow serialized again with that history block (``None``: its
    text). ``with_texts=False`` leaves every text empty (the renderers still make them)."""
    from laser_ci.text.history import seconds_of
    from laser_ci.text.serialize import serialize_job, serialize_raw, serialize_workflow
    from laser_ci.workflows.model import RepoProfile
    from laser_ci.workflows.parse import read_workflows

    runtime = seconds_of(run.get("run_time_s"))
    if runtime is None:
        return []
    path = str(run.get("workflow_path") or "")
    base = dict(
        repo=str(run.get("repo") or ""),
        workflow_path=path,
        conclusion=str(run.get("conclusion") or ""),
        commit_date=str(run.get("commit_date") or ""),
        run_id=str(run.get("id") or ""),
        sha=str(run.get("sha") or ""),
        event=run.get("event"),
        created_at=run.get("created_at") if isinstance(run.get("created_at"), str) else None,
    )
    profile = RepoProfile.from_json(run.get("repo_profile"))
    key = (path, tuple(sorted((run.get("files") or {}).items())))
    texts_key = ("texts", key, json.dumps(run.get("repo_profile"), sort_keys=True, default=str))

    def text_of(which: Any, make: Callable[[], str]) -> str:
        """``make()``, once per files, profile and ``which`` when there is a cache."""
        if not with_texts:
            return ""
        if read_cache is None:
            return make()
        texts = read_cache.setdefault(texts_key, {})
        if which not in texts:
            texts[which] = make()
        return str(texts[which])

    workflows = read_cache.get(key) if read_cache is not None else None
    if workflows is None:
        try:
            workflows, _errors = read_workflows(files, [path], schema=False)
        except Exception:  # a reader bug must not lose the run
            workflows = []
        if read_cache is not None:
            read_cache[key] = workflows
    wf = next((w for w in workflows if w.path == path), workflows[0] if workflows else None)
    out: list[Example] = []

    def render(fn: Any) -> None:
        if renderers is not None:
            renderers.append(fn)

    if wf is None or not wf.jobs:
        if "workflow" in kinds:
            raw = files.get(path)
            text = fallback_text(path, raw, profile) if with_texts else ""
            out.append(Example(text=text, runtime_s=runtime, kind="workflow", fallback=True, **base))
            render(lambda h: serialize_raw(path, raw or "", profile, history=h))
        return out
    if "workflow" in kinds:
        text = text_of("workflow", lambda: serialize_workflow(wf, profile))
        out.append(Example(text=text, runtime_s=runtime, kind="workflow", **base))
        render(lambda h: serialize_workflow(wf, profile, history=h))
    if "job" in kinds:
        collected = [j for j in run.get("jobs") or [] if isinstance(j, dict)]
        if collected:
            by_name: dict[str, list[dict[str, Any]]] = {}
            for j in collected:
                by_name.setdefault(str(j.get("name")), []).append(j)
            for i, job in enumerate(wf.jobs):
                matches = by_name.get(job.name) or []
                if len(matches) != 1:  # unmatched or ambiguous display name
                    continue
                j = matches[0]
                t = seconds_of(j.get("run_time_s"))
                if t is None:
                    continue
                jb = dict(base, conclusion=str(j.get("conclusion") or base["conclusion"]))
                out.append(
                    Example(
                        text=text_of(i, lambda job=job: serialize_job(job, wf, profile)),
                        runtime_s=t,
                        kind="job",
                        job_name=job.name,
                        usage=usage_targets(parse_record(j.get("usage"))),
                        **jb,
                    )
                )
                render(lambda h, job=job: serialize_job(job, wf, profile, history=h))
        elif len(wf.jobs) == 1:
            job = wf.jobs[0]
            out.append(
                Example(
                    text=text_of(0, lambda: serialize_job(job, wf, profile)),
                    runtime_s=runtime,
                    kind="job",
                    job_name=job.name,
                    **base,
                )
            )
            render(lambda h: serialize_job(job, wf, profile, history=h))
    return out


def _cache_key(data_dir: Path, kinds: Sequence[str]) -> str:
    h = hashlib.sha256()
    h.update(f"v{_CACHE_VERSION}|{data_dir.resolve()}|{','.join(sorted(kinds))}".encode())
    for stem in ("runs", "blobs"):
        p = _data_file(data_dir, stem, required=False)
        if p is not None:
            st = p.stat()
            h.update(f"|{p.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    for p in _text_sources():
        name = p.relative_to(Path(__file__).resolve().parents[1]).as_posix()
        h.update(name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:24]


def _text_sources(roots: Sequence[str] = ("training.examples", "workflows.parse", "text.serialize"),
                  ) -> list[Path]:
    """Source files of the modules that turn a run into text, and every ``laser_ci``
    module they import (transitively), sorted. Names are dotted, relative to ``laser_ci``."""
    import ast

    pkg = Path(__file__).resolve().parents[1]

    def file_of(name: str) -> Path | None:
        path = pkg.joinpath(*name.split("."))
        for candidate in (path.with_suffix(".py"), path / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    seen: dict[str, Path] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        path = file_of(name) if name else None
        if name in seen or path is None:
            continue
        seen[name] = path
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and (
                    node.module == "laser_ci" or node.module.startswith("laser_ci.")):
                base = node.module.removeprefix("laser_ci").lstrip(".")
                todo.append(base)
                todo.extend(f"{base}.{a.name}".lstrip(".") for a in node.names)
            elif isinstance(node, ast.Import):
                todo.extend(a.name.removeprefix("laser_ci.") for a in node.names
                            if a.name.startswith("laser_ci."))
    return sorted(seen.values())


def _cache_dir() -> Path:
    return Path(os.environ.get("LASER_CI_CACHE") or Path.home() / ".cache" / "laser-ci")


def _prune_cache(folder: Path, keep: int = 8) -> None:
    """Keep the ``keep`` most recently written example caches."""
    files = sorted(folder.glob("examples-*.jsonl.gz"), key=lambda p: p.stat().st_mtime)
    for old in files[:-keep]:
        old.unlink(missing_ok=True)


def load_examples(
    data_dir: str | os.PathLike[str],
    *,
    kinds: Sequence[str] = KINDS,
    split: str = "all",
    cache: bool = True,
    history: bool = True,
) -> list[Example]:
    """Every example of the folder (see the module doc), in run order, optionally one split.

    ``history``: fill ``history``, ``changed`` and ``text_warm`` from the earlier runs in
    the same folder (:func:`laser_ci.training.history.attach_history`); False leaves them None
    (and, without the cache, skips the work)."""
    for k in kinds:
        if k not in KINDS:
            raise ValueError(f"unknown kind {k!r}; expected {KINDS}")
    d = Path(data_dir)
    examples: list[Example] | None = None
    # the cache holds every kind, with history; the requested kinds are picked below
    cache_path = _cache_dir() / f"examples-{_cache_key(d, KINDS)}.jsonl.gz" if cache else None
    if cache_path is not None and cache_path.is_file():
        try:
            examples = [_from_row(row) for row in _iter_jsonl(cache_path)]
        except (OSError, ValueError, TypeError, KeyError):
            examples = None
    if examples is None:
        renderers: list[Any] = []
        examples, runs = _read(d, renderers)
        if history or cache_path is not None:
            from laser_ci.training.history import attach_history

            examples = attach_history(examples, workflow_blobs(runs), renderers)
        if cache_path is not None:
            try:
                cache_path.parent.mkdir(parents=True, exist_ok=True)
                tmp = cache_path.with_suffix(f".tmp{os.getpid()}")
                with gzip.open(tmp, "wt", encoding="utf-8") as f:
                    for e in examples:
                        f.write(json.dumps(asdict(e), ensure_ascii=False) + "\n")
                tmp.replace(cache_path)
                _prune_cache(cache_path.parent)
            except OSError:
                pass
    out = [e for e in filter_split(examples, split) if e.kind in kinds]
    if not history:
        out = [replace(e, history=None, text_warm=None, changed=None)
               if e.history is not None else e for e in out]
    return out


def _read(d: Path, renderers: list[Any], with_texts: bool = True,
          runs: list[dict[str, Any]] | None = None,
          ) -> tuple[list[Example], list[dict[str, Any]]]:
    """Every example of the folder's runs (every kind, no history, no cache), one renderer
    each appended to ``renderers`` (:func:`examples_from_run`), and the runs (``runs``:
    the folder's :func:`load_runs`, already read)."""
    runs = load_runs(d) if runs is None else runs
    needed = {b for r in runs for b in (r.get("files") or {}).values() if b is not None}
    blobs = load_blobs(d, needed)
    _check_blobs(d, needed, blobs)
    examples: list[Example] = []
    read_cache: dict[Any, Any] = {}
    for run in runs:
        examples.extend(examples_from_run(run, run_files(run, blobs), KINDS, read_cache,
                                          renderers, with_texts=with_texts))
    return examples, runs


def load_untexted(data_dir: str | os.PathLike[str], runs: list[dict[str, Any]] | None = None,
                  ) -> tuple[list[Example], list[Callable[[Any], str]]]:
    """The folder's examples as ``load_examples(cache=False, history=False)`` gives them, but
    with empty texts, and for each its renderer: ``renderers[i](None)`` is example ``i``'s
    text. For a reader that wants the texts of a few (``estimate --history`` reads each
    job's latest): a busy repository's runs carry a new repository profile nearly every
    commit, so serializing every run is most of the time of reading them. ``runs``: the
    folder's :func:`load_runs`, where the caller has read them already."""
    renderers: list[Callable[[Any], str]] = []
    examples, _runs = _read(Path(data_dir), renderers, with_texts=False, runs=runs)
    return examples, renderers


def workflow_blobs(runs: Iterable[dict[str, Any]]) -> dict[str, str | None]:
    """Run id -> blob id of the run's workflow file (None when not recorded)."""
    return {str(r.get("id") or ""): (r.get("files") or {}).get(str(r.get("workflow_path") or ""))
            for r in runs}


def _from_row(row: dict[str, Any]) -> Example:
    from laser_ci.text.history import History

    h = row.get("history")
    if h is not None:
        diff = h.get("diff")
        row = dict(row, history=History(tuple(h["runtimes"]),
                                        None if diff is None else tuple(diff)))
    return Example(**row)


def summarize(examples: Sequence[Example]) -> dict[str, int]:
    """Counts for reports: examples by kind, runs, fallbacks, success examples."""
    return {
        "examples": len(examples),
        "job": sum(e.kind == "job" for e in examples),
        "workflow": sum(e.kind == "workflow" for e in examples),
        "runs": len({e.run_id for e in examples}),
        "repos": len({e.repo for e in examples}),
        "fallback": sum(e.fallback for e in examples),
        "success": sum(e.conclusion == "success" for e in examples),
    }
