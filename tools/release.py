"""The release of laser-ci, as .github/workflows/release.yml runs it on a version tag, and its
dry run, which CI runs on every push (.ci/run).

    python tools/release.py hashes [--write]   # check (or write) model/SHA256SUMS
    python tools/release.py --dry-run          # what the release checks, offline, < 1 min
    python tools/release.py check --tag v1.2.3 --deps   # the release job (installs deps)
    python tools/release.py notes --tag v1.2.3  # the release notes, Markdown, on stdout

A release is a tag ``vX.Y.Z`` equal to the version in pyproject.toml and
``laser_ci.__version__``. Before anything is published: the shipped model's files match
model/SHA256SUMS; a wheel and an sdist are built (with the model inside the wheel, as
``laser_ci/_model``); the wheel is installed in a fresh virtual environment and
``laser-ci estimate`` runs there on the bundled example (examples/demo) from another folder,
with the network unused. The workflow then publishes the GitHub release and moves the
major tag (``v1``) to it, so ``uses: laser-ci/laser-ci@v1`` gets it.

Each failing check is one line (``release: ...``) and exit 1.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "model"
MANIFEST = MODEL / "SHA256SUMS"
EXAMPLE = ROOT / "examples" / "demo"
ACTION = "laser-ci/laser-ci"
# the files a working install needs from the model (the rest are checked by the manifest)
NEEDED = ("lm/model.onnx", "lm/tokenizer.json", "lm/laser.json", "baselines/card.json")


class ReleaseError(Exception):
    """A check that failed: one line."""


# --- the model's hashes ---------------------------------------------------------------------


def model_files() -> list[Path]:
    """The shipped model's files: every file under model/ but the manifest and the prose
    (the model cards, which change without the model changing)."""
    return sorted(p for p in MODEL.rglob("*") if p.is_file() and p != MANIFEST
                  and p.suffix != ".md" and "__pycache__" not in p.parts)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest_text() -> str:
    """``sha256sum`` format (``sha256sum -c model/SHA256SUMS`` in model/ checks it too)."""
    return "".join(f"{sha256(p)}  {p.relative_to(MODEL).as_posix()}\n" for p in model_files())


def read_manifest(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = re.fullmatch(r"([0-9a-f]{64})  (\S.*)", line)
        if not m:
            raise ReleaseError(f"{MANIFEST.relative_to(ROOT)}:{n}: not '<sha256>  <path>'")
        out[m.group(2)] = m.group(1)
    return out


def check_hashes() -> int:
    """Every model file is in the manifest with its hash, and nothing else is; the number of
    files checked."""
    if not MANIFEST.is_file():
        raise ReleaseError(f"{MANIFEST.relative_to(ROOT)}: missing (python tools/release.py "
                           "hashes --write)")
    want = read_manifest(MANIFEST.read_text(encoding="utf-8"))
    have = {p.relative_to(MODEL).as_posix(): p for p in model_files()}
    problems = [f"{name}: not in the manifest" for name in sorted(set(have) - set(want))]
    problems += [f"{name}: in the manifest, not in model/" for name in sorted(set(want) - set(have))]
    problems += [f"{name}: hash differs" for name in sorted(set(want) & set(have))
                 if sha256(have[name]) != want[name]]
    missing = [n for n in NEEDED if n not in have]
    problems += [f"{n}: needed by laser-ci estimate, not in model/" for n in missing]
    if problems:
        raise ReleaseError(f"model/: {problems[0]}" + (f" (and {len(problems) - 1} more)"
                                                       if len(problems) > 1 else "")
                           + "; if the model changed on purpose: python tools/release.py "
                             "hashes --write")
    return len(have)


# --- version --------------------------------------------------------------------------------


def versions() -> tuple[str, str]:
    """(pyproject.toml's version, laser_ci.__version__)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    init = (ROOT / "laser_ci" / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    return str(project["version"]), m.group(1) if m else "?"


def check_version(tag: str | None) -> str:
    """The version; a ``tag`` must be ``v`` + that version (``X.Y.Z``)."""
    declared, module = versions()
    if declared != module:
        raise ReleaseError(f"pyproject.toml says {declared}, laser_ci/__init__.py {module}")
    if not re.fullmatch(r"\d+\.\d+\.\d+", declared):
        raise ReleaseError(f"pyproject.toml: version {declared} is not X.Y.Z")
    if tag is not None and tag != f"v{declared}":
        raise ReleaseError(f"tag {tag} is not v{declared}, the version in pyproject.toml")
    return declared


def major_tag(version: str) -> str:
    return "v" + version.split(".")[0]


# --- build ----------------------------------------------------------------------------------


def build(out: Path) -> tuple[Path, Path]:
    """A wheel and an sdist of this checkout in ``out`` (setuptools in-process: no build
    isolation, so no download)."""
    # setuptools logs on stdout: the names come back on a line of their own, marked
    # (and rewrites sys.argv as it goes: the folder is read first)
    code = ("import contextlib, sys; from setuptools import build_meta as b\n"
            "out = sys.argv[1]\n"
            "with contextlib.redirect_stdout(sys.stderr):\n"
            "    names = b.build_sdist(out), b.build_wheel(out)\n"
            "print('built', *names)")
    proc = subprocess.run([sys.executable, "-c", code, str(out)], cwd=ROOT,
                          capture_output=True, text=True)
    built = [ln.split()[1:] for ln in proc.stdout.splitlines() if ln.startswith("built ")]
    if proc.returncode != 0 or not built or len(built[-1]) != 2:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise ReleaseError(f"build failed: {tail}")
    sdist_name, wheel_name = built[-1]
    return out / wheel_name, out / sdist_name


def check_wheel(wheel: Path) -> None:
    """The model is inside the wheel, byte for byte as the manifest says."""
    want = read_manifest(MANIFEST.read_text(encoding="utf-8"))
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for name, digest in want.items():
            member = f"laser_ci/_model/{name}"
            if member not in names:
                raise ReleaseError(f"{wheel.name}: {member} missing (pyproject.toml "
                                   "package-data)")
            if hashlib.sha256(z.read(member)).hexdigest() != digest:
                raise ReleaseError(f"{wheel.name}: {member} differs from model/{name}")
        # every module of the package, and the data files it reads at run time (a package
        # left out of pyproject.toml's list still imports beside an editable install)
        wanted = [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "laser_ci").rglob("*"))
                  if p.is_file() and p.suffix in (".py", ".json") and "__pycache__" not in p.parts]
        missing = [m for m in wanted if m not in names]
        if missing:
            raise ReleaseError(f"{wheel.name}: {missing[0]} missing"
                               + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                               + " (pyproject.toml packages / package-data)")
        # and nothing else: setuptools never cleans build/lib, so a module deleted since the
        # last local build would still ship
        stray = sorted(n for n in names if n.startswith("laser_ci/") and n.endswith(".py")
                       and n not in set(wanted))
        if stray:
            raise ReleaseError(f"{wheel.name}: {stray[0]} is not in laser_ci/ (a stale build/"
                               "folder? remove it)")


