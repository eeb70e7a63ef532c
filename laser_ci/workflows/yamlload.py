"""Safe, bounded YAML loading the way GitHub Actions reads workflow files.

GitHub reads workflows as YAML 1.2 (core schema): ``on``, ``yes``, ``no``, ``off`` are
strings, only ``true``/``false`` are booleans, ``1:20`` is a string. PyYAML speaks
YAML 1.1, so this module installs 1.2-style resolvers. It also:

- reports duplicate keys (GitHub rejects them, comparing keys case-insensitively, and
  keeps the first value) instead of silently keeping the last,
- turns non-string mapping keys into text as GitHub does (``3.10:`` is the key ``"3.1"``),
- reports YAML merge keys (``<<:``), which GitHub does not support,
- lets an anchor be defined again, as YAML 1.2 does ("anchors need not be unique"; an alias
  refers to the most recent node with that anchor) where PyYAML refuses the file,
- remembers the line of every mapping key (``YDict.lines``) for error messages,
- refuses alias bombs, deep nesting, huge and non-UTF-8 files with a one-line reason and,
  wherever there is one, the line; never a traceback and never unbounded memory.

GitHub's own reader (``src/Sdk/WorkflowParser/Conversion/YamlObjectReader.cs`` and
``ObjectTemplating/TemplateReader.cs`` in github.com/actions/runner) is the reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_BYTES = 2 * 1024 * 1024
TOO_LARGE = (f"file is larger than {MAX_BYTES // (1024 * 1024)} MB; "
             "workflow files that large are not read")
# Nodes after expanding aliases. GitHub's YamlObjectReader stops at 50,000 traversed nodes
# (``c_maxYamlNodes``), aliases replayed, and fails the workflow ("Maximum YAML nodes exceeded").
MAX_NODES = 50_000
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
    _depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:  # type: ignore[override]
        # PyYAML composes recursively: refuse deep nesting before Python's stack does.
        self._depth += 1
        try:
            event = self.peek_event()
            if self._depth > MAX_DEPTH:
                raise _TooDeepWhileParsing(event.start_mark.line + 1)
            anchor = getattr(event, "anchor", None)
            if anchor is not None and not isinstance(event, yaml.AliasEvent):
                # YAML 1.2 section 3.2.2.2: a later anchor of the same name replaces the
                # earlier one for the aliases after it; aliases before it keep their node.
                self.anchors.pop(anchor, None)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


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


def key_text(key: Any) -> str:
    """A mapping key as GitHub sees it: scalars become their text (``true``, ``3.1``, ``""``)."""
    if isinstance(key, str):
        return key
    if key is None:
        return ""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float) and key.is_integer():
        return str(int(key))
    return str(key)


def _construct_mapping(loader: _Loader, node: MappingNode) -> YDict:
    result = YDict()
    yield result
    seen: dict[str, Any] = {}  # casefolded key -> the key kept
    for key_node, value_node in node.value:
        line = key_node.start_mark.line + 1
        if isinstance(key_node, ScalarNode) and key_node.value == "<<" and key_node.style is None:
            loader.duplicates.append((line, "YAML merge keys (`<<`) are not supported by GitHub "
                                            "Actions; repeat the keys or use an alias for the whole value"))
        key = key_text(loader.construct_object(key_node, deep=True))
        folded = key.casefold()
        if folded in seen:
            # GitHub: "'<key>' is already defined"; keys compare case-insensitively and the
            # first value is kept.
            first_line = result.lines.get(seen[folded])
            loader.duplicates.append((line, f"duplicate key '{key}' (first at line {first_line})"))
            continue
        seen[folded] = key
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = line


def well_formed(text: str) -> str:
    """``text`` as UTF-8 can hold it: an escaped surrogate pair (YAML keeps
    ``"\\uD83D\\uDE00"`` as two surrogates) as the character it stands for, a lone
    surrogate (``"\\uD800"``) as U+FFFD, as GitHub's UTF-8 shows it; other text unchanged."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _construct_str(loader: _Loader, node: ScalarNode) -> str:
    # every string of a workflow is well formed from here on: a job named "x\uD800" in a
    # pull request cannot stop the report, the comment or the JSON that write it
    return well_formed(str(loader.construct_scalar(node)))


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:str", _construct_str)
# Timestamps are plain strings in workflows.
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_str)


