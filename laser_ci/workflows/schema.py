"""Check a workflow file against GitHub's workflow schema, as GitHub refuses a file that
breaks it ("Invalid workflow file"): an unknown key (``runs_on``, ``need``, ``stratgy``, a
top-level ``description``), a job without ``runs-on``, an input ``type: int``.

The schema is SchemaStore's GitHub workflow schema as the PyPI package ``check-jsonschema``
vendors it (:data:`SOURCE`, the file ``github-workflow.schema.json`` beside this module,
unchanged, with its license), validated with the ``jsonschema`` library rather than
hand-written key lists. Where it is stale or reads otherwise than GitHub, it is patched
here when loaded, each patch with its reason (:data:`PATCHES`).

Each problem is one :class:`ReadError` naming the file and the line of the key, the JSON
path mapped back to the YAML (:class:`~laser_ci.workflows.yamlload.YDict` keeps each key's
line). Never raises on bad input.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from importlib import resources
from typing import Any

from laser_ci.workflows.model import ReadError
from laser_ci.workflows.yamlload import YDict

__all__ = ["PATCHES", "SOURCE", "check_workflow", "load_schema"]

SOURCE = {
    "schema": "https://json.schemastore.org/github-workflow.json (SchemaStore, Apache-2.0)",
    "vendored_from": "PyPI check-jsonschema 0.39.0, "
                     "check_jsonschema/builtin_schemas/vendor/github-workflows.json",
    "sha256": "d10c9f4656e1bd5bc6727e9b35080e017dc167154726fca93da33c7a6bd1c4f3",
    "file": "laser_ci/workflows/github-workflow.schema.json",
}
MAX_ERRORS = 20  # per file: past that the file is refused anyway


def _refs_with_siblings(schema: dict[str, Any]) -> None:
    """A ``$ref`` beside other keywords: draft-07 ignores the others, SchemaStore means both
    (``on.workflow_dispatch`` is a ``$ref`` beside the ``oneOf`` that checks its inputs, so
    ``type: int`` passed). Read as ``allOf: [{$ref}, {the rest}]``, as later drafts do."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$ref" in node and len(set(node) - {"$ref", "$comment", "description"}) > 0:
                ref = node.pop("$ref")
                rest = {k: node.pop(k) for k in list(node) if k not in ("$comment", "description")}
                node["allOf"] = [{"$ref": ref}, rest]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _strategy_without_matrix(schema: dict[str, Any]) -> None:
    """``strategy: {fail-fast: false}`` without a matrix: GitHub runs it (current workflows
    of containerd and polars have it); the schema requires ``matrix``."""
    schema["definitions"]["normalJob"]["properties"]["strategy"].pop("required", None)


def _input_type_optional(schema: dict[str, Any]) -> None:
    """A ``workflow_dispatch`` input without ``type`` is a string (GitHub docs,
    on.workflow_dispatch.inputs); the schema's branches each require ``type``."""
    branches = schema["definitions"]["workflowDispatchInput"]["oneOf"]
    for branch in branches:
        if branch.get("properties", {}).get("type", {}).get("const") == "string":
            branch["required"] = []  # `type` absent or "string" (its const still applies)
        else:
            branch.setdefault("required", ["type"])


def _nulls(schema: dict[str, Any]) -> None:
    """An empty value (``EMPTY:``, YAML null) of an ``env`` variable or a matrix value is
    read as the empty string by GitHub; the schema allows only strings, numbers, booleans."""
    definitions = schema["definitions"]
    definitions["env"]["oneOf"][0]["additionalProperties"]["oneOf"].append({"type": "null"})
    definitions["configuration"]["oneOf"].append({"type": "null"})


def _empty_needs(schema: dict[str, Any]) -> None:
    """``needs: []``: no jobs to wait for; the schema asks for at least one."""
    schema["definitions"]["jobNeeds"]["oneOf"][0].pop("minItems", None)


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _loose_scalars(schema: dict[str, Any]) -> None:
    """GitHub reads a number or a boolean where it expects text as its text (``run:
    true``, ``default: 1.0`` of a string input, ``branches: [main, 2]`` ran in the shared
    data's runs); the schema asks for a string. And ``oneOf`` (exactly one) becomes
    ``anyOf``: with text read loosely, a number may match two branches."""
    for node in _walk(schema):
        if node.get("type") == "string":
            node["type"] = ["string", "number", "boolean"]
        if "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")