def check_sdist(sdist: Path) -> None:
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for needed in ("pyproject.toml", "LICENSE", "model/lm/model.onnx", "model/SHA256SUMS"):
        if needed not in names:
            raise ReleaseError(f"{sdist.name}: {needed} missing")


# --- install and run ------------------------------------------------------------------------


def install_and_estimate(wheel: Path, where: Path, *, deps: bool) -> str:
    """Installs ``wheel`` in a fresh venv under ``where`` and runs ``laser-ci estimate`` on
    the bundled example from there; its table. ``deps``: install the dependencies from the
    index (the release); else reuse this Python's (``--system-site-packages``, no index)."""
    env_dir = where / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=not deps).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    pip += [str(wheel)] if deps else ["--no-deps", "--no-index", str(wheel)]
    proc = subprocess.run(pip, capture_output=True, text=True, cwd=where)
    if proc.returncode != 0:
        raise ReleaseError(f"pip install {wheel.name}: "
                           f"{(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LASER_CI_MODEL_DIR", "VIRTUAL_ENV")}
    where_from = subprocess.run([str(python), "-c", "import laser_ci; print(laser_ci.__file__)"],
                                capture_output=True, text=True, cwd=where, env=env)
    if not where_from.stdout.strip().startswith(str(env_dir)):
        raise ReleaseError(f"the venv imports laser_ci from {where_from.stdout.strip() or '?'}, "
                           "not from the wheel")
    # offline: no proxy reaches anything, and nothing is asked of GitHub
    env.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
               NO_PROXY="", GITHUB_TOKEN="")
    proc = subprocess.run([str(bindir / "laser-ci"), "estimate", str(EXAMPLE)],
                          capture_output=True, text=True, cwd=where, env=env)
    if proc.returncode != 0 or "critical path" not in proc.stdout:
        tail = (proc.stderr.strip().splitlines() or ["no table"])[-1]
        raise ReleaseError(f"laser-ci estimate {EXAMPLE.relative_to(ROOT)} from the wheel "
                           f"(exit {proc.returncode}): {tail}")
    return proc.stdout


