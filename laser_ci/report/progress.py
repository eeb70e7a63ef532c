"""Progress of the long commands (``eval``, ``train``, ``finetune``, ``collect``) on stderr,
so that a command that works for a minute is not a silent one.

On a terminal one line is rewritten every half second with the stage and its elapsed time
(``laser-ci eval: [2/4] scoring tabular… 12s``); elsewhere (a CI log, a pipe) nothing, as
the output there is read by programs, unless ``LASER_CI_PROGRESS=1`` asks for one line per
stage and one when it ends. ``LASER_CI_PROGRESS=0`` turns it off on a terminal. Standard
output is never touched.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import click

TICK_S = 0.5


def _enabled(stream: TextIO) -> bool | None:
    """True: rewrite one line (a terminal); None: one line per stage (asked for); False: off."""
    setting = os.environ.get("LASER_CI_PROGRESS", "").strip()
    if setting == "0":
        return False
    if setting == "1":
        return None if not _isatty(stream) else True
    return True if _isatty(stream) else False


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _seconds(s: float) -> str:
    return f"{s:.0f}s" if s < 60 else f"{int(s // 60)}m {int(s % 60):02d}s"


class Progress:
    """The stages of one command: ``with progress.stage("reading examples"): ...``."""

    def __init__(self, command: str, stream: TextIO | None = None) -> None:
        self.command = command
        self._stream = stream
        self._broken = False

    @property
    def stream(self) -> TextIO:
        """The stream given, else ``sys.stderr`` as it is now (a test may have swapped it)."""
        return self._stream if self._stream is not None else sys.stderr

    @property
    def mode(self) -> bool | None:
        return False if self._broken else _enabled(self.stream)

    def echo(self, text: str) -> None:
        """A line of the command's own on stderr: on a terminal it clears a ticking line
        first, which the next tick draws again below it."""
        if self.mode is True:
            try:
                self.stream.write("\r\x1b[2K")
            except (OSError, ValueError):
                pass
        click.echo(text, err=True)

    def note(self, text: str) -> None:
        """One line that stays (a stage's result, a count)."""
        if self.mode is not False:
            self._write(f"laser-ci {self.command}: {text}", final=True)

    @contextmanager
    def stage(self, what: str, step: int | None = None, total: int | None = None
              ) -> Iterator[None]:
        """Shows ``what`` from now on (with ``[step/total]``) and how long it has taken."""
        mode = self.mode
        if mode is False:
            yield
            return
        where = f"[{step}/{total}] " if step is not None and total else ""
        label = f"laser-ci {self.command}: {where}{what}"
        t0 = time.monotonic()
        stop = threading.Event()
        ticker = None
        if mode is True:  # a terminal: the line ticks
            def tick() -> None:
                while not stop.wait(TICK_S):
                    self._write(f"{label}… {_seconds(time.monotonic() - t0)}", final=False)
            self._write(f"{label}…", final=False)
            ticker = threading.Thread(target=tick, daemon=True)
            ticker.start()
        else:
            self._write(f"{label}…", final=True)
        ok = False
        try:
            yield
            ok = True
        finally:
            stop.set()
            if ticker is not None:
                ticker.join()
            took = _seconds(time.monotonic() - t0)
            self._write(f"{label}: {'done' if ok else 'stopped'} in {took}", final=True)

    def _write(self, line: str, *, final: bool) -> None:
        try:
            if self.mode is True:
                self.stream.write("\r\x1b[2K" + line + ("\n" if final else ""))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed pipe: progress is not worth a traceback
            self._broken = True
