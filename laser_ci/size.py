"""Runner sizing, cost and timeout advice: what a job runs on, what it costs, what to change.

Everything here is a pure function of its arguments plus the packaged runner catalog
(``laser_ci/data/runners.json``, loaded once). The pipeline calls, per job::

    runner = resolve_runner(job.runs_on, job.matrix, visibility=vis)
    cost = cost_job(runtime, runner, visibility=vis)
    advice = advise(runtime, runner, job.timeout_minutes, visibility=vis, predict_on=...)

and per workflow ``summarize(costs, runs=...)``. Every number that rests on an assumption
carries the assumption as text (``assumptions``) so reports can fold it away from the
headline. ``visibility=None`` means "not known": costs are then computed as for a private
repository and every message says so.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from laser_ci.predict import Runtime

DEFAULT_TIMEOUT_MINUTES = 360  # GitHub's default `timeout-minutes`
LONG_JOB_S = 600.0  # jobs at least this long (p50) get break-even advice for bigger runners
SHORT_JOB_S = 30.0  # jobs whose p90 is below this are "far below" the 1-minute billing unit
TIMEOUT_HEADROOM = 1.5  # suggested timeout = p90 x this, rounded up to 5 minutes
DAYS_PER_MONTH = 30.44
VISIBILITIES = ("public", "private", "internal")

PredictOn = Callable[[str], "Runtime | None"]


# --- catalog ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogEntry:
    """One machine type of the catalog. Standard runners differ in size by visibility."""

    sku: str
    kind: str  # "standard" | "larger"
    os: str  # "linux" | "windows" | "macos"
    arch: str  # "x64" | "arm64"
    price_per_min: float
    public_size: tuple[int, float]  # (cores, ram_gb)
    private_size: tuple[int, float]
    labels: tuple[str, ...] = ()
    example_label: str | None = None
    gpu: bool = False
    container: bool = False
    max_job_minutes: int = DEFAULT_TIMEOUT_MINUTES
    note: str | None = None

    @property
    def label(self) -> str:
        """The label a workflow would write (for custom-named larger runners: an example)."""
        return self.labels[0] if self.labels else (self.example_label or self.sku)

    def size(self, visibility: str) -> tuple[int, float]:
        return self.public_size if visibility == "public" else self.private_size


@dataclass(frozen=True)
class Catalog:
    as_of: str
    prices_effective: str
    entries: tuple[CatalogEntry, ...]
    sources: tuple[dict[str, str], ...] = ()
    retired: frozenset[str] = frozenset()
    included_minutes: Mapping[str, int] = field(default_factory=dict)
    default_timeout_minutes: int = DEFAULT_TIMEOUT_MINUTES
    self_hosted_max_job_minutes: int = 7200

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Catalog:
        entries = []
        for e in data["runners"]:
            if "public" in e:
                pub = (int(e["public"]["cores"]), float(e["public"]["ram_gb"]))
                priv = (int(e["private"]["cores"]), float(e["private"]["ram_gb"]))
            else:
                pub = priv = (int(e["cores"]), float(e["ram_gb"]))
            entries.append(
                CatalogEntry(
                    sku=e["sku"],
                    kind=e["kind"],
                    os=e["os"],
                    arch=e["arch"],
                    price_per_min=float(e["price_per_min"]),
                    public_size=pub,
                    private_size=priv,
                    labels=tuple(x.lower() for x in e.get("labels", ())),
                    example_label=e.get("example_label"),
                    gpu=bool(e.get("gpu")),
                    container=bool(e.get("container")),
                    max_job_minutes=int(e.get("max_job_minutes", DEFAULT_TIMEOUT_MINUTES)),
                    note=e.get("note") or e.get("price_note"),
                )
            )
        billing = data.get("billing", {})
        return cls(
            as_of=str(data["as_of"]),
            prices_effective=str(data.get("prices_effective", data["as_of"])),
            entries=tuple(entries),
            sources=tuple(data.get("sources", ())),
            retired=frozenset(x.lower() for x in data.get("retired_labels", ())),
            included_minutes=dict(data.get("included_minutes", {})),
            default_timeout_minutes=int(billing.get("default_timeout_minutes", DEFAULT_TIMEOUT_MINUTES)),
            self_hosted_max_job_minutes=int(billing.get("self_hosted_max_job_minutes", 7200)),
        )

    def by_label(self, label: str) -> CatalogEntry | None:
        label = label.strip().lower()
        for e in self.entries:
            if label in e.labels:
                return e
        return None

    def by_sku(self, sku: str) -> CatalogEntry | None:
        return next((e for e in self.entries if e.sku == sku), None)

    def larger(self, os: str, arch: str, cores: int, gpu: bool = False) -> CatalogEntry | None:
        """The custom-named larger runner of this shape (macOS larger runners have labels)."""
        for e in self.entries:
            if (e.kind, e.os, e.arch, e.gpu) == ("larger", os, arch, gpu) and not e.labels:
                if e.public_size[0] == cores:
                    return e
        return None


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The packaged catalog (``laser_ci/data/runners.json``), read once."""
    text = resources.files("laser_ci").joinpath("data/runners.json").read_text("utf-8")
    return Catalog.from_json(json.loads(text))


# --- runners ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Runner:
    """What a job's ``runs-on`` resolves to.

    ``kind``: "github-hosted" (standard, free in public repositories), "larger" (GitHub-hosted,
    never free), "self-hosted" (priced at the configured rate) or "unknown". ``price_per_min``
    is the list price in USD (None when unknown). ``guessed`` marks a resolution by naming
    heuristics; ``reason`` says how it was resolved or why it could not be.
    """

    label: str
    kind: str
    os: str | None = None
    arch: str | None = None
    cores: int | None = None
    ram_gb: float | None = None
    price_per_min: float | None = None
    reason: str | None = None
    sku: str | None = None
    gpu: bool = False
    guessed: bool = False
    max_job_minutes: int | None = None
    container: bool = False

    @property
    def free_in_public(self) -> bool:
        return self.kind == "github-hosted"

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "kind": self.kind,
            "os": self.os,
            "arch": self.arch,
            "vcpus": self.cores,
            "ram_gb": self.ram_gb,
            "gpu": self.gpu,
            "sku": self.sku,
            "price_per_min_usd": self.price_per_min,
            "free_in_public": self.free_in_public,
            "guessed": self.guessed,
            "reason": self.reason,
        }


def _visibility(visibility: str | None) -> tuple[str, bool]:
    """(effective visibility, assumed?). Unknown visibility is costed as private."""
    if visibility is None:
        return "private", True
    v = visibility.strip().lower()
    if v not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}, not {visibility!r}")
    return ("public" if v == "public" else "private"), False


def _from_entry(
    e: CatalogEntry, label: str, vis: str, reason: str | None = None, guessed: bool = False
) -> Runner:
    cores, ram = e.size(vis)
    return Runner(
        label=label,
        kind="github-hosted" if e.kind == "standard" else "larger",
        os=e.os,
        arch=e.arch,
        cores=cores,
        ram_gb=ram,
        price_per_min=e.price_per_min,
        reason=reason,
        sku=e.sku,
        gpu=e.gpu,
        guessed=guessed,
        max_job_minutes=e.max_job_minutes,
        container=e.container,
    )


def resolve_runner(
    runs_on: Any,
    matrix: Mapping[str, Any] | None = None,
    *,
    visibility: str | None = None,
    self_hosted_rate: float = 0.0,
    catalog: Catalog | None = None,
) -> Runner:
    """Resolve a job's ``runs-on`` (string, list of labels, ``{group, labels}`` mapping,
    ``${{ }}`` expressions over ``matrix``) to a catalog runner, a self-hosted runner or
    "unknown" with the reason."""
    if self_hosted_rate < 0:
        raise ValueError("self_hosted_rate must be >= 0")
    cat = catalog or load_catalog()
    vis, _ = _visibility(visibility)
    value = _expand(runs_on, matrix or {})
    return _resolve_value(value, vis, self_hosted_rate, cat)


