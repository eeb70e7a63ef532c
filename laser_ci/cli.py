"""The ``laser-ci`` command line. Each command lives in the module of its stage."""

from __future__ import annotations

import io
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="laser-ci")
def main() -> None:
    """Predict how long each GitHub Actions job will take, before it runs."""
    _never_fail_to_print()


# --- commands: one line per command, each defined in its own module -----------------------
# (keep this block sorted; add your command here)
from laser_ci.estimate import estimate  # noqa: E402
from laser_ci.github.action import action_command  # noqa: E402
from laser_ci.github.collect import collect  # noqa: E402
from laser_ci.measure.command import measure_command  # noqa: E402
from laser_ci.training.eval_command import eval_command  # noqa: E402
from laser_ci.training.train import finetune_command, train_command  # noqa: E402

main.add_command(action_command)
main.add_command(collect)
main.add_command(estimate)
main.add_command(eval_command)
main.add_command(finetune_command)
main.add_command(measure_command)
main.add_command(train_command)
