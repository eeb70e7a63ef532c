"""Safe, bounded YAML loading the way GitHub Actions reads workflow files.

GitHub reads workflows as YAML 1.2 (core schema): ``on``, ``yes``, ``no``, ``off`` are
strings, only ``true``/``false`` are booleans, ``1:20`` is a string. PyYAML speaks
YAML 1.1, so this module installs 1.2-style resolvers. It also:

- reports duplicate keys (GitHub rejects them) instead of silently keeping one,
- remembers the line of every mapping key (``YDict.lines``) for error messages,
- refuses alias bombs, deep nesting, huge and non-UTF-8 files with a one-line reason,
  never a traceback and never unbounded memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_BYTES = 2 * 1024 * 1024
MAX_NODES = 200_000  # nodes after expanding aliases
MAX_DEPTH = 64


class YDict(dict):  # type: ignore[type-arg]
    """A mapping that remembers the 1-based line of each key."""

    lines: dict[Any, int]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lines = {}

    def line_of(self, key: Any) -> int | None:
        return self.lines.get(key)


@dataclass
class LoadResult:
    data: Any = None
    error: str | None = None
    error_line: int | None = None
    duplicates: list[tuple[int, str]] = field(default_factory=list)  # (line, message)


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars, line tracking and duplicate detection."""

    duplicates: list[tuple[int, str]]


# YAML 1.2 core schema resolvers (replace PyYAML's 1.1 ones).
_Loader.yaml_implicit_resolvers = {}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)


def _construct_int(loader: _Loader, node: ScalarNode) -> int:
    value = str(loader.construct_scalar(node))
    if value.startswith("0o"):
        return int(value[2:], 8)
    if value.startswith("0x"):
        return int(value[2:], 16)
    return int(value)


def _construct_mapping(loader: _Loader, node: MappingNode) -> YDict:
    result = YDict()
    yield result
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            key = str(key)
        line = key_node.start_mark.line + 1
        if key in result:
            loader.duplicates.append((line, f"duplicate key '{key}' (first at line {result.lines.get(key)})"))
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines.setdefault(key, line)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
# Timestamps are plain strings in workflows.
_Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


def _check_size(root: Node) -> str | None:
    """Bound the document after alias expansion and its depth, in time linear in distinct nodes."""
    memo: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Node, depth: int) -> int:
        if depth > MAX_DEPTH:
            raise _TooDeep
        key = id(node)
        if key in active:
            raise _Recursive
        if key in memo:
            return memo[key]
        active.add(key)
        total = 1
        if isinstance(node, SequenceNode):
            for child in node.value:
                total += size(child, depth + 1)
                if total > MAX_NODES:
                    break
        elif isinstance(node, MappingNode):
            for k, v in node.value:
                total += size(k, depth + 1) + size(v, depth + 1)
                if total > MAX_NODES:
                    break
        active.discard(key)
        memo[key] = total
        return total

    try:
        n = size(root, 0)
    except _TooDeep:
        return f"YAML nests deeper than {MAX_DEPTH} levels"
    except _Recursive:
        return "YAML alias refers to itself (recursive structure)"
    if n > MAX_NODES:
        return f"YAML expands to more than {MAX_NODES:,} nodes through aliases (alias bomb?)"
    return None


class _TooDeep(Exception):
    pass


class _Recursive(Exception):
    pass


def decode_text(raw: str | bytes) -> tuple[str | None, str | None, int | None]:
    """Return (text, error, line) for file content given as bytes or text."""
    if isinstance(raw, str):
        return raw, None, None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8"), None, None
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return None, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})", line


def load_yaml(raw: str | bytes) -> LoadResult:
    """Parse one YAML document. Never raises: problems come back in the result."""
    size = len(raw.encode("utf-8", "replace") if isinstance(raw, str) else raw)
    if size > MAX_BYTES:
        return LoadResult(error=f"file is {size / 1e6:.1f} MB; workflow files over "
                          f"{MAX_BYTES // (1024 * 1024)} MB are not read")
    text, err, line = decode_text(raw)
    if text is None:
        return LoadResult(error=err, error_line=line)
    if not text.strip():
        return LoadResult(error="empty file")
    loader = _Loader(text)
    loader.duplicates = []
    try:
        node = loader.get_single_node()
        if node is None:
            return LoadResult(error="empty file")
        problem = _check_size(node)
        if problem:
            return LoadResult(error=problem)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(x for x in (exc.context, exc.problem) if x) or "invalid YAML"
        return LoadResult(error=f"invalid YAML: {reason}", error_line=mark.line + 1 if mark else None)
    except yaml.YAMLError as exc:
        return LoadResult(error=f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else exc!r}")
    except RecursionError:
        return LoadResult(error="YAML nests too deeply")
    except (ValueError, TypeError, OverflowError) as exc:
        return LoadResult(error=f"invalid YAML value: {exc}")
    finally:
        loader.dispose()
    return LoadResult(data=data, duplicates=loader.duplicates)