# --- notes ----------------------------------------------------------------------------------


def _git(*args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def notes(tag: str) -> str:
    """The release notes: how to use it, then the commits since the previous release."""
    version = tag.removeprefix("v")
    previous = _git("describe", "--tags", "--abbrev=0", "--match", "v*.*.*", f"{tag}^")
    span = f"{previous}..{tag}" if previous else tag
    log = _git("log", "--no-merges", "--format=- %h %s", span)
    lines = [
        f"## laser-ci {version}",
        "",
        "Predicts how long each GitHub Actions job will take, before it runs.",
        "",
        "```yaml",
        f"- uses: {ACTION}@{major_tag(version)}  # or this release: @{tag}",
        "```",
        "",
        f"CLI: `pip install laser-ci-{version}-py3-none-any.whl` (attached), then "
        "`laser-ci estimate .`",
        "",
        f"### Changes{f' since {previous}' if previous else ''}",
        "",
        *([ln[:200] for ln in log.splitlines()] or ["- first release"]),
        "",
    ]
    return "\n".join(lines)


# --- commands -------------------------------------------------------------------------------


def check(tag: str | None, *, deps: bool, dist: Path | None) -> None:
    say = print
    version = check_version(tag)
    say(f"release: version {version}" + (f" (tag {tag})" if tag else ""))
    say(f"release: model/: {check_hashes()} files match {MANIFEST.relative_to(ROOT)}")
    with tempfile.TemporaryDirectory(prefix="laser-ci-release-") as tmp:
        out = dist or Path(tmp) / "dist"
        out.mkdir(parents=True, exist_ok=True)
        wheel, sdist = build(out)
        check_wheel(wheel)
        check_sdist(sdist)
        size = wheel.stat().st_size / 1e6
        say(f"release: built {wheel.name} ({size:.1f} MB, the model inside) and {sdist.name}")
        table = install_and_estimate(wheel, Path(tmp), deps=deps)
        total = next((ln.strip() for ln in table.splitlines() if "critical path" in ln), "")
        say(f"release: the wheel's laser-ci estimate {EXAMPLE.relative_to(ROOT)}: {total}")
    say(f"release: ok; the release would be {ACTION}@v{version}, and {major_tag(version)} "
        "moves to it")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", nargs="?", choices=["check", "hashes", "notes"], default="check")
    ap.add_argument("--dry-run", action="store_true",
                    help="check: everything the release checks, offline (the default command)")
    ap.add_argument("--tag", help="the version tag being released (vX.Y.Z)")
    ap.add_argument("--deps", action="store_true",
                    help="check: install the wheel with its dependencies from the index "
                         "(default: reuse this Python's, offline)")
    ap.add_argument("--dist", type=Path, help="check: keep the wheel and sdist in this folder")
    ap.add_argument("--write", action="store_true", help="hashes: write model/SHA256SUMS")
    args = ap.parse_args(argv)
    try:
        if args.command == "hashes":
            if args.write:
                MANIFEST.write_text(manifest_text(), encoding="utf-8")
                print(f"release: wrote {MANIFEST.relative_to(ROOT)} ({len(model_files())} files)")
            else:
                print(f"release: model/: {check_hashes()} files match")
        elif args.command == "notes":
            if not args.tag:
                raise ReleaseError("notes need --tag vX.Y.Z")
            check_version(args.tag)
            sys.stdout.write(notes(args.tag))
        else:
            check(args.tag, deps=args.deps, dist=args.dist)
    except ReleaseError as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
