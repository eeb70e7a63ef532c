"""What a job's ``runs-on`` resolves to: a catalog runner, a self-hosted runner or "unknown"
with the reason. Expressions are evaluated by :mod:`laser_ci.workflows.expressions`; a
value only known at run time stays unknown, or is resolved when every value it may take
is the same machine."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from laser_ci.sizing.catalog import Catalog, CatalogEntry, load_catalog
from laser_ci.workflows.expressions import Unknown, display_text, evaluate_value

VISIBILITIES = ("public", "private", "internal")


def _refs_text(*us: Unknown) -> str:
    refs = list(dict.fromkeys(r for u in us for r in u.refs)) or ["an expression"]
    return ", ".join(f"`{r}`" for r in refs)


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
    retired: bool = False  # a label GitHub has removed: the job fails without running
    successor: str | None = None  # for a retired label, the current one to use instead

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
            "retired": self.retired,
        }


NOT_PRICED = "not priced: self-hosted or third-party"
"""What a runner GitHub does not sell is, unless the user gives its price."""

# Words of runner names that are pools of other providers or of self-hosted runner
# managers, never GitHub's larger runners: Actions Runner Controller (arc), GARM, Depot,
# RunsOn, Blacksmith, BuildJet, Namespace, Ubicloud, WarpBuild, Cirun.
_THIRD_PARTY = frozenset({"arc", "garm", "depot", "runson", "blacksmith", "buildjet",
                          "namespace", "nscloud", "ubicloud", "warp", "warpbuild", "cirun",
                          "self", "selfhosted", "custom"})  # words: `self-hosted` is `self`


@dataclass(frozen=True)
class Prices:
    """Prices the user gives for runners GitHub does not sell: ``rate`` for every
    self-hosted one (None: not priced), ``labels`` by runner label (lowercase)."""

    rate: float | None = None
    labels: Mapping[str, float] = field(default_factory=dict)

    def of(self, labels: Sequence[str], cat: Catalog) -> tuple[str, float] | None:
        """The first of ``labels`` (lowercase) not in GitHub's catalog that has a price."""
        return next(((x, self.labels[x]) for x in labels
                     if x in self.labels and cat.by_label(x) is None), None)


def _third_party(name: str) -> str | None:
    """The word that makes a runner name a third-party or self-hosted pool, if any."""
    low = name.lower()
    words = re.split(r"[^a-z0-9]+", low)
    return next((w for w in words if w in _THIRD_PARTY), None) or (
        "runs-on" if "runs-on" in low else None)  # RunsOn's labels: runs-on=<id>/...


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
    contexts: Mapping[str, Any] | None = None,
    visibility: str | None = None,
    self_hosted_rate: float = 0.0,
    catalog: Catalog | None = None,
    runner_prices: Mapping[str, float] | None = None,
) -> Runner:
    """Resolve a job's ``runs-on`` (string, list of labels, ``{group, labels}`` mapping,
    ``${{ }}`` expressions over ``matrix`` and any other known ``contexts``) to a catalog
    runner, a self-hosted runner or "unknown" with the reason.

    A runner GitHub does not sell (self-hosted, a third-party pool, a label GitHub does not
    document) has no price (:data:`NOT_PRICED`) unless ``runner_prices`` (label -> USD per
    minute) or, for self-hosted ones, a ``self_hosted_rate`` above 0 gives one."""
    if self_hosted_rate < 0:
        raise ValueError("self_hosted_rate must be >= 0")
    cat = catalog or load_catalog()
    vis, _ = _visibility(visibility)
    value = evaluate_value(runs_on, {**(contexts or {}), "matrix": dict(matrix or {})})
    prices = Prices(self_hosted_rate or None,
                    {str(k).strip().lower(): float(v) for k, v in (runner_prices or {}).items()})
    return _resolve_value(value, vis, prices, cat)


def _display(value: Any) -> str:
    if isinstance(value, Unknown):
        return display_text(value)
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