def _display(value: Any) -> str:
    if isinstance(value, _Unknown):
        return value.text or "${{ ... }}"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(_display(v) for v in value)
    if isinstance(value, dict):
        parts = []
        if value.get("group") is not None:
            parts.append(f"group: {_display(value['group'])}")
        if value.get("labels") is not None:
            parts.append(f"labels: {_display(value['labels'])}")
        return "; ".join(parts) or "{}"
    return "" if value is None else str(value)


def _resolve_value(value: Any, vis: str, rate: float, cat: Catalog) -> Runner:
    label = _display(value)
    if isinstance(value, _Unknown):
        return _resolve_unknown_expr(value, vis, rate, cat)
    if value is None or value == "" or value == []:
        return Runner(label=label, kind="unknown", reason="the job has no `runs-on`")
    if isinstance(value, str):
        return _resolve_labels([value], None, label, vis, rate, cat)
    if isinstance(value, list):
        return _resolve_labels(value, None, label, vis, rate, cat)
    if isinstance(value, dict):
        labels = value.get("labels")
        if labels is None:
            labels = []
        elif not isinstance(labels, list):
            labels = [labels]
        group = value.get("group")
        if isinstance(group, _Unknown):
            return Runner(
                label=label,
                kind="unknown",
                reason=f"the runner group depends on {_refs_text(group)}, not known before the run",
            )
        return _resolve_labels(labels, None if group is None else str(group), label, vis, rate, cat)
    return Runner(label=label, kind="unknown", reason=f"unsupported `runs-on` value {value!r}")


def _resolve_unknown_expr(u: _Unknown, vis: str, rate: float, cat: Catalog) -> Runner:
    if u.refs and all(r.startswith("matrix") for r in u.refs):
        why = (
            f"`runs-on` uses {_refs_text(u)}, which has no value in this matrix combination "
            "(a dynamic matrix is only known at run time)"
        )
    else:
        why = f"`runs-on` depends on {_refs_text(u)}, which is not known before the run"
    options = [o for o in u.options if isinstance(o, (str, list, dict)) and o]
    if not options:
        return Runner(label=_display(u), kind="unknown", reason=why)
    resolved = [_resolve_value(o, vis, rate, cat) for o in options]
    names = ", ".join(f"`{_display(o)}`" for o in options)
    if u.open:
        return Runner(label=_display(u), kind="unknown", reason=f"{why}; it may be {names} or another value")
    first = resolved[0]
    same = all(
        (r.kind, r.sku, r.cores, r.price_per_min) == (first.kind, first.sku, first.cores, first.price_per_min)
        for r in resolved
    )
    if same and first.kind != "unknown":
        return replace(
            first,
            label=_display(u),
            guessed=True,
            reason=f"{why}; every possible value ({names}) is the same machine",
        )
    return Runner(label=_display(u), kind="unknown", reason=f"{why}; it is one of {names}")


_OS_WORDS = {
    "linux": "linux",
    "ubuntu": "linux",
    "windows": "windows",
    "win": "windows",
    "macos": "macos",
    "mac": "macos",
    "osx": "macos",
    "darwin": "macos",
}
_ARCH_WORDS = {
    "x64": "x64",
    "amd64": "x64",
    "x86_64": "x64",
    "arm64": "arm64",
    "aarch64": "arm64",
    "arm": "arm64",
}
_SELF_HOSTED_ARCH = {**_ARCH_WORDS, "arm": "arm", "x86": "x86"}  # runner labels X64/ARM/ARM64
_CORES_RE = re.compile(r"(?<![\d.])(\d{1,3})[-_ ]?(?:cores?|cpus?|vcpus?)(?![a-z])")
_FAMILIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ubuntu-\d{2}\.\d{2}-arm"), "ubuntu-24.04-arm"),
    (re.compile(r"ubuntu-\d{2}\.\d{2}"), "ubuntu-latest"),
    (re.compile(r"windows-\d+-arm"), "windows-11-arm"),
    (re.compile(r"windows-\d{4}(-[a-z0-9.]+)?"), "windows-latest"),
    (re.compile(r"macos-\d+-intel"), "macos-15-intel"),
    (re.compile(r"macos-\d+-xlarge"), "macos-latest-xlarge"),
    (re.compile(r"macos-\d+-large"), "macos-latest-large"),
    (re.compile(r"macos-\d+"), "macos-latest"),
)


def _shape_from_name(name: str) -> tuple[str | None, str | None, int | None, bool]:
    """(os, arch, cores, gpu) read from a runner name such as ``ubuntu-latest-8-cores``."""
    low = name.lower()
    words = re.split(r"[^a-z0-9_]+", low)
    os = next((_OS_WORDS[w] for w in words if w in _OS_WORDS), None)
    arch = next((_ARCH_WORDS[w] for w in words if w in _ARCH_WORDS), None)
    m = _CORES_RE.search(low)
    cores = int(m.group(1)) if m else None
    gpu = "gpu" in words or any(w.startswith("gpu") or w.endswith("gpu") for w in words)
    return os, arch, cores, gpu


def _resolve_labels(
    labels: Sequence[Any], group: str | None, display: str, vis: str, rate: float, cat: Catalog
) -> Runner:
    unknown_parts = [x for x in labels if isinstance(x, _Unknown)]
    names = [str(x).strip() for x in labels if not isinstance(x, _Unknown) and x is not None]
    lower = list(dict.fromkeys(n.lower() for n in names if n))
    in_group = f" (runner group `{group}`)" if group else ""

    if "self-hosted" in lower:
        return _self_hosted(lower, display, rate, cat, "the labels include `self-hosted`" + in_group)
    if unknown_parts:
        return Runner(
            label=display,
            kind="unknown",
            reason=f"a label depends on {_refs_text(*unknown_parts)}, not known before the run",
        )
    if not lower:
        if group:
            r = _resolve_by_shape(group, display, vis, cat, source=f"runner group `{group}`")
            if r is not None:
                return r
            return Runner(
                label=display,
                kind="unknown",
                reason=f"runner group `{group}`: which runners it holds (larger GitHub-hosted "
                "or self-hosted, and their size) is set in the organization's settings, not "
                "in the workflow",
            )
        return Runner(label=display, kind="unknown", reason="the job has no `runs-on` labels")
    if len(lower) > 1:
        return _self_hosted(
            lower,
            display,
            rate,
            cat,
            f"assumed self-hosted: GitHub-hosted runners carry a single label, so a job that "
            f"asks for several ({', '.join(lower)}) can only match a self-hosted runner{in_group}",
            guessed=True,
        )
    r = _resolve_label(lower[0], display, vis, cat)
    if group:
        r = replace(r, reason=(r.reason or "label in the runner catalog") + in_group)
    return r


def _self_hosted(
    labels: list[str], display: str, rate: float, cat: Catalog, why: str, guessed: bool = False
) -> Runner:
    os = next((_OS_WORDS[w] for w in labels if w in _OS_WORDS), None)
    arch = next((_SELF_HOSTED_ARCH[w] for w in labels if w in _SELF_HOSTED_ARCH), None)
    cores = None
    for w in labels:
        m = _CORES_RE.search(w)
        if m:
            cores = int(m.group(1))
            break
    return Runner(
        label=display,
        kind="self-hosted",
        os=os,
        arch=arch,
        cores=cores,
        price_per_min=rate,
        reason=f"{why}; self-hosted minutes priced at ${rate:g}/min (configurable)",
        guessed=guessed,
        max_job_minutes=cat.self_hosted_max_job_minutes,
    )