def _loose_events(schema: dict[str, Any]) -> None:
    """An event's settings GitHub accepts that the schema refuses, all in workflows that
    ran (the shared data): one string for a list (``branches: main``, ``types: completed``),
    keys an event does not have (``workflow_dispatch: {branches: …}``), ignored, and an
    empty value for a mapping (``secrets: {TOKEN: }``, a secret with no settings)."""
    definitions = schema["definitions"]
    for name in ("globs", "types"):
        definitions[name] = {"anyOf": [{"type": ["string", "number", "boolean"]},
                                       definitions[name]]}
    for node in list(_walk(schema["properties"]["on"])):
        if node.get("additionalProperties") is False:
            node.pop("additionalProperties")
        if node.get("type") == "object":  # `secrets: {TOKEN: }`: an empty mapping
            node["type"] = ["object", "null"]
        if node.get("type") == "array":
            array = dict(node)
            node.clear()
            node["anyOf"] = [{"type": ["string", "number", "boolean"]}, array]


PATCHES: tuple[tuple[str, Callable[[dict[str, Any]], None]], ...] = (
    ("a $ref beside other keywords means both (draft-07 ignored the others)", _refs_with_siblings),
    ("strategy without matrix is valid", _strategy_without_matrix),
    ("a workflow_dispatch input without type is a string", _input_type_optional),
    ("an empty env or matrix value is the empty string", _nulls),
    ("needs: [] is no needs", _empty_needs),
    ("text read loosely: a number or boolean is its text; oneOf as anyOf", _loose_scalars),
    ("an event's settings: one string for a list, unknown keys, empty mappings",
     _loose_events),
)
"""What is patched in the vendored schema when it is loaded, and why (each function's
docstring). Checked on every workflow of the shared real-workflows data: no false error."""


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    """The vendored schema with :data:`PATCHES` applied, read once."""
    text = resources.files("laser_ci.workflows").joinpath("github-workflow.schema.json") \
        .read_text("utf-8")
    schema = json.loads(text)
    for _why, patch in PATCHES:
        patch(schema)
    return schema


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft7Validator(copy.deepcopy(load_schema()))


def _plain(value: Any, depth: int = 0) -> Any:
    """The YAML as JSON sees it: keys as text (YAML allows a number as a key)."""
    if depth > 200:
        return None
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in value]
    return value


def _first_line(node: Any) -> int | None:
    if isinstance(node, YDict):
        lines = [x for k in node if (x := node.line_of(k)) is not None]
        return min(lines) if lines else None
    if isinstance(node, list):
        return next((x for item in node if (x := _first_line(item)) is not None), None)
    return None


def _line(doc: Any, path: list[Any], key: str | None = None) -> int | None:
    """The line of ``path`` (then ``key`` in it) in the YAML: the line of the deepest key
    on the way that has one."""
    node, line = doc, None
    for part in [*path, *([key] if key is not None else [])]:
        if isinstance(node, dict):
            match = next((k for k in node if str(k) == str(part)), None)
            if match is None:
                break
            if isinstance(node, YDict) and node.line_of(match) is not None:
                line = node.line_of(match)
            node = node[match]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
            line = _first_line(node) or line
        else:
            break
    return line


