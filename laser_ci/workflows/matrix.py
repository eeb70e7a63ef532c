"""Static expansion of ``jobs.<job_id>.strategy.matrix`` the way GitHub Actions does it.

Rules follow GitHub's "Using a matrix for your jobs" page:

* every key other than ``include``/``exclude`` is a vector (a list of values); the jobs are
  the cross product of the vectors, first key varying slowest;
* ``exclude`` entries remove every combination they match, a partial match being enough;
  excludes are applied before includes;
* an entry matches a combination the way GitHub's parser (``MatrixBuilder.cs`` in
  github.com/actions/runner) compiles it: each scalar leaf of the entry, ``matrix.os`` or
  ``matrix.cfg.cc``, is compared with GitHub's ``==`` (``'3.9'`` matches ``3.9``, ``Linux``
  matches ``linux``, ``true`` matches ``1``; keys case-insensitive), so an object value
  matches one that has at least its leaves;
* each ``include`` entry is merged into every original (post-exclude) combination whose
  vector values it does not overwrite; keys added by earlier includes may be overwritten;
  an entry that fits no original combination becomes a new combination;
* a matrix with only ``include`` runs exactly the include entries;
* a matrix generates at most 256 jobs;
* an empty ``include`` or ``exclude`` entry, or an ``exclude`` key that is no vector, makes
  the workflow invalid (reported; the entry is skipped).

Nothing here raises, and nothing materialises more than 256 combinations, however large
the cross product is: counts come from a dynamic programme over the vectors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from laser_ci.workflows.expressions import equal, has_expression

__all__ = ["MAX_COMBINATIONS", "MatrixExpansion", "expand_matrix"]

MAX_COMBINATIONS = 256
"""GitHub's limit on the jobs one matrix may generate."""

_MAX_STATES = 1_000_000
"""Work budget for the exclude-aware counting; beyond it the matrix is reported as too complex."""


@dataclass(frozen=True)
class MatrixExpansion:
    """Result of expanding one job's matrix."""

    combos: list[dict[str, Any]]
    """One dict per job instance; ``[{}]`` when there is no matrix (or it is dynamic)."""
    dynamic: bool
    """True when the matrix depends on a runtime expression and cannot be expanded."""
    error: str | None
    """Why GitHub would reject the matrix; ``combos`` still holds a usable fallback."""
    shown: list[tuple[str, ...]] = field(default_factory=list, compare=False)
    """Per combination, the keys whose values GitHub writes into the job's name: the
    vectors for a combination of the cross product (not what an ``include`` adds to it),
    every key for an ``include`` entry that matched none (vectors first)."""


class _TooComplexError(Exception):
    """The exclude-aware count exceeded its work budget."""


