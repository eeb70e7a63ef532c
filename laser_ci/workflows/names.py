"""Job display names, as GitHub's checks list shows them, and the parts only known at run time.

GitHub's rules (``src/Sdk/WorkflowParser/Conversion/MatrixBuilder.cs`` and
``JobNameBuilder.cs`` in github.com/actions/runner): a ``name`` without an expression, or
else the job id, followed by `` (v1, v2)``: the scalar values of the matrix *vectors* only
(not the keys an ``include`` adds), nested values flattened, nulls and empty strings
skipped; an ``include`` entry that matched no combination shows all its values; the result
is cut to 100 characters. A ``name`` with an expression is evaluated instead (no suffix),
falling back to that default when it comes out empty (an evaluated name is not cut here:
the job text has always kept it whole). A job of a called workflow is named
``<caller job name> / <called job name>``.

A name is *known* when every part of it is known before the run. Otherwise it has
``parts``: literal text and :class:`~laser_ci.workflows.model.NameHole` parts (a value
only the run knows: ``inputs.test-name`` passed from a matrix computed at run time, or the
`` (v1, v2)`` suffix of such a matrix). :func:`label` writes the parts for people
(``Unit Test / …``), :func:`pattern` matches the names GitHub gave the job's instances in
earlier runs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from laser_ci.workflows.expressions import (
    Unknown,
    as_string,
    has_expression,
    interpolate,
    literal_string,
    to_text,
    written_text,
)
from laser_ci.workflows.model import NameHole

MAX_NAME_LENGTH = 100  # JobNameBuilder: longer names are cut to 97 characters + "..."
HOLE = "…"

Parts = tuple[str | NameHole, ...]


def _segments(value: Any) -> list[str]:
    """The scalar leaves of a value, depth first, as text; nulls and empty strings skipped."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif item is not None:
            text = to_text(item)
            if text:
                out.append(text)
    return out


def matrix_suffix(combo: dict[str, Any], keys: Sequence[str] | None = None) -> str:
    """The `` (v1, v2)`` GitHub appends to a job name for its matrix values.

    ``keys``: the keys whose values are shown (the matrix vectors); default all of them.
    """
    shown = combo if keys is None else {k: combo[k] for k in keys if k in combo}
    segments = _segments(list(shown.values()))
    return " (" + ", ".join(segments) + ")" if segments else ""


def cut(name: str) -> str:
    return name if len(name) <= MAX_NAME_LENGTH else name[: MAX_NAME_LENGTH - 3] + "..."


def _literal(name: Any) -> str | None:
    """The name as GitHub's reader leaves it when it is a literal: no expression, or only a
    quoted string in one (``${{ 'Build' }}``); ``""`` for no name; None for a name with an
    expression to evaluate. A literal is followed by the matrix suffix, ``""`` is the id."""
    text = "" if name is None else to_text(name)
    return text if not has_expression(text) else literal_string(text)


def display_name(job_id: str, name: Any, combo: dict[str, Any], inputs: dict[str, Any],
                 *, suffix_keys: Sequence[str] | None = None,
                 contexts: Mapping[str, Any] | None = None) -> str:
    """The job's name in the checks list, with any part only known at run time kept as
    written (``Shard ${{ matrix.shard }}``).

    ``suffix_keys``: the combination's keys shown in the suffix (default all of them).
    ``combo`` may be a :class:`~laser_ci.workflows.expressions.FullContext` (a static matrix:
    absent keys are null). ``contexts``: more contexts for the expression (``github``, ...).
    """
    literal = _literal(name)
    default = cut((literal or job_id) + matrix_suffix(combo, suffix_keys))
    if literal is not None:
        return default
    value = interpolate(to_text(name), {**(contexts or {}), "matrix": combo, "inputs": inputs})
    text = written_text(value) if isinstance(value, Unknown) else as_string(value)
    return text if text else default  # only an empty name falls back (IsNullOrEmpty)


def name_parts(job_id: str, name: Any, contexts: Mapping[str, Any], *,
               suffix_keys: Sequence[str] | None = None, dynamic: bool = False,
               matrix_refs: tuple[str, ...] = ()) -> Parts:
    """The display name as literal text and holes; ``contexts`` hold ``matrix`` (absent or
    unknown for a matrix computed at run time), ``inputs`` and the rest. ``dynamic``: the
    job's matrix values are not known here (a matrix computed at run time, or the name of
    a job definition whatever its combination): its suffix is a hole."""
    combo = contexts.get("matrix")
    literal = _literal(name)
    if literal is not None:
        base = literal or job_id
        if dynamic:
            return (base, NameHole(refs=matrix_refs or ("matrix",), suffix=True))
        if not isinstance(combo, dict):
            return (cut(base),)
        return (cut(base + matrix_suffix(combo, suffix_keys)),)
    value = interpolate(to_text(name), contexts)
    if not isinstance(value, Unknown):
        text = as_string(value)
        if text:  # only an empty name falls back to the default (IsNullOrEmpty)
            return (text,)
        return name_parts(job_id, None, contexts, suffix_keys=suffix_keys, dynamic=dynamic,
                          matrix_refs=matrix_refs)
    return _flatten(value)


def _flatten(value: Unknown) -> Parts:
    if not value.parts:
        return (NameHole(refs=value.refs),)
    out: list[str | NameHole] = []
    for p in value.parts:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, Unknown):
            out.extend(_flatten(p))
    return tuple(out)


def join(prefix: Parts, parts: Parts) -> Parts:
    """The parts of ``<prefix> / <parts>``: the name of a job in a called workflow."""
    out: list[str | NameHole] = []
    for p in (*prefix, " / ", *parts):
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif p != "":
            out.append(p)
    return tuple(out)


def is_known(parts: Parts) -> bool:
    return all(isinstance(p, str) for p in parts)


def label(parts: Parts, hole: str = HOLE) -> str:
    """The parts for people: each hole as ``hole`` (a suffix hole as `` (…)``)."""
    return "".join(p if isinstance(p, str) else f" ({hole})" if p.suffix else hole
                   for p in parts)


def pattern(parts: Parts) -> re.Pattern[str]:
    """A regular expression matching the names GitHub may give an instance."""
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(re.escape(p))
        elif p.suffix:
            out.append(r"(?: \(.*\))?")
        else:
            out.append(".*")
    return re.compile("".join(out), re.DOTALL)


def specificity(parts: Parts) -> int:
    """How much of a name is literal: the more, the better a match says it is this job."""
    return sum(len(p) for p in parts if isinstance(p, str))


def refs(parts: Parts) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r for p in parts if isinstance(p, NameHole) for r in p.refs))
