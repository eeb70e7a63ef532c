"""What a workflow's run knows before it starts, as GitHub sets it: the ``inputs``
context of a workflow read on its own (a dispatch input is what the user types; a
callable workflow's its default) and the ``github`` context (``event_name`` among the
triggers, ``repository`` and ``repository_owner`` when known)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from laser_ci.workflows.expressions import ANY, Unknown, unknown_refs
from laser_ci.workflows.values import PartialContext

__all__ = ["ASSUMED_PULL_REQUEST", "INPUT_EVENTS", "PULL_REQUEST_EVENTS", "event_payload",
           "github_context", "input_defaults",
           "input_refs", "pick_event"]


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


INPUT_EVENTS = ("workflow_call", "workflow_dispatch")
"""The events whose runs have an ``inputs`` context (GitHub docs, Contexts: inputs)."""


def input_defaults(on: Any, events: tuple[str, ...] = INPUT_EVENTS
                    ) -> dict[str, Any]:
    """The ``inputs`` context of a workflow read on its own: a ``workflow_dispatch`` input
    is what the user types (an :class:`Unknown` that may be its default: a default only
    pre-fills the form); a callable workflow's input its declared default, as it has no
    caller here."""
    inputs: dict[str, Any] = {}
    for event in events:
        declared = _as_dict(_as_dict(_as_dict(on).get(event)).get("inputs"))
        for name, spec in declared.items():
            if event == "workflow_dispatch":
                default = _as_dict(spec).get("default")
                options = _as_dict(spec).get("options")
                known = tuple(o for o in (options if isinstance(options, list) else [default])
                              if o is not None)
                kind = str(_as_dict(spec).get("type", "string"))
                closed = kind == "choice" and bool(known) or kind == "boolean"
                inputs[str(name)] = Unknown(
                    refs=(f"inputs.{name}",),
                    options=(True, False) if kind == "boolean" else known,
                    open=None if closed else ANY, text=f"${{{{ inputs.{name} }}}}")
            elif isinstance(spec, dict) and "default" in spec:
                inputs.setdefault(str(name), spec["default"])
    return inputs


def input_refs(value: Any) -> tuple[str, ...]:
    """The ``inputs.*`` a value only known at run time depends on, as written."""
    return tuple(r for r in unknown_refs(value) if r.lower().startswith("inputs."))


PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target", "merge_group")
"""The events of a pull request's run, the one the Action's comment is about."""


def event_payload(event: str, payload: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What ``github.event`` is known to hold before a run of ``event`` (a plain dict:
    what it lacks is unknown): the run's payload when given (the Action has it); else a
    run of an event other than a pull request's has no ``pull_request``."""
    if payload is not None:
        return dict(payload)
    return PartialContext({} if event in PULL_REQUEST_EVENTS else {"pull_request": None})


ASSUMED_PULL_REQUEST = PartialContext({"pull_request": PartialContext({"labels": []})})
"""A pull request's run whose payload is not known, for a value that depends on it (a
runner chosen by a label): as it runs without labels, the common case."""


def github_context(triggers: Sequence[str], repository: str | None = None,
                   event: str | None = None,
                   payload: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What ``github`` holds before a run: ``event_name``, one of the workflow's triggers
    (``event`` when given and among them), ``event`` as far as known
    (:func:`event_payload`; ``payload``: the run's, for ``event``), and
    ``repository``/``repository_owner`` when known. A workflow that can be called runs
    with its caller's event: unknown."""
    known: dict[str, Any] = {}
    if repository and "/" in repository:
        known = {"repository": repository, "repository_owner": repository.split("/", 1)[0]}
    if event is not None and event in triggers:
        return {**known, "event_name": event, "event": event_payload(event, payload)}
    if not triggers or "workflow_call" in triggers:
        return known
    if len(triggers) == 1:
        return {**known, "event_name": triggers[0], "event": event_payload(triggers[0])}
    return {**known, "event_name": Unknown(refs=("github.event_name",), options=tuple(triggers),
                                           open=None)}


def pick_event(triggers: Sequence[str]) -> str | None:
    """The trigger whose run a value that differs per trigger is shown for: a pull
    request's (``pull_request``, ``pull_request_target``, ``merge_group``), else none."""
    return next((e for e in PULL_REQUEST_EVENTS if e in triggers), None)