def _is_expression(value: Any) -> bool:
    """True for a string holding a ``${{ }}`` expression: a value only known at run time (the
    caller evaluates what is known before it, :mod:`laser_ci.workflows.expressions`)."""
    return has_expression(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _key(key: Any) -> str:
    return key if isinstance(key, str) else str(key)


def _lookup(value: Any, key: str) -> Any:
    """``value[key]`` in a filter expression: keys case-insensitive; null when absent."""
    if not isinstance(value, Mapping):
        return None
    if key in value:
        return value[key]
    folded = key.lower()
    return next((v for k, v in value.items() if _key(k).lower() == folded), None)


def _matches(wanted: Any, value: Any) -> bool:
    """Whether ``value`` matches the include/exclude value ``wanted``: each scalar leaf of
    ``wanted`` equals (GitHub's ``==``) what ``value`` holds at its path (null if nothing)."""
    if isinstance(wanted, Mapping):
        return all(_matches(w, _lookup(value, _key(k))) for k, w in wanted.items())
    if isinstance(wanted, list | tuple):
        items = value if isinstance(value, list | tuple) else ()
        return all(_matches(w, items[i] if i < len(items) else None)
                   for i, w in enumerate(wanted))
    return equal(wanted, value)


def _put(combo: dict[str, Any], index: dict[str, str], key: str, value: Any) -> None:
    """Set ``combo[key]``, overwriting a key that differs only in case (GitHub's keys are
    case-insensitive, the first spelling kept); ``index``: ``combo``'s keys by lower case."""
    same = index.setdefault(key.lower(), key)
    combo[same] = value


def _mapping_entries(name: str, value: Any, errors: list[str]) -> tuple[list[dict[str, Any]], bool]:
    """Read ``include``/``exclude`` as a list of mappings; second item: dynamic."""
    if value is None:
        return [], False
    if _is_expression(value):
        return [], True
    if not isinstance(value, list):
        errors.append(f"matrix '{name}' must be a list of mappings")
        return [], False
    entries: list[dict[str, Any]] = []
    for item in value:
        if _is_expression(item):
            return [], True
        if not isinstance(item, Mapping):
            errors.append(f"matrix '{name}' entries must be mappings")
            continue
        entries.append({_key(k): v for k, v in item.items()})
    return entries, False


class _Vectors:
    """The cross product of the vectors minus the excluded combinations, counted lazily."""

    def __init__(self, vectors: list[tuple[str, list[Any]]], excludes: list[dict[str, Any]]):
        self.keys = [k for k, _ in vectors]
        self.values = [v for _, v in vectors]
        index = {k: i for i, k in enumerate(self.keys)}
        self.excludes = excludes  # each keyed by vector names, none empty
        self.last = [max((index[k] for k in e), default=-1) for e in self.excludes]
        self.work = 0
        self._levels: list[dict[frozenset[int], int]] | None = None
        self._suffix: list[dict[frozenset[int], int]] | None = None

    def _step(self, alive: frozenset[int], i: int, value: Any) -> frozenset[int] | None:
        """Excludes still matching after choosing ``value`` for vector ``i``; None if excluded."""
        self.work += 1 + len(alive)
        if self.work > _MAX_STATES:
            raise _TooComplexError
        key = self.keys[i]
        kept = frozenset(
            e for e in alive if key not in self.excludes[e] or _matches(self.excludes[e][key], value)
        )
        if any(self.last[e] == i for e in kept):
            return None
        return kept

    def _forward(self, fixed: Mapping[str, Any] | None) -> list[dict[frozenset[int], int]]:
        """Reachable exclude states and their multiplicities, level by level."""
        start = frozenset(range(len(self.excludes)))
        levels: list[dict[frozenset[int], int]] = [{start: 1}]
        for i, values in enumerate(self.values):
            if fixed is not None and self.keys[i] in fixed:
                values = [v for v in values if _matches(fixed[self.keys[i]], v)]
            nxt: dict[frozenset[int], int] = {}
            for alive, mult in levels[-1].items():
                if not alive:
                    nxt[alive] = nxt.get(alive, 0) + mult * len(values)
                    continue
                for value in values:
                    kept = self._step(alive, i, value)
                    if kept is not None:
                        nxt[kept] = nxt.get(kept, 0) + mult
            levels.append({a: m for a, m in nxt.items() if m})
        return levels

    def count(self, fixed: Mapping[str, Any] | None = None) -> int:
        """Surviving combinations, optionally only those agreeing with ``fixed``."""
        if fixed is None and self._levels is not None:
            return sum(self._levels[-1].values())
        levels = self._forward(fixed)
        if fixed is None:
            self._levels = levels
        return sum(levels[-1].values())

    def _completions(self) -> list[dict[frozenset[int], int]]:
        """``suffix[i][state]``: surviving completions from vector ``i`` in that state."""
        if self._suffix is None:
            if self._levels is None:
                self.count()
            assert self._levels is not None
            n = len(self.values)
            suffix: list[dict[frozenset[int], int]] = [{} for _ in range(n + 1)]
            suffix[n] = {a: 1 for a in self._levels[n]}
            tail = 1
            for i in range(n - 1, -1, -1):
                for alive in self._levels[i]:
                    if not alive:
                        suffix[i][alive] = tail * len(self.values[i])
                        continue
                    total = 0
                    for value in self.values[i]:
                        kept = self._step(alive, i, value)
                        if kept is not None:
                            total += suffix[i + 1].get(kept, 0)
                    suffix[i][alive] = total
                tail *= len(self.values[i])
            self._suffix = suffix
        return self._suffix

    def first(self, limit: int) -> Iterator[dict[str, Any]]:
        """The first ``limit`` surviving combinations in GitHub's order (iterative DFS)."""
        if limit <= 0 or self.count() == 0:
            return
        suffix = self._completions()
        n = len(self.values)
        chosen: list[Any] = []
        states = [frozenset(range(len(self.excludes)))]
        positions = [0]
        produced = 0
        while positions:
            level = len(positions) - 1
            if level == n:
                yield dict(zip(self.keys, chosen, strict=True))
                produced += 1
                if produced >= limit:
                    return
                positions.pop()
                states.pop()
                chosen.pop()
                continue
            values, alive, pos = self.values[level], states[level], positions[level]
            kept: frozenset[int] | None = None
            while pos < len(values):
                kept = alive if not alive else self._step(alive, level, values[pos])
                if kept is not None and (not kept or suffix[level + 1].get(kept, 0)):
                    break
                pos += 1
            if pos >= len(values) or kept is None:
                positions.pop()
                states.pop()
                if chosen:
                    chosen.pop()
                continue
            positions[level] = pos + 1
            chosen.append(values[pos])
            states.append(kept)
            positions.append(0)


def _fallback(errors: list[str]) -> MatrixExpansion:
    return MatrixExpansion(combos=[{}], dynamic=False, error="; ".join(errors) or None)


def expand_matrix(matrix: Any) -> MatrixExpansion:
    """Expand a ``strategy.matrix`` value into its job combinations; never raises."""
    try:
        return _expand(matrix)
    except _TooComplexError:
        return _fallback(["matrix is too complex to expand statically"])
    except Exception as exc:  # noqa: BLE001 - the contract is to never raise
        return _fallback([f"could not expand matrix: {type(exc).__name__}"])


def _expand(matrix: Any) -> MatrixExpansion:
    if matrix is None:
        return MatrixExpansion(combos=[{}], dynamic=False, error=None)
    if _is_expression(matrix):
        return MatrixExpansion(combos=[{}], dynamic=True, error=None)
    if not isinstance(matrix, Mapping):
        return _fallback(["matrix must be a mapping"])

    errors: list[str] = []
    vectors: list[tuple[str, list[Any]]] = []
    include_raw: Any = None
    exclude_raw: Any = None
    for raw_key, value in matrix.items():
        key = _key(raw_key)
        if key == "include":
            include_raw = value
            continue
        if key == "exclude":
            exclude_raw = value
            continue
        if _is_expression(value):
            return MatrixExpansion(combos=[{}], dynamic=True, error=None)
        if not isinstance(value, list):
            # GitHub's schema wants a sequence here; expand it as one value so callers still
            # get a usable job, but report it.
            errors.append(f"matrix vector '{key}' must be a list")
            value = [value]
        vectors.append((key, value))

    includes, inc_dynamic = _mapping_entries("include", include_raw, errors)
    excludes, exc_dynamic = _mapping_entries("exclude", exclude_raw, errors)
    if inc_dynamic or exc_dynamic:
        return MatrixExpansion(combos=[{}], dynamic=True, error=None)

    empty = [k for k, v in vectors if not v]
    if empty:
        errors.extend(f"Matrix vector '{k}' does not contain any values" for k in empty)
        return _fallback(errors)
    if not vectors and not includes:
        errors.append("matrix must define at least one vector")
        return _fallback(errors)

    names = {k.lower(): k for k, _ in vectors}
    filters: list[tuple[dict[str, Any], dict[str, Any]]] = []  # per include: vector keys, rest
    for entry in includes:
        if not entry:
            errors.append("matrix include entry does not contain any values")
            continue
        filters.append(({names[k.lower()]: v for k, v in entry.items() if k.lower() in names},
                        {k: v for k, v in entry.items() if k.lower() not in names}))
    kept: list[dict[str, Any]] = []
    for entry in excludes:
        unknown = [k for k in entry if k.lower() not in names]
        if not entry:
            errors.append("matrix exclude entry must not be empty")
        elif unknown:
            errors.append(f"matrix exclude key '{unknown[0]}' does not match any key "
                          "within the matrix")
        else:
            kept.append({names[k.lower()]: v for k, v in entry.items()})

    originals: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    if not vectors:
        # Only ``include``: every entry is its own job.
        new = [{**f, **extra} for f, extra in filters]
        total = len(new)
    else:
        space = _Vectors(vectors, kept)
        survivors = space.count()
        if survivors == 0 and not filters:
            errors.append("matrix has no combinations left after 'exclude'")
            return _fallback(errors)
        for f, extra in filters:
            if survivors == 0 or (f and space.count(f) == 0):
                new.append({**f, **extra})
        total = survivors + len(new)
        originals = list(space.first(MAX_COMBINATIONS))
        for combo in originals:
            index = {k.lower(): k for k in combo}
            for f, extra in filters:
                if all(_matches(v, combo[k]) for k, v in f.items()):
                    for k, v in extra.items():
                        _put(combo, index, k, v)

    vector_keys = tuple(k for k, _ in vectors)
    combos = (originals + new)[:MAX_COMBINATIONS]
    shown = ([vector_keys] * len(originals) + [tuple(c) for c in new])[:MAX_COMBINATIONS]
    if total > MAX_COMBINATIONS:
        errors.append(
            f"matrix expands to {total} combinations; GitHub's limit is {MAX_COMBINATIONS}"
        )
    if not combos:
        combos, shown = [{}], [()]
    return MatrixExpansion(combos=combos, dynamic=False, error="; ".join(errors) or None,
                           shown=shown)