def _where(path: list[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + str(part))
    return out or "the top level"


def _branches(error: Any) -> list[list[Any]]:
    by_branch: dict[int, list[Any]] = {}
    for sub in error.context or ():
        by_branch.setdefault(sub.relative_schema_path[0], []).append(sub)
    return list(by_branch.values())


def _cost(errors: list[Any], depth: int = 0) -> tuple[int, int]:
    """(values of another kind, problems) of a branch's errors, a nested ``anyOf`` by its
    best branch."""
    kind = count = 0
    for e in errors:
        if e.validator in ("oneOf", "anyOf") and e.context and depth < 20:
            k, c = min(_cost(b, depth + 1) for b in _branches(e))
        else:
            k = int(not e.relative_path and e.validator in ("type", "const", "enum"))
            c = 1
        kind, count = kind + k, count + c
    return kind, count


def _branch(error: Any) -> list[Any]:
    """The errors of the ``oneOf``/``anyOf`` branch the value was most likely meant for:
    a branch of another type last (a job with ``uses:`` is a call), then the fewest
    errors."""
    branches = _branches(error)
    return min(branches, key=_cost) if branches else []


def _one_of_keys(error: Any) -> list[str] | None:
    """The keys of which one is needed, when each branch only misses one (a step needs
    ``uses`` or ``run``)."""
    branches = _branches(error)
    if len(branches) < 2 or any(len(b) != 1 or b[0].validator != "required"
                                or list(b[0].relative_path) for b in branches):
        return None
    missing = [k for b in branches for k in b[0].validator_value
               if isinstance(b[0].instance, dict) and k not in b[0].instance]
    return missing if len(missing) == len(branches) else None


def _leaves(error: Any, depth: int = 0) -> Iterator[Any]:
    if error.validator in ("oneOf", "anyOf") and _one_of_keys(error):
        yield error
    elif error.validator in ("oneOf", "anyOf") and error.context and depth < 20:
        for sub in _branch(error):
            yield from _leaves(sub, depth + 1)
    elif error.validator == "allOf" and error.context and depth < 20:
        for sub in error.context:
            yield from _leaves(sub, depth + 1)
    else:
        yield error


def _messages(error: Any) -> Iterator[tuple[list[Any], str | None, str]]:
    """(path, key in it, words) for one leaf error."""
    path = list(error.absolute_path)
    where = _where(path)
    keys = _one_of_keys(error) if error.validator in ("oneOf", "anyOf") else None
    if keys:
        yield path, None, f"{where}: needs one of " + ", ".join(f"`{k}`" for k in keys)
    elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        patterns = error.schema.get("patternProperties", {})
        for key in error.instance:
            if key not in known and not any(re.search(p, key) for p in patterns):
                yield path, key, f"{where}: unknown key `{key}`"
    elif error.validator == "required" and isinstance(error.instance, dict):
        for key in error.validator_value:
            if key not in error.instance:
                yield path, None, f"{where}: `{key}` is missing"
    elif error.validator == "enum":
        allowed = ", ".join(str(x) for x in error.validator_value)
        yield path, None, f"{where}: {json.dumps(error.instance)} is not one of {allowed}"
    elif error.validator == "const":
        return  # one branch's value: the enum of all of them says it
    elif error.validator == "type" and len(path) == 2 and path[0] == "jobs":
        return  # a job that is not a mapping: the reader says so
    elif error.validator == "type":
        kinds = error.validator_value
        kinds = " or ".join(kinds) if isinstance(kinds, list) else kinds
        yield path, None, f"{where}: {_a(_kind(error.instance))}, not {_a(kinds)}"
    else:
        text = error.message if len(error.message) <= 200 else error.message[:199] + "…"
        yield path, None, f"{where}: {text}"


def _a(word: str) -> str:
    """``word`` with its article: ``an array``, ``a string``."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {str: "string", list: "array", type(None): "null"}.get(type(value), "object")


def check_workflow(path: str, doc: Any) -> list[ReadError]:
    """What GitHub's workflow schema refuses in ``doc`` (a loaded workflow file), one
    error per problem with its line; at most :data:`MAX_ERRORS`."""
    try:
        errors = list(_validator().iter_errors(_plain(doc)))
    except RecursionError:  # a pathological nesting: the YAML loader bounds it before this
        return []
    out: dict[tuple[int | None, str], ReadError] = {}
    for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        for leaf in _leaves(error):
            for where, key, words in _messages(leaf):
                line = _line(doc, where, key)
                message = f"not a valid workflow (GitHub refuses it): {words}"
                out.setdefault((line, message), ReadError(path, line, message))
    return sorted(out.values(), key=lambda e: (e.line or 0, e.message))[:MAX_ERRORS]
