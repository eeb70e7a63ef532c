"""A repository's own past runs: causal history for labeled examples, and the
:class:`~laser_ci.text.history.HistoryIndex` of a folder written by ``laser-ci collect``.

Causal history of one labeled example (training and ``laser-ci eval --history prior``):

- its *earlier runs* are the examples of the same repository, workflow file, kind and (for
  ``job`` examples) job display name whose ``commit_date`` is strictly earlier (parsed as
  ISO 8601 with its offset; a run at the same instant is not history, nor is a run without
  a date), one per run, oldest first; :class:`~laser_ci.text.history.History` keeps the last 20.
  Per-job history therefore comes from the per-job labels (collected ``jobs``, or a run
  whose workflow expands to one job instance) of earlier runs with the same display name.
- every conclusion counts by default (``success_only=False``): a prediction is made
  before anyone knows how the run ends. Measured on the shared set's ``val`` workflow runs
  (log-MAE of the history median): all runs from all earlier runs 0.41 (952 runs with
  history), from earlier successful runs only 0.51 (639: fewer runs have any); successful
  runs from all earlier runs 0.30 (344), from earlier successful runs 0.20 (322). Success-
  only history answers "how long if it passes" better, and everything else worse.
- ``History.diff``: :func:`~laser_ci.text.history.config_diff` of the latest earlier run's text
  and this run's text, both serialized without history (``()``: same configuration).
- ``changed``: the workflow file's blob differs from the one the latest earlier run ran
  (None when there is no earlier run).

The example keeps its cold-start ``text`` (``history: none``); ``text_warm`` is the same
job serialized with the history block, or None without earlier runs. One model serves both
by training on both: :func:`training_texts`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from laser_ci.text.history import MAX_RUNS, UNTIMED_ENDS, History, config_diff

if TYPE_CHECKING:
    from laser_ci.training.example import Example



def parse_time(value: Any) -> float | None:
    """Seconds since the epoch of an ISO 8601 date (``Z`` or an offset); None if unreadable."""
    if not value:
        return None
    text = str(value).strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    if when.tzinfo is None:  # a naive date is taken as UTC
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def run_time(created_at: object, commit_date: object) -> float | None:
    """When a run happened, to order runs: its ``created_at`` (what ``laser-ci collect``
    writes), else its commit's date (the shared data has only that). Runs on one commit (a
    schedule, a push and its pull request) tie on the commit's date, and a commit may be
    dated before older runs; the run's own time orders them as they ran. Training and
    ``estimate --history`` order by it alike."""
    t = parse_time(created_at)
    return t if t is not None else parse_time(commit_date)


def _untimed(e: Example) -> bool:
    """A job that was skipped or cancelled: its duration is where it stopped, not a
    runtime, so it is in no job's history (as ``estimate --history`` and the Action read
    them: :data:`~laser_ci.text.history.UNTIMED_ENDS`)."""
    return e.kind == "job" and e.conclusion in UNTIMED_ENDS


def _one_per_run(members: Sequence[tuple[float, str, int]]) -> list[int]:
    """The example indices of ``members`` (of one instant), one per run: of a run id that
    repeats (a re-run collected again) its last row, the newest attempt; a row without a
    run id is a run of its own."""
    last: dict[str, int] = {}
    for _, run_id, i in members:
        last[run_id or f"#{i}"] = i
    return list(last.values())


def history_key(e: Example) -> tuple[str, str, str, str | None]:
    """Examples with the same key are runs of the same thing: repository, workflow file,
    kind, and the job's display name for ``job`` examples."""
    return (e.repo, e.workflow_path, e.kind, e.job_name if e.kind == "job" else None)


def _runs_of_each(examples: Sequence[Example]) -> list[list[tuple[float, str, int]]]:
    """The dated, timed examples of each :func:`history_key`, as ``(time, run id, index)``
    sorted by time, then run id (the input order does not matter)."""
    groups: dict[tuple[Any, ...], list[tuple[float, str, int]]] = {}
    for i, e in enumerate(examples):
        when = run_time(e.created_at, e.commit_date)
        if when is not None and e.runtime_s > 0:
            groups.setdefault(history_key(e), []).append((when, e.run_id, i))
    return [sorted(members) for members in groups.values()]


def causal_histories(
    examples: Sequence[Example],
    blobs: Mapping[str, str | None] | None = None,
    *,
    success_only: bool = False,
) -> list[tuple[History | None, bool | None]]:
    """``(history, changed)`` of every example from the earlier runs among ``examples``
    (see the module doc). ``blobs``: run id -> the workflow file's blob id at that run."""
    blobs = blobs or {}
    out: list[tuple[History | None, bool | None]] = [(None, None)] * len(examples)
    for now, past in causal_groups(examples):
        for i in now:
            e = examples[i]
            earlier = [p for p in past if not success_only
                       or examples[p].conclusion == "success"][-MAX_RUNS:]
            if not earlier:
                continue
            last = examples[earlier[-1]]
            hist = History.of([examples[p].runtime_s for p in earlier],
                              config_diff(last.text, e.text))
            changed = blobs.get(last.run_id) != blobs.get(e.run_id)
            out[i] = (hist, changed)
    return out


