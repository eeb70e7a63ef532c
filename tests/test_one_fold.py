"""benchmarks/one_fold.py: the recipe its flags build, for the shipped model's recipe and
the older one the distillation runs ran (stopped where the recipe is made)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import bench
import pytest
from gha_mini import MINI

one_fold = bench.load("one_fold")


class Stop(Exception):
    """Raised by the stand-in for LMRecipe with the settings it was given."""


def recipe_of(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *flags: str) -> SimpleNamespace:
    def recipe(base: Path, **settings: object) -> None:
        raise Stop(SimpleNamespace(base=base, **settings))

    monkeypatch.setattr(one_fold, "LMRecipe", recipe)
    with pytest.raises(Stop) as stop:
        one_fold.main([str(MINI), "--recipe", "shipped", "--base", str(tmp_path / "base"),
                       "--predictions", str(tmp_path / "p.jsonl"), *flags])
    return stop.value.args[0]


@pytest.mark.parametrize(("flags", "anchor", "shrink", "epochs", "minutes"), [
    ((), "median", False, None, 50.0),  # as the distillation runs ran it
    (("--minutes", "6"), "median", False, None, 6.0),
    (("--warm-anchor", "recent", "--shrink", "--epochs", "1", "--minutes", "30"),
     "recent", True, 1, 30.0),  # the shipped model's recipe
])
def test_flags_build_the_recipe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                flags: tuple[str, ...], anchor: str, shrink: bool,
                                epochs: int | None, minutes: float) -> None:
    r = recipe_of(monkeypatch, tmp_path, *flags)
    assert (r.warm_anchor, r.shrink, r.epochs, r.minutes) == (anchor, shrink, epochs, minutes)
    # what every form of the recipe shares
    assert (r.prompt_lines, r.layout, r.exact_last, r.calibrate_bands) == (
        True, "shared-prefix", True, True)


def test_an_unknown_anchor_is_refused(monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        recipe_of(monkeypatch, tmp_path, "--warm-anchor", "mean")