def _check_size(root: Node) -> tuple[str, int] | None:
    """Bound the document after alias expansion, and its depth, in time linear in distinct
    nodes. Returns (reason, line) for a document over a bound."""
    memo: dict[int, tuple[int, int]] = {}  # node -> (expanded size, expanded height)
    active: set[int] = set()
    culprit: list[Node] = []  # the innermost node whose expansion went over MAX_NODES
    aliased: list[bool] = []  # a node reached twice: through an alias

    def size(node: Node, depth: int) -> tuple[int, int]:
        key = id(node)
        if key in active:
            raise _Recursive(node)
        if key in memo:
            aliased.append(True)
            total, height = memo[key]
            if depth + height > MAX_DEPTH:
                raise _TooDeep(node)
            return total, height
        if depth > MAX_DEPTH:
            raise _TooDeep(node)
        active.add(key)
        total, height = 1, 0
        if isinstance(node, SequenceNode):
            children: list[Node] = list(node.value)
        elif isinstance(node, MappingNode):
            children = [x for pair in node.value for x in pair]
        else:
            children = []
        for child in children:
            n, h = size(child, depth + 1)
            total += n
            height = max(height, h + 1)
            if total > MAX_NODES:
                if not culprit:
                    culprit.append(node)
                break
        active.discard(key)
        memo[key] = (total, height)
        return total, height

    try:
        n, _ = size(root, 0)
    except _TooDeep as exc:
        return f"YAML nests deeper than {MAX_DEPTH} levels", _line_of(exc.args[0])
    except _Recursive as exc:
        return "YAML alias refers to itself (recursive structure)", _line_of(exc.args[0])
    if n > MAX_NODES:
        where = culprit[0] if culprit else root
        if not aliased:  # a large file as written, not an expansion
            return f"YAML has more than {MAX_NODES:,} nodes", _line_of(where)
        return (f"YAML expands to more than {MAX_NODES:,} nodes through aliases (alias bomb?)",
                _line_of(where))
    return None


def _line_of(node: Node) -> int:
    return node.start_mark.line + 1 if node.start_mark is not None else 1


class _TooDeep(Exception):
    pass


class _Recursive(Exception):
    pass


class _TooDeepWhileParsing(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


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
    """Parse one YAML document. Never raises: problems come back in the result.

    A problem with the whole file (too large, empty) is reported at line 1, the way GitHub
    reports "(Line: 1, Col: 1): Required property is missing: jobs".
    """
    size = len(raw.encode("utf-8", "replace") if isinstance(raw, str) else raw)
    if size > MAX_BYTES:
        # File sources may stop reading at MAX_BYTES + 1, so the true size is not known here.
        return LoadResult(error=TOO_LARGE, error_line=1)
    text, err, line = decode_text(raw)
    if text is None:
        return LoadResult(error=err, error_line=line)
    if not text.strip():
        return LoadResult(error="empty file", error_line=1)
    loader: _Loader | None = None
    try:
        # The constructor already scans the text for control characters (ReaderError).
        loader = _Loader(text)
        loader.duplicates = []
        node = loader.get_single_node()
        if node is None:
            return LoadResult(error="empty file (only comments)", error_line=1)
        problem = _check_size(node)
        if problem:
            return LoadResult(error=problem[0], error_line=problem[1])
        data = loader.construct_document(node)
    except _TooDeepWhileParsing as exc:
        return LoadResult(error=f"YAML nests deeper than {MAX_DEPTH} levels", error_line=exc.line)
    except yaml.reader.ReaderError as exc:
        # A control character; ``position`` counts characters of the decoded text.
        bad_line = text.count("\n", 0, max(exc.position, 0)) + 1
        return LoadResult(error=f"invalid YAML: special character #x{exc.character:04x} is not allowed"
                          if isinstance(exc.character, int) else f"invalid YAML: {exc.reason}",
                          error_line=bad_line)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(x for x in (exc.context, exc.problem) if x) or "invalid YAML"
        return LoadResult(error=f"invalid YAML: {reason}", error_line=mark.line + 1 if mark else None)
    except yaml.YAMLError as exc:
        return LoadResult(error=f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else exc!r}")
    except RecursionError:
        return LoadResult(error="YAML nests too deeply", error_line=1)
    except (ValueError, TypeError, OverflowError) as exc:
        return LoadResult(error=f"invalid YAML value: {exc}")
    finally:
        if loader is not None:
            loader.dispose()
    return LoadResult(data=data, duplicates=loader.duplicates)
