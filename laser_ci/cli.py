"""The ``laser-ci`` command line. Each command lives in the module of its stage."""

from __future__ import annotations

import functools
import importlib.util
import io
import os
import sys

import click

from laser_ci import __version__


def _never_fail_to_print() -> None:
    """A character the terminal's encoding lacks (a CJK job name on a cp1252 console, a
    file name's undecodable byte) is written escaped (``\\u6d4b``), not a traceback."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors in ("strict",
                                                                      "surrogateescape"):
            stream.reconfigure(errors="backslashreplace")


# the modules of the optional `train` extra (pyproject.toml): a command that needs one of
# them says which extra to install, in one line, instead of a traceback
EXTRA_MODULES = {
    "torch": "train", "transformers": "train", "optimum": "train", "accelerate": "train",
    "lightgbm": "train", "sklearn": "train", "matplotlib": "train",
    "onnx": "train",
}


def missing_extra(exc: ModuleNotFoundError) -> str | None:
    """The extra that installs the module ``exc`` could not import, if it is one of ours."""
    return EXTRA_MODULES.get((exc.name or "").split(".")[0])


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError, AttributeError):  # a module set to None, a broken one
        return False


def needs(command: click.Command, *modules: str) -> click.Command:
    """``command`` checks that ``modules`` can be imported before it starts any work: without
    them it stops at once (see :class:`_Main`), not after a minute of reading data."""
    callback = command.callback
    assert callback is not None

    @functools.wraps(callback)
    def run(*args: object, **kwargs: object) -> object:
        for module in modules:
            if not _importable(module):
                raise ModuleNotFoundError(f"No module named {module!r}", name=module)
        return callback(*args, **kwargs)

    command.callback = run
    return command


class _Main(click.Group):
    """The command group; a command run without an optional extra it needs exits 2 with one
    line naming the install command (``LASER_CI_DEBUG`` shows the traceback)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as exc:
            extra = missing_extra(exc)
            if extra is None or os.environ.get("LASER_CI_DEBUG"):
                raise
            command = ctx.invoked_subcommand or "this command"
            click.echo(f"laser-ci: error: `laser-ci {command}` needs {exc.name}, which is not "
                       f"installed: pip install 'laser-ci[{extra}]'", err=True)
            ctx.exit(2)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="laser-ci")
def main() -> None:
    """Predict how long each GitHub Actions job will take, before it runs."""
    _never_fail_to_print()


# --- commands: one line per command, each defined in its own module -----------------------
# (keep this block sorted; add your command here)
from laser_ci.estimate import estimate  # noqa: E402
from laser_ci.evaluation.eval_command import eval_command  # noqa: E402
from laser_ci.github.action import action_command  # noqa: E402
from laser_ci.github.collect import collect  # noqa: E402
from laser_ci.measure.command import measure_command  # noqa: E402
from laser_ci.training.train import finetune_command, train_command  # noqa: E402

main.add_command(action_command)
main.add_command(collect)
main.add_command(estimate)
main.add_command(eval_command)
main.add_command(needs(finetune_command, "torch", "transformers"))
main.add_command(needs(train_command, "torch", "transformers"))
main.add_command(measure_command)