def causal_groups(examples: Sequence[Example]) -> Iterator[tuple[list[int], list[int]]]:
    """Each job's runs in time order, as groups of the examples at one instant (indices)
    with the earlier runs they may read (one example per run, timed ones, oldest first):
    all runs at the same instant see the same past, and not each other."""
    for members in _runs_of_each(examples):
        past: list[int] = []
        seen_runs: set[str] = set()
        j = 0
        while j < len(members):
            k = j
            while k < len(members) and members[k][0] == members[j][0]:
                k += 1
            yield [i for _, _, i in members[j:k]], list(past)
            for i in _one_per_run(members[j:k]):
                key = examples[i].run_id or f"#{i}"
                if key not in seen_runs and not _untimed(examples[i]):
                    seen_runs.add(key)
                    past.append(i)
            j = k


def attach_history(
    examples: Sequence[Example],
    blobs: Mapping[str, str | None] | None = None,
    renderers: Sequence[Callable[[History], str] | None] | None = None,
    *,
    success_only: bool = False,
) -> list[Example]:
    """The examples with ``history``, ``changed`` and ``text_warm`` set. ``renderers[i]``
    serializes example ``i`` again with a history block (the serializer's own budget
    applies); without one the ``history: none`` line of ``text`` is replaced."""
    out = []
    for i, (e, (hist, changed)) in enumerate(
        zip(examples, causal_histories(examples, blobs, success_only=success_only), strict=True)
    ):
        if hist is None:
            out.append(replace(e, history=None, text_warm=None, changed=None))
            continue
        render = renderers[i] if renderers is not None else None
        warm = render(hist) if render is not None else with_history_block(e.text, hist)
        out.append(replace(e, history=hist, text_warm=warm, changed=changed))
    return out


def with_history_block(text: str, history: History | None) -> str:
    """``text`` with its ``history: none`` line replaced by ``history``'s block (no
    re-truncation: prefer serializing again when the job is at hand)."""
    from laser_ci.text.history import history_lines

    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line == "history: none":
            return "\n".join(lines[:i] + history_lines(history) + lines[i + 1:])
    return text


def strip_history_block(text: str) -> str:
    """``text`` with its history block replaced by ``history: none`` (the cold text)."""
    lines = text.split("\n")
    out: list[str] = []
    in_diff = False
    for line in lines:
        if line.startswith("history: "):
            out.append("history: none")
            in_diff = False
            continue
        if line.startswith("history-config: "):
            in_diff = line.startswith("history-config: changed")
            continue
        if in_diff and line.startswith(("+ ", "- ")):
            continue
        in_diff = False
        out.append(line)
    return "\n".join(out)


# --- training and evaluation inputs --------------------------------------------------------


def training_texts(
    examples: Iterable[Example], *, mode: str = "both", p_cold: float = 0.5, seed: int = 0
) -> list[tuple[str, Example]]:
    """``(input text, example)`` pairs that teach one model cold and warm start.

    - ``both``: every example with its cold ``text``, and examples with earlier runs a
      second time with ``text_warm``;
    - ``drop``: every example once: ``text_warm`` when it has earlier runs, except that the
      block is dropped (cold ``text``) with probability ``p_cold`` (seeded).
    """
    rng = random.Random(seed)
    out: list[tuple[str, Example]] = []
    for e in examples:
        if mode not in ("both", "drop"):
            raise ValueError(f"unknown mode {mode!r}; expected both or drop")
        if e.text_warm is None:
            out.append((e.text, e))
        elif mode == "both":
            out += [(e.text, e), (e.text_warm, e)]
        else:
            out.append((e.text if rng.random() < p_cold else e.text_warm, e))
    return out


def rescaled(e: Example, scale: float) -> tuple[str, float]:
    """``e``'s warm text and runtime with the runtime and every earlier runtime multiplied
    by ``scale`` (a training augmentation: the ratio to the history stays, the absolute
    level that a model could memorize per repository does not)."""
    from laser_ci.text.history import history_lines

    if e.history is None or e.text_warm is None:
        raise ValueError("rescaled needs an example with earlier runs")
    hist = History(tuple(r * scale for r in e.history.runtimes), e.history.diff)
    lines = e.text_warm.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("history: "))
    lines[at] = history_lines(hist)[0]
    return "\n".join(lines), e.runtime_s * scale


# --- prediction time: a collected folder ----------------------------------------------------