def _resolve_label(label: str, display: str, vis: str, cat: Catalog) -> Runner:
    e = cat.by_label(label)
    if e is not None:
        return _from_entry(e, display, vis)
    if label in cat.retired:
        return Runner(
            label=display,
            kind="unknown",
            reason=f"`{label}` has been retired by GitHub; a job asking for it finds no runner",
        )
    for pattern, like in _FAMILIES:
        if pattern.fullmatch(label):
            e = cat.by_label(like)
            if e is not None:
                return _from_entry(
                    e,
                    display,
                    vis,
                    reason=f"`{label}` is not in the runner catalog (as of {cat.as_of}); "
                    f"assumed sized and priced like `{like}`",
                    guessed=True,
                )
    r = _resolve_by_shape(label, display, vis, cat, source=f"`{label}`")
    if r is not None:
        return r
    return Runner(
        label=display,
        kind="unknown",
        reason=f"`{label}` is not a GitHub-hosted label (catalog as of {cat.as_of}); it is "
        "probably a larger runner or a self-hosted runner named by your organization, so its "
        "size and price are unknown",
    )


def _resolve_by_shape(name: str, display: str, vis: str, cat: Catalog, *, source: str) -> Runner | None:
    os, arch, cores, gpu = _shape_from_name(name)
    if cores is None and not gpu:
        return None
    assumed = []
    if os is None:
        os = "linux"
        assumed.append("Linux")
    if arch is None:
        arch = "x64"
        assumed.append("x64")
    if cores is None:
        cores = 4  # the only GPU size GitHub offers
    e = cat.larger(os, arch, cores, gpu)
    shape = f"{cores}-core {os} {arch}{' GPU' if gpu else ''}"
    if e is None:
        return Runner(
            label=display,
            kind="unknown",
            os=os,
            arch=arch,
            cores=cores,
            gpu=gpu,
            reason=f"{source} reads like a {shape} runner, but GitHub offers no larger runner "
            "of that shape; probably self-hosted",
        )
    extra = f" ({' and '.join(assumed)} assumed)" if assumed else ""
    return _from_entry(
        e,
        display,
        vis,
        reason=f"{source} is a name chosen by your organization; assumed to be a GitHub "
        f"larger runner of {shape}{extra} from the name (it could also be self-hosted)",
        guessed=True,
    )


# --- expressions --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Unknown:
    """A value that depends on something only known at run time (``inputs``, ``github``...)."""

    refs: tuple[str, ...] = ()
    options: tuple[Any, ...] = ()  # truthy values it may take, as the expression shows them
    open: bool = True  # it may also take values not in ``options``
    text: str = ""


def _refs_text(*us: _Unknown) -> str:
    refs = list(dict.fromkeys(r for u in us for r in u.refs)) or ["an expression"]
    return ", ".join(f"`{r}`" for r in refs)


_EXPR_RE = re.compile(r"\$\{\{(.*?)\}\}", re.S)
_TOKEN_RE = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')"
    r"|(?P<num>0x[0-9a-fA-F]+|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,*])"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_-]*))"
)


def _expand(value: Any, matrix: Mapping[str, Any]) -> Any:
    """Substitute ``${{ }}`` expressions; parts that cannot be known become ``_Unknown``."""
    if isinstance(value, str):
        return _render(value, matrix) if "${{" in value else value
    if isinstance(value, list):
        return [_expand(v, matrix) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, matrix) for k, v in value.items()}
    return value


def _render(text: str, matrix: Mapping[str, Any]) -> Any:
    whole = _EXPR_RE.fullmatch(text.strip())
    if whole:
        v = _evaluate(whole.group(1), matrix)
        return replace(v, text=text.strip()) if isinstance(v, _Unknown) else v
    parts: list[str] = []
    unknown: list[_Unknown] = []
    pos = 0
    for m in _EXPR_RE.finditer(text):
        parts.append(text[pos : m.start()])
        v = _evaluate(m.group(1), matrix)
        if isinstance(v, _Unknown):
            unknown.append(v)
        else:
            parts.append(_to_str(v))
        pos = m.end()
    parts.append(text[pos:])
    if unknown:
        return _Unknown(tuple(r for u in unknown for r in u.refs), text=text)
    return "".join(parts)


