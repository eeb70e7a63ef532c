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


# --- commands: one line per command, each defined in its own module and imported when it
# runs (`laser-ci estimate` does not pay for importing the others); keep this block sorted
COMMANDS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # name: (module, attribute, the modules it needs before it starts: `needs`)
    "action": ("laser_ci.github.action", "action_command", ()),
    "collect": ("laser_ci.github.collect", "collect", ()),
    "estimate": ("laser_ci.estimate", "estimate", ()),
    "eval": ("laser_ci.evaluation.eval_command", "eval_command", ()),
    "finetune": ("laser_ci.training.train", "finetune_command", ("torch", "transformers")),
    "measure": ("laser_ci.measure.command", "measure_command", ()),
    "train": ("laser_ci.training.train", "train_command", ("torch", "transformers")),
}


class _Main(click.Group):
    """The command group (:data:`COMMANDS`, each imported when asked for); a command run
    without an optional extra it needs exits 2 with one line naming the install command
    (``LASER_CI_DEBUG`` shows the traceback)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute, modules = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            self.add_command(needs(command, *modules) if modules else command, cmd_name)
        return self.commands.get(cmd_name)

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

