"""catalog"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

DEFAULT_TIMEOUT_MINUTES = 360  # GitHub's default `timeout-minutes`


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
    successors: Mapping[str, str] = field(default_factory=dict)  # retired label -> current one
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
        retired = data.get("retired_labels", ())
        if not isinstance(retired, Mapping):  # a plain list: retired, no successor named
            retired = dict.fromkeys(retired, "")
        return cls(
            as_of=str(data["as_of"]),
            prices_effective=str(data.get("prices_effective", data["as_of"])),
            entries=tuple(entries),
            sources=tuple(data.get("sources", ())),
            retired=frozenset(x.lower() for x in retired),
            successors={k.lower(): v.lower() for k, v in retired.items() if v},
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
    """The packaged catalog (``laser_ci/sizing/runners.json``), read once."""
    text = resources.files("laser_ci.sizing").joinpath("runners.json").read_text("utf-8")
    return Catalog.from_json(json.loads(text))


