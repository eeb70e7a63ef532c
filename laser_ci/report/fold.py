"""One line for the same advice on several jobs, true of every one of them.

The messages are compared sentence by sentence with their numbers masked. A sentence all
of them share keeps its wording, and a number that varies is given as its range over the
jobs (``That is $2.160–$22.32 per hung run``, ``Suggest `timeout-minutes: 20`–`95```). A
sentence only some of them have says on how many (``(2 of 8 jobs)``). Where the messages
differ in more than that, the line is one job's message and says that it is that job's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

# a number standing on its own (not part of a name like `ubuntu-22.04` or p90), with its $
# or its x (`1.5x faster`); never the start of one (`1` of `1.5x`)
_NUMBER = re.compile(r"(?<![\w.\-$])\$?\d+(?:,\d{3})*(?:\.\d+)?x?(?![\w\-]|\.\d)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")
MAX_PARTIAL = 2  # sentences only some messages have, beyond which the messages "differ"


def _value(token: str) -> float:
    return float(token.lstrip("$").rstrip("x").replace(",", ""))


def _template(sentence: str) -> tuple[str, list[str]]:
    """``sentence`` with each number as ``\\0`` and the numbers in order."""
    return _NUMBER.sub("\0", sentence), _NUMBER.findall(sentence)


def _ranged(template: str, values: Sequence[Sequence[str]]) -> str:
    """``template`` with each number the one all share, or its range ``lo–hi``: as
    ``lo`–`hi`` where the number ends a code span, so that each end is a value to copy."""
    parts = template.split("\0")
    out = [parts[0]]
    for i, rest in enumerate(parts[1:]):
        tokens = [v[i] for v in values]
        lo, hi = min(tokens, key=_value), max(tokens, key=_value)
        if _value(lo) == _value(hi):
            shown = tokens[0]
        elif rest.startswith("`") and "".join(out).count("`") % 2 == 1:
            shown = f"{lo}`–`{hi}"
        else:
            shown = f"{lo}–{hi}"
        out.append(shown + rest)
    return "".join(out)


def _share(sentence: str, n: int, of: int) -> str:
    words = f"({n} of {of} jobs)"
    if sentence.endswith("."):
        return f"{sentence[:-1]} {words}."
    return f"{sentence} {words}"


def fold_messages(messages: Sequence[str]) -> str | None:
    """One message for all of ``messages`` (the same advice on several jobs), or None when
    they differ in more than their numbers and :data:`MAX_PARTIAL` sentences."""
    if not messages:
        return None
    order: list[str] = []  # sentence templates in the order the messages give them
    seen: dict[str, list[list[str]]] = {}
    for message in messages:
        sentences = [_template(s) for s in _SENTENCE_END.split(message.strip())]
        for k, (template, numbers) in enumerate(sentences):
            if template not in seen:
                # after this message's sentence before it, else before its next known one
                before = [order.index(t) + 1 for t, _ in sentences[:k] if t in seen]
                later = [order.index(t) for t, _ in sentences[k + 1:] if t in seen]
                order.insert(before[-1] if before else later[0] if later else len(order),
                             template)
                seen[template] = []
            seen[template].append(numbers)
    partial = [t for t in order if len(seen[t]) < len(messages)]
    if len(partial) > MAX_PARTIAL:
        return None
    out = []
    for template in order:
        sentence = _ranged(template, seen[template])
        n = len(seen[template])
        out.append(sentence if n == len(messages) else _share(sentence, n, len(messages)))
    return " ".join(out)


def advice_key(advice: Mapping[str, Any]) -> str:
    """What makes two advices the same advice: their kind and opening words, numbers
    masked (``timeout: No `timeout-minutes`: a hung``)."""
    opening = " ".join(re.sub(r"[\d.$]+", "#", str(advice.get("message") or "")).split()[:4])
    return f"{advice.get('kind')}: {opening}"


def folded_advice(items: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """``(e.g. job, message)`` for the same advice on several ``(job, message)``: the
    message true of all of them (:func:`fold_messages`), else the first job's, said to be
    its own."""
    name, first = items[0]
    folded = fold_messages([m for _, m in items])
    if folded is not None:
        return name, folded
    return name, f"{first} (for {name}; the other {len(items) - 1} differ)"