def _resolve_value(value: Any, vis: str, rate: Prices, cat: Catalog) -> Runner:
    label = _display(value)
    if isinstance(value, Unknown):
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
        if isinstance(group, Unknown):
            return Runner(
                label=label,
                kind="unknown",
                reason=f"the runner group depends on {_refs_text(group)}, not known before the run",
            )
        return _resolve_labels(labels, None if group is None else str(group), label, vis, rate, cat)
    return Runner(label=label, kind="unknown", reason=f"unsupported `runs-on` value {value!r}")


def _resolve_unknown_expr(u: Unknown, vis: str, rate: Prices, cat: Catalog) -> Runner:
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
    labels: Sequence[Any], group: str | None, display: str, vis: str, rate: Prices, cat: Catalog
) -> Runner:
    unknown_parts = [x for x in labels if isinstance(x, Unknown)]
    names = [str(x).strip() for x in labels if not isinstance(x, Unknown) and x is not None]
    lower = list(dict.fromkeys(n.lower() for n in names if n))
    in_group = f" (runner group `{group}`)" if group else ""
    given = rate.of(lower + ([group.lower()] if group else []), cat)
    if given is not None:
        os, arch, cores, gpu = _shape_from_name(" ".join(lower))
        return Runner(label=display, kind="self-hosted", os=os, arch=arch, cores=cores, gpu=gpu,
                      price_per_min=given[1],
                      reason=f"`{given[0]}` priced at ${given[1]:g}/min (runner prices given)",
                      max_job_minutes=cat.self_hosted_max_job_minutes)

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
    if group and (r.kind == "github-hosted" or r.retired):
        # runner groups hold larger and self-hosted runners, never the standard ones: a
        # runner of the group that carries this label is one of those, of unknown size
        return Runner(
            label=display,
            kind="unknown",
            reason=f"runner group `{group}` with the label `{lower[0]}`: standard GitHub-hosted "
            "runners are not in runner groups, so this is a larger or self-hosted runner of the "
            "group that carries the label; its size and price are set in the organization's "
            "settings, not in the workflow",
        )
    if group:
        r = replace(r, reason=(r.reason or "label in the runner catalog") + in_group)
    return r


def _self_hosted(
    labels: list[str], display: str, rate: Prices, cat: Catalog, why: str, guessed: bool = False
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
        price_per_min=rate.rate,
        reason=(f"{why}; self-hosted minutes priced at ${rate.rate:g}/min (given)"
                if rate.rate is not None else f"{NOT_PRICED} ({why}; give its price with "
                "--runner-prices, or --self-hosted-rate)"),
        guessed=guessed,
        max_job_minutes=cat.self_hosted_max_job_minutes,
    )


def _resolve_label(label: str, display: str, vis: str, cat: Catalog) -> Runner:
    e = cat.by_label(label)
    if e is not None:
        return _from_entry(e, display, vis)
    if label in cat.retired:
        successor = cat.successors.get(label)
        instead = f"; use `{successor}` instead" if successor else ""
        return Runner(
            label=display,
            kind="unknown",
            reason=f"`{label}` has been retired by GitHub: a job asking for it fails without "
            f"running, so it has no cost{instead}",
            retired=True,
            successor=successor,
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
    pool = _third_party(label)
    if pool is not None:
        os, arch, cores, gpu = _shape_from_name(label)
        return Runner(label=display, kind="self-hosted", os=os, arch=arch, cores=cores, gpu=gpu,
                      reason=f"{NOT_PRICED} (`{label}` names a pool of self-hosted or "
                      f"third-party runners, `{pool}`, not a runner GitHub sells; give its "
                      "price with --runner-prices)",
                      max_job_minutes=cat.self_hosted_max_job_minutes)
    r = _resolve_by_shape(label, display, vis, cat, source=f"`{label}`")
    if r is not None:
        return r
    return Runner(
        label=display,
        kind="unknown",
        reason=f"{NOT_PRICED} (`{label}` is not a label GitHub documents, catalog as of "
        f"{cat.as_of}: a self-hosted runner, a third-party one or a larger runner named by "
        "your organization; give its price with --runner-prices)",
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


