"""The release tooling (tools/release.py): the model's hashes, the version against the tag,
the notes, and the release workflow's shape. The build and the wheel's install run in CI as
``python tools/release.py --dry-run`` (.ci/run), not here."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def release() -> Any:
    spec = importlib.util.spec_from_file_location("release", ROOT / "tools" / "release.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_shipped_model_matches_its_manifest(release: Any) -> None:
    assert release.check_hashes() == len(release.model_files()) > 0
    assert release.MANIFEST.read_text(encoding="utf-8") == release.manifest_text()


@pytest.fixture
def model_copy(release: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    model = tmp_path / "model"
    shutil.copytree(release.MODEL, model, ignore=shutil.ignore_patterns("*.onnx",
                                                                        "*.safetensors"))
    monkeypatch.setattr(release, "MODEL", model)
    monkeypatch.setattr(release, "MANIFEST", model / "SHA256SUMS")
    monkeypatch.setattr(release, "ROOT", tmp_path)
    monkeypatch.setattr(release, "NEEDED", ("lm/tokenizer.json",))
    (model / "SHA256SUMS").write_text(release.manifest_text(), encoding="utf-8")
    return model


def test_a_changed_model_file_fails_the_check(release: Any, model_copy: Path) -> None:
    assert release.check_hashes() > 0
    (model_copy / "lm" / "tokenizer.json").write_text("{}")
    with pytest.raises(release.ReleaseError, match="lm/tokenizer.json: hash differs"):
        release.check_hashes()


def test_a_file_added_or_lost_fails_the_check(release: Any, model_copy: Path) -> None:
    (model_copy / "lm" / "extra.bin").write_bytes(b"x")
    with pytest.raises(release.ReleaseError, match="lm/extra.bin: not in the manifest"):
        release.check_hashes()
    (model_copy / "lm" / "extra.bin").unlink()
    (model_copy / "baselines" / "median.json").unlink()
    with pytest.raises(release.ReleaseError, match="median.json: in the manifest, not in"):
        release.check_hashes()


def test_the_model_card_is_prose_not_model(release: Any, model_copy: Path) -> None:
    (model_copy / "lm" / "MODEL_CARD.md").write_text("shorter\n")
    assert release.check_hashes() > 0


def test_the_tag_must_be_the_version(release: Any) -> None:
    version, module = release.versions()
    assert version == module
    assert release.check_version(f"v{version}") == version
    with pytest.raises(release.ReleaseError, match="is not v"):
        release.check_version("v0.0.1")
    assert release.major_tag("1.4.2") == "v1"


def test_the_notes_say_what_to_put_in_uses(release: Any) -> None:
    version = release.versions()[0]
    text = release.notes(f"v{version}")
    assert f"- uses: laser-ci/laser-ci@{release.major_tag(version)}" in text
    assert "### Changes" in text


def test_the_release_workflow_runs_on_a_version_tag_and_moves_the_major_tag() -> None:
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert wf[True]["push"]["tags"] == ["v*.*.*"]  # `on:` reads as True in YAML 1.1
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "write"}
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    for needed in ("bash .ci/run", "tools/release.py check --tag", "gh release create",
                   "git/refs/tags/$major"):
        assert needed in runs
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python tools/release.py --dry-run" in ci
    assert (ROOT / "LICENSE").read_text().lstrip().startswith("Apache License")


def test_a_wheel_without_one_of_the_packages_fails_the_check(release: Any,
                                                              tmp_path: Path) -> None:
    """A subpackage left out of pyproject.toml's list still imports beside an editable
    install, so the dry run's estimate alone does not see it: the wheel's listing does."""
    import zipfile

    want = release.read_manifest(release.MANIFEST.read_text(encoding="utf-8"))
    sources = [p for p in sorted((ROOT / "laser_ci").rglob("*"))
               if p.is_file() and p.suffix in (".py", ".json") and "__pycache__" not in p.parts]

    def wheel(leave_out: str) -> Path:
        path = tmp_path / f"without-{leave_out.replace('/', '_')}.whl"
        with zipfile.ZipFile(path, "w") as z:
            for name in want:
                z.writestr(f"laser_ci/_model/{name}", (release.MODEL / name).read_bytes())
            for p in sources:
                member = p.relative_to(ROOT).as_posix()
                if not member.startswith(leave_out):
                    z.writestr(member, p.read_bytes())
        return path

    release.check_wheel(wheel("laser_ci/nothing-left-out"))
    stale = wheel("laser_ci/nothing-left-out")
    with zipfile.ZipFile(stale, "a") as z:
        z.writestr("laser_ci/deleted_since.py", "")
    with pytest.raises(release.ReleaseError, match="laser_ci/deleted_since.py is not in"):
        release.check_wheel(stale)
    for left_out in ("laser_ci/measure/", "laser_ci/workflows/github-workflow.schema.json"):
        with pytest.raises(release.ReleaseError, match=left_out.rstrip("/")):
            release.check_wheel(wheel(left_out))