def _to_str(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return str(v)


def _evaluate(expr: str, matrix: Mapping[str, Any]) -> Any:
    try:
        return _Parser(expr, matrix).parse()
    except (ValueError, IndexError, TypeError):
        return _Unknown((f"${{{{ {expr.strip()} }}}}",))


def _truthy(v: Any) -> bool:
    if isinstance(v, float) and math.isnan(v):
        return False
    return v not in (None, False, 0, "")


def _num(v: Any) -> float:
    if v is None:
        return 0.0
    if isinstance(v, (bool, int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return 0.0
        try:
            return float(int(s, 16)) if s.lower().startswith("0x") else float(s)
        except ValueError:
            return math.nan
    return math.nan


def _compare(op: str, a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        x: Any = a.casefold()
        y: Any = b.casefold()
    elif isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        if op in ("==", "!="):
            return (a is b) == (op == "==")
        return False
    else:
        x, y = _num(a), _num(b)
    return {
        "==": x == y,
        "!=": x != y,
        "<": x < y,
        "<=": x <= y,
        ">": x > y,
        ">=": x >= y,
    }[op]


class _Parser:
    """A small evaluator for GitHub Actions expressions; only ``matrix`` is known."""

    def __init__(self, text: str, matrix: Mapping[str, Any]):
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _TOKEN_RE.match(text, pos)
            if not m or m.end() == pos:
                raise ValueError(f"bad expression near {text[pos:]!r}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0
        self.matrix = matrix

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        tok = self.tokens[self.i]
        if expected is not None and tok[1] != expected:
            raise ValueError(f"expected {expected!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        v = self.or_()
        if self.i != len(self.tokens):
            raise ValueError("trailing tokens")
        return v

    def or_(self) -> Any:
        a = self.and_()
        while self.peek() == "||":
            self.take()
            b = self.and_()
            if isinstance(a, _Unknown):  # a's truthy values, else b
                a = _Unknown(a.refs + _refs(b), a.options + _options(b), a.open or _open(b))
            elif not _truthy(a):
                a = b
        return a

    def and_(self) -> Any:
        a = self.cmp()
        while self.peek() == "&&":
            self.take()
            b = self.cmp()
            if isinstance(a, _Unknown):  # a falsy value, else b
                a = _Unknown(a.refs + _refs(b), _options(b), _open(b))
            elif _truthy(a):
                a = b
        return a

    def cmp(self) -> Any:
        a = self.unary()
        while self.peek() in ("==", "!=", "<", "<=", ">", ">="):
            op = self.take()[1]
            b = self.unary()
            if isinstance(a, _Unknown) or isinstance(b, _Unknown):
                a = _Unknown(_refs(a) + _refs(b))
            else:
                a = _compare(op, a, b)
        return a

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            v = self.unary()
            return _Unknown(v.refs) if isinstance(v, _Unknown) else not _truthy(v)
        return self.postfix()

    def postfix(self) -> Any:
        value, path = self.primary()
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                kind, name = self.take()
                if name == "*":
                    return _Unknown((f"{path}.*",))
                if kind != "id":
                    raise ValueError("expected a property name")
                key: Any = name
                path = f"{path}.{name}"
            else:
                key = self.or_()
                self.take("]")
                path = f"{path}[{key!r}]"
            value = _index(value, key, path)
        return value

    def primary(self) -> tuple[Any, str]:
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'"), text
        if kind == "num":
            return (float(int(text, 16)) if text.lower().startswith("0x") else float(text)), text
        if text == "(":
            v = self.or_()
            self.take(")")
            return v, "(...)"
        if kind != "id":
            raise ValueError(f"unexpected {text!r}")
        low = text.lower()
        if low in ("true", "false"):
            return low == "true", text
        if low == "null":
            return None, text
        if self.peek() == "(":
            self.take()
            args: list[Any] = []
            while self.peek() != ")":
                args.append(self.or_())
                if self.peek() == ",":
                    self.take()
            self.take(")")
            return _call(low, args), f"{text}()"
        if low == "matrix":
            return dict(self.matrix), "matrix"
        return _Unknown((text,)), text


def _refs(v: Any) -> tuple[str, ...]:
    return v.refs if isinstance(v, _Unknown) else ()


def _options(v: Any) -> tuple[Any, ...]:
    if isinstance(v, _Unknown):
        return v.options
    return (v,) if _truthy(v) else ()


def _open(v: Any) -> bool:
    return v.open if isinstance(v, _Unknown) else False


def _index(value: Any, key: Any, path: str) -> Any:
    if isinstance(value, _Unknown):
        return _Unknown((path,))
    if isinstance(key, _Unknown):
        return _Unknown(key.refs)
    if isinstance(value, dict):
        for k, v in value.items():
            if str(k).lower() == str(key).lower():
                return v
        if path.startswith("matrix"):
            return _Unknown((path,))  # not in this combination (or a dynamic matrix)
        return None
    if isinstance(value, list) and isinstance(key, (int, float)) and not isinstance(key, bool):
        i = int(key)
        return value[i] if 0 <= i < len(value) else None
    return None


def _call(name: str, args: list[Any]) -> Any:
    unknown = [a for a in args if isinstance(a, _Unknown)]
    if unknown:
        return _Unknown(tuple(r for u in unknown for r in u.refs))
    if name == "fromjson" and len(args) == 1 and isinstance(args[0], str):
        return json.loads(args[0])
    if name == "tojson" and len(args) == 1:
        return json.dumps(args[0])
    if name == "format" and args and isinstance(args[0], str):
        return (
            re.sub(r"\{(\d+)\}", lambda m: _to_str(args[int(m.group(1)) + 1]), args[0])
            .replace("{{", "{")
            .replace("}}", "}")
        )
    if name in ("contains", "startswith", "endswith") and len(args) == 2:
        a, b = args
        if name == "contains" and isinstance(a, list):
            return any(_compare("==", x, b) for x in a)
        a, b = _to_str(a).casefold(), _to_str(b).casefold()
        return {"contains": b in a, "startswith": a.startswith(b), "endswith": a.endswith(b)}[name]
    if name == "join" and args and isinstance(args[0], list):
        sep = _to_str(args[1]) if len(args) > 1 else ","
        return sep.join(_to_str(x) for x in args[0])
    return _Unknown((f"{name}()",))


# --- cost ---------------------------------------------------------------------------------


def billable_minutes(seconds: float) -> int:
    """Minutes GitHub bills for one job: rounded up to the whole minute; >0 s bills >= 1."""
    if seconds <= 0 or math.isnan(seconds):
        return 0
    return max(1, math.ceil(seconds / 60.0 - 1e-9))


def _micro(usd: float) -> int:
    return round(usd * 1_000_000)


def _is_free(runner: Runner, vis: str) -> bool:
    return vis == "public" and runner.free_in_public


def job_cost(runtime_s: float, runner: Runner, *, visibility: str | None = None) -> float | None:
    """USD for one run: billable minutes x price; 0 for standard runners in public
    repositories (larger runners are never free); None when the runner's price is unknown."""
    vis, _ = _visibility(visibility)
    if runner.price_per_min is None:
        return None
    if _is_free(runner, vis):
        return 0.0
    return billable_minutes(runtime_s) * _micro(runner.price_per_min) / 1_000_000


def _affordable_minutes(current: Runner, alternative: Runner, runtime_s: float, vis: str) -> int | None:
    """Whole minutes the alternative may bill and still cost no more than the current runner.
    -1 means any duration (the alternative is free)."""
    cur_price = 0 if _is_free(current, vis) else _micro(current.price_per_min or 0)
    alt_price = 0 if _is_free(alternative, vis) else _micro(alternative.price_per_min or 0)
    if alt_price == 0:
        return -1
    return (billable_minutes(runtime_s) * cur_price) // alt_price


def break_even_speedup(
    current: Runner, alternative: Runner, runtime_s: float, *, visibility: str | None = None
) -> float | None:
    """How many times faster the alternative must run a job that takes ``runtime_s`` on
    ``current`` for it to cost no more, with GitHub's per-minute rounding on both sides.

    Below 1 means the alternative may be that much slower. 0.0: the alternative is free.
    None: it can never cost as little (even one billed minute costs more), or a price is
    unknown. Example: 600 s on Linux 2-core ($0.006) costs $0.060; a 4-core ($0.012) must
    bill at most 5 minutes, so it must be 600/300 = 2.0x faster."""
    if runtime_s <= 0 or current.price_per_min is None or alternative.price_per_min is None:
        return None
    vis, _ = _visibility(visibility)
    m = _affordable_minutes(current, alternative, runtime_s, vis)
    if m == -1:
        return 0.0
    if not m:
        return None
    return runtime_s / (60.0 * m)


@dataclass(frozen=True)
class JobCost:
    """The cost of one run of one job. ``cost_usd`` is at the predicted median; the range is
    at p10/p90; ``if_private_usd`` is what a run free in this public repository would bill
    in a private one."""

    runner: Runner
    billable_minutes: int
    cost_usd: float | None
    range_usd: tuple[float, float] | None
    billed: bool | None  # None when the price is unknown
    if_private_usd: float | None = None
    assumptions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Two keys for a job's JSON object: ``cost_usd`` (number or null) and ``cost``."""
        return {
            "cost_usd": _r(self.cost_usd),
            "cost": {
                "billable_minutes": self.billable_minutes,
                "range_usd": [_r(x) for x in self.range_usd] if self.range_usd else None,
                "billed": self.billed,
                "if_private_usd": _r(self.if_private_usd),
                "assumptions": list(self.assumptions),
            },
        }


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def cost_job(runtime: Runtime, runner: Runner, *, visibility: str | None = None) -> JobCost:
    """Cost of one run at the predicted p50 (and p10-p90), with the assumptions behind it."""
    vis, assumed = _visibility(visibility)
    minutes = billable_minutes(runtime.p50)
    notes: list[str] = []
    if assumed:
        notes.append("assumes a private repository (visibility not given)")
    if runner.price_per_min is None:
        notes.append(f"no price: {runner.reason}" if runner.reason else "no price: unknown runner")
        return JobCost(runner, minutes, None, None, None, None, tuple(notes))
    cost = job_cost(runtime.p50, runner, visibility=vis) or 0.0
    lo = job_cost(runtime.p10, runner, visibility=vis) or 0.0
    hi = job_cost(runtime.p90, runner, visibility=vis) or 0.0
    if_private = None
    if _is_free(runner, vis):
        if_private = job_cost(runtime.p50, runner, visibility="private")
        notes.append(
            "standard runners are free in public repositories; `if_private_usd` prices the "
            "same minutes at the private rate (private machines are smaller, so runs would "
            "likely take longer)"
        )
    elif runner.kind == "larger" and vis == "public":
        notes.append("larger runners are billed in public repositories too")
    if runner.kind == "self-hosted":
        notes.append(f"self-hosted minutes priced at ${runner.price_per_min:g}/min (configurable)")
    elif runner.kind in ("github-hosted", "larger") and not _is_free(runner, vis):
        notes.append(
            f"{minutes} min (p50 rounded up to whole minutes) x ${runner.price_per_min:g}/min "
            f"list price ({runner.sku}); included minutes of your plan are not subtracted"
        )
    if runner.guessed and runner.reason:
        notes.append(runner.reason)
    billed = not _is_free(runner, vis) and runner.price_per_min > 0
    return JobCost(runner, minutes, cost, (lo, hi), billed, if_private, tuple(notes))


@dataclass(frozen=True)
class MonthlyRuns:
    """A rough number of workflow runs per month and how it was obtained."""

    runs: float
    basis: str
    lower_bound: bool = False


@dataclass(frozen=True)
class Totals:
    """Sums over the jobs of a workflow (or a PR). ``cost_usd`` excludes unpriced jobs."""

    jobs: int
    priced_jobs: int
    billable_minutes: int
    cost_usd: float
    range_usd: tuple[float, float]
    if_private_usd: float | None
    runs_per_month: float | None = None
    runs_basis: str | None = None
    monthly_cost_usd: float | None = None
    assumptions: tuple[str, ...] = ()

    @property
    def unknown_jobs(self) -> int:
        return self.jobs - self.priced_jobs

    def to_json(self) -> dict[str, Any]:
        """Two keys for a workflow's (or PR's) JSON object: ``cost_usd`` and ``cost``."""
        return {
            "cost_usd": _r(self.cost_usd),
            "cost": {
                "jobs": self.jobs,
                "priced_jobs": self.priced_jobs,
                "unknown_jobs": self.unknown_jobs,
                "billable_minutes": self.billable_minutes,
                "range_usd": [_r(x) for x in self.range_usd],
                "if_private_usd": _r(self.if_private_usd),
                "runs_per_month": None if self.runs_per_month is None else round(self.runs_per_month),
                "runs_per_month_basis": self.runs_basis,
                "monthly_cost_usd": _r(self.monthly_cost_usd),
                "assumptions": list(self.assumptions),
            },
        }


def summarize(costs: Iterable[JobCost], *, runs: MonthlyRuns | float | None = None) -> Totals:
    """Totals for one workflow run; with ``runs`` (per month) a monthly projection."""
    costs = list(costs)
    priced = [c for c in costs if c.cost_usd is not None]
    total = sum(_micro(c.cost_usd or 0) for c in priced) / 1e6
    lo = sum(_micro(c.range_usd[0]) for c in priced if c.range_usd) / 1e6
    hi = sum(_micro(c.range_usd[1]) for c in priced if c.range_usd) / 1e6
    frees = [c for c in priced if c.if_private_usd is not None]
    if_private = None
    if frees:
        if_private = (
            sum(_micro(c.if_private_usd or 0) for c in frees)
            + sum(_micro(c.cost_usd or 0) for c in priced if c.if_private_usd is None)
        ) / 1e6
    notes = []
    if len(priced) < len(costs):
        notes.append(f"{len(costs) - len(priced)} job(s) on unknown runners are not counted")
    if len(priced) > 1:
        notes.append(
            "the range adds up per-job p10 and p90 costs, so it is wider than the likely range of the total"
        )
    if isinstance(runs, (int, float)):
        runs = MonthlyRuns(float(runs), f"given: {runs:g} runs per month")
    monthly = None
    if runs is not None:
        monthly = round(total * runs.runs, 6)
        notes.append(f"monthly projection: cost per run x {runs.runs:.0f} runs per month; {runs.basis}")
    return Totals(
        jobs=len(costs),
        priced_jobs=len(priced),
        billable_minutes=sum(c.billable_minutes for c in priced),
        cost_usd=total,
        range_usd=(lo, hi),
        if_private_usd=if_private,
        runs_per_month=None if runs is None else runs.runs,
        runs_basis=None if runs is None else runs.basis,
        monthly_cost_usd=monthly,
        assumptions=tuple(notes),
    )


def combine(totals: Iterable[Totals]) -> Totals:
    """Totals over several workflows (a PR): sums; monthly only where every part has one."""
    ts = list(totals)
    monthly = [t.monthly_cost_usd for t in ts]
    privs = [t.if_private_usd if t.if_private_usd is not None else t.cost_usd for t in ts]
    return Totals(
        jobs=sum(t.jobs for t in ts),
        priced_jobs=sum(t.priced_jobs for t in ts),
        billable_minutes=sum(t.billable_minutes for t in ts),
        cost_usd=round(sum(t.cost_usd for t in ts), 6),
        range_usd=(round(sum(t.range_usd[0] for t in ts), 6), round(sum(t.range_usd[1] for t in ts), 6)),
        if_private_usd=(round(sum(privs), 6) if any(t.if_private_usd is not None for t in ts) else None),
        monthly_cost_usd=(
            round(sum(m for m in monthly if m is not None), 6)
            if ts and all(m is not None for m in monthly)
            else None
        ),
        assumptions=tuple(dict.fromkeys(a for t in ts for a in t.assumptions)),
    )


def cost_assumptions(
    visibility: str | None = None, self_hosted_rate: float = 0.0, catalog: Catalog | None = None
) -> list[str]:
    """The assumptions behind every cost figure, for a folded "assumptions" section."""
    cat = catalog or load_catalog()
    vis, assumed = _visibility(visibility)
    out = [
        f"Prices: GitHub list prices effective {cat.prices_effective} (runner catalog as of "
        f"{cat.as_of}); each job is rounded up to whole minutes, at least 1.",
        "Costs are at the predicted median (p50) runtime; ranges at p10-p90.",
        "Included minutes of your plan (2,000-50,000 per month) are not subtracted; larger "
        "runners never use them.",
        f"Self-hosted minutes are priced at ${self_hosted_rate:g}/min (configurable).",
        "Larger Linux/Windows runners are named by your organization; sizes read from names "
        "like `ubuntu-latest-8-cores` are guesses.",
    ]
    if assumed:
        out.insert(
            0,
            "Repository visibility not given: costed as private (standard runners "
            "would be free in a public repository).",
        )
    elif vis == "public":
        out.insert(
            0,
            "Public repository: standard GitHub-hosted runners are free and sized "
            "4 vCPU / 16 GB (Linux, Windows).",
        )
    return out


# --- monthly runs -------------------------------------------------------------------------

_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DOWS = {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}


def _cron_field(text: str, lo: int, hi: int, names: Mapping[str, int] | None = None) -> set[int]:
    values: set[int] = set()
    for part in text.lower().split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/", 1)
            step = int(s)
            if step < 1:
                raise ValueError("bad step")
        if part in ("*", ""):
            a, b = lo, hi
        elif "-" in part:
            x, y = part.split("-", 1)
            a, b = _cron_value(x, names), _cron_value(y, names)
        else:
            a = _cron_value(part, names)
            b = hi if "/" in text and step > 1 else a
        if a < lo or b > hi or a > b:
            raise ValueError("out of range")
        values.update(range(a, b + 1, step))
    return values


def _cron_value(text: str, names: Mapping[str, int] | None) -> int:
    if names and text[:3] in names:
        return names[text[:3]]
    return int(text)


def cron_runs_per_month(cron: str) -> float | None:
    """Average runs per month of a 5-field cron schedule (None when it cannot be parsed)."""
    fields = cron.split()
    if len(fields) != 5:
        return None
    try:
        minutes = _cron_field(fields[0], 0, 59)
        hours = _cron_field(fields[1], 0, 23)
        dom = _cron_field(fields[2], 1, 31)
        months = _cron_field(fields[3], 1, 12, _MONTHS)
        dow = {d % 7 for d in _cron_field(fields[4], 0, 7, _DOWS)}
    except ValueError:
        return None
    share = {29: 11.25 / 12, 30: 11 / 12, 31: 7 / 12}  # share of months that have the day
    dom_days = sum(share.get(d, 1.0) for d in dom) * DAYS_PER_MONTH / 30.44
    dow_days = len(dow) * DAYS_PER_MONTH / 7
    dom_star, dow_star = fields[2].startswith("*"), fields[4].startswith("*")
    if dom_star and dow_star:
        days = DAYS_PER_MONTH
    elif dow_star:
        days = dom_days
    elif dom_star:
        days = dow_days
    else:  # cron runs when either matches
        days = min(DAYS_PER_MONTH, dom_days + dow_days - dom_days * len(dow) / 7)
    return len(minutes) * len(hours) * days * len(months) / 12


def monthly_runs_from_triggers(triggers: Sequence[str], on: Any) -> MonthlyRuns | None:
    """A rough count of runs per month from ``on:``. Only ``schedule`` can be counted from
    the file; push / pull_request runs depend on activity (see
    :func:`monthly_runs_from_history`), so with those the count is a lower bound."""
    crons: list[str] = []
    if isinstance(on, dict):
        sched = on.get("schedule")
        for item in sched if isinstance(sched, list) else []:
            if isinstance(item, dict) and isinstance(item.get("cron"), str):
                crons.append(item["cron"])
    if not crons:
        return None
    per = [cron_runs_per_month(c) for c in crons]
    known = [(c, n) for c, n in zip(crons, per, strict=True) if n is not None]
    if not known:
        return None
    runs = sum(n for _, n in known)
    others = sorted({t for t in triggers if t != "schedule"})
    basis = "schedule " + ", ".join(f"`{c}` ~{n:.0f}/month" for c, n in known)
    basis += "; GitHub may delay or skip scheduled runs under load"
    if len(known) < len(crons):
        basis += f"; {len(crons) - len(known)} cron expression(s) not understood"
    if others:
        basis += f"; runs from {', '.join(others)} not counted (they depend on activity)"
    return MonthlyRuns(runs, basis, lower_bound=bool(others) or len(known) < len(crons))


def monthly_runs_from_history(run_count: int, span_days: float) -> MonthlyRuns | None:
    """Runs per month extrapolated from collected history: ``run_count`` runs over
    ``span_days`` days."""
    if run_count <= 0 or span_days <= 0:
        return None
    runs = run_count * DAYS_PER_MONTH / span_days
    return MonthlyRuns(runs, f"{run_count} runs in {span_days:g} days of collected history")


def estimate_monthly_runs(
    triggers: Sequence[str],
    on: Any,
    *,
    given: float | None = None,
    history: tuple[int, float] | None = None,
) -> MonthlyRuns | None:
    """Runs per month for a workflow: ``given`` (``--runs-per-month``) if set, else collected
    ``history`` as ``(run_count, span_days)``, else the schedule in ``on`` (a lower bound when
    other triggers exist); None when none of these says anything."""
    if given is not None:
        return MonthlyRuns(float(given), f"given: {given:g} runs per month")
    if history is not None:
        from_history = monthly_runs_from_history(*history)
        if from_history is not None:
            return from_history
    return monthly_runs_from_triggers(triggers, on)


# --- advice -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Needs:
    """What is known about a job's needs. ``docker``: it uses ``container:``, ``services:``
    or Docker commands, which rules out ``ubuntu-slim``."""

    cores: int | None = None
    ram_gb: float | None = None
    gpu: bool = False
    docker: bool = False


@dataclass(frozen=True)
class Advice:
    """One actionable suggestion. ``message`` is the headline; ``assumptions`` what it rests
    on (reports fold these); ``suggested`` machine-readable values (e.g. ``runs-on``)."""

    kind: str  # "timeout" | "runner" | "slim" | "merge"
    message: str
    suggested: dict[str, Any] = field(default_factory=dict)
    assumptions: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "suggested": self.suggested,
            "assumptions": list(self.assumptions),
        }


def suggest_timeout_minutes(p90_s: float, cap: int | None = None) -> int:
    """``timeout-minutes`` from the predicted p90: p90 x 1.5, up to a multiple of 5, >= 5."""
    m = max(5, 5 * math.ceil(p90_s * TIMEOUT_HEADROOM / 300.0 - 1e-9))
    return min(m, cap) if cap else m


def _fmt_s(s: float) -> str:
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min"


def _usd(x: float) -> str:
    return f"${x:.3f}" if x < 10 else f"${x:,.2f}"


def _minutes_value(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def advise(
    runtime: Runtime | None,
    runner: Runner,
    timeout_minutes: Any,
    *,
    visibility: str | None = None,
    predict_on: PredictOn | None = None,
    needs: Needs | None = None,
    catalog: Catalog | None = None,
) -> list[Advice]:
    """Timeout, runner-size and short-job advice for one job.

    ``predict_on(label)`` re-predicts the job as if ``runs-on`` were ``label`` (None if it
    cannot); it is called for at most four alternative labels."""
    cat = catalog or load_catalog()
    vis, assumed = _visibility(visibility)
    needs = needs or Needs()
    base: list[str] = ["assumes a private repository (visibility not given)"] if assumed else []
    out = _timeout_advice(runtime, runner, timeout_minutes, vis, cat, base)
    if runtime is None or runner.kind not in ("github-hosted", "larger") or runner.os is None:
        return out
    out += _short_job_advice(runtime, runner, vis, predict_on, needs, cat, base)
    out += _needs_advice(runtime, runner, vis, needs, cat, base)
    out += _sizing_advice(runtime, runner, vis, predict_on, cat, base)
    return out


def _timeout_advice(
    runtime: Runtime | None,
    runner: Runner,
    timeout: Any,
    vis: str,
    cat: Catalog,
    base: list[str],
) -> list[Advice]:
    out: list[Advice] = []
    cap = runner.max_job_minutes or cat.default_timeout_minutes
    suggested = suggest_timeout_minutes(runtime.p90, cap) if runtime else None
    why: list[str] = []
    if runtime is not None:
        why = [
            f"suggested = predicted p90 ({_fmt_s(runtime.p90)}) x {TIMEOUT_HEADROOM:g}, rounded "
            "up to 5 minutes, at least 5; assumes the prediction is right about slow runs",
        ]
    if timeout is None:
        limit = min(cap, cat.default_timeout_minutes)
        if limit <= (suggested or 0):
            pass  # the runner's own limit is already as tight as we would suggest
        else:
            whose = (
                f"the `{runner.label}` job limit"
                if limit < cat.default_timeout_minutes
                else "GitHub's default"
            )
            msg = f"No `timeout-minutes`: a hung run holds the runner for up to {limit} min ({whose})."
            worst = job_cost(limit * 60, runner, visibility=vis)
            if worst:
                msg += f" That is {_usd(worst)} per hung run at list price."
            if suggested:
                msg += f" Suggest `timeout-minutes: {suggested}`."
            sugg = {"timeout-minutes": suggested} if suggested else {}
            out.append(Advice("timeout", msg, sugg, tuple(base + why)))
        return out + _cap_advice(runtime, runner, cap, cat)
    t = _minutes_value(timeout)
    if t is None:
        return out + _cap_advice(runtime, runner, cap, cat)
    if runtime is not None and t * 60 < runtime.p90:
        if t * 60 < runtime.p50:
            share = "more than half of the runs"
        else:
            share = "more than 1 run in 10"
        out.append(
            Advice(
                "timeout",
                f"`timeout-minutes: {t:g}` is below the predicted "
                f"{'median' if t * 60 < runtime.p50 else 'p90'} "
                f"({_fmt_s(runtime.p50 if t * 60 < runtime.p50 else runtime.p90)}): {share} "
                f"would be cancelled, if the prediction is right. Suggest "
                f"`timeout-minutes: {suggested}`.",
                {"timeout-minutes": suggested},
                tuple(base + why),
            )
        )
    if runner.max_job_minutes is not None and t > cap:
        out.append(
            Advice(
                "timeout",
                f"`timeout-minutes: {t:g}` is above the {cap}-minute job limit of "
                f"`{runner.label}`: GitHub stops the job at {cap} min anyway.",
                {"timeout-minutes": min(cap, suggested or cap)},
            )
        )
    return out + _cap_advice(runtime, runner, cap, cat)


def _cap_advice(runtime: Runtime | None, runner: Runner, cap: int, cat: Catalog) -> list[Advice]:
    if runtime is None or cap >= cat.default_timeout_minutes or runtime.p90 <= cap * 60:
        return []
    std = cat.by_label("ubuntu-latest")
    return [
        Advice(
            "timeout",
            f"The predicted p90 ({_fmt_s(runtime.p90)}) exceeds the {cap}-minute job limit of "
            f"`{runner.label}`: slow runs would be stopped. Consider "
            f"`{std.label if std else 'ubuntu-latest'}`.",
            {"runs-on": std.label if std else "ubuntu-latest"},
            ("the prediction for this runner is taken at face value",),
        )
    ]


def _predict(predict_on: PredictOn | None, label: str) -> Runtime | None:
    if predict_on is None:
        return None
    try:
        return predict_on(label)
    except Exception:  # a failed re-prediction only loses the extra detail
        return None


def _short_job_advice(
    runtime: Runtime,
    runner: Runner,
    vis: str,
    predict_on: PredictOn | None,
    needs: Needs,
    cat: Catalog,
    base: list[str],
) -> list[Advice]:
    if runtime.p90 >= SHORT_JOB_S or runner.sku == "linux_slim":
        return []
    free = _is_free(runner, vis)
    price = "free in a public repository" if free else f"{_usd(runner.price_per_min or 0)}"
    head = (
        f"Predicted to finish within {_fmt_s(runtime.p90)} (p90), far below the 1-minute "
        f"billing unit: each run bills a full minute on `{runner.label}` ({price})."
    )
    slim_entry = cat.by_label("ubuntu-slim")
    fits_slim = (
        slim_entry is not None
        and runner.os == "linux"
        and runner.arch == "x64"
        and not runner.gpu
        and not needs.docker
        and not needs.gpu
        and (needs.ram_gb is None or needs.ram_gb <= slim_entry.size(vis)[1])
        and (needs.cores is None or needs.cores <= slim_entry.size(vis)[0])
    )
    if not fits_slim or slim_entry is None:
        return [
            Advice(
                "merge",
                head + " Consider merging it into another job that runs on the same runner.",
                {},
                tuple(
                    base
                    + [
                        "merging saves the runner start-up and the rounding; it adds "
                        "the job's steps to the other job's critical path"
                    ]
                ),
            )
        ]
    slim = _from_entry(slim_entry, slim_entry.label, vis)
    notes = base + [
        f"`ubuntu-slim` is a {slim.cores}-vCPU, {slim.ram_gb:g} GB unprivileged container: no "
        "Docker, no nested containers, fewer preinstalled tools, jobs stopped after "
        f"{slim.max_job_minutes} min; laser-ci only checks `container:` and `services:`",
    ]
    suggested: dict[str, Any] = {"runs-on": slim.label}
    slim_rt = _predict(predict_on, slim.label)
    if slim_rt is not None:
        suggested["predicted_p90_s"] = round(slim_rt.p90, 1)
        notes.append(f"predicted on `ubuntu-slim`: p90 {_fmt_s(slim_rt.p90)}")
    else:
        notes.append("assumes the job stays about as short on 1 vCPU (not predicted)")
    if free:
        money = "Both are free in a public repository: the gain is a lighter machine, not money."
    else:
        slim_cost = job_cost(slim_rt.p50 if slim_rt else runtime.p50, slim, visibility=vis) or 0
        cur_cost = job_cost(runtime.p50, runner, visibility=vis) or 0
        suggested["saves_usd_per_run"] = round(cur_cost - slim_cost, 4)
        money = f"On `ubuntu-slim` a run would cost {_usd(slim_cost)} instead of {_usd(cur_cost)}."
    return [
        Advice(
            "slim",
            f"{head} Candidate for `runs-on: ubuntu-slim` or for merging into another job. {money}",
            suggested,
            tuple(notes),
        )
    ]


def _fits(e: CatalogEntry, vis: str, needs: Needs) -> bool:
    cores, ram = e.size(vis)
    return (
        (needs.cores is None or cores >= needs.cores)
        and (needs.ram_gb is None or ram >= needs.ram_gb)
        and (e.gpu or not needs.gpu)
        and not (needs.docker and e.container)
    )


def cheapest_fit(
    os: str,
    arch: str,
    needs: Needs,
    *,
    visibility: str | None = None,
    runtime_s: float | None = None,
    catalog: Catalog | None = None,
) -> Runner | None:
    """The cheapest catalog runner of this OS and architecture that meets ``needs`` (and whose
    job limit is above ``runtime_s``), by price per minute, which assumes the job takes about
    as long on each."""
    cat = catalog or load_catalog()
    vis, _ = _visibility(visibility)
    fits = [
        e
        for e in cat.entries
        if e.os == os
        and e.arch == arch
        and _fits(e, vis, needs)
        and (runtime_s is None or e.max_job_minutes * 60 > runtime_s)
    ]
    if not fits:
        return None

    def key(e: CatalogEntry) -> tuple[float, int]:
        free = vis == "public" and e.kind == "standard"
        return (0.0 if free else e.price_per_min, e.size(vis)[0])

    best = min(fits, key=key)
    return _from_entry(best, best.label, vis)


def _needs_advice(
    runtime: Runtime, runner: Runner, vis: str, needs: Needs, cat: Catalog, base: list[str]
) -> list[Advice]:
    if needs.cores is None and needs.ram_gb is None and not needs.gpu:
        return []
    if runner.os is None:
        return []
    best = cheapest_fit(
        runner.os, runner.arch or "x64", needs, visibility=vis, runtime_s=runtime.p90, catalog=cat
    )
    short = (
        (needs.ram_gb is not None and (runner.ram_gb or 0) < needs.ram_gb)
        or (needs.cores is not None and (runner.cores or 0) < needs.cores)
        or (needs.gpu and not runner.gpu)
    )
    want = ", ".join(
        x
        for x in (
            f"{needs.cores} cores" if needs.cores else "",
            f"{needs.ram_gb:g} GB RAM" if needs.ram_gb else "",
            "a GPU" if needs.gpu else "",
        )
        if x
    )
    have = f"{runner.cores} cores, {runner.ram_gb:g} GB" if runner.ram_gb else "unknown size"
    notes = tuple(
        base + ["compares list prices per minute; assumes the job takes about as long on either runner"]
    )
    if short:
        if best is None:
            return [
                Advice(
                    "runner",
                    f"The job needs {want}; `{runner.label}` has {have}, and "
                    "no GitHub-hosted runner of this OS fits.",
                    {},
                    notes,
                )
            ]
        return [
            Advice(
                "runner",
                f"The job needs {want}; `{runner.label}` has {have}. The cheapest runner that "
                f"fits is `{best.label}` ({best.cores} cores, {best.ram_gb:g} GB, "
                f"${best.price_per_min:g}/min).",
                {"runs-on": best.label, "sku": best.sku},
                notes,
            )
        ]
    if best is not None and best.sku != runner.sku:
        cur = 0.0 if _is_free(runner, vis) else (runner.price_per_min or 0)
        new = 0.0 if _is_free(best, vis) else (best.price_per_min or 0)
        if new < cur:
            return [
                Advice(
                    "runner",
                    f"`{best.label}` ({best.cores} cores, {best.ram_gb:g} GB) also fits the "
                    f"job's needs ({want}) at ${new:g}/min instead of ${cur:g}/min.",
                    {"runs-on": best.label, "sku": best.sku},
                    notes,
                )
            ]
    return []


def alternatives(
    runner: Runner, *, visibility: str | None = None, catalog: Catalog | None = None
) -> list[Runner]:
    """Runners worth comparing for sizing: the next two bigger and the next smaller machine of
    the same OS and architecture (GPU runners only against GPU runners)."""
    cat = catalog or load_catalog()
    vis, _ = _visibility(visibility)
    if runner.os is None or runner.cores is None:
        return []
    same = {}
    for e in cat.entries:
        if (e.os, e.arch, e.gpu) != (runner.os, runner.arch, runner.gpu) or e.container:
            continue
        cores = e.size(vis)[0]
        if cores == runner.cores:
            continue
        # one machine per size: prefer the standard label (it has a fixed name)
        if cores not in same or (e.kind == "standard" and same[cores].kind != "standard"):
            same[cores] = e
    bigger = [same[c] for c in sorted(same) if c > runner.cores][:2]
    smaller = [same[c] for c in sorted(same, reverse=True) if c < runner.cores][:1]
    return [_from_entry(e, e.label, vis) for e in smaller + bigger]


def _sizing_advice(
    runtime: Runtime,
    runner: Runner,
    vis: str,
    predict_on: PredictOn | None,
    cat: Catalog,
    base: list[str],
) -> list[Advice]:
    out: list[Advice] = []
    cur_cost = job_cost(runtime.p50, runner, visibility=vis) or 0.0
    if runner.kind == "larger" and vis == "public":
        std = next(
            (
                e
                for e in cat.entries
                if e.kind == "standard" and not e.container and (e.os, e.arch) == (runner.os, runner.arch)
            ),
            None,
        )
        if std is not None:
            cores, ram = std.size(vis)
            out.append(
                Advice(
                    "runner",
                    f"`{runner.label}` is a larger runner: {_usd(cur_cost)} per run even in a "
                    f"public repository, where `{std.label}` ({cores} vCPU, {ram:g} GB) is free. "
                    "Keep it only if the time it saves is worth that.",
                    {"runs-on": std.label},
                    tuple(base),
                )
            )
    if runtime.p50 < LONG_JOB_S:
        return out
    free_now = _is_free(runner, vis)
    alts = [
        a
        for a in alternatives(runner, visibility=vis, catalog=cat)
        if not (free_now and (a.cores or 0) < (runner.cores or 0))  # smaller and paid: pointless
    ]
    if not alts:
        return out
    rows = [_alternative_row(runtime, runner, alt, vis, predict_on, free_now) for alt in alts]
    notes = base + [
        "break-even includes GitHub's per-minute rounding on both runners; more cores help only "
        "as far as the job's work runs in parallel",
    ]
    if any(alt.kind == "larger" for alt in alts):
        notes.append(
            "larger runners need a GitHub Team or Enterprise Cloud plan; their labels "
            "are names your organization chooses (the ones shown are examples)"
        )
    predicted = [r for r in rows if "predicted_p50_s" in r]
    if predicted:
        notes.append(
            "runtimes on the alternatives are the predictor's, re-run with the alternative `runs-on`"
        )
        wins = [
            r
            for r in predicted
            if not free_now
            and r["cost_usd"] <= cur_cost
            and (r["cost_usd"] < cur_cost or r["predicted_p50_s"] < runtime.p50)
        ]
        fast = min(predicted, key=lambda r: (r["predicted_p50_s"], r["cost_usd"]))
        now = f"{_fmt_s(runtime.p50)}, " + ("free" if free_now else f"{_usd(cur_cost)} per run")
        suggested: dict[str, Any] = {"alternatives": rows}
        if wins:
            best = min(wins, key=lambda r: (r["cost_usd"], r["predicted_p50_s"]))
            msg = (
                f"`{best['label']}` is predicted to take {_fmt_s(best['predicted_p50_s'])} "
                f"for {_usd(best['cost_usd'])} per run (now {now}): "
                f"{'cheaper' if best['cost_usd'] < cur_cost else 'same cost'}"
                f"{', faster' if best['predicted_p50_s'] < runtime.p50 else ''}."
            )
            suggested = {"runs-on": best["label"], "alternatives": rows}
        elif fast["predicted_p50_s"] < runtime.p50 * 0.8:
            extra = fast["cost_usd"] - cur_cost
            msg = (
                f"`{fast['label']}` is predicted to take {_fmt_s(fast['predicted_p50_s'])} "
                f"for {_usd(fast['cost_usd'])} per run ({'+' if extra >= 0 else '-'}"
                f"{_usd(abs(extra))}; now {now})."
            )
        else:
            msg = f"No other size is predicted to be cheaper or much faster than `{runner.label}` ({now})."
        out.append(Advice("runner", msg, suggested, tuple(notes)))
        return out
    if free_now:
        return out  # free runner, nothing predicted: a bigger one only buys time, unknown how much
    parts = []
    for r in rows:
        what = f"`{r['label']}` ({r['cores']} cores, {r['price_ratio']:g}x the price)"
        s_ = r["break_even_speedup"]
        if s_ is None:
            parts.append(f"{what} cannot: one billed minute there costs more")
        elif s_ == 0:
            parts.append(f"{what} is free here")
        elif s_ >= 1:
            parts.append(f"{what} must bill at most {r['max_billed_minutes']} min ({s_:g}x faster)")
        else:
            parts.append(
                f"{what} costs no more while it bills at most "
                f"{r['max_billed_minutes']} min (up to {1 / s_:.2g}x slower)"
            )
    out.append(
        Advice(
            "runner",
            f"Long job ({_fmt_s(runtime.p50)}, {_usd(cur_cost)} per run on `{runner.label}`). "
            "To cost no more: " + "; ".join(parts) + ". Runtimes on other runners are not "
            "predicted: time one run to check.",
            {"alternatives": rows},
            tuple(notes),
        )
    )
    return out


def _alternative_row(
    runtime: Runtime,
    runner: Runner,
    alt: Runner,
    vis: str,
    predict_on: PredictOn | None,
    free_now: bool,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "label": alt.label,
        "kind": alt.kind,
        "cores": alt.cores,
        "ram_gb": alt.ram_gb,
        "price_per_min_usd": alt.price_per_min,
        "price_ratio": round((alt.price_per_min or 0) / (runner.price_per_min or 1), 2),
    }
    if not free_now:
        m = _affordable_minutes(runner, alt, runtime.p50, vis)
        s_ = break_even_speedup(runner, alt, runtime.p50, visibility=vis)
        row["break_even_speedup"] = None if s_ is None else round(s_, 2)
        row["max_billed_minutes"] = m if m and m > 0 else None
    rt = _predict(predict_on, alt.label)
    if rt is not None:
        row["predicted_p50_s"] = round(rt.p50, 1)
        row["cost_usd"] = job_cost(rt.p50, alt, visibility=vis)
    return row
